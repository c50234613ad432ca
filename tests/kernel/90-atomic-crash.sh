#!/bin/bash
# Spec item 8 (issue 15, section 2): atomic writes never tear across a
# crash.  A dm log-writes target between ext4 and the scsi_debug disk
# (the log on the ubd disk) records every write; atomic-crash.c writes
# 16/32/64 KiB RWF_ATOMIC generations over holes, unwritten and mixed
# units of forcealign files, and over a unit that is two unwritten
# extents, while a thread forces journal commits.  The log is then
# replayed with fstests' replay-log, and at every FUA write after the
# setup (each journal commit: a state a crash can leave) a copy is
# mounted (journal recovery) and every slot must hold one whole
# generation.  Prints the points checked and the torn slots found.
#
# Needs the harness patch that lets dm log-writes offer the device's
# atomic write limits (kernel/fstests/harness-patches) and the fstests
# snapshot for replay-log (../shared/tools or EXTALIGN_TOOLS).
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CYCLES=${ATOMIC_CRASH_CYCLES:-30}
# A small journal (mkfs -J size=MB) commits more often on its own.
JOURNAL_MB=${ATOMIC_CRASH_JOURNAL_MB:-}
MIN_POINTS=200
FS_MB=64
W=$SCRATCH/atomic-crash
NAME=extalign-lw
export DM_DISABLE_UDEV=1
mkdir -p "$W/mnt"

sd=$(scsi_disk) || die "no scsi_debug disk"
command -v dmsetup >/dev/null || skip "no dmsetup on the host root"
[ -e /sys/module/dm_log_writes ] || grep -qw log-writes <(dmsetup targets) ||
	skip "the kernel has no dm log-writes target (CONFIG_DM_LOG_WRITES)"

# replay-log from the fstests snapshot, and the writer.
tools=${EXTALIGN_TOOLS:-$TOP/../shared/tools}
tarball=$(ls "$tools"/xfstests-*.tar.xz 2>/dev/null | tail -n 1)
[ -n "$tarball" ] || skip "no fstests snapshot (xfstests-*.tar.xz) in $tools for replay-log"
tar -xJf "$tarball" -C "$W" --wildcards '*/src/log-writes/*' ||
	die "unpacking src/log-writes from $tarball"
