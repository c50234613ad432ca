#!/bin/bash
# extalign devices on this machine's real devices: loop devices with ext4,
# ext4 bigalloc and XFS mounted.  Every figure must equal what sysfs, statfs,
# dumpe2fs and a statx(2) made here by Python (not by extalign) say.
. "$(dirname "$0")/lib.sh"
need_cmd python3
use_valgrind

ext4=$(mkfs_mount ext4 64 -b 4096)
big=$(mkfs_mount ext4 256 -b 4096 -O bigalloc -C 65536)
xfs=$(mkfs_mount xfs 300)
dev_ext4=$(findmnt -no SOURCE "$ext4")
dev_big=$(findmnt -no SOURCE "$big")
dev_xfs=$(findmnt -no SOURCE "$xfs")
echo data >"$ext4/file"
echo data >"$xfs/file"

all=NAME,TYPE,MAJ:MIN,SIZE,LOG-SEC,PHY-SEC,START,FSTYPE,BLOCK,CLUSTER,EXTSIZE,FORCEALIGN
all+=,HW-MIN,HW-MAX,BOUNDARY,HW-LIMIT,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX,PROBE,REASON
expect_exit 0 "$EXTALIGN" devices --json --probe -o "$all" \
	"$dev_ext4" "$dev_big" "$dev_xfs" "$ext4/file" "$xfs/file"
python3 -m json.tool "$WORK/out" >/dev/null || fail "--json output does not parse"
cp "$WORK/out" "$WORK/devices.json"

cluster=$(dumpe2fs -h "$dev_big" 2>/dev/null | awk -F: '/^Cluster size/ { gsub(/ /, "", $2); print $2 }')
[ "$cluster" = 65536 ] || fail "dumpe2fs says cluster $cluster, mkfs asked for 65536"

python3 - "$WORK/devices.json" "$dev_ext4:$ext4:ext4" "$dev_big:$big:ext4" "$dev_xfs:$xfs:xfs" \
	<<'PY'
import ctypes, json, os, sys

libc = ctypes.CDLL(None, use_errno=True)
STATX_WRITE_ATOMIC = 0x10000
AT_EMPTY_PATH = 0x1000


def statx(path=None, fd=-100):
    """(mask, unit_min, unit_max) from the kernel, uapi offsets 0, 0xa8, 0xac."""
    buf = ctypes.create_string_buffer(256)
    p = b"" if path is None else path.encode()
    flags = AT_EMPTY_PATH if path is None else 0
    if libc.statx(fd, p, flags, 0x7FF | STATX_WRITE_ATOMIC, buf) != 0:
        raise OSError(ctypes.get_errno(), path)
    raw = buf.raw
    le = lambda o: int.from_bytes(raw[o:o + 4], "little")
    return le(0), le(0xA8), le(0xAC)


def verdict(sx):
    mask, lo, hi = sx
    if not mask & STATX_WRITE_ATOMIC:
        return "unsupported", None, None
    return ("yes" if lo and hi else "none"), lo, hi


def check(what, got, want):
    if got != want:
        sys.exit(f"FAIL: {what}: extalign says {got!r}, expected {want!r}")


def sysfs(path):
    try:
        with open(path) as f:
            return int(f.read())
    except FileNotFoundError:
        return None


rows, parents = [], {}
def walk(nodes, parent=None):
    for n in nodes:
        rows.append(n)
        parents[id(n)] = parent
        walk(n.get("children", []), n)
walk(json.load(open(sys.argv[1]))["devices"])

