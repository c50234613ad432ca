#!/bin/bash
# An atomic write over a unit made of several unwritten extents is
# converted to written in one journal handle at I/O completion, so that
# no commit can fall between the extents (a crash there would leave the
# new data in some and zeros in the others).
#
# The unit is split across two extent tree leaves, then zero-ranged: its
# two unwritten extents cannot merge.  Trace events show the conversion
# calls of the atomic write and the journal handles started for the file
# meanwhile: between the first and the last conversion, none may start.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024
UNIT=$((64 * K))

sd=$(scsi_disk) || die "no scsi_debug disk"
need_trace_event ext4/ext4_ext_map_blocks_enter

fresh_ext4 "$sd" -b 4096
f=$MNT/f
: >"$f"
[ "$(kt setx "$f" $BOTH $UNIT)" = ok ] || die "forcealign on $f"

# Unit 0 gets three extents (a written block in its middle), every other
# unit two (a written first block): an odd count, so that the leaf fills
# up inside a unit and the next leaf starts in its middle.
units=260
{
	echo "pwrite -q -S 0xa5 $((16 * K)) 4k"
	for ((i = 1; i < units; i++)); do
		echo "pwrite -q -S 0xa5 $((i * UNIT)) 4k"
	done
} | xfs_io -d "$f" || die "plain writes"
ino=$(stat -c %i "$f")

# leaf_ends: the last logical block of every extent tree leaf but the last.
leaf_ends() {
	debugfs -R "dump_extents -l <$ino>" "$sd" 2>/dev/null | sed 's|/ *|/|g' |
		awk '$1 ~ /^[0-9]+\/[0-9]+$/ {
			split($1, d, "/"); split($2, e, "/")
			if (d[1] == d[2] && e[1] == e[2]) print $5
		}' | sed '$d'
}
sync
u=
for end in $(leaf_ends); do
	if (((end + 1) % 16)); then
		u=$(((end + 1) / 16))
		break
	fi
done
[ -n "$u" ] || { debugfs -R "dump_extents <$ino>" "$sd"; die "no unit straddles two leaves"; }
ok "unit $u straddles two extent tree leaves"

xfs_io -c "fzero $((u * UNIT)) $UNIT" "$f" || die "zero range of unit $u"
sync
n=$(debugfs -R "dump_extents -l <$ino>" "$sd" 2>/dev/null | sed 's|/ *|/|g' |
	awk -v lo=$((u * 16)) -v hi=$((u * 16 + 15)) '
	$1 ~ /^[0-9]+\/[0-9]+$/ && $3 <= hi && $5 >= lo { n++ } END { print n + 0 }')
[ "$n" -ge 2 ] || die "unit $u is $n extent(s) after the zero range"
ok "unit $u: $n unwritten extents"

trace_start ext4/ext4_ext_map_blocks_enter ext4/ext4_journal_start_inode
res=$(kt awrite "$f" $((u * UNIT)) $UNIT)
trace_stop
expect "64k atomic write over unit $u" "$res" "ok $UNIT"
grep -E "ino ${ino}[ ,]" "$TRACEFS/trace" >"$SCRATCH/trace"
# Conversions (CONVERT, not CONVERT_UNWRITTEN) and handle starts, in order.
awk '
	/ext4_ext_map_blocks_enter/ && /flags ([A-Z_]+\|)*CONVERT(\||$| )/ { print "C"; next }
	/ext4_journal_start_inode/ { print "J" }' "$SCRATCH/trace" | tr -d '\n' >"$SCRATCH/seq"
echo "completion sequence (C conversion, J handle start): $(cat "$SCRATCH/seq")"
convs=$(tr -cd C <"$SCRATCH/seq" | wc -c)
[ "$convs" -ge 2 ] || { cat "$SCRATCH/trace"; die "the write converted $convs extent(s), the test needs 2"; }
between=$(sed 's/^[^C]*//; s/[^C]*$//' "$SCRATCH/seq" | tr -cd J | wc -c)
expect "handles started between the conversions of one atomic write" "$between" 0

filled "$f" $((u * UNIT)) $UNIT || die "unit $u does not read back"
remount "$sd"
filled "$f" $((u * UNIT)) $UNIT || die "unit $u does not read back after remount"
units_aligned "$f" $UNIT || die "not in aligned units"
umount "$MNT"
exit 0
