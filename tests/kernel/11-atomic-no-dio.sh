#!/bin/bash
# Issue 34 (minor): an inode that takes no direct I/O can take no atomic
# write: statx must not advertise one, and RWF_ATOMIC is refused at open
# (EOPNOTSUPP), not accepted by statx and then refused by the write.  Here
# data journalling, for the whole filesystem and for one file (chattr +j,
# which counts only on a filesystem mounted with nodelalloc).
. "$(dirname "$0")/lib.sh"

sd=$(scsi_disk) || die "no scsi_debug disk"
fresh_ext4 "$sd" -b 4096
# chattr +j counts only without delayed allocation.
umount "$MNT"
mount -t ext4 -o nodelalloc "$sd" "$MNT" || die "mount -o nodelalloc"
f=$MNT/f
: >"$f"
expect "statx of a plain file" "$(kt statx "$f")" \
	"mask=1 attr=1 min=4096 max=4096 segments=1"
chattr +j "$f" || die "chattr +j"
expect "statx of a file with data journalling" "$(kt statx "$f")" \
	"mask=1 attr=0 min=0 max=0 segments=0"
expect "atomic write to a file with data journalling" \
	"$(kt awrite "$f" 0 4096)" "err EOPNOTSUPP"

umount "$MNT"
mount -t ext4 -o data=journal "$sd" "$MNT" || die "mount -o data=journal"
g=$MNT/g
: >"$g"
expect "statx with data=journal" "$(kt statx "$g")" \
	"mask=1 attr=0 min=0 max=0 segments=0"
expect "atomic write with data=journal" "$(kt awrite "$g" 0 4096)" "err EOPNOTSUPP"
umount "$MNT"
exit 0
