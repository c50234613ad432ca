#!/bin/bash
# An atomic write over a unit that is partly written and partly unwritten
# zeroes and converts the unwritten part first, and makes that durable
# before the write: by committing the inode's transaction, which on a
# filesystem with fast commits is a fast commit, as fsync does, and not a
# commit of the whole journal per write.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024
UNIT=$((64 * K))
N=10

sd=$(scsi_disk) || die "no scsi_debug disk"
fresh_ext4 "$sd" -b 4096 -O fast_commit
f=$MNT/f
: >"$f"
[ "$(kt setx "$f" $BOTH $UNIT)" = ok ] || die "forcealign on $f"
for ((i = 0; i < N; i++)); do
	echo "pwrite -q -S 0xa5 $((i * UNIT)) 4k"
done | xfs_io -d "$f" || die "plain writes"
sync
info=/proc/fs/jbd2/${sd#/dev/}-8/info
fcinfo=/proc/fs/ext4/${sd#/dev/}/fc_info
[ -r "$info" ] || die "no $info"
commits() { awk 'NR == 1 { print $1 }' "$info"; }
fast_commits() { awk '/commits/ { print $1; exit }' "$fcinfo"; }
t0=$(commits) fc0=$(fast_commits)
for ((i = 0; i < N; i++)); do
	res=$(kt awrite "$f" $((i * UNIT)) $UNIT)
	[ "$res" = "ok $UNIT" ] || die "atomic write $i: $res"
done
t1=$(commits) fc1=$(fast_commits)
echo "journal commits: $((t1 - t0)), fast commits: $((fc1 - fc0)) for $N writes"
# A periodic commit may fall in the run; a commit per write may not.
[ $((t1 - t0)) -le 2 ] ||
	die "$((t1 - t0)) journal commits for $N mixed-unit atomic writes"
# (One fast commit can cover two writes.)
[ $((fc1 - fc0)) -ge $((N / 2)) ] || die "only $((fc1 - fc0)) fast commits for $N writes"
ok "mixed units: fast commits, not a journal commit per write"
filled "$f" 0 $((N * UNIT)) || die "data does not read back"
remount "$sd"
filled "$f" 0 $((N * UNIT)) || die "data does not read back after remount"
umount "$MNT"
exit 0
