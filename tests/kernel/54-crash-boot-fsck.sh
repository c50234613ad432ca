#!/bin/bash
# Issue 28.7: a real crash with a forcealign file on the orphan list, then
# the boot-time fsck.  An extending direct write puts its inode on the
# orphan list until the write completes; a crash in between leaves the
# orphan for the next boot, where e2fsck -p (before the kernel mounts)
# truncates the file to i_size.  Debian's e2fsck frees the blocks past
# EOF one by one and breaks the unit that holds EOF; the series' e2fsck
# (e2fsprogs/) keeps it whole, and an atomic write into it works.
#
# As in test 67: ext4 on dm log-writes over dm-delay on the scsi_debug
# disk, the data of each write past EOF held back while a sync commits
# the orphan record; then every FUA point of the log is a crash.  At each
# point with an orphan on disk, a copy goes through the series' e2fsck -p
# and must have every unit whole, fsck clean after, and take a 16k atomic
# write into its EOF unit; another copy goes through Debian's e2fsck -p,
# which must break a unit at one point at least (the "before").
#
# replay-log: beside KTOOL, or built from the fstests snapshot.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/crash-points.sh"

BOTH=0x100800
K=1024
FS_MB=64
sectors=$((FS_MB * 2048))
W=$SCRATCH/boot-fsck
DELAY=extalign-delay54 LW=extalign-lw54
FILES="a b c"
export DM_DISABLE_UDEV=1
mkdir -p "$W"

# lib.sh names the two e2fscks it compares.
[ -n "$SERIES_E2FSCK" ] || skip "no patched e2fsprogs in the guest (e2fsprogs/check.sh builds them)"
[ -n "$DEBIAN_E2FSCK" ] || skip "/sbin/e2fsck is the series' (e2fsprogs $SYSTEM_E2FSPROGS): no Debian e2fsck to compare with"
sd=$(scsi_disk) || die "no scsi_debug disk"
need_log_writes
replay_log "$W"

delayed_log $DELAY $LW "$sd" $sectors
dev=/dev/mapper/$LW

mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$dev" ||
	die "mkfs.ext4"
mount -t ext4 "$dev" "$MNT" || die "mount $dev"
for name in $FILES; do
	: >"$MNT/$name"
	[ "$(kt setx "$MNT/$name" $BOTH $((16 * K)))" = ok ] || die "$name: setx"
	xfs_io -d -c "pwrite -q -S 0xa5 0 20k" "$MNT/$name" || die "$name: first write"
done
sync
dmsetup message $LW 0 mark setup || die "mark setup"

