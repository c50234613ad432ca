#!/bin/bash
# Issue 22.7: a forcealign unit of one block.  Every block is aligned to
# itself, so such a file must get blocks wherever any block is free, on
# 4 KiB and 1 KiB filesystems, through every write path, and take every
# deallocation (each block is a whole unit).  A filesystem fragmented so
# that no two adjacent blocks are free shows it: a 64 KiB forcealign unit
# finds no aligned free unit there (ENOSPC), the one-block unit file still
# writes.  (mballoc's strict flag itself, for a one-block request, is
# tested by KUnit: test_mb_aligned_strict.)
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024

# fa FILE UNIT: an empty forcealign file.
fa() {
	: >"$1"
	expect "forcealign $2 on ${1##*/}" "$(kt setx "$1" $BOTH "$2")" ok
}

# every_path FILE BS: buffered, direct, fallocate and mmap writes of FILE
# (block size BS) work and read back; punch, zero, collapse and insert
# of single blocks are taken.
every_path() {
	local f=$1 bs=$2

	xfs_io -c "pwrite -q -S 0xa5 0 $((10 * bs))" -c fsync "$f" || die "buffered write"
	xfs_io -d -c "pwrite -q -S 0xa5 $((10 * bs)) $((6 * bs))" "$f" || die "direct write"
	xfs_io -c "falloc $((16 * bs)) $((16 * bs))" "$f" || die "fallocate"
	xfs_io -c "mmap -w 0 $((32 * bs))" -c "mwrite -S 0xa5 $((16 * bs)) $((4 * bs))" \
		-c "msync -s 0 $((32 * bs))" "$f" || die "mmap write"
	filled "$f" 0 $((20 * bs)) || die "writes do not read back"
	zeros "$f" $((20 * bs)) $((12 * bs)) unwritten
	xfs_io -c "fpunch $bs $bs" -c "fzero $((2 * bs)) $bs" \
		-c "fcollapse $((3 * bs)) $bs" -c "finsert $((3 * bs)) $bs" "$f" ||
		die "one-block punch, zero, collapse, insert"
	zeros "$f" "$bs" "$bs" hole
	ok "every write and deallocation path with a one-block unit"
}

FS_SIZE=32M fresh_ext4 "$UBD" -b 4096 -m 0
fa "$MNT/one" 4096
expect "GET" "$(kt getx "$MNT/one")" "xflags=$BOTH extsize=4096"
every_path "$MNT/one" 4096

# No two adjacent free blocks: fill the filesystem (its reserved pool too,
# which would keep a contiguous run free), then free every other block of
# the filler.
echo 0 >"/sys/fs/ext4/${UBD##*/}/reserved_clusters" || die "reserved_clusters"
# Direct writes: ENOSPC comes back to dd at once.  Buffered ones would
# leave delayed allocations for writeback to place with no reserved pool
# left, and a loaded CI machine once saw that writeback never end (the
# guest hung in this fill, its timeout unable to kill dd).
for bs in 64k 4k; do
	dd if=/dev/zero of="$MNT/fill" bs=$bs oflag=append,direct conv=notrunc \
		status=none 2>/dev/null
done
sync
echo "free blocks after the fill: $(stat -f -c %f "$MNT")"
# The punches split the filler's extents and need extent tree blocks:
# 8 free blocks to start with (too few for a 64 KiB unit), then the ones
# the punches free, which become free only when their transaction
# commits: an fsync every 64 punches.
size=$(($(stat -c %s "$MNT/fill") / 4096 * 4096 - 32768))
xfs_io -c "truncate $size" -c fsync "$MNT/fill" || die "truncate the filler"
awk -v n=$((size / 8192)) 'BEGIN {
	for (i = 0; i < n; i++) {
		printf "fpunch %d 4096\n", i * 8192
		if (i % 64 == 63) print "fsync"
	}
}' | xfs_io "$MNT/fill" || die "punch the filler"
sync
fa "$MNT/unit64k" $((64 * K))
expect "64k forcealign unit on the fragmented filesystem" \
	"$(xfs_io -d -c "pwrite -q 0 64k" "$MNT/unit64k" 2>&1)" \
	"pwrite: No space left on device"
xfs_io -d -c "pwrite -q -S 0xa5 1m 32k" "$MNT/one" || die "direct write, fragmented"
xfs_io -c "pwrite -q -S 0xa5 2m 32k" -c fsync "$MNT/one" || die "buffered write, fragmented"
filled "$MNT/one" $((1024 * K)) $((32 * K)) || die "direct write, fragmented, reads back"
filled "$MNT/one" $((2048 * K)) $((32 * K)) || die "buffered write, fragmented, reads back"
ok "one-block unit writes where no aligned 64k unit is free"
remount "$UBD"
filled "$MNT/one" 0 $((4 * K)) || die "after remount"
umount "$MNT"

# 1 KiB blocks: groups start at block 1, so one block is the only unit
# mballoc can align; it is a valid forcealign unit there.
fresh_ext4 "$UBD" -b 1024
fa "$MNT/one" 1024
expect "2 KiB unit on 1 KiB blocks" "$(kt setx "$MNT/one" $BOTH 2048)" "err EINVAL"
every_path "$MNT/one" 1024
umount "$MNT"
