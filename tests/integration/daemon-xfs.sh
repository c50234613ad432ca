#!/bin/bash
# extalignd on XFS: inheritance, the event path, late files, moves,
# attacks by an unprivileged user, reload good and bad, status, SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

daemon_xfs db ev out
conf_db_ev >"$CONF"

start_daemon "$CONF"
# READY=1 comes once the mark is placed, STATUS= "running" after the scan.
wait_until 5 grep -q 'STATUS=running: 2 rules, 1 filesystem (fanotify), [0-9]* hinted' "$NLOG" ||
	{ cat "$NLOG"; fail "STATUS= does not name rules, filesystems and counts"; }

# The start-up scan gave the rule directory inheritance; "inherit = no" none.
expect_extsize "$M/db" 65536
extsize_is "$M/ev" 0 || fail "inherit = no directory got a hint"

# Inheritance: the kernel hints new directories and files, no race.
mkdir -p "$M/db/a/b"
dd if=/dev/zero of="$M/db/a/b/written-at-once" bs=64k count=4 status=none
expect_extsize "$M/db/a/b" 65536
extsize_is "$M/db/a/b/written-at-once" 65536 || fail "inherited hint missing on a written file"

# The event path: created empty, hinted by the daemon.
touch "$M/ev/e1"
expect_extsize "$M/ev/e1" 131072
mkdir "$M/ev/sub"
touch "$M/ev/sub/g"
expect_extsize "$M/ev/sub/g" 131072
extsize_is "$M/ev/sub" 0 || fail "a directory under inherit = no got inheritance"

# Outside every rule: untouched.
touch "$M/out/o"
sleep 0.3
extsize_is "$M/out/o" 0 || fail "a file outside the rules was hinted"

# A file that arrives with data is late: listed, its data untouched.
dd if=/dev/urandom of="$M/out/data" bs=64k count=8 status=none
sum=$(md5sum <"$M/out/data")
mv "$M/out/data" "$M/ev/moved-with-data"
wait_until 5 counter_at_least files_late 1 || { cat "$DLOG"; fail "moved data file not late"; }
[ "$(md5sum <"$M/ev/moved-with-data")" = "$sum" ] || fail "late file's data changed"
extsize_is "$M/ev/moved-with-data" 0 || fail "late file got a hint"
status_json | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert any(l["path"].endswith("/ev/moved-with-data") and l["rule"] == "ev" for l in s["late"]), s["late"]
' || fail "late file not in the status"

# A directory tree renamed into a rule brings its empty files along.
mkdir -p "$M/out/tree/x"
touch "$M/out/tree/x/empty"
mv "$M/out/tree" "$M/ev/tree"
expect_extsize "$M/ev/tree/x/empty" 131072

# Written right after creation: each file ends up hinted or listed as late,
# never lost (a file can be both: hinted while its first data was delayed
# allocation, which the daemon cannot tell from data written before).
for i in $(seq 1 50); do echo data >"$M/ev/race.$i"; done
# Counted again (up to 40 times) until none is missing: a loaded machine
# delays the events and the state file (written at most twice a second).
count_race() {
	local i
	status_json >"$WORK/status.json"
	hinted=0 lost=0
	for i in $(seq 1 50); do
		if extsize_is "$M/ev/race.$i" 131072; then
			hinted=$((hinted + 1))
		elif ! grep -qF "\"$M/ev/race.$i\"" "$WORK/status.json"; then
			lost=$((lost + 1))
		fi
	done
	[ "$lost" = 0 ]
}
wait_until 2 count_race || true
echo "written at once: $hinted of 50 carry the hint, $lost neither hinted nor late"
[ "$lost" = 0 ] || fail "$lost files neither hinted nor listed as late"

