#!/bin/bash
# PID 1 of the UML guest that tests/bench/atomic.sh boots through
# kernel/boot.sh: four jobs of random writes on the scsi_debug disk (4 KiB
# sectors, atomic writes of 4..64 KiB), cut into four partitions, one ext4
# and one preallocated, written file per job:
#   a  4 KiB blocks, a file with extsize 16k + forcealign, RWF_ATOMIC
#   b  bigalloc with 16 KiB clusters, a plain file, RWF_ATOMIC
#   c  4 KiB blocks, a plain file, no RWF_ATOMIC (the baseline)
#   d  c behind a doublewrite buffer (BENCH_DW_BATCH pages per RWF_DSYNC
#      write to a second file first, as InnoDB does), what c really costs
#   fa a's file and writes, made by fio (BENCH_FIO, fio 3.42 from
#      ../shared/tools: pvsync2, atomic=1, so each write is RWF_ATOMIC)
#   fc c's file and writes, made by fio (the same without atomic=1)
# (fio cannot put a doublewrite buffer in front of its writes: d stays
# atomic-write's; fa and fc show that both tools measure the same thing.)
# (16k: BENCH_BS, which sets the write size, the extent size hint of a and
# the cluster size of b.)  The four files exist side by side, so the jobs
# run in short rounds, BENCH_ROUNDS of them, one job after the other and one
# job later each round: a drift of the host's speed (it is shared) spreads
# over all jobs instead of landing on one.  All rounds run once for each
# number of threads in BENCH_THREADS (default "4,1": UML has one CPU, so
# with 4 threads the tail latency is mostly the wait for the other threads'
# time slices; 1 thread shows the write's own).
#
# Results: $EXTALIGN_OUT/info ("INFO" and "MOUNT" lines), setup/JOB.out
# (what atomic-write said creating the file: statx, the RWF_ATOMIC probe),
# per pass tN/results (the info lines, then "RESULT" lines per job and
# round), tN/JOB.rROUND.hist (latency histograms), then "FSCK" and "KLOG"
# lines in info; the whole log in guest.log.
#
# From the kernel command line (kernel/boot.sh NAME=value): EXTALIGN_OUT,
# BENCH_TOOL (the atomic-write binary), BENCH_BS, BENCH_THREADS (a list),
# BENCH_RUNTIME (seconds a job a round), BENCH_ROUNDS, BENCH_WARMUP,
# BENCH_SIZE_MB, BENCH_DW_BATCH, BENCH_JOBS (default "a,b,c,d"), BENCH_DEV
# (another disk than the scsi_debug one, to be partitioned and formatted),
# BENCH_FIO (the fio binary, for fa and fc).
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
RUNTIME=${BENCH_RUNTIME:-3}
WARMUP=${BENCH_WARMUP:-0.5}
SIZE_MB=${BENCH_SIZE_MB:-64}
JOBS=${BENCH_JOBS:-a,b,c,d}
DW_BATCH=${BENCH_DW_BATCH:-8}
ROUNDS=${BENCH_ROUNDS:-6}
FIO=${BENCH_FIO:-}
MNT=/run/bench
# The extent size hint of a and the cluster of b follow the write size.
UNIT=$(numfmt --from=iec "${BS^^}")
INFO=$OUT/info
: >"$INFO"

res() { echo "$*" | tee -a "$INFO"; }
has() { [[ ",$JOBS," == *",$1,"* ]]; }

scsi_disk() {
	local b
	for b in /sys/block/sd*; do
		grep -qs scsi_debug "$b/device/model" && { echo "${b##*/}"; return 0; }
	done
	return 1
}

