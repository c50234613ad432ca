#!/bin/bash
# Usage errors and paths extalign must refuse, each with a clear message.
. "$(dirname "$0")/lib.sh"
use_valgrind

expect_exit 0 "$EXTALIGN" --help
expect_in out "Commands:"
expect_exit 0 "$EXTALIGN" --version
expect_in out "extalign "
for c in set get clear check; do
	expect_exit 0 "$EXTALIGN" "$c" --help
	expect_in out "Usage: extalign $c"
done
expect_exit 2 "$EXTALIGN"
expect_exit 2 "$EXTALIGN" frobnicate
expect_in err "unknown command 'frobnicate'"
expect_exit 2 "$EXTALIGN" set --bogus x

f=$WORK/file
touch "$f"
expect_exit 2 "$EXTALIGN" set "$f"
expect_in err "nothing to set"
expect_exit 2 "$EXTALIGN" set --extsize 64k
expect_in err "no path given"
expect_exit 2 "$EXTALIGN" set --force "$f"
expect_in err "--force needs --extsize"
expect_exit 2 "$EXTALIGN" set --extsize 64k --force --no-force "$f"
for bad in 12k -1 0 8g 1.5k 0x1000 16kb "" " 16k"; do
	expect_exit 2 "$EXTALIGN" set --extsize "$bad" "$f"
	expect_in err "--extsize '$bad'"
done
expect_exit 3 "$EXTALIGN" set --extsize 64k "$WORK/missing"
expect_in err "$WORK/missing: No such file or directory"
ln -s "$f" "$WORK/link"
expect_exit 3 "$EXTALIGN" set --extsize 64k "$WORK/link"
expect_in err "is a symbolic link (not followed)"
expect_exit 3 "$EXTALIGN" get /dev/null
expect_in err "not a regular file or directory"
expect_exit 3 "$EXTALIGN" check "$WORK"
expect_in err "is a directory"

# tmpfs has no extent size hints: refused before any change.
need_root
mkdir "$WORK/tmpfs"
mount -t tmpfs none "$WORK/tmpfs"
track_mount "$WORK/tmpfs"
touch "$WORK/tmpfs/f"
expect_exit 4 "$EXTALIGN" set --extsize 64k "$WORK/tmpfs/f"
expect_in err "tmpfs does not support extent size hints"
# get still reports what the kernel answers (tmpfs has FS_IOC_FSGETXATTR
# since 6.x): no hint.
expect_exit 0 "$EXTALIGN" get --json "$WORK/tmpfs/f"
expect_in out '"fstype": "tmpfs"'
expect_in out '"extsize": null'

# Permission denied: an unprivileged user on root's file.
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	mnt=$(mkfs_mount xfs 300)
	chmod 755 "$WORK" "$mnt"
	touch "$mnt/rootfile"
	chmod 644 "$mnt/rootfile"
	expect_exit 3 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$EXTALIGN" set --extsize 64k "$mnt/rootfile"
	expect_in err "not permitted"
	[ "$(xfs_extsize "$mnt/rootfile")" = 0 ] || fail "unprivileged set changed the file"
fi
echo ok
