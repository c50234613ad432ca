#!/bin/bash
# What an admin reads: one warning per rule and filesystem that cannot keep
# hints (not one per file, none again on reload), inheritance not counted
# twice after SIGHUP, no "<N>" prefixes on a terminal, a bad --log-target
# refused, and a word on stderr when the journal is missing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_cmd xfs_io
need_cmd script

# --log-target takes auto, journal or stderr and nothing else.
expect_exit 2 "$EXTALIGND" --log-target bogus --check-config --config /dev/null
expect_in err "--log-target"

X=$(mkfs_mount xfs 300)
E=$(mkfs_mount ext4 64)
mkdir -p "$X/db" "$E/db"
touch "$E/probe"
ext4_keeps=0
"$EXTALIGN" set --extsize 64k "$E/probe" >/dev/null 2>&1 && ext4_keeps=1
rm -f "$E/probe"
cat >"$CONF" <<CONF
[rule x]
directory = $X/db
extsize = 64k

[rule e]
directory = $E/db
extsize = 64k
inherit = no
CONF
start_daemon "$CONF"
mkdir "$X/db/sub"
for i in 1 2 3 4 5; do touch "$X/db/sub/f$i"; done
wait_until 5 counter_at_least files_inherited 5 || { cat "$DLOG"; fail "inheritance not counted"; }
inh=$(counter files_inherited)

if [ "$ext4_keeps" = 0 ]; then
	for i in 1 2 3 4 5; do touch "$E/db/f$i"; done
	wait_until 5 counter_at_least unsupported 5 || { cat "$DLOG"; fail "unsupported not counted"; }
	n=$(grep -c '^<4>.*unsupported: the ext4 kernel accepted the hint but kept nothing' "$DLOG" || true)
	[ "$n" = 1 ] || { cat "$DLOG"; fail "$n unsupported warnings for one rule on one filesystem, expected 1"; }
fi

reload_and_wait
reload_and_wait
[ "$(counter files_inherited)" = "$inh" ] ||
	fail "files_inherited went from $inh to $(counter files_inherited) after two reloads"
if [ "$ext4_keeps" = 0 ]; then
	n=$(grep -c '^<4>.*unsupported: the ext4 kernel' "$DLOG" || true)
	[ "$n" = 1 ] || { cat "$DLOG"; fail "the unsupported warning came again on reload ($n)"; }
fi

# A state directory that refuses writes (a full or read-only disk): one
# warning, not one per update, and a word when writing works again.  The
# immutable flag makes the temporary file's creation fail, even for root.
if chattr +i "$RUNDIR" 2>/dev/null; then
	for i in 1 2 3 4 5 6; do
		touch "$X/db/sub/g$i"
		sleep 0.7 # past the state file's 0.5 s minimum interval: one write each
	done
	# (status reads the state file, so the log tells when the daemon saw them)
	wait_until 5 grep -q 'sub/g6: hint' "$DLOG" ||
		{ chattr -i "$RUNDIR"; cat "$DLOG"; fail "new files not seen"; }
	sleep 1 # the state write after the last file
	n=$(grep -c 'cannot write the state file' "$DLOG" || true)
	chattr -i "$RUNDIR"
	[ "$n" = 1 ] || { cat "$DLOG"; fail "$n warnings for one unwritable state directory, expected 1"; }
	touch "$X/db/sub/h"
	wait_until 5 grep -q 'the state file written again' "$DLOG" ||
		{ cat "$DLOG"; fail "nothing said when the state file could be written again"; }
else
	echo "note: no chattr +i on $RUNDIR's filesystem, unwritable state file not checked"
fi
stop_daemon

# On a terminal: plain lines, no "<6>" prefix.
script -qec "timeout -s TERM 2 $EXTALIGND --foreground --config $CONF --state-dir $WORK/run2 \
	--persistent-dir $WORK/lib2 --log-target stderr" "$WORK/tty.log" >/dev/null || true
grep -q 'watching 2 filesystems' "$WORK/tty.log" || { cat "$WORK/tty.log"; fail "no log on the terminal"; }
! grep -q '<[0-7]>' "$WORK/tty.log" || { cat "$WORK/tty.log"; fail "<N> prefixes on a terminal"; }

# The journal asked for but not there: said once on stderr, then stderr.
if [ ! -e /run/systemd/journal/socket ]; then
	timeout -s TERM 2 "$EXTALIGND" --foreground --config "$CONF" --state-dir "$WORK/run3" \
		--persistent-dir "$WORK/lib3" --log-target journal 2>"$WORK/nojournal.err" || true
	grep -q 'journal.*not available.*stderr' "$WORK/nojournal.err" ||
		{ cat "$WORK/nojournal.err"; fail "nothing said about the missing journal"; }
	grep -q 'watching 2 filesystems' "$WORK/nojournal.err" ||
		{ cat "$WORK/nojournal.err"; fail "messages lost without a journal"; }
fi
echo ok
