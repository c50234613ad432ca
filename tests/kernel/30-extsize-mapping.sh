#!/bin/bash
# Spec patch 5: extsize-aware block mapping.  Buffered, direct, mmap and
# fallocate writes (past EOF too) to a file with a 64 KiB hint allocate
# whole 64 KiB units aligned in the file, and on this fresh filesystem
# physically too; the widened blocks read as zeros, the data reads back.
. "$(dirname "$0")/lib.sh"

UNIT=65536

# check_units FILE: every run starts and ends on a unit boundary, in the
# file and on disk.  The first aligned request after mount is covered too
# (the allocator builds the buddies it needs for it).
check_units() {
	local f=$1 ls len ps n=0 list

	list=$(runs "$f")
	while read -r ls len ps; do
		[ -n "$ls" ] || continue
		n=$((n + 1))
		echo "  run: logical $ls len $len physical $ps"
		((ls % UNIT == 0 && len % UNIT == 0 && ps % UNIT == 0)) ||
			{ xfs_io -c 'fiemap -v' "$f"; die "$f: run at $ls+$len (disk $ps) not unit-aligned"; }
	done <<<"$list"
	[ $n -gt 0 ] || die "$f has no extents"
	ok "$f: $n runs, logically and physically aligned to $UNIT"
}

data() {
	filled "$1" "$2" "$3" || die "$1: $3 bytes at $2 do not read back"
}

hinted() {
	: >"$1"
	set_extsize "$1" 64k || die "extsize 64k on $1"
}

fresh_ext4 "$UBD" -b 4096

# Small buffered writes (delayed allocation is off for hinted files).
f=$MNT/buffered
hinted "$f"
xfs_io -c 'pwrite -q -S 0xa5 8k 4k' -c 'pwrite -q -S 0xa5 12k 4k' \
	-c 'pwrite -q -S 0xa5 16k 4k' -c fsync "$f" || die "buffered writes"
# Past EOF, a unit of its own.
xfs_io -c 'pwrite -q -S 0xa5 1028k 4k' -c fsync "$f" || die "buffered past EOF"
check_units "$f"

# Direct I/O, one write inside a unit and one crossing two.
d=$MNT/direct
hinted "$d"
xfs_io -d -c 'pwrite -q -S 0xa5 4k 8k' -c 'pwrite -q -S 0xa5 124k 8k' "$d" ||
	die "direct writes"
check_units "$d"

# mmap writes into a sparse file.
m=$MNT/mmap
hinted "$m"
xfs_io -c 'truncate 256k' -c 'mmap -rw 0 256k' -c 'mwrite -S 0xa5 136k 4k' \
	-c 'msync -s 0 256k' -c munmap -c fsync "$m" || die "mmap write"
check_units "$m"

# fallocate, inside the size and past EOF with and without KEEP_SIZE.
a=$MNT/falloc
hinted "$a"
xfs_io -c 'falloc 8k 12k' -c 'falloc -k 300k 4k' -c 'falloc 1000k 8k' "$a" ||
	die "fallocate"
check_units "$a"

# Everything reads back after the caches are dropped.
remount "$UBD"
data "$f" 8192 12288
# The widened blocks around what was written are allocated (unwritten, or
# zeroed by ext4); the units nothing touched stay holes (lib.sh zeros).
zeros "$f" 0 8192 allocated
zeros "$f" 20480 $((64 * 1024 - 20480)) allocated
zeros "$f" $((64 * 1024)) $((960 * 1024)) hole
zeros "$f" $((1024 * 1024)) 4096 allocated
data "$f" $((1028 * 1024)) 4096
expect "buffered size" "$(stat -c %s "$f")" $((1032 * 1024))
zeros "$d" 0 4096 allocated
data "$d" 4096 8192
zeros "$d" 12288 $((124 * 1024 - 12288)) allocated
data "$d" $((124 * 1024)) 8192
zeros "$m" 0 $((128 * 1024)) hole
zeros "$m" $((128 * 1024)) $((8 * 1024)) allocated
data "$m" $((136 * 1024)) 4096
zeros "$m" $((140 * 1024)) $((52 * 1024)) allocated
zeros "$m" $((192 * 1024)) $((64 * 1024)) hole
expect "falloc size" "$(stat -c %s "$a")" $((1008 * 1024))
zeros "$a" 0 $((64 * 1024)) unwritten
zeros "$a" $((64 * 1024)) $((192 * 1024)) hole
zeros "$a" $((256 * 1024)) $((64 * 1024)) unwritten
zeros "$a" $((320 * 1024)) $((640 * 1024)) hole
zeros "$a" $((960 * 1024)) $((48 * 1024)) unwritten
ok "data reads back, widened blocks read as zeros"
check_units "$f"
check_units "$d"
check_units "$m"
check_units "$a"

# A file without a hint is not widened.
xfs_io -f -c 'pwrite -q -S 0xa5 0 4k' -c fsync "$MNT/plain" || die "plain write"
expect "no hint, no widening" "$(runs "$MNT/plain" | awk '{ print $1, $2 }')" "0 4096"
umount "$MNT"
