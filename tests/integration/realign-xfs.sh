#!/bin/bash
# extalign realign on a real XFS: content, metadata, holes and hints after a
# rewrite, and every skip reason, each checked against an outside tool
# (sha256sum, stat, getfattr, getfacl, xfs_io, extalign check).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realign.bash"
need_cmd getfattr
need_cmd getfacl
use_valgrind
mnt=$(mkfs_mount xfs 300)
# Reads must not move atime, so fingerprints compare what realign did.
mount -o remount,noatime "$mnt"

# fingerprint FILE: content and every piece of metadata realign must keep.
fingerprint() {
	local f=$1
	stat -c '%s %u %g %a %X %Y' "$f"
	sha256sum <"$f"
	(cd "$(dirname "$f")" && getfattr -h -d -m - -e hex "$(basename "$f")" 2>/dev/null |
		grep -v '^# file' || true)
	getfacl -cp "$f" 2>/dev/null
	xfs_io -c lsproj "$f"
	# Inode flags but the hint's (0x800), "has an attr fork" (0x80000000)
	# and "preallocated" (0x2): realign allocates the copy's units with
	# fallocate, and XFS marks such a file; with an extent size hint it
	# changes nothing (XFS makes no speculative preallocation then).
	printf 'xflags %#x\n' $(($(xfs_io -c stat "$f" | awk '/fsxattr.xflags/ { print $3 }') & ~0x80000802))
}

# data_ranges FILE: SEEK_DATA/SEEK_HOLE map, to show holes survive.
data_ranges() {
	python3 - "$1" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
pos, out = 0, []
while pos < size:
    try:
        d = os.lseek(fd, pos, os.SEEK_DATA)
    except OSError:
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    out.append("%d-%d" % (d, h))
    pos = h
print(" ".join(out))
PY
}

# A tree written before any hint existed: misaligned for good without us.
t=$mnt/tree
mkdir -p "$t/sub"
printf 'tiny' >"$t/tiny"
dd if=/dev/urandom of="$t/large" bs=1k count=10000 status=none
dd if=/dev/urandom of="$t/sparse" bs=1M count=2 status=none
dd if=/dev/urandom of="$t/sparse" bs=1M count=1 seek=9 conv=notrunc status=none
truncate -s 20M "$t/sparse"
dd if=/dev/urandom of="$t/sub/meta" bs=1k count=300 status=none
setfattr -n user.colour -v blue "$t/sub/meta"
setfattr -n trusted.secret -v 42 "$t/sub/meta"
setfacl -m u:nobody:r,g:daemon:rw "$t/sub/meta"
chown 1234:5678 "$t/sub/meta"
chmod 2750 "$t/sub/meta"
xfs_io -c 'chproj 77' -c 'chattr +d' "$t/sub/meta"
touch -d '2019-05-06 07:08:09.123456789' "$t/sub/meta"
touch -a -d '2018-01-02 03:04:05' "$t/sub/meta"
# A default ACL on the directory: the temporary copy inherits it, the
# original does not have it, and realign must not add it.
setfacl -d -m u:nobody:rwx "$t/sub"
sync

declare -A before
for f in tiny large sparse sub/meta; do
	before[$f]=$(fingerprint "$t/$f")
	[ "$(xfs_extsize "$t/$f")" = 0 ] || fail "$f has a hint before realign"
done
ranges_before=$(data_ranges "$t/sparse")
du_before=$(du -k "$t/sparse" | cut -f1)
[ "$du_before" -lt 8000 ] || fail "sparse file is not sparse to begin with"

# Dry run: says what it would do, changes nothing.
expect_exit 0 "${R[@]}" --extsize 64k --dry-run "$t"
expect_in out "would realign 4 of 4 files"
# Text is text: nothing of the JSON document leaks into it.
! grep -qF '"dry_run"' "$WORK/out" || { cat "$WORK/out"; fail "JSON in realign's text output"; }
for f in tiny large sparse sub/meta; do
	[ "$(fingerprint "$t/$f")" = "${before[$f]}" ] || fail "dry run changed $f"
	[ "$(xfs_extsize "$t/$f")" = 0 ] || fail "dry run set a hint on $f"
