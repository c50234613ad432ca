#!/bin/bash
# Hardware atomic (untorn) 16 KiB writes on ext4, in the UML guest of our
# kernel series, against what a database does today, in one run:
#   a  RWF_ATOMIC on a forcealign file with extsize 16k (4 KiB-block ext4)
#   b  RWF_ATOMIC on a bigalloc ext4 with 16 KiB clusters
#   c  plain O_DIRECT writes on a plain ext4 file, no RWF_ATOMIC (the
#      baseline, which a database must back with a doublewrite buffer)
#   d  c behind such a doublewrite buffer: each batch of pages is first
#      written to a second file with RWF_DSYNC, as InnoDB does
# Random overwrites of a preallocated, written file from several threads
# with one write in flight each, on the guest's scsi_debug disk, each job on
# its own ext4 (a partition), in short rounds that rotate the job order.
# Prints IOPS, p50 and p99 latency per job (all rounds together) and the
# ratios a/c and b/c (and a/d, b/d), with the IOPS ratio of each round and
# their median to show the spread.
# Not a test: nothing here passes or fails on speed, but a job that cannot
# run says why, and the atomic jobs run only after the kernel proved that it
# honours RWF_ATOMIC.  Exit status 1 if a job failed or left fsck errors or
# kernel warnings, 77 without a kernel.
#
# Usage: tests/bench/atomic.sh                 (needs a kernel/check.sh build)
#        tests/bench/atomic.sh --report [OUT]  the report of an earlier run
# Environment: EXTALIGN_KBUILD (kernel build, as kernel/boot.sh),
#   EXTALIGN_RUN (scratch, default /var/tmp/extalign-bench-atomic),
#   BENCH_BS (16k), BENCH_THREADS (4,1: a pass of all jobs and rounds for
#   each number of threads), BENCH_RUNTIME (3 s a job a round),
#   BENCH_ROUNDS (6), BENCH_WARMUP (0.5 s), BENCH_SIZE_MB (64; the
#   scsi_debug disk and the guest's memory grow with it: 1024 takes a 4.7
#   GiB disk in 5.7 GiB), BENCH_DW_BATCH (8 pages a doublewrite batch in
#   d), BENCH_JOBS (a,b,c,d,fa,fc), BENCH_FIO (fio, default the one
#   kernel/fstests/build-tools.sh built in $EXTALIGN_KBUILD/fstests-tools),
#   BENCH_SD_DELAY (scsi_debug.delay, jiffies per command; default 0: the
#   driver's default of 1 jiffy would make every job wait for the timer tick),
#   BENCH_SD_NDELAY (scsi_debug.ndelay in ns; UML has no high resolution
#   timers, so anything but 0 becomes a tick too).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export EXTALIGN_KBUILD=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
export EXTALIGN_RUN=${EXTALIGN_RUN:-/var/tmp/extalign-bench-atomic}
LINUX=$EXTALIGN_KBUILD/build-um/linux
BS=${BENCH_BS:-16k}
THREADS=${BENCH_THREADS:-4,1}
RUNTIME=${BENCH_RUNTIME:-3}
ROUNDS=${BENCH_ROUNDS:-6}
WARMUP=${BENCH_WARMUP:-0.5}
SIZE_MB=${BENCH_SIZE_MB:-64}
JOBS=${BENCH_JOBS:-a,b,c,d,fa,fc}
FIO=${BENCH_FIO:-$EXTALIGN_KBUILD/fstests-tools/bin/fio}
DW_BATCH=${BENCH_DW_BATCH:-8}
SD_DELAY=${BENCH_SD_DELAY-0}
SD_NDELAY=${BENCH_SD_NDELAY-}

OUT=$EXTALIGN_RUN/out
report_only=0
case ${1:-} in
-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
--report) report_only=1 OUT=${2:-$OUT} ;;
"") ;;
*) echo "atomic.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

