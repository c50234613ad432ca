#!/bin/bash
# Run upstream fstests against the extalign ext4 series in the UML guest.
#
# Usage: kernel/fstests.sh [OPTIONS] [LIST|TEST...]
#
#   LIST            atomic or alloc (kernel/fstests/LIST.list) or a file
#                   with one test per line; TESTs like generic/765.
#                   Default: atomic.
#   -g GROUP        every generic and ext4 test of an fstests group
#                   (quick, auto, ...), from the built fstests' group.list,
#                   in name order; may be given more than once
#   --shard K/N     run only the K-th of N equal slices of the tests (in
#                   the order above, so that two kernels' shards match)
#   --shards N      run every slice of N not yet in the results file, one
#                   guest each: a stopped or killed run resumes with the
#                   slice it was in when run again
#   --list          print the tests (of the slice, with --shard) and stop
#   --results FILE  with --shard or --shards, where each slice's results
#                   are appended when it ends (default
#                   $EXTALIGN_KBUILD/results/LABEL-MODE.results; LABEL
#                   is the lists, tests and groups joined by '+', MODE
#                   plain or forcealign, and -mkfs_OPTIONS with --mkfs); a
#                   slice already there is not run again (keep N the
#                   same for one file)
#   --base          the unpatched 6.12 tree (an empty series) in its own
#                   build directory, ${EXTALIGN_KBUILD_BASE:-/var/tmp/extalign-kernel-base}
#   --forcealign    the scratch root carries an inherited extsize
#                   (FSTESTS_EXTSIZE, default 16384) with forcealign
#   --forcealign-test  the test filesystem's root too: for the tests that
#                   work in TEST_DIR only (generic/001 to 016); the feature
#                   probes of the others (_require_xfs_io_command fpunch
#                   punches one block in TEST_DIR) are then refused, and
#                   those tests NOTRUN
#   --mkfs OPTIONS  mkfs.ext4 options for both filesystems (fstests'
#                   MKFS_OPTIONS), a second configuration: "-b 1024",
#                   "-O bigalloc -C 65536"; the slice lines and the
#                   record name them
#   --baseline FILE compare with a recorded run (kernel/fstests/*.baseline):
#                   a test that passed there and does not here is a
#                   regression
#   --record FILE   write this run's results to FILE (a baseline)
#   --rerun TEST    with --results FILE: run TEST alone and put its new
#                   line in place of its line in FILE, under a "#" line
#                   that says when, on which kernel, and what the slice
#                   had said (for a failure the guest caused and no
#                   longer does)
#   --disks KIND    the guest's disks: scsi_debug (default; RAM-backed,
#                   4 KiB sectors, atomic writes of 4 to 64 KiB, 512 MiB
#                   each) or ubd (sparse files of FSTESTS_DISK_GB, default
#                   10, 512-byte sectors, no atomic writes: what the tests
#                   that want large disks or 1 KiB blocks need; the group
#                   runs use it)
#   --no-build      boot the kernel already built in the build directory
#                   as it is (no prepare.sh, no make)
#   --build-only    build the kernel and the tools, run nothing (then
#                   runs with --no-build can share them at once)
#
# kernel/fstests/expected names the tests the harness does not run, or
# whose failure is by design, per mode (plain, forcealign), with the
# reason that is printed; FSTESTS_TEST_TIMEOUT (default 900) bounds the
# seconds one test may run (a timeout is a FAIL).
#
# Builds the UML kernel (kernel/prepare.sh and kernel/config.fragment, as
# kernel/check.sh does) and, once, fstests, fio and xfs_io from
# ../shared/tools (kernel/fstests/build-tools.sh) into the build directory
# ${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}; boots the guest with two
# atomic-write capable scsi_debug disks (TEST_DEV, SCRATCH_DEV: 4 KiB
# sectors, atomic writes of 4 KiB to 64 KiB, completions without a timer
# delay: FSTESTS_DISK_DELAY, scsi_debug's delay) and runs ./check there.
# Prints PASS, FAIL or NOTRUN with the reason per test, then
# "N passed, N failed, N notrun"; exits 1 if a test failed (with
# --baseline: if one regressed), 2 if the harness itself failed.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BASE=0
FORCEALIGN=0
DISKS=scsi_debug
BASELINE=
RECORD=
MKFS_OPTS=
BUILD_KERNEL=1
BUILD_ONLY=0
ARGS=()
GROUPS_=()
SHARD=
SHARDS=
RESULTS=
LIST_ONLY=0
RERUN=
while [ $# -gt 0 ]; do
	case $1 in
	-g) GROUPS_+=("${2:?-g GROUP}"); shift ;;
	--shard) SHARD=${2:?--shard K/N}; shift ;;
	--shards) SHARDS=${2:?--shards N}; shift ;;
	--results) RESULTS=$(readlink -m "${2:?--results FILE}"); shift ;;
	--list) LIST_ONLY=1 ;;
	--rerun) RERUN=${2:?--rerun TEST}; shift ;;
	--base) BASE=1 ;;
	--forcealign) FORCEALIGN=1 ;;
	--forcealign-test) FORCEALIGN=2 ;;
	--baseline) BASELINE=$(readlink -f "${2:?--baseline FILE}"); shift ;;
	--record) RECORD=$(readlink -m "${2:?--record FILE}"); shift ;;
	--mkfs) MKFS_OPTS=${2?--mkfs OPTIONS}; shift ;;
	--disks) DISKS=${2:?--disks scsi_debug|ubd}; shift ;;
	--no-build) BUILD_KERNEL=0 ;;
	--build-only) BUILD_ONLY=1 ;;
	-h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-*) echo "fstests.sh: unknown option $1" >&2; exit 2 ;;
	*) ARGS+=("$1") ;;
	esac
	shift