done

expect_exit 0 "${R[@]}" --extsize 64k --json "$t"
python3 - "$WORK/out" <<'PY' || fail "realign JSON"
import json, sys
d = json.load(open(sys.argv[1]))
files = {f["path"].rsplit("/tree/", 1)[1]: f for f in d["files"]}
assert set(files) == {"tiny", "large", "sparse", "sub/meta"}, files
for name, f in files.items():
    assert f["outcome"] == "done", f
    assert f["swap"] == "rename", f  # no hint before: only the copy carries it
    assert f["logical"] == "aligned", f
    assert f["inode_before"] != f["inode_after"], f
assert files["sparse"]["copied"] < 4 << 20, files["sparse"]  # holes not copied
assert d["summary"]["done"] == 4 and d["summary"]["swap_paths"] == {"rename": 4}, d
PY

for f in tiny large sparse sub/meta; do
	after=$(fingerprint "$t/$f")
	[ "$after" = "${before[$f]}" ] || {
		diff <(echo "${before[$f]}") <(echo "$after") >&2
		fail "$f changed content or metadata"
	}
	[ "$(xfs_extsize "$t/$f")" = 65536 ] || fail "$f does not carry the 64k hint"
done
getfacl -cp "$t/sub/meta" | grep -q default && fail "copy kept an inherited default ACL"
getfattr --absolute-names -n user.colour --only-values "$t/sub/meta" | grep -qx blue || fail "xattr lost"
[ "$(stat -c %y "$t/sub/meta")" = "2019-05-06 07:08:09.123456789 +0000" ] || fail "mtime"
# Every extent starts and ends on 64k in the file (the disk cannot promise it here).
expect_exit 1 "$EXTALIGN" check --json "$t/tiny" "$t/large" "$t/sparse" "$t/sub/meta"
python3 -c 'import json,sys
for f in json.load(open(sys.argv[1]))["files"]:
    assert f["misaligned_logical"] == 0 and f["unit"] == 65536, f' "$WORK/out" ||
	fail "extents not logically aligned after realign"
# Holes: same data map at 64k granularity, and no more blocks than needed.
ranges_after=$(data_ranges "$t/sparse")
[ "$ranges_after" = "$ranges_before" ] || fail "holes moved: '$ranges_before' -> '$ranges_after'"
du_after=$(du -k "$t/sparse" | cut -f1)
[ "$du_after" -le $((du_before + 128)) ] || fail "holes filled: ${du_before}k -> ${du_after}k"
[ -n "$(find "$t" "$t/sub" -maxdepth 1 -name '*extalign-realign*')" ] && fail "leftover after a clean run"

# Again: everything is aligned now, nothing is copied (how a job resumes).
expect_exit 0 "${R[@]}" --extsize 64k "$t"
expect_in out "realigned 0 of 4 files"
# Already aligned, or aligned in the file only where the device side was luck
# (no stripe unit here): skipped either way, never copied again.
expect_in out "skipped 4 ("

# Skips: each reason, the file untouched.
s=$mnt/skip
mkdir "$s"
for f in link open imm app nodefrag changed writer; do
	dd if=/dev/urandom of="$s/$f" bs=1M count=4 status=none
done
ln "$s/link" "$s/link2"
expect_exit 1 "${R[@]}" --extsize 64k "$s/link"
expect_in out "hard-linked"
[ "$(xfs_extsize "$s/link")" = 0 ] || fail "hard-linked file was rewritten"

exec 3<"$s/open"
expect_exit 1 "${R[@]}" --extsize 64k "$s/open"
expect_in out "open by another process"
# Which one: this shell, which holds fd 3 (issue 32.6).
expect_in out "pid $$ bash"
exec 3<&-
expect_exit 0 "${R[@]}" --extsize 64k "$s/open"

