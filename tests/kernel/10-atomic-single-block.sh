#!/bin/bash
# Spec patches 1 and 2: single-block RWF_ATOMIC direct writes on ext4 over an
# atomic-capable disk (scsi_debug, 4 KiB sectors, atomic units 4..64 KiB).
# Each one must reach the disk as a WRITE ATOMIC(16) command (the scsi
# tracepoint), and a plain direct write must not.
. "$(dirname "$0")/lib.sh"

sd=$(scsi_disk) || die "no scsi_debug disk"
[ "$(cat "/sys/block/${sd#/dev/}/queue/atomic_write_unit_max_bytes")" -gt 0 ] ||
	die "$sd does not advertise atomic writes"

fresh_ext4 "$sd" -b 4096
dmesg | grep -q "supports atomic writes: unit min 4096, unit max 4096" ||
	die "no atomic write message at mount: $(dmesg | grep EXT4-fs | tail -3)"
ok "mount logs the atomic unit range"

f=$MNT/f
: >"$f"
expect "statx of a regular file" "$(kt statx "$f")" \
	"mask=1 attr=1 min=4096 max=4096 segments=1"
mkdir "$MNT/d"
expect "statx of a directory" "$(kt statx "$MNT/d")" \
	"mask=0 attr=0 min=0 max=0 segments=0"

awrite_dev "4 KiB atomic write at 0" "$f" 0 4096
filled "$f" 0 4096 || die "data of the atomic write did not read back"
ok "atomic write reads back"
awrite_dev "4 KiB atomic write extending the file" "$f" 1048576 4096
expect "size after the extending write" "$(stat -c %s "$f")" 1052672
awrite_dev "4 KiB atomic overwrite" "$f" 0 4096
xfs_io -c 'falloc 65536 65536' "$f" || die "falloc"
awrite_dev "4 KiB atomic write into unwritten blocks" "$f" 69632 4096
filled "$f" 69632 4096 || die "data of the unwritten-range write did not read back"
# The same direct write without RWF_ATOMIC is no atomic command at the
# disk: the count above tells the two apart.
pwrite_dev "4 KiB plain direct write" "$f" 4096 4096
pwrite_dev "4 KiB plain direct write into unwritten blocks" "$f" 73728 4096

expect "8 KiB atomic write (above unit max)" "$(kt awrite "$f" 8192 8192)" "err EINVAL"
expect "2 KiB atomic write (below unit min)" "$(kt awrite "$f" 2048 2048)" "err EINVAL"
expect "misaligned atomic write" "$(kt awrite "$f" 2048 4096)" "err EINVAL"
expect "12 KiB atomic write (not a power of two)" "$(kt awrite "$f" 0 12288)" "err EINVAL"
expect "buffered atomic write" "$(kt awrite "$f" 0 4096 buf)" "err EOPNOTSUPP"

# No atomic support on the ubd disk: nothing advertised, RWF_ATOMIC refused.
umount "$MNT"
fresh_ext4 "$UBD" -b 4096
: >"$MNT/g"
expect "statx on a disk without atomic writes" "$(kt statx "$MNT/g")" \
	"mask=1 attr=0 min=0 max=0 segments=0"
expect "atomic write on a disk without atomic writes" \
	"$(kt awrite "$MNT/g" 0 4096)" "err EOPNOTSUPP"
