#!/bin/bash
# Issue 22.4: a forcealign file whose units were broken behind the
# kernel's back (an older kernel, resize2fs, debugfs) stays readable:
# reads, FIEMAP, SEEK_DATA and writes over its blocks work, the data is
# not lost at I/O completion, and only what needs whole aligned units is
# refused: atomic writes over the broken unit (EINVAL, or EUCLEAN when it
# would have to fill the hole) and filling a hole of it (EUCLEAN).
# extalign realign can then copy it into new units.
#
# The broken file is made with debugfs: a plain file with blocks 0 and 1
# written apart (another file's block between them, so that at most one
# of them can sit at its unit offset on disk), a hole at block 2 and the
# rest of the unit unwritten, then given the forcealign flag and a 16
# block hint.
. "$(dirname "$0")/lib.sh"

K=1024
UNIT=$((64 * K))

sd=$(scsi_disk) || die "no scsi_debug disk"
fresh_ext4 "$sd" -b 4096
cd "$MNT" || die "cd"
one_cpu xfs_io -f -d -c "pwrite -q -S 0xa5 0 4k" -c fsync m || die "write m"
one_cpu xfs_io -f -d -c "pwrite -q 0 4k" -c fsync pad || die "write pad"
one_cpu xfs_io -d -c "pwrite -q -S 0xa5 4k 4k" -c "falloc 12k 52k" -c fsync m ||
	die "write m"
odd=$(xfs_io -c 'fiemap' m | awk '
	$2 ~ /^\[/ && $3 != "hole" {
		split(substr($2, 2), l, /[].]+/); split($3, p, /\.\./)
		if ((p[1] / 8 - l[1] / 8) % 16) n++
	} END { print n + 0 }')
[ "$odd" -gt 0 ] || { xfs_io -c 'fiemap -v' m; die "m happens to be aligned"; }
offline_forcealign "$sd" m 16
m=$MNT/m
expect "the broken file is forcealign" "$(xflags "$m")" 0x100800

dmesg -C
filled "$m" 0 $((8 * K)) || die "reading the broken unit"
# Into its unwritten blocks: converted at I/O completion.
xfs_io -d -c "pwrite -q -S 0xa5 12k 52k" "$m" || die "direct write into unwritten blocks"
filled "$m" $((12 * K)) $((52 * K)) || die "the write into unwritten blocks was lost"
xfs_io -c 'fiemap -v' "$m" >/dev/null || die "FIEMAP of the broken file"
expect "SEEK_DATA from 8k" "$(xfs_io -c 'seek -d 8k' "$m" | awk '/^DATA/ { print $2 }')" 12288
xfs_io -d -c "pwrite -q -S 0xa5 0 8k" "$m" || die "direct overwrite"
xfs_io -c "pwrite -q -S 0xa5 4k 4k" -c fsync "$m" || die "buffered overwrite"
filled "$m" 0 $((8 * K)) || die "the overwrites do not read back"
ok "the broken unit reads, maps, seeks and takes overwrites"

expect "atomic write over blocks 0-1 (apart on disk)" "$(kt awrite "$m" 0 8192)" "err EINVAL"
expect "atomic write over the whole broken unit (a hole in it)" \
	"$(kt awrite "$m" 0 $UNIT)" "err EUCLEAN"
out=$(xfs_io -d -c "pwrite -q 8k 4k" "$m" 2>&1)
case $out in
*"Structure needs cleaning"*) ok "filling the hole of the broken unit: EUCLEAN" ;;
*) die "filling the hole of the broken unit: '$out'" ;;
esac
filled "$m" 0 $((8 * K)) || die "data lost"
# The warnings named the broken unit; they were expected.
dmesg | grep 'forcealign' | head -3
dmesg -C

# A new unit of the same file is allocated whole and aligned as ever.
expect "atomic write into a new unit" "$(kt awrite "$m" $((4 * UNIT)) $UNIT)" "ok $UNIT"
filled "$m" $((4 * UNIT)) $UNIT || die "new unit"
remount "$sd"
filled "$m" 0 $((8 * K)) || die "data lost after remount"
umount "$MNT"

# The whole-filesystem checker (run on every disk after every test) names
# this file's broken runs and nothing else; then the file goes, so that the
# check after the test judges the rest of the disk.
out=$(check_alignment "$sd") && die "the alignment checker passed the broken file: $out"
echo "$out" | grep -q '^checked 1 forcealign inodes, [1-9][0-9]* misaligned runs$' ||
	die "alignment checker: $out"
ok "the alignment checker names the broken file: $(echo "$out" | tail -n 1)"
mount -t ext4 "$sd" "$MNT" || die "mount"
rm -f "$m" || die "rm $m"
umount "$MNT"
exit 0
