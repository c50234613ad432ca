#!/bin/bash
# Helpers for the tests/kernel/*.sh tests, which run inside the UML kernel
# that kernel/check.sh boots or the QEMU guest of kernel/qemu-test.sh (PID 1
# is tests/kernel/init.sh).  Source it.  "bash lib.sh cleanup" is what
# init.sh runs after every test.
#
# Exit status of a test: 0 pass, 77 skip (with a "SKIP: reason" line),
# anything else fail.

# The scratch disk: UML's ubd disk, or what EXTALIGN_SCRATCH_DISK names
# (the QEMU guest's second virtio disk).
# shellcheck disable=SC2034 # for the tests
UBD=${EXTALIGN_SCRATCH_DISK:-/dev/ubda}
# Mount points and scratch files go to the guest's own /run (tmpfs), not
# to /tmp, which is the host's and shared with any other guest running at
# the same time.
MNT=/run/mnt
SCRATCH=/run/extalign-test
DEVS_FILE=$SCRATCH/devs
mkdir -p "$SCRATCH" "$MNT"
KTOOL=${KTOOL:-ktool}

die() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok: $*"; }

# expect WHAT GOT WANT
expect() {
	if [ "$2" != "$3" ]; then
		die "$1: got '$2', want '$3'"
	fi
	ok "$1: $2"
}

# The scsi_debug disk (configured for atomic writes on the command line).
scsi_disk() {
	local b
	for b in /sys/block/sd*; do
		[ -e "$b/device/model" ] || continue
		if grep -q scsi_debug "$b/device/model"; then
			echo "/dev/${b##*/}"
			return 0
		fi
	done
	return 1
}

# The scsi_debug disk of every guest: 512 MiB of 4 KiB sectors taking
# hardware atomic writes of 4 KiB to 64 KiB (16 sectors), atomic units
# aligned to their size.  UML has scsi_debug built in and gets these on its
# command line (kernel/boot.sh); the QEMU guest loads the module with them.
SCSI_DEBUG_OPTS=(sector_size=4096 physblk_exp=0 lowest_aligned=0
		 dev_size_mb=512 atomic_wr=1 atomic_wr_max_length=16
		 atomic_wr_gran=1 atomic_wr_align=1)

# scsi_debug_load: modprobe scsi_debug with SCSI_DEBUG_OPTS, as fstests'
# generic/767 does (_get_scsi_debug_dev), and wait for its disk.
scsi_debug_load() {
	modprobe scsi_debug "${SCSI_DEBUG_OPTS[@]}" || return 1
	for _ in $(seq 100); do
		scsi_disk >/dev/null && [ -b "$(scsi_disk)" ] && return 0
		sleep 0.1
	done
	echo "scsi_debug loaded but no disk appeared"
	return 1
}

# fresh_ext4 DEV [mke2fs options...]: a new ext4 on DEV mounted on $MNT,
# as large as DEV or $FS_SIZE (a mke2fs size such as 256M) if set.
fresh_ext4() {
	local dev=$1

	shift
	umount "$MNT" 2>/dev/null
	mkdir -p "$MNT"
	# The filesystem this replaces gets its fsck first.
	if grep -qx "$dev" "$DEVS_FILE" 2>/dev/null &&
	   ! grep -q "^$dev " /proc/mounts; then
		fs_check "$dev" || die "$dev is not clean"
	fi
	mkfs.ext4 -q -F -E nodiscard "$@" "$dev" ${FS_SIZE:+"$FS_SIZE"} ||
		die "mkfs.ext4 $* $dev ${FS_SIZE:-}"
	grep -qx "$dev" "$DEVS_FILE" 2>/dev/null || echo "$dev" >>"$DEVS_FILE"
	mount -t ext4 "$dev" "$MNT" || die "mount $dev"
}

