# FIEMAP as "xfs_io -c 'fiemap -v'" prints it, for the realign tests
# (realign-shapes.py, realign-stripe.sh: sys.path.insert the test directory).
import subprocess


def extents(path):
    """The mapped extents of PATH: (start, end, physical start, flags), bytes."""
    out = subprocess.run(["xfs_io", "-c", "fiemap -v", path], capture_output=True, text=True,
                         check=True).stdout.splitlines()[2:]
    ext = []
    for line in out:
        f = line.split()
        if f[2] == "hole":
            continue
        lo, hi = (int(x) * 512 for x in f[1].strip("[]:").split(".."))
        ext.append((lo, hi + 512, int(f[2].split("..")[0]) * 512, int(f[4], 16)))
    return ext


def runs(path):
    """Runs of extents, neighbours contiguous in the file and on disk merged
    (FIEMAP splits written from unwritten): [start, end, disk start, disk end]."""
    r = []
    for lo, hi, ph, _ in extents(path):
        if r and r[-1][1] == lo and r[-1][3] == ph:
            r[-1][1], r[-1][3] = hi, ph + hi - lo
        else:
            r.append([lo, hi, ph, ph + hi - lo])
    return r
