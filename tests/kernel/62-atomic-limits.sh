#!/bin/bash
# Where multi-block atomic writes must be refused: on a filesystem without
# a journal (nothing orders the zeroing of a mixed unit before the write),
# and once forcealign was cleared, even for a write that was already
# waiting for the inode lock when it was cleared (the limit is checked
# under i_rwsem).
. "$(dirname "$0")/lib.sh"

BOTH=0x100800 EXTSIZE=0x800
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

# With a journal the same file takes 16k.
fresh_ext4 "$sd" -b 4096
forcealign "$MNT/f" $((64 * K))
expect "journal: 16k atomic write" "$(kt awrite "$MNT/f" 0 16384)" "ok 16384"

# The limit under the lock.  scsi_debug delays every command, so that an
# extending direct write holds i_rwsem for a while; meanwhile FSSETXATTR
# clearing forcealign queues for the lock, then a 16k atomic write.  The
# write runs after forcealign is gone and must be refused.
delay=/sys/bus/pseudo/drivers/scsi_debug/delay
[ -w $delay ] || skip "no scsi_debug delay knob"
old=$(cat $delay)
echo 300 >$delay
xfs_io -d -c "pwrite -q -S 0xa5 1m 4k" "$MNT/f" &
holder=$!
sleep 0.3
kt setx "$MNT/f" $EXTSIZE $((64 * K)) >"$SCRATCH/setx" &
setter=$!
sleep 0.3
kt awrite "$MNT/f" $((128 * K)) 16384 >"$SCRATCH/awrite" &
writer=$!
wait $holder $setter
wait $writer
echo "$old" >$delay
expect "forcealign cleared meanwhile" "$(cat "$SCRATCH/setx")" ok
expect "statx after" "$(kt statx "$MNT/f")" "mask=1 attr=1 min=4096 max=4096 segments=1"
expect "16k atomic write queued behind the clear" "$(cat "$SCRATCH/awrite")" "err EINVAL"
umount "$MNT"
exit 0
