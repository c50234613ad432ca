#!/bin/bash
# The aligned scan reads only so many block bitmaps while its journal
# handle is open (issue 22 item 6): one aligned allocation right after
# mount, on a filesystem whose groups all have free space but no aligned
# free unit except one group far from the goal, must not read the bitmap
# of every group inside the allocator.  A hint then falls back; a
# forcealign write still gets the one aligned unit (no spurious ENOSPC):
# its retry loads the groups it passed over after the handle is closed.
#
# Measured with the trace events: synchronous block bitmap reads
# (ext4_read_block_bitmap_load, prefetch 0) between ext4_request_blocks
# and ext4_allocate_blocks of one task are the reads of one call of the
# allocator.  Prefetch is off (the mb_prefetch knob and the mount option
# for the lazyinit thread) so that every bitmap the allocator needs is a
# read it does itself, and counts.
. "$(dirname "$0")/lib.sh"

T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T || skip "no tracefs"
[ -d $T/events/ext4/ext4_read_block_bitmap_load ] || skip "no ext4 trace events"

EXTSIZE=0x800 BOTH=0x100800
UNIT=65536 UNITB=16
# Reads one allocator call may do: MB_ALIGNED_MAX_READS (16) for the
# aligned scan, and what the unaligned criteria read after a hint falls
# back (a plain allocation reads one or two here).
MAX_READS=24
GROUP=1024

# 1 GiB in 256 groups of 1024 blocks.
FS_SIZE=1G fresh_ext4 "$UBD" -b 4096 -g $GROUP -N 4096
need_kept_hint

# Fill the free space, then punch 30 blocks of every 32 on disk, keeping
# the first and the last: free runs of 30 blocks, none holding an aligned
# 16-block unit, but long enough for a plain request of 16 blocks.
prealloc_most "$MNT/filler" || die "fallocate filler"
runs "$MNT/filler" | awk '{
		lb = $1 / 4096; n = $2 / 4096; pb = $3 / 4096
		for (q = pb - pb % 32; q + 32 <= pb + n; q += 32)
			if (q >= pb) printf "fpunch %d %d\n", (lb + q + 1 - pb) * 4096, 30 * 4096
	}' >"$SCRATCH/punch"
