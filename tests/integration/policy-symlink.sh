#!/bin/bash
# A rule's directory that is (or goes through) a symbolic link: resolved once
# when the configuration is loaded if only root could have placed the link,
# refused with file:line otherwise.  Never a rule that silently covers nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_cmd xfs_io

M=$(mkfs_mount xfs 300)
mkdir -p "$M/srv/mysql" "$M/var/lib"
# The symlinked datadir of a MySQL installation, made by root.
ln -s "$M/srv/mysql" "$M/var/lib/mysql"
CONF=$WORK/extalign.conf
cat >"$CONF" <<CONF
[rule db]
directory = $M/var/lib/mysql
extsize = 64k
CONF

expect_exit 0 "$EXTALIGN" policy check -c "$CONF"
# Both spellings of a file in the datadir get the rule.
expect_exit 0 "$EXTALIGN" policy explain -c "$CONF" "$M/var/lib/mysql/t.ibd"
grep -q "rule 'db'" "$WORK/out" || fail "explain through the link: no rule 'db'"
expect_exit 0 "$EXTALIGN" policy explain -c "$CONF" "$M/srv/mysql/t.ibd"
# show names the directory it resolved to and the link it came from.
expect_exit 0 "$EXTALIGN" policy show -c "$CONF" -J
python3 - "$WORK/out" "$M" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["rules"][0]
m = sys.argv[2]
assert r["target"] == m + "/srv/mysql", r
assert r["link"] == m + "/var/lib/mysql", r
PY

# The daemon watches the resolved tree and hints new files there.
start_daemon "$CONF"
wait_until 5 grep -q 'STATUS=running: 1 rule, 1 filesystem' "$NLOG" ||
	{ cat "$NLOG" "$DLOG"; fail "extalignd does not watch the linked datadir"; }
expect_extsize "$M/srv/mysql" 65536
touch "$M/var/lib/mysql/new.ibd"
expect_extsize "$M/srv/mysql/new.ibd" 65536
stop_daemon

# An ancestor that is a link (as /var often is) resolves the same way.
ln -s "$M/srv" "$M/srvlink"
sed -i "s|^directory = .*|directory = $M/srvlink/mysql|" "$CONF"
expect_exit 0 "$EXTALIGN" policy explain -c "$CONF" "$M/srv/mysql/t.ibd"

# A link a user owns could be pointed anywhere: refused, with file:line.
chown -h nobody "$M/srvlink"
expect_exit 1 "$EXTALIGN" policy check -c "$CONF"
grep -q "^extalign: $CONF:2: .*$M/srvlink.*symbolic link.*owned by" "$WORK/err" ||
	{ cat "$WORK/err"; fail "no file:line message for a user's link"; }
expect_exit 3 "$EXTALIGN" policy explain -c "$CONF" "$M/srv/mysql/t.ibd"
expect_exit 3 "$EXTALIGN" apply -c "$CONF"

# A root-owned link in a directory anyone may write to: refused too, the
# user could have replaced it.
mkdir -m 0777 "$M/open"
ln -s "$M/srv/mysql" "$M/open/mysql"
sed -i "s|^directory = .*|directory = $M/open/mysql|" "$CONF"
expect_exit 1 "$EXTALIGN" policy check -c "$CONF"
grep -q "^extalign: $CONF:2: .*writable" "$WORK/err" ||
	{ cat "$WORK/err"; fail "no message for a link in a world-writable directory"; }

# ... and the daemon refuses to start on it rather than watch nothing.
rc=0
timeout 10 "$EXTALIGND" --foreground --config "$CONF" --state-dir "$RUNDIR" \
	--log-target stderr >/dev/null 2>"$WORK/derr" || rc=$?
[ "$rc" != 0 ] || fail "extalignd started on a refused configuration"
grep -q "$CONF:2: " "$WORK/derr" || { cat "$WORK/derr"; fail "extalignd does not say file:line"; }

# A sticky world-writable directory (/tmp) keeps others from replacing
# root's link: accepted.
chmod 1777 "$M/open"
expect_exit 0 "$EXTALIGN" policy check -c "$CONF"
echo "policy-symlink: OK"
