#!/bin/bash
# Issue 17: on stripe-aligned XFS (su=64k, swalloc) a sparse file of small
# runs realigns with extents on unit boundaries, on disk too, never EIO;
# where no aligned free space is left, the verdict says that.
# Issue 17 too: the original's unwritten preallocation survives, inside and
# beyond end of file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realign.bash"
mnt=$(mkfs_mount xfs 1024 -d su=64k,sw=1)
mount -o remount,swalloc "$mnt"

# on_units FILE: true when every run of extents (neighbours contiguous in
# the file and on disk merged, as FIEMAP splits written from unwritten)
# starts on a 64k boundary in the file and on the disk, per xfs_io fiemap.
on_units() {
	python3 - "$1" "$TOP/tests/integration" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import fiemap
bad = [r for r in fiemap.runs(sys.argv[1]) if r[0] % 65536 or r[2] % 65536]
if bad:
    print("off the unit (bytes: file start, end, disk start, end):", bad, file=sys.stderr)
    sys.exit(1)
PY
}

# small_runs FILE: 4 KiB of data at 12K, 36K, 60K, 84K, nothing else.
small_runs() {
	rm -f "$1"
	for o in 12 36 60 84; do
		xfs_io -f -c "pwrite -q -S 0x$((o % 251 + 1)) ${o}k 4k" "$1"
	done
}

for mode in direct buffered; do
	f=$mnt/runs-$mode
	small_runs "$f"
	sync
	h=$(sha256sum <"$f")
	opt=()
	[ $mode = buffered ] && opt=(--buffered)
	"${R[@]}" --extsize 64k --json "${opt[@]}" "$f" >"$WORK/out" 2>"$WORK/err" || {
		cat "$WORK/out" "$WORK/err" >&2
		fail "$mode: sparse small runs on stripe-aligned XFS not realigned"
	}
	grep -q 'Input/output error' "$WORK/err" "$WORK/out" && fail "$mode: EIO reported"
	python3 -c 'import json,sys
f = json.load(open(sys.argv[1]))["files"][0]
assert f["outcome"] == "done" and f["logical"] == "aligned", f
assert f["physical"] == "aligned" and f["physical_guaranteed"], f' "$WORK/out" ||
		fail "$mode: verdict"
	[ "$(sha256sum <"$f")" = "$h" ] || fail "$mode: content changed"
	on_units "$f" || fail "$mode: extents off the unit"
	[ "$(xfs_extsize "$f")" = 65536 ] || fail "$mode: no hint"
done

# Free space in 16k pieces only (reserve pool emptied, every other 16k of
# a filler punched): no aligned 64k is left.  The copy cannot be placed on
# the unit; the verdict says so, not EIO, and the file stays as it was.
fmnt=$(mkfs_mount xfs 1024 -m reflink=0,finobt=0,rmapbt=0 -d su=64k,sw=1)
mount -o remount,swalloc "$fmnt"
xfs_io -x -c 'resblks 0' "$fmnt" >/dev/null
f=$fmnt/runs
small_runs "$f"
sync
h=$(sha256sum <"$f")
python3 - "$fmnt/fill" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
size = 0
for piece in (1 << 20, 65536, 4096):
    while libc.fallocate(fd, 0, size, piece) == 0:
        size += piece
PUNCH = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
for off in range(0, size, 32768):
    libc.fallocate(fd, PUNCH, off, 16384)
PY
rc=0
"${R[@]}" --extsize 64k --json "$f" >"$WORK/out" 2>"$WORK/err" || rc=$?
grep -q 'Input/output error' "$WORK/err" "$WORK/out" && fail "fragmented: EIO reported"
python3 -c 'import json,sys
f = json.load(open(sys.argv[1]))["files"][0]
assert (f["outcome"], f.get("reason")) == ("skipped", "copy-misaligned"), f' "$WORK/out" ||
	{ cat "$WORK/out" "$WORK/err" >&2; fail "fragmented: verdict"; }
[ "$rc" = 1 ] || fail "fragmented: exit $rc, expected 1 (left as it was)"
"${R[@]}" --extsize 64k "$f" >"$WORK/out" 2>"$WORK/err" || true
expect_in out "skipped: the copy came out misaligned too (no aligned free space)"
[ "$(sha256sum <"$f")" = "$h" ] || fail "fragmented: content changed"
[ "$(xfs_extsize "$f")" = 0 ] || fail "fragmented: the file was replaced"
[ "$(find "$fmnt" "$STATE" -name '.extalign-realign.*' | wc -l)" = 0 ] || fail "fragmented: leftovers"

# Preallocation: unwritten extents inside EOF and beyond it (fallocate
# --keep-size) are still allocated and unwritten after realignment.
p=$mnt/prealloc
rm -f "$p"
xfs_io -f -c 'falloc 0 4m' -c 'pwrite -q -S 0x5a 1m 256k' -c 'falloc -k 4m 2m' "$p"
sync
h=$(sha256sum <"$p")
blocks_before=$(stat -c %b "$p")
expect_exit 0 "${R[@]}" --extsize 64k "$p"
[ "$(sha256sum <"$p")" = "$h" ] || fail "prealloc: content changed"
[ "$(stat -c %s "$p")" = $((4 << 20)) ] || fail "prealloc: size changed"
blocks_after=$(stat -c %b "$p")
[ "$blocks_after" -ge "$blocks_before" ] ||
	fail "prealloc: allocation dropped from $blocks_before to $blocks_after sectors"
python3 - "$p" "$TOP/tests/integration" <<'PY' || fail "prealloc: unwritten ranges not kept"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import fiemap
out = fiemap.extents(sys.argv[1])
unwritten = written = 0
beyond = 0
for lo, hi, _, flags in out:
    if flags & 0x800:
        unwritten += hi - lo
        if hi > 4 << 20:
            beyond += hi - max(lo, 4 << 20)
    else:
        written += hi - lo
assert written <= 512 << 10, (written, out)      # the data, not zero-filled
assert unwritten >= (4 << 20) - (256 << 10) + (2 << 20) - (128 << 10), (unwritten, out)
assert beyond >= (2 << 20), (beyond, out)         # kept past EOF
PY
echo ok
