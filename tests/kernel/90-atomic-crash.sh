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
#
# Every point is checked: 2700 of them took 540 s in an idle run and
# more than 600 s on a loaded machine, hence a longer limit.
# timeout: 1200s
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/crash-points.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CYCLES=${ATOMIC_CRASH_CYCLES:-30}
# A small journal (mkfs -J size=MB) commits more often on its own.
JOURNAL_MB=${ATOMIC_CRASH_JOURNAL_MB:-}
MIN_POINTS=200
FS_MB=64
W=$SCRATCH/atomic-crash
NAME=extalign-lw
export DM_DISABLE_UDEV=1
mkdir -p "$W"

sd=$(scsi_disk) || die "no scsi_debug disk"
need_log_writes

# replay-log, and the writer.
replay_log "$W"
gcc -O2 -Wall -Wextra -Werror -pthread -o "$W/atomic-crash" \
	"$TOP/tests/kernel/atomic-crash.c" || die "building atomic-crash"

# The log device starts empty, so that an old log cannot be read back.
dd if=/dev/zero of="$UBD" bs=1M count=1 conv=fsync status=none
dm_create "$NAME" "0 $((FS_MB * 2048)) log-writes $sd $UBD" ||
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
dm_remove "$NAME"

# Each crash point: a copy of the replayed image, mounted, checked; a
# full fsck of every 25th point, recovered by the mount.
crash_mounted() { # N MNT
	echo "point $1: $("$W/atomic-crash" check "$2/d" 2>&1 | tr '\n' ' ')"
}
start=$(date +%s)
crash_replay "$W" "$UBD" $FS_MB "" 25 W
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
