#!/usr/bin/env python3
# Shapes for realign-shapes.sh (and tests/kernel/75-realign-shapes.sh):
# make them on LAYOUT under MNT, realign, check.  Prints the number of
# shapes checked; exits 1 on the first property that does not hold.
#
# Layouts: xfs, xfs-stripe, xfs-reflink, ext4 (an ext4 that keeps no hint:
# the unsupported path), and on the patched ext4 of the guest ext4-rename
# (files without the hint: the copy takes the name) and ext4-moveext (each
# file gets the hint while still empty, so its extents are swapped with
# EXT4_IOC_MOVE_EXT and the inode stays; --rewrite-aligned makes realign
# rewrite files that already look aligned).
import fcntl, hashlib, json, os, random, struct, subprocess, sys

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fiemap  # noqa: E402

ext, layout, mnt, seed, state = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
rnd = random.Random(seed)
UNIT = 65536
BLK = 4096
d = os.path.join(mnt, "shapes")
src = os.path.join(mnt, "src")  # reflink layout: the files share these blocks
os.makedirs(d)
os.makedirs(src)


def fail(msg):
    print(f"FAIL: {layout}: {msg}", file=sys.stderr)
    sys.exit(1)


def write_at(path, off, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    os.pwrite(fd, data, off)
    os.close(fd)


def prealloc(path, off, length, keep_size=False):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        if keep_size:
            subprocess.run(["xfs_io", "-c", f"falloc -k {off} {length}", path], check=True)
        else:
            os.posix_fallocate(fd, off, length)
    finally:
        os.close(fd)


# struct fsxattr: xflags, extsize, nextents, projid, cowextsize, 8 pad bytes.
FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR, FSX = 0x801C581F, 0x401C5820, "=5I8x"
FS_XFLAG_EXTSIZE = 0x800


def fsx_get(p):
    fd = os.open(p, os.O_RDONLY)
    try:
        return struct.unpack(FSX, fcntl.ioctl(fd, FS_IOC_FSGETXATTR, bytes(28)))
    finally:
        os.close(fd)


def hint_empty(p):
    """The 64k hint on P, created empty (the kernel refuses it once P has data)."""
    open(p, "w").close()
    x = list(fsx_get(p))
    x[0] |= FS_XFLAG_EXTSIZE
    x[1] = UNIT
    fd = os.open(p, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_FSSETXATTR, struct.pack(FSX, *x))
    finally:
        os.close(fd)


shapes = {}


def shape(name, make, **expect):
    shapes[name] = (make, expect)


shape("empty", lambda p: open(p, "w").close(), nodata=True)
shape("one-byte", lambda p: write_at(p, 0, b"x"))
shape("dense-odd", lambda p: write_at(p, 0, rnd.randbytes(3 * UNIT + 123)))
shape("off-block", lambda p: write_at(p, 0, rnd.randbytes(5000)))
shape("big", lambda p: write_at(p, 0, rnd.randbytes(24 << 20)))


def sparse(p, runs, span):
    for _ in range(runs):
        off = rnd.randrange(0, span) // 512 * 512
        write_at(p, off, rnd.randbytes(rnd.choice([1, 512, 4096, 5000, 65536, 200000])))
    if rnd.random() < 0.5:
        os.truncate(p, os.stat(p).st_size + rnd.randrange(1, 4 << 20))


for k in range(6):
    runs, span = rnd.randrange(1, 12), rnd.choice([256 << 10, 4 << 20, 32 << 20])
    shape(f"sparse-{k}", lambda p, r=runs, s=span: sparse(p, r, s))


def unwritten(p):
    prealloc(p, 0, 2 << 20)
    write_at(p, 300000, rnd.randbytes(70000))


shape("prealloc", unwritten, prealloc=True)


def prealloc_beyond(p):
    write_at(p, 0, rnd.randbytes(100000))
    prealloc(p, 1 << 20, 1 << 20, keep_size=True)


shape("prealloc-beyond-eof", prealloc_beyond, prealloc=True)


def holes_only(p):
    open(p, "w").close()
    os.truncate(p, 10 << 20)


shape("holes-only", holes_only, nodata=True)


def meta(p):
    write_at(p, 0, rnd.randbytes(150000))
    subprocess.run(["setfattr", "-n", "user.colour", "-v", "blue", p], check=True)
    subprocess.run(["setfattr", "-n", "trusted.k", "-v", "0x00ff", p], check=True)
    subprocess.run(["setfacl", "-m", "u:nobody:r,g:daemon:rw", p], check=True)
    os.chown(p, 1234, 5678)
    os.chmod(p, 0o2750)
    os.utime(p, ns=(1_500_000_000_123_456_789, 1_400_000_000_987_654_321))


shape("xattrs-acl", meta)


def hardlinked(p):
    write_at(p, 0, rnd.randbytes(200000))
    os.link(p, p + ".link")


shape("hardlink", hardlinked, hardlink=True)


def hardlinked_units(p):
    write_at(p, 0, rnd.randbytes(4 * UNIT))
    os.link(p, p + ".link")


# Whole units: the inode-keeping swaps take it (ext4-moveext) where the
# rename path must refuse it.
shape("hardlink-units", hardlinked_units, hardlink=True)


def fingerprint(p):
    st = os.lstat(p)
    h = hashlib.sha256(open(p, "rb").read()).hexdigest()
    xattrs = subprocess.run(["getfattr", "-h", "-d", "-m", "-", "-e", "hex", p],
                            capture_output=True, text=True).stdout.splitlines()[1:]
    acl = subprocess.run(["getfacl", "-cp", p], capture_output=True, text=True).stdout
    return dict(sha=h, size=st.st_size, mode=st.st_mode, uid=st.st_uid, gid=st.st_gid,
                mtime=st.st_mtime_ns, nlink=st.st_nlink, xattrs=xattrs, acl=acl)


def extsize(p):
    xflags, size = fsx_get(p)[:2]
    return size if xflags & FS_XFLAG_EXTSIZE else 0


moveext = layout == "ext4-moveext"
for name, (make, _) in shapes.items():
    p = os.path.join(src if layout == "xfs-reflink" else d, name)
    if moveext:
        hint_empty(p)
    make(p)
    if layout == "xfs-reflink":
        subprocess.run(["cp", "-a", "--reflink=always", p, os.path.join(d, name)], check=True)
        if os.path.exists(p + ".link"):
            os.link(os.path.join(d, name), os.path.join(d, name + ".link"))
os.sync()
if layout == "xfs-reflink":
    src_before = {f: fingerprint(os.path.join(src, f)) for f in os.listdir(src)}

before = {n: fingerprint(os.path.join(d, n)) for n in shapes}
blocks = {n: os.stat(os.path.join(d, n)).st_blocks for n in shapes}
ino = {n: os.stat(os.path.join(d, n)).st_ino for n in shapes}
cmd = [ext, "realign", "--state-dir", state, "--extsize", "64k", "--json", d]
if moveext:
    cmd.insert(2, "--rewrite-aligned")
r = subprocess.run(cmd, capture_output=True, text=True)
try:
    res = {os.path.basename(f["path"]): f for f in json.loads(r.stdout)["files"]}
except Exception:
    fail(f"no JSON (exit {r.returncode}): {r.stdout} {r.stderr}")

for name, (_, expect) in shapes.items():
    p = os.path.join(d, name)
    f = res.get(name)
    if not f:
        fail(f"{name}: not reported")
    after = fingerprint(p)
    # ctime aside, realign keeps all of it; a hard link keeps its count.
    if after != before[name]:
        fail(f"{name}: changed: {before[name]} -> {after}")
    out = f["outcome"]
    if layout == "ext4":
        # The host's ext4 accepts the hint and keeps nothing: said, nothing touched.
        # A hard-linked file is refused before the hint is tried.
        ok = ("skipped", "hardlinks") if expect.get("hardlink") else ("unsupported", None)
        if (out, f.get("reason")) != ok:
            fail(f"{name}: outcome {out} on a filesystem that keeps no hint: {f}")
        if os.stat(p).st_ino != ino[name]:
            fail(f"{name}: replaced on ext4")
        continue
    if moveext:
        # The hint was there before the data: nothing to do without data,
        # and with data the extents move, the inode (and its links) stay.
        if expect.get("nodata"):
            if (out, f.get("reason")) != ("skipped", "aligned"):
                fail(f"{name}: {f}")
            continue
        # MOVE_EXT stops at end of file: only whole units go that way.
        if after["size"] % UNIT == 0:
            if (out, f["swap"]) != ("done", "move-ext"):
                fail(f"{name}: outcome {out}, swap {f['swap']}, expected done by move-ext: {f}")
            if os.stat(p).st_ino != ino[name] or f["inode_after"] != ino[name]:
                fail(f"{name}: a new inode on the move-ext path: {f}")
        elif expect.get("hardlink"):
            if (out, f.get("reason")) != ("skipped", "hardlinks"):
                fail(f"{name}: a partial last unit and hard links: {f}")
            continue
        elif (out, f["swap"]) != ("done", "rename"):
            fail(f"{name}: a partial last unit: outcome {out}, swap {f['swap']}, expected "
                 f"done by rename: {f}")
    elif expect.get("hardlink"):
        if (out, f.get("reason")) != ("skipped", "hardlinks"):
            fail(f"{name}: {f}")
        if extsize(p) != 0:
            fail(f"{name}: hard-linked file got the hint")
        continue
    # Our ext4 takes no hint on a file with a size, holes only or not: copied.
    in_place = expect.get("nodata") and not (layout.startswith("ext4-") and after["size"])
    want = "hint-set" if in_place and not moveext else "done"
    if out != want:
        fail(f"{name}: outcome {out}, expected {want}: {f}")
    if extsize(p) != UNIT:
        fail(f"{name}: no 64k hint after {out}")
    runs = fiemap.runs(p)
    size = after["size"]
    logical_ok = all(lo % UNIT == 0 and (hi % UNIT == 0 or hi >= size) for lo, hi, _, _ in runs)
    physical_ok = all(ps % UNIT == 0 for _, _, ps, _ in runs)
    if (f["logical"] == "aligned") != logical_ok and want == "done":
        fail(f"{name}: realign says logically {f['logical']}, fiemap {runs}")
    if want == "done" and not moveext and f["swap"] != "rename":
        fail(f"{name}: swap {f['swap']}: a file without the hint can only be renamed over")
    if want == "done" and not logical_ok:
        fail(f"{name}: realigned yet logically misaligned: {runs}")
    if want == "done" and f["physical_guaranteed"] and not physical_ok:
        fail(f"{name}: physical alignment promised, fiemap {runs}")
    if want == "done" and (f["physical"] == "aligned") != physical_ok:
        fail(f"{name}: realign says physically {f['physical']}, fiemap {runs}")
    if expect.get("prealloc") and os.stat(p).st_blocks < blocks[name]:
        fail(f"{name}: preallocation dropped: {blocks[name]} -> {os.stat(p).st_blocks} sectors")
    if layout == "xfs-stripe" and want == "done" and not f["physical_guaranteed"]:
        fail(f"{name}: stripe unit 64k yet no physical promise")

if layout == "xfs-reflink":
    for fn, fp in src_before.items():
        if fingerprint(os.path.join(src, fn)) != fp:
            fail(f"reflink source {fn} changed")

subprocess.run(["rm", "-rf", d, src], check=True)
print(len(shapes))
