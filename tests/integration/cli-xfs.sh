#!/bin/bash
# extalign set/get/clear/check on a real XFS, with xfs_io as the reference.
. "$(dirname "$0")/lib.sh"
use_valgrind
need_cmd xfs_io
mnt=$(mkfs_mount xfs 300)

# set on an empty file: the hint is there for xfs_io too.
touch "$mnt/f"
expect_exit 0 "$EXTALIGN" set --extsize 16k "$mnt/f"
[ "$(xfs_extsize "$mnt/f")" = 16384 ] || fail "xfs_io does not see 16k"
for s in 65536 64k 64K 64KiB; do
	touch "$mnt/g"
	expect_exit 0 "$EXTALIGN" set -e "$s" "$mnt/g"
	[ "$(xfs_extsize "$mnt/g")" = 65536 ] || fail "$s did not set 64k"
	rm "$mnt/g"
done

# get agrees with xfs_io, in the table and in JSON.
xfs_io -c 'extsize 32k' "$mnt/f"
expect_exit 0 "$EXTALIGN" get "$mnt/f"
expect_in out "32K"
expect_exit 0 "$EXTALIGN" get --json "$mnt/f"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["files"][0]
assert d["extsize"] == 32768 and d["fstype"] == "xfs" and d["block"] == 4096, d
assert d["forcealign"] is False and d["inherit"] is False, d' "$WORK/out" || fail "bad JSON"

# Directories inherit: a new file gets the hint from the kernel.
mkdir "$mnt/d"
expect_exit 0 "$EXTALIGN" set --extsize 64k "$mnt/d"
has_xflag "$mnt/d" 0x1000 || fail "directory has no EXTSZINHERIT"
touch "$mnt/d/new"
[ "$(xfs_extsize "$mnt/d/new")" = 65536 ] || fail "new file did not inherit"
expect_exit 0 "$EXTALIGN" get --json "$mnt/d"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["files"][0]
assert d["inherit"] is True and d["extsize"] == 65536, d' "$WORK/out" || fail "dir JSON"

# --no-inherit on a directory leaves nothing to do: usage error.
mkdir "$mnt/d2"
expect_exit 2 "$EXTALIGN" set --extsize 64k --no-inherit "$mnt/d2"
has_xflag "$mnt/d2" 0x1000 && fail "--no-inherit set inheritance"

# A file with data: refused before any ioctl, nothing changed.
echo data >"$mnt/full"
expect_exit 3 "$EXTALIGN" set --extsize 64k "$mnt/full"
expect_in err "has data"
expect_in err "extalign realign"
[ "$(xfs_extsize "$mnt/full")" = 0 ] || fail "hint set on a file with data"

# --force: this kernel's XFS has no forcealign; nothing may be changed.
touch "$mnt/fa"
expect_exit 4 "$EXTALIGN" set --extsize 64k --force "$mnt/fa"
expect_in err "this kernel's xfs does not support forcealign"
[ "$(xfs_extsize "$mnt/fa")" = 0 ] || fail "failed --force left a hint behind"

# Two paths, one bad: the good one is not changed either.
touch "$mnt/ok"
expect_exit 3 "$EXTALIGN" set --extsize 64k "$mnt/ok" "$mnt/missing"
expect_in err "nothing was changed"
[ "$(xfs_extsize "$mnt/ok")" = 0 ] || fail "changed a path although another was bad"

# Sizes against the filesystem block size (4k here).
expect_exit 2 "$EXTALIGN" set --extsize 2k "$mnt/ok"
expect_in err "not a multiple of the filesystem block size"

# -R: dirs inherit, empty files hinted, files with data listed, symlinks skipped.
mkdir -p "$mnt/tree/a/b"
touch "$mnt/tree/e1" "$mnt/tree/a/b/e2"
echo x >"$mnt/tree/a/data"
touch "$mnt/outside"
ln -s "$mnt/outside" "$mnt/tree/link"
# A file given the hint before its data is no realignment candidate.
touch "$mnt/tree/hinted"
expect_exit 0 "$EXTALIGN" set --extsize 128k "$mnt/tree/hinted"
xfs_io -c 'pwrite -q 0 256k' -c fsync "$mnt/tree/hinted"
expect_exit 0 "$EXTALIGN" set -R --extsize 128k "$mnt/tree"
expect_in out "$mnt/tree/a/data: has data, left alone (realignment candidate)"
grep -q "hinted: has data" "$WORK/out" && fail "set -R called a file that has the hint a candidate"
expect_in out "$mnt/tree: 3 directories, 2 empty files hinted; 1 file with data and the hint already; 1 file with data left alone; 1 skipped"
expect_in out "To realign them: extalign realign --extsize 128K $mnt/tree"
for p in tree/e1 tree/a/b/e2; do
	[ "$(xfs_extsize "$mnt/$p")" = 131072 ] || fail "$p not hinted by -R"
done
for p in tree tree/a tree/a/b; do
	has_xflag "$mnt/$p" 0x1000 || fail "$p does not inherit"
done
[ "$(xfs_extsize "$mnt/tree/a/data")" = 0 ] || fail "-R touched a file with data"
[ "$(xfs_extsize "$mnt/outside")" = 0 ] || fail "-R followed a symlink out of the tree"

