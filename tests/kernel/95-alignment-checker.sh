#!/bin/bash
# lib.sh's check_alignment, which runs on every ext4 a test used (after the
# test, with e2fsck -fn), must see a forcealign inode whose blocks are not
# in whole units.  One is made with debugfs: a plain file with a block at
# 4k gets the on-disk hint and forcealign flags and a 16-block extsize.  A
# real forcealign file checks clean next to it.  Debian's e2fsck passes
# the inode in silence; the series' (e2fsprogs/) names it and passes it
# too: its data is good, only atomic writes into the unit fail.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024

fresh_ext4 "$UBD" -b 4096
good=$MNT/good
: >"$good"
expect "forcealign 64k" "$(kt setx "$good" $BOTH $((64 * K)))" ok
xfs_io -d -c "pwrite -q -S 0xa5 $((68 * K)) 8k" "$good" || die "write good"
xfs_io -f -d -c "pwrite -q -S 0xa5 4k 4k" "$MNT/bad" || die "write bad"
ino=$(stat -c %i "$MNT/bad")
umount "$MNT"

out=$(check_alignment "$UBD") || die "a real forcealign file does not check clean: $out"
echo "$out"
expect "forcealign inodes checked" "$(sed -n 's/.*checked \([0-9]*\) forcealign.*/\1/p' <<<"$out")" 1

debugfs -w -R "set_inode_field <$ino> flags 0xc80000" "$UBD" 2>/dev/null ||
	die "debugfs set_inode_field"
debugfs -w -R "ea_set <$ino> system.extsize 16" "$UBD" 2>/dev/null ||
	die "debugfs ea_set"
debugfs -R "stat <$ino>" "$UBD" 2>/dev/null | grep -q 'Flags: 0xc80000' ||
	die "the inode did not get the hint and forcealign flags"
/sbin/e2fsck -fn "$UBD" >"$SCRATCH/fsck.out" 2>&1 ||
	die "Debian's e2fsck -fn fails on the misaligned inode: $(cat "$SCRATCH/fsck.out")"
ok "Debian's e2fsck -fn passes the misaligned forcealign inode"
if [ -x "${EXTALIGN_E2FSPROGS:-}/e2fsck" ]; then
	"$EXTALIGN_E2FSPROGS/e2fsck" -fn "$UBD" >"$SCRATCH/fsck.out" 2>&1 ||
		die "the series' e2fsck -fn fails on the misaligned inode: $(cat "$SCRATCH/fsck.out")"
	grep -q "^/bad (inode $ino) is forcealign with 16-block units, but its unit at logical block 0 is not whole" \
		"$SCRATCH/fsck.out" || die "the series' e2fsck -fn does not name /bad: $(cat "$SCRATCH/fsck.out")"
	ok "the series' e2fsck -fn names the misaligned forcealign inode and passes it"
fi
if out=$(check_alignment "$UBD"); then
	echo "$out"
	die "check_alignment missed the misaligned forcealign inode $ino"
fi
echo "$out"
grep -q "^inode $ino (unit 16 blocks): run of 1 blocks at 1," <<<"$out" ||
	die "check_alignment did not name inode $ino"
ok "check_alignment names the misaligned inode"

# Leave a filesystem that cleanup's checks pass.
debugfs -w -R "rm /bad" "$UBD" 2>/dev/null || die "debugfs rm"
check_alignment "$UBD" || die "still misaligned after removing the file"
