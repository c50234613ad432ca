# shellcheck shell=bash
# Shared by the integration tests (sourced).  Each test is a bash script that
# exits 0 on success, 77 to skip (after printing "SKIP: reason") and anything
# else on failure.  Filesystems are real images on loop devices.

set -euo pipefail
shopt -s inherit_errexit

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EXTALIGN=${EXTALIGN:-$TOP/build/extalign}
EXTALIGND=${EXTALIGND:-$TOP/build/extalignd}
WORK=$(mktemp -d /tmp/extalign-test.XXXXXX)
# Mounts and loop devices are recorded in files, not variables: mkfs_mount
# runs in a $(...) subshell whose variables the caller never sees.
: >"$WORK/.mounts"
: >"$WORK/.loops"

cleanup() {
	local m l
	tac "$WORK/.mounts" | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
	while read -r l; do losetup -d "$l" 2>/dev/null || true; done <"$WORK/.loops"
	[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}

# track_mount DIR: unmount DIR when the test ends.
track_mount() { echo "$1" >>"$WORK/.mounts"; }
trap cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || skip "needs root for loop devices and mounts"; }
need_cmd() { command -v "$1" >/dev/null || skip "$1 is not installed"; }

# mkfs_mount TYPE SIZE_MB [MKFS_OPTS...]: make, loop-attach and mount a
# filesystem image; prints the mount point.
mkfs_mount() {
	local type=$1 size=$2 img mnt loop
	shift 2
	need_root
	img=$WORK/$type.$RANDOM.img
	mnt=$WORK/mnt.$type.$RANDOM
	truncate -s "${size}M" "$img"
	case $type in
	xfs) need_cmd mkfs.xfs; mkfs.xfs -q "$@" "$img" ;;
	ext4) mkfs.ext4 -q -F "$@" "$img" ;;
	*) mkfs -t "$type" "$@" "$img" >/dev/null ;;
	esac
	loop=$(losetup -f --show "$img") || skip "no loop device available"
	echo "$loop" >>"$WORK/.loops"
	mkdir -p "$mnt"
	mount "$loop" "$mnt" || skip "cannot mount $type on this kernel"
	track_mount "$mnt"
	echo "$mnt"
}

# expect_exit CODE CMD...: run CMD, fail unless it exits with CODE.  Output
# goes to $WORK/out (stdout) and $WORK/err (stderr) for later checks.
expect_exit() {
	local want=$1 rc=0
	shift
	"$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "command: $*" >&2
		echo "stdout:" >&2; cat "$WORK/out" >&2
		echo "stderr:" >&2; cat "$WORK/err" >&2
		fail "exit $rc, expected $want"
	fi
}

# expect_in FILE TEXT: fail unless FILE (out or err) contains TEXT.
expect_in() {
	grep -qF -- "$2" "$WORK/$1" || { cat "$WORK/$1" >&2; fail "'$2' not in $1"; }
}

# xfs_extsize FILE: the extent size hint in bytes as xfs_io reports it.
xfs_extsize() {
	xfs_io -c stat "$1" | awk '/fsxattr.extsize/ { print $3 }'
}

# has_xflag PATH BIT: true when xfs_io's fsxattr.xflags has BIT (e.g. 0x1000,
# FS_XFLAG_EXTSZINHERIT).
has_xflag() {
	local x
	x=$(xfs_io -c stat "$1" | awk '/fsxattr.xflags/ { print $3 }')
	(( (x & $2) != 0 ))
}

# use_valgrind: from here on run $EXTALIGN under valgrind (when installed), so
# leaks and memory errors on real paths fail the test (exit 99).
use_valgrind() {
	command -v valgrind >/dev/null || return 0
	local real=$EXTALIGN
	EXTALIGN=$WORK/extalign-vg
	cat >"$EXTALIGN" <<VG
#!/bin/sh
exec valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$real" "\$@"
VG
	chmod 755 "$EXTALIGN"
}
