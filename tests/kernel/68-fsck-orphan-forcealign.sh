#!/bin/bash
# After a crash with a forcealign file on the orphan list (an extending
# direct write or a truncate in flight: see test 67), the boot-time fsck
# (e2fsck -p, before the kernel mounts) releases the orphan itself and
# truncates the file to i_size.  Debian's e2fsck knows nothing of the
# unit rule and frees the blocks past EOF one by one, breaking the unit
# the kernel would have kept whole; the series' e2fsck (e2fsprogs/
# patches, issue 28) keeps the unit, with its blocks past EOF unwritten,
# and an atomic write into it works afterwards.
#
# The orphan state is made with debugfs (the superblock's orphan list
# pointing at the inode) on a forcealign file whose 16k unit holds 4k of
# data, on the atomic-capable scsi_debug disk; each cleanup is then
# checked with lib.sh's check_alignment: the kernel's at mount, Debian's
# e2fsck -p (the "before"), the series' e2fsck -p.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024
sd=$(scsi_disk) || die "no scsi_debug disk"

# orphan_state: a fresh ext4 on $sd with one forcealign file, 4k written
# in its 16k unit, on the on-disk orphan list; prints its inode number.
orphan_state() {
	fresh_ext4 "$sd" -b 4096 >&2
	: >"$MNT/f"
	[ "$(kt setx "$MNT/f" $BOTH $((16 * K)))" = ok ] || die "forcealign"
	xfs_io -d -c "pwrite -q -S 0xa5 0 4k" "$MNT/f" || die "write"
	stat -c %i "$MNT/f"
	umount "$MNT" || die "umount"
	check_alignment "$sd" >&2 || die "not aligned before the orphan cleanup"
	ino=$(debugfs -R "stat /f" "$sd" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\) .*/\1/p')
	debugfs -w -R "ssv last_orphan $ino" "$sd" 2>/dev/null || die "debugfs ssv last_orphan"
}

# The kernel's orphan cleanup at mount keeps the unit.
ino=$(orphan_state)
expect "orphan list head" "$(dumpe2fs -h "$sd" 2>/dev/null | sed -n 's/^First orphan inode: *//p')" "$ino"
mount -t ext4 "$sd" "$MNT" || die "mount"
umount "$MNT"
check_alignment "$sd" || die "the kernel's orphan cleanup broke the unit"
ok "the kernel's orphan cleanup keeps the forcealign unit whole"

# Before: Debian's e2fsck breaks it.
if debian_e2fsck_here; then
	ino=$(orphan_state)
	"$DEBIAN_E2FSCK" -p "$sd" >"$SCRATCH/fsck-debian.log" 2>&1
	cat "$SCRATCH/fsck-debian.log"
	if check_alignment "$sd" >"$SCRATCH/align-debian.log"; then
		die "Debian's e2fsck -p kept the unit: this test no longer shows the break it is about"
	fi
	ok "before: Debian's e2fsck -p breaks the unit: $(grep '^inode' "$SCRATCH/align-debian.log" | head -n 1)"
	# Leave a filesystem the cleanup's alignment check passes.
	debugfs -w -R "rm /f" "$sd" 2>/dev/null
fi

# After: the series' e2fsck keeps it.
[ -n "$SERIES_E2FSCK" ] ||
	skip "no patched e2fsprogs in the guest (e2fsprogs/check.sh builds them)"
ino=$(orphan_state)
"$SERIES_E2FSCK" -p "$sd" >"$SCRATCH/fsck-p.log" 2>&1
cat "$SCRATCH/fsck-p.log"
grep -q "Truncating orphaned inode $ino" "$SCRATCH/fsck-p.log" ||
	die "the series' e2fsck -p did not clean up the orphan"
check_alignment "$sd" || die "the series' e2fsck -p broke the unit"
ok "the series' e2fsck -p keeps the forcealign unit whole"
expect "unit after e2fsck -p" \
	"$(debugfs -R "ex /f" "$sd" 2>/dev/null | sed 's|/ *|/|g' |
		awk 'NR > 1 { print $3 "-" $5 ":" $9 ($10 == "Uninit" ? "u" : "") }' | paste -sd' ')" \
	"0-0:1 1-3:3u"
mount -t ext4 "$sd" "$MNT" || die "mount"
expect "size after e2fsck -p" "$(stat -c %s "$MNT/f")" 4096
expect "16k atomic write into the EOF unit" "$(kt awrite "$MNT/f" 0 16384)" "ok 16384"
expect "size after the atomic write" "$(stat -c %s "$MNT/f")" 16384
umount "$MNT"
check_alignment "$sd" || die "not aligned after the atomic write"
ok "an atomic write into the unit the series' e2fsck kept works"