# need_kept_hint: skip unless the ext4 on $MNT keeps a 64 KiB extent size
# hint (the extalign series is applied), asked of a probe file.
need_kept_hint() {
	: >"$MNT/.hint-probe"
	kt setx "$MNT/.hint-probe" 0x800 65536 >/dev/null
	[ "$(extsize "$MNT/.hint-probe")" = 65536 ] ||
		skip "this kernel's ext4 keeps no extent size hint (the extalign series is not applied)"
	rm -f "$MNT/.hint-probe"
}

# one_cpu CMD...: run CMD on CPU 0.  Small writes (up to 16 blocks) take
# their blocks from a per-CPU locality group preallocation, so two files
# written one after the other sit side by side on disk only when both
# writers ran on the same CPU; the tests that build a misaligned layout
# that way (one file's block between another's) depend on it on an SMP
# guest (QEMU's -smp 2), and run their writers with this.
one_cpu() { taskset -c 0 "$@"; }

# offline_forcealign DEV NAME BLOCKS: make the file NAME in the root of the
# ext4 on DEV (mounted on MNT) forcealign with a hint of BLOCKS blocks
# behind the kernel's back, whatever its extents: unmounted, debugfs sets
# the EXTENTS, FORCEALIGN and EXTSIZE flags and the system.extsize xattr;
# then it mounts again.  For tests of units broken on disk.
offline_forcealign() {
	local dev=$1 name=$2 blocks=$3

	cd / || die "cd /"
	umount "$MNT" || die "umount"
	debugfs -w -R "set_inode_field /$name flags 0xc80000" "$dev" >/dev/null 2>&1 ||
		die "debugfs flags of $name"
	debugfs -w -R "ea_set /$name system.extsize $blocks" "$dev" >/dev/null 2>&1 ||
		die "debugfs ea_set on $name"
	mount -t ext4 "$dev" "$MNT" || die "mount"
}

# remount DEV: unmount $MNT and mount DEV on it again (drops the caches).
remount() {
	umount "$MNT" || die "umount $MNT"
	mount -t ext4 "$1" "$MNT" || die "mount $1"
}

# ktool ARGS...: run the probe, print and return its output line.
kt() {
	"$KTOOL" "$@"
}

# set_extsize FILE SIZE: "xfs_io -c 'extsize SIZE'" where xfs_io handles
# ext4 files; Debian 12's xfs_io (6.1) runs extsize on XFS only ("foreign
# file active"), so fall back to ktool's FS_IOC_FSSETXATTR there.
set_extsize() {
	local out bytes

	out=$(xfs_io -c "extsize $2" "$1" 2>&1)
	case $out in
	*"foreign file active"*) ;;
	"") return 0 ;;
	*) echo "$out"; return 1 ;;
	esac
	bytes=$(numfmt --from=iec "${2^^}")
	if [ -d "$1" ]; then
		kt setx "$1" 0x1000 "$bytes" | grep -qx ok
	else
		kt setx "$1" 0x800 "$bytes" | grep -qx ok
	fi
}

# xflags FILE: the FS_IOC_FSGETXATTR flags of FILE, "0x..." form.
xflags() {
	kt getx "$1" | sed -n 's/^xflags=\(0x[0-9a-f]*\) .*/\1/p'
}

# extsize FILE: fsx_extsize in bytes.
extsize() {
	kt getx "$1" | sed -n 's/.* extsize=\([0-9]*\)$/\1/p'
}

# runs FILE: the physically contiguous runs of FILE's extents (ext4 splits
# a unit into written and unwritten extents), "lstart len pstart" in bytes.
runs() {
	xfs_io -c 'fiemap -v' "$1" | awk '
	$2 ~ /^\[/ && $3 != "hole" {
		split(substr($2, 2), l, /[].]+/); split($3, p, /\.\./)
		ls = l[1] * 512; le = (l[2] + 1) * 512; ps = p[1] * 512
		if (n && ls == cle && ps == cps + (cle - cls)) { cle = le; next }
		if (n) printf "%.0f %.0f %.0f\n", cls, cle - cls, cps
		cls = ls; cle = le; cps = ps; n = 1
	}
	END { if (n) printf "%.0f %.0f %.0f\n", cls, cle - cls, cps }'
}