xfs_io -c 'chattr +i' "$s/imm"
xfs_io -c 'chattr +a' "$s/app"
xfs_io -c 'chattr +f' "$s/nodefrag"
expect_exit 1 "${R[@]}" --extsize 64k --json "$s/imm" "$s/app" "$s/nodefrag"
python3 -c 'import json,sys
r = [f["reason"] for f in json.load(open(sys.argv[1]))["files"]]
assert r == ["immutable", "append-only", "nodefrag"], r' "$WORK/out" || fail "flag skips"
xfs_io -r -c 'chattr -i' "$s/imm"
xfs_io -r -c 'chattr -a' "$s/app"

ln -s changed "$s/symlink"
mkfifo "$s/fifo"
expect_exit 0 "${R[@]}" --extsize 64k --json "$s/symlink" "$s/fifo"
python3 -c 'import json,sys
r = [f["reason"] for f in json.load(open(sys.argv[1]))["files"]]
assert r == ["symlink", "not-regular"], r' "$WORK/out" || fail "symlink/fifo skips"
[ -L "$s/symlink" ] || fail "symlink replaced"


# during_copy FILE CMD...: realign FILE slowly, run CMD while it copies;
# the exit code goes to $rc, output to $WORK/out.
during_copy() {
	local f=$1 pid
	shift
	rc=0
	"${R[@]}" --extsize 64k --bwlimit 1M "$f" >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	in_copy "$pid" "$(dirname "$f")"
	"$@"
	wait "$pid" || rc=$?
}

# Changed during the copy without being opened (chmod changes only ctime).
h=$(sha256sum <"$s/changed")
during_copy "$s/changed" chmod 600 "$s/changed"
[ "$rc" = 1 ] || fail "change during the copy: exit $rc"
expect_in out "changed during the copy"
[ "$(sha256sum <"$s/changed")" = "$h" ] || fail "changed file lost data"
[ "$(xfs_extsize "$s/changed")" = 0 ] || fail "changed file was replaced"

# A writer during the copy breaks the lease: the job lets go, the write
# lands (the writer's open waits for that), nothing is replaced.
append() { echo appended >>"$s/writer"; }
during_copy "$s/writer" append
[ "$rc" = 1 ] || fail "writer during the copy: exit $rc"
expect_in out "extended by another process during the copy"
[ "$(tail -c 9 "$s/writer")" = appended ] || fail "the writer's data is lost"
[ "$(stat -c %s "$s/writer")" = $((4 * 1048576 + 9)) ] || fail "writer's file has a wrong size"
[ "$(xfs_extsize "$s/writer")" = 0 ] || fail "written file was replaced"

# A reader too: it could hold stale data after a rename.
h=$(sha256sum <"$s/open")
readit() { cat "$s/open" >/dev/null; }
rm -f "$s/open"
dd if=/dev/urandom of="$s/open" bs=1M count=4 status=none
during_copy "$s/open" readit
[ "$rc" = 1 ] || fail "reader during the copy: exit $rc"
expect_in out "opened by another process during the copy"

# --max-time stops a long copy and leaves the file as it was.
h=$(sha256sum <"$s/link")
rm "$s/link2"
expect_exit 1 "${R[@]}" --extsize 64k --bwlimit 1M --max-time 1 "$s/link"
expect_in out "stopped"
[ "$(sha256sum <"$s/link")" = "$h" ] || fail "stopped file changed"
[ -n "$(find "$s" -maxdepth 1 -name '*extalign-realign*')" ] && fail "leftover after skips"

