#!/bin/bash
# Spec patch 6: forcealign.  Every SET rule with its errno, GET, the old
# EOFBLOCKS bit, persistence, whole aligned units on every write path, and
# ENOSPC when no aligned free unit is left while a file with only the hint
# (and a plain file) still get blocks.
. "$(dirname "$0")/lib.sh"

EXTSIZE=0x800 FORCEALIGN=0x100000 BOTH=0x100800
UNIT=65536

fresh_ext4 "$UBD" -b 4096
f=$MNT/f
: >"$f"

# The rules, each with its errno.
expect "forcealign without a hint" "$(kt setx "$f" $FORCEALIGN 0)" "err EINVAL"
expect "nothing was set" "$(kt getx "$f")" "xflags=0x0 extsize=0"
expect "forcealign with a hint" "$(kt setx "$f" $BOTH $UNIT)" ok
expect "GET reports it" "$(kt getx "$f")" "xflags=$BOTH extsize=$UNIT"
expect "clearing the hint under it" "$(kt setx "$f" $FORCEALIGN 0)" "err EINVAL"
expect "changing the hint of an empty file" "$(kt setx "$f" $BOTH 16384)" ok
expect "GET after the change" "$(kt getx "$f")" "xflags=$BOTH extsize=16384"
expect "clearing forcealign only" "$(kt setx "$f" $EXTSIZE 16384)" ok
expect "the hint stays" "$(kt getx "$f")" "xflags=$EXTSIZE extsize=16384"
expect "forcealign on a hinted empty file" "$(kt setx "$f" $BOTH 16384)" ok
expect "clearing both" "$(kt setx "$f" 0 0)" ok
expect "GET after clearing both" "$(kt getx "$f")" "xflags=0x0 extsize=0"
expect "a hint the allocator cannot align (a block group)" \
	"$(kt setx "$f" $BOTH $((128 << 20)))" "err EINVAL"
# (Directories take it with FS_XFLAG_EXTSZINHERIT: 70-inherit.sh.)

echo data >"$MNT/withdata"
expect "file with data" "$(kt setx "$MNT/withdata" $BOTH $UNIT)" "err EINVAL"
: >"$MNT/late"
expect "hint only" "$(kt setx "$MNT/late" $EXTSIZE $UNIT)" ok
xfs_io -c 'pwrite -q 0 4k' -c fsync "$MNT/late" || die "write"
expect "forcealign after data was written" "$(kt setx "$MNT/late" $BOTH $UNIT)" "err EINVAL"
expect "the file keeps its hint only" "$(xflags "$MNT/late")" $EXTSIZE

# chattr cannot reach the on-disk bit (0x00400000) any more, and keeps
# forcealign when it changes other flags.
expect "SETFLAGS with bit 22" "$(python3 -c '
import errno, fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x00400000))
    print("ok")