# prealloc_most FILE: FILE takes nine tenths of the free blocks of the
# filesystem on $MNT (4 KiB blocks) as one preallocation.
prealloc_most() {
	local free

	free=$(stat -f -c %f "$MNT")
	# shellcheck disable=SC2017 # whole blocks on purpose
	fallocate -l $((free * 9 / 10 * 4096)) "$1"
}

# units_aligned FILE UNIT: FILE has allocated runs and every one of them
# starts and ends on a multiple of UNIT bytes, in the file and on disk.
units_aligned() {
	local ls len ps n=0 bad=0

	while read -r ls len ps; do
		[ -n "$ls" ] || continue
		n=$((n + 1))
		((ls % $2 == 0 && len % $2 == 0 && ps % $2 == 0)) || bad=1
	done <<<"$(runs "$1")"
	if [ $n = 0 ] || [ $bad = 1 ]; then
		echo "$1: not in whole $2-byte units:"
		xfs_io -c 'fiemap -v' "$1"
		return 1
	fi
}

# holds FILE OFF LEN CHAR: the LEN bytes at OFF are all CHAR (tr syntax).
holds() {
	local n

	n=$(dd if="$1" bs=512 skip=$(($2 / 512)) count=$(($3 / 512)) \
		status=none | tr -d "$4" | wc -c)
	[ "$n" = 0 ]
}

# filled FILE OFF LEN: the LEN bytes at OFF are all 0xa5 (ktool's pattern).
filled() { holds "$1" "$2" "$3" '\245'; }

# zeros FILE OFF LEN STATE: the LEN bytes at OFF read as zeros and FIEMAP
# shows them as STATE: "hole" (nothing allocated), "unwritten" (allocated,
# unwritten), or "allocated" (unwritten, or written with zeros: ext4 may
# zero out a small unwritten piece instead of splitting it).  Zeros alone
# would pass for a hole where the test means allocated blocks, or the
# other way round.
zeros() {
	local n got

	n=$(dd if="$1" bs=512 skip=$(($2 / 512)) count=$(($3 / 512)) \
		status=none | tr -d '\000' | wc -c)
	[ "$n" = 0 ] || die "$1: $n non-zero bytes in $3 bytes at $2"
	got=$(fiemap_state "$1" "$2" "$3")
	case $4:$got in
	hole:hole | unwritten:unwritten | allocated:unwritten | \
	allocated:written | allocated:unwritten+written) ;;
	*) xfs_io -c "fiemap -v $2 $3" "$1"
	   die "$1: $3 bytes at $2 read as zeros but are $got, want $4" ;;
	esac
}

# Which e2fsck is which.  /sbin/e2fsck is Debian's in the UML guests
# (the host's root) and the series' in the QEMU guests, whose root has
# our e2fsprogs packages installed; the series' is also
# EXTALIGN_E2FSPROGS/e2fsck where e2fsprogs/check.sh built it.  Either
# is empty where there is none.
SYSTEM_E2FSPROGS=$(dpkg-query -W -f '${Version}' e2fsprogs 2>/dev/null)
SERIES_E2FSCK='' DEBIAN_E2FSCK=/sbin/e2fsck
[ -x "${EXTALIGN_E2FSPROGS:-}/e2fsck" ] && SERIES_E2FSCK=$EXTALIGN_E2FSPROGS/e2fsck
case $SYSTEM_E2FSPROGS in
*extalign*) SERIES_E2FSCK=/sbin/e2fsck DEBIAN_E2FSCK='' ;;
esac

# debian_e2fsck_here: true where there is a Debian e2fsck to run; where
# there is none, says so for the part of the test that needs it.
debian_e2fsck_here() {
	[ -n "$DEBIAN_E2FSCK" ] && return 0
	ok "not here: /sbin/e2fsck is the series' (e2fsprogs $SYSTEM_E2FSPROGS), there is no Debian e2fsck to run"
	return 1
}

