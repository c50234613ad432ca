#!/bin/bash
# extalign against the tools a user would pick instead, side by side: every
# workload and its anchors run in the same script, on the same loop-mounted
# XFS, interleaved round by round, so a busy machine slows both alike.
# Prints one table (ratios: extalign's time over the anchor's, min / median /
# max over the rounds; below 1 extalign is faster) and the daemon's figures.
# Not a test: nothing passes or fails on speed.  tests/bench/README says
# how to read it.
#
# Usage: tests/bench/compare.sh [WORKLOAD...]   (root; default: all)
#   WORKLOAD: check frag set apply realign daemon atomic scale
# Sizes (environment, defaults in brackets; COMPARE_QUICK=1 makes them small):
#   COMPARE_ROUNDS [5]           rounds per workload
#   COMPARE_FILES [100000]       files for check (8 KiB each), set and apply (empty)
#   COMPARE_LOOP_FILES [2000]    files the per-file xfs_io loop runs on; its
#                                time is scaled to COMPARE_FILES
#   COMPARE_EXTENTS [20000]      extents of the fragmented file
#   COMPARE_REALIGN_MB [1024]    the one big file realigned
#   COMPARE_REALIGN_FILES [1000] files of 1 MiB realigned
#   COMPARE_STORM [100000]       files created in a storm for extalignd
#   COMPARE_WRITES [20000]       files created and written at once (64 KiB each)
#   COMPARE_LATENCY [2000]       one-at-a-time creates timed to their hint
#   COMPARE_RSS_FILES [1000000]  files under rules when extalignd's RSS is read
#   COMPARE_IDLE [60]            seconds extalignd is watched doing nothing
#   COMPARE_DIR [/var/tmp]       where the filesystem image goes (sparse)
#   EXTALIGN, EXTALIGND          the programs to measure [this tree's build/]
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${COMPARE_QUICK:-0}" = 1 ]; then
	q() { echo "$1"; }
else
	q() { echo "$2"; }
