#!/bin/bash
# Issue 17: property test.  Generated file shapes (dense, sparse with random
# runs, unwritten preallocation, sizes off the block, 0 and 1 bytes, a big
# file, hard links, xattrs and ACLs) are realigned on every layout this
# host has: plain XFS, stripe-aligned XFS (su=64k, swalloc), XFS whose
# files share their blocks with others (reflink), and the host's ext4,
# which keeps no hint (the unsupported path).  For each: content identical
# (sha256), metadata kept (mode, owner, mtime, xattrs, ACL), and the
# verdict honest: what realign reports is what xfs_io sees.
# REALIGN_SHAPES_SEED picks other shapes (default: a fixed seed).
. "$(dirname "$0")/lib.sh"
need_cmd xfs_io
need_cmd getfattr
need_cmd setfacl
need_cmd python3
seed=${REALIGN_SHAPES_SEED:-17}

declare -A mnts
mnts[xfs]=$(mkfs_mount xfs 300)
mnts[xfs-stripe]=$(mkfs_mount xfs 1024 -d su=64k,sw=1)
mount -o remount,swalloc "${mnts[xfs-stripe]}"
mnts[xfs-reflink]=$(mkfs_mount xfs 300 -m reflink=1)
mnts[ext4]=$(mkfs_mount ext4 200)

total=0
for layout in xfs xfs-stripe xfs-reflink ext4; do
	mnt=${mnts[$layout]}
	n=$(python3 "$TOP/tests/integration/realign-shapes.py" "$EXTALIGN" "$layout" "$mnt" "$seed" \
		"$WORK/state") || fail "$layout: see above"
	echo "$layout: $n shapes"
	total=$((total + n))
done
echo "shapes x layouts: $total ($((total / 4)) shapes x 4 layouts)"
echo ok
