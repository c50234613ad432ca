#!/bin/bash
# extalign policy check|explain|show on the fixture configs of
# tests/data/policy: every error with file:line, the documented precedence,
# exit codes 0/1/2/3, JSON that parses.  No root needed.
. "$(dirname "$0")/lib.sh"
use_valgrind
need_cmd jq

DATA=$TOP/tests/data/policy
# Hermetic: never the host's /etc/projid or /etc/projects.
SYS=(--projid "$DATA/projid" --projects "$DATA/projects")
GOOD=(-c good.conf -d good.d "${SYS[@]}")
cd "$DATA" || exit 1

# ---- help and usage ----
for c in check explain show; do
	expect_exit 0 "$EXTALIGN" policy "$c" --help
	expect_in out "Usage: extalign policy $c"
done
expect_exit 0 "$EXTALIGN" policy --help
expect_exit 2 "$EXTALIGN" policy
expect_exit 2 "$EXTALIGN" policy frob
expect_in err "unknown policy command 'frob'"
expect_exit 2 "$EXTALIGN" policy check --bogus
expect_exit 2 "$EXTALIGN" policy check extra-arg
expect_exit 2 "$EXTALIGN" policy explain "${GOOD[@]}"
expect_in err "no path given"
expect_exit 2 "$EXTALIGN" policy explain "${GOOD[@]}" -p nosuch /x
expect_in err "no such project name"

# ---- check ----
expect_exit 0 "$EXTALIGN" policy check "${GOOD[@]}"
expect_in out "valid: 5 rules from 3 files, 2 trees to watch"
expect_exit 0 "$EXTALIGN" policy check -q "${GOOD[@]}"
[ ! -s "$WORK/out" ] || fail "--quiet printed something"
# --config alone reads no drop-ins.
expect_exit 0 "$EXTALIGN" policy check -c good.conf "${SYS[@]}"
expect_in out "valid: 2 rules from 1 file"
# Every error of bad.conf, in line order, each with file:line, exactly.
expect_exit 1 "$EXTALIGN" policy check -c bad.conf "${SYS[@]}"
diff -u bad.expected "$WORK/err" || fail "policy check output differs from bad.expected"
expect_exit 3 "$EXTALIGN" policy check -c "$WORK/missing.conf"
expect_in err "$WORK/missing.conf: cannot read: No such file or directory"
# A broken config fails explain and show the same way, never a partial answer.
expect_exit 3 "$EXTALIGN" policy explain -c bad.conf "${SYS[@]}" /data/x
expect_in err "bad.conf:8: invalid extsize '12k' in rule 'a': is not a power of two"
[ ! -s "$WORK/out" ] || fail "explain printed a result for a broken config"
expect_exit 3 "$EXTALIGN" policy show -c bad.conf "${SYS[@]}"

# A drop-in that ties with the main file: both locations named.
mkdir "$WORK/tie.d"
printf '[rule again]\ndirectory = /data/\nextsize = 4k\n' >"$WORK/tie.d/10-tie.conf"
expect_exit 1 "$EXTALIGN" policy check -c good.conf -d "$WORK/tie.d" "${SYS[@]}"
expect_in err "$WORK/tie.d/10-tie.conf:1: rule 'again' ties with rule 'data' (good.conf:7)"

# ---- explain: precedence ----
# Deeper directory and match: db-ibd beats db (same directory, no match) and data.
expect_exit 0 "$EXTALIGN" policy explain "${GOOD[@]}" /data/db/t1.ibd
expect_in out "/data/db/t1.ibd: rule 'db-ibd' (good.d/10-db.conf:2): extsize 64K, forcealign, realign"
grep -Eq '^db +outranked +good.d/10-db.conf:10 +a rule with match at the same place wins' "$WORK/out" ||
	fail "db not outranked by match"
grep -Eq '^data +outranked +good.conf:7 +a rule on a deeper directory wins' "$WORK/out" ||
	fail "data not outranked by depth"
