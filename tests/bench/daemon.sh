#!/bin/bash
# extalignd against the database pattern "create, then write at once" on a
# loop-mounted XFS, with reference readers in the same run:
#   none        nobody hints (the writer's own speed)
#   noop        a fanotify reader that only reads events (delivery overhead)
#   minimal     a fanotify hinter with no safety checks at all (the ceiling)
#   fanotify    extalignd, event path (inherit = no)
#   inotify     extalignd --watch inotify, event path
#   inherit     extalignd with inheritance: the kernel hints at creation
# Prints the writer's share of files hinted before their first write and its
# rate, create-to-hint latency p50/p99, a storm's files per second, and the
# daemon's peak RSS.  Not a test: nothing here passes or fails.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
D=${EXTALIGND:-$TOP/build/extalignd}
B=$TOP/build/tests/bench/daemon-bench
NW=${BENCH_WRITES:-2000}
NL=${BENCH_LATENCY:-500}
NS=${BENCH_STORM:-5000}
[ "$(id -u)" = 0 ] || { echo "bench: needs root (loop mount, fanotify)" >&2; exit 77; }
[ -x "$D" ] && [ -x "$B" ] || { echo "bench: build first (make)" >&2; exit 77; }
W=$(mktemp -d /tmp/extalign-dbench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; umount "$W/m" 2>/dev/null; losetup -d "$loop" 2>/dev/null; rm -rf "$W"' EXIT
truncate -s 4G "$W/img"
mkfs.xfs -q "$W/img"
loop=$(losetup -f --show "$W/img")
mkdir "$W/m"
mount "$loop" "$W/m"
mkdir "$W/m/ev" "$W/m/inh"
cat >"$W/conf" <<CONF
[rule ev]
directory = $W/m/ev
extsize = 64k
inherit = no

[rule inh]
directory = $W/m/inh
extsize = 64k
CONF

start() { # what: start the hinter, wait until it is ready
	case $1 in
	none) pid= ;;
	noop | minimal)
		local mode=$1
		[ "$mode" = minimal ] && mode=hint
		"$B" reader "$mode" "$W/m" 65536 >"$W/reader.out" &
		pid=$!
		until grep -q ready "$W/reader.out" 2>/dev/null; do sleep 0.02; done ;;
	fanotify | inotify | inherit)
		local watch=fanotify
		[ "$1" = inotify ] && watch=inotify
		"$D" --foreground --config "$W/conf" --state-dir "$W/run" --watch "$watch" \
			--log-target stderr 2>"$W/daemon.log" &
		pid=$!
		until grep -q '^phase	running' "$W/run/state" 2>/dev/null; do sleep 0.02; done ;;
	esac
}
stop() {
	if [ -n "$pid" ]; then
		[ -d /proc/$pid ] && rss=$(awk '/VmHWM/ { print $2 " kB" }' /proc/$pid/status)
		kill $pid
		wait $pid 2>/dev/null || true
		pid=
	fi
}

echo "extalignd benchmark: $NW writes, $NL latency probes, $NS-file storm; XFS on loop, $(nproc) CPUs"
for h in none noop minimal fanotify inotify inherit; do
	rss=-
	dir=$W/m/ev/$h
	[ "$h" = inherit ] && dir=$W/m/inh/$h
	start "$h"
	mkdir "$dir"
	sleep 0.2 # inotify: the new directory's watch
	w=$("$B" writer "$dir" "$NW")
	l=- s=-
	if [ "$h" != none ] && [ "$h" != noop ]; then
		mkdir "$dir.l" "$dir.s"
		sleep 0.2
		l=$("$B" latency "$dir.l" "$NL")
		s=$("$B" storm "$dir.s" "$NS")
	fi
	late=-
	[ -f "$W/run/state" ] && { [ "$h" = fanotify ] || [ "$h" = inotify ] || [ "$h" = inherit ]; } &&
		sleep 0.6 && late=$(awk -F'\t' '$1 == "counter" && $2 == "files_late" { print $3 }' "$W/run/state")
	stop
	rm -f "$W/run/state"
	echo "== $h"
	echo "   $w"
	echo "   $l"
	echo "   $s"
	echo "   daemon: late files $late, peak RSS $rss"
done
