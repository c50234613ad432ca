#!/bin/bash
# Issue 17: power cuts during realignment lose nothing on our ext4.  The
# loop of tests/integration/realign-powercut.bash: realign-cut realigns a
# set of files (the rename path for files without the hint, EXT4_IOC_MOVE_EXT
# for the hinted ones) and cuts at a random point with EXT4_IOC_SHUTDOWN
# (no journal flush: nothing more reaches the disk); remount (journal
# recovery), "extalign realign" cleans up and finishes, every file must
# match its checksum and no leftover may be visible.  REALIGN_CUTS
# (default 200) sets the number of cut points.
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EXTALIGN=$TOP/build/extalign
CUT=$TOP/build/tests/tools/realign-cut
for p in "$EXTALIGN" "$CUT"; do
	[ -x "$p" ] || die "$p is not built: run 'make tests' in $TOP first"
done
WORK=$(mktemp -d /run/extalign-powercut.XXXXXX) || die "mktemp"
trap 'rm -rf "$WORK"' EXIT
fail() { die "$@"; }
# shellcheck source=../integration/realign-powercut.bash
. "$TOP/tests/integration/realign-powercut.bash"

FS_SIZE=256M fresh_ext4 "$UBD" -b 4096
mnt=$MNT
need_kept_hint

pc_hint() { kt setx "$1" 0x800 65536 >/dev/null || die "extsize on $1"; }
pc_remount() { remount "$UBD"; }

pc_make_set
start=$(date +%s)
pc_run "${REALIGN_CUTS:-200}"
echo "power-cut loop: $(($(date +%s) - start))s"
