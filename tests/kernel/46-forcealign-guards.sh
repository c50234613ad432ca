#!/bin/bash
# Issue 22.4: the kernel paths that move blocks between files or change a
# file's block mapping keep forcealign units whole and aligned:
# EXT4_IOC_MOVE_EXT (e4defrag) refuses a donor or a range that would break
# the unit rule, chattr -e does not move a forcealign file to indirect
# mapping, and EXT4_IOC_SWAP_BOOT does not swap its blocks.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024
UNIT=$((64 * K))
B=16 # blocks in a unit

# fa FILE [UNIT]: an empty forcealign file.
fa() {
	: >"$1"
	[ "$(kt setx "$1" $BOTH "${2:-$UNIT}")" = ok ] || die "forcealign on $1"
}

fresh_ext4 "$UBD" -b 4096
cd "$MNT" || die "cd"
fa o
xfs_io -d -c "pwrite -q -S 0xa5 0 256k" -c fsync o || die "write o"
# A plain donor one block off the unit grid on disk.
xfs_io -f -d -c "pwrite -q 0 4k" -c fsync pad || die "write pad"
xfs_io -f -d -c "pwrite -q -S 0x5a 0 256k" -c fsync plain || die "write plain"

expect "MOVE_EXT: plain donor into forcealign, whole units" \
	"$(kt moveext o plain 0 0 $B)" "err EINVAL"
expect "MOVE_EXT: plain donor into forcealign, part of a unit" \
	"$(kt moveext o plain 2 2 4)" "err EINVAL"
expect "MOVE_EXT: forcealign donor into a plain file" \
	"$(kt moveext plain o 0 0 $B)" "err EINVAL"
filled o 0 $((256 * K)) || die "o changed"
units_aligned o $UNIT || die "o not aligned"

fa d
xfs_io -d -c "pwrite -q -S 0x3c 0 256k" -c fsync d || die "write d"
expect "MOVE_EXT: forcealign donor, part of a unit" \
	"$(kt moveext o d 4 4 4)" "err EINVAL"
expect "MOVE_EXT: forcealign donor, units at different offsets in the unit" \
	"$(kt moveext o d 0 4 $B)" "err EINVAL"
fa d32 $((32 * K))
xfs_io -d -c "pwrite -q 0 256k" -c fsync d32 || die "write d32"
expect "MOVE_EXT: forcealign donor with another unit" \
	"$(kt moveext o d32 0 0 $B)" "err EINVAL"
expect "MOVE_EXT: forcealign donor, same unit, whole units" \
	"$(kt moveext o d $B $B $((2 * B)))" "ok $((2 * B))"
units_aligned o $UNIT || die "o not aligned after a move of whole units"
units_aligned d $UNIT || die "d not aligned after a move of whole units"
# MOVE_EXT keeps the contents of the file and moves it onto the donor's
# blocks.
filled o 0 $((256 * K)) || die "o changed by the move"

# chattr -e would migrate the file to indirect blocks, which the
# allocation of units does not handle.
fa e
out=$(chattr -e e 2>&1) && die "chattr -e on an empty forcealign file worked"
ok "chattr -e refused: $out"
fa e1
xfs_io -d -c "pwrite -q 0 64k" -c fsync e1 || die "write e1"
out=$(chattr -e e1 2>&1) && die "chattr -e on a forcealign file with one unit worked"
ok "chattr -e refused: $out"
case $(lsattr e1) in
*e*) ok "e1 still maps extents" ;;
*) die "e1 lost its extents flag: $(lsattr e1)" ;;
esac
expect "e1 is still forcealign" "$(xflags e1)" $BOTH
: >hinted
[ "$(kt setx hinted 0x800 $UNIT)" = ok ] || die "hint on hinted"
chattr -e hinted || die "chattr -e on a file with only the hint"
ok "a file with only the hint may still migrate"

# The boot loader inode swap.
fa sb
xfs_io -d -c "pwrite -q 0 64k" -c fsync sb || die "write sb"
expect "SWAP_BOOT of a forcealign file" "$(kt swapboot sb)" "err EINVAL"
units_aligned sb $UNIT || die "sb not aligned"
cd /
umount "$MNT"
exit 0
