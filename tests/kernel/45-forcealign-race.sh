#!/bin/bash
# Issue 22.3: two allocations racing for the holes of one forcealign unit
# must not report corruption.  Page faults, fallocate and a direct write
# fill holes of the same unit at once (ktool race, caches dropped before
# every round so that the allocation sleeps and the others run); none may
# get SIGBUS or EUCLEAN, the kernel may not warn of a broken unit, and the
# file must end up in whole aligned units.
. "$(dirname "$0")/lib.sh"

UNIT=$((256 * 1024))
ROUNDS=24

fresh_ext4 "$UBD" -b 4096
f=$MNT/f
: >"$f"
[ "$(kt setx "$f" 0x100800 $UNIT)" = ok ] || die "forcealign on $f"
dmesg -C
res=$(kt race "$f" $UNIT $ROUNDS)
echo "$res"
warn=$(dmesg | grep -c 'forcealign:')
dmesg | grep 'forcealign:' | head -5
expect "racing faults, fallocate and direct writes" "$res" "ok $ROUNDS rounds"
expect "warnings of a broken unit" "$warn" 0
units_aligned "$f" $UNIT || die "not in whole aligned units"
for ((u = 0; u < ROUNDS; u++)); do
	filled "$f" $((u * UNIT + 3 * 4096)) 4096 || die "unit $u: direct write lost"
done
remount "$UBD"
units_aligned "$f" $UNIT || die "not in whole aligned units after remount"
umount "$MNT"
exit 0
