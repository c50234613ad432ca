#!/bin/bash
# Fleet metrics: `extalign status --format=prometheus` and the daemon's
# metrics_file, checked with promtool and against the daemon's counters.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_cmd xfs_io
need_cmd promtool
need_cmd jq

# A bad format is a usage error that names the value, before anything is read.
rc=0
"$EXTALIGN" status --format=bogus --state-dir "$WORK/nowhere" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 2 ] || fail "--format=bogus exited $rc, expected 2"
grep -q "unknown format 'bogus'" "$WORK/err" || fail "--format=bogus: no message: $(cat "$WORK/err")"
[ ! -s "$WORK/out" ] || fail "--format=bogus printed something on stdout"

need_fanotify_queue

M=$(mkfs_mount xfs 300)
E=$(mkfs_mount ext4 64)
mkdir -p "$M/db" "$M/ev" "$M/rl" "$M/storm" "$M/out" "$E/e" "$WORK/prom"
# Does this kernel's ext4 keep a hint?  Debian's drops it: "unsupported".
touch "$E/probe"
ext4_keeps=0
"$EXTALIGN" set --extsize 64k "$E/probe" >/dev/null 2>&1 && ext4_keeps=1
rm -f "$E/probe"
METRICS=$WORK/prom/extalign.prom
CONF=$WORK/extalign.conf
# Idle limits wide open: jobs run at once.  Three late files fill the list;
# 512k is the largest file a job may rewrite.
cat >"$CONF" <<CONF
[daemon]
metrics_file = $METRICS
idle_io_pressure = 100
idle_disk_util = 100
idle_cpu_load = 1000
idle_time = 0
idle_poll = 50ms
realign_queue_max = 3
realign_max_file_size = 512k

[rule db]
directory = $M/db
extsize = 64k

[rule ev]
directory = $M/ev
extsize = 128k
inherit = no

[rule rl]
directory = $M/rl
extsize = 64k
inherit = no
realign = yes

[rule storm]
directory = $M/storm
extsize = 64k
inherit = no

[rule e]
directory = $E/e
extsize = 64k
inherit = no
CONF

# A small fanotify queue: a storm later overflows it.
t0=$(date +%s)
start_daemon_queue 64 "$CONF"
wait_until 5 grep -q 'STATUS=running' "$NLOG" || fail "daemon not running"

