#!/bin/bash
# The cost of extent size hint alignment on a large sparse filesystem, in
# the UML guest of our kernel series (issue 15, section 4), in one run:
#   first   the first allocation after a mount, a forcealign file with a
#           64 KiB extsize against a plain file (4 KiB O_DIRECT write each,
#           caches dropped before each): its time, what its scan did (block
#           bitmaps read, buddy cache groups built, groups mballoc scanned,
#           from ext4 trace events) and the page cache that grew by
#           (Buffers: bitmaps; Cached: the buddy cache);
#           on the new filesystem (fresh) and again after the worst case
#           fill (worst): SCALE_WORST_GROUPS initialized groups, mostly
#           free, without one free aligned 64 KiB unit, right where the
#           files' allocations start;
#   steady  files per second of SCALE_FILES files of 4 KiB and of 64 KiB,
#           one O_DIRECT write each, forcealign files with that extsize
#           against plain files, on one mount.
# On a SCALE_SIZE (default 1T) sparse image (ubd, lazy init).  Sizes above
# 8 TiB are two images of half the size, joined in the guest by a
# device-mapper linear target: the host's /var/tmp is ext4, whose files
# stop at 16 TiB - 4 KiB.  Prints the median of each kind and the ratios
# aligned/plain (time of the first allocation; cost per file, the inverse
# of files/s), with every round's figures.  Not a test: nothing passes or
# fails on speed; exit 1 if the guest failed or reported an error, 77
# without a kernel.
#
# Usage: tests/bench/scale.sh                 (needs a kernel/check.sh build)
#        tests/bench/scale.sh --report [OUT]  the report of an earlier run
# Environment: EXTALIGN_KBUILD (kernel build, as kernel/boot.sh),
#   EXTALIGN_RUN (scratch, default /var/tmp/extalign-bench-scale; the sparse
#   images live there and are removed afterwards), SCALE_SIZE (1T; 16T is
#   131072 groups), SCALE_ROUNDS (5), SCALE_FILES (2000),
#   SCALE_WORST_GROUPS (256; 0: no worst case), SCALE_QUICK=1 (3 rounds,
#   200 files, 16 worst groups: a smoke run).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export EXTALIGN_KBUILD=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
export EXTALIGN_RUN=${EXTALIGN_RUN:-/var/tmp/extalign-bench-scale}
LINUX=$EXTALIGN_KBUILD/build-um/linux
SIZE=${SCALE_SIZE:-1T}
if [ "${SCALE_QUICK:-0}" = 1 ]; then
	ROUNDS=${SCALE_ROUNDS:-3} FILES=${SCALE_FILES:-200} WORST=${SCALE_WORST_GROUPS:-16}
else
	ROUNDS=${SCALE_ROUNDS:-5} FILES=${SCALE_FILES:-2000} WORST=${SCALE_WORST_GROUPS:-256}
fi
OUT=$EXTALIGN_RUN/out

report_only=0
case ${1:-} in
-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
--report) report_only=1 OUT=${2:-$OUT} ;;
"") ;;
*) echo "scale.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

# Build the tools, make the image(s), boot the guest, leave the results in
# $OUT (and the header lines of the report in $OUT/header).
run_guest() {
	local bytes half args t0 rc

	if [ ! -x "$LINUX" ]; then
		echo "SKIP: no UML kernel at $LINUX (kernel/check.sh builds it)"
		exit 77
	fi
	bytes=$(numfmt --from=iec "$SIZE") || exit 2
	mkdir -p "$EXTALIGN_RUN"
	for t in alloc-files fragment; do
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$EXTALIGN_RUN/$t" \
			"$TOP/tests/bench/$t.c" || exit 1
	done
	rm -rf "$OUT" "$EXTALIGN_RUN"/scale*.img
	mkdir -p "$OUT"
	trap 'rm -f "$EXTALIGN_RUN"/scale*.img' EXIT
	args=(SCALE_TOOL="$EXTALIGN_RUN/alloc-files" SCALE_FRAGMENT="$EXTALIGN_RUN/fragment"
		SCALE_ROUNDS="$ROUNDS" SCALE_FILES="$FILES" SCALE_WORST_GROUPS="$WORST")
	if [ "$bytes" -gt $((8 << 40)) ]; then
		# Two halves, each a whole number of MiB, as ubd1 and ubd2.
		half=$(((bytes / 2) >> 20 << 20))
		truncate -s "$half" "$EXTALIGN_RUN/scale1.img" || exit 1
		truncate -s "$((bytes - half))" "$EXTALIGN_RUN/scale2.img" || exit 1
		args+=(ubd1="$EXTALIGN_RUN/scale1.img" ubd2="$EXTALIGN_RUN/scale2.img"
			"SCALE_JOIN=/dev/ubdb,/dev/ubdc")
	else
		truncate -s "$bytes" "$EXTALIGN_RUN/scale1.img" || exit 1
		args+=(ubd1="$EXTALIGN_RUN/scale1.img")
	fi
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "kernel: $LINUX ($(git -C "$EXTALIGN_KBUILD/src" log -1 --format='%h %s' 2>/dev/null))"
		echo "size: $SIZE, rounds: $ROUNDS, files: $FILES, worst-case groups: $WORST"
	} >"$OUT/header"
	t0=$(date +%s)
	"$TOP/kernel/boot.sh" "$TOP/tests/bench/scale-guest.sh" "$OUT" "${args[@]}" \
		>"$EXTALIGN_RUN/console.log" 2>&1
	rc=$?
	echo "guest: $(($(date +%s) - t0)) s, images $(du -ch "$EXTALIGN_RUN"/scale*.img | tail -n 1 | cut -f1) used, load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/header"
	if [ ! -f "$OUT/done" ] || [ ! -s "$OUT/results" ]; then
		echo "scale.sh: the guest did not finish (UML exit $rc)" >&2
		tail -n 30 "$EXTALIGN_RUN/console.log" "$OUT/guest.log" 2>/dev/null >&2
		exit 1
	fi
}

