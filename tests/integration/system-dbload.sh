#!/bin/bash
# The system test's load and its power-cut check (tests/system/dbload.py),
# on a loop-mounted XFS: a clean run passes, and the check finds each kind
# of damage it exists for: a torn unit, a lost durable unit, a durable file
# gone, a durable removal undone, a durable file cut short; and it takes a
# creation the cut interrupted, at any size up to its intent.
. "$(dirname "$0")/lib.sh"
need_cmd python3
DB=$TOP/tests/system/dbload.py
M=$(mkfs_mount xfs 300)
mkdir "$M/db"
python3 "$DB" run "$M/db" "$WORK/log" 2 11 >"$WORK/run.out" || fail "dbload run"
grep -q '^dbload: [0-9]* operations' "$WORK/run.out" || fail "dbload run said nothing"
expect_exit 0 python3 "$DB" verify "$M/db" "$WORK/log"
grep -q '"lost": 0, "torn": 0, "problems": 0' "$WORK/out" || { cat "$WORK/out"; fail "a clean run did not verify"; }
unit=$(awk '$1 == "unit" { print $2; exit }' "$WORK/log")

# A file whose last durable state has at least two units.
f=$(ls "$M/db" | while read -r n; do
	[ "$(stat -c %s "$M/db/$n")" -ge $((2 * unit)) ] && { echo "$n"; break; }
done)
[ -n "$f" ] || fail "no file of two units to damage"
cp "$M/db/$f" "$WORK/keep"

# Torn: the second half of unit 0 replaced by unit 1's.
dd if="$WORK/keep" of="$M/db/$f" bs=$((unit / 2)) skip=2 seek=1 count=1 conv=notrunc status=none
expect_exit 1 python3 "$DB" verify "$M/db" "$WORK/log"
grep -q "$f: unit 0 holds 2 different writes" "$WORK/out" || { cat "$WORK/out"; fail "torn unit not found"; }
grep -q '"torn": 1' "$WORK/out" || fail "torn unit not counted"

# Lost: unit 1 zeroed.
cp "$WORK/keep" "$M/db/$f"
dd if=/dev/zero of="$M/db/$f" bs="$unit" seek=1 count=1 conv=notrunc status=none
expect_exit 1 python3 "$DB" verify "$M/db" "$WORK/log"
grep -q "$f: unit 1 is zeros" "$WORK/out" || { cat "$WORK/out"; fail "lost unit not found"; }

# A durable file removed; a durably removed file back.
cp "$WORK/keep" "$M/db/$f"
mv "$M/db/$f" "$WORK/moved"
expect_exit 1 python3 "$DB" verify "$M/db" "$WORK/log"
grep -q "$f: gone, but its creation was durable" "$WORK/out" || { cat "$WORK/out"; fail "lost file not found"; }
mv "$WORK/moved" "$M/db/$f"
gone=$(awk '$1 == "d" && $2 == "gone" { g = $3 } END { print g }' "$WORK/log")
if [ -n "$gone" ]; then
	cp "$WORK/keep" "$M/db/$gone"
	expect_exit 1 python3 "$DB" verify "$M/db" "$WORK/log"
	grep -q "$gone: there, but its removal was durable" "$WORK/out" || { cat "$WORK/out"; fail "undone removal not found"; }
	rm "$M/db/$gone"
fi
expect_exit 0 python3 "$DB" verify "$M/db" "$WORK/log"

# A cut in the middle of a creation: the file there at any size up to its
# intent (each direct write grows it on completion) is no loss; once the
# creation was durable, a shorter file is.
cp "$WORK/log" "$WORK/log.cut"
echo "i size fcut 999 3" >>"$WORK/log.cut"
: >"$M/db/fcut"
expect_exit 0 python3 "$DB" verify "$M/db" "$WORK/log.cut"
head -c "$unit" /dev/zero >"$M/db/fcut"
expect_exit 0 python3 "$DB" verify "$M/db" "$WORK/log.cut"
echo "d size fcut 999 3" >>"$WORK/log.cut"
expect_exit 1 python3 "$DB" verify "$M/db" "$WORK/log.cut"
grep -q "fcut: size $unit, allowed \[3\] units" "$WORK/out" || { cat "$WORK/out"; fail "a short durable file not found"; }
rm "$M/db/fcut"
echo ok
