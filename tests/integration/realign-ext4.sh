#!/bin/bash
# realign where the kernel keeps no hint: this kernel's ext4 accepts
# FS_IOC_FSSETXATTR extsize and keeps nothing.  realign must say so plainly
# (exit 4) and change nothing; on tmpfs there are no hints at all.
. "$(dirname "$0")/lib.sh"
need_cmd python3
use_valgrind
mnt=$(mkfs_mount ext4 100)
STATE=$WORK/state
R=("$EXTALIGN" realign --state-dir "$STATE")

dd if=/dev/urandom of="$mnt/f" bs=1M count=2 status=none
truncate -s 1G "$mnt/empty"
h=$(sha256sum <"$mnt/f")
ino=$(stat -c %i "$mnt/f")

expect_exit 4 "${R[@]}" --extsize 64k "$mnt/f"
expect_in err "ext4 accepts the extent size hint and keeps nothing"
expect_exit 4 "${R[@]}" --extsize 64k --dry-run "$mnt/f"
expect_in err "keeps nothing"
expect_exit 4 "${R[@]}" --extsize 64k --json "$mnt"
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for f in d["files"]:
    if f["path"].endswith("lost+found"):
        continue
    assert f["outcome"] == "unsupported" and f["fstype"] == "ext4", f
    assert f["step"] == "hint", f
assert d["summary"]["unsupported"] == 2 and d["summary"]["done"] == 0, d' "$WORK/out" ||
	fail "ext4 JSON"
[ "$(sha256sum <"$mnt/f")" = "$h" ] && [ "$(stat -c %i "$mnt/f")" = "$ino" ] ||
	fail "ext4 file changed"
find "$mnt" -name '.extalign-realign.*' | grep -q . && fail "leftover on ext4"

# tmpfs has no extent size hints at all.
t=$WORK/tmpfs
mkdir "$t"
mount -t tmpfs -o size=16m none "$t" || skip "cannot mount tmpfs"
track_mount "$t"
echo data >"$t/f"
expect_exit 4 "${R[@]}" --extsize 64k "$t/f"
expect_in err "tmpfs has no extent size hints"
echo ok
