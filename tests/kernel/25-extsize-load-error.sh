#!/bin/bash
# Issue 22.5: an extent size hint that cannot be read when the inode is
# loaded must not silently turn the hint, and forcealign with it, off: the
# load fails.  And inodes without a hint do not look for one: a plain file
# whose xattr block is unreadable loads without touching it.
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

restore() {
	dd if="$SCRATCH/block.$1" of="$UBD" bs=4096 seek="$1" conv=notrunc status=none
}

fresh_ext4 "$UBD" -b 4096 -I 128
f=$MNT/f g=$MNT/g
: >"$f"
expect "forcealign with a hint" "$(kt setx "$f" 0x100800 65536)" ok
: >"$g"
setfattr -n user.note -v plain "$g" || die "setfattr"
umount "$MNT"
fb=$(acl_block /f) gb=$(acl_block /g)
[[ -n $fb && $fb != 0 ]] || die "the hint of /f is not in an xattr block"
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

out=$(kt getx "$f")
case $out in
"err "*) ok "loading the file whose hint cannot be read fails: $out" ;;
*) die "the file loaded without its hint: $out" ;;
esac
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
exit 0
