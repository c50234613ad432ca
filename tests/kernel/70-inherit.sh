#!/bin/bash
# Spec patch 9: directory inheritance of the extent size hint and of
# forcealign.
# FS_XFLAG_EXTSZINHERIT with fsx_extsize on a directory (every SET rule
# and errno, GET, clearing); new regular files (open O_CREAT, O_TMPFILE,
# mknod) carry FS_XFLAG_EXTSIZE from their creation, before any write, and
# allocate aligned units; new directories inherit the inherit hint, so a
# tree below does; symlinks and devices get nothing; persistence across
# remount; clearing; filesystems where files cannot take the hint.
. "$(dirname "$0")/lib.sh"

EXTSIZE=0x800 EXTSZINHERIT=0x1000
UNIT=65536
HINTED="xflags=0x800 extsize=65536"
INHERIT="xflags=0x1000 extsize=65536"
PLAIN="xflags=0x0 extsize=0"

# xattr_of PATH: the on-disk system.extsize of PATH (inside $MNT), read
# with debugfs from the unmounted-or-synced device, "" if there is none.
xattr_of() {
	sync
	debugfs -R "ea_list ${1#"$MNT"}" "$UBD" 2>/dev/null |
		sed -n 's/^ *system\.extsize ([0-9]*) = "\([0-9]*\)".*/\1/p'
}

# sectors FILE: allocated 512-byte sectors (a hinted 4 KiB write takes a
# whole 64 KiB unit, 128 sectors; a plain one 8).
sectors() {
	stat -c %b "$1"
}

fresh_ext4 "$UBD" -b 4096
d=$MNT/d
mkdir "$d"
expect "no hint on a new directory" "$(kt getx "$d")" "$PLAIN"

# SET and GET on a directory, with the XFS userspace contract.
set_extsize "$d" 64k || die "extsize 64k on a directory"
expect "GET reports FS_XFLAG_EXTSZINHERIT" "$(kt getx "$d")" "$INHERIT"
expect "changing it" "$(kt setx "$d" $EXTSZINHERIT 16384)" ok
expect "after the change" "$(kt getx "$d")" "xflags=0x1000 extsize=16384"
expect "clearing (no flag, size 0)" "$(kt setx "$d" 0 0)" ok
expect "GET after clearing" "$(kt getx "$d")" "$PLAIN"
expect "one block" "$(kt setx "$d" $EXTSZINHERIT 4096)" ok
expect "a whole block group (never aligned)" "$(kt setx "$d" $EXTSZINHERIT $((128 << 20)))" "err EINVAL"
expect "32 MiB" "$(kt setx "$d" $EXTSZINHERIT $((32 << 20)))" ok
expect "flag with size 0 clears (VFS)" "$(kt setx "$d" $EXTSZINHERIT 0)" ok
expect "cleared" "$(kt getx "$d")" "$PLAIN"

# Every SET error on a directory; failures leave the hint as it was.
kt setx "$d" $EXTSZINHERIT $UNIT >/dev/null
expect "not a multiple of the block size" "$(kt setx "$d" $EXTSZINHERIT 6144)" "err EINVAL"
expect "not a power of two in blocks" "$(kt setx "$d" $EXTSZINHERIT 12288)" "err EINVAL"
expect "larger than a block group" "$(kt setx "$d" $EXTSZINHERIT $((256 << 20)))" "err EINVAL"
expect "less than a block" "$(kt setx "$d" $EXTSZINHERIT 512)" "err EINVAL"
expect "FS_XFLAG_EXTSIZE on a directory (VFS)" "$(kt setx "$d" $EXTSIZE $UNIT)" "err EINVAL"
expect "both flags on a directory (VFS)" \
	"$(kt setx "$d" $((EXTSIZE | EXTSZINHERIT)) $UNIT)" "err EINVAL"
