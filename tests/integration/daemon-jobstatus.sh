#!/bin/bash
# extalign status says why a queued realignment waits (outside the window,
# load over its limit, another job on the disk) and how far a running one
# is.  One job per disk is also what keeps two copies from counting on the
# same free space: a second late file on the filesystem waits.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

daemon_xfs rj out
# write_conf WINDOW CPU_LOAD BWLIMIT
write_conf() {
	{
		echo '[daemon]'
		conf_idle_open "$2"
		printf 'realign_windows = %s\nrealign_bwlimit = %s\n' "$1" "$3"
		conf_rule rj 64k inherit=no realign=yes
	} >"$CONF"
}
late_field() { # FIELD [NAME]: of the late entry for rj/NAME (default data)
	status_json | python3 -c '
import json, sys
print(([l.get(sys.argv[1], "") for l in json.load(sys.stdin)["late"] if l["path"].endswith("/rj/" + sys.argv[2])] + [""])[0])' "$1" "${2:-data}"
}
reason_has() { late_field reason | grep -q "$1"; }

closed=$(date -d '+2 hours' +%H:00)-$(date -d '+3 hours' +%H:00)
write_conf "$closed" 1000 0
start_daemon "$CONF"
dd if=/dev/urandom of="$M/out/data" bs=1M count=6 status=none
sum=$(md5sum <"$M/out/data")
mv "$M/out/data" "$M/rj/data"
dd if=/dev/urandom of="$M/out/data2" bs=1M count=2 status=none
sum2=$(md5sum <"$M/out/data2")
mv "$M/out/data2" "$M/rj/data2"
wait_until 5 reason_has "outside realign_windows" ||
	{ status_json; fail "no reason for a job outside the window: '$(late_field reason)'"; }
expect_exit 0 "$EXTALIGN" status --state-dir "$RUNDIR"
expect_in out "outside realign_windows"

# Load over its limit: any load above 0 is over a limit of 0.
if python3 -c 'import os, sys; sys.exit(os.getloadavg()[0] == 0)'; then
	write_conf "00:00-23:59" 0 0
	reload_and_wait
	wait_until 5 reason_has "load [0-9.]* per CPU over idle_cpu_load 0.00" ||
		{ status_json; fail "no load reason: '$(late_field reason)'"; }
	[ "$(late_field queue)" = queued ] || fail "a job ran with the load over its limit"
else
	echo "load average 0: the load reason not checked"
fi

# Running: 6 MiB read, written and read back at 256 KiB/s take half a
# minute.  At 1 MiB/s a loaded machine (four UML guests beside the suite)
# once took long enough between the JSON and the text snapshot that both
# jobs were done by the second.
write_conf "00:00-23:59" 1000 256k
reload_and_wait
running_with_progress() {
	[ "$(late_field queue)" = running ] && [ "$(late_field total_bytes)" -gt 0 ] &&
		[ "$(late_field done_bytes)" -gt 0 ]
}
wait_until 20 running_with_progress ||
	{ status_json; cat "$DLOG"; fail "no progress for a running job"; }
d1=$(late_field done_bytes)
expect_exit 0 "$EXTALIGN" status --state-dir "$RUNDIR"
grep -Eq '^ +(copying|verifying) [0-9]+%, [0-9]+ of [0-9]+ bytes$' "$WORK/out" ||
	{ cat "$WORK/out"; fail "status text shows no progress"; }
# While one job runs, the other late file of the filesystem waits for it
# (judged on one snapshot: the first job may end any moment).
status_json >"$WORK/snap.json"
python3 - "$WORK/snap.json" <<'PY' || { cat "$WORK/snap.json"; fail "two jobs at once on one filesystem"; }
import json, re, sys
late = {l["path"].rsplit("/", 1)[1]: l for l in json.load(open(sys.argv[1]))["late"]}
if late["data"]["queue"] == "running":
    assert late["data2"]["queue"] == "queued", late["data2"]
    assert re.search(r"another job on disk \d+:\d+", late["data2"]["reason"]), late["data2"]
else:
    print("the first job ended before the snapshot: the second file's wait not seen")
PY
progressed() { [ "$(late_field queue)" = "done" ] || [ "$(late_field done_bytes)" != "$d1" ]; }
wait_until 10 progressed || fail "progress stands still at $d1"
job_done() { [ "$(late_field queue)" = "done" ]; }
wait_until 90 job_done || { status_json; fail "job not done"; }
[ "$(md5sum <"$M/rj/data")" = "$sum" ] || fail "realignment changed the data"
job2_done() { [ "$(late_field queue data2)" = "done" ]; }
wait_until 60 job2_done || { status_json; fail "the second job did not run after the first"; }
[ "$(md5sum <"$M/rj/data2")" = "$sum2" ] || fail "realignment changed the data of data2"
stop_daemon
echo ok
