#!/bin/bash
# Issue 23.1, the crash half: a direct write past EOF converts the blocks
# it writes from unwritten to written in the block mapping, before any
# data reaches them.  If the machine stops after that conversion is
# committed and before the data is on the disk, what the file shows after
# recovery must still be zeros or the data, never the disk's old contents.
#
# The scsi_debug disk is filled with 0x5a first (old contents); ext4 sits
# on dm log-writes (log on the ubd disk) over dm-delay, which holds back
# only the writes to the two blocks the write targets, so that a sync
# during the write commits the conversion first.  Then every FUA point
# of the log is replayed into an image filled with 0x5a like the disk,
# and at each one:
#   - the journal replayed by debugfs (journal_run, no orphan cleanup)
#     shows the state the crash left: a block written in the extent
#     tree while the disk still holds 0x5a there is a window point (at
#     least one must be seen, or the test missed what it is about);
#   - a fresh copy is mounted (journal recovery, orphan cleanup),
#     truncated up to 16k, and must hold no 0x5a byte.
# For a forcealign file (truncate keeps the unit whole) and a file with
# the 16k hint only.  What makes it pass today is the orphan record of
# the extending write and 0007's tail conversion at truncate (the
# blocks past EOF in the kept unit become unwritten); with that
# conversion taken out, the forcealign window point shows 0x5a.
#
# replay-log: beside KTOOL, or built from the fstests snapshot.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/crash-points.sh"

BOTH=0x100800 EXTSIZE=0x800
K=1024
FS_MB=64
sectors=$((FS_MB * 2048))
W=$SCRATCH/eof-crash
DELAY=extalign-delay LW=extalign-lw67
export DM_DISABLE_UDEV=1
mkdir -p "$W"

sd=$(scsi_disk) || die "no scsi_debug disk"
command -v dmsetup >/dev/null || skip "no dmsetup"
replay_log "$W"

tr '\000' '\132' </dev/zero | dd of="$sd" bs=1M count=$FS_MB iflag=fullblock \
	oflag=direct status=none || die "pattern fill"
delayed_log $DELAY $LW "$sd" $sectors
dev=/dev/mapper/$LW

mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$dev" ||
	die "mkfs.ext4"
mount -t ext4 "$dev" "$MNT" || die "mount $dev"
for name in forcealign hinted; do
	f=$MNT/$name
	: >"$f"
	flags=$BOTH
	[ $name = hinted ] && flags=$EXTSIZE
	[ "$(kt setx "$f" $flags $((16 * K)))" = ok ] || die "$name: setx"
	xfs_io -d -c "pwrite -q -S 0xa5 0 4k" "$f" || die "$name: first write"
done
sync
dmsetup message $LW 0 mark setup || die "mark setup"

declare -A ino p0
for name in forcealign hinted; do
	f=$MNT/$name
	ino[$name]=$(stat -c %i "$f")
	p0[$name]=$(xfs_io -c "fiemap -v 0 4096" "$f" | awk '
		$2 ~ /^\[/ && $3 != "hole" { split($3, p, /\.\./); print p[1] / 8; exit }')
	[ -n "${p0[$name]}" ] || die "$name: block 0 not mapped"
	echo "$name: inode ${ino[$name]}, unit at disk block ${p0[$name]}"
	# Hold back the data of the write at 8k, commit while it waits.
	delay_writes $DELAY "$sd" $sectors $((p0[$name] + 2)) 2 3000
	xfs_io -d -c "pwrite -q -S 0xa5 8k 8k" "$f" &
	pid=$!
	sleep 1
	sync -f "$f"
	wait $pid || die "$name: the write past EOF failed"
	delay_writes $DELAY "$sd" $sectors
	expect "$name: size after the write" "$(stat -c %s "$f")" 16384
done
umount "$MNT" || die "umount"
dmsetup message $LW 0 mark end || die "mark end"
dm_remove $LW $DELAY

# At one crash point: what the disk says before recovery, then what a
# recovered mount shows.
crash_raw() { # N IMAGE
	local nm ex b written old

	# Only the journal: e2fsck would also release the orphan inodes.
	debugfs -w -R journal_run "$2" >>"$W/journal.log" 2>&1
	for nm in forcealign hinted; do
		ex=$(debugfs -R "ex <${ino[$nm]}>" "$2" 2>/dev/null)
		echo "point $1: $nm: $(tail -n +2 <<<"$ex" | tr -s ' ' | tr '\n' ';')" >>"$W/debug"
		# Blocks 2 and 3, written in the extent tree, still holding 0x5a.
		for b in 2 3; do
			# shellcheck disable=SC2001 # a regular expression
			written=$(sed 's|/ *|/|g' <<<"$ex" | awk -v b=$b '{ split($1, l, "/") }
				l[1] == l[2] && $3 <= b && $5 >= b && $NF != "Uninit" { print "yes" }')
			old=$(dd if="$2" bs=4k skip=$((p0[$nm] + b)) count=1 status=none | tr -d '\132' | wc -c)
			if [ -n "$written" ] && [ "$old" = 0 ]; then
				echo "point $1: $nm block $b window"
			fi
		done
	done
}

crash_mounted() { # N MNT
	local nm f size stale

	for nm in forcealign hinted; do
		f=$2/$nm
		[ -f "$f" ] || continue
		size=$(stat -c %s "$f")
		truncate -s 16k "$f"
		stale=$(tr -d -c '\132' <"$f" | wc -c)
		echo "point $1: $nm size $size stale $stale"
	done
}

crash_replay "$W" "$UBD" $FS_MB '\132' 1 W ino p0
cat "$W/debug" "$W/results"
tail -n 5 "$W/journal.log"
points=$(cat "$W/points")
windows=$(grep -c ' window$' "$W/results")
stale=$(grep -c 'stale [1-9]' "$W/results")
bad=$(grep -c 'MOUNT\|FSCK' "$W/results")
echo "points: $points, window points: $windows, with old contents: $stale, mount/fsck failures: $bad"
[ "$bad" = 0 ] || die "$bad crash points did not mount or fsck"
[ "$windows" -ge 1 ] || die "no crash point between the conversion and the data: the test did not reach its case"
[ "$stale" = 0 ] || die "old disk contents readable after a crash at $stale points"
ok "no old contents after a crash between the conversion and the data ($windows window points)"
