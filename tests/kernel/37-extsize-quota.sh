#!/bin/bash
# Issue 34.6: the widened allocation of a hint is all or nothing.  mballoc
# cuts an ordinary request short to what the quota (or the free space)
# still allows; a widened hint unit cut short that way would use up the
# blocks the write itself needed, and the write would fail with EDQUOT
# although the user had room for it.
. "$(dirname "$0")/lib.sh"

UNIT=65536
USER_ID=4243

fresh_ext4 "$UBD" -b 4096 -O quota
umount "$MNT"
mount -t ext4 -o usrquota "$UBD" "$MNT" || skip "no quota support"
f=$MNT/f
: >"$f"
expect "hint" "$(kt setx "$f" 0x800 $UNIT)" ok
chown $USER_ID "$f"
# Room for 8 blocks, half a unit.
setquota -u $USER_ID 32 32 0 0 "$MNT" || die "setquota"
out=$(setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups \
	xfs_io -d -c "pwrite -q -S 0xa5 40k 4k" -c fsync "$f" 2>&1) ||
	die "a 4k write at block 10 with room for 8 blocks: $out"
[ -z "$out" ] || die "a 4k write at block 10 with room for 8 blocks: $out"
ok "a 4k write at block 10 with room for 8 blocks"
filled "$f" $((40 * 1024)) 4096 || die "the write does not read back"
# Nothing but the write's own block was charged.
expect "blocks of the file" "$(stat -c %b "$f")" 8
# With room for a whole unit, the hint gets it.
g=$MNT/g
: >"$g"
expect "hint" "$(kt setx "$g" 0x800 $UNIT)" ok
chown $USER_ID "$g"
setquota -u $USER_ID 1024 1024 0 0 "$MNT" || die "setquota"
setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups \
	xfs_io -d -c "pwrite -q -S 0xa5 40k 4k" -c fsync "$g" || die "write g"
units_aligned "$g" $UNIT || die "g is not in a whole aligned unit"
umount "$MNT"
exit 0
