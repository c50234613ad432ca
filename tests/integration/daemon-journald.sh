#!/bin/bash
# extalignd under a real systemd-journald: the messages an admin acts on
# arrive with their MESSAGE_ID and fields, and journalctl -x explains them
# from our catalog with the entry's fields filled in.
#
# PID 1 is not systemd here and no journald runs, so the test starts one in
# a private mount namespace: tmpfs over /run/systemd (its sockets),
# /run/log and /var/log/journal (volatile storage), the catalog database and
# the catalog directory, and a journald.conf of its own bind-mounted over
# the system's.  Nothing of it is left on the host when the namespace ends.
if [ -z "$EXTALIGN_IN_NS" ]; then
	command -v unshare >/dev/null || { echo "SKIP: unshare is not installed"; exit 77; }
	exec unshare -m --propagation private env EXTALIGN_IN_NS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_cmd journalctl
JOURNALD=/lib/systemd/systemd-journald
[ -x "$JOURNALD" ] || skip "no $JOURNALD"

mount -t tmpfs tmpfs /run/systemd || skip "cannot mount a tmpfs over /run/systemd"
mkdir -p /run/systemd/journal /run/log /var/log/journal /var/lib/systemd/catalog
mount -t tmpfs tmpfs /run/log
mount -t tmpfs tmpfs /var/log/journal
mount -t tmpfs tmpfs /var/lib/systemd/catalog
cat >"$WORK/journald.conf" <<'CONF'
[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToWall=no
ForwardToConsole=no
RateLimitBurst=0
CONF
mount --bind "$WORK/journald.conf" /etc/systemd/journald.conf
"$JOURNALD" >"$WORK/journald.log" 2>&1 &
JOURNALD_PID=$!
# journald first: daemon_cleanup waits for every child.
trap 'kill $JOURNALD_PID 2>/dev/null; daemon_cleanup; cleanup' EXIT
wait_until 5 test -S /run/systemd/journal/socket || { cat "$WORK/journald.log"; fail "journald did not start"; }

# Our catalog beside systemd's own, as the package installs it.
mkdir -p "$WORK/catalog"
cp /usr/lib/systemd/catalog/systemd.catalog "$TOP/daemon/extalignd.catalog" "$WORK/catalog/"
mount --bind "$WORK/catalog" /usr/lib/systemd/catalog
journalctl --update-catalog || fail "journalctl --update-catalog"

id_of() { sed -n "s/^#define MSGID_$1[[:space:]]*\"\([0-9a-f]*\)\"$/\1/p" "$TOP/daemon/message-ids.h"; }
jctl() { journalctl -D /run/log/journal --no-pager "$@"; }
# fields ID: the export of the first entry with that MESSAGE_ID.
fields() { jctl -o export "MESSAGE_ID=$1" | awk 'NF == 0 { exit } { print }'; }
has_id() { [ -n "$(jctl -o cat "MESSAGE_ID=$1" 2>/dev/null)" ]; }

M=$(mkfs_mount xfs 300)
mkdir -p "$M/ev" "$M/out"
CONF=$WORK/extalign.conf
printf '[rule ev]\ndirectory = %s\nextsize = 128k\ninherit = no\n' "$M/ev" >"$CONF"
# A rule whose directory is not there: said at the start-up scan.
printf '[rule gone]\ndirectory = %s\nextsize = 64k\n' "$M/gone" >>"$CONF"
start_daemon "$CONF" --log-target journal
missing=$(id_of RULE_DIR_MISSING)
wait_until 5 has_id "$missing" || { jctl -o export | tail -40; fail "no entry for the missing rule directory"; }
fields "$missing" | grep -qx "PATH=$M/gone" || { fields "$missing"; fail "missing directory: no PATH="; }

# A late file and a refused reload: each an entry with its ID and fields.
dd if=/dev/urandom of="$M/out/data" bs=64k count=2 status=none
mv "$M/out/data" "$M/ev/late"
late=$(id_of LATE_FILE) refused=$(id_of RELOAD_REFUSED)
[ -n "$late" ] && [ -n "$refused" ] || fail "IDs missing from message-ids.h"
wait_until 5 has_id "$late" || { jctl -o export | tail -40; fail "no entry with the late file's MESSAGE_ID"; }
fields "$late" >"$WORK/late"
# CODE_FILE= and CODE_FUNC= name where the message is made, not the logger.
for f in "SYSLOG_IDENTIFIER=extalignd" "_PID=$DAEMON_PID" "RULE=ev" "PATH=$M/ev/late" "PRIORITY=6" \
	"CODE_FILE=daemon/name-report.c" "CODE_FUNC=report_late"; do
	grep -qx "$f" "$WORK/late" || { cat "$WORK/late"; fail "late file entry: no $f"; }
done
echo "[rule broken" >>"$CONF"
kill -HUP "$DAEMON_PID"
wait_until 5 has_id "$refused" || { jctl -o export | tail -40; fail "no entry with the refused reload's MESSAGE_ID"; }
# The summary entry (each wrong line has an entry of its own, without PATH=).
jctl -o export "MESSAGE_ID=$refused" "PATH=$CONF" | awk 'NF == 0 { exit } { print }' >"$WORK/refused"
jctl -o cat "MESSAGE_ID=$refused" | grep -q "^$CONF:[0-9]*: " ||
	{ jctl -o cat "MESSAGE_ID=$refused"; fail "no entry for the refused line"; }
for f in "_PID=$DAEMON_PID" "PATH=$CONF" "PRIORITY=3" "CODE_FILE=daemon/main.c" "CODE_FUNC=reload"; do
	grep -qx "$f" "$WORK/refused" || { cat "$WORK/refused"; fail "refused reload entry: no $f"; }
done
# Routine messages have no ID.
jctl -o export MESSAGE='watching 1 filesystem with fanotify for 2 rules' >"$WORK/routine"
grep -q '^SYSLOG_IDENTIFIER=extalignd$' "$WORK/routine" || { jctl -o export | tail -40; fail "no start-up message"; }
grep -q '^MESSAGE_ID=' "$WORK/routine" && fail "a routine message has a MESSAGE_ID"
# Made now: its files are hinted after all.
mkdir "$M/gone"
touch "$M/gone/f"
expect_extsize "$M/gone/f" 65536

# journalctl -x: the catalog's explanation, the entry's path filled in.
jctl -x "MESSAGE_ID=$refused" >"$WORK/x"
grep -q 'Subject: extalignd refused a new configuration and kept the old rules' "$WORK/x" ||
	{ cat "$WORK/x"; fail "journalctl -x shows no catalog entry"; }
grep -qF "found errors in $CONF" "$WORK/x" || { cat "$WORK/x"; fail "journalctl -x did not fill in @PATH@"; }
jctl -x "MESSAGE_ID=$late" | grep -qF "$M/ev/late (rule ev) received data" ||
	{ jctl -x "MESSAGE_ID=$late"; fail "late file: no explanation with path and rule"; }
stop_daemon
echo ok
