#!/bin/bash
# PID 1 of the UML guest that tests/bench/atomic.sh boots through
# kernel/boot.sh: four jobs of random atomic-size writes on the scsi_debug
# disk (4 KiB sectors, atomic writes of 4..64 KiB), each on a fresh ext4:
#   a  4 KiB blocks, a file with extsize 16k + forcealign, RWF_ATOMIC
#   b  bigalloc with 16 KiB clusters, a plain file, RWF_ATOMIC
#   c  4 KiB blocks, a plain file, no RWF_ATOMIC (the baseline)
#   d  c behind a doublewrite buffer (BENCH_DW_BATCH pages per RWF_DSYNC
#      write to a second file first, as InnoDB does), what c really costs
# (16k: BENCH_BS, which sets the write size, the extent size hint of a and
# the cluster size of b.)  Each job runs BENCH_ROUNDS times, interleaved.
# All of that once for each number of threads in BENCH_THREADS (default
# "4,1": UML has one CPU, so with 4 threads the tail latency is mostly the
# wait for the other threads' time slices; 1 thread shows the write's own).
# Results of a pass go to $EXTALIGN_OUT/tN/results ("INFO", "MOUNT", then
# per job and round "RESULT", "FSCK", "KLOG", "TIME" lines), the latency
# histogram of each to tN/JOB.rROUND.hist, the whole log to
# $EXTALIGN_OUT/guest.log.
#
# From the kernel command line (kernel/boot.sh NAME=value): EXTALIGN_OUT,
# BENCH_TOOL (the atomic-write binary), BENCH_BS, BENCH_THREADS (a list),
# BENCH_RUNTIME (seconds a round), BENCH_ROUNDS (each job runs once a
# round, on a new filesystem), BENCH_WARMUP, BENCH_SIZE_MB, BENCH_DW_BATCH,
# BENCH_JOBS (default "a,b,c,d"),
# BENCH_DEV (another disk than the scsi_debug one; "bash atomic-guest.sh
# work" with EXTALIGN_OUT, BENCH_TOOL and BENCH_DEV runs the jobs on a host).
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(cd "$HERE/../.." && pwd)

if [ "${1:-}" != work ]; then
	# PID 1: never exit before the poweroff (the kernel would panic).
	# shellcheck source=../kernel/guest.sh
	. "$TOP/tests/kernel/guest.sh"
	guest_setup
	OUT=${EXTALIGN_OUT:-/tmp/extalign-bench-out}
	mkdir -p "$OUT"
	echo "atomic-guest: kernel $(uname -r), results in $OUT"
	timeout 900 bash "$0" work >"$OUT/guest.log" 2>&1
	echo $? >"$OUT/rc"
	dmesg >"$OUT/dmesg"
	echo "done" >"$OUT/done"
	echo "atomic-guest: done, rc $(cat "$OUT/rc")"
	guest_poweroff
fi

set -u
OUT=$EXTALIGN_OUT
AW=${BENCH_TOOL:?BENCH_TOOL is not set}
BS=${BENCH_BS:-16k}
THREADS=${BENCH_THREADS:-4,1}
RUNTIME=${BENCH_RUNTIME:-6}
WARMUP=${BENCH_WARMUP:-1}
SIZE_MB=${BENCH_SIZE_MB:-64}
JOBS=${BENCH_JOBS:-a,b,c,d}
DW_BATCH=${BENCH_DW_BATCH:-8}
ROUNDS=${BENCH_ROUNDS:-3}
MNT=/run/bench-mnt
# The extent size hint of a and the cluster of b follow the write size.
UNIT=$(numfmt --from=iec "${BS^^}")
# The lines every pass's results start with; a pass is the jobs with one
# number of threads, in $OUT/tN.
RES=$OUT/info
: >"$RES"

res() { echo "$*" | tee -a "$RES"; }

scsi_disk() {
	local b
	for b in /sys/block/sd*; do
		grep -qs scsi_debug "$b/device/model" && { echo "${b##*/}"; return 0; }
	done
	return 1
}

