#!/bin/bash
# kill -9 during realignment loses nothing: at each phase on purpose (via
# tests/tools/realign-crash), then at random points.  After every kill the
# file is the old one or the new one, complete, and the next run removes
# whatever was left behind.  REALIGN_KILL_TRIALS (default 100) sets the
# number of random kills.
. "$(dirname "$0")/lib.sh"
need_cmd xfs_io
CRASH=${CRASH:-$TOP/build/tests/tools/realign-crash}
[ -x "$CRASH" ] || fail "$CRASH not built"
mnt=$(mkfs_mount xfs 300)
STATE=$WORK/state
d=$mnt/d
mkdir "$d"

leftovers() { find "$d" "$STATE" -name '.extalign-realign.*' 2>/dev/null | wc -l; }

# make_file: 3 MiB of data with a hole, no hint; sets $h to its checksum.
make_file() {
	rm -f "$d/f"
	dd if=/dev/urandom of="$d/f" bs=1M count=2 status=none
	dd if=/dev/urandom of="$d/f" bs=1M count=1 seek=5 conv=notrunc status=none
	h=$(sha256sum <"$d/f")
}

for phase in copy verify linked swap exchanged; do
	make_file
	rc=0
	"$CRASH" "$phase" 65536 "$STATE" "$d/f" >/dev/null 2>&1 || rc=$?
	[ "$rc" = 137 ] || fail "$phase: the helper was not killed (exit $rc)"
	[ "$(sha256sum <"$d/f")" = "$h" ] || fail "$phase: content changed by a kill"
	case $phase in
	copy | verify)
		# The copy was unnamed: nothing can be left.
		[ "$(leftovers)" = 0 ] || fail "$phase: leftover after a kill before linking"
		[ "$(xfs_extsize "$d/f")" = 0 ] || fail "$phase: the old file was replaced"
		;;
	linked | swap)
		# Linked under its leftover name, recorded, not yet in place.
		[ "$(find "$d" -name '.extalign-realign.*' | wc -l)" = 1 ] || fail "$phase: no leftover"
		[ "$(find "$STATE" -name '.extalign-realign.*' | wc -l)" = 1 ] || fail "$phase: no record"
		[ "$(xfs_extsize "$d/f")" = 0 ] || fail "$phase: the old file was replaced"
		;;
	exchanged)
		# The new file is in place; the old one holds the leftover name.
		[ "$(xfs_extsize "$d/f")" = 65536 ] || fail "exchanged: the new file is not in place"
		[ "$(find "$d" -name '.extalign-realign.*' | wc -l)" = 1 ] || fail "exchanged: no leftover"
		;;
	esac
	expect_exit 0 "$EXTALIGN" realign --state-dir "$STATE" --extsize 64k "$d"
	[ "$(leftovers)" = 0 ] || fail "$phase: leftovers survive the next run"
	[ "$(sha256sum <"$d/f")" = "$h" ] || fail "$phase: content changed by the next run"
	[ "$(xfs_extsize "$d/f")" = 65536 ] || fail "$phase: the next run did not realign"
done

# Random kills.  Each run first cleans up what the previous kill left.
trials=${REALIGN_KILL_TRIALS:-100}
dd if=/dev/urandom of="$WORK/base" bs=1M count=2 status=none
dd if=/dev/urandom of="$WORK/base" bs=1M count=1 seek=4 conv=notrunc status=none
h=$(sha256sum <"$WORK/base")
killed=0 finished=0
for i in $(seq "$trials"); do
	rm -f "$d/f"
	cp --reflink=never "$WORK/base" "$d/f"
	"$EXTALIGN" realign --state-dir "$STATE" --extsize 64k --bwlimit 40M -q "$d/f" \
		>/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '0.%03d' $((RANDOM % 120)))"
	kill -9 "$pid" 2>/dev/null || true
	rc=0
	wait "$pid" || rc=$?
	case $rc in
	137) killed=$((killed + 1)) ;;
	0) finished=$((finished + 1)) ;;
	*) fail "trial $i: realign exited $rc" ;;
	esac
	[ -f "$d/f" ] || fail "trial $i: the file is gone"
	[ "$(sha256sum <"$d/f")" = "$h" ] || fail "trial $i: content changed"
	ext=$(xfs_extsize "$d/f")
	[ "$ext" = 0 ] || [ "$ext" = 65536 ] || fail "trial $i: hint $ext"
done
echo "random kills: $killed killed, $finished finished of $trials"
[ "$killed" -gt 0 ] || fail "no trial was killed: the random kills test nothing"
expect_exit 0 "$EXTALIGN" realign --state-dir "$STATE" --extsize 64k "$d"
[ "$(leftovers)" = 0 ] || fail "leftovers after the random kills and a clean run"
[ "$(sha256sum <"$d/f")" = "$h" ] || fail "content changed after the random kills"
echo ok
