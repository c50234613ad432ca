#!/bin/bash
# The guest is up: the ubd and scsi_debug disks are there, and the scsi_debug
# disk advertises atomic writes with the limits check.sh asked for.
. "$(dirname "$0")/lib.sh"

[ -b "$UBD" ] || die "no $UBD"
sd=$(scsi_disk) || die "no scsi_debug disk"
q=/sys/block/${sd#/dev/}/queue
for f in logical_block_size atomic_write_unit_min_bytes \
	 atomic_write_unit_max_bytes atomic_write_boundary_bytes \
	 atomic_write_max_bytes; do
	echo "$sd $f: $(cat "$q/$f")"
done
expect "logical block size" "$(cat "$q/logical_block_size")" 4096
[ "$(cat "$q/atomic_write_unit_max_bytes")" -ge 65536 ] ||
	die "scsi_debug atomic unit max below 64 KiB"
ok "scsi_debug disk $sd is atomic-write capable"
