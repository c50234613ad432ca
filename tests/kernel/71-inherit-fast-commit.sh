#!/bin/bash
# Issue 22: a file created in a directory that hands down an extent size
# hint gets the hint in its creating transaction; that must not make the
# transaction ineligible for a fast commit (every fsync of a new file would
# cost a full journal commit).  And what a fast commit logged must replay:
# after a crash (every write dropped after the fsyncs), the new files are
# there with their hint, forcealign and data.
. "$(dirname "$0")/lib.sh"

BOTH_INHERIT=0x101000 BOTH=0x100800
UNIT=65536
N=6
DM=extalign-fc

command -v dmsetup >/dev/null || skip "no dmsetup"
sectors=$((256 * 2048))
dm_linear $DM "$UBD" $sectors || skip "dmsetup create (no device-mapper?)"
dev=$DM_DEV

# The inode table is zeroed by mkfs (lazy_itable_init=0) over a device
# filled with noise.  A replay reads the inode it replays before it
# copies the logged body over it (ext4_fc_replay_inode(), unchanged
# upstream code), so a slot never written since mkfs must hold zeros,
# not whatever an earlier test left there: with lazily zeroed inode
# tables that read fails with "iget: bad extra_isize" or "bad extended
# attribute block" and marks the filesystem with errors (seen in CI).
# The noise makes that failure the same every time, whatever test ran
# before on this disk, should the inode table ever be left unzeroed.
dd if=/dev/urandom of="$dev" bs=1M count=16 oflag=direct 2>/dev/null ||
	die "fill $dev with noise"
fresh_ext4 "$dev" -b 4096 -O fast_commit -E nodiscard,lazy_itable_init=0
d=$MNT/d
mkdir "$d"
expect "inherited hint and forcealign" "$(kt setx "$d" $BOTH_INHERIT $UNIT)" ok
sync
fcinfo=/proc/fs/ext4/${dev#/dev/}/fc_info
xattr_reason() { sed -n 's/^"Extended attributes changed":[[:space:]]*//p' "$fcinfo"; }
fast_commits() { awk '/commits/ { print $1; exit }' "$fcinfo"; }
x0=$(xattr_reason) fc0=$(fast_commits)
for ((i = 0; i < N; i++)); do
	xfs_io -f -c "pwrite -q -S 0xa5 0 4k" -c fsync "$d/f$i" || die "f$i"
done
x1=$(xattr_reason) fc1=$(fast_commits)
echo "fast commits: $((fc1 - fc0)), xattr ineligible marks: $((x1 - x0)) for $N new files"
expect "transactions made ineligible by the inherited hint" $((x1 - x0)) 0
[ $((fc1 - fc0)) -ge $((N / 2)) ] || die "only $((fc1 - fc0)) fast commits for $N fsyncs"

# The crash: from now on every write is dropped, then the journal (with
# its fast commits) is replayed at the next mount.
dm_table $DM "0 $sectors flakey $UBD 0 0 3600 1 drop_writes"
umount "$MNT" || die "umount"
dm_table $DM
mount -t ext4 "$dev" "$MNT" || die "mount after the crash"
for ((i = 0; i < N; i++)); do
	expect "f$i after replay" "$(kt getx "$d/f$i")" "xflags=$BOTH extsize=$UNIT"
	filled "$d/f$i" 0 4096 || die "f$i: data after replay"
	units_aligned "$d/f$i" $UNIT || die "f$i: not aligned after replay"
done
umount "$MNT"
e2fsck -fn "$dev" >"$SCRATCH/fsck.log" 2>&1 || { cat "$SCRATCH/fsck.log"; die "e2fsck -fn $dev"; }
exit 0
