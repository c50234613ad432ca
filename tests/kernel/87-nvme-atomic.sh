#!/bin/bash
# Single-block RWF_ATOMIC direct writes on ext4 over an NVMe disk, the
# hardware most users have: the QEMU guest of kernel/qemu-test.sh has an
# emulated NVMe disk with 4 KiB blocks.  QEMU 7.2 reports no atomic write
# unit (AWUPF 0), so Linux gives the disk one-block units, and a file on
# our ext4 gets 4 KiB atomic writes.  UML has no NVMe: a skip there.
. "$(dirname "$0")/lib.sh"

nvme=
for b in /sys/block/nvme*; do
	[ -e "$b" ] && nvme=${b##*/} && break
done
[ -n "$nvme" ] || skip "no NVMe disk (the QEMU guest of kernel/qemu-test.sh has one)"
dev=/dev/$nvme
q=/sys/block/$nvme/queue
expect "$dev logical block size" "$(cat "$q/logical_block_size")" 4096
expect "$dev atomic unit min" "$(cat "$q/atomic_write_unit_min_bytes")" 4096
max=$(cat "$q/atomic_write_unit_max_bytes")
[ "$max" -ge 4096 ] || die "$dev atomic unit max $max, below one block"
ok "$dev atomic units 4096..$max"

fresh_ext4 "$dev" -b 4096
f=$MNT/f
: >"$f"
expect "statx of a regular file on NVMe" "$(kt statx "$f")" \
	"mask=1 attr=1 min=4096 max=4096 segments=1"
expect "4 KiB atomic write at 0" "$(kt awrite "$f" 0 4096)" "ok 4096"
filled "$f" 0 4096 || die "data of the atomic write did not read back"
ok "atomic write reads back"
expect "4 KiB atomic write extending the file" "$(kt awrite "$f" 1048576 4096)" "ok 4096"
expect "8 KiB atomic write (above the file's unit)" "$(kt awrite "$f" 8192 8192)" "err EINVAL"
expect "misaligned atomic write" "$(kt awrite "$f" 2048 4096)" "err EINVAL"
expect "buffered atomic write" "$(kt awrite "$f" 0 4096 buf)" "err EOPNOTSUPP"
remount "$dev"
filled "$f" 1048576 4096 || die "the extending atomic write did not survive a remount"
ok "atomic writes survive a remount"
