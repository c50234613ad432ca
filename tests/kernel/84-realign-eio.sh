#!/bin/bash
# Issue 17: an I/O error during realignment's copy leaves the original as it
# was, says so, and exits 3 (a failure, cmd/extalign.8).  dm-flakey fails
# the I/O:
#   write  every block that was free (where the copy must go) fails writes
#          (error_writes), with O_DIRECT and through the page cache;
#   read   the original's own blocks fail reads and writes.
# The filesystem's metadata and journal are in blocks that were in use, so
# only the data I/O fails and ext4 stays healthy.  Afterwards, with the
# table back to linear: the original has its inode, its content (from the
# disk, caches dropped, and after a remount), nothing is left over, and a
# realign without the fault succeeds.
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EXTALIGN=$TOP/build/extalign
[ -x "$EXTALIGN" ] || die "$EXTALIGN is not built: run 'make' in $TOP first"
command -v dmsetup >/dev/null || skip "no dmsetup"
WORK=$(mktemp -d /run/extalign-eio.XXXXXX) || die "mktemp"
DM=extalign-eio
# The I/O errors this test injects, as ext4 reports them on the dm device.
allow_klog 'EXT4-fs warning \(device dm-[0-9]+\): ext4_end_bio:[0-9]+: I/O error'
sectors=$((256 * 2048))
# shellcheck disable=SC2016 # expanded when the test exits
at_exit 'rm -rf "$WORK"'
dm_linear $DM "$UBD" $sectors || skip "dmsetup create (no device-mapper?)"
dev=$DM_DEV
fresh_ext4 "$dev" -b 4096
need_kept_hint

# free_ranges: the free blocks of the unmounted filesystem, "first-last".
free_ranges() {
	dumpe2fs "$dev" 2>/dev/null | sed -n 's/^  Free blocks: //p' | tr ',' '\n' |
		tr -d ' ' | grep . | sort -n -t- -k1,1
}

# file_ranges FILE: the 4k blocks FILE's data occupies, "first-last".
file_ranges() {
	xfs_io -c 'fiemap -v' "$1" | awk '$2 ~ /^\[/ && $3 != "hole" {
		split($3, p, /\.\./); printf "%d-%d\n", p[1] / 8, (p[2] + 1) / 8 - 1 }' |
		sort -n -t- -k1,1
}

# victim NAME: 1 MiB of random data without a hint (so realign copies it,
# whatever its extents); its checksum and inode go to $WORK.
victim() {
	dd if=/dev/urandom of="$MNT/$1" bs=64k count=16 conv=fsync status=none ||
		die "write $MNT/$1"
	sha256sum <"$MNT/$1" >"$WORK/$1.sum"
	stat -c %i "$MNT/$1" >"$WORK/$1.ino"
}

# intact NAME WHEN: NAME has its inode and content (read from the disk).
intact() {
	echo 3 >/proc/sys/vm/drop_caches
	expect "$1: inode $2" "$(stat -c %i "$MNT/$1")" "$(cat "$WORK/$1.ino")"
	expect "$1: content $2" "$(sha256sum <"$MNT/$1")" "$(cat "$WORK/$1.sum")"
}

# no_leftovers: nothing but the files this test made in the directory.
no_leftovers() {
	local extra

	extra=$(find "$MNT" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort |
		grep -v -e '^lost+found$' -e '^v[0-9]$')
	expect "files left over in $MNT" "$extra" ""
}

# case NAME WANT-STEP TABLE-ARGS [REALIGN-OPTIONS...]: realign NAME under the
# fault the table makes; the message names the step and the I/O error, the
# exit is 3, the original is intact.
case_eio() {
	local name=$1 step=$2 table=$3 rc=0

	shift 3
	dm_table $DM "$table"
	"$EXTALIGN" realign --extsize 64k --state-dir "$WORK/state" "$@" "$MNT/$name" \
		>"$WORK/out" 2>"$WORK/err" || rc=$?
	dm_table $DM
	cat "$WORK/out" "$WORK/err"
	expect "$name: exit status" "$rc" 3
	grep -qF "$MNT/$name: $step: Input/output error; the file is unchanged" "$WORK/err" ||
		die "$name: the message does not name '$step' and the I/O error"
	ok "$name: the message names the step and the I/O error"
	intact "$name" "after the failed realign"
	no_leftovers
}

victim v1
victim v2
victim v3
umount "$MNT" || die "umount"
free=$(free_ranges)
[ -n "$free" ] || die "no free blocks read from $dev"
echo "free ranges: ${free//$'\n'/ }"
writes=$(dm_flakey_table "$UBD" $sectors "1 error_writes" "$free")
mount -t ext4 "$dev" "$MNT" || die "mount $dev"
reads=$(dm_flakey_table "$UBD" $sectors "" "$(file_ranges "$MNT/v3")")

case_eio v1 "write the copy" "$writes"
case_eio v2 "sync the copy" "$writes" --buffered
case_eio v3 "read the original" "$reads"

remount "$dev"
for v in v1 v2 v3; do
	intact $v "after a remount"
done
# Without the fault the same files realign.
"$EXTALIGN" realign --extsize 64k --state-dir "$WORK/state" "$MNT"/v1 "$MNT"/v2 "$MNT"/v3 ||
	die "realign without the fault"
for v in v1 v2 v3; do
	expect "$v: content after realignment" "$(sha256sum <"$MNT/$v")" "$(cat "$WORK/$v.sum")"
done
no_leftovers
umount "$MNT"
e2fsck -fn "$dev" >"$SCRATCH/fsck.log" 2>&1 || { cat "$SCRATCH/fsck.log"; die "e2fsck -fn $dev"; }
ok "e2fsck -fn $dev clean"