# Build the tool, boot the guest on it, leave the results in $OUT.
run_guest() {
	local tool=$EXTALIGN_RUN/atomic-write t0 rc args

	if [ ! -x "$LINUX" ]; then
		echo "atomic.sh: no UML kernel at $LINUX (kernel/check.sh builds it)" >&2
		exit 77
	fi
	mkdir -p "$EXTALIGN_RUN"
	gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread \
		-I"$TOP/include" -o "$tool" "$TOP/tests/bench/atomic-write.c" || exit 1
	rm -rf "$OUT"
	mkdir -p "$OUT"
	args=(BENCH_TOOL="$tool" BENCH_BS="$BS" BENCH_THREADS="$THREADS"
		BENCH_RUNTIME="$RUNTIME" BENCH_WARMUP="$WARMUP" BENCH_SIZE_MB="$SIZE_MB"
		BENCH_DW_BATCH="$DW_BATCH" BENCH_ROUNDS="$ROUNDS" BENCH_JOBS="$JOBS"
		BENCH_FIO="$FIO")
	# Four partitions of the file, its filesystem's overhead and room.
	local part_mb=$((SIZE_MB + SIZE_MB / 8 + 48))
	local disk_mb=$((4 * part_mb + 4))
	[ "$disk_mb" -lt 512 ] && disk_mb=512
	[ -n "$SD_DELAY" ] && args+=(scsi_debug.delay="$SD_DELAY")
	[ -n "$SD_NDELAY" ] && args+=(scsi_debug.ndelay="$SD_NDELAY")
	t0=$(date +%s)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	BOOT_SD_MB=$disk_mb BOOT_MEM=$((disk_mb + 1024))M \
		"$TOP/kernel/boot.sh" "$TOP/tests/bench/atomic-guest.sh" "$OUT" "${args[@]}" \
		>"$EXTALIGN_RUN/console.log" 2>&1
	rc=$?
	echo "$(($(date +%s) - t0))" >"$OUT/guest-secs"
	echo "$load0 $(cut -d' ' -f1 /proc/loadavg) $(nproc)" >"$OUT/host-load"
	echo "$LINUX" >"$OUT/kernel-path"
	[ -f "$EXTALIGN_KBUILD/READY" ] && head -n 1 "$EXTALIGN_KBUILD/READY" >"$OUT/kernel-ready"
	if [ ! -f "$OUT/done" ] || [ ! -s "$OUT/info" ]; then
		echo "atomic.sh: the guest did not finish (UML exit $rc); console:" >&2
		tail -n 40 "$EXTALIGN_RUN/console.log" >&2
		if [ -f "$OUT/guest.log" ]; then
			echo "guest log:" >&2
			tail -n 40 "$OUT/guest.log" >&2
		fi
		exit 1
	fi
}

[ $report_only = 1 ] || run_guest
[ -s "$OUT/info" ] || { echo "atomic.sh: no results in $OUT" >&2; exit 1; }

