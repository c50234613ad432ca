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

BOTH=0x100800 EXTSIZE=0x800
K=1024
FS_MB=64
sectors=$((FS_MB * 2048))
W=$SCRATCH/eof-crash
DELAY=extalign-delay LW=extalign-lw67
export DM_DISABLE_UDEV=1
mkdir -p "$W/mnt"

sd=$(scsi_disk) || die "no scsi_debug disk"
command -v dmsetup >/dev/null || skip "no dmsetup"
tools=$(dirname "$KTOOL")
replay=
for r in "$tools/replay-log" "${EXTALIGN_REPLAY_LOG:-}"; do
	[ -x "$r" ] && replay=$r && break
done
if [ -z "$replay" ]; then
	TOP=$(cd "$(dirname "$0")/../.." && pwd)
	tarball=$(ls "${EXTALIGN_TOOLS:-$TOP/../shared/tools}"/xfstests-*.tar.xz 2>/dev/null | tail -n 1)
	[ -n "$tarball" ] || skip "no fstests snapshot (xfstests-*.tar.xz) for replay-log"
	tar -xJf "$tarball" -C "$W" --wildcards '*/src/log-writes/*' || die "unpacking replay-log"
	lw=$(echo "$W"/*/src/log-writes)
	gcc -O2 -o "$W/replay-log" "$lw/replay-log.c" "$lw/log-writes.c" || die "building replay-log"
	replay=$W/replay-log
fi

cleanup_dm() {
	umount "$MNT" 2>/dev/null
	dmsetup remove $LW 2>/dev/null
	dmsetup remove $DELAY 2>/dev/null
}
trap cleanup_dm EXIT

tr '\000' '\132' </dev/zero | dd of="$sd" bs=1M count=$FS_MB iflag=fullblock \
	oflag=direct status=none || die "pattern fill"
dd if=/dev/zero of="$UBD" bs=1M count=1 conv=fsync status=none
linear="0 $sectors linear $sd 0"
dmsetup create $DELAY --table "$linear" || die "dmsetup create $DELAY"
dmsetup create $LW --table "0 $sectors log-writes /dev/mapper/$DELAY $UBD" ||
	die "dmsetup create log-writes"
dev=/dev/mapper/$LW

# delay_writes FIRST_BLOCK COUNT MS: writes to those 4k blocks take MS ms;
# with no argument, nothing is delayed.
delay_writes() {
	local table=$linear s n

	if [ $# = 3 ]; then
		s=$(($1 * 8)) n=$(($2 * 8))
		table="0 $s linear $sd 0
$s $n delay $sd $s 0 $sd $s $3
$((s + n)) $((sectors - s - n)) linear $sd $((s + n))"
	fi
	dmsetup load $DELAY --table "$table" &&
		dmsetup suspend --nolockfs $DELAY && dmsetup resume $DELAY ||
		die "dm table: $table"
}

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
	delay_writes $((p0[$name] + 2)) 2 3000
	xfs_io -d -c "pwrite -q -S 0xa5 8k 8k" "$f" &
	pid=$!
	sleep 1
	sync -f "$f"
	wait $pid || die "$name: the write past EOF failed"
	delay_writes
	expect "$name: size after the write" "$(stat -c %s "$f")" 16384
done
umount "$MNT" || die "umount"
dmsetup message $LW 0 mark end || die "mark end"
dmsetup remove $LW && dmsetup remove $DELAY || die "dmsetup remove"
trap - EXIT

# One crash point: what the disk says before recovery, then what a
# recovered mount shows.
cat >"$W/point.sh" <<EOF
#!/bin/bash
n=\$((\$(cat "$W/points") + 1))
echo "\$n" >"$W/points"
cp "$W/replay.img" "$W/point.img"
# Only the journal: e2fsck would also release the orphan inodes.
debugfs -w -R journal_run "$W/point.img" >>"$W/journal.log" 2>&1
for name in forcealign:${ino[forcealign]}:${p0[forcealign]} hinted:${ino[hinted]}:${p0[hinted]}; do
	IFS=: read -r nm ino p0 <<<"\$name"
	ex=\$(debugfs -R "ex <\$ino>" "$W/point.img" 2>/dev/null)
	echo "point \$n: \$nm: \$(tail -n +2 <<<"\$ex" | tr -s ' ' | tr '\n' ';')" >>"$W/debug"
	# Blocks 2 and 3, written in the extent tree, still holding 0x5a.
	for b in 2 3; do
		written=\$(sed 's|/ *|/|g' <<<"\$ex" | awk -v b=\$b '{ split(\$1, l, "/") }
			l[1] == l[2] && \$3 <= b && \$5 >= b && \$NF != "Uninit" { print "yes" }')
		old=\$(dd if="$W/point.img" bs=4k skip=\$((p0 + b)) count=1 status=none | tr -d '\132' | wc -c)
		[ -n "\$written" ] && [ "\$old" = 0 ] &&
			echo "point \$n: \$nm block \$b window" >>"$W/results"
	done
done
cp "$W/replay.img" "$W/point.img"
loop=\$(losetup -f --show "$W/point.img") || exit 1
if mount -t ext4 "\$loop" "$W/mnt" 2>"$W/mount.err"; then
	for nm in forcealign hinted; do
		f="$W/mnt/\$nm"
		[ -f "\$f" ] || continue
		size=\$(stat -c %s "\$f")
		truncate -s 16k "\$f"
		stale=\$(tr -d -c '\132' <"\$f" | wc -c)
		echo "point \$n: \$nm size \$size stale \$stale" >>"$W/results"
	done
	umount "$W/mnt"
	e2fsck -fn "\$loop" >"$W/fsck.log" 2>&1 ||
		echo "point \$n: FSCK \$(tail -n 3 "$W/fsck.log" | tr '\n' ' ')" >>"$W/results"
else
	echo "point \$n: MOUNT \$(tr '\n' ' ' <"$W/mount.err")" >>"$W/results"
fi
losetup -d "\$loop"
exit 0
EOF
chmod +x "$W/point.sh"
echo 0 >"$W/points"
: >"$W/results"
tr '\000' '\132' </dev/zero | dd of="$W/replay.img" bs=1M count=$FS_MB iflag=fullblock \
	status=none || die "pattern fill of the image"
"$replay" --log "$UBD" --replay "$W/replay.img" --end-mark setup || die "replay to setup"
"$replay" --log "$UBD" --replay "$W/replay.img" --start-mark setup \
	--check fua --fsck "$W/point.sh" || die "replay-log --check fua"
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
