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
cols+=,STATX,STATX-MIN,STATX-MAX,PROBE,REASON
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
    print(f"{mnt}: probe {fs['probe']}, statx {want}: {fs['reason']}")
PY

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
