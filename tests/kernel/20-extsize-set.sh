#!/bin/bash
# Spec patch 4: the extent size hint through FS_IOC_FSGETXATTR/FSSETXATTR,
# every SET rule with its errno, GET reporting, persistence.
. "$(dirname "$0")/lib.sh"

EXTSIZE=0x800 EXTSZINHERIT=0x1000

fresh_ext4 "$UBD" -b 4096
f=$MNT/f
: >"$f"
expect "no hint on a new file" "$(kt getx "$f")" "xflags=0x0 extsize=0"

set_extsize "$f" 64k || die "extsize 64k"
if xfs_io -c extsize "$f" 2>&1 | grep -q "foreign file"; then
	echo "note: this xfs_io runs extsize on XFS only, using ktool"
else
	expect "xfs_io reads the hint back" "$(xfs_io -c extsize "$f")" "[65536] $f"
fi
expect "GET reports FS_XFLAG_EXTSIZE" "$(kt getx "$f")" "xflags=0x800 extsize=65536"
expect "changing the hint of an empty file" "$(kt setx "$f" $EXTSIZE 16384)" ok
expect "hint after the change" "$(extsize "$f")" 16384
expect "clearing (no flag, size 0)" "$(kt setx "$f" 0 0)" ok
expect "GET after clearing" "$(kt getx "$f")" "xflags=0x0 extsize=0"
expect "one block is a valid hint" "$(kt setx "$f" $EXTSIZE 4096)" ok
expect "32 MiB, the largest aligned allocation, is a valid hint" \
	"$(kt setx "$f" $EXTSIZE $((32 << 20)))" ok
kt setx "$f" 0 0 >/dev/null

# The rules, each with its errno.
expect "not a multiple of the block size" "$(kt setx "$f" $EXTSIZE 6144)" "err EINVAL"
expect "not a power of two in blocks" "$(kt setx "$f" $EXTSIZE 12288)" "err EINVAL"
expect "larger than a block group" "$(kt setx "$f" $EXTSIZE $((256 << 20)))" "err EINVAL"
# Hints that mballoc can never align could never take effect (issue 22).
expect "a whole block group (over mballoc's 32 MiB)" \
	"$(kt setx "$f" $EXTSIZE $((128 << 20)))" "err EINVAL"
expect "64 MiB (over mballoc's 32 MiB)" "$(kt setx "$f" $EXTSIZE $((64 << 20)))" "err EINVAL"
expect "failed SETs leave no hint" "$(kt getx "$f")" "xflags=0x0 extsize=0"
# The VFS (fileattr_set_prepare) turns FS_XFLAG_EXTSIZE with size 0 into a
# plain clear before ext4 sees it, as for XFS.
expect "FS_XFLAG_EXTSIZE with size 0 clears" "$(kt setx "$f" $EXTSIZE 0)" ok
# Directories take FS_XFLAG_EXTSZINHERIT (70-inherit.sh), not a hint of
# their own.
mkdir "$MNT/d"
expect "directory (FS_XFLAG_EXTSIZE)" "$(kt setx "$MNT/d" $EXTSIZE 65536)" "err EINVAL"
expect "directory still has no hint" "$(kt getx "$MNT/d")" "xflags=0x0 extsize=0"
expect "regular file (FS_XFLAG_EXTSZINHERIT)" "$(kt setx "$f" $EXTSZINHERIT 65536)" "err EINVAL"

echo data >"$MNT/withdata"
expect "file with data" "$(kt setx "$MNT/withdata" $EXTSIZE 65536)" "err EINVAL"
xfs_io -f -c 'pwrite -q 0 4096' "$MNT/delalloc"
expect "file with delayed allocation only" "$(kt setx "$MNT/delalloc" $EXTSIZE 65536)" "err EINVAL"
xfs_io -f -c 'falloc -k 0 65536' "$MNT/prealloc"
expect "size 0 but preallocated blocks" "$(kt setx "$MNT/prealloc" $EXTSIZE 65536)" "err EINVAL"
xfs_io -f -c 'truncate 1m' "$MNT/sparse"
expect "sparse file with a size" "$(kt setx "$MNT/sparse" $EXTSIZE 65536)" "err EINVAL"

# A hint set while empty survives writes, other attribute changes, remount.
set_extsize "$f" 64k || die "extsize 64k"
xfs_io -c 'pwrite -q 0 100k' -c fsync "$f" || die "write"
expect "changing the hint of a file with data" "$(kt setx "$f" $EXTSIZE 32768)" "err EINVAL"
expect "clearing the hint of a file with data" "$(kt setx "$f" 0 0)" ok
expect "setting it back on a file with data" "$(kt setx "$f" $EXTSIZE 65536)" "err EINVAL"
rm "$f"; : >"$f"
set_extsize "$f" 64k || die "extsize 64k"
xfs_io -c 'pwrite -q 0 100k' -c fsync "$f" || die "write"
chattr +d "$f" || die "chattr +d on a hinted file with data"
expect "chattr keeps the hint" "$(kt getx "$f")" "xflags=0x880 extsize=65536"
xfs_io -c 'chattr -d' "$f" || die "xfs_io chattr -d on a hinted file with data"
expect "xfs_io chattr keeps the hint" "$(kt getx "$f")" "xflags=0x800 extsize=65536"
: >"$MNT/other"
set_extsize "$MNT/other" 16k || die "extsize 16k"
remount "$UBD"
expect "hint after remount" "$(kt getx "$f")" "xflags=0x800 extsize=65536"
expect "second hint after remount" "$(extsize "$MNT/other")" 16384
expect "no hint appeared elsewhere" "$(kt getx "$MNT/withdata")" "xflags=0x0 extsize=0"
expect "clear after remount" "$(kt setx "$MNT/other" 0 0)" ok
remount "$UBD"
expect "cleared hint stays cleared" "$(kt getx "$MNT/other")" "xflags=0x0 extsize=0"
umount "$MNT"

# 1 KiB blocks: the limits are in blocks, and the groups start at block 1,
# so that no hint over one block can ever be aligned.
fresh_ext4 "$UBD" -b 1024
: >"$MNT/f"
expect "1k fs: 64 KiB hint (never aligned)" "$(kt setx "$MNT/f" $EXTSIZE 65536)" "err EINVAL"
expect "1k fs: 2 KiB hint (never aligned)" "$(kt setx "$MNT/f" $EXTSIZE 2048)" "err EINVAL"
expect "1k fs: one block" "$(kt setx "$MNT/f" $EXTSIZE 1024)" ok
expect "1k fs: 3 KiB (not a power of two)" "$(kt setx "$MNT/f" $EXTSIZE 3072)" "err EINVAL"
expect "1k fs: 16 MiB (over a group of 8 MiB)" "$(kt setx "$MNT/f" $EXTSIZE $((16 << 20)))" "err EINVAL"
umount "$MNT"

# bigalloc filesystems and indirect-mapped files refuse hints.
fresh_ext4 "$UBD" -b 4096 -O bigalloc -C 16384
: >"$MNT/f"
expect "bigalloc filesystem" "$(kt setx "$MNT/f" $EXTSIZE 65536)" "err EINVAL"
umount "$MNT"
fresh_ext4 "$UBD" -b 4096 -O ^extent,^64bit
: >"$MNT/f"
expect "indirect-mapped file" "$(kt setx "$MNT/f" $EXTSIZE 65536)" "err EINVAL"
umount "$MNT"
