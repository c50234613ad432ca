#!/bin/bash
# fstests' MOUNT_PROG when kernel/fstests.sh runs with --forcealign: mount,
# and when the scratch filesystem (or with --forcealign-test, HOOK_TEST_MNT
# set, the test filesystem) went up read-write, give its
# root an inherited extent size hint with forcealign (FS_XFLAG_EXTSZINHERIT
# | FS_XFLAG_FORCEALIGN), so that every file a test creates there is a
# forcealign file.  Each application is logged to HOOK_LOG with the test
# that mounted (fstests' check exports seqnum), one line each,
#   hook: generic/765 marked /run/fstests/scratch xflags=0x101000 ...
#   hook: generic/765 failed /run/fstests/scratch: err EINVAL
#   hook: generic/001 test-kept /run/fstests/test xflags=0x101000 ...
#   hook: generic/001 test-lost /run/fstests/test xflags=0x0 ...
# so that kernel/fstests.sh can tell which tests really ran forcealign.
# The test filesystem is made once and kept: ./check unmounts and mounts
# it again after each test to check it, so its root's flags at that mount
# (test-kept, or test-lost when the test took them away) tell whether the
# test ran under the mark; the hook marks it again either way.
"$HOOK_MOUNT" "$@" || exit

target=
remount=0
ro=0
prev=
for a in "$@"; do
	case $prev in -o) [[ ,$a, == *,remount,* ]] && remount=1
			  [[ ,$a, == *,ro,* ]] && ro=1 ;;
	esac
	[ "$a" != "$HOOK_SCRATCH_MNT" ] || target=$a
	[ -z "${HOOK_TEST_MNT:-}" ] || [ "$a" != "$HOOK_TEST_MNT" ] || target=$a
	prev=$a
done
if [ -z "$target" ] || [ $remount = 1 ] || [ $ro = 1 ] ||
   [ "$(findmnt -n -o FSTYPE --target "$target")" != ext4 ]; then
	exit 0
fi
EXTSZINHERIT=0x1000 FORCEALIGN=0x100000
test=${seqnum:-unknown}
if [ "$target" = "${HOOK_TEST_MNT:-}" ]; then
	before=$("$HOOK_KTOOL" getx "$target" 2>&1)
	if [[ $before == *"xflags=0x101000 extsize=$HOOK_EXTSIZE" ]]; then
		echo "hook: $test test-kept $target $before" >>"$HOOK_LOG"
		exit 0
	fi
	# ./check's first mount, before any test, finds it unmarked.
	[ "$test" = unknown ] || echo "hook: $test test-lost $target $before" >>"$HOOK_LOG"
fi
if out=$("$HOOK_KTOOL" setx "$target" $((EXTSZINHERIT | FORCEALIGN)) "$HOOK_EXTSIZE" 2>&1); then
	echo "hook: $test marked $target $("$HOOK_KTOOL" getx "$target" 2>&1)" >>"$HOOK_LOG"
else
	echo "hook: $test failed $target: $(echo "$out" | tr '\n' ' ')" >>"$HOOK_LOG"
fi
exit 0
