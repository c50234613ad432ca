#!/bin/bash
# Issue 22.7: an RWF_ATOMIC direct write whose user buffer cannot be
# pinned whole (a PROT_NONE page inside it) must fail, EFAULT or EINVAL,
# with nothing of it written: not the pages before the hole as a short
# write, not through the page cache.  The block layer gets only the pages
# before the PROT_NONE one, so the one REQ_ATOMIC bio cannot be built
# (patch 0001 refuses it), and ext4 must not complete the write another
# way (patches 0002, 0008).  Over a written, a hole, an unwritten and a
# partly written 16 KiB forcealign unit, past EOF, and 64 KiB units.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800
K=1024

# refused WHAT FILE OFF LEN PAGE: the atomic write of LEN bytes at OFF from
# a buffer whose PAGE-th page is PROT_NONE fails with EFAULT or EINVAL.
refused() {
	local got

	got=$(kt awritefault "$2" "$3" "$4" "$5")
	case $got in
	"err EFAULT" | "err EINVAL") ok "$1: $got" ;;
	*) die "$1: got '$got', want err EFAULT or err EINVAL" ;;
	esac
}

sd=$(scsi_disk) || die "no scsi_debug disk"
fresh_ext4 "$sd" -b 4096
f=$MNT/f
: >"$f"
expect "forcealign 16k" "$(kt setx "$f" $BOTH $((16 * K)))" ok
expect "statx" "$(kt statx "$f")" "mask=1 attr=1 min=4096 max=16384 segments=1"

# A written unit: the old data (Z, 0x5a) must stay, whichever page faults.
xfs_io -d -c "pwrite -q -S 0x5a 0 $((64 * K))" -c fsync "$f" || die "write"
for page in 0 1 2 3; do
	refused "written unit, page $page unpinnable" "$f" 0 $((16 * K)) $page
	holds "$f" 0 $((16 * K)) Z || die "written unit changed (page $page)"
done
ok "written unit unchanged"

# An unwritten unit, and one partly written (4 KiB), inside EOF.
xfs_io -c "fpunch $((16 * K)) $((16 * K))" \
	-c "falloc -k $((16 * K)) $((16 * K))" "$f" || die "punch, falloc"
zeros "$f" $((16 * K)) $((16 * K)) unwritten
refused "unwritten unit" "$f" $((16 * K)) $((16 * K)) 1
zeros "$f" $((16 * K)) $((16 * K)) allocated
xfs_io -c "fpunch $((32 * K)) $((16 * K))" \
	-c "falloc -k $((32 * K)) $((16 * K))" "$f" || die "punch, falloc"
xfs_io -d -c "pwrite -q -S 0x5a $((32 * K)) 4k" -c fsync "$f" || die "write"
refused "partly written unit" "$f" $((32 * K)) $((16 * K)) 2
holds "$f" $((32 * K)) $((4 * K)) Z || die "partly written unit: written part changed"
zeros "$f" $((36 * K)) $((12 * K)) allocated
ok "unwritten and partly written units unchanged"

# Past EOF, over a hole: no data and no size.
size=$(stat -c %s "$f")
refused "hole past EOF" "$f" $((128 * K)) $((16 * K)) 1
expect "size after the refused write past EOF" "$(stat -c %s "$f")" "$size"

# A good atomic write still works where the others were refused.
expect "atomic write with a whole buffer" "$(kt awrite "$f" $((16 * K)) $((16 * K)))" "ok 16384"
filled "$f" $((16 * K)) $((16 * K)) || die "good write does not read back"

# The largest unit the device takes: 64 KiB, the hole near its end.
g=$MNT/g
: >"$g"
expect "forcealign 64k" "$(kt setx "$g" $BOTH $((64 * K)))" ok
xfs_io -d -c "pwrite -q -S 0x5a 0 $((64 * K))" -c fsync "$g" || die "write g"
refused "64k unit, page 15 unpinnable" "$g" 0 $((64 * K)) 15
refused "64k unit, page 8 unpinnable" "$g" 0 $((64 * K)) 8

remount "$sd"
holds "$f" 0 $((16 * K)) Z || die "written unit changed (after remount)"
filled "$f" $((16 * K)) $((16 * K)) || die "good write lost (after remount)"
holds "$f" $((32 * K)) $((4 * K)) Z || die "partly written unit changed (after remount)"
zeros "$f" $((36 * K)) $((12 * K)) allocated
expect "size after remount" "$(stat -c %s "$f")" "$size"
holds "$g" 0 $((64 * K)) Z || die "64k unit changed (after remount)"
ok "nothing of the refused writes reached the disk"
umount "$MNT"
