#!/bin/bash
# PID 1 of the UML guest that "scripts/demo.sh --kernel" boots through
# kernel/boot.sh: the part of the demo that needs our ext4 series.  On the
# guest's scsi_debug disk (4 KiB sectors, hardware atomic writes of 4 KiB to
# 64 KiB): a forcealign directory on ext4, a 16 KiB RWF_ATOMIC write
# accepted and misaligned ones refused, the statx limits, then extalign
# devices --probe and extalign check on the result.
#
# From the kernel command line: EXTALIGN_OUT (where the transcript goes,
# demo.log, and "done"), KTOOL (tests/kernel/ktool, built by the host),
# DEMO_COLOR (1: bold headings).
HERE=$(dirname "$(readlink -f "$0")")
TOP=$(cd "$HERE/.." && pwd)

if [ "${1:-}" != work ]; then
	# PID 1: never exit before the poweroff (the kernel would panic).
	. "$TOP/tests/kernel/guest.sh"
	guest_setup
	OUT=${EXTALIGN_OUT:-/run/demo-out}
	mkdir -p "$OUT"
	timeout 300 bash "$0" work >"$OUT/demo.log" 2>&1
	echo $? >"$OUT/rc"
	echo "done" >"$OUT/done"
	guest_poweroff
fi

# The kernel tests' helpers: scsi_disk, fresh_ext4, kt (ktool).
. "$TOP/tests/kernel/lib.sh"
# The mount point on the guest's tmpfs, not on the host's /tmp (hostfs).
MNT=/run/demo
X=$TOP/build/extalign
export PATH=$TOP/build:$PATH

if [ "${DEMO_COLOR:-0}" = 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
run() { printf '$ %s\n' "${*#"$TOP/build/"}"; "$@" || printf '(exit status %d)\n' "$?"; }
note() { printf '# %s\n' "$*"; }

sd=$(scsi_disk) || die "no scsi_debug disk in the guest"
step "The patched kernel: Linux $(uname -r) (UML), an atomic-write disk $sd"
run cat "/sys/block/${sd#/dev/}/queue/atomic_write_unit_min_bytes" \
	"/sys/block/${sd#/dev/}/queue/atomic_write_unit_max_bytes"
fresh_ext4 "$sd" -b 4096 >/dev/null
run findmnt -n -o SOURCE,TARGET,FSTYPE "$MNT"

step "A forcealign directory on ext4: new files inherit a strict 16K unit"
mkdir "$MNT/db"
run "$X" set --extsize 16k --force "$MNT/db"
: >"$MNT/db/table.ibd"
: >"$MNT/plain.dat"
run "$X" get "$MNT/db" "$MNT/db/table.ibd" "$MNT/plain.dat"

step "statx: the atomic write limits of each file"
note "ktool statx FILE: statx(STATX_WRITE_ATOMIC); min and max in bytes"
printf '$ ktool statx %s\n' "$MNT/db/table.ibd"
kt statx "$MNT/db/table.ibd"
printf '$ ktool statx %s\n' "$MNT/plain.dat"
kt statx "$MNT/plain.dat"

step "RWF_ATOMIC: a 16 KiB write is accepted, misaligned ones are refused"
note "ktool awrite FILE OFFSET LENGTH: one pwritev2(RWF_ATOMIC), O_DIRECT"
# awrite OFFSET LENGTH WHY: one atomic write to the forcealign file.
awrite() {
	note "$3"
	printf '$ ktool awrite %s %s %s\n' "$4" "$1" "$2"
	kt awrite "$4" "$1" "$2" || true
}
f=$MNT/db/table.ibd
awrite 0 16384 "16 KiB at 0: one whole unit" "$f"
awrite 16384 16384 "16 KiB at 16 KiB: the next unit" "$f"
awrite 4096 16384 "16 KiB at 4 KiB: it would straddle two units, refused" "$f"
awrite 0 32768 "32 KiB: more than the file's unit, refused" "$f"
awrite 0 16384 "the same 16 KiB on the plain file (no hint): above its 4 KiB limit, refused" \
	"$MNT/plain.dat"

step "extalign devices --probe: what the disk and this filesystem offer"
run "$X" devices --probe "$sd"
run "$X" devices --probe -o NAME,TYPE,EXTSIZE,FORCEALIGN,STATX-MIN,STATX-MAX "$MNT/db/table.ibd"

step "extalign check: the file's extents are whole 16K units"
run "$X" check "$MNT/db/table.ibd"
run "$X" check --json "$MNT/db/table.ibd"
umount "$MNT"
step "Done"
