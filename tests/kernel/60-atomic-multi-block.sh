#!/bin/bash
# Spec patch 8: multi-block RWF_ATOMIC direct writes on forcealign files
# (and bigalloc clusters) over the atomic-capable scsi_debug disk (4 KiB
# sectors, atomic units 4..64 KiB): statx limits, the writes that must
# work (aligned, into unwritten, sparse and partly written units, across
# extent tree leaves) and those that must fail with EINVAL.  Every atomic
# write must reach the disk as one WRITE ATOMIC(16) of exactly its bytes
# (the scsi tracepoint); a plain direct write as none.
. "$(dirname "$0")/lib.sh"

BOTH=0x100800 EXTSIZE=0x800
K=1024

sd=$(scsi_disk) || die "no scsi_debug disk"
expect "device atomic unit max" \
	"$(cat "/sys/block/${sd#/dev/}/queue/atomic_write_unit_max_bytes")" 65536

# forcealign FILE EXTSIZE: an empty forcealign file.
forcealign() {
	: >"$1"
	[ "$(kt setx "$1" $BOTH "$2")" = ok ] || die "forcealign $2 on $1"
}

fresh_ext4 "$sd" -b 4096
f=$MNT/f
forcealign "$f" $((64 * K))
expect "statx, forcealign 64k" "$(kt statx "$f")" "mask=1 attr=1 min=4096 max=65536 segments=1"
forcealign "$MNT/f16" $((16 * K))
expect "statx, forcealign 16k" "$(kt statx "$MNT/f16")" "mask=1 attr=1 min=4096 max=16384 segments=1"
forcealign "$MNT/f256" $((256 * K))
expect "statx, forcealign 256k (device limit)" "$(kt statx "$MNT/f256")" \
	"mask=1 attr=1 min=4096 max=65536 segments=1"
: >"$MNT/hinted"
kt setx "$MNT/hinted" $EXTSIZE $((64 * K)) >/dev/null
expect "statx, hint without forcealign" "$(kt statx "$MNT/hinted")" \
	"mask=1 attr=1 min=4096 max=4096 segments=1"
expect "16k atomic write without forcealign" "$(kt awrite "$MNT/hinted" 0 16384)" "err EINVAL"
kt setx "$MNT/f16" 0 0 >/dev/null
expect "statx after clearing forcealign and the hint" "$(kt statx "$MNT/f16")" \
	"mask=1 attr=1 min=4096 max=4096 segments=1"

# Aligned writes of 16, 32 and 64 KiB into a sparse file (hole units).
for len in 16384 32768 65536; do
	off=$((len * 5))
	awrite_dev "$len atomic write at $off (hole)" "$f" $off $len
	filled "$f" $off $len || die "$len at $off does not read back"
done
awrite_dev "64k atomic overwrite" "$f" $((320 * K)) 65536

# Into a preallocated (unwritten) unit, and into units partly written.
xfs_io -c "falloc $((1024 * K)) $((64 * K))" "$f" || die falloc
awrite_dev "32k atomic write into an unwritten unit" "$f" $((1056 * K)) 32768
filled "$f" $((1056 * K)) 32768 || die "unwritten-unit write does not read back"
xfs_io -d -c "pwrite -q -S 0xa5 $((2048 * K)) 4k" "$f" || die "plain write"
# A mixed unit has its unwritten part zeroed first: plain writes before
# the atomic one are expected there.
awrite_dev "64k atomic write over a unit with 4k written" "$f" $((2048 * K)) 65536 \
	'atomic=1 whole=1 plain=[0-9]+'
pwrite_dev "16k plain direct write into a forcealign file" "$f" $((4096 * K)) 16384
filled "$f" $((2048 * K)) 65536 || die "partly written unit does not read back"
xfs_io -d -c "pwrite -q -S 0xa5 $((3072 * K)) 4k" "$f" || die "plain write"
awrite_dev "16k atomic write half over the written 4k" "$f" $((3072 * K)) 16384 \
	'atomic=1 whole=1 plain=[0-9]+'
zeros "$f" $((3088 * K)) $((48 * K)) allocated
ok "rest of that unit is still allocated and reads as zeros"
units_aligned "$f" $((64 * K)) || die "not in aligned units"

# What must fail.
expect "128k (above unit max)" "$(kt awrite "$f" 0 131072)" "err EINVAL"
expect "32k not naturally aligned (crosses a unit)" "$(kt awrite "$f" $((48 * K)) 32768)" "err EINVAL"
expect "16k misaligned" "$(kt awrite "$f" $((4 * K)) 16384)" "err EINVAL"
expect "48k (not a power of two)" "$(kt awrite "$f" 0 49152)" "err EINVAL"
expect "buffered 16k" "$(kt awrite "$f" 0 16384 buf)" "err EOPNOTSUPP"

# Many units each split into a written and an unwritten extent: the extent
# tree spans several leaves, and some units straddle two of them.  Every
# 64k atomic write must still go out whole.
m=$MNT/many
forcealign "$m" $((64 * K))
units=400
for ((i = 0; i < units; i++)); do
	echo "pwrite -q -S 0xa5 $((i * 64 * K)) 4k"
done | xfs_io -d "$m" || die "plain writes"
leaves=$(debugfs -R "dump_extents -n $(stat -c %i "$m")" "$sd" 2>/dev/null | awk '$1 == "1/" || $2 == "1/" { n++ } END { print n + 0 }')
echo "extent tree leaves: $leaves"
bad=0
devtrace_start
for ((i = 0; i < units; i++)); do
	[ "$(kt awrite "$m" $((i * 64 * K)) 65536)" = "ok 65536" ] || { bad=$i; break; }
done
devtrace_stop
expect "64k atomic writes over $units split units" "$bad" 0
expect "atomic commands at the disk for them" \
	"$(dev_writes "$m" 0 $((units * 64 * K)) | cut -d' ' -f1)" "atomic=$units"
filled "$m" 0 $((units * 64 * K)) || die "split units do not read back"
remount "$sd"
filled "$m" 0 $((units * 64 * K)) || die "split units do not read back after remount"
filled "$f" $((2048 * K)) 65536 || die "partly written unit after remount"
umount "$MNT"

# bigalloc: every 16 KiB cluster is aligned and contiguous.
fresh_ext4 "$sd" -b 4096 -O bigalloc -C 16384
: >"$MNT/b"
expect "statx, bigalloc 16k" "$(kt statx "$MNT/b")" "mask=1 attr=1 min=4096 max=16384 segments=1"
awrite_dev "16k atomic write, bigalloc" "$MNT/b" 16384 16384
xfs_io -d -c "pwrite -q -S 0xa5 64k 4k" "$MNT/b" || die "plain write"
awrite_dev "16k atomic write over a partly written cluster" "$MNT/b" 65536 16384 \
	'atomic=1 whole=1 plain=[0-9]+'
filled "$MNT/b" 16384 16384 || die "bigalloc write does not read back"
filled "$MNT/b" 65536 16384 || die "bigalloc partly written cluster"
expect "32k atomic write, bigalloc (above the cluster)" "$(kt awrite "$MNT/b" 0 32768)" "err EINVAL"
umount "$MNT"
exit 0
