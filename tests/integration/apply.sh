#!/bin/bash
# extalign apply on real XFS and ext4 trees: directories inherit, empty files
# get their rule's hint, files with data are listed and untouched, symlinks
# are not followed, nothing outside a rule changes, a second run is a no-op.
. "$(dirname "$0")/lib.sh"
use_valgrind
need_cmd xfs_io
mnt=$(mkfs_mount xfs 300)

mkdir -p "$mnt/db/a/b" "$mnt/db/logs" "$mnt/other"
touch "$mnt/db/t1.ibd" "$mnt/db/a/b/t2.ibd" "$mnt/db/logs/l1" "$mnt/other/o1" "$mnt/outside"
echo data >"$mnt/db/a/full.ibd"
ln -s "$mnt/outside" "$mnt/db/a/link"
cat >"$WORK/conf" <<EOF2
[rule db]
directory = $mnt/db
extsize = 64k

[rule logs]
directory = $mnt/db/logs
extsize = none
EOF2

# Dry run: says what it would do, changes nothing.
expect_exit 0 "$EXTALIGN" apply --dry-run --verbose --config "$WORK/conf"
expect_in out "$mnt/db/t1.ibd: would be hinted (rule 'db')"
[ "$(xfs_extsize "$mnt/db/t1.ibd")" = 0 ] || fail "--dry-run changed a file"
has_xflag "$mnt/db" 0x1000 && fail "--dry-run changed a directory"

expect_exit 0 "$EXTALIGN" apply --verbose --config "$WORK/conf"
expect_in out "$mnt/db/a/full.ibd: has data, left alone (realignment candidate, rule 'db')"
expect_in out "1 file with data is under rules without 'realign = yes'"
for f in db/t1.ibd db/a/b/t2.ibd; do
	[ "$(xfs_extsize "$mnt/$f")" = 65536 ] || fail "$f not hinted"
done
for d in db db/a db/a/b; do
	has_xflag "$mnt/$d" 0x1000 || fail "$d does not inherit"
done
# extsize = none: the logs tree carries no hint, its directory no inheritance.
[ "$(xfs_extsize "$mnt/db/logs/l1")" = 0 ] || fail "excepted tree got a hint"
has_xflag "$mnt/db/logs" 0x1000 && fail "excepted directory inherits"
# Outside every rule, through a symlink or not: untouched.
[ "$(xfs_extsize "$mnt/other/o1")" = 0 ] || fail "file outside the rules hinted"
[ "$(xfs_extsize "$mnt/outside")" = 0 ] || fail "followed a symlink out of the tree"
[ "$(xfs_extsize "$mnt/db/a/full.ibd")" = 0 ] || fail "file with data touched"

# Idempotent: the second run only finds things in line.
expect_exit 0 "$EXTALIGN" apply --config "$WORK/conf"
expect_in out "0 directories set to inherit, 0 empty files hinted, 0 hints cleared"

# A hint that the rule says must not be there goes (on an empty file).
xfs_io -c 'extsize 16k' "$mnt/db/logs/l1"
expect_exit 0 "$EXTALIGN" apply --config "$WORK/conf" "$mnt/db/logs"
expect_in out "1 hints cleared"
[ "$(xfs_extsize "$mnt/db/logs/l1")" = 0 ] || fail "hint not cleared"

# A path under no rule: walked, nothing changed.
expect_exit 0 "$EXTALIGN" apply --config "$WORK/conf" "$mnt/other"
[ "$(xfs_extsize "$mnt/other/o1")" = 0 ] || fail "path under no rule changed"

# Bad configuration: every error with file:line, exit 3, nothing changed.
# The good rule in it would hint other/o1: it must not.
printf '[rule ok]\ndirectory = %s/other\nextsize = 64k\n\n[rule x]\ndirectory = relative\nextsize = 12k\n' \
	"$mnt" >"$WORK/bad"
expect_exit 3 "$EXTALIGN" apply --config "$WORK/bad"
expect_in err "$WORK/bad:6:"
expect_in err "$WORK/bad:7:"
[ "$(xfs_extsize "$mnt/other/o1")" = 0 ] || fail "bad config changed a file"
expect_exit 3 "$EXTALIGN" apply --config "$WORK/conf" "$mnt/db/a/link"
expect_in err "is a symbolic link (not followed)"

# ext4 on a kernel that keeps no hint: one clear message, exit 4.
mnt4=$(mkfs_mount ext4 128 -b 4096)
mkdir -p "$mnt4/db/x"
touch "$mnt4/db/x/f"
printf '[rule e]\ndirectory = %s/db\nextsize = 64k\n' "$mnt4" >"$WORK/conf4"
rc=0; "$EXTALIGN" apply --config "$WORK/conf4" >"$WORK/out" 2>"$WORK/err" || rc=$?
if [ "$rc" = 4 ]; then
	expect_in err "this kernel's ext4 does not support"
	[ "$(grep -c 'does not support' "$WORK/err")" = 1 ] || fail "unsupported said more than once"
elif [ "$rc" != 0 ]; then
	cat "$WORK/err"; fail "ext4 apply exit $rc"
fi
echo ok
