#!/bin/bash
# Realignment throughput against plain copies of the same data on the same
# filesystem in the same run, and the cost to a foreground reader of an
# idle-class realignment running beside it.
# Usage: tests/bench/realign.sh [SIZE_MB]   (default 256; needs root)
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
EXTALIGN=${EXTALIGN:-$TOP/build/extalign}
MB=${1:-256}
[ "$(id -u)" = 0 ] || { echo "needs root (loop device)"; exit 77; }
WORK=$(mktemp -d /tmp/extalign-bench.XXXXXX)
loop=
cleanup() {
	umount "$WORK/m" 2>/dev/null || true
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

truncate -s $((MB * 4 + 512))M "$WORK/img"
mkfs.xfs -q "$WORK/img"
# Direct I/O on the backing file: no second page cache under the loop device.
loop=$(losetup -f --show --direct-io=on "$WORK/img")
mkdir "$WORK/m"
mount "$loop" "$WORK/m"
m=$WORK/m
dd if=/dev/urandom of="$m/src" bs=1M count="$MB" status=none
sync

cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# t1 CMD...: seconds CMD takes from a cold cache, the final sync included.
t1() {
	local a b
	cold
	a=$(date +%s.%N)
	"$@" >/dev/null
	sync
	b=$(date +%s.%N)
	echo "$b - $a" | bc -l
}
fresh() { rm -f "$m/f" "$m/g"; cp --reflink=never "$m/src" "$m/f"; sync; }
# t PREP CMD...: the best of $REPEAT runs (the machine is shared and noisy),
# PREP run before each.
REPEAT=${REPEAT:-3}
t() {
	local prep=$1 best='' s
	shift
	for _ in $(seq "$REPEAT"); do
		$prep
		s=$(t1 "$@")
		if [ -z "$best" ] || [ "$(echo "$s < $best" | bc -l)" = 1 ]; then best=$s; fi
	done
	echo "$best"
}
nop() { :; }
rmg() { rm -f "$m/g"; }
hinted() { [ "$(xfs_io -c stat "$m/f" | awk '/fsxattr.extsize/ { print $3 }')" = 65536 ] ||
	"$EXTALIGN" realign -q --state-dir "$WORK/state" --extsize 64k "$m/f"; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }

fresh
cp_s=$(t rmg cp --reflink=never "$m/f" "$m/g")
dd_s=$(t rmg dd if="$m/f" of="$m/g" bs=1M iflag=direct oflag=direct status=none)
rm -f "$m/g"
direct_s=$(t fresh "$EXTALIGN" realign -q --state-dir "$WORK/state" --extsize 64k "$m/f")
buffered_s=$(t fresh "$EXTALIGN" realign -q --buffered --state-dir "$WORK/state" --extsize 64k "$m/f")
# A file that already has the hint: the swapext path, same copy.
swap_s=$(t hinted "$EXTALIGN" realign -q --rewrite-aligned --state-dir "$WORK/state" --extsize 64k "$m/f")

printf '%-44s %8s %8s\n' "$MB MiB on loop XFS" seconds "vs cp"
printf '%-44s %8.2f %8s\n' "cp --reflink=never + sync (baseline)" "$cp_s" 1.00
printf '%-44s %8.2f %8.2f\n' "dd O_DIRECT 1M" "$dd_s" "$(ratio "$dd_s" "$cp_s")"
printf '%-44s %8.2f %8.2f\n' "realign O_DIRECT, rename path" "$direct_s" "$(ratio "$direct_s" "$cp_s")"
printf '%-44s %8.2f %8.2f\n' "realign --buffered, rename path" "$buffered_s" \
	"$(ratio "$buffered_s" "$cp_s")"
printf '%-44s %8.2f %8.2f\n' "realign O_DIRECT, swapext path" "$swap_s" "$(ratio "$swap_s" "$cp_s")"
echo "(realign reads the original once, writes the copy, reads the copy back to verify)"

# Foreground: O_DIRECT reads of another file, alone and beside a realignment
# in the idle I/O class (ionice -c3), as extalignd runs it.
fg() { dd if="$m/src" of=/dev/null bs=1M iflag=direct status=none; }
alone=$(t nop fg)
fresh
ionice -c3 nice -n 19 "$EXTALIGN" realign -q --rewrite-aligned --state-dir "$WORK/state" \
	--extsize 64k "$m/f" >/dev/null &
bg=$!
beside=$(t1 fg)
wait "$bg"
echo
printf '%-44s %8.2f MiB/s\n' "foreground read alone" "$(echo "$MB / $alone" | bc -l)"
printf '%-44s %8.2f MiB/s (%.2f of alone)\n' "foreground read beside idle-class realign" \
	"$(echo "$MB / $beside" | bc -l)" "$(ratio "$alone" "$beside")"
echo "(the idle class is honoured by the bfq scheduler only; with none/mq-deadline on a loop"
echo " device both get their share)"
