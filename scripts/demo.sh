#!/bin/bash
# The main job on a fresh Debian 12 machine, as root: install what is
# missing, build, then show extalign on loop-mounted XFS and ext4 images.
# Nothing outside a temporary directory is touched; everything is removed at
# the end.
#
# Usage: scripts/demo.sh [--kernel]
#   --kernel  instead, boot our patched ext4 (a UML kernel, built by
#             kernel/check.sh into ${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
#             when it is not there yet) and show what it adds: a forcealign
#             directory, 16 KiB RWF_ATOMIC writes, statx limits,
#             extalign devices --probe and extalign check
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
kernel=0
case ${1:-} in
"") ;;
--kernel) kernel=1 ;;
-h | --help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
*) echo "demo: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "demo: run as root (it makes loop devices)" >&2; exit 1; }
if [ $kernel = 1 ]; then
	scripts/install-deps.sh build demo kernel
else
	scripts/install-deps.sh build demo
fi
make -j"$(nproc)" >/dev/null
X=$TOP/build/extalign

W=$(mktemp -d /tmp/extalign-demo.XXXXXX)
loops=()
cleanup() {
	[ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	umount "$W/xfs" "$W/ext4" 2>/dev/null || true
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT

# Bold headings on a terminal only: "demo.sh | less" gets plain text.
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
run() { printf '$ %s\n' "$*"; "$@" || printf '(exit status %d)\n' "$?"; }
has_cmd() { "$X" "$1" --help >/dev/null 2>&1; }

mk() { # TYPE SIZE_MB MKFS_ARGS...
	local t=$1 s=$2 l
	shift 2
	truncate -s "${s}M" "$W/$t.img"
	case $t in
	xfs) mkfs.xfs -q "$@" "$W/$t.img" ;;
	ext4) mkfs.ext4 -q -F "$@" "$W/$t.img" ;;
	esac
	l=$(losetup -f --show "$W/$t.img")
	loops+=("$l")
	mkdir -p "$W/$t"
	mount "$l" "$W/$t"
}

if [ $kernel = 1 ]; then
	KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
	if [ ! -x "$KB/build-um/linux" ]; then
		step "Building the patched UML kernel (once; about 25 minutes on 2 cores)"
		# The kernel suite's own build, checked by its boot test.  A
		# failure of another of its steps (checkpatch, KUnit) is its
		# report's business; the demo needs the kernel only.
		kernel/check.sh --quick 00-boot || true
		[ -x "$KB/build-um/linux" ] ||
			{ echo "demo: no kernel was built; see $KB/logs/build-um.log" >&2; exit 1; }
	fi
	# ktool makes the system calls Debian 12's tools do not know
	# (RWF_ATOMIC, statx's atomic write fields).
	gcc -O2 -Wall -Wextra -Werror -o "$W/ktool" tests/kernel/ktool.c
	step "Booting $KB/build-um/linux (UML) with the demo as its init"
	[ -t 1 ] && color=1 || color=0
	rc=0
	# The guest's disk image and memory file go to our directory, not the
	# kernel suite's run directory.
	EXTALIGN_RUN=$W/run kernel/boot.sh scripts/demo-kernel-guest.sh "$W/out" \
		KTOOL="$W/ktool" DEMO_COLOR="$color" >"$W/console.log" 2>&1 || rc=$?
	if [ ! -f "$W/out/done" ]; then
		tail -n 30 "$W/console.log" >&2
		echo "demo: the guest did not finish (UML exit $rc)" >&2
		exit 1
	fi
	cat "$W/out/demo.log"
	exit "$(cat "$W/out/rc")"
fi

step "XFS (stripe-aligned: su=64k) and ext4 images on loop devices"
mk xfs 1024 -d su=64k,sw=1
mount -o remount,swalloc "$W/xfs"
mk ext4 256 -b 4096
df -hT "$W/xfs" "$W/ext4"

step "A database directory on XFS: new files inherit a 64K hint"
mkdir "$W/xfs/db"
run "$X" set --extsize 64k "$W/xfs/db"
touch "$W/xfs/db/table.ibd"
run "$X" get "$W/xfs/db" "$W/xfs/db/table.ibd"
xfs_io -c 'pwrite -q -b 1m 0 4m' -c fsync "$W/xfs/db/table.ibd"
run "$X" check "$W/xfs/db/table.ibd"

step "A file written before its hint is misaligned; set refuses it"
xfs_io -f -c 'pwrite -q 0 4k' -c fsync -c 'pwrite -q 8k 60k' -c fsync "$W/xfs/old.dat"
run "$X" set --extsize 64k "$W/xfs/old.dat"
run "$X" check --extsize 64k "$W/xfs/old.dat"
# The same file drawn, one character per 64K unit: where it went wrong.
run "$X" check --map --extsize 64k "$W/xfs/old.dat"

step "Bad input changes nothing"
run "$X" set --extsize 12k "$W/xfs/db"
run "$X" set --extsize 8g "$W/xfs/db"
touch "$W/xfs/db/new.ibd"
run "$X" set --extsize 64k --force "$W/xfs/db/new.ibd"

step "ext4 on this kernel: the hint is accepted and silently dropped; extalign says so"
touch "$W/ext4/table.ibd"
run "$X" set --extsize 64k "$W/ext4/table.ibd"
run "$X" get --json "$W/ext4/table.ibd"

if has_cmd devices; then
	step "Atomic write capability of devices and filesystems"
	run "$X" devices
	run "$X" devices --probe "$W/xfs" "$W/ext4"
fi

if has_cmd realign; then
	step "Realignment rewrites the misaligned file, verified"
	run "$X" realign --state-dir "$W/realign" --extsize 64k "$W/xfs/old.dat"
	run "$X" check "$W/xfs/old.dat"
	run "$X" check --map "$W/xfs/old.dat"
fi

if [ -x "$TOP/build/extalignd" ] && has_cmd policy; then
	step "extalignd applies /etc/extalign.conf rules to new files"
	mkdir -p "$W/xfs/pg"
	cat >"$W/extalign.conf" <<CONF
[rule postgres]
directory = $W/xfs/pg
extsize = 64k
CONF
	run "$X" policy check --config "$W/extalign.conf"
	run "$X" policy explain --config "$W/extalign.conf" "$W/xfs/pg/base/16384"
	# Its state file and its late list in the temporary directory, not
	# /run/extalign and /var/lib/extalign.
	"$TOP/build/extalignd" --foreground --log-target stderr --config "$W/extalign.conf" \
		--state-dir "$W/state" --persistent-dir "$W/persist" &
	daemon_pid=$!
	sleep 1
	mkdir -p "$W/xfs/pg/base"
	touch "$W/xfs/pg/base/16384"
	sleep 1
	run "$X" get "$W/xfs/pg" "$W/xfs/pg/base" "$W/xfs/pg/base/16384"
	has_cmd status && run "$X" status --state-dir "$W/state"
	kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=
fi
step "Done"