except OSError as e:
    print("err EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else "err %d" % e.errno)
' "$f")" "err EOPNOTSUPP"
: >"$MNT/fa"
expect "forcealign" "$(kt setx "$MNT/fa" $BOTH $UNIT)" ok
chattr +d "$MNT/fa" || die "chattr +d"
expect "chattr keeps forcealign" "$(xflags "$MNT/fa")" 0x100880
chattr -d "$MNT/fa" || die "chattr -d"
lsattr "$MNT/fa" >/dev/null || die "lsattr"

# The bit left by an old kernel (EOFBLOCKS) on a file without a hint does
# not make it forcealign, and a hint set later does not either.
: >"$MNT/old"
umount "$MNT"
debugfs -w -R "set_inode_field /old flags 0x480000" "$UBD" >/dev/null 2>&1 ||
	die "debugfs set_inode_field"
mount -t ext4 "$UBD" "$MNT" || die "mount"
expect "bit 22 alone is not forcealign" "$(xflags "$MNT/old")" 0x0
expect "a hint on that file" "$(kt setx "$MNT/old" $EXTSIZE $UNIT)" ok
expect "is a hint only" "$(xflags "$MNT/old")" $EXTSIZE
umount "$MNT"
flags=$(debugfs -R "stat /old" "$UBD" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
expect "the stale bit was cleared on disk" "$((flags & 0x400000))" 0
mount -t ext4 "$UBD" "$MNT" || die "mount"

# Persistence.
remount "$UBD"
expect "forcealign after remount" "$(kt getx "$MNT/fa")" "xflags=$BOTH extsize=$UNIT"

# Every write path allocates whole aligned units.
fa() { : >"$1"; [ "$(kt setx "$1" $BOTH $UNIT)" = ok ] || die "forcealign on $1"; }
fa "$MNT/buffered"
xfs_io -c 'pwrite -q -S 0xa5 8k 4k' -c 'pwrite -q -S 0xa5 60k 8k' \
	-c 'pwrite -q -S 0xa5 1028k 4k' -c fsync "$MNT/buffered" || die "buffered"
fa "$MNT/direct"
xfs_io -d -c 'pwrite -q -S 0xa5 4k 8k' -c 'pwrite -q -S 0xa5 124k 8k' "$MNT/direct" ||
	die "direct"
fa "$MNT/mmap"
xfs_io -c 'truncate 256k' -c 'mmap -rw 0 256k' -c 'mwrite -S 0xa5 136k 4k' \
	-c 'msync -s 0 256k' -c munmap -c fsync "$MNT/mmap" || die "mmap"
fa "$MNT/falloc"
xfs_io -c 'falloc 8k 12k' -c 'falloc -k 300k 4k' -c 'falloc 1000k 200k' \
	"$MNT/falloc" || die "fallocate"
fa "$MNT/big"
xfs_io -d -c 'pwrite -q -S 0xa5 -b 1m 0 8m' "$MNT/big" || die "8 MiB direct write"
remount "$UBD"
for x in buffered direct mmap falloc big; do
	units_aligned "$MNT/$x" $UNIT || die "$x is not in aligned units"
done
filled "$MNT/buffered" $((60 * 1024)) 8192 || die "buffered data"
filled "$MNT/big" $((5 << 20)) 65536 || die "big file data"
ok "buffered, direct, mmap, fallocate and large writes: whole aligned units"
umount "$MNT"

# A filesystem with free space but no aligned free unit: fill most of it
# with one preallocated file, punch 8 blocks at physical offset 4 of every
# 16 (64 KiB) in it, then let a forcealign file eat every aligned unit
# left.  dumpe2fs then checks, independently of the allocator, that no free
# range holds an aligned unit while thousands of blocks are free.
FS_SIZE=256M fresh_ext4 "$UBD" -b 4096
prealloc_most "$MNT/filler" || die "fallocate filler"
runs "$MNT/filler" | awk '{
		lb = $1 / 4096; n = $2 / 4096; pb = $3 / 4096
		for (q = pb - pb % 16 + 4; q + 8 <= pb + n; q += 16)
			if (q >= pb) printf "fpunch %d %d\n", (lb + q - pb) * 4096, 8 * 4096
	}' >"$SCRATCH/punch"
[ -s "$SCRATCH/punch" ] || die "no punch plan"
xfs_io "$MNT/filler" <"$SCRATCH/punch" || die "punching"
fa "$MNT/eater"
fallocate -l 1g "$MNT/eater" 2>/dev/null && die "1 GiB fitted in a 256 MiB filesystem"
units_aligned "$MNT/eater" $UNIT || die "the eater is not in aligned units"
umount "$MNT"
dumpe2fs "$UBD" 2>/dev/null | awk '
	/^  Free blocks: / {
		sub(/^  Free blocks: /, ""); n = split($0, r, /, */)
		for (i = 1; i <= n; i++) {
			if (split(r[i], e, "-") == 1) e[2] = e[1]
			free += e[2] - e[1] + 1
			a = e[1] + (16 - e[1] % 16) % 16
			if (a + 15 <= e[2]) aligned++
		}
	}
	END { print free + 0, aligned + 0 }' >"$SCRATCH/free"
read -r free aligned <"$SCRATCH/free"
echo "free blocks: $free, free aligned units: $aligned"
[ "$free" -gt 2000 ] || die "only $free blocks free"
expect "free aligned units" "$aligned" 0
mount -t ext4 "$UBD" "$MNT" || die "mount"

fa "$MNT/strict"
# ENOSPC comes back at once, without the retries that cannot help (each
# retry loop that gives up counts in sra_exceeded_retry_limit).
sra=/sys/fs/ext4/${UBD#/dev/}/sra_exceeded_retry_limit
sra0=$(cat "$sra")
out=$(xfs_io -d -c 'pwrite -q 0 64k' "$MNT/strict" 2>&1)
case $out in
*"No space left"*) ok "forcealign write: ENOSPC with $free blocks free" ;;
*) xfs_io -c 'fiemap -v' "$MNT/strict"; die "forcealign write did not fail with ENOSPC: $out" ;;
esac
expect "nothing allocated for it" "$(stat -c %b "$MNT/strict")" 0
expect "fallocate fails too" "$(fallocate -l 64k "$MNT/strict" 2>&1 | grep -c 'No space')" 1
expect "ENOSPC retry loops run to their end" "$(($(cat "$sra") - sra0))" 0
: >"$MNT/hinted"
expect "hint only" "$(kt setx "$MNT/hinted" $EXTSIZE $UNIT)" ok
xfs_io -d -c 'pwrite -q 0 64k' "$MNT/hinted" || die "hint-only write failed"
ok "a file with only the hint still gets (unaligned) blocks"
xfs_io -f -c 'pwrite -q 0 64k' -c fsync "$MNT/plain" || die "plain write failed"
ok "a plain file still gets blocks"
rm "$MNT/filler" "$MNT/eater"
xfs_io -d -c 'pwrite -q 0 64k' "$MNT/strict" || die "forcealign write after freeing"
units_aligned "$MNT/strict" $UNIT || die "strict file not aligned"
ok "after space is freed, forcealign allocates aligned again"
umount "$MNT"

# 1 KiB blocks: block groups start at block 1, nothing can be aligned.
fresh_ext4 "$UBD" -b 1024
: >"$MNT/f"
expect "1k fs: forcealign refused" "$(kt setx "$MNT/f" $BOTH $UNIT)" "err EINVAL"
expect "1k fs: the hint alone too (it could never take effect)" \
	"$(kt setx "$MNT/f" $EXTSIZE $UNIT)" "err EINVAL"
umount "$MNT"
exit 0
