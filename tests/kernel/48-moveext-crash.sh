#!/bin/bash
# Issue 34.3: EXT4_IOC_MOVE_EXT between two forcealign files (what
# extalign realign does on ext4) must keep every unit whole at every
# point a crash can leave: all of a unit's blocks from the donor, or all
# still the file's own.  ext4 moves one page per journal handle, so a
# commit between two pages of a unit, then a crash, would leave the unit
# half here and half there: broken, and atomic writes into it refused.
#
# The move is logged with dm log-writes while another process syncs in
# a loop, so that commits fall between the pages; every FUA write after
# the setup mark is a crash point, where both files must be in whole
# aligned units and the original must hold its data.  (The donor's data
# after a move is not the original's: the donor is a scratch file that
# e4defrag and extalign realign throw away.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/crash-points.sh"

K=1024
UNIT=$((16 * K))
SIZE=$((1024 * K))
FS_MB=64
W=$SCRATCH/moveext-crash
NAME=extalign-lwm
export DM_DISABLE_UDEV=1
mkdir -p "$W"

sd=$(scsi_disk) || die "no scsi_debug disk"
need_log_writes
replay_log "$W"

# units.sh FILE UNIT: "whole" if FILE's extents are whole UNIT-byte units,
# aligned in the file and on disk, else "BROKEN" and the runs.
cat >"$W/units.sh" <<'SH'
xfs_io -c 'fiemap -v' "$1" | awk -v u="$2" '
$2 ~ /^\[/ && $3 != "hole" {
	split(substr($2, 2), l, /[].]+/); split($3, p, /\.\./)
	ls = l[1] * 512; le = (l[2] + 1) * 512; ps = p[1] * 512
	if (n && ls == cle && ps == cps + (cle - cls)) { cle = le; next }
	if (n) run()
	cls = ls; cle = le; cps = ps; n = 1
}
function run() {
	if (cls % u || (cle - cls) % u || cps % u) { bad++; r = r " " cls "+" cle - cls "@" cps }
}
END { if (n) run(); print bad ? "BROKEN" r : "whole" }'
SH

dd if=/dev/zero of="$UBD" bs=1M count=1 conv=fsync status=none
dm_create "$NAME" "0 $((FS_MB * 2048)) log-writes $sd $UBD" ||
	die "dmsetup create log-writes over $sd"
dev=/dev/mapper/$NAME
mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$dev" ||
	die "mkfs.ext4 on $dev"
mount -t ext4 "$dev" "$MNT" || die "mount $dev"
o=$MNT/o d=$MNT/d
for f in "$o" "$d"; do
	: >"$f"
	expect "forcealign with a 16k hint on ${f##*/}" "$(kt setx "$f" 0x100800 $UNIT)" ok
	xfs_io -d -c "pwrite -q -S 0xa5 0 $SIZE" -c fsync "$f" || die "write $f"
done
expect "o before the move" "$(bash "$W/units.sh" "$o" $UNIT)" whole
sync
dmsetup message "$NAME" 0 mark setup || die "mark setup"
(while :; do sync; done) &
syncer=$!
out=$(kt moveext "$o" "$d" 0 0 $((SIZE / 4096)))
kill $syncer
wait $syncer 2>/dev/null
expect "the move" "$out" "ok $((SIZE / 4096))"
expect "o after the move" "$(bash "$W/units.sh" "$o" $UNIT)" whole
umount "$MNT" || die "umount"
dmsetup message "$NAME" 0 mark end || die "mark end"
dm_remove "$NAME"

crash_mounted() { # N MNT
	echo "point $1: o $(bash "$W/units.sh" "$2/o" 16384)," \
		"d $(bash "$W/units.sh" "$2/d" 16384)," \
		"data $(tr -d '\245' <"$2/o" | wc -c)"
}
crash_replay "$W" "$UBD" $FS_MB "" 10 W

points=$(cat "$W/points")
broken=$(grep -c 'BROKEN' "$W/results")
bad=$(grep -c 'MOUNT\|FSCK' "$W/results")
lost=$(grep -vc 'data 0$' "$W/results")
grep 'BROKEN\|MOUNT\|FSCK' "$W/results" | head -n 10
echo "points checked: $points, with a broken unit: $broken, mount/fsck failures: $bad"
[ "$points" -ge 10 ] || die "only $points crash points, want >= 10"
[ "$bad" = 0 ] || die "$bad crash points did not mount or fsck clean"
[ "$lost" = 0 ] || die "$lost crash points lost data"
[ "$broken" = 0 ] || die "$broken of $points crash points have a broken unit"
ok "every unit whole over $points crash points of a move"
exit 0
