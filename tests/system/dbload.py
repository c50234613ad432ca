#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A database-like load for the system test, and its check after a power cut.

  dbload.py run DIR LOG SECONDS SEED   create, extend, overwrite, truncate and
                                       delete files of DIR in units; after each
                                       fdatasync, append what is now durable to
                                       LOG (on the host's 9p share, which a
                                       killed QEMU cannot take back)
  dbload.py verify DIR LOG             after the cut: every durable byte is
                                       there and no unit is torn

A unit is UNIT bytes (the file's atomic write unit from statx, at most
16 KiB; 4 KiB when the kernel reports none), written with RWF_ATOMIC | O_DIRECT
when the file has an atomic unit.  Each 512-byte sector of a unit starts
with the same header (file, unit, version), so a unit that holds parts of
two writes is seen.  Before each change the intent goes to LOG ("i" lines)
and after its fdatasync the fact ("d" lines): after a cut a file may show
its last durable state or any intent after it, nothing else.
"""
import json
import mmap
import os
import random
import struct
import sys
import time

RWF_ATOMIC = 0x40
STATX_WRITE_ATOMIC = 0x10000
SECTOR = 512
# magic, file id (the seed, the time in a cut's run, times 100000: 64 bits),
# unit index, version
HDR = struct.Struct("<8sQIQ")
MAGIC = b"EXTALIGN"
MAX_UNIT = 16384


def atomic_unit(path):
    """The file's atomic write unit max from statx, or 0 (ctypes: Python 3.11
    has no statx)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(256)
    AT_FDCWD = -100
    if libc.statx(AT_FDCWD, path.encode(), 0, STATX_WRITE_ATOMIC, buf) != 0:
        return 0
    mask = struct.unpack_from("<I", buf.raw, 0)[0]
    if not mask & STATX_WRITE_ATOMIC:
        return 0
    # struct statx (uapi, 6.11): stx_atomic_write_unit_min at 0xa8, _max at 0xac.
    return struct.unpack_from("<I", buf.raw, 0xAC)[0]


def unit_bytes(fid, idx, version, unit):
    sector = HDR.pack(MAGIC, fid, idx, version).ljust(SECTOR, bytes([version & 0xFF]))
    return sector * (unit // SECTOR)


class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

    def put(self, *fields):
        self.f.write(" ".join(str(x) for x in fields) + "\n")


def run(d, logpath, seconds, seed):
    rnd = random.Random(seed)
    log = Log(logpath)
    probe = os.path.join(d, ".probe")
    open(probe, "w").close()
    au = atomic_unit(probe)
    os.unlink(probe)
    unit = min(au, MAX_UNIT) if au >= 4096 else 4096
    atomic = au >= unit
    log.put("unit", unit, 1 if atomic else 0)
    buf = mmap.mmap(-1, unit)
    files = {}  # name -> [fid, nunits]
    version = int(time.time() * 1000) << 8  # above every earlier round's
    fid = seed * 100000
    end = time.monotonic() + seconds
    ops = 0
    while time.monotonic() < end:
        ops += 1
        version += 1
        op = rnd.random()
        if not files or (op < 0.15 and len(files) < 40):
            fid += 1
            name = "f%d" % fid
            n = rnd.randint(1, 8)
            path = os.path.join(d, name)
            log.put("i", "size", name, fid, n)
            for i in range(n):
                log.put("i", "unit", name, i, version)
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_DIRECT, 0o644)
            for i in range(n):
                buf[:] = unit_bytes(fid, i, version, unit)
                os.pwritev(fd, [buf], i * unit, RWF_ATOMIC if atomic else 0)
            os.fdatasync(fd)
            os.close(fd)
            dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            os.fsync(dfd)
            os.close(dfd)
            files[name] = [fid, n]
            log.put("d", "size", name, fid, n)
            for i in range(n):
                log.put("d", "unit", name, i, version)
            continue
        name = rnd.choice(sorted(files))
        f_id, n = files[name]
        path = os.path.join(d, name)
        if op < 0.20:
            log.put("i", "gone", name)
            os.unlink(path)
            dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            os.fsync(dfd)
            os.close(dfd)
            del files[name]
            log.put("d", "gone", name)
            continue
        fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
        if op < 0.30 and n > 1:
            new = rnd.randint(1, n - 1)
            log.put("i", "size", name, f_id, new)
            os.ftruncate(fd, new * unit)
            os.fdatasync(fd)
            files[name][1] = new
            log.put("d", "size", name, f_id, new)
        elif op < 0.45 and n < 64:
            new = n + rnd.randint(1, 4)
            log.put("i", "size", name, f_id, new)
            for i in range(n, new):
                log.put("i", "unit", name, i, version)
            for i in range(n, new):
                buf[:] = unit_bytes(f_id, i, version, unit)
                os.pwritev(fd, [buf], i * unit, RWF_ATOMIC if atomic else 0)
            os.fdatasync(fd)
            files[name][1] = new
            log.put("d", "size", name, f_id, new)
            for i in range(n, new):
                log.put("d", "unit", name, i, version)
        else:
            # Overwrites in place, the bulk of a database's writes: several
            # before one fdatasync, as a checkpoint does.
            idx = sorted(set(rnd.randrange(n) for _ in range(rnd.randint(1, 4))))
            for i in idx:
                log.put("i", "unit", name, i, version)
            for i in idx:
                buf[:] = unit_bytes(f_id, i, version, unit)
                os.pwritev(fd, [buf], i * unit, RWF_ATOMIC if atomic else 0)
            os.fdatasync(fd)
            for i in idx:
                log.put("d", "unit", name, i, version)
        os.close(fd)
    log.put("ops", ops)
    print("dbload: %d operations, unit %d bytes, %s" % (ops, unit, "RWF_ATOMIC" if atomic else "plain writes"))