done
if [ -n "$RERUN" ]; then
	# One test, whose line is already in the results file: the lists
	# and groups given (those of the slice's command) do not matter.
	[[ $RERUN == */[0-9]* ]] || { echo "fstests.sh: --rerun wants a test like generic/131, not '$RERUN'" >&2; exit 2; }
	if [ -n "$SHARD$SHARDS$RECORD" ] || [ $LIST_ONLY = 1 ]; then
		echo "fstests.sh: --rerun goes with --results alone, not --shard, --shards, --record or --list" >&2
		exit 2
	fi
	[ -n "$RESULTS" ] || { echo "fstests.sh: --rerun $RERUN: which results file? (--results FILE)" >&2; exit 2; }
	[ "$(awk -v t="$RERUN" '$1 == t' "$RESULTS" 2>/dev/null | wc -l)" = 1 ] ||
		{ echo "fstests.sh: --rerun $RERUN: $RESULTS has no line for it (or more than one)" >&2; exit 2; }
	ARGS=("$RERUN") GROUPS_=()
fi
[ ${#ARGS[@]} -gt 0 ] || [ ${#GROUPS_[@]} -gt 0 ] || ARGS=(atomic)
case $DISKS in
scsi_debug | ubd) ;;
*) echo "fstests.sh: --disks wants scsi_debug or ubd, not '$DISKS'" >&2; exit 2 ;;
esac
if [ -n "$SHARD" ]; then
	if ! [[ $SHARD =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] || [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
		echo "fstests.sh: --shard wants K/N with 1 <= K <= N, not '$SHARD'" >&2
		exit 2
	fi
fi
if [ -n "$SHARDS" ]; then
	[[ $SHARDS =~ ^[1-9][0-9]*$ ]] || { echo "fstests.sh: --shards wants a count, not '$SHARDS'" >&2; exit 2; }
	[ -z "$SHARD" ] || { echo "fstests.sh: --shard and --shards do not go together" >&2; exit 2; }
fi

if [ $BASE = 1 ]; then
	KB=${EXTALIGN_KBUILD_BASE:-/var/tmp/extalign-kernel-base}
	export EXTALIGN_PATCHES=$HERE/fstests/no-patches
else
	KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
fi
export EXTALIGN_KBUILD=$KB
JOBS=${JOBS:-$(nproc)}
BUILD=$KB/build-um
TOOLS=$KB/fstests-tools
LOGS=$KB/logs
mkdir -p "$LOGS"

die() { echo "fstests.sh: $*" >&2; exit 2; }
# With --list, stdout is the tests alone (for wc -l, a loop): what the
# build steps say goes to stderr, the list to fd 3.
exec 3>&1
[ $LIST_ONLY = 0 ] || exec 1>&2
t0=$(date +%s)
step() { echo "  time $1: $(($(date +%s) - t0))s"; t0=$(date +%s); }

echo "== kernel ($KB$([ $BASE = 1 ] && echo ', unpatched'))"
SRC=$KB/src
if [ $BUILD_KERNEL = 0 ]; then
	[ -x "$BUILD/linux" ] || die "no kernel at $BUILD/linux"
	echo "  as built: $BUILD/linux of $(date -r "$BUILD/linux" -u '+%F %T')"
else
	SRC=$("$HERE/prepare.sh" 2>"$LOGS/prepare.log" | tail -n 1)
	[ -d "$SRC" ] || { tail "$LOGS/prepare.log" >&2; die "prepare.sh failed"; }
	if ! cmp -s "$HERE/config.fragment" "$BUILD/.extalign-fragment" ||
	   [ ! -f "$BUILD/.config" ]; then
		mkdir -p "$BUILD"
		cp "$HERE/config.fragment" "$BUILD/.config"
		make -s -C "$SRC" ARCH=um O="$BUILD" olddefconfig >"$LOGS/config.log" 2>&1 ||
			die "olddefconfig failed (see $LOGS/config.log)"
		cp "$HERE/config.fragment" "$BUILD/.extalign-fragment"
	fi
	while read -r line; do
		grep -qx "$line" "$BUILD/.config" ||
			die "config: $line did not survive olddefconfig"
	done < <(grep '^CONFIG_' "$HERE/config.fragment")
	make -C "$SRC" ARCH=um O="$BUILD" -j"$JOBS" >"$LOGS/build-um.log" 2>&1 ||
		{ grep -E 'error' "$LOGS/build-um.log" | head >&2; die "kernel build failed (see $LOGS/build-um.log)"; }
	echo "  $(git -C "$SRC" rev-list --count extalign-base..HEAD) patches on 6.12"
fi
step kernel

echo "== fstests, fio, xfs_io"
"$HERE/fstests/build-tools.sh" "$TOOLS" >"$LOGS/fstests-tools.log" 2>&1 ||
	{ tail -n 20 "$LOGS/fstests-tools.log" >&2; die "building the tools failed"; }
# Built aside and renamed, and only when its source changed: another run
# (--no-build) may be executing it in its guest.
if [ ! "$TOOLS/bin/ktool" -nt "$TOP/tests/kernel/ktool.c" ]; then
	gcc -O2 -Wall -Wextra -Werror -o "$TOOLS/bin/ktool.$$" "$TOP/tests/kernel/ktool.c" &&
		mv "$TOOLS/bin/ktool.$$" "$TOOLS/bin/ktool" ||
		die "ktool does not build"
fi
step tools
[ $BUILD_ONLY = 1 ] && exit 0

# The tests: list names, list files and test names, in order, once each.
tests=()
for a in "${ARGS[@]}"; do
	if [ -f "$HERE/fstests/$a.list" ]; then
		a=$HERE/fstests/$a.list
	fi
	if [ -f "$a" ]; then
		mapfile -t -O ${#tests[@]} tests < <(sed 's/#.*//' "$a" | awk 'NF { print $1 }')
	elif [[ $a == */[0-9]* ]]; then
		tests+=("$a")
	else
		die "no list or test '$a'"
	fi
done
# Groups: what fstests' own group.list files (made when fstests was built)
# say, for the directories ./check reads with FSTYP=ext4.
for g in "${GROUPS_[@]}"; do
	n0=${#tests[@]}
	mapfile -t -O ${#tests[@]} tests < <(
		for d in generic shared ext4; do
			f=$TOOLS/xfstests/tests/$d/group.list
			[ -f "$f" ] || continue
			awk -v d="$d" -v g="$g" '!/^#/ { for (i = 2; i <= NF; i++) if ($i == g) { print d "/" $1; break } }' "$f"
		done | sort -V)
	[ ${#tests[@]} -gt "$n0" ] || die "no test is in group '$g'"
done
# Once each, first place kept.
mapfile -t tests < <(printf '%s\n' "${tests[@]}" | awk '!seen[$0]++')
[ ${#tests[@]} -gt 0 ] || die "no tests"

# Slices: K of N is tests[(K-1)*L/N .. K*L/N), the same tests for every
# kernel given the same lists and groups.
slice_of() { # K N: prints the slice's tests
	local k=$1 n=$2 l=${#tests[@]}
	printf '%s\n' "${tests[@]:$(((k - 1) * l / n)):$((k * l / n - (k - 1) * l / n))}"
}
if [ $LIST_ONLY = 1 ]; then
	if [ -n "$SHARD" ]; then
		slice_of "${SHARD%/*}" "${SHARD#*/}" >&3
	else
		printf '%s\n' "${tests[@]}" >&3
	fi
	exit 0
fi

# kernel/fstests/expected: tests this harness does not run (skip) or
# whose failure is by design (xfail) in a mode, with the reason printed.
# MODE is the mode of that file; fa_name also tells whether the test root
# is marked, fa_option is the option as given, fa_roots the roots it marks.
case $FORCEALIGN in
0) MODE=plain fa_name=plain fa_option='' fa_roots='' ;;
1) MODE=forcealign fa_name=forcealign fa_option=--forcealign
   fa_roots='forcealign scratch root' ;;
2) MODE=forcealign fa_name=forcealign-test fa_option=--forcealign-test
   fa_roots='forcealign scratch and test roots' ;;
esac
# The configuration's name: fa_name, and the mkfs options if any.
config=$fa_name${MKFS_OPTS:+-mkfs$(tr -c 'A-Za-z0-9' _ <<<"$MKFS_OPTS" | sed 's/_*$//')}
EXPECTED=${FSTESTS_EXPECTED:-$HERE/fstests/expected}
declare -A skip_reason xfail_reason
if [ -f "$EXPECTED" ]; then
	while read -r t mode action reason; do
		[ "$mode" = any ] || [ "$mode" = "$MODE" ] || continue
		case $action in
		skip) skip_reason[$t]=$reason ;;
		xfail) xfail_reason[$t]=$reason ;;
		*) die "$EXPECTED: $t: unknown action '$action' (skip or xfail)" ;;
		esac
	done < <(sed 's/#.*//' "$EXPECTED" | awk 'NF')
fi
# One run directory a configuration: a plain and a forcealign run of one
# kernel can go at once.
RUN=${EXTALIGN_RUN:-$KB/run-fstests-$config}
OUT=$RUN/out
mkdir -p "$RUN"
# What this invocation ran, every slice: the baseline comparison reads it.
ALL=$RUN/summary.all
: >"$ALL"
passed=0 failed=0 notrun=0 xfailed=0 not_forcealign=0 slices_run=0

# run_slice LABEL TEST...: boot the guest once for the tests (those
# kernel/fstests/expected does not skip), print a line per test and
# append "NAME STATUS REASON" lines to $OUT/summary.final and $ALL.
run_slice() {
	local label=$1 t uml_rc disk_args mem
	shift
	local slice=("$@") run_tests=()
	for t in "${slice[@]}"; do
		[ -n "${skip_reason[$t]:-}" ] || run_tests+=("$t")
	done
	rm -rf "$OUT"
	mkdir -p "$OUT"
	echo "== fstests in the guest${label:+, $label}: ${#run_tests[@]} tests${fa_roots:+, $fa_roots}"
	if [ ${#run_tests[@]} -gt 0 ]; then
		# The list goes through a file: a group's slice would not fit
		# on the kernel command line.
		printf '%s\n' "${run_tests[@]}" >"$OUT/tests"
		# The mkfs options too: a kernel parameter ends at a space.
		[ -z "$MKFS_OPTS" ] || printf '%s\n' "$MKFS_OPTS" >"$OUT/mkfs-options"
		# The series' e2fsprogs (e2fsprogs/check.sh) when built: fstests'
		# fsck after each test runs its e2fsck.
		e2=()
		e2bin=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}/bin
		[ -x "$e2bin/e2fsck" ] && e2=(EXTALIGN_E2FSPROGS="$e2bin")
		if [ "$DISKS" = ubd ]; then
			# Three sparse files, new for each slice (what a test
			# wrote goes with them): TEST_DEV, SCRATCH_DEV and
			# LOGWRITES_DEV.  No scsi_debug disk at all (built in, it
			# would add one of 8 MiB).
			local d
			disk_args=(scsi_debug.add_host=0)
			for d in 0 1 2; do
				rm -f "$RUN/disk$d.img"
				truncate -s "${FSTESTS_DISK_GB:-10}G" "$RUN/disk$d.img"
				disk_args+=("ubd$d=$RUN/disk$d.img")
			done
			mem=${FSTESTS_MEM:-1G}
		else
			# Three scsi_debug hosts with a store each: TEST_DEV,
			# SCRATCH_DEV and LOGWRITES_DEV (dm log-writes tests).
			# UML keeps its memory (which holds the stores) in a file
			# under TMPDIR.  scsi_debug completes each command after
			# one jiffy by default, 10 ms at this kernel's HZ=100: the
			# guest then mostly waits (ext4/062 took 768 s of which
			# 76 s CPU).  delay=-1 completes it from a workqueue
			# instead, still after queuecommand returns, so I/O stays
			# asynchronous.
			disk_args=(scsi_debug.add_host=3 scsi_debug.per_host_store=1
				   scsi_debug.dev_size_mb="${FSTESTS_DISK_MB:-512}"
				   scsi_debug.sector_size=4096
				   scsi_debug.delay="${FSTESTS_DISK_DELAY:--1}"
				   scsi_debug.atomic_wr=1 scsi_debug.atomic_wr_max_length=16
				   scsi_debug.atomic_wr_gran=1 scsi_debug.atomic_wr_align=1)
			mem=${FSTESTS_MEM:-3G}
		fi
		TMPDIR=$RUN timeout "${FSTESTS_TIMEOUT:-5400}" "$BUILD/linux" \
			mem="$mem" \
			root=/dev/root rootfstype=hostfs rootflags=/ rw \
			init="$HERE/fstests/init.sh" \
			"${disk_args[@]}" FSTESTS_DISKS="$DISKS" \
			EXTALIGN_OUT="$OUT" FSTESTS_DIR="$TOOLS/xfstests" FSTESTS_BIN="$TOOLS/bin" \
			FSTESTS_TESTS_FILE="$OUT/tests" FSTESTS_FORCEALIGN=$FORCEALIGN \
			FSTESTS_TEST_TIMEOUT="${FSTESTS_TEST_TIMEOUT:-900}" \
			FSTESTS_EXTSIZE="${FSTESTS_EXTSIZE:-16384}" KTOOL="$TOOLS/bin/ktool" \
			"${e2[@]}" </dev/null >"$RUN/console.log" 2>&1
		uml_rc=$?
		step guest
		if [ ! -f "$OUT/done" ]; then
			tail -n 30 "$RUN/console.log" "$OUT/guest.log" "$OUT/check.out" 2>/dev/null >&2
			die "the guest did not finish (exit $uml_rc; console in $RUN/console.log)"
		fi
	fi
	report_slice "${slice[@]}"
	slices_run=$((slices_run + 1))
}

# built_kernel: "BASE + N patches, RELEASE" for the kernel in BUILD, from
# the commit its release names (6.12.118-gSHA), not from the source
# tree's HEAD, which another run's bisect check may have moved meanwhile
# (a slice's line once said "+ 5 patches" for a kernel of 10).  The
# release tells two versions of the series apart, which the count does
# not; kernel/prepare.sh makes its SHA the same on every machine.
built_kernel() {
	local rel sha
	rel=$(cat "$BUILD/include/config/kernel.release" 2>/dev/null)
	rel=${rel%-dirty}
	sha=${rel##*-g}
	[ -n "$sha" ] && [ "$sha" != "$rel" ] || sha=HEAD
	echo "$(git -C "$SRC" describe --always extalign-base 2>/dev/null) +" \
		"$(git -C "$SRC" rev-list --count "extalign-base..$sha" 2>/dev/null) patches, ${rel:-release unknown}"
}

# what_ran KERNEL: what a slice's or a rerun's "#" line says it ran on:
# KERNEL (built_kernel, taken before the guest booted), the git object of
# the config fragment it was built from, the disks and mkfs options.
what_ran() {
	echo "$1, config $(git hash-object "$BUILD/.extalign-fragment" | cut -c1-12), $DISKS disks${MKFS_OPTS:+, mkfs $MKFS_OPTS}"
}

# report_slice TEST...: the PASS/FAIL/NOTRUN/XFAIL line of each test.
report_slice() {
	local name status reason marked unmarked f _ t what rest
	# One line per test from what ./check printed (kernel/fstests/report.py).
	"$HERE/fstests/report.py" "$OUT" "$@" >"$OUT/summary" ||
		die "cannot read the report"
	# With --forcealign: how many of each test's scratch mounts the hook
	# marked, and why it could not mark the others, and whether the test
	# filesystem's root was still marked when ./check mounted it again
	# after the test (kernel/fstests/mount-hook.sh's log).  A test passes
	# on a forcealign root only if every scratch mount it made was marked,
	# or it made none and the test root kept its mark; one that passed
	# otherwise says so and is counted apart.
	local -A hook_marked=() hook_failed=() hook_why=() test_kept=() test_lost=()
	if [ $FORCEALIGN != 0 ] && [ -f "$OUT/mount-hook.log" ]; then
		while read -r _ t what target rest; do
			case $what:$target in
			test-kept:*) test_kept[$t]=1 ;;
			test-lost:*) test_lost[$t]=1 ;;
			*:*/scratch | *:*/scratch:) # marked, or failed (target:)
				if [ "$what" = marked ] && [[ $rest == *xflags=0x101000* ]]; then
					hook_marked[$t]=$((${hook_marked[$t]:-0} + 1))
				else
					hook_failed[$t]=$((${hook_failed[$t]:-0} + 1))
					hook_why[$t]=$(echo "$rest" | sed 's/ *$//')
				fi ;;
			esac
		done < <(grep '^hook: ' "$OUT/mount-hook.log")
	fi
	# Tests the harness skipped get their reason from kernel/fstests/
	# expected; an expected failure is XFAIL (not counted as a failure),
	# and a test expected to fail that passes says so.
	while read -r name status reason; do
		if [ -n "${skip_reason[$name]:-}" ]; then
			status=NOTRUN reason="harness: ${skip_reason[$name]}"
		elif [ -n "${xfail_reason[$name]:-}" ]; then
			# Only a test that ran and failed fails by design: one that
			# never ran, or was cut off, stays a FAIL.
			case $status:$reason in
			"FAIL:not in fstests' output"* | "FAIL:timed out"* | "FAIL:no result"*) ;;
			FAIL:*) status=XFAIL reason="by design: ${xfail_reason[$name]}; fstests: $reason" ;;
			PASS:*) reason="$reason; listed as an expected failure in $(basename "$EXPECTED"): drop it there" ;;
			esac
		fi
		marked=${hook_marked[$name]:-0} unmarked=${hook_failed[$name]:-0}
		if [ $FORCEALIGN != 0 ] && [ "$status" = PASS ]; then
			if [ "$marked$unmarked" = 00 ] && [ -n "${test_kept[$name]:-}" ] &&
				[ -z "${test_lost[$name]:-}" ]; then
				reason="${reason:+$reason; }forcealign test filesystem, no scratch mount"
			elif [ "$marked$unmarked" = 00 ]; then
				reason="${reason:+$reason; }not forcealign: it mounted no scratch filesystem$([ $FORCEALIGN != 2 ] || echo ", and the test filesystem's root $([ -n "${test_lost[$name]:-}" ] && echo "lost its mark" || echo "was not mounted again after it")")"
				not_forcealign=$((not_forcealign + 1))
			elif [ "$unmarked" != 0 ]; then
				reason="${reason:+$reason; }not forcealign: $marked of $((marked + unmarked)) scratch mounts forcealign, the hook could not mark the others (${hook_why[$name]})"
				not_forcealign=$((not_forcealign + 1))
			fi
		fi
		echo "$name $status $reason" >>"$OUT/summary.final"
		echo "$status $name${reason:+ ($reason)}"
		case $status in
		XFAIL) xfailed=$((xfailed + 1)) ;;
		PASS) passed=$((passed + 1)) ;;
		NOTRUN) notrun=$((notrun + 1)) ;;
		*) failed=$((failed + 1))
		   for f in "$OUT/results/$name.out.bad" "$OUT/results/$name.dmesg"; do
			[ -f "$f" ] && echo "    $f"
		   done ;;
		esac
	done <"$OUT/summary"
	[ -f "$OUT/mount-hook.log" ] &&
		echo "forcealign hook: $(grep -c '^hook: [^ ]* marked [^ ]*/scratch xflags=0x101000' "$OUT/mount-hook.log") scratch mounts marked, $(grep -c '^hook: [^ ]* failed [^ ]*/scratch' "$OUT/mount-hook.log") failed; the test root kept its mark through $(grep -v '^hook: unknown ' "$OUT/mount-hook.log" | grep -c '^hook: [^ ]* test-kept ') tests, lost it in $(grep -c '^hook: [^ ]* test-lost ' "$OUT/mount-hook.log")"
	touch "$OUT/summary.final"
	cat "$OUT/summary.final" >>"$ALL"
}

