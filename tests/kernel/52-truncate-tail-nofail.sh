#!/bin/bash
# Issues 22.2 and 34.2: truncate into a written forcealign unit turns the
# unit's blocks past the new EOF unwritten.  That can need a new extent
# tree block.  A user at quota gets it over the limit (a truncate must
# not fail at quota), and the unit stays whole.  On a full filesystem
# with the reserved pool used up there is none: the truncate must still
# succeed, and the unit's blocks past EOF are freed (the unit is broken,
# with a warning).  Either way e2fsck right after the truncate is clean:
# written blocks left past EOF would look to it like a wrong i_size,
# which "-y" fixes by growing the file with zeros.  And what was written
# past the new EOF reads as zeros when the file grows again.
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

# check FILE DEV WHOLE [MOUNT OPTIONS]: truncate to 200k worked, e2fsck
# is clean right after it, nothing of the old data past it; the unit of
# EOF is whole if WHOLE is "whole", broken (its tail freed) if "broken".
check() {
	expect "size after the truncate" "$(stat -c %s "$1")" $((200 * K))
	umount "$MNT"
	e2fsck -fn "$2" >"$SCRATCH/fsck.log" 2>&1 || {
		cat "$SCRATCH/fsck.log"
		die "e2fsck right after the truncate"
	}
	ok "e2fsck right after the truncate: clean"
	mount -t ext4 ${4:+-o "$4"} "$2" "$MNT" || die "mount $2"
	expect "size after e2fsck" "$(stat -c %s "$1")" $((200 * K))
	truncate -s $((4 * UNIT)) "$1" || die "truncate up"
	n=$(dd if="$1" bs=4k skip=50 count=14 status=none | tr -d '\000' | wc -c)
	expect "old data past the old EOF" "$n" 0
	filled "$1" $((3 * UNIT)) $((8 * K)) || die "data below the EOF lost"
	if [ "$3" = whole ]; then
		units_aligned "$1" $UNIT || die "not in aligned units"
		ok "the unit of EOF is whole"
	else
		units_aligned "$1" $UNIT >/dev/null && die "the unit of EOF is whole, its tail was not freed"
		ok "the unit of EOF is broken, its tail freed"
	fi
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
dmesg | grep -q "forcealign: no space to keep the unit of EOF whole" ||
	die "no warning about the broken unit"
allow_klog "forcealign: no space to keep the unit of EOF whole"
# Its own extent now ends at EOF: the alignment checker after the test
# would report it (on purpose), so it goes once checked.
check "$f" "$UBD" broken
rm -rf "$MNT/fill" "$MNT/fill2" "$f"
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
check "$f" "$UBD" whole usrquota
umount "$MNT"
exit 0
