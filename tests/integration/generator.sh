#!/bin/bash
# extalign-generator: the rules decide what extalignd.service may write.
# The drop-in it writes names every watched tree, systemd reads it back to
# the same paths (systemd-analyze verify's dump of the unit), trees no
# unit line can name are left out and said, a broken configuration gets
# no drop-in; "policy check" names the trees the running unit cannot write
# yet; a daemon whose tree is read-only says so in STATUS= and the journal.
. "$(dirname "$0")/lib.sh"
GEN=$TOP/build/extalign-generator
[ -x "$GEN" ] || skip "extalign-generator is not built"
need_root
need_cmd systemd-analyze
need_cmd mkfs.xfs

OUT=$WORK/gen
DROPIN=$OUT/extalignd.service.d/50-extalign-rules.conf
mkdir -p "$OUT"
# A quote in a name: the generator must leave it out, not write it.
cat >"$WORK/c.conf" <<EOF
[rule db]
directory = /data/db
extsize = 16k

[rule odd]
directory = /data/my db %i
extsize = 64k

[rule home]
directory = /home/pg/data
extsize = 64k

[rule lib]
directory = /var/lib/mysql
extsize = 16k

[rule tmp]
directory = /var/tmp/scratch
extsize = 64k

[rule quote]
directory = /data/it"s
extsize = 64k
EOF

# Usage: one or three directories, nothing else.
expect_exit 2 "$GEN" --config "$WORK/c.conf"
expect_exit 2 "$GEN" --config "$WORK/c.conf" a b
expect_exit 2 "$GEN" --bogus "$OUT"
"$GEN" --version | grep -q '^extalign-generator [0-9]' || fail "--version"

expect_exit 0 "$GEN" --config "$WORK/c.conf" "$OUT" "$WORK/early" "$WORK/late"
[ -f "$DROPIN" ] || fail "no drop-in written"
[ "$(stat -c %a "$DROPIN")" = 644 ] || fail "drop-in mode $(stat -c %a "$DROPIN")"
for want in '-"/data/db"' '-"/data/my db %%i"' '-"/home/pg/data"' '-"/var/lib/mysql"'; do
	grep -qxF "ReadWritePaths=$want" "$DROPIN" || { cat "$DROPIN"; fail "no ReadWritePaths=$want"; }
done
grep -qx 'ProtectHome=read-only' "$DROPIN" || fail "a tree under /home without ProtectHome=read-only"
grep -q 'scratch\|it"s' "$DROPIN" && { cat "$DROPIN"; fail "an unreachable tree was written"; }
grep -q '/var/tmp/scratch stays out of reach.*PrivateTmp' "$WORK/err" || { cat "$WORK/err"; fail "/var/tmp tree not said"; }
grep -q 'data/it"s stays out of reach.*quote' "$WORK/err" || { cat "$WORK/err"; fail "quoted name not said"; }
[ ! -e "$WORK/early/extalignd.service.d" ] || fail "wrote into EARLY_DIR"

# systemd reads the drop-in back to the very paths ("%%" is one "%").
mkdir -p "$WORK/units"
sed "s|^ExecStart=extalignd|ExecStart=$TOP/build/extalignd|" "$TOP/etc/extalignd.service" \
	>"$WORK/units/extalignd.service"
cp -r "$OUT/extalignd.service.d" "$WORK/units/"
SYSTEMD_LOG_LEVEL=debug systemd-analyze verify --man=no "$WORK/units/extalignd.service" \
	>"$WORK/dump" 2>"$WORK/verify"
grep -q '50-extalign-rules.conf:' "$WORK/verify" && { cat "$WORK/verify"; fail "systemd warned about the drop-in"; }
rw=$(sed -n 's/^[[:space:]]*ReadWritePaths: //p' "$WORK/dump")
for p in -/data/db "-/data/my db %i" -/home/pg/data -/var/lib/mysql; do
	[[ " $rw " == *" $p "* ]] || fail "systemd read ReadWritePaths as '$rw', without '$p'"
