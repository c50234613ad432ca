#!/bin/bash
# The cost of extent size hint alignment on a large sparse filesystem, in
# the UML guest of our kernel series (issue 15, section 4), in one run:
#   first   the first allocation after a mount, a forcealign file with a
#           64 KiB extsize against a plain file (4 KiB O_DIRECT write each,
#           caches dropped before each), and the page cache it grew by;
#   steady  files per second of SCALE_FILES files of 4 KiB and of 64 KiB,
#           one O_DIRECT write each, forcealign files with that extsize
#           against plain files, on one mount.
# On a SCALE_SIZE (default 1T) sparse image (ubd, lazy init).  Prints the
# median of each kind and the ratios aligned/plain (time of the first
# allocation; cost per file, the inverse of files/s), with every round's
# figures.  Not a test: nothing passes or fails on speed; exit 1 if the
# guest failed or reported an error, 77 without a kernel.
#
# Usage: tests/bench/scale.sh
# Environment: EXTALIGN_KBUILD (kernel build, as kernel/boot.sh),
#   EXTALIGN_RUN (scratch, default /var/tmp/extalign-bench-scale; the sparse
#   image lives there and is removed afterwards), SCALE_SIZE (1T),
#   SCALE_ROUNDS (5), SCALE_FILES (2000).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export EXTALIGN_KBUILD=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
export EXTALIGN_RUN=${EXTALIGN_RUN:-/var/tmp/extalign-bench-scale}
LINUX=$EXTALIGN_KBUILD/build-um/linux
SIZE=${SCALE_SIZE:-1T}
ROUNDS=${SCALE_ROUNDS:-5}
FILES=${SCALE_FILES:-2000}
OUT=$EXTALIGN_RUN/out

case ${1:-} in
-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
"") ;;
*) echo "scale.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac
if [ ! -x "$LINUX" ]; then
	echo "SKIP: no UML kernel at $LINUX (kernel/check.sh builds it)"
	exit 77
fi
mkdir -p "$EXTALIGN_RUN"
tool=$EXTALIGN_RUN/alloc-files
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$tool" "$TOP/tests/bench/alloc-files.c" ||
	exit 1
img=$EXTALIGN_RUN/scale.img
rm -rf "$OUT" "$img"
mkdir -p "$OUT"
truncate -s "$SIZE" "$img" || exit 1
trap 'rm -f "$img"' EXIT
t0=$(date +%s)
"$TOP/kernel/boot.sh" "$TOP/tests/bench/scale-guest.sh" "$OUT" ubd1="$img" \
	SCALE_TOOL="$tool" SCALE_ROUNDS="$ROUNDS" SCALE_FILES="$FILES" \
	>"$EXTALIGN_RUN/console.log" 2>&1
rc=$?
R=$OUT/results
if [ ! -f "$OUT/done" ] || [ ! -s "$R" ]; then
	echo "scale.sh: the guest did not finish (UML exit $rc)" >&2
	tail -n 30 "$EXTALIGN_RUN/console.log" "$OUT/guest.log" 2>/dev/null >&2
	exit 1
fi
echo "guest: $(($(date +%s) - t0)) s, image $SIZE ($(du -h "$img" | cut -f1) used), $(sed -n 's/^INFO //p' "$R")"

# median: of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "nan" }'; }
# field KEY: the KEY=value of each line on stdin.
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }

echo
echo "first allocation after mount (4 KiB write; aligned: forcealign, extsize 64k)"
for kind in aligned plain; do
	grep "^FIRST kind=$kind " "$R" | field first_ns | awk '{ printf "%.2f ", $1 / 1e6 }' |
		sed "s/^/  $kind ms per round: /"
	echo
	grep "^FIRST kind=$kind " "$R" | field cached_kb | tr '\n' ' ' |
		sed "s/^/  $kind page cache grown, KiB: /"
	echo
done
fa=$(grep '^FIRST kind=aligned ' "$R" | field first_ns | median)
fp=$(grep '^FIRST kind=plain ' "$R" | field first_ns | median)
awk -v a="$fa" -v p="$fp" 'BEGIN { printf "  median: aligned %.2f ms, plain %.2f ms, ratio aligned/plain %.2f (goal <= 2)\n", a / 1e6, p / 1e6, a / p }'

echo
echo "steady state ($FILES files per round, one O_DIRECT write of the unit each)"
for u in 4096 65536; do
	for kind in aligned plain; do
		grep "^STEADY kind=$kind unit=$u " "$R" |
			awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				printf "%.0f\n", v["files"] / (v["write_ns"] / 1e9) }' >"$OUT/fps-$kind-$u"
	done
	a=$(median <"$OUT/fps-aligned-$u") p=$(median <"$OUT/fps-plain-$u")
	echo "  unit $u: aligned files/s per round: $(tr '\n' ' ' <"$OUT/fps-aligned-$u")"
	echo "  unit $u: plain files/s per round:   $(tr '\n' ' ' <"$OUT/fps-plain-$u")"
	awk -v a="$a" -v p="$p" -v u="$u" 'BEGIN { printf "  unit %d: median aligned %.0f files/s, plain %.0f files/s, cost ratio aligned/plain %.2f (goal <= 1.2)\n", u, a, p, p / a }'
done
if grep -q '^ERROR' "$R"; then
	echo
	grep '^ERROR' "$R"
	exit 1
fi
exit 0
