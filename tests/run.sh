#!/bin/bash
# Run the test suites: unit (Check, under valgrind when installed),
# e2fsprogs (the patched e2fsprogs and their tests; the integration and
# kernel suites then use its e2fsck), integration (real loop
# filesystems), kernel (patched UML kernel), fstests (upstream fstests' atomic-write list on that kernel),
# fresh (the README's demo and the Debian package in a new Debian 12 root).
# Usage: tests/run.sh [unit|e2fsprogs|integration|fuzz|kernel|fstests|fresh]...
# (default: all)
# Prints one line per test and a summary with pass, fail and skip counts;
# every skip carries its reason.  Exit status is non-zero if any test failed.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit e2fsprogs integration fuzz kernel fstests fresh)

pass=0 failed=0 skipped=0
failures=() skips=()
LOG=$TOP/build/test-logs
mkdir -p "$LOG"

record() { # name rc logfile [seconds]
	local name=$1 rc=$2 log=$3 took=${4:+ (${4}s)} reason
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name$took" ;;
	77) skipped=$((skipped + 1))
	    reason=$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//')
	    skips+=("$name: ${reason:-no reason given}")
	    echo "SKIP $name (${reason:-no reason given})" ;;
	*) failed=$((failed + 1)); failures+=("$name")
	   echo "FAIL $name (exit $rc${4:+, ${4}s}), log:"; sed 's/^/    /' "$log" | tail -40 ;;
	esac
}

run_unit() {
	local t name rc vg=()
	if command -v valgrind >/dev/null; then
		# shellcheck disable=SC2054 # the commas belong to the options
		vg=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect
		    --errors-for-leak-kinds=definite,indirect --error-exitcode=99)
	fi
	for t in build/tests/test-*; do
		[ -x "$t" ] || continue
		name=unit/$(basename "$t")
		# CK_FORK=no so valgrind sees the test code itself.
		CK_FORK=no "${vg[@]}" "$t" >"$LOG/${name//\//_}.log" 2>&1
		rc=$?
		record "$name" "$rc" "$LOG/${name//\//_}.log"
	done
}

# run_integration_test FILE: one integration test, recorded by its name
# with the seconds it took (the suite is most of a CI run's userspace
# time, and this is where its slow tests show).
run_integration_test() {
	local name rc start=$SECONDS
	name=integration/$(basename "$1" .sh)
	timeout 600 bash "$1" >"$LOG/${name//\//_}.log" 2>&1
	rc=$?
	record "$name" "$rc" "$LOG/${name//\//_}.log" $((SECONDS - start))
}

# The demo on the patched kernel needs the kernel that the kernel suite
# builds: when that suite runs too, the demo runs right after it, so that
# a cold run tests it rather than skipping it.
KERNEL_DEMO=tests/integration/demo-kernel.sh