fi
ROUNDS=${COMPARE_ROUNDS:-5}
FILES=${COMPARE_FILES:-$(q 2000 100000)}
LOOP_FILES=${COMPARE_LOOP_FILES:-$(q 100 2000)}
EXTENTS=${COMPARE_EXTENTS:-$(q 2000 20000)}
REALIGN_MB=${COMPARE_REALIGN_MB:-$(q 32 1024)}
REALIGN_FILES=${COMPARE_REALIGN_FILES:-$(q 20 1000)}
STORM=${COMPARE_STORM:-$(q 2000 100000)}
WRITES=${COMPARE_WRITES:-$(q 500 20000)}
LATENCY=${COMPARE_LATENCY:-$(q 200 2000)}
RSS_FILES=${COMPARE_RSS_FILES:-$(q 5000 1000000)}
IDLE=${COMPARE_IDLE:-$(q 3 60)}
[ "$LOOP_FILES" -le "$FILES" ] || LOOP_FILES=$FILES
WORKLOADS=("$@")
# The guest benchmarks (atomic.sh, scale.sh) need a UML kernel of the series.
KBUILD=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
if [ ${#WORKLOADS[@]} = 0 ]; then
	WORKLOADS=(check frag set apply realign daemon)
	[ -x "$KBUILD/build-um/linux" ] && WORKLOADS+=(atomic scale)
fi

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: compare.sh needs root (loop devices, fanotify)"
	exit 77
fi
for tool in mkfs.xfs xfs_io filefrag losetup; do
	if ! command -v $tool >/dev/null; then
		echo "SKIP: $tool is not installed (scripts/packages.txt)"
		exit 77
	fi
done
# "bench": the programs and the bench tools (compare-tool, daemon-bench).
make -C "$TOP" -j2 --no-print-directory bench >/dev/null
# Another build's programs, for a before/after table: EXTALIGN=, EXTALIGND=.
X=${EXTALIGN:-$TOP/build/extalign}
XD=${EXTALIGND:-$TOP/build/extalignd}
CT=$TOP/build/tests/bench/compare-tool
DB=$TOP/build/tests/bench/daemon-bench
# xfs_io keeps every file it is given open: as many as we may.
ulimit -n "$(ulimit -Hn)"
# Files per xfs_io in the batched form: what fits under that limit.
BATCH=$(($(ulimit -n) - 64))

W=$(mktemp -d "${COMPARE_DIR:-/var/tmp}/extalign-compare.XXXXXX")
loop='' pid=''
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	umount "$W/m" 2>/dev/null || true
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
truncate -s 64G "$W/img"
mkfs.xfs -q "$W/img"
# Direct I/O on the backing file: no second page cache under the loop device.
loop=$(losetup -f --show --direct-io=on "$W/img")
mkdir "$W/m" "$W/res"
mount "$loop" "$W/m"
M=$W/m

say() { echo "compare: $*" >&2; }

# ---- timing --------------------------------------------------------------
# secs CMD...: wall-clock and CPU (user + system, children included)
# seconds of CMD, its output thrown away.  The exit status does not matter
# (check says 1 for misaligned files).
secs() {
	local TIMEFORMAT='%R %U %S'
	{ time "$@" >/dev/null 2>&1 || true; } 2>&1 | awk '{ printf "%s %.3f\n", $1, $2 + $3 }'
}

# bench ID LABEL PREP OURS ANCHOR_LABEL ANCHOR [ANCHOR_LABEL ANCHOR]...
# Runs OURS and each ANCHOR once per round, PREP (untimed) before each, the
# order rotated every round.  An anchor label ending in "(xF)" has its time
# multiplied by F: it ran on a sample standing for the whole workload.
bench() {
	local id=$1 label=$2 prep=$3 r i k n
	shift 3
	local names=(extalign) cmds=("$1")
	shift
	while [ $# -gt 0 ]; do
		names+=("$1")
		cmds+=("$2")
		shift 2
	done
	n=${#cmds[@]}
	for ((r = 0; r < ROUNDS; r++)); do
		for ((k = 0; k < n; k++)); do
			i=$(((k + r) % n))
			$prep
			secs ${cmds[$i]} >>"$W/res/$id.$i"
		done
	done
	for ((i = 1; i < n; i++)); do
		echo "$label	${names[$i]}	$W/res/$id.0	$W/res/$id.$i" >>"$W/res/rows"
	done
}
nop() { :; }
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# ---- check: many small files, one big fragmented file --------------------
check_files() { xargs -0 -a "$W/list" "$X" check --extsize 16k; }
filefrag_files() { xargs -0 -a "$W/list" filefrag; }
xfsio_files() { xargs -0 -n "$BATCH" -a "$W/list" xfs_io -r -c fiemap; }

if [[ " ${WORKLOADS[*]} " == *" check "* ]]; then
	say "check: $FILES files of 8 KiB"
	mkdir "$M/c"
	"$CT" mkfiles "$M/c" "$FILES" 8192
	find "$M/c" -type f -print0 | sort -z >"$W/list"
	# Warm: every round then measures the tools, not the first disk read.
	check_files >/dev/null 2>&1 || true
	bench check "check $FILES files of 8 KiB" nop check_files \
		filefrag filefrag_files "xfs_io -c fiemap" xfsio_files
fi

if [[ " ${WORKLOADS[*]} " == *" frag "* ]]; then
	say "check: one file of $EXTENTS extents"
	"$CT" frag "$M/frag" "$EXTENTS"
	bench frag "check 1 file of $EXTENTS extents" nop "$X check --extsize 4k $M/frag" \
		filefrag "filefrag $M/frag" "xfs_io -c fiemap" "xfs_io -r -c fiemap $M/frag"
fi

# ---- set -R and apply over empty files -------------------------------------
# Each round sets another size than the one before, so every tool changes
# every file (apply leaves files that already carry their hint alone).
size_n=0
next_size() { size_n=$((size_n + 1)); echo $((size_n % 2 ? 64 : 128))k; }
tree_prep() {
	SIZE=$(next_size)
	printf '[rule bench]\ndirectory = %s\nextsize = %s\n' "$M/t" "$SIZE" >"$W/apply.conf"
}
set_tree() { "$X" set -R --extsize "$SIZE" "$M/t"; }
apply_tree() { "$X" apply --config "$W/apply.conf" "$M/t"; }
xfsio_batch() { find "$M/t" -print0 | xargs -0 -n "$BATCH" xfs_io -c "extsize $SIZE"; }
xfsio_loop() { head -z -n "$LOOP_FILES" "$W/tlist" | xargs -0 -I{} xfs_io -c "extsize $SIZE" {}; }

if [[ " ${WORKLOADS[*]} " == *" set "* || " ${WORKLOADS[*]} " == *" apply "* ]]; then
	say "set/apply: $FILES empty files"
	mkdir "$M/t"
	"$CT" mkfiles "$M/t" "$FILES" 0
	find "$M/t" -print0 >"$W/tlist"
	scale=$(awk -v a="$(find "$M/t" | wc -l)" -v b="$LOOP_FILES" 'BEGIN { printf "%.4f", a / b }')
	for w in set apply; do
		[[ " ${WORKLOADS[*]} " == *" $w "* ]] || continue
		bench "$w" "$w over $FILES empty files" tree_prep "${w}_tree" \
			"xfs_io batched (find|xargs)" xfsio_batch \
			"xfs_io per file (x$scale)" xfsio_loop
	done
fi

# ---- realign -------------------------------------------------------------
# Each round realigns a fresh misaligned copy (made untimed) from a cold
# cache; the anchor copies the same file with O_DIRECT, fsyncs the copy and
# reads it back once: the least a verified copy can do.
fresh() { # what: a misaligned copy of src/what in work/, cold cache
	rm -rf "$M/r/work"
	mkdir "$M/r/work"
	cp --reflink=never -r "$M/r/src/$1" "$M/r/work/"
	cold
}
fresh_big() { fresh big; }
fresh_many() { fresh many; }
realign_big() { "$X" realign -q --state-dir "$W/state" --extsize 64k "$M/r/work/big"; }
copy_big() { "$CT" copy "$M/r/work/big"; }
realign_many() { "$X" realign -q --state-dir "$W/state" --extsize 64k "$M/r/work/many"; }
copy_many() { find "$M/r/work/many" -type f -print0 | xargs -0 "$CT" copy; }

if [[ " ${WORKLOADS[*]} " == *" realign "* ]]; then
	say "realign: 1 file of $REALIGN_MB MiB, $REALIGN_FILES files of 1 MiB"
	mkdir -p "$M/r/src/many"
	dd if=/dev/urandom of="$M/r/src/big" bs=1M count="$REALIGN_MB" status=none
	for ((i = 0; i < REALIGN_FILES; i++)); do
		dd if=/dev/urandom of="$M/r/src/many/f$i" bs=1M count=1 status=none
	done
	bench realign1 "realign 1 file of $REALIGN_MB MiB" fresh_big realign_big \
		"O_DIRECT copy + read back" copy_big
	bench realignN "realign $REALIGN_FILES files of 1 MiB" fresh_many realign_many \
		"O_DIRECT copy + read back" copy_many
fi

# ---- extalignd -------------------------------------------------------------
# extalignd's rule hints every new file in $M/ev (inherit = no, so the kernel
# does nothing and every hint is the daemon's); the anchor is a fanotify
# reader with the same mark that hints every new file with no checks at all
# (daemon-bench reader hint).  Each runs alone on the same storms.
daemon_start() { # extalignd|reader
	case $1 in
	extalignd)
		rm -rf "$W/run"
		"$XD" --foreground --config "$W/d.conf" --state-dir "$W/run" --watch fanotify \
			--log-target stderr 2>>"$W/daemon.log" &
		pid=$!
		until grep -qs '^phase	running' "$W/run/state"; do sleep 0.05; done ;;
	reader)
		"$DB" reader hint "$M" 65536 >"$W/reader.out" &
		pid=$!
		until grep -qs ready "$W/reader.out"; do sleep 0.05; done ;;
	esac
}
daemon_stop() { # extalignd|reader: prints the overflow count
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	case $1 in
	extalignd) awk -F'\t' '$1 == "counter" && $2 == "overflows" { print $3 }' "$W/run/state" ;;
	reader) sed -n 's/.* \([0-9]*\) overflows/\1/p' "$W/reader.out" ;;
	esac
}
# wakeups PID: context switches of all its threads so far
wakeups() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
kib() { awk -v k="$2" '$1 == k":" { print $2 }' /proc/"$1"/status; }
# cpu_ticks PID: user + system clock ticks of the process so far
cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$1"/stat; }

