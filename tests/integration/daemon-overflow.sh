#!/bin/bash
# A create storm overflows a small fanotify queue while the daemon is
# stopped: after FAN_Q_OVERFLOW it rescans, and every file ends up hinted or
# listed as late; none is lost silently.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

need_fanotify_queue

daemon_xfs ev
# inherit = no: the kernel does not help, every file needs the daemon.
conf_rule ev 128k inherit=no >"$CONF"

start_daemon_queue 64 "$CONF"

kill -STOP "$DAEMON_PID"
for i in $(seq 1 500); do : >"$M/ev/f.$i"; done
for i in $(seq 1 20); do echo data >"$M/ev/d.$i"; done
kill -CONT "$DAEMON_PID"

wait_until 10 counter_at_least overflows 1 || { cat "$DLOG"; fail "no overflow seen"; }
wait_until 10 counter_at_least rescans 1 || fail "no rescan after the overflow"
missing=0
for i in $(seq 1 500); do
	extsize_is "$M/ev/f.$i" 131072 || missing=$((missing + 1))
done
[ "$missing" = 0 ] || { tail -20 "$DLOG"; fail "$missing empty files left unhinted after the rescan"; }
# The written ones: born after the daemon started, so the rescan lists them.
wait_until 5 counter_at_least files_late 20 || fail "written files not listed as late ($(counter files_late))"
echo "overflows $(counter overflows), rescans $(counter rescans), late $(counter files_late)"
stop_daemon
echo ok