# The results of one pass (one number of threads) are in $R, its
# histograms in $PD.
R=$OUT/info PD=$OUT
# get KIND JOB KEY [ROUND]: KEY on the KIND line of JOB (of that round, else
# the first), "-" if none; reason= is the rest of the line.
get() {
	local line pat="^$1 job=$2 "

	[ -n "${4:-}" ] && pat="^$1 job=$2 round=$4 "
	line=$(grep -m1 "$pat" "$R")
	[ -n "$line" ] || { echo -; return; }
	if [ "$3" = reason ]; then
		if [[ $line == *" reason="* ]]; then echo "${line#* reason=}"; else echo -; fi
		return
	fi
	line=${line%% reason=*}
	tr ' ' '\n' <<<"$line" | sed -n "s/^$3=//p" | head -n 1 | grep . || echo -
}
info() { grep '^INFO ' "$R" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1 | grep . || echo -; }
rounds_of() { grep "^RESULT job=$1 " "$R" | sed -n 's/.* round=\([0-9]*\) .*/\1/p'; }
# status JOB: ok when every round was, skip when it could not run, else fail.
status() {
	local st

	st=$(grep "^RESULT job=$1 " "$R" | tr ' ' '\n' | sed -n 's/^status=//p' | sort -u | paste -sd,)
	case $st in
	"") echo - ;;
	ok | skip) echo "$st" ;;
	*) echo fail ;;
	esac
}
# iops JOB [ROUND]: all writes of the rounds over all their measured time.
iops() {
	grep "^RESULT job=$1 ${2:+round=$2 }" "$R" | tr ' ' '\n' | awk -F= '
		$1 == "ops" { n += $2 } $1 == "secs" { t += $2 }
		END { if (t > 0) printf "%.1f\n", n / t; else print "-" }'
}
# quantile JOB Q: latency quantile Q (0..1) of all rounds together, in us.
quantile() {
	cat "$PD/$1".r*.hist 2>/dev/null | grep -v '^max' | sort -n -k1,1 | awk -v q="$2" '
		{ v[NR] = $1; c[NR] = $2; t += $2 }
		END {
			if (!t) { print "-"; exit }
			r = q * t; if (r > int(r)) r = int(r) + 1; if (r < 1) r = 1
			for (i = 1; i <= NR; i++) { s += c[i]; if (s >= r) break }
			printf "%.1f\n", v[i] / 1000
		}'
}
median() { # X...: the median of the numbers (n/a ones left out)
	printf '%s\n' "$@" | grep -v n/a | sort -n | awk '{ v[NR] = $1 }
		END { if (!NR) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2];
		      else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { # A B: A/B to 2 places, or n/a
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "-" || b == "-" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'
}
row() { printf '%-3s %-40s %-10s %-13s %9s %8s %8s  %s\n' "$@"; }
has() { [[ ",$JOBS," == *",$1,"* ]]; }

# The run's own parameters, not this shell's (--report of an older run).
BS=$(info bs) RUNTIME=$(info runtime) WARMUP=$(info warmup)
SIZE_MB=$(info file_mb) DW_BATCH=$(info dw_batch) ROUNDS=$(info rounds)
PASSES=$(info passes)
declare -A what=(
	[a]="ext4 4k blocks, forcealign, extsize $BS"
	[b]="ext4 bigalloc, $BS clusters"
	[c]="ext4 4k blocks, plain file (baseline)"
	[d]="c + doublewrite, $DW_BATCH pages a batch"
	[fa]="a's file, written by fio"
	[fc]="c's file, written by fio"
)
declare -A mode=([a]=RWF_ATOMIC [b]=RWF_ATOMIC [c]=plain [d]=plain+dw [fa]="fio atomic" [fc]="fio plain")

echo "extalign atomic write benchmark ($(date -u -r "$R" '+%Y-%m-%d %H:%M UTC'))"
echo "  kernel:  $(info kernel), $(cat "$OUT/kernel-path" 2>/dev/null || echo ?)"
[ -s "$OUT/kernel-ready" ] && echo "           READY: $(cat "$OUT/kernel-ready")"
echo "  disk:    scsi_debug $(info disk) (RAM-backed), $(info disk_mb) MiB," \
	"$(info lbs)-byte sectors, atomic unit $(info atomic_unit_min)..$(info atomic_unit_max)" \
	"bytes, delay $(info sd_delay) jiffies"
echo "  guest:   UML, $(info cpus) CPU, $(info mem_mb) MiB;" \
	"$(cat "$OUT/guest-secs" 2>/dev/null || echo ?)s of guest time in all"
if [ -s "$OUT/host-load" ]; then
	read -r l0 l1 ncpu <"$OUT/host-load"
	echo "  host:    $ncpu CPUs, load average $l0 at the start, $l1 at the end (a shared"
	echo "           host's load moves the figures; the rounds spread it over all jobs)"
fi
echo "  load:    $BS random O_DIRECT overwrites, queue depth 1 per thread, of a ${SIZE_MB} MiB"
echo "           preallocated and written file per job, each on its own ext4 (a partition);"
echo "           $ROUNDS rounds of ${RUNTIME}s (+${WARMUP}s warmup) per job, job order rotated"
echo "  NOTE:    scsi_debug is RAM-backed and UML is slow: the absolute figures say"
echo "           nothing about real hardware; only the ratios within this run matter."
echo "           UML has $(info cpus) CPU: with several threads the p99 is mostly the wait"
echo "           for the other threads' time slices; the 1-thread pass shows the write's own."

bad=0
for n in ${PASSES//,/ }; do
	PD=$OUT/t$n R=$PD/results
	[ -s "$R" ] || { echo; echo "pass of $n threads: no results"; bad=1; continue; }
	JOBS=$(info jobs)
	echo
	echo "== $n thread(s) x queue depth 1"
	row job target writes "awu min..max" IOPS "p50 us" "p99 us" status
	for j in a b c d fa fc; do
		has "$j" || continue
		st=$(status "$j")
		awu="$(get RESULT "$j" awu_min)..$(get RESULT "$j" awu_max)"
		[ "$awu" = "-..-" ] && awu=-
		if [ "$st" = ok ]; then
			row "$j" "${what[$j]}" "${mode[$j]}" "$awu" "$(iops "$j")" \
				"$(quantile "$j" 0.50)" "$(quantile "$j" 0.99)" ok
		else
			reason=$(grep "^RESULT job=$j " "$R" | grep -v ' status=ok ' | head -n 1 |
				sed -n 's/.* reason=//p')
			row "$j" "${what[$j]}" "${mode[$j]}" "$awu" - - - "$st: ${reason:--}"
		fi
	done
	echo "ratios (IOPS: above 1 is faster; latency: below 1 is faster)"
	for pair in a/c b/c a/d b/d fa/fc; do
		j=${pair%/*} base=${pair#*/}
		if ! has "$j" || ! has "$base"; then
			continue
		fi
		if [ "$(status "$j")" != ok ] || [ "$(status "$base")" != ok ]; then
			echo "  $pair  n/a ($j: $(status "$j"), $base: $(status "$base"))"
			continue
		fi
		per=()
		for k in $(rounds_of "$j"); do
			per+=("$(ratio "$(iops "$j" "$k")" "$(iops "$base" "$k")")")
		done
		printf '  %s  IOPS %s  p50 %s  p99 %s   (IOPS by round: %s; median %s)\n' "$pair" \
			"$(ratio "$(iops "$j")" "$(iops "$base")")" \
			"$(ratio "$(quantile "$j" 0.50)" "$(quantile "$base" 0.50)")" \
			"$(ratio "$(quantile "$j" 0.99)" "$(quantile "$base" 0.99)")" "${per[*]}" \
			"$(median "${per[@]}")"
	done
	for j in a b c d fa fc; do
		has "$j" || continue
		case $(status "$j") in
		fail) echo "job $j failed: see $OUT/guest.log"; bad=1 ;;
		-) echo "job $j has no result: see $OUT/guest.log"; bad=1 ;;
		esac
	done
