#!/bin/bash
# Helpers for the tests/kernel/*.sh tests, which run inside the UML kernel
# that kernel/check.sh boots or the QEMU guest of kernel/qemu-test.sh (PID 1
# is tests/kernel/init.sh).  Source it.  "bash lib.sh cleanup" is what
# init.sh runs after every test.
#
# Exit status of a test: 0 pass, 77 skip (with a "SKIP: reason" line),
# anything else fail.

# The scratch disk: UML's ubd disk, or what EXTALIGN_SCRATCH_DISK names
# (the QEMU guest's second virtio disk).
UBD=${EXTALIGN_SCRATCH_DISK:-/dev/ubda}
MNT=/tmp/mnt
# Scratch files go to the guest's own /run (tmpfs), not to /tmp, which is
# the host's and shared with any other guest running at the same time.
SCRATCH=/run/extalign-test
DEVS_FILE=$SCRATCH/devs
mkdir -p "$SCRATCH"
KTOOL=${KTOOL:-ktool}

die() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok: $*"; }

# expect WHAT GOT WANT
expect() {
	if [ "$2" != "$3" ]; then
		die "$1: got '$2', want '$3'"
	fi
	ok "$1: $2"
}

# The scsi_debug disk (configured for atomic writes on the command line).
scsi_disk() {
	local b
	for b in /sys/block/sd*; do
		[ -e "$b/device/model" ] || continue
		if grep -q scsi_debug "$b/device/model"; then
			echo "/dev/${b##*/}"
			return 0
		fi
	done
	return 1
}

# The scsi_debug disk of every guest: 512 MiB of 4 KiB sectors taking
# hardware atomic writes of 4 KiB to 64 KiB (16 sectors), atomic units
# aligned to their size.  UML has scsi_debug built in and gets these on its
# command line (kernel/boot.sh); the QEMU guest loads the module with them.
SCSI_DEBUG_OPTS=(sector_size=4096 physblk_exp=0 lowest_aligned=0
		 dev_size_mb=512 atomic_wr=1 atomic_wr_max_length=16
		 atomic_wr_gran=1 atomic_wr_align=1)

# scsi_debug_load: modprobe scsi_debug with SCSI_DEBUG_OPTS, as fstests'
# generic/767 does (_get_scsi_debug_dev), and wait for its disk.
scsi_debug_load() {
	modprobe scsi_debug "${SCSI_DEBUG_OPTS[@]}" || return 1
	for _ in $(seq 100); do
		scsi_disk >/dev/null && [ -b "$(scsi_disk)" ] && return 0
		sleep 0.1
	done
	echo "scsi_debug loaded but no disk appeared"
	return 1
}

# fresh_ext4 DEV [mke2fs options...]: a new ext4 on DEV mounted on $MNT,
# as large as DEV or $FS_SIZE (a mke2fs size such as 256M) if set.
fresh_ext4() {
	local dev=$1

	shift
	umount "$MNT" 2>/dev/null
	mkdir -p "$MNT"
	# The filesystem this replaces gets its fsck first.
	if grep -qx "$dev" "$DEVS_FILE" 2>/dev/null &&
	   ! grep -q "^$dev " /proc/mounts; then
		e2fsck -fn "$dev" >"$SCRATCH/fsck.log" 2>&1 ||
			{ cat "$SCRATCH/fsck.log"; die "e2fsck -fn $dev is not clean"; }
	fi
	mkfs.ext4 -q -F -E nodiscard "$@" "$dev" ${FS_SIZE:-} ||
		die "mkfs.ext4 $* $dev ${FS_SIZE:-}"
	grep -qx "$dev" "$DEVS_FILE" 2>/dev/null || echo "$dev" >>"$DEVS_FILE"
	mount -t ext4 "$dev" "$MNT" || die "mount $dev"
}

# remount DEV: unmount $MNT and mount DEV on it again (drops the caches).
remount() {
	umount "$MNT" || die "umount $MNT"
	mount -t ext4 "$1" "$MNT" || die "mount $1"
}