done
sed -n 's/^[[:space:]]*ProtectHome: //p' "$WORK/dump" | grep -qx read-only ||
	fail "systemd did not read ProtectHome=read-only"
# The trees the unit itself makes writable are the ones policy check
# counts on (EA_UNIT_OWN_WRITABLE).
grep -qx 'ReadWritePaths=/run/extalign /var/lib/extalign -/var/lib -/srv' "$TOP/etc/extalignd.service" ||
	fail "the unit's own ReadWritePaths= changed: update EA_UNIT_OWN_WRITABLE"

# policy check: the trees out of reach, then those the drop-in of the
# running unit does not list yet (a rule added since).
cp "$WORK/c.conf" "$WORK/c2.conf"
printf '\n[rule new]\ndirectory = /data/new\nextsize = 16k\n\n[rule srv]\ndirectory = /srv/pg\nextsize = 16k\n' >>"$WORK/c2.conf"
EXTALIGN_UNIT_DROPIN=$DROPIN expect_exit 0 "$EXTALIGN" policy check --config "$WORK/c2.conf"
grep -q '^extalign: /data/new: warning: read-only to the running extalignd.service until "systemctl daemon-reload && systemctl restart extalignd"' "$WORK/err" ||
	{ cat "$WORK/err"; fail "policy check did not name the tree the unit lacks"; }
grep -q '/data/db\|/srv/pg\|/var/lib/mysql: warning: read' "$WORK/err" &&
	{ cat "$WORK/err"; fail "policy check named a tree the unit has"; }
grep -q '/var/tmp/scratch: warning: out of reach.*PrivateTmp' "$WORK/err" || fail "policy check: /var/tmp tree"
# Without a drop-in (no systemd ran the generator) nothing about it is said.
EXTALIGN_UNIT_DROPIN=$WORK/none expect_exit 0 "$EXTALIGN" policy check --config "$WORK/c2.conf"
grep -q 'read-only to the running' "$WORK/err" && fail "warned without a drop-in"

# A broken configuration: its errors, exit 1, the drop-in left as it was.
before=$(cat "$DROPIN")
printf '[rule bad]\ndirectory = relative\nextsize = 12k\n' >"$WORK/bad.conf"
expect_exit 1 "$GEN" --config "$WORK/bad.conf" "$OUT"
grep -q "bad.conf:2: " "$WORK/err" || { cat "$WORK/err"; fail "the error has no file:line"; }
grep -q 'no 50-extalign-rules.conf drop-in written' "$WORK/err" || fail "not said that nothing was written"
[ "$(cat "$DROPIN")" = "$before" ] || fail "a broken configuration changed the drop-in"
expect_exit 1 "$GEN" --config "$WORK/missing.conf" "$OUT"

# The daemon: a rule's tree mounted read-only (as ProtectSystem=strict
# leaves a tree the drop-in lacks): STATUS= and the log say it.
. "$(dirname "$0")/daemon.bash"
M=$(mkfs_mount xfs 300)
mkdir -p "$M/rw" "$M/ro" "$WORK/romnt"
mount --bind "$M/ro" "$WORK/romnt" && track_mount "$WORK/romnt"
mount -o remount,bind,ro "$WORK/romnt"
printf '[rule rw]\ndirectory = %s\nextsize = 64k\n\n[rule ro]\ndirectory = %s\nextsize = 64k\n' \
	"$M/rw" "$WORK/romnt" >"$CONF"
start_daemon "$CONF"
wait_until 5 grep -q 'STATUS=1 tree READ-ONLY here (see the journal); running: 2 rules' "$NLOG" ||
	{ cat "$NLOG"; fail "STATUS= does not say a tree is read-only"; }
grep -q 'romnt: read-only here, no hint can be set; under systemd, "systemctl daemon-reload && systemctl restart extalignd"' "$DLOG" ||
	{ cat "$DLOG"; fail "the log does not say what to do"; }
touch "$M/rw/f"
expect_extsize "$M/rw/f" 65536
stop_daemon
echo ok