# AWK_HEX: an awk function hex("0x...") for the programs below.  They are
# POSIX awk: the QEMU guest's root has mawk, which has no strtonum(), no
# and() and no hex constants.
AWK_HEX='
	function hex(s,  v, i) {
		s = tolower(s); sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}'

# fiemap_state FILE OFF LEN: what FIEMAP says the LEN bytes at OFF are:
# "hole", "unwritten", "written", or a "+" list of those in that order
# when they are mixed.
fiemap_state() {
	xfs_io -c "fiemap -v $2 $3" "$1" | awk -v off=$(($2 / 512)) -v end=$((($2 + $3) / 512)) "$AWK_HEX"'
	$2 ~ /^\[/ {
		split(substr($2, 2), l, /[].]+/)
		if (l[2] + 1 <= off || l[1] >= end) next
		if ($3 == "hole") s["hole"] = 1
		else if (int(hex($NF) / 2048) % 2) s["unwritten"] = 1	# 0x800
		else s["written"] = 1
		covered += (l[2] + 1 < end ? l[2] + 1 : end) - (l[1] > off ? l[1] : off)
	}
	END {
		# xfs_io leaves out a hole at the end of the file.
		if (covered < end - off) s["hole"] = 1
		n = split("hole unwritten written", k, " ")
		for (i = 1; i <= n; i++)
			if (k[i] in s) out = out (out ? "+" : "") k[i]
		print out
	}'
}

# Trace events, from tracefs on TRACEFS.
TRACEFS=/sys/kernel/tracing

# tracefs_mount: tracefs on $TRACEFS, mounted unless it is there already.
tracefs_mount() {
	mountpoint -q $TRACEFS || mount -t tracefs nodev $TRACEFS
}

# need_trace_event SYSTEM/EVENT: skip the test unless tracefs can be had
# and has EVENT.
need_trace_event() {
	tracefs_mount || skip "no tracefs"
	[ -d "$TRACEFS/events/$1" ] || skip "no ${1%%/*} trace events"
}

# trace_start SYSTEM/EVENT...: an empty trace buffer that records those
# events (and no others trace_start turned on) until trace_stop.
trace_start() {
	local e

	TRACE_EVENTS=("$@")
	echo 0 >$TRACEFS/tracing_on
	echo >$TRACEFS/trace
	for e in "${TRACE_EVENTS[@]}"; do
		echo 1 >"$TRACEFS/events/$e/enable"
	done
	echo 1 >$TRACEFS/tracing_on
}

# trace_stop: stop recording; what was recorded stays in $TRACEFS/trace.
trace_stop() {
	local e

	echo 0 >$TRACEFS/tracing_on
	for e in "${TRACE_EVENTS[@]}"; do
		echo 0 >"$TRACEFS/events/$e/enable"
	done
}

# The SCSI commands the scsi_debug disk receives, from the scsi tracepoint:
# devtrace_start, the I/O, devtrace_stop, then dev_writes.  A write that
# went out with REQ_ATOMIC reaches the disk as WRITE ATOMIC(16); anything
# else as WRITE(10/16).
devtrace_start() {
	tracefs_mount || die "no tracefs"
	[ -d $TRACEFS/events/scsi/scsi_dispatch_cmd_start ] ||
		die "no scsi trace events"
	trace_start scsi/scsi_dispatch_cmd_start
}

devtrace_stop() {
	trace_stop
	grep -o 'cmnd=([A-Z0-9_]* lba=[0-9]* txlen=[0-9]*' $TRACEFS/trace |
		sed 's/cmnd=(//; s/lba=//; s/txlen=//' >"$SCRATCH/devtrace"
}

