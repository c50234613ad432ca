#!/bin/bash
# Issue 17: power cuts during realignment lose nothing on our ext4.  The
# loop of tests/integration/realign-powercut.bash: realign-cut realigns a
# set of files (the rename path for files without the hint, EXT4_IOC_MOVE_EXT
# for the hinted ones) and cuts at a random point with EXT4_IOC_SHUTDOWN
# (no journal flush: nothing more reaches the disk); remount (journal
# recovery), "extalign realign" cleans up and finishes, every file must
# match its checksum and no leftover may be visible.  REALIGN_CUTS
# (default 200) sets the number of cut points.
#
# A shut down ext4 still writes its superblock when it is unmounted
# (ext4_put_super commits it with the journal aborted), and that copy holds
# what uncommitted transactions left in it: once, the head of the orphan
# list was an inode whose allocation never reached the journal, and the
# next mount failed with "bad orphan inode" and left 30 orphans behind.  A
# power cut writes nothing more, so the filesystem sits on a dm device
# that drops every write from the cut until it is unmounted.
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EXTALIGN=$TOP/build/extalign
CUT=$TOP/build/tests/tools/realign-cut
for p in "$EXTALIGN" "$CUT"; do
	[ -x "$p" ] || die "$p is not built: run 'make tests' in $TOP first"
done
command -v dmsetup >/dev/null || skip "no dmsetup"
WORK=$(mktemp -d /run/extalign-powercut.XXXXXX) || die "mktemp"
# shellcheck disable=SC2016 # expanded when the test exits
at_exit 'rm -rf "$WORK"'
fail() { die "$@"; }
# shellcheck source=../integration/realign-powercut.bash
. "$TOP/tests/integration/realign-powercut.bash"

DM=extalign-powercut
sectors=$((256 * 2048))
dm_linear $DM "$UBD" $sectors || skip "dmsetup create (no device-mapper?)"
dev=$DM_DEV
fresh_ext4 "$dev" -b 4096
mnt=$MNT
need_kept_hint
# A cut that lands while an unlinked file is being evicted (realign's
# temporary, or the source it replaced) finds the journal aborted between
# starting the handle and marking the inode dirty: ext4 warns, leaves the
# inode on the orphan list, and the next mount deletes it ("1 orphan inode
# deleted").  Seen once so far (QEMU, the --server kernel, 2026-12-07):
# a cut may do that, and the checks after the remount still hold.
allow_klog 'EXT4-fs warning \(device dm-[0-9]+\): ext4_evict_inode:[0-9]+: couldn.t mark inode dirty \(err -30\)'

pc_hint() { kt setx "$1" 0x800 65536 >/dev/null || die "extsize on $1"; }
# The cut is over when the filesystem is unmounted: nothing written after
# it (the superblock ext4_put_super writes) reaches the disk.
pc_remount() {
	dm_table $DM "0 $sectors flakey $UBD 0 0 1 1 drop_writes"
	umount "$MNT" || die "umount $MNT"
	dm_table $DM
	mount -t ext4 "$dev" "$MNT" || die "mount $dev"
}

pc_make_set
start=$(date +%s)
pc_run "${REALIGN_CUTS:-200}"
echo "power-cut loop: $(($(date +%s) - start))s"
