#!/bin/bash
# File names with any bytes.  A message on stderr stays one line and shows
# a byte that is not printable ASCII as \xHH, as the tables do.  Every
# --json output is valid UTF-8 JSON whatever the file names are: a
# byte of a name that is not UTF-8 comes out as \udcNN (Python's
# surrogateescape), so that json.loads() and
# name.encode("utf-8", "surrogateescape") give back the name's bytes.
# Names with UTF-8, control characters, quotes and a literal "\udcff" keep
# their own form.  On XFS, which keeps hints, so that check and realign
# see real extents.
. "$(dirname "$0")/lib.sh"
use_valgrind
need_cmd xfs_io
mnt=$(mkfs_mount xfs 300)
d=$mnt/$'dir\xfe'
mkdir "$d"
names=($'bad\xffbyte' $'cut\xe2\x82' 'été' $'new\nline' 'quote"back\slash' 'lit\udcff' $'ctl\x01')
for n in "${names[@]}"; do
	xfs_io -f -c "pwrite -q 0 64k" "$d/$n" || fail "cannot write $n"
done
touch "$d/empty"$'\x80'

# json_ok FILE KEY: FILE is strict UTF-8 JSON, and every string under a
# KEY key names a path that exists once its \udcNN escapes are bytes again.
json_ok() {
	python3 - "$WORK/$1" "$2" <<'PY' || { cat -v "$WORK/$1" >&2; fail "$1: not UTF-8 JSON with the names"; }
import json, os, sys
raw = open(sys.argv[1], "rb").read()
doc = json.loads(raw.decode("utf-8"))  # strict: any byte that is not UTF-8 fails
seen = 0
def walk(v):
    global seen
    if isinstance(v, dict):
        for k, x in v.items():
            if k == sys.argv[2] and isinstance(x, str) and x.startswith("/"):
                name = x.encode("utf-8", "surrogateescape")
                assert os.path.lexists(name), name
                seen += 1
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(doc)
assert seen > 0, "no path found"
print(seen, "paths")
PY
}

expect_exit 0 "$EXTALIGN" get --json "$d"/*
json_ok out path
expect_in out 'lit\\udcff"'
expect_in out 'bad\udcffbyte'
expect_in out 'cut\udce2\udc82'
expect_in out 'été'
expect_exit 0 "$EXTALIGN" get --json -R "$mnt"
json_ok out path
rc=0
"$EXTALIGN" check --json -R --extsize 16k "$d" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" -le 1 ] || { cat "$WORK/err"; fail "check --json exited $rc"; }
json_ok out path
expect_exit 0 "$EXTALIGN" realign --json --dry-run --extsize 16k "$d"
json_ok out path
expect_exit 0 "$EXTALIGN" devices --json "$d/${names[0]}"
json_ok out name
cat >"$WORK/conf" <<CONF
[rule db]
directory = $d
extsize = 16k
CONF
expect_exit 0 "$EXTALIGN" policy explain --json --config "$WORK/conf" "$d/été"
json_ok out path
expect_exit 0 "$EXTALIGN" policy show --json --config "$WORK/conf"
json_ok out target
# check without a unit: a no-hint row per file, each on one line.
expect_exit 0 "$EXTALIGN" check -R "$d"
files=$(find "$d" -type f -printf x | wc -c)
[ "$(grep -c '^/.* no-hint$' "$WORK/out")" = "$files" ] || { cat -A "$WORK/out"; fail "a name split a row"; }
expect_in out 'dir\xfe/new\x0aline '
# A message per path (each names a file as a directory), each on one line.
mapfile -d '' -t under < <(find "$d" -type f -printf '%p/x\0')
expect_exit 3 "$EXTALIGN" check "${under[@]}"
[ "$(wc -l <"$WORK/err")" = "$files" ] || { cat -A "$WORK/err"; fail "a name split a message"; }
expect_in err 'new\x0aline/x: Not a directory'
expect_in err 'dir\xfe/bad\xffbyte/x: Not a directory'
expect_in err '/ctl\x01/x: Not a directory'
expect_in err 'lit\udcff/x: Not a directory'
expect_in err '/\xc3\xa9t\xc3\xa9/x: Not a directory'
# target_open()'s refusal of a symlink names it on one line too.
link=$d/$'link\nx'
ln -s nowhere "$link"
expect_exit 3 "$EXTALIGN" get "$link"
[ "$(wc -l <"$WORK/err")" = 1 ] || { cat -A "$WORK/err"; fail "the symlink's name split the message"; }
expect_in err 'link\x0ax: is a symbolic link'
echo ok
