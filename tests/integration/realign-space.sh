#!/bin/bash
# Issue 21 item 1: realign checks the free space a copy needs before it
# starts (as e4defrag does), -n shows the bytes to copy and the space
# needed, and the summary tells what was copied, also into copies that
# were thrown away.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realign.bash"
mnt=$(mkfs_mount xfs 400)

f=$mnt/big
dd if=/dev/urandom of="$f" bs=1M count=120 status=none
# A hole in the middle: not copied, not needed.
dd if=/dev/urandom of="$f" bs=1M count=20 seek=200 conv=notrunc status=none
sync
h=$(sha256sum <"$f")
# Leave about 100 MiB free: less than the 140 MiB of data.
avail=$(($(df -B1 --output=avail "$mnt" | tail -1)))
xfs_io -f -c "falloc 0 $((avail - 100 * MiB))" "$mnt/filler"
free=$(($(df -B1 --output=avail "$mnt" | tail -1)))

# -n: what it would copy and what that needs, and that it would not fit.
expect_exit 1 "${R[@]}" --extsize 64k --dry-run --json "$f"
python3 - "$WORK/out" "$free" <<'PY' || fail "dry run JSON"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][0]
MiB = 1 << 20
assert (f["outcome"], f["reason"]) == ("skipped", "no-space"), f
assert f["to_copy"] == 140 * MiB, f
assert 140 * MiB <= f["space_needed"] <= 142 * MiB, f
assert abs(f["space_free"] - int(sys.argv[2])) < 4 * MiB, f
PY
expect_exit 1 "${R[@]}" --extsize 64k "$f"
expect_in out "skipped: not enough free space for the copy (needs 140."
expect_in out "realigned 0 of 1 file (0B copied"
grep -q "discarded" "$WORK/out" && fail "a copy was started and thrown away"
[ "$(sha256sum <"$f")" = "$h" ] || fail "content changed"
[ "$(xfs_extsize "$f")" = 0 ] || fail "the file was replaced"
[ "$(($(df -B1 --output=avail "$mnt" | tail -1)))" -ge $((free - MiB)) ] ||
	fail "space was used by a refused copy"

# With room: -n shows the numbers in words, the real run copies exactly the data.
rm "$mnt/filler"
# XFS frees an unlinked file's blocks in the background (inodegc), so
# statfs may not show them at once: wait until it does (10 s at most).
for _ in $(seq 100); do
	[ "$(($(df -B1 --output=avail "$mnt" | tail -1)))" -ge $((200 * MiB)) ] && break
	sync -f "$mnt"
	sleep 0.1
done
expect_exit 0 "${R[@]}" --extsize 64k --dry-run "$f"
expect_in out "$f: would realign (hint and extents): copy 140.0M, needs 140."
expect_in out "would realign 1 of 1 file (140.0M to copy, at most 140."
expect_exit 0 "${R[@]}" --extsize 64k --json "$f"
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["files"][0]["outcome"] == "done", d
assert d["summary"]["copied"] == 140 << 20 and d["summary"]["discarded"] == 0, d' "$WORK/out" ||
	fail "summary of a real run"
[ "$(sha256sum <"$f")" = "$h" ] || fail "content changed by the realignment"
echo ok