[ $report_only = 1 ] || run_guest
R=$OUT/results
[ -s "$R" ] || { echo "scale.sh: no results in $OUT" >&2; exit 1; }
cat "$OUT/header" 2>/dev/null
sed -n 's/^INFO /info: /p; s/^FILL /worst-case fill: /p; s/^FILL_CHECK /worst-case groups: /p' "$R"

# median: of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "nan" }'; }
# field KEY: the KEY=value of each line on stdin ("+" of an overrun dropped).
field() { tr ' ' '\n' | sed -n "s/^$1=//p" | tr -d +; }
# paired KEY FILE-A FILE-B: KEY of A over KEY of B round by round (the two
# ran back to back), as "min / median / max": the spread says how much the
# machine disturbed the run.
paired() {
	join <(awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print v["round"], v[k] }' "$2" | sort) \
		<(awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print v["round"], v[k] }' "$3" | sort) |
		awk '{ print $2 / $3 }' | sort -g |
		awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.2f / %.2f / %.2f", v[1], m, v[NR] }'
}
# first_table SCENE: the FIRST rows of one scene, medians and ratios.
first_table() {
	local kind fa fp

	grep -q "^FIRST scene=$1 " "$R" || return 0
	for kind in aligned plain; do
		grep "^FIRST scene=$1 kind=$kind " "$R" >"$OUT/first-$1-$kind"
		echo "  $kind ms per round: $(field first_ns <"$OUT/first-$1-$kind" |
			awk '{ printf "%.2f ", $1 / 1e6 }')"
	done
	printf '  %-8s %9s %9s %9s %9s %-14s %9s %9s\n' "median" "ms" "bitmaps" "buddies" \
		"groups" "criterion" "Buffers+" "Cached+"
	printf '  %-8s %9s %9s %9s %9s %-14s %9s %9s\n' "" "" "read" "built" \
		"searched" "" "KiB" "KiB"
	for kind in aligned plain; do
		f=$OUT/first-$1-$kind
		printf '  %-8s %9.2f %9s %9s %9s %-14s %9s %9s\n' $kind \
			"$(field first_ns <"$f" | median | awk '{ print $1 / 1e6 }')" \
			"$(field bb_reads <"$f" | median)" "$(field buddy_groups <"$f" | median)" \
			"$(field grps <"$f" | median)" "$(field cr <"$f" | sort | uniq -c |
				awk '{ printf "%s%s(%d)", (NR > 1 ? "," : ""), $2, $1 }')" \
			"$(field buffers_kb <"$f" | median)" "$(field cached_kb <"$f" | median)"
	done
	grep -q 'bb_reads=[0-9]*+' "$OUT/first-$1-aligned" "$OUT/first-$1-plain" &&
		echo "  (the trace buffer overran: the counts are lower bounds)"
	for kind in aligned plain; do
		echo "  $kind goal -> result (group/start) per round: $(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "%s -> %s  ", v["goal"], v["result"] }' "$OUT/first-$1-$kind")"
	done
	# Groups start on multiples of the unit: the offset in the group says.
	echo "  aligned results on a 64 KiB boundary: $(field result <"$OUT/first-$1-aligned" |
		awk -F/ '{ n++; if ($2 % 16 == 0) a++ } END { printf "%d of %d", a, n }')"
	fa=$(field first_ns <"$OUT/first-$1-aligned" | median)
	fp=$(field first_ns <"$OUT/first-$1-plain" | median)
	awk -v a="$fa" -v p="$fp" 'BEGIN { printf "  ratio aligned/plain of the median times: %.2f (goal at 1 TiB: <= 2)", a / p }'
	echo "; round by round min / med / max: $(paired first_ns "$OUT/first-$1-aligned" "$OUT/first-$1-plain")"
}

echo
echo "first allocation after mount, fresh filesystem (4 KiB write; aligned: forcealign, extsize 64k)"
first_table fresh
if grep -q '^FIRST scene=worst ' "$R"; then
	echo
	echo "first allocation after mount, worst case: the files' goal groups initialized, no free aligned 64 KiB unit"
	first_table worst
fi

echo
echo "steady state ($(grep -m1 '^STEADY' "$R" | field files) files per round, one O_DIRECT write of the unit each)"
for u in 4096 65536; do
	for kind in aligned plain; do
		grep "^STEADY kind=$kind unit=$u " "$R" |
			awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				printf "%.0f\n", v["files"] / (v["write_ns"] / 1e9) }' >"$OUT/fps-$kind-$u"
	done
	a=$(median <"$OUT/fps-aligned-$u") p=$(median <"$OUT/fps-plain-$u")
	echo "  unit $u: aligned files/s per round: $(tr '\n' ' ' <"$OUT/fps-aligned-$u")"
	echo "  unit $u: plain files/s per round:   $(tr '\n' ' ' <"$OUT/fps-plain-$u")"
	awk -v a="$a" -v p="$p" -v u="$u" 'BEGIN { printf "  unit %d: median aligned %.0f files/s, plain %.0f files/s, cost ratio aligned/plain %.2f (goal <= 1.2)", u, a, p, p / a }'
	echo "; round by round min / med / max: $(paired write_ns <(grep "^STEADY kind=aligned unit=$u " "$R") \
		<(grep "^STEADY kind=plain unit=$u " "$R"))"
done
if grep -q '^ERROR' "$R"; then
	echo
	grep '^ERROR' "$R"
	exit 1
fi
exit 0
