#!/bin/bash
# extalignd with the inotify fallback: watches added as directories appear,
# including a rule directory that does not exist when the daemon starts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

daemon_xfs ev
{
	conf_rule ev 128k inherit=no
	printf '\n[rule later]\ndirectory = %s\nextsize = 64k\n' "$M/later/db"
} >"$CONF"

start_daemon "$CONF" --watch inotify
grep -q 'STATUS=running: 2 rules, 1 filesystem (inotify)' "$NLOG" || { cat "$NLOG"; fail "not inotify"; }
touch "$M/ev/a"
expect_extsize "$M/ev/a" 131072
# A new directory gets its own watch; what was made in it before that
# watch existed is found by the scan of the new directory.
mkdir -p "$M/ev/x/y"
touch "$M/ev/x/y/b"
expect_extsize "$M/ev/x/y/b" 131072
touch "$M/ev/x/y/c"
expect_extsize "$M/ev/x/y/c" 131072
# The rule directory appears after the start: seen through its ancestor.
mkdir -p "$M/later/db"
expect_extsize "$M/later/db" 65536
mkdir "$M/later/db/sub"
touch "$M/later/db/sub/f"
expect_extsize "$M/later/db/sub/f" 65536
stop_daemon
echo ok