# A file that already has the hint and only needs new extents keeps its
# inode: the extents are swapped (XFS swapext; exchange-range needs mkfs
# -i exchange=1, which this xfsprogs cannot make).
touch "$mnt/hinted"
xfs_io -c 'extsize 64k' "$mnt/hinted"
dd if=/dev/urandom of="$mnt/hinted" bs=1M count=3 conv=notrunc status=none
sync
h=$(sha256sum <"$mnt/hinted")
ino=$(stat -c %i "$mnt/hinted")
expect_exit 0 "${R[@]}" --extsize 64k "$mnt/hinted"
expect_in out "skipped 1 ("
expect_exit 0 "${R[@]}" --extsize 64k --rewrite-aligned --json "$mnt/hinted"
python3 -c 'import json,sys
f = json.load(open(sys.argv[1]))["files"][0]
assert f["outcome"] == "done" and f["swap"] in ("swapext", "exchange-range"), f
assert f["inode_before"] == f["inode_after"], f' "$WORK/out" || fail "swap path"
[ "$(stat -c %i "$mnt/hinted")" = "$ino" ] || fail "swap changed the inode number"
[ "$(sha256sum <"$mnt/hinted")" = "$h" ] || fail "swap changed the content"
[ "$(xfs_extsize "$mnt/hinted")" = 65536 ] || fail "swap lost the hint"

# Hard links are kept by the swap path: both names still share the inode.
ln "$mnt/hinted" "$mnt/hinted-link"
expect_exit 0 "${R[@]}" --extsize 64k --rewrite-aligned "$mnt/hinted"
expect_in out "via swapext (same inode)"
[ "$(stat -c '%i %h' "$mnt/hinted-link")" = "$ino 2" ] || fail "swap split the hard links"
[ "$(sha256sum <"$mnt/hinted-link")" = "$h" ] || fail "swap changed the linked content"

# A file with no blocks gets the hint in place, nothing copied.
truncate -s 1G "$mnt/empty"
ino=$(stat -c %i "$mnt/empty")
expect_exit 0 "${R[@]}" --extsize 64k "$mnt/empty"
expect_in out "hint set in place"
[ "$(xfs_extsize "$mnt/empty")" = 65536 ] && [ "$(stat -c %i "$mnt/empty")" = "$ino" ] ||
	fail "empty file not hinted in place"

# --config: only files whose rule says "realign = yes" are rewritten, to
# that rule's size, within [daemon] realign_max_file_size.
c=$mnt/conf
mkdir -p "$c/db/sub" "$c/other"
for f in db/a db/sub/b other/c; do
	dd if=/dev/urandom of="$c/$f" bs=1M count=1 status=none
done
dd if=/dev/urandom of="$c/db/big" bs=1M count=3 status=none
cat >"$WORK/conf" <<CONF
[daemon]
realign_max_file_size = 2M

[rule db]
directory = $c/db
extsize = 16k
realign = yes

[rule other]
directory = $c/other
extsize = 64k
CONF
expect_exit 0 "${R[@]}" --config "$WORK/conf" --json "$c"
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
got = {f["path"].rsplit("/conf/", 1)[1]: (f["outcome"], f.get("reason")) for f in d["files"]}
assert got == {"db/a": ("done", None), "db/sub/b": ("done", None),
               "db/big": ("skipped", "too-large"), "other/c": ("skipped", "no-rule")}, got
assert d["summary"]["no_rule"] == 1 and d["summary"]["too_large"] == 1, d' "$WORK/out" ||
	fail "--config selection"
for f in db/a db/sub/b; do
	[ "$(xfs_extsize "$c/$f")" = 16384 ] || fail "$f did not get its rule's 16k"
done
for f in db/big other/c; do
	[ "$(xfs_extsize "$c/$f")" = 0 ] || fail "$f was rewritten against the configuration"
done
expect_exit 2 "${R[@]}" --config "$WORK/conf" --extsize 64k "$c"
echo 'nonsense' >"$WORK/bad.conf"
expect_exit 2 "${R[@]}" --config "$WORK/bad.conf" "$c"

# Usage errors change nothing.
expect_exit 2 "${R[@]}" "$mnt/tree"
expect_exit 2 "${R[@]}" --extsize 3000 "$mnt/tree"
expect_exit 2 "${R[@]}" --extsize 64k --bwlimit fast "$mnt/tree"
expect_exit 2 "${R[@]}" --extsize 64k --max-time soon "$mnt/tree"
echo ok
