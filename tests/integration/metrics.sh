#!/bin/bash
# Fleet metrics: `extalign status --format=prometheus` and the daemon's
# metrics_file, checked with promtool and against the daemon's counters.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_cmd promtool
need_cmd jq

# A bad format is a usage error that names the value, before anything is read.
rc=0
"$EXTALIGN" status --format=bogus --state-dir "$WORK/nowhere" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 2 ] || fail "--format=bogus exited $rc, expected 2"
grep -q "unknown format 'bogus'" "$WORK/err" || fail "--format=bogus: no message: $(cat "$WORK/err")"
[ ! -s "$WORK/out" ] || fail "--format=bogus printed something on stdout"

daemon_xfs db ev
mkdir -p "$WORK/prom"
METRICS=$WORK/prom/extalign.prom
{
	printf '[daemon]\nmetrics_file = %s\n' "$METRICS"
	conf_db_ev
} >"$CONF"

start_daemon "$CONF"
wait_until 5 grep -q 'STATUS=running' "$NLOG" || fail "daemon not running"

# metric NAME{LABELS}: the value of one sample in a file of exposition text.
metric() { awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1"; }
prom() { "$EXTALIGN" status --format=prometheus --state-dir "$RUNDIR"; }

# Files hinted on events, by inheritance, and one late file with data.
for i in 1 2 3; do touch "$M/ev/e$i"; done
dd if=/dev/zero of="$M/db/inherited" bs=64k count=2 status=none
mkdir -p "$M/out"
dd if=/dev/urandom of="$M/out/data" bs=64k count=4 status=none
mv "$M/out/data" "$M/ev/late"
wait_until 5 counter_at_least files_hinted 3 || { cat "$DLOG"; fail "files not hinted"; }
wait_until 5 counter_at_least files_late 1 || { cat "$DLOG"; fail "late file not seen"; }
# The state is written at most every so often: wait for it to settle.
sleep 1.2

prom >"$WORK/status.prom" || fail "status --format=prometheus failed"
promtool check metrics <"$WORK/status.prom" || { cat "$WORK/status.prom"; fail "promtool rejects the status output"; }
status_json >"$WORK/status.json"
js() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"][sys.argv[2]])' "$WORK/status.json" "$1"; }
for pair in 'extalign_files_hinted_total{by="event"}=files_hinted' \
	'extalign_files_hinted_total{by="inheritance"}=files_inherited' \
	'extalign_late_files_total=files_late' 'extalign_realigned_files_total=jobs_done' \
	'extalign_failures_total{reason="unsupported"}=unsupported' \
	'extalign_event_overflows_total=overflows' 'extalign_rescans_total=rescans' \
	'extalign_reloads_total=reloads' 'extalign_reload_failures_total=reload_failures'; do
	name=${pair%=*} c=${pair##*=}
	v=$(metric "$WORK/status.prom" "$name") || fail "no $name in the output"
	[ "$v" = "$(js "$c")" ] || fail "$name is $v, the state says $(js "$c")"
done
v=$(metric "$WORK/status.prom" 'extalign_files_hinted_total{by="event"}')
[ "$v" -ge 3 ] || fail "files hinted by events: $v, expected at least 3"
v=$(metric "$WORK/status.prom" 'extalign_late_files_pending{rule="ev"}') || { cat "$WORK/status.prom" "$WORK/status.json"; fail "no pending late files for rule ev"; }
[ "$v" -ge 1 ] || fail "late files pending for ev: $v"
metric "$WORK/status.prom" 'extalign_daemon_running' | grep -qx 1 || fail "daemon not reported running"
grep -q "^extalign_watched_filesystem_info{path=\"$M/[a-z]*\",fstype=\"xfs\"" "$WORK/status.prom" ||
	fail "the watched filesystem is not labelled"
# The loop device under the filesystem has its atomic write unit range.
dev=$(basename "$(findmnt -no SOURCE "$M")")
metric "$WORK/status.prom" "extalign_atomic_write_unit_max_bytes{device=\"$dev\"}" >/dev/null ||
	fail "no atomic write unit for $dev"
grep -q '^# TYPE extalign_files_hinted_total counter$' "$WORK/status.prom" || fail "no TYPE line"

# The daemon's metrics file: there, valid, and the same counters.
wait_until 5 test -f "$METRICS" || fail "metrics_file not written"
promtool check metrics <"$METRICS" || { cat "$METRICS"; fail "promtool rejects the metrics file"; }
[ "$(stat -c %a "$METRICS")" = 644 ] || fail "metrics file mode $(stat -c %a "$METRICS")"
before=$(metric "$METRICS" 'extalign_files_hinted_total{by="event"}') || fail "no files hinted in the metrics file"
[ "$before" = "$(js files_hinted)" ] || fail "metrics file says $before hinted, the state $(js files_hinted)"
# No temporary file is left beside it for the collector to trip on.
[ "$(ls -A "$WORK/prom")" = extalign.prom ] || fail "stray files: $(ls -A "$WORK/prom")"

# More files: the metrics file follows.
for i in 4 5 6 7; do touch "$M/ev/e$i"; done
updated() { [ "$(metric "$METRICS" 'extalign_files_hinted_total{by="event"}')" -ge $((before + 4)) ]; }
wait_until 10 updated || { cat "$METRICS"; fail "metrics file not updated after more files"; }
promtool check metrics <"$METRICS" || fail "promtool rejects the updated metrics file"

# A refused reload shows as such; the file is replaced, not followed.
metric "$METRICS" extalign_last_reload_refused >/dev/null && fail "last reload reported before any"
echo "[rule broken" >>"$CONF"
kill -HUP "$DAEMON_PID"
wait_until 5 grep -qx 'extalign_last_reload_refused 1' "$METRICS" ||
	{ cat "$METRICS"; fail "refused reload not in the metrics"; }
metric "$METRICS" extalign_reload_failures_total | grep -qx 1 || fail "reload failure not counted"
status_json | jq -e '.last_reload == "refused"' >/dev/null || fail "status --json: last_reload"
"$EXTALIGN" status --state-dir "$RUNDIR" | grep -q 'the last one refused' || fail "status: refused reload not said"

metric "$METRICS" extalign_daemon_running | grep -qx 1 || fail "metrics file: daemon not running"
stop_daemon
# What a collector reads after a stop says the daemon is gone.
metric "$METRICS" extalign_daemon_running | grep -qx 0 || fail "metrics file still says running after a stop"
promtool check metrics <"$METRICS" || fail "promtool rejects the last metrics file"
echo "PASS"