# dev_writes FILE OFF LEN: of the write commands devtrace recorded, those
# that touched the disk blocks holding FILE's bytes OFF..OFF+LEN, as
# "atomic=A whole=W plain=P": A WRITE ATOMIC(16) commands, W of them
# carrying exactly those bytes, and P plain writes.  The filesystem sits
# on the whole disk, so a FIEMAP physical offset is a disk offset.
dev_writes() {
	local lbs sd

	sd=$(scsi_disk) || die "no scsi_debug disk"
	lbs=$(cat "/sys/block/${sd#/dev/}/queue/logical_block_size")
	xfs_io -c "fiemap -v $2 $3" "$1" | awk -v off=$(($2 / 512)) \
		-v end=$((($2 + $3) / 512)) -v spb=$((lbs / 512)) \
		-v trace="$SCRATCH/devtrace" '
	$2 ~ /^\[/ && $3 != "hole" {
		split(substr($2, 2), l, /[].]+/); split($3, p, /\.\./)
		s = l[1] > off ? l[1] : off; e = l[2] + 1 < end ? l[2] + 1 : end
		if (s >= e) next
		n++; ps[n] = (p[1] + s - l[1]) / spb; pe[n] = (p[1] + e - l[1]) / spb
		total += e - s
	}
	END {
		while ((getline line < trace) > 0) {
			split(line, c, " ")
			if (c[1] !~ /^WRITE/) continue
			hit = 0
			for (i = 1; i <= n; i++)
				if (c[2] < pe[i] && c[2] + c[3] > ps[i]) hit = 1
			if (!hit) continue
			if (c[1] == "WRITE_ATOMIC_16") {
				atomic++
				if (n == 1 && c[2] == ps[1] && c[3] * spb == end - off && total == end - off)
					whole++
			} else plain++
		}
		printf "atomic=%d whole=%d plain=%d\n", atomic, whole, plain
	}'
}

# awrite_dev WHAT FILE OFF LEN [WANT]: an RWF_ATOMIC direct write that must
# succeed and reach the disk as one WRITE ATOMIC(16) of exactly its bytes,
# with no plain write over them (WANT: a bash regex of the dev_writes
# result instead, for a write whose unit is zeroed first).
awrite_dev() {
	local got

	devtrace_start
	got=$(kt awrite "$2" "$3" "$4")
	devtrace_stop
	expect "$1" "$got" "ok $4"
	got=$(dev_writes "$2" "$3" "$4")
	[[ $got =~ ^${5:-atomic=1 whole=1 plain=0}$ ]] ||
		die "$1: at the disk: got '$got', want '${5:-atomic=1 whole=1 plain=0}'"
	ok "$1: at the disk: $got"
}

# pwrite_dev WHAT FILE OFF LEN: a plain direct write reaches the disk as
# plain writes only (the counter above also sees writes that are not
# atomic, so that a missing REQ_ATOMIC would show).
pwrite_dev() {
	devtrace_start
	xfs_io -d -c "pwrite -q -S 0xa5 $3 $4" "$2" || die "$1: pwrite"
	devtrace_stop
	dev_writes "$2" "$3" "$4" | grep -qx 'atomic=0 whole=0 plain=[1-9][0-9]*' ||
		die "$1: at the disk: $(dev_writes "$2" "$3" "$4"), want atomic=0 and plain writes"
	ok "$1: at the disk: $(dev_writes "$2" "$3" "$4")"
}