expect "a size without the flag (as XFS)" "$(kt setx "$d" 0 $UNIT)" "err EINVAL"
expect "failed SETs leave the hint" "$(kt getx "$d")" "$INHERIT"
: >"$MNT/reg"
expect "FS_XFLAG_EXTSZINHERIT on a regular file (VFS)" \
	"$(kt setx "$MNT/reg" $EXTSZINHERIT $UNIT)" "err EINVAL"
chattr +d "$d" || die "chattr +d on an inheriting directory"
expect "chattr keeps the hint" "$(kt getx "$d")" "xflags=0x1080 extsize=65536"
chattr -d "$d" || die "chattr -d"

# New files of every kind of creation carry the hint, before any write.
: >"$d/creat"
expect "open(O_CREAT)" "$(kt getx "$d/creat")" "$HINTED"
expect "O_TMPFILE, before its first write" "$(kt tmpfile "$d" tmp 65536)" "$HINTED"
expect "O_TMPFILE, linked" "$(kt getx "$d/tmp")" "$HINTED"
expect "mknod S_IFREG" "$(kt mknod "$d/mknod")" ok
expect "mknod S_IFREG file" "$(kt getx "$d/mknod")" "$HINTED"
mknod "$d/chr" c 1 3 || die "mknod c"
mknod "$d/blk" b 7 0 || die "mknod b"
mkfifo "$d/fifo" || die "mkfifo"
ln -s creat "$d/sym" || die "symlink"
xfs_io -d -c 'pwrite -q 0 128k' "$d/creat" || die "direct write"
xfs_io -c 'pwrite -q 0 64k' -c fsync "$d/mknod" || die "buffered write"
for f in "$d/creat" "$d/tmp" "$d/mknod"; do
	units_aligned "$f" $UNIT || die "$f is not allocated in aligned units"
	ok "$f: allocated in aligned $UNIT units"
done
expect "on disk: the directory" "$(xattr_of "$d")" 16
expect "on disk: a new file" "$(xattr_of "$d/creat")" 16
for f in chr blk fifo sym; do
	expect "on disk: $f has no hint" "$(xattr_of "$d/$f")" ""
done

# Created and written at once, by the same process: hinted before the
# first write, so that write already allocated a whole unit.
mkdir "$d/many"
for i in $(seq 1000); do
	echo "$i" >"$d/many/$i"
done
for i in $(seq 50); do
	xfs_io -f -c 'pwrite -q 0 4k' "$d/many/x$i" || die "xfs_io -f $i"
done
expect "1050 new files hinted" "$(kt getx "$d"/many/* | sort | uniq -c | sed 's/^ *//')" \
	"1050 $HINTED"
expect "1050 first writes took a whole unit" \
	"$(stat -c %b "$d"/many/* | sort | uniq -c | sed 's/^ *//')" "1050 128"
for i in 1 500 1000 x1 x50; do
	units_aligned "$d/many/$i" $UNIT || die "$d/many/$i is not aligned"
done
ok "sampled files are allocated in aligned units"

# A tree created below inherits, however deep.
mkdir -p "$d/a/b/c" || die "mkdir -p"
for t in a a/b a/b/c; do
	expect "directory $t inherits" "$(kt getx "$d/$t")" "$INHERIT"
done
echo x >"$d/a/b/c/f"
expect "a file deep in the tree" "$(kt getx "$d/a/b/c/f")" "$HINTED"
expect "its first write took a whole unit" "$(sectors "$d/a/b/c/f")" 128
expect "a file outside the tree" "$(kt getx "$MNT/reg")" "$PLAIN"

# The root directory can carry it too (a mount point).
expect "root directory" "$(kt setx "$MNT" $EXTSZINHERIT 16384)" ok
: >"$MNT/inroot"
expect "a file in the root" "$(kt getx "$MNT/inroot")" "xflags=0x800 extsize=16384"

# forcealign goes down with the hint: FS_XFLAG_FORCEALIGN with
# FS_XFLAG_EXTSZINHERIT, under the file rules.
FORCEALIGN=0x100000
fd=$MNT/fa
mkdir "$fd"
expect "forcealign on a directory without a hint" "$(kt setx "$fd" $FORCEALIGN 0)" "err EINVAL"
expect "forcealign with a hint the allocator cannot align" \
	"$(kt setx "$fd" $((FORCEALIGN | EXTSZINHERIT)) $((128 << 20)))" "err EINVAL"
