#!/bin/bash
# PID 1 of the UML guest that tests/bench/scale.sh boots through
# kernel/boot.sh: the allocation cost of extent size hint alignment on a
# large sparse filesystem (SCALE_DEV, default /dev/ubdb: the sparse image
# scale.sh passes as ubd1; with SCALE_JOIN=DEV,DEV, the two joined by a
# device-mapper linear target, for sizes the host cannot hold in one file),
# made with lazy inode table and journal init and mounted with
# noinit_itable,no_prefetch_block_bitmaps, so that nothing but the
# measured allocations reads or initializes the groups.
#
#   FIRST   the first allocation after a mount (caches dropped): one file,
#           one 4 KiB O_DIRECT write, as a forcealign file with a 64 KiB
#           extsize (aligned) or a plain file; the kinds alternate which
#           goes first each round.  With it, what the allocation's scan
#           cost (ext4 trace events): block bitmaps read from disk, buddy
#           cache groups built, and of the allocation itself the groups
#           mballoc scanned and its final criterion; and how much
#           Buffers (bitmaps) and Cached (the buddy cache) grew.
#           scene=fresh on the new filesystem; scene=worst after the fill
#           below, from the directory next to it.
#   STEADY  SCALE_FILES files of UNIT bytes each (4 KiB and 64 KiB), each
#           written once with O_DIRECT, as forcealign files with extsize
#           UNIT (aligned) or plain files, on the same mount.
#   FILL    the worst case: tests/bench/fragment preallocates
#           SCALE_WORST_GROUPS groups' worth of a file and punches it so
#           that those groups are initialized, mostly free, and hold no
#           free aligned 64 KiB unit: an aligned scan starting there has to
#           read and build every one of them.
#
# Lines "FIRST scene=S kind=K round=R files=1 write_ns=... bb_reads=N ...",
# "STEADY kind=K unit=U round=R files=N write_ns=...", "FILL ..." and
# "INFO ..." in $EXTALIGN_OUT/results; tests/bench alloc-files does the
# timing (only the writes).
# From the kernel command line: EXTALIGN_OUT, SCALE_TOOL (alloc-files),
# SCALE_FRAGMENT (fragment), SCALE_ROUNDS (default 5), SCALE_FILES (default
# 2000), SCALE_WORST_GROUPS (default 256; 0 skips the worst case),
# SCALE_DEV, SCALE_JOIN.
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(cd "$HERE/../.." && pwd)
# shellcheck source=../kernel/guest.sh
. "$TOP/tests/kernel/guest.sh"
guest_setup

OUT=${EXTALIGN_OUT:-/tmp/extalign-scale-out}
mkdir -p "$OUT"
exec >"$OUT/guest.log" 2>&1
DEV=${SCALE_DEV:-/dev/ubdb}
TOOL=${SCALE_TOOL:?}
FRAGMENT=${SCALE_FRAGMENT:?}
ROUNDS=${SCALE_ROUNDS:-5}
FILES=${SCALE_FILES:-2000}
WORST=${SCALE_WORST_GROUPS:-256}
FORCEALIGN=0x100800 # FS_XFLAG_FORCEALIGN | FS_XFLAG_EXTSIZE
UNIT=65536
M=/run/scale
R=$OUT/results
T=/sys/kernel/tracing
MOUNT_OPTS=noinit_itable,no_prefetch_block_bitmaps
DM=extalign-scale
mkdir -p "$M"
: >"$R"

