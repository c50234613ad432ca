#!/bin/bash
# extalignd keeps the directory of the last event (its path, and that it
# lies inside the rule's tree) for the names that follow in it.  A rename
# of that directory, or of one above it, must end that: a file made in it
# after it left the rule's tree is not the rule's.  Also in one read of
# events: the daemon is stopped while the names, the rename and the next
# names are made, so they reach it together.  Last, a directory swapped
# for a symlink in the same way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_cmd xfs_io

M=$(mkfs_mount xfs 300)
mkdir -p "$M/ev/a/b" "$M/ev/c" "$M/out"
CONF=$WORK/extalign.conf
printf '[rule ev]\ndirectory = %s\nextsize = 64k\ninherit = no\n' "$M/ev" >"$CONF"
start_daemon "$CONF"

# One event at a time: the directory is kept between them.
touch "$M/ev/a/b/f1"
expect_extsize "$M/ev/a/b/f1" 65536
mv "$M/ev/a" "$M/out/a"
touch "$M/out/a/b/f2" "$M/ev/c/marker"
expect_extsize "$M/ev/c/marker" 65536 # the events after the rename are handled
extsize_is "$M/out/a/b/f2" 0 || fail "a file made after its directory left the tree was hinted"

# All in one read: names, the rename of the directory above, names again.
kill -STOP "$DAEMON_PID"
touch "$M/ev/c/g1"
mv "$M/ev/c" "$M/out/c"
touch "$M/out/c/g2"
mkdir "$M/ev/d" && touch "$M/ev/d/marker"
kill -CONT "$DAEMON_PID"
expect_extsize "$M/ev/d/marker" 65536
extsize_is "$M/out/c/g2" 0 || fail "a file made after the rename, in the same read, was hinted"
# The same, where the rename's own event cannot be handled (its target
# directory is gone by then): the rename alone must still end what is kept.
mkdir -p "$M/ev/e" "$M/out/x"
touch "$M/ev/e/h1"
expect_extsize "$M/ev/e/h1" 65536
kill -STOP "$DAEMON_PID"
mv "$M/ev/e" "$M/out/x/e"
touch "$M/out/x/e/h2"
mv "$M/out/x/e" "$M/out/e"
rmdir "$M/out/x"
mkdir "$M/ev/f" && touch "$M/ev/f/marker"
kill -CONT "$DAEMON_PID"
expect_extsize "$M/ev/f/marker" 65536
extsize_is "$M/out/e/h2" 0 || fail "a file made after a rename whose event failed was hinted"

# A directory swapped for a symlink between the event and the open: the
# events name a file in ev/s, but by the time they are read ev/s is a
# symlink to a directory outside the rule holding a file of the same name.
# Neither that file nor the one whose directory was moved out may change.
mkdir -p "$M/out/t"
kill -STOP "$DAEMON_PID"
mkdir "$M/ev/s" && touch "$M/ev/s/late"
mv "$M/ev/s" "$M/out/s"
touch "$M/out/t/late"
ln -s ../out/t "$M/ev/s"
mkdir "$M/ev/g" && touch "$M/ev/g/marker"
kill -CONT "$DAEMON_PID"
expect_extsize "$M/ev/g/marker" 65536
extsize_is "$M/out/t/late" 0 || fail "a file reached through a directory swapped for a symlink was hinted"
extsize_is "$M/out/s/late" 0 || fail "a file whose directory left the tree before its event was read was hinted"
stop_daemon
echo ok
