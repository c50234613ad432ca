#!/bin/bash
# extalign devices on an atomic-write capable disk emulated by scsi_debug
# (Linux 6.11+): the device figures must equal sysfs and the kernel's statx
# of the node, and an ext4 on it must get what the kernel reports for a file
# there, with --probe for a file with extsize and forcealign too.
#
# On the host it loads scsi_debug itself (atomic_wr=1, a one-block unit) and
# skips where the module cannot be loaded (a container without /lib/modules,
# a kernel without CONFIG_SCSI_DEBUG).  With EXTALIGN_SCSI_DEBUG_DISK=sda
# (or /dev/sda) it uses that disk as it is instead: the UML guest of
# tests/kernel/85-devices-scsi-debug.sh has scsi_debug built in, configured
# on the kernel command line (4 KiB to 64 KiB units).  The disk is
# reformatted.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd python3

if [ -n "${EXTALIGN_SCSI_DEBUG_DISK:-}" ]; then
	disk=${EXTALIGN_SCSI_DEBUG_DISK#/dev/}
	[ -b "/dev/$disk" ] || fail "EXTALIGN_SCSI_DEBUG_DISK=$EXTALIGN_SCSI_DEBUG_DISK: no such block device"
else
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
fi
q=/sys/block/$disk/queue
[ -e "$q/atomic_write_unit_max_bytes" ] || skip "kernel has no atomic write sysfs files"
hw_min=$(cat "$q/atomic_write_unit_min_bytes")
hw_max=$(cat "$q/atomic_write_unit_max_bytes")
[ "$hw_max" != 0 ] || fail "scsi_debug atomic_wr=1 reports no atomic writes"
echo "$disk: sysfs atomic units $hw_min..$hw_max"

expect_exit 0 "$EXTALIGN" devices --json -o NAME,HW-MIN,HW-MAX,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX "/dev/$disk"
python3 - "$WORK/out" "$q" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
rd = lambda f: int(open(f"{sys.argv[2]}/atomic_write_{f}_bytes").read())
assert d["hw_min"] == rd("unit_min") and d["hw_max"] == rd("unit_max"), d
assert d["atomic"] == "yes" and d["awu_min"] == rd("unit_min") and d["awu_max"] == rd("unit_max"), d
# The kernel's own answer for the node agrees with sysfs.
assert d["statx"] == "yes" and (d["statx_min"], d["statx_max"]) == (d["awu_min"], d["awu_max"]), d
PY
# The table, in bytes: the same figures.
expect_exit 0 "$EXTALIGN" devices -b -n -o NAME,HW-MIN,HW-MAX,ATOMIC,AWU-MIN,AWU-MAX "/dev/$disk"
read -r name t_min t_max t_atomic t_awmin t_awmax <"$WORK/out"
[ "$name $t_min $t_max $t_atomic $t_awmin $t_awmax" = "$disk $hw_min $hw_max yes $hw_min $hw_max" ] ||
	fail "table: '$(head -1 "$WORK/out")', sysfs says $hw_min..$hw_max"

mkfs.ext4 -q -F -E nodiscard -b 4096 "/dev/$disk"
mnt=$WORK/mnt.scsi
mkdir -p "$mnt"
mount "/dev/$disk" "$mnt"
track_mount "$mnt"
expect_exit 0 "$EXTALIGN" devices --json --probe -o NAME,TYPE,EXTSIZE,FORCEALIGN,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX,PROBE,REASON "/dev/$disk"
cp "$WORK/out" "$WORK/probe.json"
# Whether this kernel keeps extsize + forcealign, asked with our own ioctl.
kept=$(python3 - "$mnt" "$hw_max" <<'PY'
import fcntl, os, struct, sys
size = min(1 << (int(sys.argv[2]).bit_length() - 1), 1 << 20)
fd = os.open(sys.argv[1], os.O_TMPFILE | os.O_RDWR, 0o600)
x = list(struct.unpack("IIIII8s", fcntl.ioctl(fd, 0x801C581F, bytes(28))))
x[0] |= 0x100800
x[1] = size
try:
    fcntl.ioctl(fd, 0x401C5820, struct.pack("IIIII8s", *x))
except OSError:
    pass
got = struct.unpack("IIIII8s", fcntl.ioctl(fd, 0x801C581F, bytes(28)))
print("yes" if got[0] & 0x100800 == 0x100800 and got[1] == size else "no")
PY
)
echo "kernel keeps extsize + forcealign: $kept"
python3 - "$WORK/probe.json" "$kept" "$hw_max" <<'PY'
import json, sys
fs = json.load(open(sys.argv[1]))["devices"][0]["children"][0]
kept, dev_max = sys.argv[2] == "yes", int(sys.argv[3])
assert fs["type"] == "fs" and fs["atomic"] == "yes", fs
if kept:
    # The probe file has the device's unit as its hint: the whole range.
    unit = min(1 << (dev_max.bit_length() - 1), 1 << 20)
    assert fs["probe"] == "hinted", fs
    assert fs["extsize"] == unit and fs["forcealign"] is True, fs
    assert (fs["awu_min"], fs["awu_max"]) == (4096, unit), fs
    assert (fs["statx"], fs["statx_min"], fs["statx_max"]) == ("yes", 4096, unit), fs
else:
    # A plain file: one block, and the row says it was a plain file.
    assert fs["probe"] == "plain" and fs["forcealign"] is False, fs
    assert "probe: plain file, " in fs["reason"], fs
    assert (fs["awu_min"], fs["awu_max"]) == (4096, 4096), fs
    # An ext4 with atomic write support (6.13+) reports one block for a file.
    if fs["statx"] == "yes":
        assert (fs["statx_min"], fs["statx_max"]) == (4096, 4096), fs
print("probe:", fs["probe"], fs["statx"], fs["statx_min"], fs["statx_max"], "-", fs["reason"])
PY

# A kernel with the extalign ext4 series: a file with extsize + forcealign
# gets units up to the hint (within the device maximum), and the kernel's
# statx for it must say the same.  Other kernels refuse the hint: stop here.
touch "$mnt/db"
if [ "$kept" != yes ]; then
	expect_exit 4 "$EXTALIGN" set --extsize 16k --force "$mnt/db"
	expect_in err "not support"
	echo "ok (this kernel's ext4 has no extsize/forcealign: file rule not checked)"
	exit 0
fi
expect_exit 0 "$EXTALIGN" set --extsize 16k --force "$mnt/db"
expect_exit 0 "$EXTALIGN" devices --json --probe -o NAME,TYPE,EXTSIZE,FORCEALIGN,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX "$mnt/db"
python3 - "$WORK/out" "$q" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["devices"][0]["children"][0]["children"][0]
dev_max = int(open(f"{sys.argv[2]}/atomic_write_unit_max_bytes").read())
want_max = min(16384, 1 << (dev_max.bit_length() - 1))
assert f["type"] == "file" and f["extsize"] == 16384 and f["forcealign"] is True, f
assert (f["atomic"], f["awu_min"], f["awu_max"]) == ("yes", 4096, want_max), f
assert (f["statx"], f["statx_min"], f["statx_max"]) == ("yes", 4096, want_max), f
PY
echo ok
