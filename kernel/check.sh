#!/bin/bash
# Build and test the extalign ext4 kernel series.
#
# Usage: kernel/check.sh [--quick] [--kunit-tool] [TEST...]
#
#   1. kernel/prepare.sh: Linux 6.12 tree with kernel/patches applied
#   2. scripts/checkpatch.pl --strict over every patch
#   3. UML kernel from kernel/config.fragment (make ARCH=um olddefconfig)
#   4. bisect check: the tree builds after every patch (skipped by --quick)
#   4b. module build: the same kernel with ext4 and jbd2 as modules, as
#      Debian's configuration has them, links and passes modpost (skipped
#      by --quick)
#   5. with --kunit-tool, the ext4 KUnit suites through kunit.py
#      (--kunitconfig=fs/ext4, a kernel of its own); the test kernel runs
#      the same suites at boot, reported as kunit/boot in step 6
#   6. boot the UML kernel (kernel/boot.sh: the host's root, an ubd disk and
#      an atomic-write capable scsi_debug disk); tests/kernel/init.sh runs
#      tests/kernel/[0-9]*.sh (or only the TESTs named) inside
#
# Prints PASS, FAIL or SKIP (reason) per step and test, the time each step
# took, and exits non-zero if anything failed.  Build products live in
# ${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel} and are reused between runs.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
export EXTALIGN_KBUILD=$KB
JOBS=${JOBS:-$(nproc)}
QUICK=0
KUNIT_TOOL=0
TESTS=()
for arg in "$@"; do
	case $arg in
	--quick) QUICK=1 ;;
	--kunit-tool) KUNIT_TOOL=1 ;;
	-h | --help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "check.sh: unknown option $arg" >&2; exit 2 ;;
	*) TESTS+=("$arg") ;;
	esac
done

UML_BUILD=$KB/build-um
MODULE_BUILD=$KB/build-um-modules
BISECT_BUILD=$KB/build-bisect
KUNIT_BUILD=$KB/build-kunit
RUN=$KB/run
LOGS=$KB/logs
mkdir -p "$KB" "$RUN" "$LOGS"

# shellcheck source=kernel/report.bash
. "$HERE/report.bash"

# config_kernel SRC BUILD [FRAGMENT]: .config from the fragment (default
# config.fragment), checked.
config_kernel() {
	local src=$1 build=$2 frag=${3:-$HERE/config.fragment} line missing=0

	mkdir -p "$build"
	# Only rewrite .config when the fragment changed, so that a rebuild
	# stays incremental.
	if ! cmp -s "$frag" "$build/.extalign-fragment" || [ ! -f "$build/.config" ]; then
		cp "$frag" "$build/.config"
		make -s -C "$src" ARCH=um O="$build" olddefconfig || return 1
		cp "$frag" "$build/.extalign-fragment"
	fi
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qx "$line" "$build/.config" ||
			{ echo "config: $line did not survive olddefconfig"; missing=1; } ;;
		esac
	done <"$frag"
	return $missing
}

# build_kernel SRC BUILD LOG [FRAGMENT]
build_kernel() {
	config_kernel "$1" "$2" "${4:-}" >"$3" 2>&1 &&
		make -C "$1" ARCH=um O="$2" -j"$JOBS" >>"$3" 2>&1
}

overall_start=$(date +%s)

# 1. The tree.
echo "== prepare"
timer_start
if ! SRC=$("$HERE/prepare.sh" 2>"$LOGS/prepare.log" | tail -n 1) || [ ! -d "$SRC" ]; then
	report FAIL prepare
	show_log "$LOGS/prepare.log"
	exit 1
fi
report PASS prepare "$(git -C "$SRC" rev-list --count extalign-base..HEAD) patches on $(git -C "$SRC" describe --always extalign-base)"
timer_end prepare
mapfile -t COMMITS < <(git -C "$SRC" rev-list --reverse extalign-base..HEAD)
mapfile -t PATCHES < <(grep -v '^[[:space:]]*\(#\|$\)' "$HERE/patches/series" 2>/dev/null)

