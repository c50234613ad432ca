#!/bin/bash
# Issue 17: a large file whose realignment is stopped by --max-time or
# SIGTERM goes on where it left off on the next run; a kept copy whose
# original changed meanwhile is dropped, never used.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realign.bash"
mnt=$(mkfs_mount xfs 400)

for how in max-time sigterm; do
	mkdir "$mnt/$how"
	f=$mnt/$how/file
	dd if=/dev/urandom of="$f" bs=1M count=40 status=none
	sync
	h=$(sha256sum <"$f")
	rc=0
	if [ $how = max-time ]; then
		# Through the page cache first; the next run goes on with O_DIRECT.
		"${R[@]}" --extsize 64k --bwlimit 8M --max-time 2 --buffered --json "$f" \
			>"$WORK/out" 2>&1 || rc=$?
	else
		"${R[@]}" --extsize 64k --bwlimit 8M --json "$f" >"$WORK/out" 2>&1 &
		pid=$!
		sleep 2
		kill -TERM "$pid"
		wait "$pid" || rc=$?
	fi
	[ "$rc" = 1 ] || { cat "$WORK/out" >&2; fail "$how: exit $rc, expected 1 (stopped)"; }
	[ "$(json outcome)" = cancelled ] || fail "$how: not cancelled"
	kept=$(json resume_kept)
	python3 -c 'import json,sys; s = json.load(open(sys.argv[1]))["summary"]
assert s["kept_to_resume"] == int(sys.argv[2]) and s["discarded"] == 0, s' "$WORK/out" "$kept" ||
		fail "$how: summary"
	[ "$kept" -ge $((4 * MiB)) ] && [ "$kept" -lt $((40 * MiB)) ] || fail "$how: kept $kept"
	[ "$(sha256sum <"$f")" = "$h" ] || fail "$how: content changed by the stop"
	[ "$(xfs_extsize "$f")" = 0 ] || fail "$how: replaced at the stop"
	[ "$(leftovers)" = 2 ] || fail "$how: no kept copy and record"
	# Over the directory: the walk meets the kept copy and leaves it be.
	expect_exit 0 "${R[@]}" --extsize 64k --json "$mnt/$how"
	[ "$(json outcome)" = "done" ] || fail "$how: second run"
	[ "$(json resumed_from)" = "$kept" ] || fail "$how: did not go on at $kept"
	[ "$(json copied)" = $((40 * MiB - kept)) ] || fail "$how: copied $(json copied) again"
	[ "$(sha256sum <"$f")" = "$h" ] || fail "$how: content changed by the resumed run"
	[ "$(xfs_extsize "$f")" = 65536 ] || fail "$how: no hint after the resumed run"
	[ "$(leftovers)" = 0 ] || fail "$how: leftovers after the resumed run"
	echo "$how: stopped at $kept, went on from there"
done

# The original changes between the runs: the kept copy is dropped.
f=$mnt/changed
dd if=/dev/urandom of="$f" bs=1M count=40 status=none
sync
expect_exit 1 "${R[@]}" --extsize 64k --bwlimit 8M --max-time 2 "$f"
[ "$(leftovers)" = 2 ] || fail "changed: nothing kept"
dd if=/dev/urandom of="$f" bs=4k count=1 seek=10 conv=notrunc status=none
sync
h=$(sha256sum <"$f")
expect_exit 0 "${R[@]}" --extsize 64k --json "$f"
[ "$(json resumed_from)" = 0 ] || fail "changed: a stale copy was used"
[ "$(json copied)" = $((40 * MiB)) ] || fail "changed: not copied in full"
[ "$(sha256sum <"$f")" = "$h" ] || fail "changed: content"
[ "$(leftovers)" = 0 ] || fail "changed: the stale copy was left behind"

# A kept copy older than a week (EA_REALIGN_RESUME_MAX_AGE_S) is removed at
# the next start, even one whose original did not change.
f=$mnt/old
dd if=/dev/urandom of="$f" bs=1M count=40 status=none
sync
h=$(sha256sum <"$f")
expect_exit 1 "${R[@]}" --extsize 64k --bwlimit 8M --max-time 2 "$f"
[ "$(leftovers)" = 2 ] || fail "old: nothing kept"
: >"$mnt/other"
touch -d '6 days ago' "$STATE"/.extalign-realign.*
expect_exit 0 "${R[@]}" --extsize 64k "$mnt/other"
[ "$(leftovers)" = 2 ] || fail "old: a copy kept 6 days was removed"
touch -d '8 days ago' "$STATE"/.extalign-realign.*
: >"$mnt/other2"
expect_exit 0 "${R[@]}" --extsize 64k "$mnt/other2"
[ "$(leftovers)" = 0 ] || fail "old: a copy kept 8 days was not removed"
expect_exit 0 "${R[@]}" --extsize 64k --json "$f"
[ "$(json resumed_from)" = 0 ] || fail "old: resumed from a removed copy"
[ "$(sha256sum <"$f")" = "$h" ] || fail "old: content"
echo ok
