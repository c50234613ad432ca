#!/bin/bash
# The trace events name the flags the series adds: the aligned and strict
# mballoc flags (whole, not cut to 16 bits) and the aligned mapping flag,
# as a forcealign write allocates its unit.
. "$(dirname "$0")/lib.sh"

need_trace_event ext4/ext4_request_blocks

fresh_ext4 "$UBD" -b 4096
f=$MNT/f
: >"$f"
[ "$(kt setx "$f" 0x100800 65536)" = ok ] || die "forcealign on $f"
ino=$(stat -c %i "$f")
trace_start ext4/ext4_request_blocks ext4/ext4_mballoc_alloc ext4/ext4_ext_map_blocks_enter
xfs_io -d -c "pwrite -q -S 0xa5 8k 4k" "$f" || die "write"
trace_stop
grep -E "(ino|inode) $ino " "$TRACEFS/trace" >"$SCRATCH/trace"
cat "$SCRATCH/trace"

has() { # EVENT REGEX
	grep "$1:" "$SCRATCH/trace" | grep -qE "$2" ||
		die "no $1 event with flags matching $2"
	ok "$1: $2"
}
has ext4_request_blocks 'flags [A-Z_|]*HINT_ALIGNED\|STRICT_ALIGNED'
has ext4_mballoc_alloc 'flags [A-Z_|]*HINT_ALIGNED\|STRICT_ALIGNED'
has ext4_ext_map_blocks_enter 'flags [A-Z_|]*ALIGNED'
umount "$MNT"
exit 0