[ -s "$SCRATCH/punch" ] || die "no punch plan"
xfs_io "$MNT/filler" <"$SCRATCH/punch" || die "punching"
# A forcealign file eats every aligned unit left, then gives back its unit
# that lies furthest on disk: the only aligned free unit.
: >"$MNT/eater"
[ "$(kt setx "$MNT/eater" $BOTH $UNIT)" = ok ] || die "forcealign on the eater"
fallocate -l 1g "$MNT/eater" 2>/dev/null && die "1 GiB fitted in a 1 GiB filesystem"
last=$(xfs_io -c 'fiemap' "$MNT/eater" | awk '
	$2 ~ /^\[/ && $3 != "hole" {
		split(substr($2, 2), l, /[].]+/); split($3, p, /\.\./)
		pe = (p[2] + 1) / 8; le = (l[2] + 1) / 8
		if (pe > best) { best = pe; lu = le - '$UNITB' }
	}
	END { print lu, best - '$UNITB' }')
read -r lunit punit <<<"$last"
[ -n "$punit" ] || die "no eater extent"
far=$((punit / GROUP))
echo "the one aligned free unit: block $punit, group $far of 256"
[ "$far" -ge 128 ] || die "the unit left is not far from the goal (group $far)"
fallocate -p -o $((lunit * 4096)) -l $UNIT "$MNT/eater" || die "punch the eater's unit"
umount "$MNT"
dumpe2fs "$UBD" 2>/dev/null | awk -v u=$UNITB '
	/^  Free blocks: / {
		sub(/^  Free blocks: /, ""); n = split($0, r, /, */)
		for (i = 1; i <= n; i++) {
			if (split(r[i], e, "-") == 1) e[2] = e[1]
			free += e[2] - e[1] + 1
			a = e[1] + (u - e[1] % u) % u
			if (a + u - 1 <= e[2]) aligned++
		}
	}
	END { print free + 0, aligned + 0 }' >"$SCRATCH/free"
read -r nfree naligned <"$SCRATCH/free"
echo "free blocks: $nfree, free aligned units: $naligned"
[ "$nfree" -gt 100000 ] || die "only $nfree blocks free"
expect "free aligned units" "$naligned" 1

# fresh_mount: mount with nothing loaded and no prefetch (see the top).
fresh_mount() {
	umount "$MNT" 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	mount -t ext4 -o no_prefetch_block_bitmaps "$UBD" "$MNT" || die "mount"
	echo 0 >"/sys/fs/ext4/${UBD#/dev/}/mb_prefetch" || die "mb_prefetch"
}

# traced CMD...: run CMD with the events on; prints "MAX TOTAL": the most
# synchronous bitmap reads within one allocator call, and all of them.
# $SCRATCH/traced-failed says that CMD failed.
traced() {
	local e events="ext4_request_blocks ext4_allocate_blocks ext4_read_block_bitmap_load"

	echo 0 >$T/tracing_on
	echo >$T/trace
	rm -f "$SCRATCH/traced-failed"
	for e in $events; do echo 1 >"$T/events/ext4/$e/enable"; done
	echo 1 >$T/tracing_on
	"$@" >"$SCRATCH/traced-out" 2>&1 || : >"$SCRATCH/traced-failed"
	echo 0 >$T/tracing_on
	for e in $events; do echo 0 >"$T/events/ext4/$e/enable"; done
	awk '
		/ ext4_request_blocks:/ { on[$1] = 1; n[$1] = 0; next }
		/ ext4_read_block_bitmap_load:/ && / prefetch 0/ {
			total++; if (on[$1]) n[$1]++; next
		}
		/ ext4_allocate_blocks:/ {
			if (on[$1] && n[$1] > max) max = n[$1]
			on[$1] = 0
		}
		END { print max + 0, total + 0 }' $T/trace
}

fresh_mount
: >"$MNT/plain"
read -r max total < <(traced xfs_io -d -c 'pwrite -q 0 64k' "$MNT/plain")
[ ! -e "$SCRATCH/traced-failed" ] || die "plain write: $(cat "$SCRATCH/traced-out")"
echo "plain 64 KiB write after mount: $total bitmap reads"

fresh_mount
: >"$MNT/hint"
[ "$(kt setx "$MNT/hint" $EXTSIZE $UNIT)" = ok ] || die "hint"
read -r max total < <(traced xfs_io -d -c 'pwrite -q 0 64k' "$MNT/hint")
[ ! -e "$SCRATCH/traced-failed" ] || die "hinted write: $(cat "$SCRATCH/traced-out")"
echo "hinted 64 KiB write after mount: at most $max bitmap reads in one allocator call, $total in all"
# (Each check of the count goes on to the next case, for the numbers.)
bad=
if [ "$max" -le $MAX_READS ]; then
	ok "the hinted allocation read $max bitmaps under its handle"
else
	echo "FAIL: one aligned allocation read $max block bitmaps under its handle (want <= $MAX_READS)"
	bad=1
fi
[ "$(stat -c %b "$MNT/hint")" -gt 0 ] || die "the hinted file got no blocks"

fresh_mount
: >"$MNT/strict"
[ "$(kt setx "$MNT/strict" $BOTH $UNIT)" = ok ] || die "forcealign"
read -r max total < <(traced xfs_io -d -c 'pwrite -q -S 0xa5 0 64k' "$MNT/strict")
[ ! -e "$SCRATCH/traced-failed" ] ||
	die "forcealign write with one aligned unit free: $(cat "$SCRATCH/traced-out")"
echo "forcealign 64 KiB write after mount: at most $max bitmap reads in one allocator call, $total in all"
units_aligned "$MNT/strict" $UNIT || die "the forcealign file is not in aligned units"
got=$(runs "$MNT/strict" | awk '{ print $3 / 4096 }')
expect "the forcealign unit is the one left" "$got" "$punit"
filled "$MNT/strict" 0 $UNIT || die "forcealign data"
if [ "$max" -le $MAX_READS ]; then
	ok "the forcealign allocation read $max bitmaps under its handle"
else
	echo "FAIL: one forcealign allocation read $max block bitmaps under its handle (want <= $MAX_READS)"
	bad=1
fi

# Nothing aligned is left now: ENOSPC, after every group was looked at.
: >"$MNT/strict2"
[ "$(kt setx "$MNT/strict2" $BOTH $UNIT)" = ok ] || die "forcealign"
out=$(xfs_io -d -c 'pwrite -q 0 64k' "$MNT/strict2" 2>&1)
case $out in
*"No space left"*) ok "no aligned unit left: ENOSPC" ;;
*) die "a second forcealign write did not fail with ENOSPC: $out" ;;
esac
umount "$MNT"
[ -z "$bad" ] || exit 1
exit 0