expect "forcealign with the inherited hint" \
	"$(kt setx "$fd" $((FORCEALIGN | EXTSZINHERIT)) $UNIT)" ok
expect "GET of the directory" "$(kt getx "$fd")" "xflags=0x101000 extsize=65536"
mkdir "$fd/sub"
: >"$fd/f"
expect "TMPFILE in it" "$(kt tmpfile "$fd" tmp 65536)" "xflags=0x100800 extsize=65536"
xfs_io -f -c 'pwrite -q 0 4k' "$fd/sub/g" || die "write in the subdirectory"
expect "a new file is forcealign" "$(kt getx "$fd/f")" "xflags=0x100800 extsize=65536"
expect "a new subdirectory hands it down" "$(kt getx "$fd/sub")" "xflags=0x101000 extsize=65536"
expect "a file created and written at once below" "$(kt getx "$fd/sub/g")" \
	"xflags=0x100800 extsize=65536"
units_aligned "$fd/sub/g" $UNIT || die "$fd/sub/g is not in aligned units"
expect "clearing forcealign on the directory keeps the hint" \
	"$(kt setx "$fd/sub" $EXTSZINHERIT $UNIT)" ok
: >"$fd/sub/h"
expect "a new file there has the hint only" "$(kt getx "$fd/sub/h")" "$HINTED"

# Remount keeps everything.
remount "$UBD"
expect "directory after remount" "$(kt getx "$d")" "$INHERIT"
expect "subdirectory after remount" "$(kt getx "$d/a/b/c")" "$INHERIT"
expect "root after remount" "$(kt getx "$MNT")" "xflags=0x1000 extsize=16384"
expect "file after remount" "$(kt getx "$d/creat")" "$HINTED"
expect "forcealign directory after remount" "$(kt getx "$fd")" "xflags=0x101000 extsize=65536"
expect "forcealign file after remount" "$(kt getx "$fd/f")" "xflags=0x100800 extsize=65536"
expect "tmpfile after remount" "$(kt getx "$d/tmp")" "$HINTED"
expect "1050 files after remount" "$(kt getx "$d"/many/* | sort | uniq -c | sed 's/^ *//')" \
	"1050 $HINTED"
: >"$d/after"
expect "a file created after remount" "$(kt getx "$d/after")" "$HINTED"
expect "plain files stay plain" "$(kt getx "$MNT/reg")" "$PLAIN"
expect "the dir's own blocks are not widened" "$(sectors "$d/a")" 8

# Clearing stops inheritance for new files, existing ones keep theirs;
# subdirectories keep their own (they are policies of their own, as XFS).
expect "clear the directory" "$(kt setx "$d" 0 0)" ok
expect "cleared directory" "$(kt getx "$d")" "$PLAIN"
echo x >"$d/new"
expect "a new file is plain" "$(kt getx "$d/new")" "$PLAIN"
sync
expect "and allocates plainly" "$(sectors "$d/new")" 8
mkdir "$d/newdir"
expect "a new directory is plain" "$(kt getx "$d/newdir")" "$PLAIN"
expect "an existing file keeps it" "$(kt getx "$d/creat")" "$HINTED"
expect "an existing subdirectory keeps it" "$(kt getx "$d/a")" "$INHERIT"
remount "$UBD"
expect "cleared after remount" "$(kt getx "$d")" "$PLAIN"
expect "new file plain after remount" "$(kt getx "$d/new")" "$PLAIN"
expect "existing file after remount" "$(kt getx "$d/creat")" "$HINTED"
expect "on disk: no xattr left on the directory" "$(xattr_of "$d")" ""
umount "$MNT"

