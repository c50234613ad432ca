#!/bin/bash
# extalign devices on an atomic-write capable disk emulated by scsi_debug
# (atomic_wr=1 with a one-block granularity: a 4 KiB unit; Linux 6.11+): the
# device figures must equal sysfs and the kernel's statx of the node, and an
# ext4 on it must get what the kernel reports for a file there.  Skips where the module cannot be loaded (a
# container without /lib/modules, a kernel without CONFIG_SCSI_DEBUG).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd python3
command -v modprobe >/dev/null || skip "no modprobe: cannot load scsi_debug here"
[ -d /sys/module/scsi_debug ] && skip "scsi_debug is already loaded by someone else"
modprobe scsi_debug atomic_wr=1 atomic_wr_gran=1 atomic_wr_align=1 dev_size_mb=128 sector_size=4096 2>"$WORK/modprobe.err" ||
	skip "modprobe scsi_debug atomic_wr=1 failed: $(head -1 "$WORK/modprobe.err")"
unload() { sleep 1; modprobe -r scsi_debug 2>/dev/null || true; }
trap 'cleanup; unload' EXIT
udevadm settle 2>/dev/null || sleep 2

disk=
for d in /sys/block/sd*; do
	[ "$(cat "$d/device/model" 2>/dev/null | tr -d ' ')" = scsi_debug ] && disk=${d##*/}
done
[ -n "$disk" ] || fail "scsi_debug loaded but no disk appeared"
q=/sys/block/$disk/queue
[ -e "$q/atomic_write_unit_max_bytes" ] || skip "kernel has no atomic write sysfs files"
[ "$(cat "$q/atomic_write_unit_max_bytes")" != 0 ] || fail "scsi_debug atomic_wr=1 reports no atomic writes"

expect_exit 0 "$EXTALIGN" devices --json -o NAME,HW-MIN,HW-MAX,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX "/dev/$disk"
python3 - "$WORK/out" "$q" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
rd = lambda f: int(open(f"{sys.argv[2]}/atomic_write_{f}_bytes").read())
assert d["hw-min"] == rd("unit_min") and d["hw-max"] == rd("unit_max"), d
assert d["atomic"] == "yes" and d["awu-min"] == rd("unit_min") and d["awu-max"] == rd("unit_max"), d
# The kernel's own answer for the node agrees with sysfs.
assert d["statx"] == "yes" and (d["statx-min"], d["statx-max"]) == (d["awu-min"], d["awu-max"]), d
PY

mkfs.ext4 -q -F -b 4096 "/dev/$disk"
mnt=$WORK/mnt.scsi
mkdir -p "$mnt"
mount "/dev/$disk" "$mnt"
track_mount "$mnt"
expect_exit 0 "$EXTALIGN" devices --json --probe -o NAME,TYPE,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX "/dev/$disk"
python3 - "$WORK/out" <<'PY'
import json, sys
fs = json.load(open(sys.argv[1]))["devices"][0]["children"][0]
assert fs["type"] == "fs" and fs["atomic"] == "yes", fs
assert (fs["awu-min"], fs["awu-max"]) == (4096, 4096), fs
# An ext4 with atomic write support (6.13+) reports one block for a file.
if fs["statx"] == "yes":
    assert (fs["statx-min"], fs["statx-max"]) == (4096, 4096), fs
PY

# A kernel with the extalign ext4 series: a file with extsize + forcealign
# gets units up to the hint (within the device maximum), and the kernel's
# statx for it must say the same.  Other kernels refuse the hint: stop here.
touch "$mnt/db"
if ! "$EXTALIGN" set --extsize 16k --force "$mnt/db" >/dev/null 2>&1; then
	echo "ok (this kernel's ext4 has no extsize/forcealign: file rule not checked)"
	exit 0
fi
expect_exit 0 "$EXTALIGN" devices --json --probe -o NAME,TYPE,EXTSIZE,FORCEALIGN,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX "$mnt/db"
python3 - "$WORK/out" "$q" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["devices"][0]["children"][0]["children"][0]
dev_max = int(open(f"{sys.argv[2]}/atomic_write_unit_max_bytes").read())
want_max = min(16384, 1 << (dev_max.bit_length() - 1))
assert f["type"] == "file" and f["extsize"] == 16384 and f["forcealign"] is True, f
assert (f["atomic"], f["awu-min"], f["awu-max"]) == ("yes", 4096, want_max), f
assert (f["statx"], f["statx-min"], f["statx-max"]) == ("yes", 4096, want_max), f
PY
echo ok
