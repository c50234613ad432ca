#!/bin/bash
# The systemd unit: systemd-analyze verify finds no problem, and the offline
# security analysis keeps the exposure low (PID 1 here need not be systemd).
. "$(dirname "$0")/lib.sh"
need_cmd systemd-analyze
cd "$TOP" || exit 1
root=$WORK/root
make -s install DESTDIR="$root" PREFIX=/usr >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "make install"; }
unit=$(find "$root" -name extalignd.service | head -1)
[ -n "$unit" ] || fail "extalignd.service was not installed"

# verify resolves ExecStart= and the man pages of Documentation=: point both
# at the staged install.
mkdir -p "$WORK/units"
sed "s|^ExecStart=extalignd|ExecStart=$root/usr/sbin/extalignd|" "$unit" >"$WORK/units/extalignd.service"
MANPATH=$root/usr/share/man SYSTEMD_LOG_LEVEL=warning \
	systemd-analyze verify --man=no "$WORK/units/extalignd.service" >"$WORK/out" 2>&1 ||
	{ cat "$WORK/out"; fail "systemd-analyze verify"; }
grep -v -e '^$' -e 'Failed to connect' "$WORK/out" | grep -q . && { cat "$WORK/out"; fail "verify warned"; }

systemd-analyze security --offline=true "$WORK/units/extalignd.service" >"$WORK/out" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for extalignd.service: \([0-9.]*\).*/\1/p' "$WORK/out")
[ -n "$score" ] || { cat "$WORK/out"; fail "no exposure score"; }
echo "exposure $score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "exposure $score is above 2.0"
echo ok