def verify(d, logpath):
    unit = None
    atomic = False
    # name -> {"fid", "sizes": allowed sizes, "gone": allowed to be absent,
    #          "present": must exist, "units": {i: allowed versions},
    #          "durable": {i: durable version}}
    st = {}
    for line in open(logpath):
        w = line.split()
        if not w:
            continue
        if w[0] == "unit":
            unit, atomic = int(w[1]), w[2] == "1"
            continue
        if w[0] == "ops":
            continue
        kind, what, name = w[0], w[1], w[2]
        s = st.setdefault(name, {"fid": None, "sizes": set(), "absent_ok": True, "present": False,
                                 "units": {}, "durable": {}, "cur": 0})
        if what == "size":
            fid, n = int(w[3]), int(w[4])
            s["fid"] = fid
            if kind == "i":
                # Growing (a creation grows from 0) is unit by unit: each
                # direct write moves the size when it completes, so a cut
                # leaves any size in between.  A truncate is one change.
                if n > s["cur"]:
                    s["sizes"].update(range(s["cur"], n + 1))
                else:
                    s["sizes"].add(n)
            else:
                s["sizes"] = {n}
                s["cur"] = n
                s["present"], s["absent_ok"] = True, False
                for i in list(s["durable"]):
                    if i >= n:
                        del s["durable"][i]
        elif what == "unit":
            i, v = int(w[3]), int(w[4])
            if kind == "i":
                s["units"].setdefault(i, set()).add(v)
            else:
                s["units"][i] = {v}
                s["durable"][i] = v
        elif what == "gone":
            if kind == "i":
                s["absent_ok"] = True
            else:
                st[name] = {"fid": None, "sizes": set(), "absent_ok": True, "present": False,
                            "units": {}, "durable": {}, "cur": 0}
                st[name]["gone"] = True
    problems = []
    lost = torn = checked = 0
    for name, s in sorted(st.items()):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            if s["present"] and not s["absent_ok"]:
                problems.append("%s: gone, but its creation was durable" % name)
                lost += 1
            continue
        if s.get("gone") and not s["sizes"]:
            problems.append("%s: there, but its removal was durable" % name)
            continue
        size = os.path.getsize(path)
        if size % unit or size // unit not in s["sizes"]:
            problems.append("%s: size %d, allowed %s units of %d" % (name, size, sorted(s["sizes"]), unit))
            lost += 1
            continue
        with open(path, "rb") as f:
            data = f.read()
        for i in range(size // unit):
            u = data[i * unit:(i + 1) * unit]
            checked += 1
            heads = set()
            for k in range(0, unit, SECTOR):
                heads.add(u[k:k + HDR.size])
            allowed = s["units"].get(i, set())
            if len(heads) != 1:
                torn += 1
                problems.append("%s: unit %d holds %d different writes" % (name, i, len(heads)))
                continue
            head = heads.pop()
            if head == bytes(HDR.size):
                if i in s["durable"]:
                    lost += 1
                    problems.append("%s: unit %d is zeros, version %d was durable" % (name, i, s["durable"][i]))
                continue
            magic, fid, idx, v = HDR.unpack(head)
            if magic != MAGIC or fid != s["fid"] or idx != i:
                problems.append("%s: unit %d holds another unit's data (%s)" % (name, i, (magic, fid, idx)))
                lost += 1
                continue
            if i in s["durable"] and v < s["durable"][i]:
                lost += 1
                problems.append("%s: unit %d at version %d, %d was durable" % (name, i, v, s["durable"][i]))
            elif allowed and v not in allowed:
                problems.append("%s: unit %d at version %d, never written there" % (name, i, v))
    for p in problems[:20]:
        print("dbload verify: " + p)
    print(json.dumps({"files": len(st), "units": checked, "lost": lost, "torn": torn,
                      "problems": len(problems), "unit": unit, "atomic": atomic}))
    return 0 if not problems else 1


def main(argv):
    if len(argv) == 6 and argv[1] == "run":
        run(argv[2], argv[3], float(argv[4]), int(argv[5]))
        return 0
    if len(argv) == 4 and argv[1] == "verify":
        return verify(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