if [[ " ${WORKLOADS[*]} " == *" daemon "* ]]; then
	say "extalignd: storms of $STORM creates and $WRITES create-then-write, $LATENCY latency probes"
	mkdir "$M/ev"
	printf '[rule ev]\ndirectory = %s\nextsize = 64k\ninherit = no\n' "$M/ev" >"$W/d.conf"
	roles=(extalignd reader)
	for ((r = 0; r < ROUNDS; r++)); do
		for ((k = 0; k < 2; k++)); do
			role=${roles[$(((k + r) % 2))]}
			d=$M/ev/$role.$r
			mkdir "$d.s" "$d.w" "$d.l"
			daemon_start "$role"
			c0=$(cpu_ticks "$pid")
			"$DB" storm "$d.s" "$STORM" | awk '{ print $8 }' >>"$W/res/storm.$role"
			# CPU time per file of the storm, microseconds: the rate's
			# steadier twin on a busy machine (the storm's creator and the
			# hinter share the CPUs with everybody else).
			echo "$(cpu_ticks "$pid") $c0" | awk -v n="$STORM" -v hz="$(getconf CLK_TCK)" \
				'{ printf "%.2f\n", ($1 - $2) * 1e6 / hz / n }' >>"$W/res/cpu.$role"
			"$DB" writer "$d.w" "$WRITES" |
				sed -n 's/.*write (\([0-9.]*\)%).*/\1/p' >>"$W/res/write.$role"
			"$DB" latency "$d.l" "$LATENCY" |
				sed -n 's/.*p50 \([0-9.]*\) us, p99 \([0-9.]*\) us.*/\1 \2/p' >>"$W/res/lat.$role"
			daemon_stop "$role" >>"$W/res/over.$role"
			rm -rf "$d.s" "$d.w" "$d.l"
		done
	done

	say "extalignd: $RSS_FILES files under the rule, then $IDLE s idle"
	mkdir "$M/ev/many"
	"$CT" mkfiles "$M/ev/many" "$RSS_FILES" 0
	for role in extalignd reader; do
		a=$EPOCHREALTIME
		daemon_start "$role"
		b=$EPOCHREALTIME
		mkdir "$M/ev/many/storm.$role"
		"$DB" storm "$M/ev/many/storm.$role" "$STORM" >/dev/null
		sleep 1
		w0=$(wakeups "$pid")
		sleep "$IDLE"
		w1=$(wakeups "$pid")
		echo "$(kib "$pid" VmHWM) $(kib "$pid" VmRSS) $((w1 - w0)) $a $b" >"$W/res/rss.$role"
		daemon_stop "$role" >/dev/null
	done
