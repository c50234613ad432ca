#!/bin/bash
# Issue 34.1: truncate keeps the forcealign unit that holds the new EOF, so
# it rounds EOF up to the unit.  Near the largest file ext4 maps (2^32 - 1
# blocks of 4 KiB) that rounding must not wrap the 32-bit block number to
# 0: the truncate would then free every block of the file, while the
# extent status cache still maps them, and a later write could land in
# another file's blocks.
#
# The last unit below that limit cannot be whole (its last block is past
# what an extent can map): a write there gets EFBIG, as a write past the
# largest file does, not EUCLEAN as if the unit were broken.
. "$(dirname "$0")/lib.sh"

K=1024
UNIT=$((64 * K))
LAST=$(((2 ** 32 - 1) * 4096))

fresh_ext4 "$UBD" -b 4096
need_kept_hint
f=$MNT/f
: >"$f"
expect "forcealign with a 64k hint" "$(kt setx "$f" 0x100800 $UNIT)" ok
xfs_io -d -c "pwrite -q -S 0xa5 0 64k" -c fsync "$f" || die "write"
blocks=$(stat -c %b "$f")

truncate -s $LAST "$f" || die "truncate up to the largest file"
truncate -s $((LAST - 4096)) "$f" || die "truncate into the last unit"
expect "blocks after a truncate in the last unit" "$(stat -c %b "$f")" "$blocks"
filled "$f" 0 $UNIT || die "the data before the truncate is gone"

# What the cache said must agree with the disk: another file written now
# must not get the blocks of f, and f's data must survive a remount.
xfs_io -f -d -c "pwrite -q -S 0x5a 0 1m" -c fsync "$MNT/g" || die "write g"
remount "$UBD"
expect "blocks after a remount" "$(stat -c %b "$f")" "$blocks"
filled "$f" 0 $UNIT || die "another file took the blocks of f"

# The last unit: 2^32 - 16 .. 2^32 - 1, whose last block no extent maps.
out=$(xfs_io -d -c "pwrite -q $((LAST + 4096 - UNIT)) 4k" "$f" 2>&1)
case $out in
*"File too large"*) ok "a write into the last, partial unit: EFBIG" ;;
*) die "a write into the last, partial unit: '$out'" ;;
esac
# The unit before it is whole and takes a write.
xfs_io -d -c "pwrite -q -S 0xa5 $((LAST + 4096 - 2 * UNIT)) 4k" "$f" ||
	die "a write into the last whole unit"
units_aligned "$f" $UNIT || die "not in aligned units"
umount "$MNT"
exit 0