# Attacks by an unprivileged user who owns a directory in the rule's tree.
U=nobody
chmod a+x "$WORK" "$M" "$M/ev" "$M/out"
mkdir "$M/ev/u" && chown "$U" "$M/ev/u"
touch "$M/out/victim" # root's, empty: a hint on it would be a change
setpriv --reuid="$U" --regid=nogroup --clear-groups ln -s "$M/out/victim" "$M/ev/u/link"
# Hard links to others' files need fs.protected_hardlinks=0; plant it as
# root then, the daemon sees the same thing either way.
setpriv --reuid="$U" --regid=nogroup --clear-groups ln "$M/out/victim" "$M/ev/u/hard" 2>/dev/null ||
	ln "$M/out/victim" "$M/ev/u/hard"
# Swap a new file for a symlink as fast as possible, many times.
setpriv --reuid="$U" --regid=nogroup --clear-groups bash -c '
	for i in $(seq 1 200); do
		: >"$1/u/s.$i"; ln -sf "$2" "$1/u/s.$i.l"; mv -f "$1/u/s.$i.l" "$1/u/s.$i"
	done' _ "$M/ev" "$M/out/victim"
sleep 0.5
extsize_is "$M/out/victim" 0 || fail "a file outside the rule was changed through a link"
grep -q "ev/u/link: a symlink, not followed" "$DLOG" || fail "planted symlink not reported"
grep -q "ev/u/hard: has 2 hard links, left alone" "$DLOG" || fail "hard link not reported"
kill -0 "$DAEMON_PID" || fail "daemon died"

# Reload with a broken configuration: every error logged, old rules kept.
cp "$CONF" "$CONF.good"
printf '[rule broken]\ndirectory = relative/path\nextsize = banana\n' >"$CONF"
reload_and_wait
grep -q 'MONOTONIC_USEC=' "$NLOG" || fail "RELOADING=1 without MONOTONIC_USEC="
grep -q 'STATUS=reload failed' "$NLOG" || fail "STATUS= does not say the reload failed"
grep -q "$CONF:2: " "$DLOG" || { cat "$DLOG"; fail "error on line 2 not logged"; }
grep -q "$CONF:3: " "$DLOG" || { cat "$DLOG"; fail "error on line 3 not logged"; }
touch "$M/ev/after-bad-reload"
expect_extsize "$M/ev/after-bad-reload" 131072
# The reload sequence: RELOADING=1 comes before the READY=1 that ends it.
awk '$3 == "RELOADING=1" { r = $1 } $3 == "READY=1" && r && $1 > r { ok = 1 } END { exit !ok }' "$NLOG" ||
	fail "READY=1 did not follow RELOADING=1"

# Reload with a good configuration: the new rule applies, the old ones go.
mkdir "$M/out/new"
cat >"$CONF" <<CONF
[rule new]
directory = $M/out/new
extsize = 256k
CONF
reload_and_wait
expect_extsize "$M/out/new" 262144
touch "$M/out/new/f" "$M/ev/after-good-reload"
expect_extsize "$M/out/new/f" 262144
sleep 0.3
extsize_is "$M/ev/after-good-reload" 0 || fail "a dropped rule still applies"
wait_until 5 counter_at_least reloads 1 || fail "reloads counter"
[ "$(counter reload_failures)" = 1 ] || fail "reload_failures counter"

# Status, for people and for scripts.
expect_exit 0 "$EXTALIGN" status --state-dir "$RUNDIR"
expect_in out "extalignd: running"
status_json | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["running"] is True and s["watcher"] == "fanotify" and s["rules"] == 1, s
assert s["marks"][0]["fstype"] == "xfs", s["marks"]
assert s["counters"]["files_hinted"] >= 3 and s["counters"]["files_inherited"] >= 1, s["counters"]
assert s["counters"]["skipped"] >= 2, s["counters"]
assert any("keeping the old rules" in e["message"] for e in s["errors"]), s["errors"]
' || fail "status --json"

stop_daemon
expect_exit 3 "$EXTALIGN" status --state-dir "$RUNDIR"
expect_in out "not running"
echo "ok"
