#!/bin/bash
# extalignd on an ext4 that keeps no extent size hints (mainline without our
# series): every file is reported unsupported, counted, and the daemon keeps
# running without retrying in a loop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

M=$(mkfs_mount ext4 64)
mkdir -p "$M/db"
# Does this kernel keep a hint?  Then this test is not about it.
touch "$M/probe"
if "$EXTALIGN" set --extsize 64k "$M/probe" >/dev/null 2>&1; then
	skip "this kernel's ext4 keeps extent size hints"
fi
rm -f "$M/probe"
conf_rule db 64k inherit=yes >"$CONF"

start_daemon "$CONF"
touch "$M/db/f1" "$M/db/f2"
mkdir "$M/db/d"
# The start-up scan met the rule directory, then 3 events: 4 reports.
wait_until 5 counter_at_least unsupported 4 || { cat "$DLOG"; fail "unsupported not counted"; }
grep -q "db/f1: unsupported: the ext4 kernel accepted the hint but kept nothing" "$DLOG" ||
	{ cat "$DLOG"; fail "no per-file unsupported report"; }
# No spinning: a second later the count and the event count stand still.
u=$(counter unsupported) e=$(counter events)
sleep 1
[ "$(counter unsupported)" = "$u" ] && [ "$(counter events)" = "$e" ] ||
	fail "the daemon keeps retrying unsupported files"
[ "$(counter errors)" = 0 ] || fail "unsupported counted as errors"
grep -q 'STATUS=running: 1 rule, 1 filesystem (fanotify).* 4 unsupported' "$NLOG" ||
	{ cat "$NLOG"; fail "STATUS= without the unsupported count"; }
# status names the rule and the filesystem, and what would help (issue 32.6).
expect_exit 0 "$EXTALIGN" status --state-dir "$RUNDIR"
expect_in out "4 unsupported under rule db on $M (ext4)"
expect_in out "it needs a kernel with the extalign series"
stop_daemon
echo ok
