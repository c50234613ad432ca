# Step and test reporting shared by kernel/check.sh (UML) and
# kernel/qemu-test.sh (QEMU), so that both judge a guest run the same way.
# Source it; it keeps the counts in pass, failed, skipped and failures.
# report_guest_results reads TESTS (the tests asked for; empty: all) and TOP.

pass=0 failed=0 skipped=0
failures=()

report() { # STATUS NAME [DETAIL]
	case $1 in
	PASS) pass=$((pass + 1)); echo "PASS $2${3:+ ($3)}" ;;
	SKIP) skipped=$((skipped + 1)); echo "SKIP $2 (${3:-no reason given})" ;;
	*) failed=$((failed + 1)); failures+=("$2"); echo "FAIL $2${3:+ ($3)}" ;;
	esac
}

show_log() { # LOG [LINES]
	sed 's/^/    /' "$1" | tail -n "${2:-30}"
}

# guest_unfinished CONSOLE RC [LIMIT]: why a guest that wrote no "done"
# did not finish, from the exit status of the timeout(1) it ran under (124:
# its LIMIT, "Ns (what sets it)") and its console (a panic: the oops and
# RIP lines, or the panic line itself).
guest_unfinished() {
	if [ "$2" = 124 ]; then
		echo "the guest did not finish within ${3:-its time limit}"
	elif grep -aq 'Kernel panic - not syncing' "$1"; then
		echo "the guest kernel panicked: $(grep -a -m2 -E 'Oops|BUG|RIP:|Kernel panic' "$1" |
			awk '{ sub(/^\[[^]]*\] /, ""); printf "%s%s", (NR > 1 ? ", " : ""), $0 }')"
	else
		echo "the guest did not finish (exit $2)"
	fi
}

# report_root RC LOG: what debian_root (scripts/debian-root.bash) returned,
# as the root/mmdebstrap step: nothing on 0, SKIP on 77 (no Debian mirror
# reachable), FAIL with the log's tail otherwise.  Returns RC.
report_root() {
	case $1 in
	0) ;;
	77) report SKIP root/mmdebstrap "no Debian mirror reachable" ;;
	*) report FAIL root/mmdebstrap
	   show_log "$2" 20 ;;
	esac
	return "$1"
}

t_start=0
timer_start() { t_start=$(date +%s); }
timer_end() { echo "  time $1: $(($(date +%s) - t_start))s"; }

# report_kunit_boot CONSOLE [CONFIG]: the KUnit suites built into the
# kernel (CONFIG_EXT4_KUNIT_TESTS=y in the UML and the small QEMU
# configuration) ran at boot; their KTAP lines may follow a console
# timestamp (QEMU) or not (UML).  Suites are KTAP's top level, test cases
# the next.  A console with no suite at all fails, unless the kernel's
# CONFIG says it has none (Debian's configuration, deb.sh --server).
report_kunit_boot() {
	local ktap='^(\[ *[0-9.]+\] )?' suites cases

	if [ -n "${2:-}" ] && ! grep -qx 'CONFIG_EXT4_KUNIT_TESTS=y' "$2"; then
		report SKIP kunit/boot "the kernel has no ext4 KUnit suites built in (CONFIG_EXT4_KUNIT_TESTS)"
		return
	fi

	suites=$(grep -E "${ktap}ok [0-9]+ " "$1" | sed -E "s/${ktap}ok [0-9]+ //" | tr '\n' ' ')
	cases=$(grep -cE "${ktap}    ok [0-9]" "$1")
	if grep -qE "${ktap}not ok [0-9]" "$1"; then
		report FAIL kunit/boot "$(grep -cE "${ktap}not ok [0-9]" "$1") suites failed"
		grep -E "${ktap} *not ok" "$1" | sed 's/^/    /'
	elif [ -z "$suites" ]; then
		report FAIL kunit/boot "no KUnit suite ran at boot (CONFIG_EXT4_KUNIT_TESTS?)"
	else
		report PASS kunit/boot "$cases test cases in ${suites% } at boot"
	fi
}

# report_guest_results OUT: one line per test of tests/kernel/init.sh's
# OUT/results ("NAME RC SECONDS REASON"), the log and the kernel's
# complaints of each failure, and a FAIL for every test that did not run.
report_guest_results() {
	local out=$1 name rc secs reason t

	if [ -f "$out/results" ]; then
		while read -r name rc secs reason; do
			case $rc in
			0) report PASS "tests/$name" "${secs}s" ;;
			77) report SKIP "tests/$name" "$reason" ;;
			*) report FAIL "tests/$name" "exit $rc, ${secs}s"
			   show_log "$out/$name.log" 40
			   grep -E 'WARNING:|BUG:|Call Trace|EXT4-fs (error|warning)|[Cc]orrupt' -A3 \
				"$out/$name.dmesg" | head -30 | sed 's/^/    dmesg: /' ;;
			esac
		done <"$out/results"
	fi
	if [ ${#TESTS[@]} -eq 0 ]; then
		for t in "$TOP"/tests/kernel/[0-9]*.sh; do
			name=$(basename "$t" .sh)
			grep -q "^$name " "$out/results" 2>/dev/null ||
				report FAIL "tests/$name" "did not run"
		done
	fi
}
