#!/bin/bash
# Issues 22.5 and 34.7: an extent size hint that cannot be read when the
# inode is loaded must not silently turn the hint, and forcealign with it,
# off; but it must not make the file unreachable either, or an e2fsck that
# clears a corrupt xattr block (and keeps the inode flag it does not know)
# would leave a file nobody can open, stat or delete.  So the file loads
# without its hint and cannot be written or resized (EUCLEAN), since that
# could allocate blocks the lost rule forbids; it can be read, stat'ed and
# deleted, and FS_IOC_FSSETXATTR can set or clear its hint again.  A read
# error (EIO) still fails the load: the next lookup tries again.  Inodes
# without a hint do not look for one: a plain file whose xattr block is
# unreadable loads without touching it.
#
# 128-byte inodes have no room for xattrs, so every xattr lives in the
# external block, which the test corrupts (its checksum no longer matches).
. "$(dirname "$0")/lib.sh"

# acl_block FILE: the xattr block of FILE (debugfs "File ACL").
acl_block() {
	debugfs -R "stat $1" "$UBD" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p'
}

# poke BLOCK: flip a byte in BLOCK past its header, saving it first.
poke() {
	dd if="$UBD" of="$SCRATCH/block.$1" bs=4096 skip="$1" count=1 status=none
	printf '\377' | dd of="$UBD" bs=1 seek=$(($1 * 4096 + 100)) conv=notrunc status=none
}

# smash BLOCK: overwrite the magic number of the xattr block BLOCK, which
# e2fsck cannot repair (a bad checksum alone it recomputes): it clears
# the inode's xattr block instead.
smash() {
	printf '\0\0\0\0' | dd of="$UBD" bs=1 seek=$(($1 * 4096)) conv=notrunc status=none
}

restore() {
	dd if="$SCRATCH/block.$1" of="$UBD" bs=4096 seek="$1" conv=notrunc status=none
}

# unreadable_hint FILE: FILE loaded without its hint: stat and reads work,
# writes and truncates are refused with EUCLEAN.
unreadable_hint() {
	local out

	stat "$1" >/dev/null || die "stat of $1, whose hint cannot be read"
	cat "$1" >/dev/null || die "read of $1, whose hint cannot be read"
	expect "$1 reports no hint" "$(kt getx "$1")" "xflags=0x0 extsize=0"
	out=$(xfs_io -c "pwrite -q 0 4k" "$1" 2>&1)
	case $out in
	*"Structure needs cleaning"*) ok "$1: opening for write: EUCLEAN" ;;
	*) die "$1: opening for write: '$out'" ;;
	esac
	out=$(truncate -s 64k "$1" 2>&1)
	case $out in
	*"Structure needs cleaning"*) ok "$1: truncate: EUCLEAN" ;;
	*) die "$1: truncate: '$out'" ;;
	esac
}

fresh_ext4 "$UBD" -b 4096 -I 128
f=$MNT/f g=$MNT/g h=$MNT/h
for x in "$f" "$h"; do
	: >"$x"
	expect "forcealign with a hint" "$(kt setx "$x" 0x100800 65536)" ok
done
: >"$g"
setfattr -n user.note -v plain "$g" || die "setfattr"
umount "$MNT"
fb=$(acl_block /f) gb=$(acl_block /g) hb=$(acl_block /h)
[[ -n $fb && $fb != 0 ]] || die "the hint of /f is not in an xattr block"
# With the same hint, f and h share one xattr block (ext4's mbcache), so
# one corrupt block takes out both.
[[ -n $hb && $hb != 0 ]] || die "the hint of /h is not in an xattr block"
[[ -n $gb && $gb != 0 && $gb != "$fb" ]] || die "/g has no xattr block of its own"
poke "$fb"
poke "$gb"
sync

mount -t ext4 "$UBD" "$MNT" || die "mount"
dmesg -C
stat "$g" >/dev/null || die "stat of the plain file"
n=$(dmesg | grep -c 'EXT4-fs')
dmesg | grep 'EXT4-fs'
expect "kernel messages loading a file without a hint" "$n" 0

# A corrupt xattr block: the file loads without its hint, read-only.
unreadable_hint "$f"
dmesg | grep -q "extent size hint" || die "no kernel message names the lost hint"
# The errors were expected: they must not fail the test in the log check.
dmesg -C
umount "$MNT"

restore "$fb"
restore "$gb"
sync
e2fsck -fy "$UBD" >/dev/null 2>&1
mount -t ext4 "$UBD" "$MNT" || die "mount"
expect "the hint is back with its block" "$(kt getx "$f")" "xflags=0x100800 extsize=65536"
expect "the plain file's xattr" "$(getfattr --only-values -n user.note "$g")" plain
umount "$MNT"

# Debian's e2fsck clears a corrupt xattr block and keeps the hint flag,
# which it does not know: the hint is missing from then on.  Both files
# stay deletable, and clearing the hint makes one writable again.
if debian_e2fsck_here; then
	smash "$fb"
	[ "$hb" = "$fb" ] || smash "$hb"
	sync
	"$DEBIAN_E2FSCK" -fy "$UBD" >/dev/null 2>&1
	mount -t ext4 "$UBD" "$MNT" || die "mount"
	unreadable_hint "$h"
	rm "$f" || die "rm of a file whose hint e2fsck cleared"
	ok "a file whose hint e2fsck cleared can be deleted"
	expect "clearing the lost hint" "$(kt setx "$h" 0 0)" ok
	xfs_io -c "pwrite -q -S 0xa5 0 4k" -c fsync "$h" || die "write after the hint was cleared"
	expect "no hint after clearing it" "$(kt getx "$h")" "xflags=0x0 extsize=0"
	dmesg -C
	umount "$MNT"
fi
mount -t ext4 "$UBD" "$MNT" || die "mount"

# The series' e2fsck (e2fsprogs/, issue 28) clears the flag with the
# block: the file is a plain one from then on, writable, and the kernel
# has nothing to report when it loads it.
[ -n "$SERIES_E2FSCK" ] ||
	skip "no patched e2fsprogs in the guest for the last part (e2fsprogs/check.sh builds them)"
k=$MNT/k
: >"$k"
expect "forcealign with a hint" "$(kt setx "$k" 0x100800 65536)" ok
umount "$MNT"
kb=$(acl_block /k)
[[ -n $kb && $kb != 0 ]] || die "the hint of /k is not in an xattr block"
smash "$kb"
sync
"$SERIES_E2FSCK" -fy "$UBD" >"$SCRATCH/fsck.out" 2>&1
cat "$SCRATCH/fsck.out"
grep -q "has the extent size hint flag but no readable hint" "$SCRATCH/fsck.out" ||
	die "the series' e2fsck did not report the lost hint"
mount -t ext4 "$UBD" "$MNT" || die "mount"
expect "the series' e2fsck: /k has no hint" "$(kt getx "$k")" "xflags=0x0 extsize=0"
xfs_io -c "pwrite -q -S 0xa5 0 4k" -c fsync "$k" || die "write after the series' e2fsck"
n=$(dmesg | grep -c 'extent size hint')
expect "kernel messages about the hint of /k" "$n" 0
ok "the series' e2fsck leaves a plain, writable file where the hint was lost"
umount "$MNT"
exit 0
