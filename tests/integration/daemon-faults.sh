#!/bin/bash
# extalignd under faults: a SIGHUP storm while files are created, the
# configuration swapped for a FIFO, a directory or a symlink, and a rule
# directory renamed or replaced by a symlink while watched.  Nothing outside
# the rules is touched, the daemon does not crash, a bad configuration keeps
# the old rules.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

daemon_xfs db out
conf_rule db 64k inherit=no >"$CONF"
cp "$CONF" "$WORK/good.conf"
start_daemon "$CONF"
alive() { kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$DLOG" >&2; fail "extalignd died: $*"; }; }
still_hints() { # NAME
	touch "$M/db/$1"
	expect_extsize "$M/db/$1" 65536
}

# 1000 reloads while 500 files are created: every file hinted, none outside.
( for i in $(seq 1 500); do : >"$M/db/storm.$i"; : >"$M/out/storm.$i"; done ) &
writer=$!
for i in $(seq 1 1000); do kill -HUP "$DAEMON_PID"; done
wait "$writer"
alive "SIGHUP storm"
wait_until 20 counter_at_least reloads 1 || fail "no reload counted"
sleep 1
missed=0 outside=0
for i in $(seq 1 500); do
	extsize_is "$M/db/storm.$i" 65536 || missed=$((missed + 1))
	extsize_is "$M/out/storm.$i" 0 || outside=$((outside + 1))
done
echo "storm: $(counter reloads) reloads done, $missed of 500 files missed, $outside outside touched"
[ "$outside" = 0 ] || fail "$outside files outside the rule were hinted"
[ "$missed" = 0 ] || fail "$missed files missed during the SIGHUP storm"
still_hints after-storm

# The configuration swapped for a FIFO (nobody writes), a directory, a symlink.
refused_before=$(counter reload_failures)
bad_config() { # WHAT
	reload_and_wait
	alive "configuration as $1"
	still_hints "after-$1"
}
# A FIFO nobody writes to: opening it for reading used to hang the reload.
rm "$CONF"; mkfifo "$CONF"
bad_config fifo
grep -q "$CONF: not a regular file" "$DLOG" || { cat "$DLOG"; fail "FIFO not named as such"; }
# status shows why the reload was refused, not only that it was.
expect_exit 0 "$EXTALIGN" status --state-dir "$RUNDIR"
expect_in out "$CONF: not a regular file"
rm "$CONF"; mkdir "$CONF"
bad_config dir
# A symlink is the admin's choice (configuration management): followed.
rmdir "$CONF"; ln -s "$WORK/good.conf" "$CONF"
bad_config symlink
[ "$(counter reload_failures)" -ge $((refused_before + 2)) ] ||
	{ cat "$DLOG"; fail "configurations not refused ($(counter reload_failures))"; }
rm "$CONF"; cp "$WORK/good.conf" "$CONF"
reload_and_wait

# The rule directory renamed away, then replaced by a symlink to outside,
# in a directory anyone may write to: a link nobody but root could have
# placed is resolved at load time (extalign.conf(5)); this one could be
# anyone's, so it must never be followed.
chmod 0777 "$M"
mv "$M/db" "$M/db.old"
touch "$M/db.old/after-rename"
mkdir "$M/target"
ln -s "$M/target" "$M/db"
touch "$M/target/through-link" "$M/db/via-link"
sleep 0.5
alive "rule directory swapped"
extsize_is "$M/db.old/after-rename" 0 || fail "a file in the renamed-away directory was hinted"
extsize_is "$M/target/through-link" 0 || fail "a file reached through the symlink was hinted"
extsize_is "$M/target/via-link" 0 || fail "a file created through the symlink was hinted"
reload_and_wait
alive "reload with the rule directory a symlink"
touch "$M/target/after-reload"
sleep 0.5
extsize_is "$M/target/after-reload" 0 || fail "the symlinked rule directory was followed after reload"
# The same link where only root can write: the admin's, resolved at reload.
chmod 0755 "$M"
reload_and_wait
alive "reload with a root-only symlinked rule directory"
touch "$M/target/root-link"
expect_extsize "$M/target/root-link" 65536
# Back to a real directory: hints again.
rm "$M/db"; mkdir "$M/db"
reload_and_wait
still_hints back
stop_daemon
echo ok