done
R=$OUT/info
for j in a b c d; do
	has "$j" || continue
	fsck=$(get FSCK "$j" status)
	if [ "$fsck" != clean ]; then
		echo "job $j: e2fsck -fn at the end: $fsck (see $OUT/setup/$j.fsck)"
		bad=1
	fi
done
guest_rc=$(cat "$OUT/rc" 2>/dev/null || echo ?)
if [ "$guest_rc" != 0 ]; then
	echo "the guest's benchmark script exited $guest_rc (see $OUT/guest.log)"
	bad=1
fi
if ! grep -q '^KLOG status=clean' "$R"; then
	echo "kernel log: warnings or errors, or not checked (see $OUT/bench.dmesg)"
	bad=1
fi
echo
echo "(c is the write alone; a database without untorn writes also pays for a"
echo " doublewrite buffer, which d adds: a/d and b/d compare with that whole cost;"
echo " fio has no doublewrite, so fa/fc checks a/c with another tool.  Compare"
echo " within one tool only: fio's writes per second here were about twice"
echo " atomic-write's for the same writes, both sides of a ratio alike)"
echo
echo "what the kernel said (mount; atomic-write's statx and RWF_ATOMIC probe at setup):"
for j in a b c d; do
	has "$j" || continue
	line=$(grep -m1 "^MOUNT job=$j " "$R" | sed "s/^MOUNT job=$j //")
	[ -n "$line" ] && echo "  $j: mount: $line"
	[ -f "$OUT/setup/$j.out" ] &&
		grep -h -E '^# [a-z]+: (statx|probe):' "$OUT/setup/$j.out" | sed 's/^# /  /'
done
echo "  fsck at the end: $(grep '^FSCK ' "$R" | sed 's/^FSCK job=\([a-z]*\) status=/\1 /' |
	paste -sd, | sed 's/,/, /g'); kernel log: $(sed -n 's/^KLOG status=//p' "$R")"
echo
echo "raw results: $OUT/t*/results (guest log: $OUT/guest.log)"
exit $bad
