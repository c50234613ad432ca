#!/bin/bash
# Issue 22.2: truncate into a written forcealign unit turns the unit's
# blocks past the new EOF unwritten.  That can need a new extent tree block;
# without one (a full filesystem, a user at quota) the truncate must still
# succeed, and what was written past the new EOF must read as zeros when
# the file grows again.
#
# The file holds four extents, as many as the inode does (units 0 and 2
# unwritten, 1 and 3 written), so that splitting unit 3 at the new EOF
# needs a leaf block.
. "$(dirname "$0")/lib.sh"

K=1024
UNIT=$((64 * K))
USER_ID=4242

# layout FILE: the four-extent forcealign file, 256 KiB.
layout() {
	: >"$1"
	[ "$(kt setx "$1" 0x100800 $UNIT)" = ok ] || die "forcealign on $1"
	xfs_io -d -c "pwrite -q -S 0xa5 $UNIT $UNIT" \
		-c "pwrite -q -S 0xa5 $((3 * UNIT)) $UNIT" \
		-c "falloc 0 $UNIT" -c "falloc $((2 * UNIT)) $UNIT" -c fsync "$1" ||
		die "layout of $1"
	sync
	local n
	n=$(debugfs -R "dump_extents <$(stat -c %i "$1")>" "$2" 2>/dev/null |
		awk '$1 ~ /^0\/ *0$/ || $1 == "0/" { n++ } END { print n + 0 }')
	expect "$1: extents in the inode" "$n" 4
}

# check FILE: truncate to 200k worked, nothing of the old data past it.
check() {
	expect "size after the truncate" "$(stat -c %s "$1")" $((200 * K))
	truncate -s $((4 * UNIT)) "$1" || die "truncate up"
	n=$(dd if="$1" bs=4k skip=50 count=14 status=none | tr -d '\000' | wc -c)
	expect "old data past the old EOF" "$n" 0
	filled "$1" $((3 * UNIT)) $((8 * K)) || die "data below the EOF lost"
	units_aligned "$1" $UNIT || die "not in aligned units"
}

# A full filesystem, the reserved pool for metadata (reserved_clusters)
# used up too.  The pool stays while delayed allocation writes the filler
# back (its metadata needs it); then it goes, and fallocate takes the
# blocks it held, one per file (each extent fits in its inode).
FS_SIZE=64M fresh_ext4 "$UBD" -b 4096
dev=${UBD#/dev/}
f=$MNT/f
layout "$f" "$UBD"
mkdir "$MNT/fill2" || die "mkdir"
dd if=/dev/zero of="$MNT/fill" bs=64k status=none 2>/dev/null
sync
echo 0 >"/sys/fs/ext4/$dev/reserved_clusters" || die "reserved_clusters"
for ((i = 0; i < 8192; i++)); do
	fallocate -l 4096 "$MNT/fill2/$i" 2>/dev/null || break
done
sync
expect "free blocks" "$(stat -f -c %f "$MNT")" 0
out=$(truncate -s $((200 * K)) "$f" 2>&1) || die "truncate on a full filesystem: $out"
ok "truncate into a written unit on a full filesystem"
check "$f"
rm -rf "$MNT/fill" "$MNT/fill2"
umount "$MNT"

# A user at the hard limit of the quota.
fresh_ext4 "$UBD" -b 4096 -O quota
umount "$MNT"
mount -t ext4 -o usrquota "$UBD" "$MNT" || skip "no quota support"
f=$MNT/q
layout "$f" "$UBD"
chown $USER_ID "$f"
used=$(($(stat -c %b "$f") / 2))
setquota -u $USER_ID "$used" "$used" 0 0 "$MNT" || die "setquota"
quota -u $USER_ID -v 2>/dev/null | tail -n 1
out=$(setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups \
	truncate -s $((200 * K)) "$f" 2>&1) || die "truncate at quota: $out"
ok "truncate into a written unit at quota"
check "$f"
umount "$MNT"
exit 0