# partition DEV N: N equal primary partitions, 1 MiB aligned (so that each
# keeps the disk's atomic write alignment).  No sfdisk on Debian's base.
partition() {
	python3 - "$1" "$2" <<'EOF'
import fcntl, os, struct, sys

BLKSSZGET, BLKRRPART = 0x1268, 0x125F
fd = os.open(sys.argv[1], os.O_RDWR)
n = int(sys.argv[2])
lbs = struct.unpack("i", fcntl.ioctl(fd, BLKSSZGET, b"\0" * 4))[0]
total = os.lseek(fd, 0, os.SEEK_END) // lbs
mib = (1 << 20) // lbs
size = (total - mib) // n // mib * mib
mbr = bytearray(512)
for i in range(n):
    # status, CHS first (unused), type 0x83, CHS last, LBA start, count
    entry = struct.pack("<B3sB3sII", 0, b"\xff" * 3, 0x83, b"\xff" * 3, mib + i * size, size)
    mbr[446 + 16 * i : 462 + 16 * i] = entry
mbr[510:512] = b"\x55\xaa"
os.pwrite(fd, bytes(mbr), 0)
os.fsync(fd)
fcntl.ioctl(fd, BLKRRPART)
os.close(fd)
EOF
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
	"lbs=$(cat "$q"/logical_block_size)" \
	"atomic_unit_min=$(cat "$q"/atomic_write_unit_min_bytes 2>/dev/null || echo -)" \
	"atomic_unit_max=$(cat "$q"/atomic_write_unit_max_bytes 2>/dev/null || echo -)" \
	"sd_delay=$(cat $p/delay 2>/dev/null || echo -) sd_ndelay=$(cat $p/ndelay 2>/dev/null || echo -)"
res "INFO cpus=$(nproc) mem_mb=$(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024))"
res "INFO bs=$BS runtime=$RUNTIME warmup=$WARMUP file_mb=$SIZE_MB dw_batch=$DW_BATCH" \
	"rounds=$ROUNDS passes=$THREADS jobs=$JOBS"

partition "$dev" 4 || { res "INFO error=cannot partition $dev"; exit 1; }
udevadm settle 2>/dev/null
pfx=$dev
[[ $sd == *[0-9] ]] && pfx=${dev}p
declare -A part=([a]=${pfx}1 [b]=${pfx}2 [c]=${pfx}3 [d]=${pfx}4)
declare -A mkfs_opts=([a]="-b 4096" [b]="-b 4096 -O bigalloc -C $UNIT" [c]="-b 4096" [d]="-b 4096")
declare -A tool_opts=([a]="--extsize $UNIT --forcealign" [b]="" [c]="--no-atomic"
	[d]="--no-atomic --doublewrite $MNT/d/dblwr --dw-batch $DW_BATCH")
declare -A ready=()
for j in a b c d; do
	for _ in $(seq 20); do [ -b "${part[$j]}" ] && break; sleep 0.1; done
done

# setup JOB: its ext4 and its file, hints set, allocated and written; the
# RWF_ATOMIC probe.  A job the kernel cannot run is recorded as such once.
mkdir -p "$OUT/setup"
dmesg -C
for j in a b c d; do
	has "$j" || continue
	echo "== setup $j: mkfs.ext4 ${mkfs_opts[$j]} ${part[$j]}, atomic-write ${tool_opts[$j]}"
	mkdir -p "$MNT/$j"
	# shellcheck disable=SC2086 # the options are words
	if ! mkfs.ext4 -q -F -E nodiscard ${mkfs_opts[$j]} "${part[$j]}" ||
	   ! mount -t ext4 "${part[$j]}" "$MNT/$j"; then
		echo "RESULT job=$j round=1 status=fail reason=mkfs.ext4 or mount of ${part[$j]} failed" \
			>"$OUT/setup/$j.result"
		continue
	fi
	res "MOUNT job=$j $(dmesg | grep -o "EXT4-fs (${part[$j]#/dev/}).*atomic writes.*" | head -n 1)"
	# shellcheck disable=SC2086
	"$AW" --label "$j" --bs "$BS" --size "${SIZE_MB}m" --probe-only ${tool_opts[$j]} \
		"$MNT/$j/file" | tee "$OUT/setup/$j.out"
	case ${PIPESTATUS[0]} in
	0) ready[$j]=1 ;;
	*) grep '^RESULT ' "$OUT/setup/$j.out" | sed "s/^RESULT job=$j /&round=1 /" \
		>"$OUT/setup/$j.result" ;;
	esac
done
sync

# The fio jobs write the files of a and c: ready when those are and fio is.
declare -A fio_of=([fa]=a [fc]=c)
for j in fa fc; do
	has "$j" || continue
	if [ -z "$FIO" ] || [ ! -x "$FIO" ]; then
		echo "RESULT job=$j round=1 status=skip reason=no fio (BENCH_FIO: kernel/fstests/build-tools.sh builds it)" \
			>"$OUT/setup/$j.result"
	elif [ -n "${ready[${fio_of[$j]}]:-}" ]; then
		ready[$j]=1
		res "INFO fio=$("$FIO" --version)"
	else
		echo "RESULT job=$j round=1 status=skip reason=job ${fio_of[$j]} could not run" \
			>"$OUT/setup/$j.result"
	fi
done

# fio_result JOB ROUND THREADS JSON HIST: the RESULT line of a fio run, and
# its write latencies (completion, which for pvsync2 is the whole write) as
# atomic-write's histogram ("NS COUNT" lines, then "max NS").
fio_result() {
	python3 - "$@" <<'EOF'
import json, sys

job, rnd, threads, path, hist = sys.argv[1:6]
try:
    text = open(path).read()
    # fio may print notes before the JSON object.
    data = json.loads(text[text.index("{"):])
    w = data["jobs"][0]["write"]
    err = data["jobs"][0].get("error", 0)
except (OSError, ValueError, KeyError, IndexError) as e:
    print(f"RESULT job={job} round={rnd} status=fail reason=no fio result ({e})")
    sys.exit(0)
if err or not w["total_ios"]:
    print(f"RESULT job={job} round={rnd} status=fail reason=fio error {err}, {w['total_ios']} writes")
    sys.exit(0)
bins = w["clat_ns"].get("bins", {})
with open(hist, "w") as f:
    for ns, count in sorted((int(k), v) for k, v in bins.items()):
        f.write(f"{ns} {count}\n")
    f.write(f"max {w['clat_ns']['max']}\n")
pct = w["clat_ns"].get("percentile", {})
secs = w["runtime"] / 1000
print(f"RESULT job={job} round={rnd} status=ok atomic={1 if job == 'fa' else 0} "
      f"threads={threads} qd=1 ops={w['total_ios']} secs={secs:.3f} iops={w['iops']:.1f} "
      f"p50_us={pct.get('50.000000', 0) / 1e3:.1f} p99_us={pct.get('99.000000', 0) / 1e3:.1f}")
EOF
}

# run_fio JOB ROUND THREADS: fio's run on the file of a or c.
run_fio() {
	local j=$1 k=$2 n=$3 tag=$OUT/t$3/$1.r$2 atomic=0

	[ "$j" = fa ] && atomic=1
	echo "== $j round $k, $n thread(s), fio"
	# size= of the existing file: fio writes into it as it is (the hints
	# and the written extents setup made).
	"$FIO" --name="$j" --filename="$MNT/${fio_of[$j]}/file" --rw=randwrite --bs="$BS" \
		--direct=1 --ioengine=pvsync2 --atomic="$atomic" --numjobs="$n" --iodepth=1 \
		--size="${SIZE_MB}m" --time_based --runtime="$RUNTIME" --ramp_time="$WARMUP" \
		--randseed="$k" --group_reporting --output-format=json+ >"$tag.json" 2>"$tag.err"
	fio_result "$j" "$k" "$n" "$tag.json" "$tag.hist" | tee -a "$OUT/t$n/results"
}

# run JOB ROUND THREADS: one measured run on the job's file as it is.
run() {
	local j=$1 k=$2 n=$3 tag=$OUT/t$3/$1.r$2 opts

	case $j in fa | fc) run_fio "$@"; return ;; esac
	opts=${tool_opts[$j]}

	# The hints live in the file; --reuse keeps it as setup left it.
	opts=${opts//--extsize $UNIT --forcealign/}
	echo "== $j round $k, $n thread(s)"
	# shellcheck disable=SC2086
	"$AW" --reuse --label "$j" --bs "$BS" --threads "$n" --runtime "$RUNTIME" \
		--warmup "$WARMUP" --seed "$k" --hist "$tag.hist" $opts "$MNT/$j/file" |
		tee "$tag.out"
	grep '^RESULT ' "$tag.out" | sed "s/^RESULT job=$j /&round=$k /" >>"$OUT/t$n/results" ||
		echo "RESULT job=$j round=$k status=fail reason=atomic-write gave no result" \
			>>"$OUT/t$n/results"
}

order=(a b c d fa fc)
for n in ${THREADS//,/ }; do
	mkdir -p "$OUT/t$n"
	cp "$INFO" "$OUT/t$n/results"
	echo "INFO threads=$n" >>"$OUT/t$n/results"
	for j in "${order[@]}"; do
		[ -f "$OUT/setup/$j.result" ] && cat "$OUT/setup/$j.result" >>"$OUT/t$n/results"
	done
	for ((k = 1; k <= ROUNDS; k++)); do
		for ((i = 0; i < ${#order[@]}; i++)); do
			j=${order[(i + k - 1) % ${#order[@]}]}
			[ -n "${ready[$j]:-}" ] && run "$j" "$k" "$n"
		done
	done
done

# Every filesystem gets its forced read-only fsck, the kernel log its look.
for j in a b c d; do
	has "$j" || continue
	grep -q " $MNT/$j " /proc/mounts || continue
	umount "$MNT/$j" || { res "FSCK job=$j status=busy"; continue; }
	if e2fsck -fn "${part[$j]}" >"$OUT/setup/$j.fsck" 2>&1; then
		res "FSCK job=$j status=clean"
	else
		res "FSCK job=$j status=errors"
	fi
done
dmesg >"$OUT/bench.dmesg"
if grep -qE 'WARNING:|BUG:|Oops|Call Trace|EXT4-fs error|UBSAN' "$OUT/bench.dmesg"; then
	res "KLOG status=warnings"
else
	res "KLOG status=clean"
fi
echo "== all jobs done"
