#!/bin/bash
# PID 1 of the UML kernel that kernel/check.sh boots: set up a minimal
# system on the host's root (hostfs), run every tests/kernel/*.sh test and
# write the results where the host reads them, then power off.
#
# The kernel hands unknown "NAME=value" command line parameters to init as
# environment: EXTALIGN_OUT (result directory on the host), EXTALIGN_TESTS
# (optional comma separated test names to run), KTOOL (tests/kernel/ktool
# binary).
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/guest.sh"
guest_setup

OUT=${EXTALIGN_OUT:?}
export KTOOL HERE
mkdir -p "$OUT"
: >"$OUT/results"

echo "extalign-init: kernel $(uname -r), tests from $HERE"
for t in "$HERE"/[0-9]*.sh; do
	name=$(basename "$t" .sh)
	if [ -n "${EXTALIGN_TESTS:-}" ] &&
	   ! [[ ",$EXTALIGN_TESTS," == *",$name,"* ]]; then
		continue
	fi
	log=$OUT/$name.log
	dmesg -C
	start=$(date +%s)
	timeout 600 bash "$t" >"$log" 2>&1
	rc=$?
	# Leave nothing mounted for the next test, and check every ext4 the
	# test used with a forced read-only fsck.
	bash "$HERE/lib.sh" cleanup >>"$log" 2>&1 || { [ $rc = 0 ] && rc=1; }
	dmesg >"$OUT/$name.dmesg"
	if grep -qE 'WARNING:|BUG:|Oops|Call Trace|EXT4-fs error|UBSAN|kernel panic' \
		"$OUT/$name.dmesg"; then
		echo "FAIL: kernel log has a warning or error" >>"$log"
		if [ $rc = 0 ] || [ $rc = 77 ]; then
			rc=1
		fi
	fi
	secs=$(($(date +%s) - start))
	reason=
	[ $rc = 77 ] && reason=$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//')
	echo "$name $rc $secs $reason" >>"$OUT/results"
	echo "extalign-init: $name rc=$rc (${secs}s)"
done
echo done >"$OUT/done"
guest_poweroff