devices = {r["name"]: r for r in rows if r["type"] in ("disk", "part", "loop", "dm", "md")}
for spec in sys.argv[2:5]:
    node, mnt, fstype = spec.split(":")
    name = os.path.basename(node)
    dev = devices.get(name)
    if dev is None:
        sys.exit(f"FAIL: {name} missing from the output")
    cb = f"/sys/class/block/{name}"
    q = f"{cb}/queue"
    check(f"{name} size", dev["size"], sysfs(f"{cb}/size") * 512)
    check(f"{name} maj_min", dev["maj_min"], open(f"{cb}/dev").read().strip())
    check(f"{name} log_sec", dev["log_sec"], sysfs(f"{q}/logical_block_size"))
    check(f"{name} phy_sec", dev["phy_sec"], sysfs(f"{q}/physical_block_size"))
    check(f"{name} type", dev["type"], "loop")
    for col, attr in (("hw_min", "unit_min"), ("hw_max", "unit_max"),
                      ("boundary", "boundary"), ("hw_limit", "max")):
        check(f"{name} {col}", dev[col], sysfs(f"{q}/atomic_write_{attr}_bytes"))
    hw = sysfs(f"{q}/atomic_write_unit_min_bytes")
    want = "unsupported" if hw is None else ("yes" if hw else "none")
    check(f"{name} atomic", dev["atomic"], want)
    st, lo, hi = verdict(statx(node))
    check(f"{name} statx", dev["statx"], st)
    if st == "yes":
        check(f"{name} statx_min", dev["statx_min"], lo)
        check(f"{name} statx_max", dev["statx_max"], hi)

    # Its filesystem: a child row named by the mount point.
    fs = [r for r in dev.get("children", []) if r["type"] == "fs"]
    check(f"{name} filesystem rows", [r["name"] for r in fs], [mnt])
    fs = fs[0]
    check(f"{mnt} fstype", fs["fstype"], fstype)
    check(f"{mnt} block", fs["block"], os.statvfs(mnt).f_bsize)
    # A device without atomic writes leaves the filesystem none either.
    if dev["atomic"] != "yes" and fstype == "ext4":
        check(f"{mnt} atomic", fs["atomic"], dev["atomic"])
    # XFS decides in the kernel: measured (--probe), ATOMIC is the device's
    # part of statx's answer (devices-probe.sh covers UNTORN).
    if fstype == "xfs":
        hw = dev["atomic"] == "yes" and fs["statx"] == "yes"
        check(f"{mnt} atomic", fs["atomic"], "yes" if hw else "none")
    # --probe: the same statx on an O_TMPFILE of our own, where the probe
    # fell back to a plain file (devices-probe.sh covers both cases).
    check(f"{mnt} probe file", fs["probe"] in ("plain", "hinted"), True)
    if fs["probe"] == "plain":
        fd = os.open(mnt, os.O_TMPFILE | os.O_RDWR, 0o600)
        try:
            st, lo, hi = verdict(statx(fd=fd))
        finally:
            os.close(fd)
        check(f"{mnt} probe", fs["statx"], st)
        check(f"{mnt} probe min", fs["statx_min"], lo)
        check(f"{mnt} probe max", fs["statx_max"], hi)

    for f in fs.get("children", []):
        check(f"{f['name']} type", f["type"], "file")
        check(f"{f['name']} under its filesystem", os.path.dirname(f["name"]), mnt)
        st, lo, hi = verdict(statx(f["name"]))
        check(f"{f['name']} statx", f["statx"], st)
        check(f"{f['name']} statx_min", f["statx_min"], lo)
        check(f"{f['name']} forcealign", f["forcealign"], False)
        check(f"{f['name']} extsize", f["extsize"], None)

files = [r["name"] for r in rows if r["type"] == "file"]
check("file rows", sorted(files), sorted(a for a in [sys.argv[2].split(":")[1] + "/file",
                                                     sys.argv[4].split(":")[1] + "/file"]))
PY

# The bigalloc filesystem reports its cluster, the plain one its block, as
# dumpe2fs reads them from the superblocks.
plain=$(dumpe2fs -h "$dev_ext4" 2>/dev/null | awk -F: '/^Block size/ { gsub(/ /, "", $2); print $2 }')
python3 - "$WORK/devices.json" "$big" "$cluster" "$ext4" "$plain" <<'PY' || fail "cluster sizes"
import json, sys
rows = []
def walk(n):
    for r in n:
        rows.append(r); walk(r.get("children", []))
walk(json.load(open(sys.argv[1]))["devices"])
fs = {r["name"]: r for r in rows if r["type"] == "fs"}
assert fs[sys.argv[2]]["cluster"] == int(sys.argv[3]), fs[sys.argv[2]]
assert fs[sys.argv[4]]["cluster"] == int(sys.argv[5]), fs[sys.argv[4]]
assert fs[sys.argv[2]]["block"] == 4096, fs[sys.argv[2]]
PY

# The table: a tree with the loop device and its mount point, sizes as lsblk.
expect_exit 0 "$EXTALIGN" devices "$dev_ext4"
expect_in out "$(basename "$dev_ext4")"
expect_in out "$ext4"
expect_in out "64M"
expect_exit 0 "$EXTALIGN" devices -b -o NAME,SIZE "$dev_ext4"
expect_in out "67108864"
expect_exit 0 "$EXTALIGN" devices -n -o +MAJ:MIN "$dev_ext4"
grep -q '^NAME' "$WORK/out" && fail "--noheadings printed a header"
expect_in out "$(cat /sys/class/block/"$(basename "$dev_ext4")"/dev)"

# Without arguments every non-empty device is listed (vda, zram, ours...),
# each with the figures sysfs and the kernel's statx give for it.
expect_exit 0 "$EXTALIGN" devices -J -o "$all"
python3 -m json.tool "$WORK/out" >/dev/null || fail "--json output does not parse"
expect_in out "\"$(basename "$dev_xfs")\""
python3 - "$WORK/out" "$dev_ext4" "$dev_big" "$dev_xfs" <<'PY'
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def statx_state(path):
    buf = ctypes.create_string_buffer(256)
    if libc.statx(-100, path.encode(), 0, 0x7FF | 0x10000, buf) != 0:
        return None
    raw = buf.raw
    mask, lo, hi = (int.from_bytes(raw[o:o + 4], "little") for o in (0, 0xA8, 0xAC))
    return "unsupported" if not mask & 0x10000 else ("yes" if lo and hi else "none")