run_integration() {
	local t
	for t in tests/integration/*.sh; do
		[ "$(basename "$t")" = lib.sh ] && continue
		[ "$t" = "$KERNEL_DEMO" ] && [[ " ${suites[*]} " == *" kernel "* ]] && continue
		run_integration_test "$t"
	done
}

run_fuzz() {
	local rc
	tests/fuzz/run.sh >"$LOG/fuzz.log" 2>&1
	rc=$?
	record fuzz/libfuzzer "$rc" "$LOG/fuzz.log"
	grep '^fuzz ' "$LOG/fuzz.log" | sed 's/^/    /'
}

# The e2fsprogs series (e2fsprogs/check.sh): built, and its tests in
# e2fsprogs' own harness.  Before the kernel suite, whose guests run the
# patched e2fsck it leaves in $EXTALIGN_E2BUILD/bin.
run_e2fsprogs() {
	local rc
	e2fsprogs/check.sh >"$LOG/e2fsprogs.log" 2>&1
	rc=$?
	record e2fsprogs/check "$rc" "$LOG/e2fsprogs.log"
	grep -E '^(PASS|FAIL) |^time ' "$LOG/e2fsprogs.log" | sed 's/^/    /'
	# Its Debian packages, which the fresh suite installs.
	e2fsprogs/deb.sh >"$LOG/e2fsprogs-deb.log" 2>&1
	rc=$?
	record e2fsprogs/deb "$rc" "$LOG/e2fsprogs-deb.log"
}

run_kernel() {
	local rc
	if [ ! -x kernel/check.sh ]; then
		return
	fi
	kernel/check.sh 2>&1 | tee "$LOG/kernel.log"
	rc=${PIPESTATUS[0]}
	record kernel/check "$rc" "$LOG/kernel.log"
	run_integration_test "$KERNEL_DEMO"
}

# List (a) of kernel/fstests (the atomic-write tests) on the kernel the
# kernel suite built, once plain and once with a forcealign scratch root
# (kernel/fstests/README.md has the times behind this choice).  The tools
# come from the snapshots beside the checkout; without them, or without a
# kernel build, the suite is skipped, not failed: the kernel suite already
# reports a build that failed.  The kernel and tools are brought up to
# date once; then the two modes boot a guest each at once (UML keeps a
# guest on one CPU), each in a run directory of its own.
FSTESTS_MODES=(plain forcealign)

# The quick group cut in 5 slices (kernel/fstests.sh --shard K/5 --list)
# holds every test of the group once, in the group's order: what lets two
# kernels' runs be compared slice by slice.
check_slices() {
	local log=$LOG/fstests_slices.log rc=0 k
	local re='^(generic|ext4|shared)/[0-9]+$'
	{
		kernel/fstests.sh --no-build -g quick --list | grep -E "$re" >"$LOG/quick.all" &&
			for k in 1 2 3 4 5; do
				kernel/fstests.sh --no-build -g quick --shard "$k/5" --list | grep -E "$re"
			done >"$LOG/quick.sliced" &&
			[ "$(wc -l <"$LOG/quick.all")" -gt 100 ] &&
			cmp "$LOG/quick.all" "$LOG/quick.sliced" &&
			echo "quick: $(wc -l <"$LOG/quick.all") tests; 5 slices hold each once, in order" &&
			# --rerun replaces a line of a results file: refused, before
			# any build or boot, for a test the file does not hold.
			{ printf '# slice 1/5\ngeneric/001 PASS 1s\n' >"$LOG/rerun.results"
			  ! kernel/fstests.sh --no-build --rerun generic/002 --results "$LOG/rerun.results" 2>"$LOG/rerun.err"; } &&
			grep -q 'has no line for it' "$LOG/rerun.err" &&
			[ "$(cat "$LOG/rerun.results")" = "$(printf '# slice 1/5\ngeneric/001 PASS 1s')" ] &&
			echo "--rerun of a test not in the results file: refused, file unchanged"
	} >"$log" 2>&1 || rc=1
	record fstests/slices "$rc" "$log"
	[ "$rc" = 0 ] && sed 's/^/    /' "$log" | tail -2
}

run_fstests() {
	local kb=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
	local tools=${EXTALIGN_TOOLS:-$TOP/../shared/tools}
	local mode name log rc opts skip='' pids=() build_log=$LOG/fstests_build.log
	if ! ls "$tools"/xfstests-*.tar.xz "$tools"/fio-*.tar.xz \
		"$tools"/xfsprogs-*.tar.xz >/dev/null 2>&1; then
		skip="no fstests, fio and xfsprogs snapshots in $tools"
	elif [ ! -x "$kb/build-um/linux" ]; then
		skip="no UML kernel in $kb/build-um (the kernel suite builds it)"
	elif ! kernel/fstests.sh --build-only >"$build_log" 2>&1; then
		for mode in "${FSTESTS_MODES[@]}"; do
			record "fstests/atomic-$mode" 2 "$build_log"
		done
		return
	fi
	[ -n "$skip" ] || check_slices
	for mode in "${FSTESTS_MODES[@]}"; do
		log=$LOG/fstests_atomic-$mode.log
		if [ -n "$skip" ]; then
			echo "SKIP: $skip" >"$log"
			continue
		fi
		opts=()
		[ "$mode" = forcealign ] && opts=(--forcealign)
		EXTALIGN_RUN=$kb/run-fstests-$mode \
			kernel/fstests.sh --no-build "${opts[@]}" atomic >"$log" 2>&1 &
		pids+=($!)
	done
	for mode in "${FSTESTS_MODES[@]}"; do
		name=fstests/atomic-$mode
		log=$LOG/fstests_atomic-$mode.log
		if [ -n "$skip" ]; then
			rc=77
		else
			wait "${pids[0]}"
			rc=$?
			pids=("${pids[@]:1}")
		fi
		record "$name" "$rc" "$log"
		[ "$rc" = 0 ] && grep -E '^(PASS|FAIL|XFAIL|NOTRUN) |^[0-9]+ passed|^  time ' "$log" | sed 's/^/    /'
	done
}

run_fresh() {
	local rc
	timeout 3600 tests/fresh/run.sh >"$LOG/fresh.log" 2>&1
	rc=$?
	record fresh/debian12 "$rc" "$LOG/fresh.log"
	grep '^time ' "$LOG/fresh.log" | sed 's/^/    /'
}

for s in "${suites[@]}"; do
	case $s in
	unit | integration | fuzz | e2fsprogs | kernel | fstests | fresh) "run_$s" ;;
	*) echo "unknown suite '$s' (unit, e2fsprogs, integration, fuzz, kernel, fstests, fresh)" >&2; exit 2 ;;
	esac
done

echo
echo "== $pass passed, $failed failed, $skipped skipped"
for s in "${skips[@]}"; do echo "   skipped: $s"; done
for f in "${failures[@]}"; do echo "   FAILED: $f"; done
[ "$failed" = 0 ]
