#!/bin/bash
# extalign policy explain reads the project id from real files on XFS: a
# file in a PROJINHERIT directory, and a file not created yet whose directory
# would give it the project.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd xfs_io
need_cmd mkfs.xfs
mnt=$(mkfs_mount xfs 300)
use_valgrind

mkdir "$mnt/proj" "$mnt/plain"
xfs_io -c 'chproj 42' -c 'chattr +P' "$mnt/proj"
touch "$mnt/proj/f" "$mnt/plain/g"
[ "$(xfs_io -c 'lsproj' "$mnt/proj/f" | awk '{ print $NF }')" = 42 ] || fail "PROJINHERIT gave no project id"

printf 'db:42\n' >"$WORK/projid"
printf '42:%s/proj\n' "$mnt" >"$WORK/projects"
cat >"$WORK/x.conf" <<CONF
[rule fs]
directory = $mnt
extsize = 16k
[rule db]
project = db
filesystem = $mnt
extsize = 64k
CONF
O=(-c "$WORK/x.conf" --projid "$WORK/projid" --projects "$WORK/projects")

expect_exit 0 "$EXTALIGN" policy explain "${O[@]}" "$mnt/proj/f"
expect_in out "$mnt/proj/f: rule 'db'"
expect_in out "a project rule comes before directory rules"
# Not there yet: the directory's PROJINHERIT decides.
expect_exit 0 "$EXTALIGN" policy explain "${O[@]}" "$mnt/proj/new.ibd"
expect_in out "$mnt/proj/new.ibd: rule 'db'"
expect_exit 0 "$EXTALIGN" policy explain "${O[@]}" "$mnt/plain/g" "$mnt/plain/new"
expect_in out "$mnt/plain/g: rule 'fs'"
expect_in out "$mnt/plain/new: rule 'fs'"
expect_in out "the path has no project id"
expect_exit 0 "$EXTALIGN" policy explain "${O[@]}" --json "$mnt/proj/f"
jq -e '.verdicts[0].projid == 42 and .verdicts[0].rule == "db"' "$WORK/out" >/dev/null ||
	fail "explain --json: projid not read from the file"
# --project overrides what the file says.
expect_exit 0 "$EXTALIGN" policy explain "${O[@]}" -p 7 "$mnt/proj/f"
expect_in out "rule 'fs'"
expect_in out "project id 7, the rule is for db (42)"
echo "policy-xfs: all checks passed"
