#!/bin/bash
# Issue 22.7 / 15.3: inline data is off for a file whose extent size hint
# (and forcealign) was set by FS_IOC_FSSETXATTR.  On a filesystem made
# with -O inline_data a new empty file may keep its first small buffered
# write in the inode; with a hint that write must allocate a whole unit
# instead, aligned, as files that inherit the hint do (70-inherit.sh).
# Whether a file has inline data is read from the inode on disk (debugfs,
# flag 0x10000000) and its blocks from FIEMAP.
. "$(dirname "$0")/lib.sh"

EXTSIZE=0x800 BOTH=0x100800
UNIT=65536
INLINE_FL=0x10000000

# inline FILE: "inline" if the inode of FILE (in $MNT) has the inline data
# flag on disk, "blocks" if not.
inline() {
	local ino flags

	ino=$(stat -c %i "$1")
	sync
	flags=$(debugfs -R "stat <$ino>" "$UBD" 2>/dev/null |
		sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
	[ -n "$flags" ] || die "debugfs: no flags for $1"
	if (( flags & INLINE_FL )); then echo inline; else echo blocks; fi
}

# small FILE: the small buffered write that ext4 keeps inline when it can.
small() {
	printf 'small' >"$1" || die "write $1"
}

fresh_ext4 "$UBD" -b 4096 -O inline_data

# The control: a plain file's small write is inline on this filesystem,
# so the checks below can tell.
small "$MNT/plain"
expect "plain file: data inline" "$(inline "$MNT/plain")" inline

# hinted_small NAME XFLAGS WHAT KIND: a new empty file NAME gets XFLAGS
# (WHAT) and a UNIT hint, then a small write, which must take a whole
# aligned unit; KIND names the file in the messages.
hinted_small() {
	: >"$MNT/$1"
	expect "$3 on a new empty file" "$(kt setx "$MNT/$1" "$2" $UNIT)" ok
	small "$MNT/$1"
	expect "$4 file: no inline data" "$(inline "$MNT/$1")" blocks
	units_aligned "$MNT/$1" $UNIT || die "$4 file: not a whole aligned unit"
	ok "$4 file: its small write took a whole aligned unit"
}
hinted_small hinted $EXTSIZE hint hinted
hinted_small fa $BOTH forcealign forcealign

# A file whose data is inline already has data: no hint (spec item 4).
expect "hint on a file with inline data" \
	"$(kt setx "$MNT/plain" $EXTSIZE $UNIT)" "err EINVAL"

# A hint set and cleared again leaves the file plain: that it then gets
# blocks rather than inline data is fine either way, so only the content
# is checked, after a remount with the rest.
: >"$MNT/cleared"
kt setx "$MNT/cleared" $EXTSIZE $UNIT >/dev/null
kt setx "$MNT/cleared" 0 0 >/dev/null
small "$MNT/cleared"

remount "$UBD"
for f in plain hinted fa cleared; do
	expect "$f after remount" "$(cat "$MNT/$f")" small
done
# Writing on after the remount keeps the hinted files in whole units.
xfs_io -c "pwrite -q -S 0xa5 4096 8192" -c fsync "$MNT/hinted" || die "write on"
units_aligned "$MNT/hinted" $UNIT || die "hinted file after remount"
xfs_io -c "pwrite -q -S 0xa5 $UNIT 8192" -c fsync "$MNT/fa" || die "write on"
units_aligned "$MNT/fa" $UNIT || die "forcealign file after remount"
ok "hinted and forcealign files stay in whole units after remount"
umount "$MNT"