fi

# ---- the guest benchmarks --------------------------------------------------
# atomic.sh (16 KiB writes: RWF_ATOMIC on a forcealign file against a
# doublewrite buffer and the unprotected ceiling) and scale.sh (the first
# aligned allocation after mount) boot the series' UML kernel; their own
# reports are kept whole in $W/res and their ratio lines become rows.
if [[ " ${WORKLOADS[*]} " == *" atomic "* ]]; then
	say "atomic: 16 KiB writes in the guest ($(q 64 1024) MiB files)"
	EXTALIGN_KBUILD=$KBUILD EXTALIGN_RUN=$W/atomic BENCH_SIZE_MB=$(q 64 1024) \
		BENCH_ROUNDS=$ROUNDS BENCH_RUNTIME=$(q 1 3) BENCH_THREADS=4 \
		"$TOP/tests/bench/atomic.sh" >"$W/res/atomic.report" 2>&1 ||
		say "atomic: atomic.sh failed (its report: below the table)"
fi
if [[ " ${WORKLOADS[*]} " == *" scale "* ]]; then
	say "scale: the first aligned allocation after mount, worst case, in the guest"
	EXTALIGN_KBUILD=$KBUILD EXTALIGN_RUN=$W/scale SCALE_ROUNDS=$ROUNDS \
		SCALE_QUICK=$([ "${COMPARE_QUICK:-0}" = 1 ] && echo 1 || echo 0) \
		"$TOP/tests/bench/scale.sh" >"$W/res/scale.report" 2>&1 ||
		say "scale: scale.sh failed (its report: below the table)"
fi

