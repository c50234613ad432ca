#!/bin/bash
# On an ext4 whose kernel keeps no extent size hint, set must say so and fail.
. "$(dirname "$0")/lib.sh"
use_valgrind
mnt=$(mkfs_mount ext4 128 -b 4096)
touch "$mnt/f"
mkdir "$mnt/d"

rc=0; "$EXTALIGN" set --extsize 64k "$mnt/f" >"$WORK/out" 2>"$WORK/err" || rc=$?
if [ "$rc" = 0 ]; then
	# A patched kernel: the hint must really be there.
	[ "$(xfs_io -c stat "$mnt/f" | awk '/fsxattr.extsize/ {print $3}')" = 65536 ] ||
		fail "set claimed success but the kernel has no hint"
	echo "ok (kernel keeps ext4 extent size hints)"
	exit 0
fi
[ "$rc" = 4 ] || fail "exit $rc, expected 4 (unsupported)"
expect_in err "this kernel's ext4 does not support extent size hints"

expect_exit 4 "$EXTALIGN" set --extsize 64k "$mnt/d"
expect_in err "this kernel's ext4 does not support extent size hint inheritance"

expect_exit 4 "$EXTALIGN" set --extsize 64k --force "$mnt/f"
expect_in err "does not support"

# -R stops at the first unsupported answer instead of repeating it per file.
mkdir -p "$mnt/t/a"; touch "$mnt/t/a/1" "$mnt/t/a/2"
expect_exit 4 "$EXTALIGN" set -R --extsize 64k "$mnt/t"
[ "$(grep -c 'does not support' "$WORK/err")" = 1 ] || fail "unsupported reported more than once"

# get and check still work: no hint, FIEMAP is there.
expect_exit 0 "$EXTALIGN" get "$mnt/f"
expect_in out ext4
xfs_io -f -c 'pwrite -q 0 128k' -c fsync "$mnt/w"
rc=0; "$EXTALIGN" check --extsize 4k "$mnt/w" >"$WORK/out" || rc=$?
[ "$rc" = 0 ] || fail "4k-aligned check of a 4k-block ext4 file failed"
echo ok
