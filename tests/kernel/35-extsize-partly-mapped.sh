#!/bin/bash
# Spec patch 5, a widened range that is already partly mapped: the write
# falls back to a normal allocation of its own blocks.  No piece of the
# unit around it (an odd length at an odd place) is allocated instead.
. "$(dirname "$0")/lib.sh"

fresh_ext4 "$UBD" -b 4096
f=$MNT/f
: >"$f"
# A 16 block hint; the first unit is preallocated, then punched down to
# block 4 alone (a hint allows that, forcealign would not); then writes to
# blocks 10 and 13, in holes of that partly mapped unit.
set_extsize "$f" 64k || die "extsize 64k"
xfs_io -c "falloc 0 64k" -c "fpunch 0 16k" -c "fpunch 20k 44k" "$f" ||
	die "falloc and punch"
expect "left of the unit" "$(runs "$f" | awk '{ print $1 "+" $2 }')" "16384+4096"
xfs_io -d -c "pwrite -q -S 0xa5 40k 4k" "$f" || die "direct write to block 10"
xfs_io -c "pwrite -q -S 0xa5 52k 4k" -c fsync "$f" || die "buffered write to block 13"
xfs_io -c 'fiemap -v' "$f"
expect "allocated ranges (offset length)" \
	"$(runs "$f" | awk '{ printf "%s%s+%s", n++ ? " " : "", $1, $2 }')" \
	"16384+4096 40960+4096 53248+4096"
filled "$f" 40960 4096 || die "block 10 does not read back"
filled "$f" 53248 4096 || die "block 13 does not read back"
umount "$MNT"
exit 0
