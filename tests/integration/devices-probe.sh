#!/bin/bash
# extalign devices --probe measures what a file with an extent size hint and
# forcealign gets, and says plainly when the kernel keeps neither and the
# answer is a plain file's.  Whether this kernel keeps them is found out here
# with our own FS_IOC_FSSETXATTR from Python, not by asking extalign: on the
# Linux 6.18 host the VFS refuses FS_XFLAG_FORCEALIGN on ext4 and XFS alike
# (EOPNOTSUPP) and ext4 drops the size silently; a patched ext4 keeps both.
. "$(dirname "$0")/lib.sh"
need_cmd python3
use_valgrind

ext4=$(mkfs_mount ext4 64 -b 4096)
xfs=$(mkfs_mount xfs 300)
dev_ext4=$(findmnt -no SOURCE "$ext4")
dev_xfs=$(findmnt -no SOURCE "$xfs")

cols=NAME,TYPE,FSTYPE,BLOCK,EXTSIZE,FORCEALIGN,HW-MAX,ATOMIC,AWU-MIN,AWU-MAX
cols+=,STATX,STATX-MIN,STATX-MAX,PROBE,UNTORN,SW-MIN,SW-MAX,REASON
expect_exit 0 "$EXTALIGN" devices --json --probe -o "$cols" "$dev_ext4" "$dev_xfs"
cp "$WORK/out" "$WORK/probe.json"

python3 - "$WORK/probe.json" "$ext4" "$xfs" <<'PY'
import ctypes, errno, fcntl, json, os, struct, sys

FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR = 0x801C581F, 0x401C5820
EXTSIZE, FORCEALIGN = 0x800, 0x100000
libc = ctypes.CDLL(None, use_errno=True)


def statx(fd):
    buf = ctypes.create_string_buffer(256)
    if libc.statx(fd, b"", 0x1000, 0x7FF | 0x10000, buf) != 0:
        raise OSError(ctypes.get_errno(), "statx")
    le = lambda o: int.from_bytes(buf.raw[o:o + 4], "little")
    mask, lo, hi = le(0), le(0xA8), le(0xAC)
    if not mask & 0x10000:
        return "unsupported", None, None
    return ("yes" if lo and hi else "none"), lo, hi


def tmpfile(d):
    return os.open(d, os.O_TMPFILE | os.O_RDWR, 0o600)


def try_hint(fd, flags, size):
    """Set the hint, read it back: True when every flag and the size stuck."""
    x = list(struct.unpack("IIIII8s", fcntl.ioctl(fd, FS_IOC_FSGETXATTR, bytes(28))))
    x[0] |= flags
    x[1] = size
    try:
        fcntl.ioctl(fd, FS_IOC_FSSETXATTR, struct.pack("IIIII8s", *x))
    except OSError as e:
        return False, e.errno
    got = struct.unpack("IIIII8s", fcntl.ioctl(fd, FS_IOC_FSGETXATTR, bytes(28)))
    return (got[0] & flags) == flags and got[1] == size, 0


def check(what, got, want):
    if got != want:
        sys.exit(f"FAIL: {what}: extalign says {got!r}, expected {want!r}")


def untorn(row, dev, st):
    """Who keeps a write untorn, from our own statx and sysfs: (by, sw_min, sw_max)."""
    state, lo, hi = st
    if state != "yes":
        return "none", 0, 0
    if dev["atomic"] != "yes":
        return "software", lo, hi
    if row["fstype"] == "xfs" and hi > dev["awu_max"]:
        return "hardware+software", lo, hi
    return "hardware", 0, 0


rows = []
def walk(nodes):
    for n in nodes:
        rows.append(n)
        walk(n.get("children", []))
walk(json.load(open(sys.argv[1]))["devices"])
fs_rows = {r["name"]: r for r in rows if r["type"] == "fs"}

for mnt in sys.argv[2:]:
    fs = fs_rows.get(mnt)
    if fs is None:
        sys.exit(f"FAIL: no filesystem row for {mnt}")
    dev = next(r for r in rows if fs in r.get("children", []))
    # Loop devices have no atomic unit: the probe uses 64 KiB.
    size = 65536 if not dev["hw_max"] else min(1 << (dev["hw_max"].bit_length() - 1), 1 << 20)
    fd = tmpfile(mnt)
    kept, err = try_hint(fd, EXTSIZE | FORCEALIGN, size)
    if kept:
        check(f"{mnt} probe", fs["probe"], "hinted")
        check(f"{mnt} extsize", fs["extsize"], size)
        check(f"{mnt} forcealign", fs["forcealign"], True)
        want = statx(fd)
        os.close(fd)
        if "probe:" in fs["reason"]:
            sys.exit(f"FAIL: {mnt}: a hinted probe with a fallback note: {fs['reason']}")
    else:
        # Does the kernel keep the size alone?  That decides the words.
        size_only = try_hint(fd, EXTSIZE, size)[0] if err == errno.EOPNOTSUPP else False
        os.close(fd)
        if err == errno.EOPNOTSUPP and size_only:
            note = "forcealign not supported by this kernel"
        elif err in (0, errno.EOPNOTSUPP):
            note = "extent size hints and forcealign not supported by this kernel"
        else:
            note = os.strerror(err)
        check(f"{mnt} probe", fs["probe"], "plain")
        check(f"{mnt} forcealign", fs["forcealign"], False)
        check(f"{mnt} extsize", fs["extsize"], None)
        if f"probe: plain file, {note}" not in fs["reason"]:
            sys.exit(f"FAIL: {mnt}: reason {fs['reason']!r} does not say 'probe: plain file, {note}'")
        fd = tmpfile(mnt)
        want = statx(fd)
        os.close(fd)
    check(f"{mnt} statx", (fs["statx"], fs["statx_min"], fs["statx_max"]), want)
    check(f"{mnt} untorn", (fs["untorn"], fs["sw_min"], fs["sw_max"]), untorn(fs, dev, want))
    print(f"{mnt}: probe {fs['probe']}, statx {want}: {fs['reason']}")
