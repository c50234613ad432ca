#!/bin/bash
# Without a journal nothing orders the zeroing of a mixed unit before an
# atomic write, so multi-block atomic writes are refused there: statx
# reports one block, forcealign or bigalloc, and a 16k write is EINVAL.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024

sd=$(scsi_disk) || die "no scsi_debug disk"
forcealign() {
	: >"$1"
	[ "$(kt setx "$1" $BOTH "$2")" = ok ] || die "forcealign $2 on $1"
}

# No journal: one block only, forcealign or bigalloc.
fresh_ext4 "$sd" -b 4096 -O ^has_journal
forcealign "$MNT/f" $((64 * K))
expect "no journal: statx of a forcealign file" "$(kt statx "$MNT/f")" \
	"mask=1 attr=1 min=4096 max=4096 segments=1"
expect "no journal: 16k atomic write" "$(kt awrite "$MNT/f" 0 16384)" "err EINVAL"
expect "no journal: 4k atomic write" "$(kt awrite "$MNT/f" 0 4096)" "ok 4096"
umount "$MNT"
fresh_ext4 "$sd" -b 4096 -O bigalloc,^has_journal -C 16384
: >"$MNT/b"
expect "no journal: statx, bigalloc 16k" "$(kt statx "$MNT/b")" \
	"mask=1 attr=1 min=4096 max=4096 segments=1"
expect "no journal: 16k atomic write, bigalloc" "$(kt awrite "$MNT/b" 0 16384)" "err EINVAL"
umount "$MNT"

exit 0
