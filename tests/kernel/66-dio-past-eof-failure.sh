#!/bin/bash
# A direct write past EOF into a unit that is allocated unwritten must not
# leave the unit's blocks "written" over stale disk contents when the data
# never gets there: an 8k write at 8k on a 4k file with a 16k unit fails
# with an I/O error (dm-flakey error_writes on exactly those blocks), the
# file is truncated up to 16k, and everything past 4k must read as zeros,
# not as what the disk held.  For a forcealign file (truncate keeps the
# unit) and a file with the hint only.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800 EXTSIZE=0x800
K=1024
DM=extalign-flakey

command -v dmsetup >/dev/null || skip "no dmsetup"
sectors=$((128 * 2048))
# Stale contents the filesystem must never show: 0x5a everywhere.
tr '\000' '\132' </dev/zero | dd of="$UBD" bs=1M count=128 iflag=fullblock \
	status=none || die "pattern fill"
dm_linear $DM "$UBD" $sectors || skip "dmsetup create (no device-mapper?)"
dev=$DM_DEV

fresh_ext4 "$dev" -b 4096

# fail_writes FIRST_BLOCK COUNT: writes to those 4k blocks of the device
# fail from now on (reads still work); fail_writes with no argument ends it.
fail_writes() {
	if [ $# = 2 ]; then
		dm_table $DM "$(dm_flakey_table "$UBD" $sectors "1 error_writes" \
			"$1-$(($1 + $2 - 1))")"
	else
		dm_table $DM
	fi
}

# pblock FILE LBLK: the physical 4k block of FILE's logical block LBLK.
pblock() {
	xfs_io -c "fiemap -v $(($2 * 4096)) 4096" "$1" | awk '
		$2 ~ /^\[/ && $3 != "hole" { split($3, p, /\.\./); print p[1] / 8; exit }'
}

check() { # NAME XFLAGS STATE (of 4k..16k after truncate up, lib.sh zeros)
	local f=$MNT/$1 p0 out

	: >"$f"
	[ "$(kt setx "$f" "$2" $((16 * K)))" = ok ] || die "$1: setx $2"
	xfs_io -d -c "pwrite -q -S 0xa5 0 4k" "$f" || die "$1: first write"
	sync
	p0=$(pblock "$f" 0)
	[ -n "$p0" ] || die "$1: block 0 not mapped"
	echo "$1: unit at physical block $p0"
	fail_writes $((p0 + 2)) 2
	out=$(xfs_io -d -c "pwrite -q -S 0xa5 8k 8k" "$f" 2>&1)
	fail_writes
	case $out in
	*"Input/output error"*) ok "$1: the write past EOF failed with EIO" ;;
	*) die "$1: the write did not fail: $out" ;;
	esac
	expect "$1: size after the failed write" "$(stat -c %s "$f")" 4096
	xfs_io -c "truncate 16k" "$f" || die "$1: truncate up"
	filled "$f" 0 4096 || die "$1: block 0 lost its data"
	n=$(dd if="$f" bs=4k skip=1 count=3 iflag=direct status=none | tr -d '\000' | wc -c)
	expect "$1: non-zero bytes in 4k..16k after truncate up" "$n" 0
	zeros "$f" 4096 12288 "$3"
	ok "$1: 4k..16k is $3"
	remount "$dev"
	n=$(dd if="$f" bs=4k skip=1 count=3 status=none | tr -d '\000' | wc -c)
	expect "$1: non-zero bytes in 4k..16k after remount" "$n" 0
	zeros "$f" 4096 12288 "$3"
}

# A forcealign file keeps its unit (allocated past EOF), a hinted one
# frees what lies past EOF.
check forcealign $BOTH allocated
check hinted $EXTSIZE hole
umount "$MNT"
e2fsck -fn "$dev" >"$SCRATCH/fsck.log" 2>&1 || { cat "$SCRATCH/fsck.log"; die "e2fsck -fn $dev"; }
exit 0