# ---- the table -----------------------------------------------------------
print_table() {
	[ -s "$W/res/rows" ] || return 0
	printf '%-36s %9s  %-28s %9s  %-20s %s\n' WORKLOAD EXTALIGN ANCHOR "ANCHOR" \
		"RATIO min/med/max" "CPU RATIO"
	while IFS=$'\t' read -r label anchor ours theirs; do
		local f=1
		case $anchor in *"(x"*) f=${anchor##*(x}; f=${f%)} ;; esac
		paste "$ours" "$theirs" | awk -v f="$f" -v label="$label" -v anchor="$anchor" '
			function median(a, n,   i, j, t) {
				for (i = 2; i <= n; i++)
					for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
						t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
					}
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			function q(x, y) { return y > 0 ? x / y : 0 }
			{
				o[NR] = $1; t[NR] = $3 * f; r[NR] = q($1, $3 * f)
				c[NR] = q($2, $4 * f)
			}
			END {
				mo = median(o, NR); mt = median(t, NR); mr = median(r, NR)
				printf "%-36s %8.3fs  %-28s %8.3fs  %.2f / %.2f / %.2f   %.2f\n",
					label, mo, anchor, mt, r[1], mr, r[NR], median(c, NR)
			}'
	done <"$W/res/rows"
}

# One line per metric: extalignd's median, the reader's, their ratio
# (extalignd / reader) min / median / max, and the issue's goal.
daemon_row() { # label file column goal
	[ -s "$W/res/$2.extalignd" ] || return 0
	paste "$W/res/$2.extalignd" "$W/res/$2.reader" |
		awk -v c="$3" -v n="$(awk 'NR == 1 { print NF }' "$W/res/$2.extalignd")" \
			-v label="$1" -v goal="$4" '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		{ o[NR] = $c; t[NR] = $(c + n); r[NR] = $(c + n) ? $c / $(c + n) : 0 }
		END {
			mo = median(o, NR); mt = median(t, NR); mr = median(r, NR)
			printf "%-40s %12.1f %12.1f   %.2f / %.2f / %.2f   %s\n",
				label, mo, mt, r[1], mr, r[NR], goal
		}'
}

print_daemon() {
	[ -s "$W/res/storm.extalignd" ] || return 0
	echo
	printf '%-40s %12s %12s   %-20s %s\n' EXTALIGND extalignd reader "RATIO min/med/max" GOAL
	daemon_row "storm of $STORM creates: files/s" storm 1 ">= 1.0x the reader"
	daemon_row "storm: CPU per file (us)" cpu 1 "<= 1.0x"
	daemon_row "overflows per storm round" over 1 "0"
	daemon_row "$WRITES create+write: % hinted in time" write 1 "100%"
	daemon_row "event-to-hint p50 (us)" lat 1 ""
	daemon_row "event-to-hint p99 (us)" lat 2 ""
	if [ -s "$W/res/rss.extalignd" ]; then
		read -r hwm rss wk a b <"$W/res/rss.extalignd"
		read -r rhwm rrss rwk _ _ <"$W/res/rss.reader"
		printf '%-40s %10.1f M %10.1f M   %-20s %s\n' "RSS, $RSS_FILES files under rules (peak)" \
			"$(awk -v k="$hwm" 'BEGIN { print k / 1024 }')" \
			"$(awk -v k="$rhwm" 'BEGIN { print k / 1024 }')" "" "<= 10 MiB"
		printf '%-40s %10.1f M %10.1f M\n' "RSS, after the storm (current)" \
			"$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
			"$(awk -v k="$rrss" 'BEGIN { print k / 1024 }')"
		printf '%-40s %12s %12s   %-20s %s\n' "wakeups over $IDLE s idle" "$wk" "$rwk" "" 0
		printf '%-40s %11.2fs\n' "start-up scan of $RSS_FILES files" \
			"$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')"
	fi
}