# Small inodes (no room in the inode: the xattr goes to a block) and a
# default ACL, so a new inode gets several xattrs in its transaction.
fresh_ext4 "$UBD" -b 4096 -I 128
mkdir "$MNT/d"
set_extsize "$MNT/d" 64k || die "extsize on a directory, 128-byte inodes"
setfacl -d -m u::rwx,g::rx,o::rx,u:1:rwx "$MNT/d" || die "setfacl -d"
for i in $(seq 100); do
	echo "$i" >"$MNT/d/$i"
done
mkdir "$MNT/d/sub"
expect "128-byte inodes: files hinted" \
	"$(kt getx "$MNT"/d/* | sort | uniq -c | sed 's/^ *//')" \
	"1 $INHERIT
100 $HINTED"
getfacl -cn "$MNT/d/1" 2>/dev/null | grep -q '^user:1:' || die "the ACL was not inherited"
remount "$UBD"
expect "128-byte inodes: after remount" "$(kt getx "$MNT/d/100")" "$HINTED"
umount "$MNT"

# Inline data: a file that takes the hint gets none, its first small
# write takes a whole unit instead.  Directories stay as they are.
fresh_ext4 "$UBD" -b 4096 -O inline_data
mkdir "$MNT/d" "$MNT/p"
set_extsize "$MNT/d" 64k || die "extsize on a directory, inline_data"
echo small >"$MNT/d/f"
echo small >"$MNT/p/f"
mkdir "$MNT/d/sub"
sync
expect "inline_data: file hinted" "$(kt getx "$MNT/d/f")" "$HINTED"
expect "inline_data: no inline data, a whole unit" "$(sectors "$MNT/d/f")" 128
# (ext4 reports one sector for a file whose data is inline)
expect "inline_data: a plain file is inline" "$(sectors "$MNT/p/f")" 1
expect "inline_data: subdirectory inherits" "$(kt getx "$MNT/d/sub")" "$INHERIT"
remount "$UBD"
expect "inline_data: after remount" "$(cat "$MNT/d/f")" small
umount "$MNT"

# No extent feature: the directory takes the hint (a policy for when the
# feature is turned on), new files cannot (indirect-mapped) and are plain.
fresh_ext4 "$UBD" -b 4096 -O ^extent,^64bit
mkdir "$MNT/d"
expect "no extents: directory takes it" "$(kt setx "$MNT/d" $EXTSZINHERIT $UNIT)" ok
echo x >"$MNT/d/f"
mkdir "$MNT/d/sub"
expect "no extents: new file plain" "$(kt getx "$MNT/d/f")" "$PLAIN"
expect "no extents: subdirectory inherits" "$(kt getx "$MNT/d/sub")" "$INHERIT"
remount "$UBD"
expect "no extents: directory after remount" "$(kt getx "$MNT/d")" "$INHERIT"
umount "$MNT"

# bigalloc: no hint at all, on directories either.
fresh_ext4 "$UBD" -b 4096 -O bigalloc -C 16384
mkdir "$MNT/d"
expect "bigalloc: directory" "$(kt setx "$MNT/d" $EXTSZINHERIT $UNIT)" "err EINVAL"
umount "$MNT"

# 1 KiB blocks: the limits are in blocks.
fresh_ext4 "$UBD" -b 1024
mkdir "$MNT/d"
expect "1k fs: 64 KiB (never aligned)" "$(kt setx "$MNT/d" $EXTSZINHERIT $UNIT)" "err EINVAL"
expect "1k fs: 3 KiB" "$(kt setx "$MNT/d" $EXTSZINHERIT 3072)" "err EINVAL"
expect "1k fs: 16 MiB (over a group)" "$(kt setx "$MNT/d" $EXTSZINHERIT $((16 << 20)))" "err EINVAL"
expect "1k fs: one block" "$(kt setx "$MNT/d" $EXTSZINHERIT 1024)" ok
: >"$MNT/d/f"
expect "1k fs: new file" "$(kt getx "$MNT/d/f")" "xflags=0x800 extsize=1024"
umount "$MNT"