# 2. checkpatch.
echo "== checkpatch --strict"
timer_start
for p in "${PATCHES[@]}"; do
	log=$LOGS/checkpatch-${p%.patch}.log
	if (cd "$SRC" && perl scripts/checkpatch.pl --strict --quiet \
		"$HERE/patches/$p") >"$log" 2>&1 &&
	   grep -q '^Signed-off-by: extalign developers <dev@extalign.invalid>' \
		"$HERE/patches/$p"; then
		report PASS "checkpatch/$p"
	else
		report FAIL "checkpatch/$p"
		grep -q '^Signed-off-by: extalign developers' "$HERE/patches/$p" ||
			echo "    missing Signed-off-by: extalign developers <dev@extalign.invalid>"
		show_log "$log"
	fi
done
timer_end checkpatch

# 3. The UML kernel.
echo "== build UML kernel"
timer_start
if build_kernel "$SRC" "$UML_BUILD" "$LOGS/build-um.log"; then
	report PASS build/uml
	uml_ok=1
else
	report FAIL build/uml
	grep -E 'error|Error' "$LOGS/build-um.log" | head -20 | sed 's/^/    /'
	show_log "$LOGS/build-um.log" 15
	uml_ok=0
fi
timer_end build

# 4. Every patch builds on its own (the last one is the build above).
# The tree is walked back from the last patch in $SRC itself, building into
# a copy of the UML build, so that each step only rebuilds what one patch
# changed (a cold run pays for one full build, not two).  Afterwards the
# files the series touches get their mtimes back, so that the UML build
# and the KUnit build stay current.  A patch whose tree (git tree id)
# built before with the same config fragment is not built again: a run on
# an unchanged series skips it.
bisect_ok=$KB/bisect-ok
# bisect_key COMMIT: what a build of COMMIT depends on, its tree and the
# config fragment.
bisect_key() {
	echo "$(git -C "$SRC" rev-parse "$1^{tree}")-$(sha256sum <"$HERE/config.fragment" | cut -c1-16)"
}
# (Earlier versions bisected in a worktree of their own: drop it.)
if [ -d "$KB/bisect-src" ]; then
	rm -rf "$KB/bisect-src"
	git -C "$SRC" worktree prune
fi
echo "== bisect check (each patch builds)"
timer_start
if [ "$QUICK" = 1 ]; then
	report SKIP bisect "--quick"
elif [ "${#COMMITS[@]}" -lt 2 ]; then
	report SKIP bisect "fewer than two patches: the full build covers it"
elif [ "$uml_ok" != 1 ]; then
	report FAIL bisect "the full build failed, nothing to start from"
