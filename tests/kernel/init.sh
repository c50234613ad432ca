#!/bin/bash
# PID 1 of the UML kernel that kernel/check.sh boots: set up a minimal
# system on the host's root (hostfs), run every tests/kernel/*.sh test and
# write the results where the host reads them, then power off.
#
# The kernel hands unknown "NAME=value" command line parameters to init as
# environment: EXTALIGN_OUT (result directory on the host), EXTALIGN_TESTS
# (optional comma separated test names to run, in that order), KTOOL
# (tests/kernel/ktool binary) and EXTALIGN_QUEUE (optional directory on
# the host shared by guests that run at once: a guest runs a test only
# if it is the one to create QUEUE/NAME, so each test runs once).
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/guest.sh"
guest_setup

OUT=${EXTALIGN_OUT:?}
export KTOOL HERE
mkdir -p "$OUT"
: >"$OUT/results"

# What fails a test when the kernel logs it; lib.sh's allow_klog lets a
# test name the lines it provokes on purpose (kept in KLOG_ALLOW).
KLOG_BAD='WARNING:|BUG:|Oops|Call Trace|EXT4-fs error|EXT4-fs warning|UBSAN|kernel panic|[Cc]orrupt|Structure needs cleaning'
KLOG_ALLOW=/run/extalign-test/klog-allow
rm -f "$KLOG_ALLOW"

echo "extalign-init: kernel $(uname -r), tests from $HERE"
# The tests to run, in order: those named, or all of them.
names=()
if [ -n "${EXTALIGN_TESTS:-}" ]; then
	IFS=, read -ra names <<<"$EXTALIGN_TESTS"
else
	for t in "$HERE"/[0-9]*.sh; do names+=("$(basename "$t" .sh)"); done
fi
for name in "${names[@]}"; do
	t=$HERE/$name.sh
	if [ -n "${EXTALIGN_QUEUE:-}" ] && ! mkdir "$EXTALIGN_QUEUE/$name" 2>/dev/null; then
		continue
	fi
	if [ ! -f "$t" ]; then
		echo "no such test: $t" >"$OUT/$name.log"
		echo "$name 2 0" >>"$OUT/results"
		continue
	fi
	log=$OUT/$name.log
	dmesg -C
	start=$(date +%s)
	# 600 s a test, unless its header says "# timeout: Ns".
	limit=$(sed -n 's/^# timeout: \([0-9]\{1,\}\)s$/\1/p' "$t" | head -n 1)
	timeout "${limit:-600}" bash "$t" >"$log" 2>&1
	rc=$?
	# Leave nothing mounted for the next test, and check every ext4 the
	# test used with a forced read-only fsck.
	bash "$HERE/lib.sh" cleanup >>"$log" 2>&1 || { [ $rc = 0 ] && rc=1; }
	dmesg >"$OUT/$name.dmesg"
	# Warnings the test provoked on purpose (lib.sh allow_klog) are left
	# out; any other warning, error or corruption report fails it.
	if [ -s "$KLOG_ALLOW" ]; then
		grep -vE -f "$KLOG_ALLOW" "$OUT/$name.dmesg"
	else
		cat "$OUT/$name.dmesg"
	fi | grep -E "$KLOG_BAD" >"$OUT/$name.klog"
	if [ -s "$OUT/$name.klog" ]; then
		{
			echo "FAIL: kernel log has a warning or error:"
			head -n 20 "$OUT/$name.klog"
		} >>"$log"
		if [ $rc = 0 ] || [ $rc = 77 ]; then
			rc=1
		fi
	fi
	rm -f "$KLOG_ALLOW"
	secs=$(($(date +%s) - start))
	reason=
	[ $rc = 77 ] && reason=$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//')
	echo "$name $rc $secs $reason" >>"$OUT/results"
	echo "extalign-init: $name rc=$rc (${secs}s)"
done
echo "done" >"$OUT/done"
guest_poweroff