lw=$(echo "$W"/*/src/log-writes)
gcc -O2 -o "$W/replay-log" "$lw/replay-log.c" "$lw/log-writes.c" ||
	die "building replay-log"
gcc -O2 -Wall -Wextra -Werror -pthread -o "$W/atomic-crash" \
	"$TOP/tests/kernel/atomic-crash.c" || die "building atomic-crash"

cleanup_dm() {
	umount "$MNT" 2>/dev/null
	dmsetup remove "$NAME" 2>/dev/null
}
trap cleanup_dm EXIT

# The log device starts empty, so that an old log cannot be read back.
dd if=/dev/zero of="$UBD" bs=1M count=1 conv=fsync status=none
dmsetup create "$NAME" --table "0 $((FS_MB * 2048)) log-writes $sd $UBD" ||
	die "dmsetup create log-writes over $sd"
dev=/dev/mapper/$NAME
q=/sys/block/$(dmsetup info -c --noheadings -o blkdevname "$NAME")/queue
expect "log-writes offers the disk's atomic writes" \
	"$(cat "$q/atomic_write_unit_max_bytes")" 65536

mkfs.ext4 -q -F -b 4096 ${JOURNAL_MB:+-J size=$JOURNAL_MB} \
	-E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$dev" ||
	die "mkfs.ext4 on $dev"
mount -t ext4 "$dev" "$MNT" || die "mount $dev"
mkdir "$MNT/d"
setup=$("$W/atomic-crash" setup "$MNT/d") || die "atomic-crash setup"
echo "$setup"
u0=$(sed -n 's/.*split unit: blocks \([0-9]*\)-.*/\1/p' <<<"$setup")

# split_extents: the leaf extents of file b inside the split unit that
# are unwritten, read from the extent tree itself (FIEMAP goes through
# the extent status cache, which shows the unit as one extent).  A
# freeze checkpoints the journal, so that debugfs reads it in place.
split_extents() {
	fsfreeze -f "$MNT" || die "fsfreeze"
	debugfs -R "ex /d/b" "$dev" 2>/dev/null >"$W/ex.txt"
	fsfreeze -u "$MNT"
	sed 's|/ *|/|g' "$W/ex.txt" | awk -v u="$u0" '{ split($1, l, "/") }
		l[1] == l[2] && $3 >= u && $3 <= u + 3 && $NF == "Uninit" { n++ }
		END { print n + 0 }'
}
expect "the split unit is two unwritten extents (across two leaves)" \
	"$(split_extents)" 2
sync
dmsetup message "$NAME" 0 mark setup || die "mark setup"
start=$(date +%s)
"$W/atomic-crash" write "$MNT/d" "$CYCLES" || die "atomic-crash write"
echo "writer: $(($(date +%s) - start))s"
"$W/atomic-crash" rearm-split "$MNT/d" || die "atomic-crash rearm-split"
expect "a re-arm gives the split unit its two unwritten extents again" \
	"$(split_extents)" 2
umount "$MNT" || die "umount"
dmsetup message "$NAME" 0 mark end || die "mark end"
dmsetup remove "$NAME" || die "dmsetup remove"
trap - EXIT

# Each crash point: a copy of the replayed image, mounted, checked.
cat >"$W/point.sh" <<EOF
#!/bin/bash
n=\$((\$(cat "$W/points") + 1))
echo "\$n" >"$W/points"
cp "$W/replay.img" "$W/point.img"
loop=\$(losetup -f --show "$W/point.img") || exit 1
if mount -t ext4 "\$loop" "$W/mnt" 2>"$W/mount.err"; then
	echo "point \$n: \$("$W/atomic-crash" check "$W/mnt/d" 2>&1 | tr '\n' ' ')" >>"$W/results"
	umount "$W/mnt"
	# A full fsck of every 25th point, recovered by the mount.
	if [ \$((n % 25)) = 0 ] && ! e2fsck -fn "\$loop" >"$W/fsck.log" 2>&1; then
		echo "point \$n: FSCK \$(tail -n 3 "$W/fsck.log" | tr '\n' ' ')" >>"$W/results"
	fi
else
	echo "point \$n: MOUNT \$(tr '\n' ' ' <"$W/mount.err")" >>"$W/results"
fi
losetup -d "\$loop"
exit 0
EOF
chmod +x "$W/point.sh"
echo 0 >"$W/points"
: >"$W/results"
rm -f "$W/replay.img"
truncate -s "${FS_MB}M" "$W/replay.img"
"$W/replay-log" --log "$UBD" --num-entries
"$W/replay-log" --log "$UBD" --replay "$W/replay.img" --end-mark setup ||
	die "replay to the setup mark"
start=$(date +%s)
"$W/replay-log" --log "$UBD" --replay "$W/replay.img" --start-mark setup \
	--check fua --fsck "$W/point.sh" || die "replay-log --check fua"
echo "replay and checks: $(($(date +%s) - start))s"

points=$(cat "$W/points")
torn=$(grep -c 'TORN' "$W/results")
bad=$(grep -c 'MOUNT\|FSCK\|missing\|atomic-crash:' "$W/results")
grep 'TORN\|MOUNT\|FSCK\|missing\|atomic-crash:' "$W/results" | head -n 20
echo "points checked: $points, torn slots: $torn, mount/fsck/other failures: $bad"
[ "$points" -ge $MIN_POINTS ] || die "only $points crash points, want >= $MIN_POINTS"
[ "$bad" = 0 ] || die "$bad crash points did not mount, fsck or read back"
[ "$torn" = 0 ] || die "$torn torn slots over $points crash points"
ok "no torn atomic write over $points crash points"
