#!/bin/bash
# extalign apply --dry-run is a true dry run: it says it would refuse where
# the real run refuses, with the same exit status; it lists paths only with
# --verbose, --quiet prints nothing but errors; and the command it suggests
# for files with data works as printed.
. "$(dirname "$0")/lib.sh"
need_cmd xfs_io
mnt=$(mkfs_mount xfs 300)

mkdir -p "$mnt/db/a"
touch "$mnt/db/t1.ibd" "$mnt/db/a/t2.ibd"
dd if=/dev/urandom of="$mnt/db/a/full.ibd" bs=4k count=5 status=none
sum=$(md5sum <"$mnt/db/a/full.ibd")
cat >"$WORK/conf" <<EOF2
[rule db]
directory = $mnt/db
extsize = 64k
realign = yes
EOF2

# Without --verbose: the summary only, no path.
expect_exit 0 "$EXTALIGN" apply --dry-run --config "$WORK/conf"
grep -q "$mnt/db/t1.ibd" "$WORK/out" && fail "--dry-run lists paths without --verbose"
expect_in out "2 directories would be set to inherit, 2 empty files would be hinted"
expect_exit 0 "$EXTALIGN" apply -n -v --config "$WORK/conf"
expect_in out "$mnt/db/t1.ibd: would be hinted (rule 'db')"
[ "$(xfs_extsize "$mnt/db/t1.ibd")" = 0 ] || fail "--dry-run changed a file"
# --quiet: nothing on stdout.
expect_exit 0 "$EXTALIGN" apply -n -q --config "$WORK/conf"
[ -s "$WORK/out" ] && { cat "$WORK/out"; fail "--quiet printed"; }

# forcealign, which this XFS does not keep: the real run refuses it, so
# does the dry run, with the same exit status and the same message.
mkdir -p "$mnt/strict"
touch "$mnt/strict/s1"
printf '[rule strict]\ndirectory = %s/strict\nextsize = 64k\nforcealign = yes\n' "$mnt" >"$WORK/conf-f"
rc_dry=0 rc_real=0
"$EXTALIGN" apply -n --config "$WORK/conf-f" >"$WORK/out" 2>"$WORK/err" || rc_dry=$?
"$EXTALIGN" apply -q --config "$WORK/conf-f" >"$WORK/out.real" 2>"$WORK/err.real" || rc_real=$?
[ "$rc_dry" = "$rc_real" ] && [ "$rc_real" != 0 ] ||
	{ cat "$WORK/err" "$WORK/err.real"; fail "dry run exit $rc_dry, real run exit $rc_real"; }
diff -u "$WORK/err.real" "$WORK/err" || fail "dry run and real run say different things"
[ -s "$WORK/out.real" ] && { cat "$WORK/out.real"; fail "--quiet printed on a real run"; }
rm -rf "$mnt/strict"

# Not the owner: the real run is refused (EPERM), so is the dry run.
if command -v setpriv >/dev/null; then
	chmod 755 "$WORK"
	chmod 644 "$WORK/conf"
	as_nobody() { setpriv --reuid nobody --regid nogroup --clear-groups "$@"; }
	rc_dry=0 rc_real=0
	as_nobody "$EXTALIGN" apply -n --config "$WORK/conf" >/dev/null 2>"$WORK/err" || rc_dry=$?
	as_nobody "$EXTALIGN" apply --config "$WORK/conf" >/dev/null 2>"$WORK/err.real" || rc_real=$?
	[ "$rc_dry" = "$rc_real" ] && [ "$rc_real" = 3 ] ||
		{ cat "$WORK/err" "$WORK/err.real"; fail "not the owner: dry run exit $rc_dry, real run $rc_real"; }
	diff -u "$WORK/err.real" "$WORK/err" || fail "not the owner: the dry run says other things"
fi

# The suggested next command for the file with data works as printed.
expect_exit 0 "$EXTALIGN" apply --config "$WORK/conf"
cmd=$(sed -n 's/.*realignment candidates\{0,1\}: run \(extalign realign .*\)$/\1/p' "$WORK/out")
[ -n "$cmd" ] || { cat "$WORK/out"; fail "no command suggested for the candidates"; }
rc=0
eval "${cmd/extalign/\"\$EXTALIGN\"}" -q >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "suggested '$cmd' exits $rc"; }
[ "$(xfs_extsize "$mnt/db/a/full.ibd")" = 65536 ] || fail "suggested command did not realign"
[ "$(md5sum <"$mnt/db/a/full.ibd")" = "$sum" ] || fail "realign changed the data"

# ext4 on a kernel that keeps no hint: the real run exits 4; so does the
# dry run, saying so once.
mnt4=$(mkfs_mount ext4 128 -b 4096)
mkdir -p "$mnt4/db/x"
touch "$mnt4/db/x/f"
printf '[rule e]\ndirectory = %s/db\nextsize = 64k\n' "$mnt4" >"$WORK/conf4"
rc_dry=0 rc_real=0
"$EXTALIGN" apply -n --config "$WORK/conf4" >"$WORK/out" 2>"$WORK/err" || rc_dry=$?
"$EXTALIGN" apply --config "$WORK/conf4" >/dev/null 2>&1 || rc_real=$?
[ "$rc_dry" = "$rc_real" ] || { cat "$WORK/err"; fail "ext4: dry run exit $rc_dry, real run $rc_real"; }
if [ "$rc_real" = 4 ]; then
	[ "$(grep -c 'does not support' "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "dry run: not one message"; }
fi
echo ok