# check_alignment DEV: every forcealign inode of the (unmounted) ext4 on
# DEV has its blocks in whole units, read from the extent tree on disk with
# debugfs: every run of logically and physically contiguous extents
# (written and unwritten alike) starts and ends on a unit, in the file and
# on disk.  Debian's e2fsck knows nothing of the unit rule (the series' in
# e2fsprogs/ reports broken units but passes them).  Forcealign on disk:
# inode flags 0x400000 and 0x800000 with a system.extsize xattr
# (kernel-spec item 6).
check_alignment() {
	local dev=$1 m=$SCRATCH/align-mnt inos out

	mkdir -p "$m"
	mount -t ext4 -o ro "$dev" "$m" 2>/dev/null || return 0
	inos=$(find "$m" -xdev -type f -printf '%i\n' 2>/dev/null)
	umount "$m"
	[ -n "$inos" ] || return 0
	for i in $inos; do echo "stat <$i>"; echo "ex <$i>"; done >"$SCRATCH/align.cmd"
	out=$(debugfs -f "$SCRATCH/align.cmd" "$dev" 2>/dev/null | awk "$AWK_HEX"'
	function check() {
		if (ino == "" || !fa || unit < 2) return
		nfa++
		for (i = 1; i <= nr; i++)
			if (rl[i] % unit || rn[i] % unit || rp[i] % unit) {
				printf "inode %s (unit %d blocks): run of %d blocks at %d, disk block %d\n",
					ino, unit, rn[i], rl[i], rp[i]
				bad++
			}
	}
	/^Inode: [0-9]+ / { check(); ino = $2; fa = 0; unit = 0; nr = 0 }
	/^Inode: .*Flags: 0x/ {
		f = $0; sub(/.*Flags: /, "", f); sub(/ .*/, "", f)
		# Both flags: bits 22 and 23 (0xc00000), 4194304 = 0x400000.
		fa = int(hex(f) / 4194304) % 4 == 3
	}
	/^ *system\.extsize \([0-9]+\) = / { u = $0; gsub(/.*= "|".*/, "", u); unit = u + 0 }
	# Leaf extents of "ex": "L/D E/N lstart - lend pstart - pend len [Uninit]".
	/^ *[0-9]+\/ *[0-9]+ +[0-9]+\/ *[0-9]+ +[0-9]+ - +[0-9]+ +[0-9]+ - +[0-9]+ +[0-9]+/ {
		x = $0; gsub(/\/ */, "/", x); split(x, a)
		split(a[1], lv, "/")
		if (lv[1] != lv[2]) next
		ls = a[3]; ps = a[6]; len = a[9]
		if (nr && ls == rl[nr] + rn[nr] && ps == rp[nr] + rn[nr]) rn[nr] += len
		else { nr++; rl[nr] = ls; rn[nr] = len; rp[nr] = ps }
	}
	END { check(); printf "checked %d forcealign inodes, %d misaligned runs\n", nfa, bad }')
	echo "$out" | tail -n 1 | grep -q ', 0 misaligned runs$' && {
		echo "ok: alignment $dev: $(echo "$out" | tail -n 1)"
		return 0
	}
	echo "FAIL: alignment $dev:"
	echo "$out"
	return 1
}

# fs_check DEV: e2fsck -fn and the alignment checker, on an unmounted DEV.
fs_check() {
	if ! e2fsck -fn "$1" >"$SCRATCH/fsck.log" 2>&1; then
		echo "FAIL: e2fsck -fn $1 is not clean:"
		cat "$SCRATCH/fsck.log"
		return 1
	fi
	echo "ok: e2fsck -fn $1 clean"
	check_alignment "$1"
}

# allow_klog REGEX: kernel log lines matching REGEX (grep -E) are ones this
# test provokes on purpose: init.sh's kernel log check passes over them.
# Everything else that looks like a warning or corruption fails the test.
allow_klog() {
	echo "$1" >>"$SCRATCH/klog-allow"
}

# at_exit COMMAND: run COMMAND (shell code) when the test exits, before
# what was registered earlier.  The tests that use it set no EXIT trap of
# their own.
AT_EXIT=()
at_exit() {
	AT_EXIT=("$1" "${AT_EXIT[@]}")
	trap run_at_exit EXIT
}

run_at_exit() {
	local c

	for c in "${AT_EXIT[@]}"; do
		eval "$c"
	done
}

# Device-mapper devices under a test's filesystem (dm-flakey for I/O
# errors and lost writes, dm-delay, dm log-writes).  Each goes when the
# test exits, $MNT unmounted first; the cleanup after the test must not
# fsck one then, it is gone.
DM_NAMES=()
declare -A DM_NODE DM_LINEAR

# dm_create NAME TABLE: create NAME with TABLE (false if dmsetup fails).
# DM_NODE[NAME] is its node: the kernel's /dev/dm-N, as there is no udev
# in the guest to add /dev/mapper/NAME.
dm_create() {
	dmsetup create "$1" --table "$2" || return 1
	DM_NAMES=("$1" "${DM_NAMES[@]}")
	DM_NODE[$1]=/dev/dm-$(dmsetup info -c --noheadings -o minor "$1" | tr -d " ")
	[ -n "${DM_AT_EXIT:-}" ] || at_exit dm_teardown
	DM_AT_EXIT=1
}

# dm_linear NAME DEV SECTORS: dm_create NAME mapping the first SECTORS
# sectors of DEV one to one (DM_LINEAR[NAME], the table dm_table goes
# back to); DM_DEV is its node.
dm_linear() {
	dm_create "$1" "0 $3 linear $2 0" || return 1
	DM_LINEAR[$1]="0 $3 linear $2 0"
	DM_DEV=${DM_NODE[$1]}
	[ -b "$DM_DEV" ] || die "no $DM_DEV"
}

# dm_table NAME [TABLE]: NAME maps through TABLE (by default its linear
# table) from now on.  No lockfs: freezing the filesystem would write
# back through the table being replaced, and fail where it fails writes.
dm_table() {
	local table=${2:-${DM_LINEAR[$1]}}

	if ! { dmsetup load "$1" --table "$table" &&
	       dmsetup suspend --nolockfs "$1" && dmsetup resume "$1"; }; then
		die "dm table: $table"
	fi
}

# dm_flakey_table DEV SECTORS FEATURES RANGES: a table over the first
# SECTORS sectors of DEV that is dm-flakey, down, with FEATURES ("1
# error_writes", or "" to fail all I/O) on RANGES ("first-last" or "first"
# 4k blocks, one per line, sorted, disjoint) and linear elsewhere.
dm_flakey_table() {
	awk -v total="$2" -v dev="$1" -v feat="$3" '
	function lin(s, e) { if (e > s) printf "%d %d linear %s %d\n", s, e - s, dev, s }
	{ split($1, r, "-"); s = r[1] * 8; e = (r[2] == "" ? r[1] : r[2]) * 8 + 8
	  lin(at, s); printf "%d %d flakey %s %d 0 3600 %s\n", s, e - s, dev, s, feat; at = e }
	END { lin(at, total) }' <<<"$4"
}

# dm_remove NAME...: remove those devices now, in that order.
dm_remove() {
	local n k

	for n in "$@"; do
		dmsetup remove "$n" || die "dmsetup remove $n"
		for k in "${!DM_NAMES[@]}"; do
			[ "${DM_NAMES[$k]}" != "$n" ] || unset "DM_NAMES[$k]"
		done
	done
}

dm_teardown() {
	local n

	[ ${#DM_NAMES[@]} -gt 0 ] || return 0
	umount "$MNT" 2>/dev/null
	for n in "${DM_NAMES[@]}"; do
		dmsetup remove "$n" 2>/dev/null
		[ ! -f "$DEVS_FILE" ] || sed -i "\|^${DM_NODE[$n]}\$|d" "$DEVS_FILE"
	done
}

cleanup() {
	local m dev rc=0

	while read -r m; do
		umount "$m" || { echo "cleanup: cannot unmount $m"; rc=1; }
	done < <(awk -v mnt="$MNT" 'index($2, mnt) == 1 { print $2 }' /proc/mounts | sort -r)
	[ -f "$DEVS_FILE" ] || return $rc
	while read -r dev; do
		fs_check "$dev" || rc=1
	done <"$DEVS_FILE"
	rm -f "$DEVS_FILE"
	return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = cleanup ]; then
	cleanup
	exit $?
fi