# ktool ARGS...: run the probe, print and return its output line.
kt() {
	"$KTOOL" "$@"
}

# set_extsize FILE SIZE: "xfs_io -c 'extsize SIZE'" where xfs_io handles
# ext4 files; Debian 12's xfs_io (6.1) runs extsize on XFS only ("foreign
# file active"), so fall back to ktool's FS_IOC_FSSETXATTR there.
set_extsize() {
	local out bytes

	out=$(xfs_io -c "extsize $2" "$1" 2>&1)
	case $out in
	*"foreign file active"*) ;;
	"") return 0 ;;
	*) echo "$out"; return 1 ;;
	esac
	bytes=$(numfmt --from=iec "${2^^}")
	if [ -d "$1" ]; then
		kt setx "$1" 0x1000 "$bytes" | grep -qx ok
	else
		kt setx "$1" 0x800 "$bytes" | grep -qx ok
	fi
}

# xflags FILE: the FS_IOC_FSGETXATTR flags of FILE, "0x..." form.
xflags() {
	kt getx "$1" | sed -n 's/^xflags=\(0x[0-9a-f]*\) .*/\1/p'
}

# extsize FILE: fsx_extsize in bytes.
extsize() {
	kt getx "$1" | sed -n 's/.* extsize=\([0-9]*\)$/\1/p'
}

# runs FILE: the physically contiguous runs of FILE's extents (ext4 splits
# a unit into written and unwritten extents), "lstart len pstart" in bytes.
runs() {
	xfs_io -c 'fiemap -v' "$1" | awk '
	$2 ~ /^\[/ && $3 != "hole" {
		split(substr($2, 2), l, /[].]+/); split($3, p, /\.\./)
		ls = l[1] * 512; le = (l[2] + 1) * 512; ps = p[1] * 512
		if (n && ls == cle && ps == cps + (cle - cls)) { cle = le; next }
		if (n) print cls, cle - cls, cps
		cls = ls; cle = le; cps = ps; n = 1
	}
	END { if (n) print cls, cle - cls, cps }'
}

# units_aligned FILE UNIT: FILE has allocated runs and every one of them
# starts and ends on a multiple of UNIT bytes, in the file and on disk.
units_aligned() {
	local ls len ps n=0 bad=0

	while read -r ls len ps; do
		[ -n "$ls" ] || continue
		n=$((n + 1))
		((ls % $2 == 0 && len % $2 == 0 && ps % $2 == 0)) || bad=1
	done <<<"$(runs "$1")"
	if [ $n = 0 ] || [ $bad = 1 ]; then
		echo "$1: not in whole $2-byte units:"
		xfs_io -c 'fiemap -v' "$1"
		return 1
	fi
}

# filled FILE OFF LEN: the LEN bytes at OFF are all 0xa5 (ktool's pattern).
filled() {
	local n

	n=$(dd if="$1" bs=512 skip=$(($2 / 512)) count=$(($3 / 512)) \
		status=none | tr -d '\245' | wc -c)
	[ "$n" = 0 ]
}

cleanup() {
	local m dev rc=0

	for m in $(awk '$2 ~ "^/tmp/mnt" { print $2 }' /proc/mounts | sort -r); do
		umount "$m" || { echo "cleanup: cannot unmount $m"; rc=1; }
	done
	[ -f "$DEVS_FILE" ] || return $rc
	while read -r dev; do
		if ! e2fsck -fn "$dev" >"$SCRATCH/fsck.log" 2>&1; then
			echo "FAIL: e2fsck -fn $dev is not clean:"
			cat "$SCRATCH/fsck.log"
			rc=1
		else
			echo "ok: e2fsck -fn $dev clean"
		fi
	done <"$DEVS_FILE"
	rm -f "$DEVS_FILE"
	return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = cleanup ]; then
	cleanup
	exit $?
fi