finish() {
	umount "$M" 2>/dev/null
	[ -n "${SCALE_JOIN:-}" ] && dmsetup remove $DM 2>/dev/null
	echo "done" >"$OUT/done"
	guest_poweroff
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

if [ -n "${SCALE_JOIN:-}" ]; then
	# One linear target over the parts, in order: no udev in the guest,
	# so the kernel's /dev/dm-N node is the device.
	table='' start=0
	for d in ${SCALE_JOIN//,/ }; do
		[ -b "$d" ] || { echo "ERROR no $d" >>"$R"; finish; }
		s=$(blockdev --getsz "$d")
		table+="$start $s linear $d 0"$'\n'
		start=$((start + s))
	done
	printf '%s' "$table" | dmsetup create $DM ||
		{ echo "ERROR dmsetup create $DM over $SCALE_JOIN" >>"$R"; finish; }
	DEV=/dev/dm-$(dmsetup info -c --noheadings -o minor $DM | tr -d ' ')
fi
[ -b "$DEV" ] || { echo "ERROR no $DEV" >>"$R"; finish; }

mountpoint -q $T || mount -t tracefs nodev $T
EVENTS="ext4_read_block_bitmap_load ext4_mb_bitmap_load ext4_mb_buddy_bitmap_load ext4_mballoc_alloc"
trace_ok=1
for e in $EVENTS; do
	[ -d $T/events/ext4/$e ] || trace_ok=0
done
if [ $trace_ok = 1 ]; then
	# Room for three events for each of 131072 groups (16 TiB) and more.
	echo 16384 >$T/buffer_size_kb
	for e in $EVENTS; do echo 1 >$T/events/ext4/$e/enable; done
	echo 0 >$T/tracing_on
else
	echo "INFO no_trace_events (CONFIG_FTRACE / ext4 tracepoints): scan counts are missing" >>"$R"
fi

t=$(now_ms)
mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=1,lazy_journal_init=1,nodiscard "$DEV" ||
	{ echo "ERROR mkfs.ext4 $DEV" >>"$R"; finish; }
mkfs_ms=$(($(now_ms) - t))
groups=$(dumpe2fs -h "$DEV" 2>/dev/null | awk -F: '
	/^Block count/ { b = $2 } /^Blocks per group/ { g = $2 } END { print int((b + g - 1) / g) }')

# fresh_mount [OPTIONS]: remount with cold caches (and OPTIONS added).
fresh_mount() {
	umount "$M" 2>/dev/null
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount -t ext4 -o $MOUNT_OPTS${1:+,$1} "$DEV" "$M" ||
		{ echo "ERROR mount" >>"$R"; finish; }
}
t=$(now_ms)
fresh_mount
mount_ms=$(($(now_ms) - t))
# What the mount itself pins for all groups, the scan or not: mballoc's
# per-group info (slab caches ext4_groupinfo_*).
groupinfo_kb=$(awk '/^ext4_groupinfo/ { kb += $2 * $4 / 1024 } END { printf "%d", kb }' /proc/slabinfo)
echo "INFO bytes=$(blockdev --getsize64 "$DEV") groups=$groups mkfs_ms=$mkfs_ms mount_ms=$mount_ms groupinfo_kb=$groupinfo_kb parts=$(tr , ' ' <<<"${SCALE_JOIN:-$DEV}" | wc -w)" >>"$R"

# The directories first, so that the first allocation measured is the
# write's and not a directory block's.  worst/ holds the fill and its
# test directories: a regular file's goal is the second group of its
# inode's flex group, so theirs is where the fill starts.
for ((r = 1; r <= ROUNDS; r++)); do
	for s in fresh worst/first; do
		mkdir -p "$M/$s-aligned-$r" "$M/$s-plain-$r"
	done
	for u in 4096 $UNIT; do
		mkdir -p "$M/steady-aligned-$u-$r" "$M/steady-plain-$u-$r"
	done
done

field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
# one KIND DIR COUNT BYTES: alloc-files for that kind, its output line.
one() {
	if [ "$1" = aligned ]; then
		"$TOOL" "$2" "$3" "$4" $FORCEALIGN "${5:-$4}"
	else
		"$TOOL" "$2" "$3" "$4"
	fi
}

# scan_counts: the trace since tracing_on, counted: bitmaps read from disk
# (prefetches included), groups whose buddy cache pages were built, and
# the data allocation's groups scanned, criterion, goal and result group
# (its last ext4_mballoc_alloc line: a new file's first write allocates
# nothing else).  "+" after the counts if the trace buffer overran.
scan_counts() {
	[ $trace_ok = 1 ] || return 0
	local over
	over=$(awk '/^overrun:/ { print $2 }' $T/per_cpu/cpu0/stats)
	awk -v over="${over:-0}" '
		/ ext4_read_block_bitmap_load:/ { rd++ }
		/ ext4_mb_bitmap_load:/ { bm++ }
		/ ext4_mb_buddy_bitmap_load:/ { bd++ }
		/ ext4_mballoc_alloc:/ {
			for (i = 1; i < NF; i++) {
				if ($i == "grps") grps = $(i + 1)
				if ($i == "cr") cr = $(i + 1)
				if ($i == "goal") goal = $(i + 1)
				if ($i == "result") res = $(i + 1)
			}
		}
		END {
			sub("/[^/]*@.*", "", goal); sub("/[^/]*@.*", "", res)
			printf "bb_reads=%d%s buddy_groups=%d bitmap_groups=%d grps=%s cr=%s goal=%s result=%s",
				rd, over ? "+" : "", bd, bm, grps, cr, goal, res
		}' $T/trace
}

# free_units FIRST LAST: of the groups holding blocks FIRST..LAST (the
# fill), on the unmounted filesystem, how many still have a free aligned
# UNIT, and how many in a row from the first have none: what the worst
# case really made of them.
free_units() {
	dumpe2fs "$DEV" 2>/dev/null | awk -v bpg="$bpg" -v u=$((UNIT / 4096)) \
		-v g0=$(($1 / bpg)) -v g1=$(($2 / bpg)) '
		/^Group [0-9]+:/ { g = $2 + 0 }
		/^  Free blocks: / && g >= g0 && g <= g1 {
			sub(/^  Free blocks: /, "")
			n = split($0, runs, ", ")
			has = 0
			for (i = 1; i <= n; i++) {
				split(runs[i], ab, "-")
				a = ab[1] + 0; b = (2 in ab) ? ab[2] + 0 : a
				s = int((a + u - 1) / u) * u
				if (s + u - 1 <= b) has = 1
			}
			if (has) with++
			else if (!with) run++
		}
		END { printf "groups=%d with_free_unit=%d clean_from_first=%d", g1 - g0 + 1, with, run }'
}

# first SCENE DIR-PREFIX: the FIRST rounds of one scene.
first() {
	local r kind order out b0 c0 rc

	for ((r = 1; r <= ROUNDS; r++)); do
		order="aligned plain"
		[ $((r % 2)) = 0 ] && order="plain aligned"
		for kind in $order; do
			fresh_mount
			b0=$(meminfo Buffers) c0=$(meminfo Cached)
			if [ $trace_ok = 1 ]; then
				echo >$T/trace
				echo 1 >$T/tracing_on
			fi
			out=$(one $kind "$M/$2-$kind-$r" 1 4096 $UNIT 2>&1)
			rc=$?
			[ $trace_ok = 1 ] && echo 0 >$T/tracing_on
			if [ $rc = 0 ]; then
				echo "FIRST scene=$1 kind=$kind round=$r $out buffers_kb=$(($(meminfo Buffers) - b0)) cached_kb=$(($(meminfo Cached) - c0)) $(scan_counts)" >>"$R"
			else
				echo "ERROR FIRST scene=$1 kind=$kind round=$r $out" >>"$R"
			fi
		done
	done
}

first fresh fresh

fresh_mount
for u in 4096 $UNIT; do
	for ((r = 1; r <= ROUNDS; r++)); do
		order="aligned plain"
		[ $((r % 2)) = 0 ] && order="plain aligned"
		for kind in $order; do
			# The previous batch's inodes written back and committed
			# now, not during this one.
			sync
			if out=$(one $kind "$M/steady-$kind-$u-$r" "$FILES" $u 2>&1); then
				echo "STEADY kind=$kind unit=$u round=$r $out" >>"$R"
			else
				echo "ERROR STEADY kind=$kind unit=$u round=$r $out" >>"$R"
			fi
		done
	done
done

if [ "$WORST" -gt 0 ]; then
	bpg=$(dumpe2fs -h "$DEV" 2>/dev/null | awk -F: '/^Blocks per group/ { print $2 + 0 }')
	ipg=$(dumpe2fs -h "$DEV" 2>/dev/null | awk -F: '/^Inodes per group/ { print $2 + 0 }')
	bytes=$((WORST * bpg * 4096))
	# The fill must start at its own goal, the second group of worst/'s
	# flex group, which is the goal of the files in worst/'s
	# subdirectories too (Orlov keeps a subdirectory in its parent's
	# flex group).  So a linear scan from the goal (the optimised scan
	# would pick whatever groups earlier allocations left in its
	# lists), and no stream allocation (which would start at the
	# filesystem's last allocation instead).
	fresh_mount mb_optimize_scan=0
	stream=/sys/fs/ext4/$(basename "$(readlink -f "$DEV")")/mb_stream_req
	old_stream=$(cat "$stream")
	echo 2147483647 >"$stream"
	t=$(now_ms)
	if out=$("$FRAGMENT" "$M/worst/fill" $bytes $UNIT 2>&1); then
		ig() { echo $((($(stat -c %i "$1") - 1) / ipg)); }
		echo "FILL groups=$WORST bytes=$bytes $out fill_ms=$(($(now_ms) - t))" \
			"first_group=$(($(field first_block <<<"$out") / bpg))" \
			"last_group=$(($(field last_block <<<"$out") / bpg))" \
			"inode_group=$(ig "$M/worst/fill")" \
			"test_dir_inode_group=$(ig "$M/worst/first-aligned-1")" >>"$R"
		echo "$old_stream" >"$stream"
		umount "$M"
		echo "FILL_CHECK $(free_units "$(field first_block <<<"$out")" \
			"$(field last_block <<<"$out")")" >>"$R"
		first worst worst/first
	else
		echo "ERROR FILL $out" >>"$R"
	fi
fi

umount "$M"
t=$(now_ms)
if ! e2fsck -fn "$DEV" >"$OUT/fsck.log" 2>&1; then
	echo "ERROR e2fsck -fn $DEV is not clean" >>"$R"
fi
echo "INFO fsck_ms=$(($(now_ms) - t))" >>"$R"
dmesg | grep -E 'WARNING:|BUG:|EXT4-fs (error|warning)' >"$OUT/klog"
[ -s "$OUT/klog" ] && echo "ERROR kernel log: $(head -n 3 "$OUT/klog" | tr '\n' ' ')" >>"$R"
finish
