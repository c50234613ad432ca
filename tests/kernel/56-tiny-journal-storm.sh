#!/bin/bash
# Issue 15.3: the journal credits of the series' new handles (the widened
# and unit allocations, the zero-and-convert of atomic writes, the one
# handle conversion at their completion, the truncate tail of forcealign
# files, the inherited hint of new files) under a write storm on the
# smallest journal mke2fs makes for 4 KiB blocks (1024 blocks: a
# transaction holds at most 256).  A handle that asks for more credits
# than a transaction can hold, or dirties more buffers than it reserved,
# makes jbd2 warn (WARNING, Call Trace: init.sh fails the test on them);
# an aborted journal logs an EXT4-fs error and leaves the filesystem read
# only.  Run without and with fast commits.  (-J size=1 is refused by
# mke2fs for 4 KiB blocks: the journal must have at least 1024 blocks.)
. "$(dirname "$0")/lib.sh"

BOTH=0x100800 EXTSIZE=0x800 EXTSZINHERIT=0x1000 FORCEALIGN=0x100000
K=1024 M=$((1024 * 1024))
OPS=${STORM_OPS:-150}

sd=$(scsi_disk) || die "no scsi_debug disk"

# fa FILE UNIT: an empty forcealign file.
fa() {
	: >"$1"
	[ "$(kt setx "$1" $BOTH "$2")" = ok ] || die "forcealign $2 on $1"
}

# stream SEED KIND: OPS xfs_io commands of one writer on its file.
#   buffered: buffered writes anywhere, fsync now and then
#   direct:   block-aligned direct writes (run with xfs_io -d)
#   units:    fallocate, punch, zero range and collapse in whole 64 KiB
#             units, truncate anywhere, buffered writes in between
#   sparse:   small writes far apart in a file with a 4 MiB hint
stream() {
	awk -v seed="$1" -v kind="$2" -v ops="$OPS" -v K=$K -v U=$((64 * K)) '
	function r(n) { return int(rand() * n) }
	BEGIN {
		srand(seed)
		for (i = 0; i < ops; i++) {
			if (kind == "buffered")
				printf "pwrite -q -S 0x%x %d %d\n", 1 + r(250), r(8192) * 1024, (1 + r(40)) * 1024
			else if (kind == "direct")
				printf "pwrite -q -S 0x%x %d %d\n", 1 + r(250), r(2048) * 4 * K, (1 + r(16)) * 4 * K
			else if (kind == "units") {
				c = r(6); u = r(128) * U; n = (1 + r(4)) * U
				if (c == 0) printf "falloc %d %d\n", u, n
				else if (c == 1) printf "fpunch %d %d\n", u, n
				else if (c == 2) printf "fzero %d %d\n", u, n
				else if (c == 3) printf "truncate %d\n", r(8192) * 1024 + r(1024)
				else if (c == 4) printf "fcollapse %d %d\n", u, U
				else printf "pwrite -q -S 0x%x %d %d\n", 1 + r(250), r(8192) * 1024, (1 + r(64)) * 1024
			} else if (kind == "sparse")
				printf "pwrite -q -S 0x%x %d %d\n", 1 + r(250), r(16) * 4 * 1048576 + r(4096) * 1024, (1 + r(8)) * 1024
			if (r(8) == 0)
				print "fsync"
		}
	}'
}

# atomics FILE SEED MAX: OPS/3 atomic writes of 16 KiB up to MAX KiB (16,
# 32 or 64) at naturally aligned offsets of FILE, over holes, unwritten
# and written units alike (other writers punch and preallocate in it).
atomics() {
	local i len off bad=0 orders

	RANDOM=$2
	orders=$(($3 == 64 ? 3 : $3 == 32 ? 2 : 1))
	for ((i = 0; i < OPS / 3; i++)); do
		len=$((16 * K << (RANDOM % orders)))
		off=$(((RANDOM % 128) * 64 * K + (RANDOM % (64 * K / len)) * len))
		case $(kt awrite "$1" $off $len) in
		"ok $len") ;;
		*) bad=$((bad + 1)) ;;
		esac
	done
	echo "$bad"
}

