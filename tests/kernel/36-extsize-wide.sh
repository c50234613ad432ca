#!/bin/bash
# Issue 22: a request longer than one aligned allocation can be (the
# 32767 block unwritten extent limit, mballoc's 8192 block largest buddy
# order on 4 KiB blocks) is aligned piece by piece, not left unaligned as
# a whole: a 1 GiB fallocate on a file with a 64 KiB hint is in whole
# aligned units.  The filesystem's backup superblocks sit at the start of
# groups 1, 3, 5, 7 and 9, so an unaligned allocation of 1 GiB runs into
# them at odd places.
. "$(dirname "$0")/lib.sh"

UNIT=65536

fresh_ext4 "$UBD" -b 4096
f=$MNT/f
: >"$f"
expect "hint" "$(kt setx "$f" 0x800 $UNIT)" ok
fallocate -l 1g "$f" || die "fallocate 1 GiB"
units_aligned "$f" $UNIT || die "1 GiB fallocate not in aligned units"
ok "1 GiB fallocate: whole aligned units"
umount "$MNT"
exit 0