grep -Eq '^logs +rejected .* outside /data/db/logs' "$WORK/out" || fail "logs not rejected"
# Excluded by a glob: falls to the rule without match.
expect_exit 0 "$EXTALIGN" policy explain "${GOOD[@]}" /data/db/tmp1.ibd
expect_in out "rule 'db' (good.d/10-db.conf:10): extsize 32K"
expect_in out "excluded by 'tmp*'"
# Component matching: /data/dbx is not under /data/db.
expect_exit 0 "$EXTALIGN" policy explain "${GOOD[@]}" /data/dbx/t1.ibd
expect_in out "rule 'data'"
# extsize = none: covered, and says no hint.
expect_exit 0 "$EXTALIGN" policy explain "${GOOD[@]}" /data/db/logs/a.log
expect_in out "rule 'logs' (good.d/20-logs.conf:5): no hint (extsize = none)"
# A directory (trailing '/'): rules with match are for files only.
expect_exit 0 "$EXTALIGN" policy explain "${GOOD[@]}" /data/db/
expect_in out "/data/db: rule 'db' (good.d/10-db.conf:10): new files inherit extsize 32K"
expect_in out "a rule with match is for files, not for directory inheritance"
# The project rule beats every directory rule.
expect_exit 0 "$EXTALIGN" policy explain "${GOOD[@]}" -p mysql /data/db/t1.ibd
expect_in out "rule 'mysql' (good.conf:11): extsize 1M, forcealign"
expect_in out "a project rule comes before directory rules"
expect_exit 0 "$EXTALIGN" policy explain "${GOOD[@]}" -p 43 /data/x
expect_in out "project id 43, the rule is for mysql (42)"
# No rule: exit 1, like grep; one uncovered path among covered ones is enough.
expect_exit 1 "$EXTALIGN" policy explain "${GOOD[@]}" /elsewhere/x
expect_in out "/elsewhere/x: no rule applies"
expect_exit 1 "$EXTALIGN" policy explain "${GOOD[@]}" /data/a /elsewhere/x /data/b
expect_exit 2 "$EXTALIGN" policy explain "${GOOD[@]}" /data/../x

# Real paths: a symlink is never explained through; relative paths resolve.
mkdir -p "$WORK/tree/sub"
touch "$WORK/tree/sub/f.ibd"
ln -s /etc/passwd "$WORK/tree/sub/link"
printf '[rule t]\ndirectory = %s/tree\nextsize = 16k\n[rule s]\ndirectory = %s/tree/sub\nmatch = *.ibd\nextsize = 64k\n' \
	"$WORK" "$WORK" >"$WORK/real.conf"
expect_exit 0 "$EXTALIGN" policy explain -c "$WORK/real.conf" "${SYS[@]}" "$WORK/tree/sub/f.ibd"
expect_in out "rule 's'"
(cd "$WORK/tree" && expect_exit 0 "$EXTALIGN" policy explain -c "$WORK/real.conf" "${SYS[@]}" sub/f.ibd sub)
expect_in out "$WORK/tree/sub/f.ibd: rule 's'"
expect_in out "$WORK/tree/sub: rule 't'"
expect_in out "new files inherit extsize 16K"
expect_exit 1 "$EXTALIGN" policy explain -c "$WORK/real.conf" "${SYS[@]}" "$WORK/tree/sub/link"
expect_in err "is a symbolic link"
# The directory resolves through a symlink to where files really land.
ln -s "$WORK/tree/sub" "$WORK/alias"
expect_exit 0 "$EXTALIGN" policy explain -c "$WORK/real.conf" "${SYS[@]}" "$WORK/alias/new.ibd"
expect_in out "$WORK/tree/sub/new.ibd: rule 's'"

# ---- explain --json ----
expect_exit 1 "$EXTALIGN" policy explain "${GOOD[@]}" --json /data/db/t1.ibd /elsewhere/x
# 5 rules per path, plus a 'none' row for the uncovered one.
jq -e '.verdicts | length == 11' "$WORK/out" >/dev/null || fail "explain --json: not 11 rows"
[ "$(jq -r '.verdicts[] | select(.path == "/data/db/t1.ibd" and .verdict == "applies") | .rule' "$WORK/out")" = db-ibd ] ||
	fail "explain --json: wrong winner"
[ "$(jq -r '[.verdicts[] | select(.path == "/elsewhere/x")][0].verdict' "$WORK/out")" = none ] ||
	fail "explain --json: uncovered path has no 'none' row"
jq -e '.verdicts[0].projid == 0 and .verdicts[0].type == "file"' "$WORK/out" >/dev/null ||
	fail "explain --json: projid or type wrong"

# ---- show ----
expect_exit 0 "$EXTALIGN" policy show "${GOOD[@]}"
grep -Eq '^db-ibd +good.d/10-db.conf:2 +directory +/data/db +\*\.ibd +tmp\* +64K +yes +yes +yes$' "$WORK/out" ||
	{ cat "$WORK/out"; fail "show: db-ibd row"; }
grep -Eq '^logs .* none ' "$WORK/out" || fail "show: extsize none"
expect_exit 0 "$EXTALIGN" policy show "${GOOD[@]}" --json
jq -e '[.rules[].name] == ["data","mysql","db-ibd","db","logs"]' "$WORK/out" >/dev/null ||
	fail "show --json: rules not in definition order (main file, then drop-ins)"
jq -e '.rules[2].extsize == 65536 and .rules[2].forcealign == true and .rules[4].extsize == null' \
	"$WORK/out" >/dev/null || fail "show --json: types"