# storm: every writer at once, then the checks.
storm() {
	local what=$1 pids=() names=() i failed=

	mkdir "$MNT/inherit"
	expect "$what: inheriting directory" \
		"$(kt setx "$MNT/inherit" $((EXTSZINHERIT | FORCEALIGN)) $((64 * K)))" ok
	fa "$MNT/buf" $((64 * K))
	fa "$MNT/dio" $((16 * K))
	fa "$MNT/units" $((64 * K))
	: >"$MNT/sparse"
	kt setx "$MNT/sparse" $EXTSIZE $((4 * M)) >/dev/null || die "hint on sparse"
	# The atomic writes share the unit file with its fallocate, punch,
	# zero range and truncate stream.
	xfs_io -d -c "pwrite -q -S 0x11 0 $((8 * M))" "$MNT/units" || die "fill units"

	# (xfs_io exits 1 after any failed command, so only its output
	# tells: see below.)
	{ stream 1 buffered | xfs_io "$MNT/buf" >"$SCRATCH/buf.out" 2>&1; true; } &
	pids+=($!) names+=(buf)
	{ stream 2 direct | xfs_io -d "$MNT/dio" >"$SCRATCH/dio.out" 2>&1; true; } &
	pids+=($!) names+=(dio)
	{ stream 3 units | xfs_io "$MNT/units" >"$SCRATCH/units.out" 2>&1; true; } &
	pids+=($!) names+=(units)
	{ stream 4 sparse | xfs_io "$MNT/sparse" >"$SCRATCH/sparse.out" 2>&1; true; } &
	pids+=($!) names+=(sparse)
	{ stream 5 buffered | xfs_io "$MNT/buf" >"$SCRATCH/buf2.out" 2>&1; true; } &
	pids+=($!) names+=(buf2)
	atomics "$MNT/units" 6 64 >"$SCRATCH/atomic.out" &
	pids+=($!) names+=(atomic)
	atomics "$MNT/dio" 7 16 >"$SCRATCH/atomic2.out" &
	pids+=($!) names+=(atomic2)
	# New files taking the hint and forcealign, each a small write and an
	# fsync: the creation transaction carries the xattr.
	(
		for ((i = 0; i < OPS; i++)); do
			xfs_io -f -c "pwrite -q -S 0x22 0 $(((i % 5 + 1) * 3000))" \
				-c fsync "$MNT/inherit/f$i" || exit 1
			((i % 3)) || rm -f "$MNT/inherit/f$((i - 1))"
		done
	) &
	pids+=($!) names+=(inherit)
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || failed+=" ${names[$i]}"
	done
	expect "$what: writers that failed" "${failed:-none}" none
	# xfs_io reports a failed command on its output, which has nothing
	# else with -q.  A collapse that reaches EOF is refused with EINVAL,
	# which is expected (every range of the unit stream is whole units,
	# so no other command is refused for forcealign).
	echo "$what: collapses refused at EOF:" \
		"$(grep -c '^fallocate: Invalid argument' "$SCRATCH/units.out")"
	for o in buf buf2 dio units sparse; do
		grep -v '^fallocate: Invalid argument' "$SCRATCH/$o.out" |
			grep . && die "$what: $o writer: $(head -n 3 "$SCRATCH/$o.out")"
	done
	expect "$what: atomic writes refused (unit file)" "$(cat "$SCRATCH/atomic.out")" 0
	expect "$what: atomic writes refused (16k unit file)" "$(cat "$SCRATCH/atomic2.out")" 0
	sync
	grep -q " $MNT ext4 rw," /proc/mounts || die "$what: the filesystem went read only"
	: >"$MNT/after" || die "$what: cannot create a file afterwards"
	for f in buf:64 dio:16 units:64; do
		[ -n "$(runs "$MNT/${f%:*}")" ] || continue
		units_aligned "$MNT/${f%:*}" $((${f#*:} * K)) ||
			die "$what: ${f%:*} not in whole units"
	done
	# jbd2 and ext4 name credit and journal trouble in the log.
	dmesg | grep -E 'JBD2|jbd2|credits|[Aa]bort' | grep -v 'jbd2: .*started' &&
		die "$what: journal trouble in the kernel log"
	ok "$what: no journal warnings, no abort"
	umount "$MNT"
}

fresh_ext4 "$sd" -b 4096 -J size=4
expect "journal blocks" "$(dumpe2fs -h "$sd" 2>/dev/null | sed -n 's/^Total journal blocks: *//p')" 1024
storm "tiny journal"

fresh_ext4 "$sd" -b 4096 -J size=4 -O fast_commit
storm "tiny journal, fast commit"
exit 0
