#!/bin/bash
# The late list survives a restart: kept atomically under the persistent
# directory, loaded at start, each entry checked again (a file replaced by a
# symlink meanwhile is not taken back).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

daemon_xfs rj out
closed=$(date -d '+2 hours' +%H:00)-$(date -d '+3 hours' +%H:00)
{
	printf '[daemon]\nrealign_windows = %s\n' "$closed"
	conf_rule rj 64k inherit=no realign=yes
} >"$CONF"
start_daemon "$CONF"
for f in keep swapped; do
	dd if=/dev/urandom of="$M/out/$f" bs=4k count=10 status=none
	mv "$M/out/$f" "$M/rj/$f"
done
wait_until 5 counter_at_least files_late 2 || { cat "$DLOG"; fail "not late"; }
wait_until 5 test -s "$WORK/lib/late" || fail "no saved late list"
stop_daemon

# Between the two daemons a user swaps one file for a symlink to root's.
touch "$M/out/victim"
rm "$M/rj/swapped"
ln -s "$M/out/victim" "$M/rj/swapped"
start_daemon "$CONF"
status_json | python3 -c '
import json, sys
late = {l["path"].rsplit("/", 1)[1]: l["queue"] for l in json.load(sys.stdin)["late"]}
assert late.get("keep") == "queued", late
assert "swapped" not in late, late
' || { status_json; cat "$DLOG"; fail "late list not restored as it should be"; }
grep -q "1 late files from before the restart listed again" "$DLOG" || fail "restore not logged"
stop_daemon

# A persistent directory others may write is not trusted: its late list
# would choose the files root realigns.  Nothing is loaded or kept there.
chmod 0777 "$WORK/lib"
saved=$(md5sum <"$WORK/lib/late")
start_daemon "$CONF"
grep -q "lib: the late list is not kept here.*writable by no one else" "$DLOG" ||
	{ cat "$DLOG"; fail "no warning about a world-writable persistent directory"; }
status_json | python3 -c '
import json, sys
assert not json.load(sys.stdin)["late"], "late list loaded from an untrusted directory"
' || { status_json; cat "$DLOG"; fail "late list restored from an untrusted directory"; }
stop_daemon
[ "$(md5sum <"$WORK/lib/late")" = "$saved" ] || fail "the late list in the untrusted directory was rewritten"
chmod 0700 "$WORK/lib"
echo ok