jq -e '.rules[1].target == "mysql (42)"' "$WORK/out" >/dev/null || fail "show --json: project"
expect_exit 0 "$EXTALIGN" policy show "${GOOD[@]}" --daemon
# 20-logs.conf overrides idle_time of good.conf; other keys stay.
expect_in out "idle_time = 5min"
expect_in out "realign_bwlimit = 100M"
expect_in out "realign_windows = 22:00-06:00"
# The text form is config syntax: it loads back.
{ cat "$WORK/out"; printf '[rule x]\ndirectory = /x\nextsize = 16k\n'; } >"$WORK/roundtrip.conf"
expect_exit 0 "$EXTALIGN" policy check -c "$WORK/roundtrip.conf" "${SYS[@]}"
expect_exit 0 "$EXTALIGN" policy show "${GOOD[@]}" --daemon --json
jq -e '.daemon.realign_bwlimit == 104857600 and .daemon.realign == true and .daemon.idle_time == 300' \
	"$WORK/out" >/dev/null || fail "show --daemon --json"

# metrics_file: an absolute file name, shown back; anything else refused.
printf '[daemon]\nmetrics_file = /var/lib/node-exporter/extalign.prom\n' >"$WORK/metrics.conf"
expect_exit 0 "$EXTALIGN" policy show -c "$WORK/metrics.conf" "${SYS[@]}" --daemon
expect_in out "metrics_file = /var/lib/node-exporter/extalign.prom"
for bad in extalign.prom /var/lib/ /var/lib/..; do
	printf '[daemon]\nmetrics_file = %s\n' "$bad" >"$WORK/metrics.conf"
	expect_exit 1 "$EXTALIGN" policy check -c "$WORK/metrics.conf" "${SYS[@]}"
	expect_in err "metrics.conf:2: invalid metrics_file '$bad' in [daemon]"
done

# ---- the shipped sample and the man page example ----
# As shipped everything is commented out; with every example uncommented it
# is still valid (its project needs a name in the project id file).
expect_exit 0 "$EXTALIGN" policy check -c "$TOP/etc/extalign.conf" "${SYS[@]}"
expect_in out "valid: 0 rules"
sed 's/^#\([a-z[]\)/\1/' "$TOP/etc/extalign.conf" >"$WORK/sample.conf"
printf 'postgres:77\n' >"$WORK/projid"
expect_exit 0 "$EXTALIGN" policy check -c "$WORK/sample.conf" --projid "$WORK/projid" --projects /dev/null
expect_in out "valid: 4 rules"
expect_exit 0 "$EXTALIGN" policy show -c "$WORK/sample.conf" --projid "$WORK/projid" --projects /dev/null --daemon
expect_in out "realign_windows = 22:00-06:00"
sed -n '/^\.EX$/,/^\.EE$/p' "$TOP/etc/extalign.conf.5" | sed '1d;$d' >"$WORK/man.conf"
expect_exit 0 "$EXTALIGN" policy check -c "$WORK/man.conf" "${SYS[@]}"
expect_in out "valid: 3 rules"
# What the man page says about its example.
expect_exit 0 "$EXTALIGN" policy explain -c "$WORK/man.conf" "${SYS[@]}" /var/lib/mysql/db/t1.ibd \
	/var/lib/mysql/ib_logfile0 /var/lib/mysql/binlog/b.000001 /var/lib/mysql/db/
expect_in out "/var/lib/mysql/db/t1.ibd: rule 'mysql-tablespaces' (${WORK}/man.conf:9): extsize 64K, forcealign, realign"
expect_in out "/var/lib/mysql/ib_logfile0: rule 'mysql' (${WORK}/man.conf:5): extsize 16K"
expect_in out "/var/lib/mysql/binlog/b.000001: rule 'mysql-binlog'"
expect_in out "/var/lib/mysql/db: rule 'mysql' (${WORK}/man.conf:5): new files inherit extsize 16K"

# ---- a directory longer than libinih's line (issue 33.4) ----
deep=/srv/$(printf 'level%02d/' {1..30})tenant
[ ${#deep} -gt 197 ] || fail "the deep path is only ${#deep} characters"
printf '[rule deep]\ndirectory = %s ; the tenant\nextsize = 16k\n' "$deep" >"$WORK/deep.conf"
expect_exit 0 "$EXTALIGN" policy check -c "$WORK/deep.conf" "${SYS[@]}"
expect_exit 0 "$EXTALIGN" policy explain -c "$WORK/deep.conf" "${SYS[@]}" "$deep/t1.ibd"
expect_in out "$deep/t1.ibd: rule 'deep' (${WORK}/deep.conf:1): extsize 16K"

echo "policy: all checks passed"
