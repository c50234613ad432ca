#!/bin/bash
# The series' e2fsck (e2fsprogs/) against the same e2fsprogs unpatched, on
# the same images in the same run, interleaved round by round: what the
# pass 1 checks of hints and units cost a full check.  Images (ext4, 4 KiB
# blocks, E2FSCK_FILES files each):
#   plain     files with 8 KiB of data, no attributes
#   attrs     every file with a user attribute in an attribute block
#             (128-byte inodes), the case that reading attributes again
#             made slow
#   inline    the same attribute in the inode (256-byte inodes)
#   hinted    every file forcealign with a 4-block unit and 16 KiB of data
#             (the units followed extent by extent)
# Prints per image the series' time over the unpatched one: min / median /
# max over E2FSCK_ROUNDS rounds [5].  Not a test: nothing passes or fails
# on speed.
#
# Usage: tests/bench/e2fsck.sh   (root; E2FSCK_FILES [100000],
#        E2FSCK_DIR [/var/tmp] for the images)
# Builds e2fsprogs/ and the unpatched tree when they are not built.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
FILES=${E2FSCK_FILES:-100000}
ROUNDS=${E2FSCK_ROUNDS:-5}
W=$(mktemp -d "${E2FSCK_DIR:-/var/tmp}/e2fsck-bench.XXXXXX")
trap 'umount "$W/mnt" 2>/dev/null; rm -rf "$W"' EXIT
[ "$(id -u)" = 0 ] || { echo "needs root (loop mounts)" >&2; exit 77; }

series=$("$TOP/e2fsprogs/build.sh" | tail -n 1)/e2fsck/e2fsck
base=$E2B/base/build/e2fsck/e2fsck
if [ ! -x "$base" ]; then
	mkdir -p "$E2B/empty-series" && : >"$E2B/empty-series/series"
	EXTALIGN_E2BUILD=$E2B/base EXTALIGN_E2PATCHES=$E2B/empty-series \
		"$TOP/e2fsprogs/build.sh" >/dev/null
fi
debugfs=$(dirname "$(dirname "$series")")/debugfs/debugfs

# image NAME MKFS-OPTIONS...: an image of FILES files, filled by python.
image() {
	local name=$1 mode
	shift
	mode=$name
	truncate -s 4G "$W/$name.img"
	mkfs.ext4 -q -F -b 4096 -N $((FILES + 1000)) "$@" "$W/$name.img"
	mkdir -p "$W/mnt"
	mount -o loop "$W/$name.img" "$W/mnt"
	python3 - "$W/mnt" "$FILES" "$mode" <<'PY'
import os, sys
top, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = b"x" * (16384 if mode == "hinted" else 8192)
for i in range(n):
    d = f"{top}/{i // 1000}"
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    f = f"{d}/f{i}"
    if mode == "plain" or mode == "hinted":
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        open(f, "w").close()
        os.setxattr(f, "user.k", b"v" * 32)
PY
	umount "$W/mnt"
}
image plain
image attrs -I 128
image inline -I 256
image hinted
# Every file of "hinted" forcealign with a 4-block unit, as the kernel
# stores it (debugfs: no kernel with the series is needed).
for i in $(seq 0 $((FILES - 1))); do echo "set_extsize -f /$((i / 1000))/f$i 4"; done |
	"$debugfs" -w -f - "$W/hinted.img" >/dev/null 2>&1

declare -A t
for r in $(seq "$ROUNDS"); do
	for img in plain attrs inline hinted; do
		for kind in base series; do
			prog=$base
			[ $kind = series ] && prog=$series
			s=$(date +%s%N)
			"$prog" -fn "$W/$img.img" >/dev/null 2>&1 || true
			t[$img.$kind.$r]=$(($(date +%s%N) - s))
		done
	done
done
printf '%-8s %8s %8s %8s   %s\n' image min median max "series/unpatched, $ROUNDS rounds, $FILES files"
for img in plain attrs inline hinted; do
	for r in $(seq "$ROUNDS"); do
		echo "scale=3; ${t[$img.series.$r]} / ${t[$img.base.$r]}" | bc
	done | sort -n | awk -v img=$img '{ v[NR] = $1 }
		END { printf "%-8s %8.2f %8.2f %8.2f\n", img, v[1], v[int((NR + 1) / 2)], v[NR] }'
done
