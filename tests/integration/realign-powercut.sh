#!/bin/bash
# Issue 17: power cuts during realignment lose nothing, on XFS (the loop is
# in realign-powercut.bash; tests/kernel/83-realign-powercut.sh runs it on
# the patched ext4).  REALIGN_CUTS (default 200) sets the number of cut
# points.
. "$(dirname "$0")/lib.sh"
need_cmd xfs_io
need_cmd python3
. "$TOP/tests/integration/realign-powercut.bash"
CUT=${CUT:-$TOP/build/tests/tools/realign-cut}
[ -x "$CUT" ] || fail "$CUT not built"
mnt=$(mkfs_mount xfs 300)
loop=$(findmnt -no SOURCE "$mnt")
img=$(losetup -nO BACK-FILE "$loop")
token=$RANDOM$RANDOM
echo "$token" >"$mnt/.token"
sync

pc_hint() { xfs_io -c 'extsize 64k' "$1"; }

# The machine is shared: between unmount and mount, an unmounted loop
# device may be detached by somebody's "losetup -D" and reused, so check it
# still holds our image (else attach it anew), and that what got mounted
# is our filesystem.
pc_remount() {
	umount "$mnt"
	if [ "$(losetup -nO BACK-FILE "$loop" 2>/dev/null)" != "$img" ]; then
		loop=$(losetup -f --show "$img")
		echo "$loop" >>"$WORK/.loops"
	fi
	mount "$loop" "$mnt"
	[ "$(cat "$mnt/.token" 2>/dev/null)" = "$token" ] || fail "$loop: not our filesystem after mount"
}

pc_make_set
pc_run "${REALIGN_CUTS:-200}"
echo ok
