#!/bin/bash
# scripts/demo.sh --kernel on the patched UML kernel that kernel/check.sh
# built (a SKIP without it: this test does not build a kernel): the
# forcealign directory hands its 16K unit to a new file, statx reports
# 16K, a 16 KiB RWF_ATOMIC write is accepted and a misaligned one refused,
# devices --probe and check agree, and its output to a pipe has no colour.
. "$(dirname "$0")/lib.sh"
need_root
cd "$TOP" || exit 1
KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
[ -x "$KB/build-um/linux" ] || skip "no UML kernel at $KB/build-um/linux (kernel/check.sh builds it)"
[ -x build/extalign ] || skip "build the programs first (make)"

rc=0
scripts/demo.sh --kernel 2>&1 | cat >"$WORK/demo" || rc=$?
cat "$WORK/demo"
[ "$rc" = 0 ] || fail "scripts/demo.sh --kernel exited $rc"

# after CMD: the line the demo printed right after "$ CMD".
after() { awk -v c="\$ $1" 'p { print; exit } $0 == c { p = 1 }' "$WORK/demo"; }
f=/run/demo/db/table.ibd
grep -qE "^$f +ext4 +4K +16K yes" "$WORK/demo" || fail "the new file did not inherit 16K and forcealign"
[ "$(after "ktool statx $f")" = "mask=1 attr=1 min=4096 max=16384 segments=1" ] || fail "statx of $f"
[ "$(after "ktool awrite $f 0 16384")" = "ok 16384" ] || fail "the aligned 16 KiB atomic write"
[ "$(after "ktool awrite $f 4096 16384")" = "err EINVAL" ] || fail "the misaligned atomic write was not refused"
[ "$(after "ktool awrite $f 0 32768")" = "err EINVAL" ] || fail "the 32 KiB atomic write was not refused"
grep -qE "^ +\`-$f +file +16K yes +4K +16K$" "$WORK/demo" || fail "devices --probe of $f"
grep -qE "^$f +16K +[0-9]+ +0 +0 +0 aligned$" "$WORK/demo" || fail "extalign check of $f"
grep -q $'\033' "$WORK/demo" && fail "escape sequences in piped output"
grep -q '^== Done' "$WORK/demo" || fail "the demo did not finish"
echo ok
