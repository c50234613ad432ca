#!/bin/bash
# An idle extalignd does not wake up: no periodic tick, a timer only for
# what is pending.  Counted, not timed: the context switches of all its
# threads (/proc/PID/task/*/status) over a few seconds with nothing to do,
# after the start, after a burst of new files (the state file is rewritten
# once, then nothing), and after the first realignment scan of a
# realign = yes rule (the next one is a day away).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_cmd xfs_io

IDLE=${IDLE_SECONDS:-3}

switches() {
	cat /proc/"$DAEMON_PID"/task/*/status |
		awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
# expect_asleep WHEN: no context switch over IDLE seconds.
expect_asleep() {
	local a b
	a=$(switches)
	sleep "$IDLE"
	b=$(switches)
	[ "$((b - a))" = 0 ] || fail "$1: extalignd woke $((b - a)) times in $IDLE s of nothing"
}
phase_running() { grep -qs '^phase	running' "$RUNDIR/state"; }

M=$(mkfs_mount xfs 300)
mkdir -p "$M/db" "$M/old"
CONF=$WORK/extalign.conf
cat >"$CONF" <<CONF
[rule db]
directory = $M/db
extsize = 64k
inherit = no
CONF
start_daemon "$CONF"
wait_until 10 phase_running || fail "extalignd did not reach the running phase"
sleep 1
expect_asleep "after the start"

for i in $(seq 50); do : >"$M/db/f$i"; done
expect_extsize "$M/db/f50" 65536
# The state file is rewritten within half a second of the last change.
sleep 1
expect_asleep "after a burst of new files"
[ "$(counter files_hinted)" = 50 ] || fail "the state file missed the burst: $(counter files_hinted)"
stop_daemon

# A realign = yes rule: idle samples every idle_poll until the first scan,
# then nothing until realign_scan_interval.
cat >"$CONF" <<CONF
[daemon]
idle_time = 0
idle_poll = 100ms
idle_cpu_load = 1000
idle_io_pressure = 100
idle_disk_util = 100

[rule old]
directory = $M/old
extsize = 64k
realign = yes
CONF
start_daemon "$CONF"
wait_until 10 grep -q "realignment scan: 0 candidates" "$DLOG" ||
	{ cat "$DLOG" >&2; fail "no realignment scan at the first idle moment"; }
sleep 1
expect_asleep "after the realignment scan"
stop_daemon
echo ok
