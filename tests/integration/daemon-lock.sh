#!/bin/bash
# One extalignd per state directory: a second one on the same directory is
# refused with a message naming the first, and the first runs on unharmed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

daemon_xfs db
conf_rule db 64k inherit=no >"$CONF"
start_daemon "$CONF"

rc=0
timeout 5 "$EXTALIGND" --foreground --config "$CONF" --state-dir "$RUNDIR" \
	--persistent-dir "$WORK/lib" --log-target stderr >"$WORK/second.out" 2>"$WORK/second.err" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/second.err"; fail "second extalignd exited $rc, expected 1"; }
grep -q "another extalignd (pid $DAEMON_PID) is using $RUNDIR" "$WORK/second.err" ||
	{ cat "$WORK/second.err"; fail "no clear message about the first daemon"; }

# The first one still owns the state file and still works.
touch "$M/db/after"
expect_extsize "$M/db/after" 65536
status_json | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["pid"] == int(sys.argv[1]), s' \
	"$DAEMON_PID" || fail "the state file is not the first daemon's"
stop_daemon

# Once it is gone the directory is free again.
start_daemon "$CONF"
stop_daemon
echo ok
