#!/bin/bash
# A request over several forcealign units is allocated as one piece aligned
# to a power of two of units (kernel-spec item 5, which holds for every
# hinted inode), not a unit at a time: fstests' generic/223 on a forcealign
# scratch root (quick group, slice 8) found a 32 KiB fallocate on a 32 KiB
# RAID stripe starting off the stripe, which it does not do without
# forcealign.  Before each case, files of one unit move the free space so
# that a unit-at-a-time allocation would start on an odd unit.  Then a
# range already partly mapped falls back to single units, and so does a
# filesystem with room for one unit only (ENOSPC for the second unit, not
# for both).
. "$(dirname "$0")/lib.sh"

UNIT=16384 BOTH=0x100800

fa() { : >"$1"; [ "$(kt setx "$1" $BOTH $UNIT)" = ok ] || die "forcealign on $1"; }
# pstart FILE: the physical start of FILE's first run, in bytes.
pstart() { runs "$1" | awk 'NR == 1 { print $3 }'; }
# allocated FILE: the bytes FILE has allocated.
allocated() { runs "$1" | awk '{ n += $2 } END { printf "%.0f\n", n }'; }

# odd_next: one-unit files until the last of them sits on an even unit:
# the lowest free aligned unit, where a unit-at-a-time allocation starts,
# is then an odd one.
ones=0
odd_next() {
	local p
	while :; do
		ones=$((ones + 1))
		fa "$MNT/one$ones"
		fallocate -l $UNIT "$MNT/one$ones" || die "fallocate of one unit"
		p=$(pstart "$MNT/one$ones")
		((p / UNIT % 2 == 0)) && return 0
		[ $ones -lt 20 ] || die "20 one-unit files, none on an even unit"
	done
}

# starts_on FILE BYTES WHAT: FILE's first run starts on a multiple of BYTES
# and all its runs are whole aligned units.
starts_on() {
	local p

	p=$(pstart "$1")
	[ -n "$p" ] || die "$3: nothing allocated"
	if ((p % $2 != 0)); then
		xfs_io -c 'fiemap -v' "$1"
		die "$3: starts at byte $p of the disk, not on a multiple of $2"
	fi
	units_aligned "$1" $UNIT || die "$3: not in whole aligned units"
	ok "$3: one piece on a multiple of $2"
}

# A RAID stripe of 8 blocks (32 KiB), as generic/223 makes it.
FS_SIZE=256M fresh_ext4 "$UBD" -b 4096 -E stride=8,stripe_width=8

odd_next
fa "$MNT/f32"
fallocate -l 32k "$MNT/f32" || die "fallocate 32k"
starts_on "$MNT/f32" 32768 "32 KiB fallocate, one stripe"

odd_next
fa "$MNT/f64"
fallocate -l 64k "$MNT/f64" || die "fallocate 64k"
starts_on "$MNT/f64" 65536 "64 KiB fallocate"

# Three units are widened to four, past the end, as a hint's are.
odd_next
fa "$MNT/f48"
fallocate -l 48k "$MNT/f48" || die "fallocate 48k"
starts_on "$MNT/f48" 65536 "48 KiB fallocate"
expect "48 KiB fallocate allocates 64 KiB" "$(allocated "$MNT/f48")" 65536

odd_next
fa "$MNT/dio"
xfs_io -d -c 'pwrite -q -b 64k -S 0xa5 0 64k' -c fsync "$MNT/dio" || die "direct write"
starts_on "$MNT/dio" 65536 "64 KiB direct write"
filled "$MNT/dio" 0 65536 || die "the direct write does not read back"

# Mapped in part already: the holes get units of their own, and the data
# stays.
fa "$MNT/part"
xfs_io -c 'pwrite -q -S 0xa5 16k 16k' -c fsync "$MNT/part" || die "write unit 1"
fallocate -l 64k "$MNT/part" || die "fallocate over a mapped unit"
units_aligned "$MNT/part" $UNIT || die "partly mapped: not in whole units"
expect "partly mapped: 64 KiB allocated" "$(allocated "$MNT/part")" 65536
filled "$MNT/part" 16384 16384 || die "partly mapped: the written unit changed"
ok "partly mapped range: single units around the written one"

# Room for one unit only: the two-unit piece fails (ENOSPC), the unit of
# the request's start is still allocated, and only the second unit fails.
# All free space but one aligned unit is taken by a plain file.
FS_SIZE=64M fresh_ext4 "$UBD" -b 4096 -m 0
echo 0 >"/sys/fs/ext4/$(basename "$UBD")/reserved_clusters" ||
	die "reserved_clusters"
fa "$MNT/keep"
fallocate -l $UNIT "$MNT/keep" || die "fallocate of the unit to keep free"
fallocate -l 64M "$MNT/fill" 2>/dev/null
rm "$MNT/keep"
sync
free=$(stat -f -c %f "$MNT")
((free >= 4 && free < 8)) || die "setup: $free blocks free, not one unit's 4 to 7"
fa "$MNT/f2"
fallocate -l 32k "$MNT/f2" 2>"$SCRATCH/f2.err" && die "32 KiB fallocate with room for 16 KiB succeeded"
grep -q "No space left on device" "$SCRATCH/f2.err" || die "32 KiB fallocate: $(cat "$SCRATCH/f2.err")"
expect "room for one unit: the unit allocated" "$(allocated "$MNT/f2")" $UNIT
units_aligned "$MNT/f2" $UNIT || die "room for one unit: not whole"
ok "a two-unit piece that does not fit falls back to one unit"
umount "$MNT"
exit 0
