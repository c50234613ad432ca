# Shared by the tests/integration/daemon*.sh tests (sourced after lib.sh):
# run extalignd as a child with NOTIFY_SOCKET pointing at notify-listen,
# the way systemd would, and look at what it says.
NOTIFY_LISTEN=${NOTIFY_LISTEN:-$TOP/build/tests/tools/notify-listen}
[ -x "$EXTALIGND" ] || skip "extalignd is not built"
[ -x "$NOTIFY_LISTEN" ] || skip "notify-listen is not built"
need_cmd python3

DAEMON_PID= LISTEN_PID=
NLOG=$WORK/notify.log
DLOG=$WORK/daemon.log
RUNDIR=$WORK/run
CONF=$WORK/extalign.conf

# daemon_xfs [DIR...]: the XFS a test watches, mounted on $M, with the
# directories DIR... under it.
daemon_xfs() {
	local d

	need_cmd xfs_io
	M=$(mkfs_mount xfs 300)
	for d in "$@"; do mkdir -p "$M/$d"; done
}

# conf_idle_open [CPU_LOAD]: [daemon] keys under which the machine counts
# as idle at once (the load limit CPU_LOAD, default 1000), so that only
# what a test varies decides when jobs run.
conf_idle_open() {
	printf 'idle_io_pressure = 100\nidle_disk_util = 100\nidle_cpu_load = %s\n' "${1:-1000}"
	printf 'idle_time = 0\nidle_poll = 50ms\n'
}

# conf_rule NAME EXTSIZE [KEY=VALUE...]: a rule NAME for the directory
# $M/NAME, after a blank line.
conf_rule() {
	local kv

	printf '\n[rule %s]\ndirectory = %s\nextsize = %s\n' "$1" "$M/$1" "$2"
	shift 2
	for kv in "$@"; do printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"; done
}

# conf_db_ev: the two rules several tests watch, db (64k, inherited) and ev
# (128k, hinted file by file).
conf_db_ev() {
	conf_rule db 64k
	conf_rule ev 128k inherit=no
}

daemon_cleanup() {
	[ -n "$DAEMON_PID" ] && kill -KILL "$DAEMON_PID" 2>/dev/null
	[ -n "$LISTEN_PID" ] && kill -TERM "$LISTEN_PID" 2>/dev/null
	wait 2>/dev/null
	return 0
}
trap 'daemon_cleanup; cleanup' EXIT

# need_fanotify_queue: skip unless the test may size fanotify's event queue
# (start_daemon_queue); the system's size is put back at exit.
FAN_QUEUE=/proc/sys/fs/fanotify/max_queued_events
need_fanotify_queue() {
	[ -w "$FAN_QUEUE" ] || skip "cannot set $FAN_QUEUE"
	FAN_QUEUE_OLD=$(cat "$FAN_QUEUE")
	trap 'echo "$FAN_QUEUE_OLD" >"$FAN_QUEUE"; daemon_cleanup; cleanup' EXIT
}

# start_daemon_queue N CONF [EXTRA ARGS...]: start_daemon with a fanotify
# queue of N events.  The kernel reads the size when the daemon makes its
# group, so the system's size is back right after the start.
start_daemon_queue() {
	local n=$1
	shift
	echo "$n" >"$FAN_QUEUE"
	start_daemon "$@"
	echo "$FAN_QUEUE_OLD" >"$FAN_QUEUE"
}

# wait_until SECONDS CMD...: poll CMD every 50 ms until it succeeds.
wait_until() {
	local limit=$(($1 * 20)) i=0
	shift
	until "$@"; do
		i=$((i + 1))
		[ $i -lt $limit ] || return 1
		sleep 0.05
	done
}

# notify_count TEXT: how many notify lines contain exactly the assignment.
notify_count() { awk -v a="$1" '$3 == a' "$NLOG" 2>/dev/null | wc -l; }
notify_at_least() { [ "$(notify_count "$1")" -ge "$2" ]; }

# start_daemon CONF [EXTRA ARGS...]: start and wait for READY=1.
start_daemon() {
	local conf=$1
	shift
	# A restart in the same test: the previous listener goes first.
	if [ -n "$LISTEN_PID" ]; then
		kill -TERM "$LISTEN_PID" 2>/dev/null || true
		wait "$LISTEN_PID" 2>/dev/null || true
		rm -f "$WORK/notify.sock"
	fi
	: >"$NLOG"
	"$NOTIFY_LISTEN" "$WORK/notify.sock" "$NLOG" &
	LISTEN_PID=$!
	wait_until 5 test -S "$WORK/notify.sock" || fail "notify-listen did not start"
	NOTIFY_SOCKET=$WORK/notify.sock "$EXTALIGND" --foreground --config "$conf" \
		--state-dir "$RUNDIR" --persistent-dir "$WORK/lib" --log-target stderr -v "$@" 2>"$DLOG" &
	DAEMON_PID=$!
	if ! wait_until 10 notify_at_least READY=1 1; then
		cat "$DLOG" >&2
		fail "no READY=1 from extalignd"
	fi
	# The datagram came from the daemon itself.
	awk '$3 == "READY=1" { print $2; exit }' "$NLOG" | grep -qx "$DAEMON_PID" ||
		fail "READY=1 not sent by the daemon's pid"
}

# stop_daemon: SIGTERM must end it with status 0 within a second.
stop_daemon() {
	local t0 t1 rc=0
	t0=$(date +%s%N)
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID" || rc=$?
	t1=$(date +%s%N)
	DAEMON_PID=
	[ "$rc" = 0 ] || { cat "$DLOG" >&2; fail "extalignd exited $rc on SIGTERM"; }
	[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "SIGTERM took $(((t1 - t0) / 1000000)) ms"
	notify_at_least STOPPING=1 1 || fail "no STOPPING=1"
}

# counter NAME: the daemon's counter, from extalign status --json.
status_json() { "$EXTALIGN" status --json --state-dir "$RUNDIR"; }
counter() {
	status_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"][sys.argv[1]])' "$1"
}
counter_at_least() { [ "$(counter "$1")" -ge "$2" ]; }

# extsize_is FILE BYTES
extsize_is() { [ "$(xfs_extsize "$1")" = "$2" ]; }
expect_extsize() {
	wait_until 5 extsize_is "$1" "$2" ||
		{ cat "$DLOG" >&2; fail "$1: extsize $(xfs_extsize "$1"), expected $2"; }
}

# reload_and_wait: SIGHUP, then RELOADING=1 and one more READY=1.
reload_and_wait() {
	local ready
	ready=$(notify_count READY=1)
	kill -HUP "$DAEMON_PID"
	wait_until 10 notify_at_least READY=1 $((ready + 1)) || fail "no READY=1 after reload"
	notify_at_least RELOADING=1 1 || fail "no RELOADING=1"
}