else
	mkdir -p "$bisect_ok"
	todo=()
	for ((i = ${#COMMITS[@]} - 2; i >= 0; i--)); do
		tree=$(bisect_key "${COMMITS[$i]}")
		if [ -e "$bisect_ok/$tree" ]; then
			report PASS "bisect/$((i + 1))" "$(git -C "$SRC" log -1 --format=%s "${COMMITS[$i]}"): built before"
		else
			todo+=("$i")
		fi
	done
	if [ ${#todo[@]} -gt 0 ]; then
		head=$(git -C "$SRC" rev-parse HEAD)
		mtimes=$LOGS/bisect-mtimes
		git -C "$SRC" diff --name-only extalign-base "$head" |
			while read -r f; do
				[ -e "$SRC/$f" ] && echo "$(stat -c %Y "$SRC/$f") $f"
			done >"$mtimes"
		rm -rf "$BISECT_BUILD"
		cp -a "$UML_BUILD" "$BISECT_BUILD"
		for i in "${todo[@]}"; do
			c=${COMMITS[$i]}
			name=$(git -C "$SRC" log -1 --format=%s "$c")
			log=$LOGS/bisect-$((i + 1)).log
			if git -C "$SRC" checkout -q --detach "$c" &&
			   build_kernel "$SRC" "$BISECT_BUILD" "$log"; then
				report PASS "bisect/$((i + 1))" "$name"
				touch "$bisect_ok/$(bisect_key "$c")"
			else
				report FAIL "bisect/$((i + 1))" "$name"
				grep -E 'error|Error' "$log" | head -20 | sed 's/^/    /'
			fi
		done
		git -C "$SRC" checkout -q --detach "$head"
		while read -r t f; do
			touch -d "@$t" "$SRC/$f"
		done <"$mtimes"
	fi
	report PASS "bisect/${#COMMITS[@]}" "$(git -C "$SRC" log -1 --format=%s HEAD): the full build"
fi
timer_end bisect

# 4b. ext4 and jbd2 as modules.  Built in, as in the test configuration,
# ext4 may call any kernel function; as a module (Debian's
# CONFIG_EXT4_FS=m) only exported ones, and modpost says which it lacks.
# The fragment is the test configuration with those two (and ext4's KUnit
# suite, which depends on ext4) as modules.
echo "== module build (CONFIG_EXT4_FS=m, CONFIG_JBD2=m)"
timer_start
module_frag=$KB/config.fragment.modules
{
	grep -v -e '^CONFIG_EXT4_FS=' -e '^CONFIG_EXT4_KUNIT_TESTS=' "$HERE/config.fragment"
	printf 'CONFIG_EXT4_FS=m\nCONFIG_JBD2=m\nCONFIG_EXT4_KUNIT_TESTS=m\n'
} >"$module_frag.new"
mv -f "$module_frag.new" "$module_frag"
module_log=$LOGS/build-um-modules.log
if [ "$QUICK" = 1 ]; then
	report SKIP build/modules "--quick"
elif [ "$uml_ok" != 1 ]; then
	report FAIL build/modules "the full build failed, nothing to start from"
# The first time, start from a copy of the full build: the test
# configuration has modules on already, so only what CONFIG_EXT4_FS and
# CONFIG_JBD2 reach is compiled again (minutes, not a second full build).
elif { [ -f "$MODULE_BUILD/.config" ] || cp -a "$UML_BUILD" "$MODULE_BUILD"; } &&
	build_kernel "$SRC" "$MODULE_BUILD" "$module_log" "$module_frag"; then
	missing=
	for ko in fs/ext4/ext4.ko fs/jbd2/jbd2.ko fs/ext4/ext4-inode-test.ko; do
		[ -f "$MODULE_BUILD/$ko" ] || missing="$missing $ko"
	done
	if [ -n "$missing" ]; then
		report FAIL build/modules "built, but without$missing"
	else
		report PASS build/modules "ext4.ko $(du -k "$MODULE_BUILD/fs/ext4/ext4.ko" | cut -f1) KiB, jbd2.ko; modpost clean"
	fi
else
	report FAIL build/modules
	grep -E 'error|Error|undefined' "$module_log" | head -20 | sed 's/^/    /'
	show_log "$module_log" 15
fi
timer_end modules

# 5. KUnit through its own tool.  kunit.py builds a second UML kernel
# from fs/ext4/.kunitconfig (4.5 minutes cold) only to run
# ext4_mballoc_test and ext4_inode_test, which the test kernel
# (CONFIG_EXT4_KUNIT_TESTS=y) runs at every boot of step 6 (kunit/boot):
# on request.
if [ "$KUNIT_TOOL" = 1 ]; then
	echo "== KUnit (fs/ext4, kunit.py)"
	timer_start
	kunit_log=$LOGS/kunit.log
	if (cd "$SRC" && python3 tools/testing/kunit/kunit.py run --kunitconfig=fs/ext4 \
		--build_dir="$KUNIT_BUILD" --jobs="$JOBS" --timeout=600) >"$kunit_log" 2>&1; then
		report PASS kunit/ext4 "$(grep -o 'Ran [0-9]* tests.*' "$kunit_log" | tail -n 1)"
	else
		report FAIL kunit/ext4 "$(grep -o 'Ran [0-9]* tests.*' "$kunit_log" | tail -n 1)"
		grep -E '\[FAILED\]|not ok|error' "$kunit_log" | head -30 | sed 's/^/    /'
		show_log "$kunit_log" 20
	fi
	timer_end kunit
fi

# 6. Boot and run the behaviour tests.
#
# UML runs a guest's kernel on one host CPU, so the tests are shared out
# between GUESTS guests (default: one per CPU, at most 2) booted at once.
# Each takes the next test of one list that no guest has taken yet
# (init.sh's EXTALIGN_QUEUE), the long ones first so that the guests
# finish together: on 2 CPUs the boot tests took 1004 s in one guest.
GUESTS=${GUESTS:-$((JOBS < 2 ? 1 : 2))}
# Seconds each took in one guest on 2026-12-04: 90 287, 56 166, 60 102,
# 83 102 (120-170 since its power cut drops writes through dm), 80 60,
# 67 49; no other test takes 30.  48 (added later) took 103-116 in CI.
LONG_TESTS=(90-atomic-crash 56-tiny-journal-storm 60-atomic-multi-block
	83-realign-powercut 48-moveext-crash 80-userspace-e2e
	67-dio-past-eof-crash)

# guest_order: the tests asked for (all without TESTs), long ones first.
guest_order() {
	local t name all=()

	if [ ${#TESTS[@]} -gt 0 ]; then
		all=("${TESTS[@]}")
	else
		for t in "$TOP"/tests/kernel/[0-9]*.sh; do all+=("$(basename "$t" .sh)"); done
	fi
	for name in "${LONG_TESTS[@]}"; do
		[[ " ${all[*]} " == *" $name "* ]] && echo "$name"
	done
	for name in "${all[@]}"; do
		[[ " ${LONG_TESTS[*]} " == *" $name "* ]] || echo "$name"
	done
}

# run_guests OUT: boot the guests, wait for all of them, and merge what
# they wrote into OUT (one results file, every test's logs, done when
# every guest finished); guest N's console is $LOGS/console-N.log.
run_guests() {
	local out=$1 n g order queue=$RUN/queue pids=() all_done=1 uml_rc
	local -a names

	mapfile -t names < <(guest_order)
	# The kernel command line splits on spaces: the test names go as a
	# comma separated list.
	order=$(IFS=,; echo "${names[*]}")
	n=$GUESTS
	[ "${#names[@]}" -lt "$n" ] && n=${#names[@]}
	[ "$n" -ge 1 ] || n=1
	rm -rf "$queue" "$LOGS"/console*.log
	mkdir -p "$queue" "$out"
	# The patched e2fsprogs, when e2fsprogs/check.sh built them.
	e2=()
	e2bin=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}/bin
	[ -x "$e2bin/e2fsck" ] && e2=(EXTALIGN_E2FSPROGS="$e2bin")
	for ((g = 1; g <= n; g++)); do
		rm -rf "$out.$g"
		EXTALIGN_RUN=$RUN/guest-$g "$HERE/boot.sh" "$TOP/tests/kernel/init.sh" \
			"$out.$g" KTOOL="$RUN/ktool" EXTALIGN_TESTS="$order" \
			EXTALIGN_QUEUE="$queue" "${e2[@]}" >"$LOGS/console-$g.log" 2>&1 &
		pids+=($!)
	done
	for ((g = 1; g <= n; g++)); do
		wait "${pids[$((g - 1))]}"
		uml_rc=$?
		if [ -f "$out.$g/done" ]; then
			echo "  guest $g: $(wc -l <"$out.$g/results") tests"
		else
			all_done=0
			report FAIL "boot/guest-$g" "$(guest_unfinished "$LOGS/console-$g.log" "$uml_rc" "kernel/boot.sh's time limit")"
			show_log "$LOGS/console-$g.log" 40
		fi
		find "$out.$g" -maxdepth 1 -type f ! -name results ! -name "done" \
			-exec mv -t "$out" {} +
		cat "$out.$g/results" >>"$out/results" 2>/dev/null
		rm -rf "$out.$g"
	done
	sort -o "$out/results" "$out/results"
	[ "$all_done" = 1 ] && echo "done" >"$out/done"
	# The same kernel ran the boot-time KUnit suites in every guest.
	report_kunit_boot "$LOGS/console-1.log"
	[ "$all_done" = 1 ] && report PASS boot "$n guests"
	return 0
}
echo "== UML boot tests"
timer_start
if [ "$uml_ok" != 1 ]; then
	report FAIL boot "no kernel"
else
	out=$RUN/out
	rm -rf "$out"
	if ! gcc -O2 -Wall -Wextra -Werror -o "$RUN/ktool" "$TOP/tests/kernel/ktool.c" \
		>"$LOGS/ktool.log" 2>&1; then
		report FAIL tests/ktool
		show_log "$LOGS/ktool.log"
	fi
	run_guests "$out"
	report_guest_results "$out"
fi
timer_end boot

echo
echo "== kernel: $pass passed, $failed failed, $skipped skipped" \
	"in $(($(date +%s) - overall_start))s (logs in $LOGS)"
for f in "${failures[@]}"; do echo "   FAILED: $f"; done
[ "$failed" = 0 ]
