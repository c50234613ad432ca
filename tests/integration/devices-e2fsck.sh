#!/bin/bash
# extalign devices says whether the e2fsck that checks ext4 at boot knows
# forcealign (issue 28): asked of Debian's e2fsck (it does not), of the
# series' (e2fsprogs/check.sh builds it; it does), and of one that is not
# there (it cannot tell).  Only when a row is an ext4: an XFS-only listing
# says nothing, and --noheadings leaves the note out.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd mkfs.xfs

ext4=$(mkfs_mount ext4 64 -b 4096)
xfs=$(mkfs_mount xfs 300)
e2b=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}

# knows E2FSCK TEXT JSON: devices on the ext4 with EXTALIGN_E2FSCK=E2FSCK
# says TEXT under the table and "knows_forcealign": JSON.
knows() {
	EXTALIGN_E2FSCK=$1 "$EXTALIGN" devices "$ext4" >"$WORK/out" 2>&1 ||
		fail "devices with $1: exit $?: $(cat "$WORK/out")"
	grep -F "e2fsck ($1)" "$WORK/out" | grep -qF "$2" || fail "devices with $1 does not say \"$2\": $(cat "$WORK/out")"
	EXTALIGN_E2FSCK=$1 "$EXTALIGN" devices --json "$ext4" >"$WORK/out.json" ||
		fail "devices --json with $1"
	python3 - "$WORK/out.json" "$1" "$3" <<'PY' || fail "devices --json with $1: $(cat "$WORK/out.json")"
import json, sys
d = json.load(open(sys.argv[1]))["e2fsck"]
assert d == {"path": sys.argv[2], "knows_forcealign": json.loads(sys.argv[3])}, d
PY
	echo "ok: $1: $2"
}

/sbin/e2fsck -V 2>&1 | grep -q 'Knows extent size hints' &&
	fail "/sbin/e2fsck is the series' (this test wants Debian's as the one that does not know)"
knows /sbin/e2fsck "does not know forcealign" false
knows "$WORK/no-e2fsck" "cannot tell" null

# Not asked without an ext4 row; no note with --noheadings.
"$EXTALIGN" devices "$xfs" >"$WORK/out" || fail "devices on XFS"
grep -q e2fsck "$WORK/out" && fail "an XFS-only listing talks of e2fsck: $(cat "$WORK/out")"
"$EXTALIGN" devices --json "$xfs" | grep -q '"e2fsck"' && fail "an XFS-only listing has an e2fsck key"
"$EXTALIGN" devices --noheadings "$ext4" | grep -q e2fsck && fail "--noheadings keeps the note"
echo "ok: no note without an ext4 row or with --noheadings"

[ -x "$e2b/bin/e2fsck" ] ||
	skip "no series e2fsck in $e2b/bin (e2fsprogs/check.sh builds it; the e2fsprogs suite runs first)"
knows "$e2b/bin/e2fsck" "knows forcealign" true
