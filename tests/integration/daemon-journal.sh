#!/bin/bash
# Logging to the journal: structured fields RULE=, PATH=, ERRNO= and
# PRIORITY=, received on a stand-in journal socket; and WATCHDOG=1 pings
# when WATCHDOG_USEC is set.
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
entry | grep -qx 'MESSAGE=hint set' || { entry; fail "no MESSAGE= field"; }
entry | grep -qx 'PRIORITY=7' || { entry; fail "no PRIORITY= field"; }
entry | grep -qx 'SYSLOG_IDENTIFIER=extalignd' || fail "no SYSLOG_IDENTIFIER="
# The read-only tree: a warning with the errno as a field.
grep -qx "[0-9]* [0-9]* ERRNO=30" "$JLOG" || { cat "$JLOG"; fail "no ERRNO=30 (EROFS) field"; }
[ ! -s "$DLOG" ] || { cat "$DLOG"; fail "journal target but messages on stderr"; }
wait_until 3 notify_at_least WATCHDOG=1 3 || fail "no WATCHDOG=1 pings"
stop_daemon
echo ok