# Each file: a write past EOF, from 24k (inside the unit 16k-32k that
# holds EOF) into the next unit, held back on the disk while a sync
# commits the orphan record and the new mapping.
for name in $FILES; do
	f=$MNT/$name
	p=$(xfs_io -c "fiemap -v 16384 4096" "$f" | awk '
		$2 ~ /^\[/ && $3 != "hole" { split($3, p, /\.\./); print p[1] / 8; exit }')
	[ -n "$p" ] || die "$name: block 4 not mapped"
	delay_writes $DELAY "$sd" $sectors $((p + 2)) 6 3000
	xfs_io -d -c "pwrite -q -S 0xa5 24k 16k" "$f" &
	pid=$!
	sleep 1
	sync -f "$f"
	wait $pid || die "$name: the write past EOF failed"
	delay_writes $DELAY "$sd" $sectors
	expect "$name: size after the write" "$(stat -c %s "$f")" 40960
done
umount "$MNT" || die "umount"
dmsetup message $LW 0 mark end || die "mark end"
dm_remove $LW $DELAY

# At a crash point: the boot-time fsck of each kind on a copy.  Runs in
# another shell (crash-points.sh), which has only the hooks and the
# variables named to crash_replay: units is defined inside.
crash_raw() { # N IMAGE
	local n=$1 img=$2 w=$W/point orphan nm size eof out

	# units IMAGE: "whole", or the first forcealign file whose extents do not
	# cover whole 4-block units from multiples of 4 (debugfs "ex").
	units() {
		local nm out

		for nm in $FILES; do
			out=$(debugfs -R "ex /$nm" "$1" 2>/dev/null | sed 's|/ *|/|g' | awk '
				NR > 1 {
					split($1, lv, "/"); if (lv[1] != lv[2]) next
					l = $3; p = $6; n = $9
					if (run && l == rl + rn && p == rp + rn) { rn += n; next }
					if (run && (rl % 4 || rn % 4 || rp % 4)) { print rl ":" rn "@" rp; exit }
					run = 1; rl = l; rn = n; rp = p
				}
				END { if (run && (rl % 4 || rn % 4 || rp % 4)) print rl ":" rn "@" rp }')
			[ -z "$out" ] || { echo "broken /$nm run $out"; return; }
		done
		echo whole
	}

	mkdir -p "$w"
	cp "$img" "$w/raw.img"
	debugfs -w -R journal_run "$w/raw.img" >/dev/null 2>&1
	orphan=$(dumpe2fs -h "$w/raw.img" 2>/dev/null | sed -n 's/^First orphan inode: *//p')
	[ -n "$orphan" ] || { echo "point $n: no orphan"; return; }
	echo "point $n: orphan $orphan"

	cp "$img" "$w/debian.img"
	"$DEBIAN_E2FSCK" -p "$w/debian.img" >/dev/null 2>&1
	echo "point $n: debian $(units "$w/debian.img")"

	cp "$img" "$w/series.img"
	"$SERIES_E2FSCK" -p "$w/series.img" >"$w/fsck.log" 2>&1 ||
		[ $? = 1 ] || echo "point $n: series FSCK-P $(tail -n 2 "$w/fsck.log" | tr '\n' ' ')"
	echo "point $n: series $(units "$w/series.img")"
	"$SERIES_E2FSCK" -fn "$w/series.img" >"$w/fsck.log" 2>&1 ||
		echo "point $n: series FSCK-FN $(grep -v '^Pass' "$w/fsck.log" | tr '\n' ' ')"
	# The atomic writes need the scsi_debug disk, free again after the log.
	dd if="$w/series.img" of="$sd" bs=1M oflag=direct status=none || return
	mkdir -p "$w/mnt"
	if mount -t ext4 "$sd" "$w/mnt"; then
		for nm in $FILES; do
			size=$(stat -c %s "$w/mnt/$nm")
			eof=$(((size + 16383) / 16384 * 16384 - 16384))
			[ "$eof" -ge 0 ] || eof=0
			out=$("$KTOOL" awrite "$w/mnt/$nm" "$eof" 16384)
			[ "$out" = "ok 16384" ] || echo "point $n: series AWRITE /$nm at $eof (size $size): $out"
		done
		umount "$w/mnt"
	else
		echo "point $n: series MOUNT"
	fi
}

crash_mounted() { # N MNT: the kernel's own recovery; nothing to add here.
	:
}

crash_replay "$W" "$UBD" $FS_MB "" 1 W FILES SERIES_E2FSCK DEBIAN_E2FSCK sd
cat "$W/results"
points=$(cat "$W/points")
orphans=$(grep -c ': orphan ' "$W/results")
debian_broken=$(grep -c ': debian broken' "$W/results")
series_bad=$(grep -c ': series \(broken\|FSCK\|AWRITE\|MOUNT\)' "$W/results")
kernel_bad=$(grep -c ': \(MOUNT\|FSCK\) ' "$W/results")
echo "points: $points, with an orphan: $orphans; Debian's e2fsck broke a unit at $debian_broken, the series' failed at $series_bad"
[ "$orphans" -ge 1 ] || die "no crash point with an orphan on disk: the test did not reach its case"
[ "$kernel_bad" = 0 ] || die "$kernel_bad crash points did not mount or fsck after the kernel's recovery"
[ "$debian_broken" -ge 1 ] || die "Debian's e2fsck -p broke no unit: this test no longer shows the break it is about"
ok "before: Debian's e2fsck -p broke a unit at $debian_broken of $orphans orphan points"
[ "$series_bad" = 0 ] || die "the series' e2fsck -p failed at $series_bad orphan points"
ok "the series' e2fsck -p kept every unit whole at $orphans orphan points; fsck clean, atomic writes into the EOF unit work"
