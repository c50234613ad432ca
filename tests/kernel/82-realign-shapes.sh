#!/bin/bash
# Issue 17, the shape x layout property test on our ext4 (the host's part is
# tests/integration/realign-shapes.sh): the shapes of
# tests/integration/realign-shapes.py (dense, sparse with random runs,
# unwritten preallocation, sizes off the block, 0 and 1 bytes, a big file,
# hard links, xattrs and ACLs) realigned on two layouts of the patched
# ext4, one per way realign replaces a file:
#   ext4-rename   files without the hint: the hinted copy takes the name
#                 (hard-linked files are refused);
#   ext4-moveext  files that got the hint while empty: their extents are
#                 swapped with EXT4_IOC_MOVE_EXT (--rewrite-aligned), the
#                 inode and its links stay.
# For each: content identical, mode, owner, mtime, xattrs and ACL kept, and
# the verdicts are what FIEMAP shows.  Prints the shapes x layouts count.
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EXTALIGN=$TOP/build/extalign
SHAPES=$TOP/tests/integration/realign-shapes.py
[ -x "$EXTALIGN" ] || die "$EXTALIGN is not built: run 'make' in $TOP first"
for c in python3 getfattr setfacl xfs_io; do
	command -v $c >/dev/null || die "$c is missing on the host root the guest runs on"
done
seed=${REALIGN_SHAPES_SEED:-17}

fresh_ext4 "$UBD" -b 4096
need_kept_hint

total=0 layouts=0
for layout in ext4-rename ext4-moveext; do
	mkdir "$MNT/$layout"
	n=$(python3 "$SHAPES" "$EXTALIGN" "$layout" "$MNT/$layout" "$seed" "$SCRATCH/state") ||
		die "$layout: see above"
	ok "$layout: $n shapes"
	total=$((total + n)) layouts=$((layouts + 1))
	rm -rf "${MNT:?}/$layout"
done
echo "shapes x layouts: $total ($((total / layouts)) shapes x $layouts layouts)"
