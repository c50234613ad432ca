#!/bin/bash
# extalignd under valgrind through start, events of every kind, a refused and
# an accepted reload, and SIGTERM: no memory errors, no leaks.
. "$(dirname "$0")/lib.sh"
need_cmd valgrind
REAL=${EXTALIGND:-$TOP/build/extalignd}
EXTALIGND=$WORK/extalignd-vg
# exec keeps the pid, so READY=1 still comes from the daemon's pid.
cat >"$EXTALIGND" <<SH
#!/bin/sh
exec valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
	--child-silent-after-fork=yes --log-file=$WORK/valgrind.log "$REAL" "\$@"
SH
chmod +x "$EXTALIGND"
. "$(dirname "$0")/daemon.bash"

daemon_xfs db ev out
# metrics_file: the Prometheus text and its device lookup under valgrind too.
{
	printf '[daemon]\nmetrics_file = %s\n' "$WORK/extalign.prom"
	conf_db_ev
} >"$CONF"
start_daemon "$CONF"
wait_until 10 test -s "$WORK/extalign.prom" || fail "no metrics file under valgrind"
mkdir -p "$M/db/a" "$M/ev/b"
touch "$M/db/a/f" "$M/ev/b/g"
echo data >"$M/out/d" && mv "$M/out/d" "$M/ev/late"
ln -s /etc/passwd "$M/ev/link"
# The hard link only once g is hinted: before, g would have two names too.
expect_extsize "$M/ev/b/g" 131072
ln "$M/ev/b/g" "$M/ev/hard"
wait_until 10 counter_at_least files_late 1 || fail "late file not seen"
cp "$CONF" "$CONF.good"
echo '[rule broken]' >>"$CONF"
reload_and_wait
cp "$CONF.good" "$CONF"
reload_and_wait
# Under valgrind everything is slower: give SIGTERM more than a second.
kill -TERM "$DAEMON_PID"
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
[ "$rc" = 0 ] || { cat "$WORK/valgrind.log" >&2; fail "extalignd under valgrind exited $rc"; }
echo ok