PY

# Hardware or software, on files: XFS with reflink (the mkfs default) on a
# loop device, which has no atomic writes, writes them in software on a
# kernel that has the fallback (6.16+), and without reflink it cannot; a
# mount point is its filesystem's row, a directory a "dir" row.
noreflink=$(mkfs_mount xfs 300 -m reflink=0)
touch "$xfs/f" "$noreflink/f"
mkdir "$xfs/d"
expect_exit 0 "$EXTALIGN" devices --json --probe -o "$cols" "$xfs" "$xfs/f" "$xfs/d" "$noreflink/f"
python3 - "$WORK/out" "$xfs" "$noreflink" <<'PY' || fail "UNTORN of files"
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def statx(path):
    buf = ctypes.create_string_buffer(256)
    assert libc.statx(-100, path.encode(), 0, 0x10000, buf) == 0
    le = lambda o: int.from_bytes(buf.raw[o:o + 4], "little")
    return (le(0xA8) if le(0) & 0x10000 else 0), le(0xAC)
rows = []
def walk(nodes, parent):
    for n in nodes:
        rows.append((n, parent))
        walk(n.get("children", []), n)
walk(json.load(open(sys.argv[1]))["devices"], None)
xfs, noreflink = sys.argv[2:]
names = [r["name"] for r, _ in rows]
assert names.count(xfs) == 1, f"{xfs} has {names.count(xfs)} rows, want its fs row only"
d = next(r for r, _ in rows if r["name"] == f"{xfs}/d")
assert d["type"] == "dir" and d["statx"] is None and d["untorn"] is None, d
assert "measures files" in d["reason"], d
for top in (xfs, noreflink):
    f, fs = next((r, p) for r, p in rows if r["name"] == f"{top}/f")
    dev = next(r for r, _ in rows if fs in r.get("children", []))
    lo, hi = statx(f["name"])
    assert dev["atomic"] == "none", dev  # a loop device
    want = ("software", "none", lo, hi) if lo else ("none", "none", 0, 0)
    got = (f["untorn"], f["atomic"], f["sw_min"], f["sw_max"])
    assert got == want, f"{f['name']}: {got} != {want}: {f['reason']}"
    if not lo and top == noreflink:
        assert "reflink=1" in f["reason"], f
    print(f"{f['name']}: untorn {f['untorn']} {f['sw_min']}..{f['sw_max']}: {f['reason']}")
PY
rm -r "$xfs/f" "$xfs/d"

# The table says it in words too: a PROBE column (a default with --probe)
# and the note, for each filesystem.
expect_exit 0 "$EXTALIGN" devices --probe "$dev_ext4" "$dev_xfs"
head -1 "$WORK/out" | grep -q 'STATX-MIN *STATX-MAX *PROBE' ||
	{ cat "$WORK/out"; fail "--probe defaults lack STATX-MIN, STATX-MAX, PROBE"; }
for m in "$ext4" "$xfs"; do
	line=$(grep -F -- "$m" "$WORK/out") || fail "no row for $m"
	if python3 -c 'import json,sys; sys.exit(0 if any(r["name"] == sys.argv[2] and r["probe"] == "plain" for d in json.load(open(sys.argv[1]))["devices"] for r in d.get("children", [])) else 1)' \
		"$WORK/probe.json" "$m"; then
		grep -q ' plain .*probe: plain file, .*not supported by this kernel' <<<"$line" ||
			fail "the table row of $m does not say the probe measured a plain file: $line"
	else
		grep -q ' hinted ' <<<"$line" || fail "the table row of $m does not say hinted: $line"
	fi
done

# Without --probe nothing is measured: PROBE, EXTSIZE and FORCEALIGN stay
# null on filesystem rows, and the defaults are the usual ones.
expect_exit 0 "$EXTALIGN" devices --json -o NAME,TYPE,EXTSIZE,FORCEALIGN,STATX,PROBE "$dev_ext4"
python3 - "$WORK/out" <<'PY' || fail "fields filled without --probe"
import json, sys
fs = json.load(open(sys.argv[1]))["devices"][0]["children"][0]
assert fs["type"] == "fs" and fs["probe"] is None and fs["statx"] is None, fs
assert fs["extsize"] is None and fs["forcealign"] is None, fs
PY
expect_exit 0 "$EXTALIGN" devices "$dev_ext4"
head -1 "$WORK/out" | grep -q PROBE && fail "PROBE shown without --probe"
# The probe leaves nothing behind.
[ -z "$(find "$ext4" -mindepth 1 -maxdepth 1 ! -name lost+found)" ] || fail "the probe left files in $ext4"
[ -z "$(ls -A "$xfs")" ] || fail "the probe left files in $xfs"
expect_exit 0 "$EXTALIGN" devices --help
expect_in out "PROBE"
expect_in out "forcealign"
echo ok
