#!/bin/bash
# Issue 34.5: RLIMIT_FSIZE (and s_maxbytes) can shorten a write after the
# atomic write checks saw its length.  An RWF_ATOMIC write must then fail
# whole: done as a shorter atomic write it returns short, which is a torn
# write, and a length cut to a non power of two makes the alignment check
# meaningless.
. "$(dirname "$0")/lib.sh"

UNIT=65536

sd=$(scsi_disk) || die "no scsi_debug disk"
fresh_ext4 "$sd" -b 4096
need_kept_hint
f=$MNT/f
: >"$f"
expect "forcealign with a 64k hint" "$(kt setx "$f" 0x100800 $UNIT)" ok
# bash's ulimit -f counts KiB: 16 leaves 16 KiB of the 64 KiB write.
expect "a 64k atomic write with 16k left by RLIMIT_FSIZE" \
	"$(ulimit -f 16; kt awrite "$f" 0 $UNIT)" "err EINVAL"
expect "size after the refused write" "$(stat -c %s "$f")" 0
# One block, cut to 2 KiB.
g=$MNT/g
: >"$g"
expect "a 4k atomic write with 2k left by RLIMIT_FSIZE" \
	"$(ulimit -f 2; kt awrite "$g" 0 4096)" "err EINVAL"
expect "size after the refused write" "$(stat -c %s "$g")" 0
# Within the limit, both still work.
expect "a 64k atomic write under a 64k limit" \
	"$(ulimit -f 64; kt awrite "$f" 0 $UNIT)" "ok $UNIT"
filled "$f" 0 $UNIT || die "the 64k atomic write did not read back"
umount "$MNT"
exit 0