# clear removes it, as xfs_io sees.
expect_exit 0 "$EXTALIGN" clear "$mnt/f" "$mnt/d"
[ "$(xfs_extsize "$mnt/f")" = 0 ] || fail "clear left the hint"
has_xflag "$mnt/d" 0x1000 && fail "clear left inheritance"

# check: extsize aligns logically; without stripe alignment not on disk.
rm -f "$mnt/c"; touch "$mnt/c"
expect_exit 0 "$EXTALIGN" set --extsize 64k "$mnt/c"
xfs_io -c 'pwrite -q 0 256k' -c fsync "$mnt/c"
rc=0; "$EXTALIGN" check --json "$mnt/c" >"$WORK/out" || rc=$?
python3 - "$WORK/out" "$rc" <<'PY' || fail "check verdict disagrees with xfs_io fiemap"
import json, subprocess, sys
d = json.load(open(sys.argv[1]))["files"][0]
rc = int(sys.argv[2])
# Reference: xfs_io's fiemap in 512-byte units.
out = subprocess.run(["xfs_io", "-c", "fiemap", d["path"]], capture_output=True, text=True).stdout
phys_bad = 0
for line in out.splitlines()[1:]:
    f = line.split()
    if len(f) < 3 or f[2] == "hole":
        continue
    start = int(f[2].split("..")[0])
    if (start * 512) % 65536:
        phys_bad += 1
assert d["misaligned_logical"] == 0, d
assert (d["misaligned_physical"] > 0) == (phys_bad > 0), (d, out)
assert rc == (1 if phys_bad else 0), rc
assert d["verdict"] == ("logical-only" if phys_bad else "aligned"), d
PY

# A file written before its hint: logically misaligned at 4k granularity.
xfs_io -f -c 'pwrite -q 0 4k' -c fsync -c 'pwrite -q 64k 4k' -c fsync -c 'pwrite -q 4k 4k' \
	-c fsync "$mnt/late"
expect_exit 1 "$EXTALIGN" check --extsize 64k "$mnt/late"
expect_in out misaligned
# No hint and no --extsize: a verdict, not an error (issue 32.1).
expect_exit 0 "$EXTALIGN" check "$mnt/late"
expect_in out " no-hint"
[ ! -s "$WORK/err" ] || fail "check of a file without a hint wrote to stderr"
expect_exit 0 "$EXTALIGN" check --json "$mnt/late"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["files"][0]
assert d["verdict"] == "no-hint" and d["unit"] is None and d["extents"] is None, d' "$WORK/out" ||
	fail "JSON of a no-hint file"

# logical-only: in units in the file, not on disk.  The table's footnote
# names stripe alignment for the unit checked (su=16K for 16k, not a
# fixed 64k), and --noheadings prints the rows alone, for awk.  A 16k run
# at file offset 0 whose disk start is 4k past a 16k boundary: written
# after 4k pads (direct: no speculative preallocation) until the
# allocator puts it there.  A filesystem of its own: nothing inherited.
mnt3=$(mkfs_mount xfs 512)
for i in 1 2 3 4 5 6 7 8; do
	xfs_io -f -d -c 'pwrite -q 0 4k' "$mnt3/lopad$i"
	xfs_io -f -d -c 'pwrite -q 0 16k' "$mnt3/lo"
	start=$(xfs_io -c fiemap "$mnt3/lo" | awk 'NR == 2 { split($3, p, /\.\./); print p[1] * 512 }')
	[ $((start % 16384)) = 0 ] || break
	rm "$mnt3/lo"
done
[ $((start % 16384)) != 0 ] || fail "no 16k file off a 16k boundary on disk after 8 tries"
expect_exit 1 "$EXTALIGN" check --extsize 16k "$mnt3/lo"
expect_in out logical-only
expect_in out "su=16K,sw=1"
expect_exit 1 "$EXTALIGN" check --noheadings --extsize 16k "$mnt3/lo"
[ "$(wc -l <"$WORK/out")" = 1 ] || { cat "$WORK/out"; fail "check --noheadings printed more than its row"; }

# Stripe-aligned XFS (su=64k, swalloc): aligned on disk as well.
mnt2=$(mkfs_mount xfs 1024 -d su=64k,sw=1)
mount -o remount,swalloc "$mnt2"
touch "$mnt2/s"
expect_exit 0 "$EXTALIGN" set --extsize 64k "$mnt2/s"
xfs_io -c 'pwrite -q 0 1m' -c fsync "$mnt2/s"
expect_exit 0 "$EXTALIGN" check "$mnt2/s"
expect_in out aligned

# set on a directory that has subdirectories: they do not inherit, and
# set says so (issue 32.5); after -R nothing is left to say.
mkdir -p "$mnt2/tree/a/deep" "$mnt2/tree/b"
expect_exit 0 "$EXTALIGN" set --extsize 16k "$mnt2/tree"
expect_in err "$mnt2/tree: new files here inherit the hint, but 2 existing subdirectories do not; use -R"
expect_exit 0 "$EXTALIGN" set --extsize 16k -R "$mnt2/tree"
expect_exit 0 "$EXTALIGN" set --extsize 16k "$mnt2/tree"
[ ! -s "$WORK/err" ] || fail "set after -R still complains: $(cat "$WORK/err")"
echo "ok"
