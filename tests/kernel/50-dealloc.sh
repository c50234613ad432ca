#!/bin/bash
# Spec patch 7: deallocation rules of forcealign.  Punch hole, collapse,
# insert and zero range that are not in whole units fail with EINVAL, the
# aligned ones work and keep every run aligned; truncate keeps the unit
# that holds EOF whole, and what was written past the new EOF reads as
# zeros when the file grows again.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800 EXTSIZE=0x800
UNIT=65536 K=1024
# The refused calls below each log this warning (spec item 7).
allow_klog 'EXT4-fs warning .*forcealign: fallocate mode 0x[0-9a-f]+ of [0-9]+\+[0-9]+ is not in whole [0-9]+ byte units'

# falloc MODE OFF LEN FILE: fallocate(1) with MODE (-p, -c, -i, -z), "ok"
# or "err EINVAL" and the like.
falloc() {
	local out

	if out=$(fallocate "$1" -o "$2" -l "$3" "$4" 2>&1); then
		echo ok
	else
		case $out in
		*"Invalid argument"*) echo "err EINVAL" ;;
		*) echo "err $out" ;;
		esac
	fi
}

# forcealign_file FILE SIZE: a forcealign file with SIZE bytes of 0xa5.
forcealign_file() {
	: >"$1"
	[ "$(kt setx "$1" $BOTH $UNIT)" = ok ] || die "forcealign on $1"
	xfs_io -d -c "pwrite -q -S 0xa5 -b 256k 0 $2" "$1" || die "write $1"
}

fresh_ext4 "$UBD" -b 4096
f=$MNT/f
forcealign_file "$f" $((512 * K))

for mode in -p -c -i -z; do
	expect "$mode at 4k, 4k" "$(falloc $mode $((4 * K)) $((4 * K)) "$f")" "err EINVAL"
	expect "$mode at 60k, 8k" "$(falloc $mode $((60 * K)) $((8 * K)) "$f")" "err EINVAL"
	expect "$mode at 64k, 32k" "$(falloc $mode $((64 * K)) $((32 * K)) "$f")" "err EINVAL"
	expect "$mode at 32k, 64k" "$(falloc $mode $((32 * K)) $UNIT "$f")" "err EINVAL"
done
expect "size after the refused calls" "$(stat -c %s "$f")" $((512 * K))
filled "$f" 0 $((512 * K)) || die "data changed by refused calls"
units_aligned "$f" $UNIT || die "not aligned after refused calls"

# The same calls in whole units work.
expect "punch 64k+64k" "$(falloc -p $UNIT $UNIT "$f")" ok
expect "zero 256k+64k" "$(falloc -z $((256 * K)) $UNIT "$f")" ok
units_aligned "$f" $UNIT || die "not aligned after punch and zero"
filled "$f" 0 $UNIT || die "data before the hole"
zeros "$f" $UNIT $UNIT hole
ok "the punched unit is a hole and reads as zeros"
zeros "$f" $((256 * K)) $UNIT unwritten
ok "the zeroed unit is unwritten and reads as zeros"
expect "collapse 128k+64k" "$(falloc -c $((128 * K)) $UNIT "$f")" ok
expect "size after collapse" "$(stat -c %s "$f")" $((448 * K))
expect "insert 0+64k" "$(falloc -i 0 $UNIT "$f")" ok
expect "size after insert" "$(stat -c %s "$f")" $((512 * K))
units_aligned "$f" $UNIT || die "not aligned after collapse and insert"
filled "$f" $UNIT $UNIT || die "data moved by insert"
ok "aligned punch, zero, collapse and insert keep the file in units"

# Without forcealign the hint alone does not restrict anything.
: >"$MNT/hinted"
expect "hint only" "$(kt setx "$MNT/hinted" $EXTSIZE $UNIT)" ok
xfs_io -d -c "pwrite -q -S 0xa5 0 256k" "$MNT/hinted" || die "write"
expect "hint only: punch 4k+4k" "$(falloc -p $((4 * K)) $((4 * K)) "$MNT/hinted")" ok

# Truncate keeps the unit that holds EOF whole and turns what was written
# past the new EOF into unwritten blocks.
t=$MNT/trunc
forcealign_file "$t" $((256 * K))
truncate -s $((100 * K)) "$t" || die "truncate down"
units_aligned "$t" $UNIT || die "truncate broke a unit"
expect "blocks after truncate to 100k (two whole units)" "$(stat -c %b "$t")" 256
filled "$t" 0 $((100 * K)) || die "data below EOF"
truncate -s $((256 * K)) "$t" || die "truncate up"
zeros "$t" $((100 * K)) $((28 * K)) unwritten
zeros "$t" $((128 * K)) $((128 * K)) hole
ok "old data past the old EOF: unwritten in the EOF unit, a hole after it"
remount "$UBD"
zeros "$t" $((100 * K)) $((28 * K)) unwritten
zeros "$t" $((128 * K)) $((128 * K)) hole
ok "and still after remount"
filled "$t" 0 $((100 * K)) || die "data below EOF after remount"
truncate -s $((100 * K)) "$t"
expect "punch from 64k past EOF" "$(falloc -p $UNIT $((1024 * K)) "$t")" ok
expect "the EOF unit went whole" "$(stat -c %b "$t")" 128
units_aligned "$t" $UNIT || die "punch past EOF broke a unit"
truncate -s 0 "$t"
expect "blocks after truncate to 0" "$(stat -c %b "$t")" 0
ok "truncate keeps units whole and exposes no old data"

# A punch that runs past EOF ends at the end of the unit holding EOF, so
# only its start must be a multiple of the unit, whatever its length.
p=$MNT/punch
forcealign_file "$p" $((256 * K))
truncate -s $((200 * K)) "$p" || die "truncate"
expect "punch from 128k, 100k long, past EOF" "$(falloc -p $((128 * K)) $((100 * K)) "$p")" ok
expect "blocks after it (units 0 and 1)" "$(stat -c %b "$p")" 256
expect "size after it" "$(stat -c %s "$p")" $((200 * K))
filled "$p" 0 $((128 * K)) || die "data before the punch"
units_aligned "$p" $UNIT || die "punch past EOF broke a unit"
expect "punch from 32k past EOF" "$(falloc -p $((32 * K)) $((400 * K)) "$p")" "err EINVAL"
umount "$MNT"
exit 0
