#!/bin/bash
# Issue 17: faults during the copy leave the original intact, and the
# message names what happened:
# - ENOSPC: another process takes the free space after the check passed;
# - EIO: the disk fails writes mid-copy.  This host kernel has no
#   device-mapper (CONFIG_MD is off, so no dm-flakey or dm-dust) and no
#   null_blk or fault injection; the XFS image's backing file on the host's
#   ext4 is made immutable instead, so the loop device's writes fail with
#   EPERM, which the block layer hands to XFS as BLK_STS_IOERR, a real EIO;
# - another process truncates, extends or writes the file mid-copy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/realign.bash"
need_cmd chattr

# Whatever happens, the image must not stay immutable (cleanup removes it).
unfreeze() { [ -n "${img:-}" ] && chattr -i "$img" 2>/dev/null; cleanup; }
trap unfreeze EXIT

mnt=$(mkfs_mount xfs 400)
d=$mnt/d
mkdir "$d"

# start FILE: realign FILE slowly in the background; $pid.
start() {
	"${R[@]}" --extsize 64k --bwlimit 8M "$1" >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	in_copy "$pid" "$d" blocks
}

finish() {
	rc=0
	wait "$pid" || rc=$?
}

# --- ENOSPC after the check -------------------------------------------
f=$d/nospc
dd if=/dev/urandom of="$f" bs=1M count=48 status=none
sync
h=$(sha256sum <"$f")
start "$f"
python3 - "$mnt/filler" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
size = 0
for piece in (1 << 20, 4096):
    while libc.fallocate(fd, 0, size, piece) == 0:
        size += piece
PY
finish
rm -f "$mnt/filler"
[ "$rc" = 3 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "ENOSPC: exit $rc, expected 3"; }
expect_in err "No space left on device (the copy needs 48."
expect_in err "the file is unchanged"
expect_in out "copied into copies then discarded"
[ "$(sha256sum <"$f")" = "$h" ] || fail "ENOSPC: content changed"
[ "$(xfs_extsize "$f")" = 0 ] || fail "ENOSPC: the file was replaced"
[ "$(leftovers)" = 0 ] || fail "ENOSPC: leftovers"
expect_exit 0 "${R[@]}" --extsize 64k "$f"
[ "$(sha256sum <"$f")" = "$h" ] || fail "ENOSPC: content changed by the next run"
echo "ENOSPC mid-copy: refused, original intact"

# --- truncated, extended, written by another process ------------------
for what in truncated extended written; do
	f=$d/$what
	dd if=/dev/urandom of="$f" bs=1M count=24 status=none
	sync
	start "$f"
	case $what in
	truncated) python3 -c "import os, sys; os.truncate(sys.argv[1], 1 << 20)" "$f" ;;
	extended) echo more >>"$f" ;;
	written) dd if=/dev/zero of="$f" bs=4k count=1 seek=3 conv=notrunc status=none ;;
	esac
	# What the other process left is what the file must hold afterwards.
	finish
	h=$(sha256sum <"$f")
	[ "$rc" = 1 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "$what: exit $rc, expected 1"; }
	expect_in out "skipped: $what by another process during the copy"
	[ "$(xfs_extsize "$f")" = 0 ] || fail "$what: the file was replaced"
	[ "$(leftovers)" = 0 ] || fail "$what: leftovers"
	sleep 0.2
	[ "$(sha256sum <"$f")" = "$h" ] || fail "$what: realign touched the file afterwards"
	case $what in
	truncated) [ "$(stat -c %s "$f")" = $MiB ] || fail "truncate lost" ;;
	extended) [ "$(tail -c 5 "$f")" = more ] || fail "append lost" ;;
	written) cmp -s -n 4096 -i $((3 * 4096)):0 "$f" /dev/zero || fail "write lost" ;;
	esac
	echo "$what mid-copy: skipped with the reason, the other process's change kept"
done

# --- EIO from the disk ------------------------------------------------
img=$(losetup -nO BACK-FILE "$(findmnt -no SOURCE "$mnt")")
[ -f "$img" ] || fail "cannot find the image of $mnt"
f=$d/eio
dd if=/dev/urandom of="$f" bs=1M count=48 status=none
sync
h=$(sha256sum <"$f")
start "$f"
chattr +i "$img" || skip "cannot make the image immutable here"
finish
chattr -i "$img"
[ "$rc" = 3 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "EIO: exit $rc, expected 3"; }
expect_in err "Input/output error; the file is unchanged"
# XFS may have shut down on the failed writes: remount (log recovery).
loop=$(findmnt -no SOURCE "$mnt")
umount "$mnt"
mount "$loop" "$mnt"
[ "$(sha256sum <"$f")" = "$h" ] || fail "EIO: content changed"
[ "$(xfs_extsize "$f")" = 0 ] || fail "EIO: the file was replaced"
expect_exit 0 "${R[@]}" --extsize 64k "$d"
[ "$(leftovers)" = 0 ] || fail "EIO: leftovers after the next run"
[ "$(sha256sum <"$f")" = "$h" ] || fail "EIO: content changed by the next run"
echo "EIO mid-copy: failed with EIO, original intact"
echo ok
