#!/bin/bash
# Logging to the journal: structured fields RULE=, PATH=, ERRNO=,
# PRIORITY= and, on the messages an admin acts on, the MESSAGE_ID= of their
# catalog entry, received on a stand-in journal socket; and WATCHDOG=1
# pings when WATCHDOG_USEC is set.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

J=/run/systemd/journal
[ -e "$J" ] && skip "a journal runs here; not replacing its socket"
mkdir -p "$J"
JLOG=$WORK/journal.log
: >"$JLOG"
"$NOTIFY_LISTEN" "$J/socket" "$JLOG" &
JPID=$!
trap 'kill $JPID 2>/dev/null || true; rm -rf "$J"; daemon_cleanup; cleanup' EXIT
wait_until 5 test -S "$J/socket" || fail "no stand-in journal socket"

daemon_xfs ev
R=$(mkfs_mount xfs 300)
mkdir -p "$R/ro"
mount -o remount,ro "$R"
{
	conf_rule ev 128k inherit=no
	M=$R conf_rule ro 64k
} >"$CONF"
# start_daemon logs to stderr; the journal target is asked for here.
WATCHDOG_USEC=1000000 start_daemon "$CONF" --log-target journal
touch "$M/ev/f"
expect_extsize "$M/ev/f" 131072
wait_until 5 grep -q "PATH=$M/ev/f\$" "$JLOG" || { cat "$JLOG"; fail "no PATH= field"; }
# The entry for f: its message, rule and priority travel as fields.
seq=$(awk -v p="PATH=$M/ev/f" '$3 == p { print $1; exit }' "$JLOG")
entry() { awk -v s="$seq" '$1 == s { $1 = ""; $2 = ""; print substr($0, 3) }' "$JLOG"; }
entry | grep -qx 'RULE=ev' || { entry; fail "no RULE= field"; }
# The text names them too: journalctl shows MESSAGE= alone.
entry | grep -qx "MESSAGE=rule ev: $M/ev/f: hint set" || { entry; fail "no MESSAGE= field with the rule and path"; }
entry | grep -qx 'PRIORITY=7' || { entry; fail "no PRIORITY= field"; }
entry | grep -qx 'SYSLOG_IDENTIFIER=extalignd' || fail "no SYSLOG_IDENTIFIER="
# The read-only tree: a warning with the errno as a field.
grep -qx "[0-9]* [0-9]* ERRNO=30" "$JLOG" || { cat "$JLOG"; fail "no ERRNO=30 (EROFS) field"; }
# id_of NAME: the MESSAGE_ID of daemon/message-ids.h for MSGID_NAME.
id_of() { sed -n "s/^#define MSGID_$1[[:space:]]*\"\([0-9a-f]*\)\"$/\1/p" "$TOP/daemon/message-ids.h"; }
# entry_with FIELD=VALUE: the fields of the first entry that has it.
entry_with() {
	local s
	s=$(awk -v f="$1" '$3 == f { print $1; exit }' "$JLOG")
	[ -n "$s" ] && awk -v s="$s" '$1 == s { $1 = ""; $2 = ""; print substr($0, 3) }' "$JLOG"
}
[ -n "$(id_of HINT_FAILED)" ] || fail "no MSGID_HINT_FAILED in message-ids.h"
entry_with ERRNO=30 | grep -qx "MESSAGE_ID=$(id_of HINT_FAILED)" ||
	{ entry_with ERRNO=30; fail "the read-only warning has no MESSAGE_ID"; }
# Routine messages carry none: the ID marks what an admin acts on.
entry | grep -q '^MESSAGE_ID=' && { entry; fail "'hint set' has a MESSAGE_ID"; }

# A file with data before its hint: the late-file entry.
dd if=/dev/urandom of="$M/data" bs=64k count=2 status=none
mv "$M/data" "$M/ev/late"
wait_until 5 grep -q "PATH=$M/ev/late\$" "$JLOG" || { cat "$JLOG"; fail "no entry for the late file"; }
entry_with "PATH=$M/ev/late" | grep -qx "MESSAGE_ID=$(id_of LATE_FILE)" ||
	{ entry_with "PATH=$M/ev/late"; fail "the late file's entry has no MESSAGE_ID"; }

# A refused reload: an error entry with the configuration as PATH=.
cp "$CONF" "$WORK/good.conf"
echo "[rule broken" >>"$CONF"
kill -HUP "$DAEMON_PID"
wait_until 5 grep -q "MESSAGE_ID=$(id_of RELOAD_REFUSED)\$" "$JLOG" ||
	{ cat "$JLOG"; fail "no entry with the refused reload's MESSAGE_ID"; }
entry_with "PATH=$CONF" >"$WORK/refused"
grep -qx "MESSAGE_ID=$(id_of RELOAD_REFUSED)" "$WORK/refused" && grep -qx 'PRIORITY=3' "$WORK/refused" &&
	grep -q "^MESSAGE=$CONF: new configuration has 1 error, keeping the old rules" "$WORK/refused" ||
	{ cat "$WORK/refused"; fail "the refused reload's entry lacks its fields"; }
# And one entry for each line that was wrong, "file:line: message".
grep -q "MESSAGE=$CONF:[0-9]*: " "$JLOG" || { cat "$JLOG"; fail "the refused line has no entry"; }
cp "$WORK/good.conf" "$CONF"
[ ! -s "$DLOG" ] || { cat "$DLOG"; fail "journal target but messages on stderr"; }
wait_until 3 notify_at_least WATCHDOG=1 3 || fail "no WATCHDOG=1 pings"
stop_daemon
echo ok
