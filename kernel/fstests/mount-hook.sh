#!/bin/bash
# fstests' MOUNT_PROG when kernel/fstests.sh runs with --forcealign: mount,
# and when the scratch filesystem went up read-write, give its root an
# inherited extent size hint with forcealign (FS_XFLAG_EXTSZINHERIT |
# FS_XFLAG_FORCEALIGN), so that every file a test creates there is a
# forcealign file.  Each application is logged to HOOK_LOG with the test
# that mounted (fstests' check exports seqnum), one line each,
#   hook: generic/765 marked /run/fstests/scratch xflags=0x101000 ...
#   hook: generic/765 failed /run/fstests/scratch: err EINVAL
# so that kernel/fstests.sh can tell which tests really ran forcealign.
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
test=${seqnum:-unknown}
if out=$("$HOOK_KTOOL" setx "$target" $((EXTSZINHERIT | FORCEALIGN)) "$HOOK_EXTSIZE" 2>&1); then
	echo "hook: $test marked $target $("$HOOK_KTOOL" getx "$target" 2>&1)" >>"$HOOK_LOG"
else
	echo "hook: $test failed $target: $(echo "$out" | tr '\n' ' ')" >>"$HOOK_LOG"
fi
exit 0
