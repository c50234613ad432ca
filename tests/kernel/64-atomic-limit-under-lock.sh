#!/bin/bash
# The largest atomic write depends on forcealign, which FSSETXATTR changes
# under the inode lock: a write that was already waiting for the lock when
# forcealign was cleared must be refused, not let through.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800 EXTSIZE=0x800
K=1024

sd=$(scsi_disk) || die "no scsi_debug disk"
forcealign() {
	: >"$1"
	[ "$(kt setx "$1" $BOTH "$2")" = ok ] || die "forcealign $2 on $1"
}

fresh_ext4 "$sd" -b 4096
forcealign "$MNT/f" $((64 * K))
expect "16k atomic write" "$(kt awrite "$MNT/f" 0 16384)" "ok 16384"

# The limit under the lock.  scsi_debug delays every command, so that an
# extending direct write holds i_rwsem for a while; meanwhile FSSETXATTR
# clearing forcealign queues for the lock, then a 16k atomic write.  The
# write runs after forcealign is gone and must be refused.
delay=/sys/bus/pseudo/drivers/scsi_debug/delay
[ -w $delay ] || skip "no scsi_debug delay knob"
old=$(cat $delay)
echo 150 >$delay
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
# scsi_debug refuses a new delay while commands are queued: retry.
for _ in $(seq 100); do
	echo "$old" 2>/dev/null >$delay && break
	sleep 0.2
done
expect "scsi_debug delay restored" "$(cat $delay)" "$old"
expect "forcealign cleared meanwhile" "$(cat "$SCRATCH/setx")" ok
expect "statx after" "$(kt statx "$MNT/f")" "mask=1 attr=1 min=4096 max=4096 segments=1"
expect "16k atomic write queued behind the clear" "$(cat "$SCRATCH/awrite")" "err EINVAL"
umount "$MNT"
exit 0
