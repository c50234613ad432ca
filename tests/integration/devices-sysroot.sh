#!/bin/bash
# extalign devices --sysroot on the captured trees in tests/data/sysroot:
# the verdicts and reasons the README there lists, the tree shape, -o and
# errors.  Needs no root.
. "$(dirname "$0")/lib.sh"
need_cmd python3
use_valgrind
S618=$TOP/tests/data/sysroot/6.18
S61=$TOP/tests/data/sysroot/6.1

expect_exit 0 "$EXTALIGN" devices --sysroot "$S618" --json -o NAME,TYPE,MAJ:MIN,START,ATOMIC,AWU-MIN,AWU-MAX,HW-MIN,BOUNDARY,STATX,REASON
python3 - "$WORK/out" <<'PY'
import json, sys
tree = json.load(open(sys.argv[1]))["devices"]
want = {
    # name: (parent, atomic, awu_min, awu_max, reason substring)
    "dm-0": (None, "yes", 4096, 16384, "device"),
    "loop0": (None, "none", 0, 0, "no atomic"),
    "nvme0n1": (None, "yes", 4096, 16384, "device"),
    "nvme0n1p1": ("nvme0n1", "yes", 4096, 16384, "aligned"),
    "nvme0n1p2": ("nvme0n1", "yes", 4096, 16384, "aligned"),
    "nvme1n1": (None, "yes", 4096, 65536, "device"),
    "nvme1n1p1": ("nvme1n1", "none", 0, 0, "not aligned to atomic boundary"),
    "sda": (None, "yes", 4096, 65536, "device"),
    "sda1": ("sda", "none", 0, 0, "not aligned to atomic unit"),
    "sda2": ("sda", "yes", 4096, 65536, "aligned"),
    "vda": (None, "none", 0, 0, "no atomic"),
}
seen = {}
def walk(nodes, parent):
    for n in nodes:
        seen[n["name"]] = (parent, n)
        walk(n.get("children", []), n["name"])
walk(tree, None)
if sorted(seen) != sorted(want):
    sys.exit(f"FAIL: rows {sorted(seen)}")
for name, (parent, atomic, lo, hi, why) in want.items():
    p, n = seen[name]
    got = (p, n["atomic"], n["awu_min"], n["awu_max"])
    if got != (parent, atomic, lo, hi) or why not in n["reason"]:
        sys.exit(f"FAIL: {name}: {got} {n['reason']!r}")
    # A captured tree has no device nodes: statx is not asked, not "unsupported".
    if n["statx"] is not None:
        sys.exit(f"FAIL: {name}: statx {n['statx']!r} from a sysroot")
# JSON types: numbers are numbers, the partition offset in bytes.
n = seen["sda1"][1]
assert n["start"] == 63 * 512 and n["hw_min"] == 4096 and n["maj_min"] == "8:1", n
assert seen["nvme1n1p1"][1]["boundary"] == 65536
assert seen["sda"][1]["start"] is None
PY

# The 6.1 tree: no atomic_write_* files is "unsupported", numbers are null.
expect_exit 0 "$EXTALIGN" devices --sysroot "$S61" --json -o NAME,ATOMIC,HW-MIN,AWU-MAX
python3 - "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"]
rows = [d[0], d[0]["children"][0]]
assert [r["name"] for r in rows] == ["sda", "sda1"], rows
for r in rows:
    assert r["atomic"] == "unsupported" and r["hw_min"] is None and r["awu_max"] is None, r
PY

# A disk argument brings its partitions, a partition comes alone.
expect_exit 0 "$EXTALIGN" devices --sysroot "$S618" -n -o NAME sda
[ "$(tr -d ' |`-' <"$WORK/out" | tr '\n' ' ')" = "sda sda1 sda2 " ] || fail "sda rows: $(cat "$WORK/out")"
expect_exit 0 "$EXTALIGN" devices --sysroot "$S618" -n -o NAME,ATOMIC /dev/nvme1n1p1
[ "$(cat "$WORK/out")" = "nvme1n1p1 none" ] || fail "nvme1n1p1 row: $(cat "$WORK/out")"

# Table sizes as lsblk prints them; -b for bytes.
expect_exit 0 "$EXTALIGN" devices --sysroot "$S618" -n -o NAME,HW-MAX,AWU-MAX nvme1n1p1
[ "$(tr -s ' ' <"$WORK/out")" = "nvme1n1p1 64K 0" ] || fail "table: $(cat "$WORK/out")"
expect_exit 0 "$EXTALIGN" devices --sysroot "$S618" -b -n -o NAME,HW-MAX nvme0n1p1
[ "$(tr -s ' ' <"$WORK/out")" = "nvme0n1p1 16384" ] || fail "bytes: $(cat "$WORK/out")"
# -o +COL adds to the defaults.
expect_exit 0 "$EXTALIGN" devices --sysroot "$S618" -o +START sda1
head -1 "$WORK/out" | grep -q 'REASON.*START' || fail "-o + did not append: $(head -1 "$WORK/out")"
expect_in out "32256" # not a multiple of 1K: plain bytes

# Errors: unknown names, a missing sysroot.
expect_exit 3 "$EXTALIGN" devices --sysroot "$S618" nvme9n1 sda2
expect_in err "nvme9n1: no such block device in the sysroot"
expect_in out "sda2"
expect_exit 3 "$EXTALIGN" devices --sysroot "$WORK/nothing"
expect_in err "$WORK/nothing/sys/block"
echo ok
