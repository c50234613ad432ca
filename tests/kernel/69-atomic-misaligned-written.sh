#!/bin/bash
# Issue 34.8: an atomic write over a forcealign unit that is one written,
# physically contiguous extent, but not aligned on disk (broken behind the
# kernel's back), must be refused with EINVAL as on every other path.  Such
# a write takes the overwrite path under the shared inode lock, which maps
# without allocating; the device must never see it, since it takes an
# atomic write only naturally aligned on disk.
. "$(dirname "$0")/lib.sh"

UNIT=65536

sd=$(scsi_disk) || die "no scsi_debug disk"
fresh_ext4 "$sd" -b 4096
need_kept_hint
cd "$MNT" || die "cd"
# A block ahead of it, so that m's 64k, the next blocks of the same
# locality group (one CPU's), starts past a unit boundary.  Where the free
# space starts depends on mke2fs's layout (Debian's and the series' differ):
# a second pad block when the first ends on a boundary.
one_cpu xfs_io -f -d -c "pwrite -q 0 4k" -c fsync pad || die "write pad"
read -r _ len ps <<<"$(runs pad)"
if (((ps + len) % UNIT == 0)); then
	one_cpu xfs_io -f -d -c "pwrite -q 0 4k" -c fsync pad2 || die "write pad2"
fi
one_cpu xfs_io -f -d -c "pwrite -q -S 0xa5 0 64k" -c fsync m || die "write m"
read -r ls len ps <<<"$(runs m)"
expect "m is one extent" "$ls $len" "0 $UNIT"
((ps % UNIT)) || { xfs_io -c 'fiemap -v' m; die "m happens to be aligned on disk"; }
offline_forcealign "$sd" m 16
m=$MNT/m
expect "the misaligned file is forcealign" "$(xflags "$m")" 0x100800

# A first write lets the inode take direct overwrites under the shared
# lock (S_NOSEC: no privileges left to strip), the path this is about.
# One block is always aligned.
expect "a 4k atomic write inside it" "$(kt awrite "$m" 4096 4096)" "ok 4096"
# EINVAL from ext4, before any bio: scsi_debug takes a misaligned atomic
# write (the series before the fix returned 65536 here), as a device may.
need_trace_event block/block_bio_queue
trace_start block/block_bio_queue
got=$(kt awrite "$m" 0 $UNIT)
trace_stop
expect "a 64k atomic write over the misaligned written unit" "$got" "err EINVAL"
expect "write bios it queued" \
	"$(grep -c 'block_bio_queue: [0-9]*,[0-9]* W.*\[ktool\]' $TRACEFS/trace)" 0
filled "$m" 0 $UNIT || die "the unit does not read back"
# The alignment checker after the test would report it (on purpose).
rm "$m"
umount "$MNT"
exit 0
