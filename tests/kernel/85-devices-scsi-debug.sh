#!/bin/bash
# extalign devices against the guest's built-in scsi_debug disk (4 KiB
# sectors, atomic writes of 4 KiB to 64 KiB, see kernel/boot.sh): the host
# suite's tests/integration/devices-scsi-debug.sh skips on the host (no
# modprobe there), so it runs here, given the disk, with the programs of
# this checkout.  Its checks: device figures equal sysfs and statx of the
# node, in JSON and in the table; an ext4 on the disk gets one block, and
# with --probe a file with extsize + forcealign the device's whole unit
# range where the kernel keeps them.
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
for p in extalign extalignd; do
	[ -x "$TOP/build/$p" ] || die "$TOP/build/$p is not built: run 'make' in $TOP first"
done
command -v python3 >/dev/null || die "python3 is missing on the host root the guest runs on"

sd=$(scsi_disk) || die "no scsi_debug disk"
q=/sys/block/${sd#/dev/}/queue
# The disk kernel/boot.sh configures, as sysfs must show it.
expect "$sd atomic_write_unit_min_bytes" "$(cat "$q/atomic_write_unit_min_bytes")" 4096
expect "$sd atomic_write_unit_max_bytes" "$(cat "$q/atomic_write_unit_max_bytes")" 65536

# The integration test reformats the disk and mounts it under its own
# work directory; e2fsck -fn of it follows this test (lib.sh cleanup).
echo "$sd" >>"$DEVS_FILE"
EXTALIGN=$TOP/build/extalign EXTALIGN_SCSI_DEBUG_DISK=$sd \
	bash "$TOP/tests/integration/devices-scsi-debug.sh"