# atomic_ratio PAIR FIELD: the ratio of atomic.sh's line for PAIR ("fa/d"):
# FIELD "IOPS", "p99", or "rounds" (the IOPS ratios by round, as printed).
atomic_ratio() {
	[ -s "$W/res/atomic.report" ] || return 0
	awk -v pair="$1" -v f="$2" '$1 == pair {
		if (f == "rounds") { sub(/.*IOPS by round: /, ""); sub(/; median.*/, ""); print; exit }
		for (i = 2; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' "$W/res/atomic.report"
}
# The worst case of scale.sh: "ratio ... medians: R (goal ...); round by round min / med / max: ..."
scale_worst() {
	[ -s "$W/res/scale.report" ] || return 0
	awk '/first allocation after mount, worst case/ { w = 1 }
		w && /ratio aligned\/plain of the median times/ {
			r = $0; sub(/.*median times: /, "", r); sub(/ .*/, "", r)
			s = $0; sub(/.*min \/ med \/ max: /, "", s)
			print r, s; exit }' "$W/res/scale.report"
}

print_guest() {
	local r
	if [ -s "$W/res/atomic.report" ]; then
		echo
		printf '%-44s %8s %8s   %s\n' "GUEST: ATOMIC 16 KiB WRITES, 4 threads" IOPS p99 "IOPS ratio by round"
		for r in "a/d RWF_ATOMIC vs doublewrite (atomic-write)" \
			"a/c RWF_ATOMIC vs unprotected (atomic-write)" \
			"fa/fc RWF_ATOMIC vs unprotected (fio)"; do
			printf '%-44s %8s %8s   %s\n' "${r#* }" "$(atomic_ratio "${r%% *}" IOPS)" \
				"$(atomic_ratio "${r%% *}" p99)" "$(atomic_ratio "${r%% *}" rounds)"
		done
		echo "(atomic.sh's whole report: $W/res/atomic.report, removed at exit; printed below)"
		sed 's/^/  | /' "$W/res/atomic.report"
	fi
	if [ -s "$W/res/scale.report" ]; then
		echo
		read -r r rest <<<"$(scale_worst)"
		printf '%-44s %8s   %s\n' "GUEST: FIRST ALIGNED ALLOCATION AFTER MOUNT" "aligned/plain" ""
		printf '%-44s %8s   %s\n' "worst case (groups without an aligned unit)" "${r:--}" \
			"round by round min / med / max: ${rest:--}"
		sed 's/^/  | /' "$W/res/scale.report"
	fi
}

# The END of an awk program that prints the median of r[1..NR] (mawk has
# no sort function).
AWK_MEDIAN='END {
	for (i = 2; i <= NR; i++)
		for (j = i; j > 1 && r[j - 1] > r[j]; j--) { t = r[j]; r[j] = r[j - 1]; r[j - 1] = t }
	printf "%.2f\n", NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }'
# med_ratio ID: the median round ratio (ours / anchor) of a bench() row.
med_ratio() {
	[ -s "$W/res/$1.0" ] || return 0
	paste "$W/res/$1.0" "$W/res/$1.1" | awk '{ r[NR] = $3 > 0 ? $1 / $3 : 0 } '"$AWK_MEDIAN"
}
# med_col NAME COL: the median ratio extalignd / reader of a daemon metric.
med_col() {
	[ -s "$W/res/$1.extalignd" ] || return 0
	paste "$W/res/$1.extalignd" "$W/res/$1.reader" | awk -v c="$2" -v n="$(awk 'NR == 1 { print NF }' "$W/res/$1.extalignd")" '
		{ r[NR] = $(c + n) ? $c / $(c + n) : 0 } '"$AWK_MEDIAN"
}
# goal LABEL VALUE OP LIMIT: one summary line, "met" or "not met".
goal() {
	[ -n "$2" ] || return 0
	local met
	met=$(awk -v v="$2" -v op="$3" -v l="$4" 'BEGIN {
		ok = (op == "<=") ? v <= l : v >= l; print ok ? "met" : "not met" }')
	printf '%-52s %6sx   goal %s %s: %s\n' "$1" "$2" "$3" "$4" "$met"
}
print_goals() {
	echo
	echo "GOALS (issue 29; medians of the round-by-round ratios)"
	goal "daemon storm, files/s vs the bare reader" "$(med_col storm 1)" ">=" 1.0
	goal "daemon storm, CPU per file vs the bare reader" "$(med_col cpu 1)" "<=" 1.0
	goal "realign 1 file of $REALIGN_MB MiB vs the verified copy" "$(med_ratio realign1)" "<=" 1.0
	goal "realign $REALIGN_FILES files of 1 MiB vs the verified copy" "$(med_ratio realignN)" "<=" 1.2
	goal "first aligned allocation, worst case, vs plain" "$(scale_worst | cut -d' ' -f1)" "<=" 4
	local a
	a=$(atomic_ratio a/d IOPS)
	[ -n "$a" ] && printf '%-52s %6sx   (the headline: no goal)\n' \
		"atomic 16 KiB writes, IOPS vs doublewrite" "$a"
	return 0
}

echo "extalign compare: XFS on loop ($W), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"$ROUNDS rounds"
print_table
print_daemon
print_guest
print_goals
