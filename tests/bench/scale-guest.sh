#!/bin/bash
# PID 1 of the UML guest that tests/bench/scale.sh boots through
# kernel/boot.sh: the allocation cost of extent size hint alignment on a
# large sparse filesystem (SCALE_DEV, default /dev/ubdb: the sparse image
# scale.sh passes as ubd1), made with lazy inode table and journal init
# and mounted with noinit_itable, so that nothing but the measured
# allocations touches the groups.
#
#   FIRST   the first allocation after a mount (caches dropped): one file,
#           one 4 KiB O_DIRECT write, as a forcealign file with a 64 KiB
#           extsize (aligned) or a plain file; the kinds alternate which
#           goes first each round.  Also the page cache (buddy cache) it
#           grew by.
#   STEADY  SCALE_FILES files of UNIT bytes each (4 KiB and 64 KiB), each
#           written once with O_DIRECT, as forcealign files with extsize
#           UNIT (aligned) or plain files, on the same mount.
#
# Lines "FIRST kind=K round=R files=1 write_ns=..." and "STEADY kind=K
# unit=U round=R files=N write_ns=..." in $EXTALIGN_OUT/results;
# tools/bench alloc-files does the timing (only the writes).
# From the kernel command line: EXTALIGN_OUT, SCALE_TOOL (alloc-files),
# SCALE_ROUNDS (default 5), SCALE_FILES (default 2000), SCALE_DEV.
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(cd "$HERE/../.." && pwd)
# shellcheck source=../kernel/guest.sh
. "$TOP/tests/kernel/guest.sh"
guest_setup

OUT=${EXTALIGN_OUT:-/tmp/extalign-scale-out}
mkdir -p "$OUT"
exec >"$OUT/guest.log" 2>&1
DEV=${SCALE_DEV:-/dev/ubdb}
TOOL=${SCALE_TOOL:?}
ROUNDS=${SCALE_ROUNDS:-5}
FILES=${SCALE_FILES:-2000}
FORCEALIGN=0x100800 # FS_XFLAG_FORCEALIGN | FS_XFLAG_EXTSIZE
M=/run/scale
R=$OUT/results
mkdir -p "$M"
: >"$R"

finish() {
	umount "$M" 2>/dev/null
	echo done >"$OUT/done"
	guest_poweroff
}

[ -b "$DEV" ] || { echo "ERROR no $DEV" >>"$R"; finish; }
start=$(date +%s)
mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=1,lazy_journal_init=1,nodiscard "$DEV" ||
	{ echo "ERROR mkfs.ext4 $DEV" >>"$R"; finish; }
groups=$(dumpe2fs -h "$DEV" 2>/dev/null | awk -F: '
	/^Block count/ { b = $2 } /^Blocks per group/ { g = $2 } END { print int((b + g - 1) / g) }')
echo "INFO bytes=$(blockdev --getsize64 "$DEV") groups=$groups mkfs_s=$(($(date +%s) - start))" >>"$R"

fresh_mount() {
	umount "$M" 2>/dev/null
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount -t ext4 -o noinit_itable "$DEV" "$M" || { echo "ERROR mount" >>"$R"; finish; }
}

# The directories first, so that the first allocation measured is the
# write's and not a directory block's.
fresh_mount
for ((r = 1; r <= ROUNDS; r++)); do
	mkdir -p "$M/first-aligned-$r" "$M/first-plain-$r"
	for u in 4096 65536; do
		mkdir -p "$M/steady-aligned-$u-$r" "$M/steady-plain-$u-$r"
	done
done

cached() { awk '/^Cached:/ { print $2 }' /proc/meminfo; }
# one KIND DIR COUNT BYTES: alloc-files for that kind, its output line.
one() {
	if [ "$1" = aligned ]; then
		"$TOOL" "$2" "$3" "$4" $FORCEALIGN "${5:-$4}"
	else
		"$TOOL" "$2" "$3" "$4"
	fi
}

for ((r = 1; r <= ROUNDS; r++)); do
	order="aligned plain"
	[ $((r % 2)) = 0 ] && order="plain aligned"
	for kind in $order; do
		fresh_mount
		c0=$(cached)
		if out=$(one $kind "$M/first-$kind-$r" 1 4096 65536 2>&1); then
			echo "FIRST kind=$kind round=$r $out cached_kb=$(($(cached) - c0))" >>"$R"
		else
			echo "ERROR FIRST kind=$kind round=$r $out" >>"$R"
		fi
	done
done

fresh_mount
for u in 4096 65536; do
	for ((r = 1; r <= ROUNDS; r++)); do
		order="aligned plain"
		[ $((r % 2)) = 0 ] && order="plain aligned"
		for kind in $order; do
			# The previous batch's inodes written back and committed
			# now, not during this one.
			sync
			if out=$(one $kind "$M/steady-$kind-$u-$r" "$FILES" $u 2>&1); then
				echo "STEADY kind=$kind unit=$u round=$r $out" >>"$R"
			else
				echo "ERROR STEADY kind=$kind unit=$u round=$r $out" >>"$R"
			fi
		done
	done
done
umount "$M"
if ! e2fsck -fn "$DEV" >"$OUT/fsck.log" 2>&1; then
	echo "ERROR e2fsck -fn $DEV is not clean" >>"$R"
fi
dmesg | grep -E 'WARNING:|BUG:|EXT4-fs (error|warning)' >"$OUT/klog"
[ -s "$OUT/klog" ] && echo "ERROR kernel log: $(head -n 3 "$OUT/klog" | tr '\n' ' ')" >>"$R"
finish
