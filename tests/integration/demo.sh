#!/bin/bash
# scripts/demo.sh keeps its promise: it prints every section, touches
# nothing outside its temporary directory (no /run/extalign/state, no
# /var/lib/extalign), leaves no temporary directory behind and prints no
# colour codes into a pipe.  /run and /var/lib are seen through a private
# mount namespace: /run a fresh tmpfs, /var/lib an overlay whose upper
# layer collects every write.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd unshare
cd "$TOP" || exit 1
[ -x build/extalign ] || skip "build the programs first (make)"
grep -q overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
grep -q overlay /proc/filesystems || skip "no overlayfs to collect writes to /var/lib"

ns=$WORK/ns
mkdir -p "$ns/up" "$ns/wk" "$ns/runview"
ls -d /tmp/extalign-demo.* 2>/dev/null | sort >"$WORK/tmp-before" || true

# The demo's stdout is a pipe (cat), as in "scripts/demo.sh | less".
unshare -m --propagation private bash -c '
	set -e
	mount -t tmpfs tmpfs /run
	mount -t overlay overlay -o lowerdir=/var/lib,upperdir="$1/up",workdir="$1/wk" /var/lib
	rc=0
	scripts/demo.sh 2>&1 | cat >"$2/demo.out" || rc=$?
	# What the demo left in /run, but libmount'"'"'s own utab.
	(cd /run && find . -mindepth 1 ! -path "./mount" ! -path "./mount/*") >"$2/run-left"
	exit "$rc"
' demo-ns "$ns" "$WORK" || { cat "$WORK/demo.out"; fail "scripts/demo.sh failed"; }

cat "$WORK/demo.out"
for section in "XFS (stripe-aligned" "A database directory on XFS" "set refuses it" \
	"Bad input changes nothing" "ext4 on this kernel" "== Done"; do
	grep -qF "$section" "$WORK/demo.out" || fail "the demo printed no section '$section'"
done
grep -q $'\033' "$WORK/demo.out" && fail "the demo printed escape sequences into a pipe"
[ -s "$WORK/run-left" ] && fail "the demo wrote under /run: $(tr '\n' ' ' <"$WORK/run-left")"
written=$(cd "$ns/up" && find . -mindepth 1)
[ -z "$written" ] || fail "the demo wrote under /var/lib: $(echo $written)"
ls -d /tmp/extalign-demo.* 2>/dev/null | sort >"$WORK/tmp-after" || true
left=$(comm -13 "$WORK/tmp-before" "$WORK/tmp-after")
[ -z "$left" ] || fail "the demo left $left"
echo ok