def rd(path):
    try:
        return int(open(path).read())
    except FileNotFoundError:
        return None
rows = []
def walk(n):
    for r in n:
        rows.append(r); walk(r.get("children", []))
walk(json.load(open(sys.argv[1]))["devices"])
devs = [r for r in rows if r["type"] in ("disk", "part", "loop", "dm", "md")]
listed = sorted(r["name"] for r in devs)
# Other tests attach and detach loop devices meanwhile: demand the disks and
# our own loops, and compare every row whose device is still there.
want = [d for d in os.listdir("/sys/class/block")
        if not d.startswith("loop") and rd(f"/sys/class/block/{d}/size")]
want += [os.path.basename(a) for a in sys.argv[2:]]
missing = set(want) - set(listed)
if missing:
    sys.exit(f"FAIL: {sorted(missing)} not listed (listed: {listed})")
for r in devs:
    cb = f"/sys/class/block/{r['name']}"
    if not os.path.exists(cb) or not rd(f"{cb}/size"):
        continue
    q = f"{cb}/queue" if os.path.isdir(f"{cb}/queue") else f"{cb}/../queue"
    got = (r["size"], r["maj_min"], r["hw_min"], r["hw_max"], r["boundary"], r["hw_limit"])
    exp = (rd(f"{cb}/size") * 512, open(f"{cb}/dev").read().strip(),
           *(rd(f"{q}/atomic_write_{a}_bytes") for a in ("unit_min", "unit_max", "boundary", "max")))
    if got != exp:
        sys.exit(f"FAIL: {r['name']}: {got} != sysfs {exp}")
    if os.path.exists(f"/dev/{r['name']}") and r["statx"] != statx_state(f"/dev/{r['name']}"):
        sys.exit(f"FAIL: {r['name']}: statx {r['statx']} != {statx_state('/dev/' + r['name'])}")
print("checked", " ".join(listed))
PY

# A partitioned loop device (DOS label written here: partitions at sectors 63
# and 8192), where the kernel scans partitions; containers often do not.
truncate -s 64M "$WORK/parts.img"
python3 - "$WORK/parts.img" <<'PY'
import struct, sys
mbr = bytearray(512)
for i, (start, size) in enumerate([(63, 4000), (8192, 20000)]):
    mbr[446 + 16 * i:462 + 16 * i] = struct.pack("<B3sB3sII", 0, bytes(3), 0x83, bytes(3), start, size)
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f:
    f.write(mbr)
PY
ploop=$(losetup -f --show -P "$WORK/parts.img")
echo "$ploop" >>"$WORK/.loops"
pn=$(basename "$ploop")
if [ -e "/sys/block/$pn/${pn}p2/start" ]; then
	expect_exit 0 "$EXTALIGN" devices -J -o NAME,TYPE,START,SIZE,ATOMIC "$ploop"
	python3 - "$WORK/out" "$pn" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
n = sys.argv[2]
kids = [(c["name"], c["type"], c["start"], c["size"]) for c in d.get("children", [])]
assert kids == [(n + "p1", "part", 63 * 512, 4000 * 512), (n + "p2", "part", 8192 * 512, 20000 * 512)], kids
assert all(c["atomic"] == d["atomic"] for c in d["children"]), d
PY
else
	echo "note: no partition scan on $ploop here; partitions are covered by the sysroot fixtures"
fi

# Errors name the argument; the good ones are still shown.
expect_exit 3 "$EXTALIGN" devices /dev/extalign-nonexistent
expect_in err "extalign: /dev/extalign-nonexistent"
expect_exit 3 "$EXTALIGN" devices nosuchdisk0 "$dev_ext4"
expect_in err "nosuchdisk0: no such block device"
expect_in out "$(basename "$dev_ext4")"
expect_exit 3 "$EXTALIGN" devices "$WORK/missing/file"
expect_in err "$WORK/missing/file: No such file or directory"
expect_exit 3 "$EXTALIGN" devices /proc/self/status
expect_in err "/proc/self/status: not on a block device"
expect_exit 2 "$EXTALIGN" devices -o NAME,NOPE
expect_in err "unknown column: NOPE"
expect_exit 2 "$EXTALIGN" devices --probe --sysroot "$TOP/tests/data/sysroot/6.18"
expect_exit 0 "$EXTALIGN" devices --help
expect_in out "STATX-MAX"
echo ok