# Each slice's lines go to the results file under a "# slice K/N" line as
# soon as it ends.
if [ -n "$SHARD$SHARDS" ]; then
	parts=("${ARGS[@]}" "${GROUPS_[@]}")
	label=$(IFS=+; echo "${parts[*]}" | tr '/' '_')
	RESULTS=${RESULTS:-$KB/results/$label-$config.results}
	mkdir -p "$(dirname "$RESULTS")"
	if [ -n "$SHARD" ]; then
		k_list=("${SHARD%/*}") n=${SHARD#*/}
	else
		mapfile -t k_list < <(seq 1 "$SHARDS")
		n=$SHARDS
	fi
	for k in "${k_list[@]}"; do
		if grep -qx "# slice $k/$n .*" "$RESULTS" 2>/dev/null; then
			echo "== slice $k/$n: already in $RESULTS"
			continue
		fi
		mapfile -t slice < <(slice_of "$k" "$n")
		[ ${#slice[@]} -gt 0 ] || continue
		t_slice=$(date +%s)
		kernel_built=$(built_kernel)
		run_slice "slice $k/$n" "${slice[@]}"
		{
			echo "# slice $k/$n $(date -u '+%F %T') $(($(date +%s) - t_slice))s $(what_ran "$kernel_built")"
			cat "$OUT/summary.final"
		} >>"$RESULTS"
		echo "== slice $k/$n: results appended to $RESULTS"
		# The next slice's guest empties out/: what a failure left
		# (its diff, .full and dmesg) is kept, per slice.
		keep=$KB/results/kept/$(basename "${RESULTS%.results}")/slice-$k
		while read -r name status _; do
			case $status in FAIL | XFAIL) ;; *) continue ;; esac
			mkdir -p "$keep/${name%/*}"
			for f in "$OUT/results/$name".{out.bad,full,dmesg}; do
				[ -f "$f" ] && cp "$f" "$keep/${name%/*}/"
			done
			echo "   $name: kept in $keep"
		done <"$OUT/summary.final"
	done
	# The whole file's counts: every slice recorded so far, by any run.
	# A slice keeps the status it was reported with; a failure found by
	# design after its slice ran (its xfail line added since) counts as
	# by design here, as it would if the slice ran again.
	echo "$RESULTS: $(grep -c "^# slice [0-9]*/$n " "$RESULTS") of $n slices recorded;" \
		"$(awk -v xfail="${!xfail_reason[*]}" '
			BEGIN { split(xfail, t, " "); for (i in t) by_design[t[i]] = 1 }
			/^#/ { next }
			$2 == "FAIL" && ($1 in by_design) { n["XFAIL"]++; next }
			{ n[$2]++ }
			END { printf "%d passed, %d failed, %d failed by design, %d notrun", n["PASS"], n["FAIL"], n["XFAIL"], n["NOTRUN"] }' "$RESULTS")"
elif [ -n "$RERUN" ]; then
	t_rerun=$(date +%s)
	kernel_built=$(built_kernel)
	run_slice "$RERUN alone" "$RERUN"
	# A guest that reported nothing leaves the old line as it was.
	[ "$(awk -v t="$RERUN" '$1 == t' "$OUT/summary.final" | wc -l)" = 1 ] ||
		die "--rerun $RERUN: the guest gave no result for it; $RESULTS unchanged"
	# Through the environment, not awk -v, which would read backslashes
	# in a reason as escapes.
	RERUN_NOTE="# $RERUN run again alone $(date -u '+%F %T') $(($(date +%s) - t_rerun))s $(what_ran "$kernel_built"); in its slice: $(awk -v t="$RERUN" '$1 == t { $1 = ""; sub(/^ /, ""); print }' "$RESULTS")" \
	RERUN_LINE=$(cat "$OUT/summary.final") \
		awk -v t="$RERUN" '$1 == t { print ENVIRON["RERUN_NOTE"]; print ENVIRON["RERUN_LINE"]; next } { print }' \
		"$RESULTS" >"$RESULTS.rerun" && mv "$RESULTS.rerun" "$RESULTS" ||
		die "could not write $RESULTS"
	echo "== $RERUN: its line in $RESULTS replaced"
else
	run_slice "" "${tests[@]}"
fi
echo "$passed passed$([ $FORCEALIGN != 0 ] && echo " ($((passed - not_forcealign)) on a forcealign root)"), $failed failed, $xfailed failed by design, $notrun notrun$([ $slices_run = 0 ] || echo " (last results in $OUT)")"

if [ -n "$RECORD" ] && [ -n "$SHARD$SHARDS" ] && [ "$(grep -c "^# slice [0-9]*/$n " "$RESULTS")" != "$n" ]; then
	echo "not recorded in $RECORD yet: $(grep -c "^# slice [0-9]*/$n " "$RESULTS") of $n slices are in $RESULTS (run again to go on)"
elif [ -n "$RECORD" ]; then
	{
		echo "# kernel/fstests.sh $([ $BASE = 1 ] && echo '--base ')${fa_option:+$fa_option }${MKFS_OPTS:+--mkfs '$MKFS_OPTS' }$([ ${#GROUPS_[@]} = 0 ] || printf -- '-g %s ' "${GROUPS_[@]}")${ARGS[*]}"
		echo "# on $(built_kernel), $(date -u +%F)"
		if [ -n "$SHARD$SHARDS" ]; then
			grep -v '^#' "$RESULTS"
		else
			cat "$ALL"
		fi
	} >"$RECORD"
	echo "recorded in $RECORD"
fi

rc=0
if [ -n "$BASELINE" ]; then
	regressions=0
	while read -r name status _; do
		was=$(awk -v t="$name" '$1 == t { print $2 }' "$BASELINE")
		if [ "$was" = PASS ] && [ "$status" != PASS ]; then
			echo "REGRESSION $name: PASS in $(basename "$BASELINE"), $status now"
			regressions=$((regressions + 1))
		fi
	done < <(if [ -n "$SHARD$SHARDS" ]; then grep -v '^#' "$RESULTS"; else cat "$ALL"; fi)
	echo "$regressions regressions against $(basename "$BASELINE")"
	[ $regressions = 0 ] || rc=1
elif [ $failed != 0 ]; then
	rc=1
fi
exit $rc