# metric FILE NAME{LABELS}: the value of one sample in a file of exposition text.
metric() { awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1"; }
prom() { "$EXTALIGN" status --format=prometheus --state-dir "$RUNDIR" "$@"; }
# is NAME{LABELS} VALUE: the sample in the status output has that value.
is() {
	local v
	v=$(metric "$WORK/status.prom" "$1") || { cat "$WORK/status.prom"; fail "no $1"; }
	[ "$v" = "$2" ] || { cat "$WORK/status.prom"; fail "$1 is $v, expected $2"; }
}
# The labels of a rule: its name and the mount point of its filesystem.
mx=$(findmnt -no TARGET "$M") me=$(findmnt -no TARGET "$E")
lab() { echo "rule=\"$1\",mountpoint=\"$2\""; }
snap() {
	sleep 0.6 # the state is written at most twice a second
	prom >"$WORK/status.prom" || fail "status --format=prometheus failed"
	promtool check metrics <"$WORK/status.prom" ||
		{ cat "$WORK/status.prom"; fail "promtool rejects the status output"; }
}

# Before anything happened: every rule has its zero samples already, the
# directory db got its inheritance from the start-up scan.
snap
is "extalign_files_hinted_total{$(lab ev "$mx"),by=\"event\"}" 0
is "extalign_failures_total{$(lab e "$me"),reason=\"unsupported\"}" 0
is "extalign_directories_hinted_total{$(lab db "$mx"),by=\"event\"}" 1
is extalign_event_overflows_total 0
is extalign_rescans_total 0
is extalign_reloads_total 0
is extalign_rules 5
is extalign_daemon_running 1
started=$(metric "$WORK/status.prom" extalign_daemon_start_time_seconds)
[ "${started%.*}" -ge "$t0" ] && [ "${started%.*}" -le "$(date +%s)" ] ||
	fail "start time $started is not when the daemon started ($t0)"
updated=$(metric "$WORK/status.prom" extalign_state_updated_time_seconds)
events0=$(metric "$WORK/status.prom" extalign_events_total)

# Hinted on events, by inheritance (a file and a directory), a late file
# with data, a symlink left alone, a hint the ext4 kernel drops.
for i in 1 2 3; do touch "$M/ev/e$i"; done
dd if=/dev/zero of="$M/db/inherited" bs=64k count=2 status=none
mkdir "$M/db/sub"
dd if=/dev/urandom of="$M/out/data" bs=64k count=4 status=none
mv "$M/out/data" "$M/ev/late"
ln -s /etc/passwd "$M/ev/link"
touch "$E/e/f"
wait_until 5 counter_at_least files_hinted 3 || { cat "$DLOG"; fail "files not hinted"; }
wait_until 5 counter_at_least files_late 1 || { cat "$DLOG"; fail "late file not seen"; }
wait_until 5 counter_at_least skipped 1 || { cat "$DLOG"; fail "symlink not skipped"; }
[ "$ext4_keeps" = 1 ] || wait_until 5 counter_at_least unsupported 1 || fail "ext4 not unsupported"
snap
is "extalign_files_hinted_total{$(lab ev "$mx"),by=\"event\"}" 3
is "extalign_files_hinted_total{$(lab db "$mx"),by=\"inheritance\"}" 1
is "extalign_directories_hinted_total{$(lab db "$mx"),by=\"inheritance\"}" 1
is "extalign_late_files_total{$(lab ev "$mx")}" 1
is "extalign_late_files_pending{$(lab ev "$mx")}" 1
is "extalign_skipped_total{$(lab ev "$mx")}" 1
[ "$ext4_keeps" = 1 ] || is "extalign_failures_total{$(lab e "$me"),reason=\"unsupported\"}" 1
# Eight names made in the rules' trees: at least as many events; a newer state.
v=$(metric "$WORK/status.prom" extalign_events_total)
[ "$v" -ge $((events0 + 8)) ] || fail "events went from $events0 to $v for 8 new names"
v=$(metric "$WORK/status.prom" extalign_state_updated_time_seconds)
awk -v a="$v" -v b="$updated" 'BEGIN { exit !(a > b) }' || fail "state time did not advance ($updated, $v)"
# The sums agree with the state's global counters.
status_json >"$WORK/status.json"
js() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"][sys.argv[2]])' "$WORK/status.json" "$1"; }
sum() { awk -v n="$1" -v l="$2" 'index($1, n "{") == 1 && index($1, l) { s += $2 } END { print s + 0 }' "$WORK/status.prom"; }
[ "$(sum extalign_files_hinted_total 'by="event"')" = "$(js files_hinted)" ] || fail "hinted sum differs from the state"
[ "$(sum extalign_late_files_total '')" = "$(js files_late)" ] || fail "late sum differs from the state"

# Realignment: a 256 KiB file is rewritten, a 1 MiB one is over
# realign_max_file_size and refused.
dd if=/dev/urandom of="$M/out/small" bs=64k count=4 status=none
dd if=/dev/urandom of="$M/out/big" bs=64k count=16 status=none
mv "$M/out/small" "$M/rl/small"
mv "$M/out/big" "$M/rl/big"
wait_until 15 counter_at_least jobs_done 1 || { cat "$DLOG"; fail "no realignment job finished"; }
wait_until 15 counter_at_least jobs_failed 1 || { cat "$DLOG"; fail "the big file was not refused"; }
# The list is full now (3 entries): a fourth late file is counted, not listed.
# Made after the job: XFS tends to give it the inode number the job freed,
# which the late list knew; a new file all the same.
dd if=/dev/urandom of="$M/out/late2" bs=4k count=1 status=none
mv "$M/out/late2" "$M/ev/late2"
wait_until 5 counter_at_least files_late 4 || { cat "$DLOG"; fail "fourth late file not seen"; }
snap
is "extalign_realigned_files_total{$(lab rl "$mx")}" 1
is "extalign_realigned_bytes_total{$(lab rl "$mx")}" 262144
# The job's rename of its copy over the name is no file that inherited.
is "extalign_files_hinted_total{$(lab rl "$mx"),by=\"inheritance\"}" 0
is "extalign_failures_total{$(lab rl "$mx"),reason=\"realign_skipped\"}" 1
is "extalign_late_files_pending{$(lab rl "$mx")}" 0
is "extalign_late_files_total{$(lab ev "$mx")}" 2
is "extalign_late_files_pending{$(lab ev "$mx")}" 1
is "extalign_failures_total{$(lab ev "$mx"),reason=\"late_list\"}" 1
status_json | jq -e '.counters.bytes_realigned == 262144' >/dev/null || fail "status --json: bytes_realigned"
status_json | jq -e --arg m "$mx" '.by_rule[] | select(.rule == "rl" and .mountpoint == $m) | .realigned_bytes == 262144' >/dev/null ||
	fail "status --json: by_rule"

is extalign_daemon_running 1
grep -q "^extalign_watched_filesystem_info{path=\"$M/[a-z]*\",fstype=\"xfs\"" "$WORK/status.prom" ||
	fail "the watched filesystem is not labelled"
# The loop device under the filesystem: no atomic writes on this host.
dev=$(basename "$(findmnt -no SOURCE "$M")")
is "extalign_atomic_write_unit_max_bytes{device=\"$dev\"}" 0
is "extalign_atomic_write_unit_min_bytes{device=\"$dev\"}" 0
grep -q '^# TYPE extalign_files_hinted_total counter$' "$WORK/status.prom" || fail "no TYPE line"
# This host has no block device with atomic writes: a sysfs fixture (the
# NVMe namespace of tests/data/sysroot, real limits) stands for the loop
# device under XFS, by its device number.
cp -r "$TOP/tests/data/sysroot/6.18" "$WORK/sysroot"
rm -rf "$WORK/sysroot/sys/block/loop0"
findmnt -no MAJ:MIN "$M" | tr -d ' ' >"$WORK/sysroot/sys/block/nvme1n1/dev"
prom --sysroot "$WORK/sysroot" >"$WORK/status.prom" || fail "status --sysroot failed"
is 'extalign_atomic_write_unit_min_bytes{device="nvme1n1"}' 4096
is 'extalign_atomic_write_unit_max_bytes{device="nvme1n1"}' 65536

# A create storm while the daemon is stopped overflows its queue: counted,
# and the trees walked again.
kill -STOP "$DAEMON_PID"
for i in $(seq 1 300); do : >"$M/storm/f.$i"; done
kill -CONT "$DAEMON_PID"
wait_until 10 counter_at_least rescans 1 || { cat "$DLOG"; fail "no rescan after the storm"; }
snap
v=$(metric "$WORK/status.prom" extalign_event_overflows_total)
[ "$v" -ge 1 ] || fail "overflows: $v"
v=$(metric "$WORK/status.prom" extalign_rescans_total)
[ "$v" -ge 1 ] || fail "rescans: $v"
# The queue the daemon found when it went on was read ahead at once.
v=$(metric "$WORK/status.prom" extalign_event_backlog_peak_bytes)
[ "$v" -gt 0 ] || fail "backlog peak: $v"
is "extalign_files_hinted_total{$(lab storm "$mx"),by=\"event\"}" 300

# The daemon's metrics file: there, valid, and the same counters.
wait_until 5 test -f "$METRICS" || fail "metrics_file not written"
promtool check metrics <"$METRICS" || { cat "$METRICS"; fail "promtool rejects the metrics file"; }
[ "$(stat -c %a "$METRICS")" = 644 ] || fail "metrics file mode $(stat -c %a "$METRICS")"
before=$(metric "$METRICS" "extalign_files_hinted_total{$(lab ev "$mx"),by=\"event\"}") ||
	fail "no files hinted in the metrics file"
[ "$before" = 3 ] || fail "metrics file says $before hinted in ev, expected 3"
# No temporary file is left beside it for the collector to trip on.
[ "$(ls -A "$WORK/prom")" = extalign.prom ] || fail "stray files: $(ls -A "$WORK/prom")"

# More files: the metrics file follows.
for i in 4 5 6 7; do touch "$M/ev/e$i"; done
updated() { [ "$(metric "$METRICS" "extalign_files_hinted_total{$(lab ev "$mx"),by=\"event\"}")" = $((before + 4)) ]; }
wait_until 10 updated || { cat "$METRICS"; fail "metrics file not updated after more files"; }
promtool check metrics <"$METRICS" || fail "promtool rejects the updated metrics file"

# A reload, then a refused one: both counted, the last one said refused.
metric "$METRICS" extalign_last_reload_refused >/dev/null && fail "last reload reported before any"
reload_and_wait
wait_until 5 grep -qx 'extalign_last_reload_refused 0' "$METRICS" || { cat "$METRICS"; fail "reload not in the metrics"; }
metric "$METRICS" extalign_reloads_total | grep -qx 1 || fail "reload not counted"
echo "[rule broken" >>"$CONF"
kill -HUP "$DAEMON_PID"
wait_until 5 grep -qx 'extalign_last_reload_refused 1' "$METRICS" ||
	{ cat "$METRICS"; fail "refused reload not in the metrics"; }
metric "$METRICS" extalign_reload_failures_total | grep -qx 1 || fail "reload failure not counted"
# The daemon writes the metrics file first, then the state file that
# status reads: wait for that one too.
refused_in_state() { status_json | jq -e '.last_reload == "refused"' >/dev/null; }
wait_until 5 refused_in_state || fail "status --json: last_reload"
"$EXTALIGN" status --state-dir "$RUNDIR" | grep -q 'the last one refused' || fail "status: refused reload not said"

metric "$METRICS" extalign_daemon_running | grep -qx 1 || fail "metrics file: daemon not running"
stop_daemon
# What a collector reads after a stop says the daemon is gone.
metric "$METRICS" extalign_daemon_running | grep -qx 0 || fail "metrics file still says running after a stop"
promtool check metrics <"$METRICS" || fail "promtool rejects the last metrics file"
echo "PASS"