if [ -n "${BENCH_DEV:-}" ]; then
	sd=${BENCH_DEV#/dev/}
else
	sd=$(scsi_disk) || { res "INFO error=no scsi_debug disk"; exit 1; }
fi
dev=/dev/$sd
q=/sys/block/$sd/queue
p=/sys/module/scsi_debug/parameters
res "INFO kernel=$(uname -r) build=$(uname -v | tr ' ' _)"
res "INFO disk=$dev disk_mb=$(($(cat "/sys/block/$sd/size") / 2048))" \
	"lbs=$(cat "$q"/logical_block_size) atomic_unit_min=$(cat "$q"/atomic_write_unit_min_bytes 2>/dev/null || echo -)" \
	"atomic_unit_max=$(cat "$q"/atomic_write_unit_max_bytes 2>/dev/null || echo -)" \
	"sd_delay=$(cat $p/delay 2>/dev/null || echo -) sd_ndelay=$(cat $p/ndelay 2>/dev/null || echo -)"
res "INFO cpus=$(nproc) mem_mb=$(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024))"
res "INFO bs=$BS runtime=$RUNTIME warmup=$WARMUP file_mb=$SIZE_MB dw_batch=$DW_BATCH rounds=$ROUNDS"
res "INFO passes=$THREADS jobs=$JOBS"

declare -A skipped=()

# job NAME ROUND: round ROUND of NAME's write job, on a new ext4.
job() {
	local name=$1 k=$2 t0 rc mkfs tag=$PASS/$1.r$2
	local -a args=()

	case $name in
	a) mkfs="-b 4096" args=(--extsize "$UNIT" --forcealign) ;;
	b) mkfs="-b 4096 -O bigalloc -C $UNIT" ;;
	c) mkfs="-b 4096" args=(--no-atomic) ;;
	d) mkfs="-b 4096" args=(--no-atomic --doublewrite "$MNT/d.dblwr" --dw-batch "$DW_BATCH") ;;
	esac
	[[ ",$JOBS," == *",$name,"* ]] || return 0
	# A job that cannot run on this kernel will not in the next round either.
	[ -z "${skipped[$PASS/$name]:-}" ] || return 0
	t0=$(date +%s)
	echo "== job $name round $k: mkfs.ext4 $mkfs, atomic-write ${args[*]}"
	umount "$MNT" 2>/dev/null
	mkdir -p "$MNT"
	dmesg -C
	# shellcheck disable=SC2086 # the options are words
	if ! mkfs.ext4 -q -F -E nodiscard $mkfs "$dev" || ! mount -t ext4 "$dev" "$MNT"; then
		res "RESULT job=$name round=$k status=fail reason=mkfs.ext4 $mkfs or mount failed"
		return
	fi
	dmesg | grep 'EXT4-fs' | sed "s/^/# $name: dmesg: /"
	[ "$k" = 1 ] && res "MOUNT job=$name $(dmesg | grep -m1 -o 'EXT4-fs.*atomic writes.*')"
	"$AW" --label "$name" --bs "$BS" --threads "$NTHREADS" --runtime "$RUNTIME" \
		--warmup "$WARMUP" --size "${SIZE_MB}m" --seed "$k" --hist "$tag.hist" \
		"${args[@]}" "$MNT/$name.dat" | tee "$tag.out"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 77 ] && skipped[$PASS/$name]=1
	grep '^RESULT ' "$tag.out" | sed "s/^RESULT job=$name /&round=$k /" >>"$RES" ||
		res "RESULT job=$name round=$k status=fail reason=atomic-write exited $rc without a result"
	umount "$MNT" || res "FSCK job=$name round=$k status=busy"
	if e2fsck -fn "$dev" >"$tag.fsck" 2>&1; then
		res "FSCK job=$name round=$k status=clean"
	else
		res "FSCK job=$name round=$k status=errors"
	fi
	if dmesg | grep -qE 'WARNING:|BUG:|Oops|Call Trace|EXT4-fs error|UBSAN'; then
		dmesg >"$tag.dmesg"
		res "KLOG job=$name round=$k status=warnings"
	else
		res "KLOG job=$name round=$k status=clean"
	fi
	res "TIME job=$name round=$k secs=$(($(date +%s) - t0))"
}

# Every round starts one job later, so that no job always runs first or
# right after another: a drift of the host's speed spreads over all jobs.
order=(a b c d)
for NTHREADS in ${THREADS//,/ }; do
	PASS=$OUT/t$NTHREADS
	mkdir -p "$PASS"
	cp "$OUT/info" "$PASS/results"
	RES=$PASS/results
	res "INFO threads=$NTHREADS"
	for ((k = 1; k <= ROUNDS; k++)); do
		for ((i = 0; i < 4; i++)); do
			job "${order[(i + k - 1) % 4]}" "$k"
		done
	done
done
echo "== all jobs done"
