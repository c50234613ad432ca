#!/bin/bash
# Crash points from a dm log-writes log, for the crash tests: a test logs
# its writes (marking "setup" where its setup ends), then crash_replay
# replays the log into an image and, at every FUA write after the mark (a
# state a crash can leave), runs this file as "crash-points.sh point DIR
# EVERY" on a copy of the image: the test's crash_raw on it as the crash
# left it, then the test's crash_mounted on it mounted (journal recovery),
# and e2fsck -fn of every EVERYth point.  Source it after lib.sh.

CRASH_POINTS_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/crash-points.sh

# replay_log DIR: REPLAY_LOG is fstests' replay-log: beside KTOOL,
# EXTALIGN_REPLAY_LOG, or built in DIR from the fstests snapshot
# (EXTALIGN_TOOLS, by default ../shared/tools beside the checkout).  Skips
# the test without one.
replay_log() {
	local dir=$1 r tools tarball lw top

	for r in "$(dirname "$KTOOL")/replay-log" "${EXTALIGN_REPLAY_LOG:-}"; do
		if [ -x "$r" ]; then
			REPLAY_LOG=$r
			return 0
		fi
	done
	top=$(cd "$(dirname "$CRASH_POINTS_SH")/../.." && pwd)
	tools=${EXTALIGN_TOOLS:-$top/../shared/tools}
	tarball=$(find "$tools" -maxdepth 1 -name 'xfstests-*.tar.xz' 2>/dev/null | sort | tail -n 1)
	[ -n "$tarball" ] || skip "no fstests snapshot (xfstests-*.tar.xz) in $tools for replay-log"
	tar -xJf "$tarball" -C "$dir" --wildcards '*/src/log-writes/*' ||
		die "unpacking src/log-writes from $tarball"
	lw=$(echo "$dir"/*/src/log-writes)
	gcc -O2 -o "$dir/replay-log" "$lw/replay-log.c" "$lw/log-writes.c" ||
		die "building replay-log"
	REPLAY_LOG=$dir/replay-log
}

# delayed_log DELAY LW DISK SECTORS: the first SECTORS of DISK behind a
# dm device DELAY (linear until delay_writes says otherwise) behind dm
# log-writes LW, whose log is the ubd disk (cleared first).  The log-writes
# device, for the filesystem, is /dev/mapper/LW.
delayed_log() {
	dd if=/dev/zero of="$UBD" bs=1M count=1 conv=fsync status=none
	dm_linear "$1" "$3" "$4" || die "dmsetup create $1"
	dm_create "$2" "0 $4 log-writes /dev/mapper/$1 $UBD" ||
		die "dmsetup create log-writes"
}

# delay_writes DELAY DISK SECTORS [FIRST_BLOCK COUNT MS]: through delayed_log's
# DELAY, writes to those 4k blocks of DISK take MS ms; without them, none
# is delayed.
delay_writes() {
	local name=$1 disk=$2 sectors=$3 s n

	if [ $# = 6 ]; then
		s=$(($4 * 8)) n=$(($5 * 8))
		dm_table "$name" "0 $s linear $disk 0
$s $n delay $disk $s 0 $disk $s $6
$((s + n)) $((sectors - s - n)) linear $disk $((s + n))"
	else
		dm_table "$name"
	fi
}

# need_log_writes: skip the test without dmsetup or the dm log-writes target.
need_log_writes() {
	command -v dmsetup >/dev/null || skip "no dmsetup on the host root"
	[ -e /sys/module/dm_log_writes ] || grep -qw log-writes <(dmsetup targets) ||
		skip "the kernel has no dm log-writes target (CONFIG_DM_LOG_WRITES)"
}

# crash_replay DIR LOG MB FILL EVERY [VAR...]: replay the log on LOG (from
# replay_log's REPLAY_LOG) into DIR/replay.img, MB MiB that start as FILL
# (a tr octal escape such as '\132', or "" for zeros), then check every
# crash point after the "setup" mark.  The test defines
#   crash_mounted N MNT  (prints "point N: ..." result lines) and, if it
#   wants the image before recovery, crash_raw N IMAGE (the same);
# they run in another shell: the variables they use are the VARs (W, say),
# and the functions of lib.sh are not there.  Result lines go to
# DIR/results (with "point N: MOUNT ..." and "point N: FSCK ..." for a
# copy that does not mount or fsck clean), the count of points to
# DIR/points.
crash_replay() {
	local dir=$1 log=$2 mb=$3 fill=$4 every=$5

	shift 5
	{
		[ $# = 0 ] || declare -p "$@"
		declare -f crash_mounted
		! declare -F crash_raw >/dev/null || declare -f crash_raw
	} >"$dir/hooks"
	mkdir -p "$dir/mnt"
	echo 0 >"$dir/points"
	: >"$dir/results"
	rm -f "$dir/replay.img"
	if [ -n "$fill" ]; then
		tr '\000' "$fill" </dev/zero | dd of="$dir/replay.img" bs=1M count="$mb" \
			iflag=fullblock status=none || die "pattern fill of the image"
	else
		truncate -s "${mb}M" "$dir/replay.img"
	fi
	"$REPLAY_LOG" --log "$log" --num-entries
	"$REPLAY_LOG" --log "$log" --replay "$dir/replay.img" --end-mark setup ||
		die "replay to the setup mark"
	"$REPLAY_LOG" --log "$log" --replay "$dir/replay.img" --start-mark setup \
		--check fua --fsck "bash $(printf %q "$CRASH_POINTS_SH") point $(printf %q "$dir") $every" ||
		die "replay-log --check fua"
}

# crash_point DIR EVERY: one crash point (replay-log has the image in
# DIR/replay.img as it stands at this write).
crash_point() {
	local dir=$1 every=$2 n loop

	n=$(($(cat "$dir/points") + 1))
	echo "$n" >"$dir/points"
	cp "$dir/replay.img" "$dir/point.img"
	if declare -F crash_raw >/dev/null; then
		crash_raw "$n" "$dir/point.img" >>"$dir/results"
		cp "$dir/replay.img" "$dir/point.img"
	fi
	loop=$(losetup -f --show "$dir/point.img") || exit 1
	if mount -t ext4 "$loop" "$dir/mnt" 2>"$dir/mount.err"; then
		crash_mounted "$n" "$dir/mnt" >>"$dir/results"
		umount "$dir/mnt"
		if [ $((n % every)) = 0 ] && ! e2fsck -fn "$loop" >"$dir/fsck.log" 2>&1; then
			echo "point $n: FSCK $(tail -n 3 "$dir/fsck.log" | tr '\n' ' ')" >>"$dir/results"
		fi
	else
		echo "point $n: MOUNT $(tr '\n' ' ' <"$dir/mount.err")" >>"$dir/results"
	fi
	losetup -d "$loop"
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = point ]; then
	# shellcheck source=/dev/null # the test's hooks, written by crash_replay
	. "$2/hooks"
	crash_point "$2" "$3"
	exit 0
fi
