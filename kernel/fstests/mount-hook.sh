#!/bin/bash
# fstests' MOUNT_PROG when kernel/fstests.sh runs with --forcealign: mount,
# and when the scratch filesystem went up read-write, give its root an
# inherited extent size hint with forcealign (FS_XFLAG_EXTSZINHERIT |
# FS_XFLAG_FORCEALIGN), so that every file a test creates there is a
# forcealign file.  Each application is logged to HOOK_LOG, so that a run
# shows the hook worked.
"$HOOK_MOUNT" "$@" || exit

target=
remount=0
ro=0
prev=
for a in "$@"; do
	case $prev in -o) [[ ,$a, == *,remount,* ]] && remount=1
			  [[ ,$a, == *,ro,* ]] && ro=1 ;;
	esac
	[ "$a" = "$HOOK_SCRATCH_MNT" ] && target=$a
	prev=$a
done
if [ -z "$target" ] || [ $remount = 1 ] || [ $ro = 1 ] ||
   [ "$(findmnt -n -o FSTYPE --target "$target")" != ext4 ]; then
	exit 0
fi
EXTSZINHERIT=0x1000 FORCEALIGN=0x100000
if "$HOOK_KTOOL" setx "$target" $((EXTSZINHERIT | FORCEALIGN)) "$HOOK_EXTSIZE" \
	>>"$HOOK_LOG" 2>&1; then
	echo "hook: $target $("$HOOK_KTOOL" getx "$target")" >>"$HOOK_LOG"
else
	echo "hook: setting the hint on $target failed" >>"$HOOK_LOG"
fi
exit 0
