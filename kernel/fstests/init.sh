#!/bin/bash
# PID 1 of the UML guest kernel/fstests.sh boots: run fstests' ./check on
# the disks kernel/fstests.sh gave (TEST_DEV, SCRATCH_DEV, LOGWRITES_DEV)
# and power off.
#
# From the kernel command line (NAME=value reaches init's environment):
#   EXTALIGN_OUT       result directory on the host (hostfs)
#   FSTESTS_DIR        the built fstests tree
#   FSTESTS_BIN        directory with fio and xfs_io, first in PATH
#   FSTESTS_DISKS      scsi_debug (default) or ubd
#   FSTESTS_TESTS_FILE the tests to run, one per line (generic/765, ...)
#   FSTESTS_FORCEALIGN 1: every mount of the scratch filesystem gives its
#                      root an inherited extsize + forcealign (mount-hook.sh);
#                      2: of the test filesystem too
#   FSTESTS_EXTSIZE    that extsize in bytes (default 16384)
#   FSTESTS_TEST_TIMEOUT  seconds one test may run (default 900), then a
#                      watchdog kills it
#   KTOOL              tests/kernel/ktool, for the hook
HERE=$(dirname "$(readlink -f "$0")")
# shellcheck source=tests/kernel/guest.sh
. "$HERE/../../tests/kernel/guest.sh"
guest_setup

OUT=${EXTALIGN_OUT:?}
mkdir -p "$OUT"
exec >"$OUT/guest.log" 2>&1
# The loopback, which the kernel leaves down: fstests' locktest
# (generic/131 and its kind) runs its two processes over a TCP socket on
# 127.0.0.1.
if command -v ip >/dev/null; then
	ip link set lo up
else
	echo "fstests-init: no ip(8) (iproute2): the loopback stays down, and the locktest tests fail"
fi
# No udev in the guest: dmsetup makes its nodes itself, and udevadm is a
# shim that waits for them (udevadm-shim.sh).
export DM_DISABLE_UDEV=1
HOOK_UDEVADM=$(type -P udevadm)
export HOOK_UDEVADM
mkdir -p /run/fstests/bin
ln -sf "$HERE/udevadm-shim.sh" /run/fstests/bin/udevadm
export PATH=/run/fstests/bin:$FSTESTS_BIN:$PATH

# The disks kernel/fstests.sh gave (FSTESTS_DISKS): the scsi_debug ones,
# one per host (per_host_store: separate data), or the ubd files.
if [ "${FSTESTS_DISKS:-scsi_debug}" = ubd ]; then
	mapfile -t disks < <(for b in /sys/block/ubd*; do
		[ -e "$b" ] && echo "/dev/${b##*/}"
	done | sort)
else
	mapfile -t disks < <(for b in /sys/block/sd*; do
		grep -qs scsi_debug "$b/device/model" && echo "/dev/${b##*/}"
	done | sort)
fi
if [ ${#disks[@]} -lt 2 ]; then
	echo "fstests-init: want two ${FSTESTS_DISKS:-scsi_debug} disks, have: ${disks[*]}"
	echo "done" >"$OUT/done"
	guest_poweroff
fi
for d in "${disks[@]:0:3}"; do
	q=/sys/block/${d#/dev/}/queue
	echo "fstests-init: $d $(blockdev --getsize64 "$d") bytes," \
		"atomic $(cat "$q/atomic_write_unit_min_bytes")-$(cat "$q/atomic_write_unit_max_bytes")"
done

M=/run/fstests
mkdir -p "$M/test" "$M/scratch"

# fstests' users and groups (fsgqa, fsgqa2, 123456-fsgqa: about 50 tests
# of the quick group are NOTRUN without them), in the guest only: its root
# is the host's, so copies of the account files with them added are bound
# over the host's, which stay as they were.  Each user has a group of its
# name, ids above any the host uses.
add_fstests_accounts() {
	local f id name
	mkdir -p "$M/etc"
	for f in passwd group shadow; do
		cp "/etc/$f" "$M/etc/$f" || return
	done
	id=$(awk -F: '$3 >= 1000 && $3 < 60000 && $3 > max { max = $3 }
		END { print (max > 2000 ? max : 2000) + 1 }' /etc/passwd /etc/group)
	for name in fsgqa fsgqa2 123456-fsgqa; do
		mkdir -p "$M/home/$name"
		chown "$id:$id" "$M/home/$name"
		echo "$name:x:$id:$id:fstests:$M/home/$name:/bin/bash" >>"$M/etc/passwd"
		echo "$name:x:$id:" >>"$M/etc/group"
		echo "$name:!:20000:0:99999:7:::" >>"$M/etc/shadow"
		id=$((id + 1))
	done
	for f in passwd group shadow; do
		mount --bind "$M/etc/$f" "/etc/$f" || return
	done
}
add_fstests_accounts || echo "fstests-init: the fsgqa users could not be added"

# fstests keeps its temporary files in /tmp/$$, and the guest's /tmp is
# the host's, where another guest's fstests has the same small PIDs: give
# this guest a /tmp of its own, with the host's paths under /tmp that the
# run needs (a checkout or build directory there) bound back into it.
# The paths are resolved before the tmpfs hides them (readlink -f of a
# path under an empty /tmp gives nothing).
keep=()
for p in "$HERE" "$FSTESTS_DIR" "$FSTESTS_BIN" "$OUT" "$(dirname "${KTOOL:-/}")"; do
	keep+=("$(readlink -f "$p")")
done
mkdir -p /run/host-tmp
mount --bind /tmp /run/host-tmp
mount -t tmpfs tmpfs /tmp
for p in "${keep[@]}"; do
	case $p in
	/tmp/*) top=/tmp/$(cut -d/ -f3 <<<"$p")
		if [ ! -e "$top" ]; then
			mkdir -p "$top"
			mount --bind "/run/host-tmp/${top#/tmp/}" "$top"
		fi ;;
	esac
done
# A second configuration (kernel/fstests.sh --mkfs): fstests makes the
# scratch filesystems with MKFS_OPTIONS, the test filesystem is made here.
mkfs_options=
[ -f "$OUT/mkfs-options" ] && mkfs_options=$(cat "$OUT/mkfs-options")
# shellcheck disable=SC2086
mkfs.ext4 -q -F $mkfs_options "${disks[0]}" || echo "fstests-init: mkfs.ext4 ${disks[0]} failed"

config=$M/local.config
cat >"$config" <<EOF
export FSTYP=ext4
export TEST_DEV=${disks[0]}
export TEST_DIR=$M/test
export SCRATCH_DEV=${disks[1]}
export SCRATCH_MNT=$M/scratch
export RESULT_BASE=$OUT/results
EOF
[ -z "$mkfs_options" ] || echo "export MKFS_OPTIONS=\"$mkfs_options\"" >>"$config"
# A third disk, when kernel/fstests.sh gave one: the dm log-writes tests'
# log device (they are NOTRUN without it).
if [ ${#disks[@]} -ge 3 ]; then
	echo "export LOGWRITES_DEV=${disks[2]}" >>"$config"
fi
if [ "${FSTESTS_FORCEALIGN:-0}" != 0 ]; then
	# fstests takes mount from MOUNT_PROG: the hook mounts, then marks
	# the scratch root (and with 2 the test root).
	cat >>"$config" <<EOF
export MOUNT_PROG=$HERE/mount-hook.sh
export HOOK_MOUNT=$(type -P mount)
export HOOK_SCRATCH_MNT=$M/scratch
export HOOK_EXTSIZE=${FSTESTS_EXTSIZE:-16384}
export HOOK_KTOOL=$KTOOL
export HOOK_LOG=$OUT/mount-hook.log
EOF
	[ "$FSTESTS_FORCEALIGN" != 2 ] || echo "export HOOK_TEST_MNT=$M/test" >>"$config"
fi
echo "fstests-init: local.config:"
cat "$config"

cd "$FSTESTS_DIR" || exit 1
start=$(date +%s)
# One ./check for the list (a ./check per test costs a minute or two of
# start-up in UML), and a watchdog: a test script running longer than
# FSTESTS_TEST_TIMEOUT seconds is killed with what it started, so that one
# test that would run for an hour in UML (generic/027 did) does not take
# the rest of the list with it.  ./check reports it failed; the watchdog
# lists it in timeouts, and kernel/fstests.sh reports it as timed out.
: >"$OUT/timeouts"
# descendants PID: PID and every process under it.
descendants() {
	local c
	echo "$1"
	for c in $(ps -o pid= --ppid "$1"); do descendants "$c"; done
}
# After a kill, what the test left behind goes before ./check, stopped
# meanwhile, moves on: its mounts of dm and loop devices, the dm targets
# and loop devices themselves.  generic/034, killed inside a dm-flakey
# setup, left its target holding the scratch disk, and every later test
# that made a filesystem there failed with "Can't open blockdev".
cleanup_after_kill() {
	local dev mnt
	sleep 1
	while read -r dev mnt _; do
		case $dev in
		/dev/mapper/* | /dev/dm-* | /dev/loop*) umount -l "$mnt" ;;
		esac
	done < <(tac /proc/mounts)
	umount "$M/scratch" 2>/dev/null
	dmsetup remove_all --force
	losetup -D
	echo "fstests-init: watchdog: left after the kill:" \
		"$(dmsetup ls 2>&1 | tr '\n' ' ')$(losetup -a | tr '\n' ' ')"
}
# The watchdog counts each test's age itself, in its own ticks, instead
# of asking ps: a CI guest once gave a 12 s test an etimes of 4123168608,
# and the watchdog killed it on its first look.
# watchdog CHECK_PID
watchdog() {
	local limit=${FSTESTS_TEST_TIMEOUT:-900} tick=10 check=$1 pid args
	local -A age=() seen=()
	while sleep "$tick"; do
		seen=()
		while read -r pid args; do
			[[ $args =~ (^|[ /])tests/((generic|ext4|shared)/[0-9]+)( |$) ]] || continue
			seen[$pid]=1
			age[$pid]=$((${age[$pid]:-0} + tick))
			[ "${age[$pid]}" -gt "$limit" ] || continue
			echo "${BASH_REMATCH[2]} ${age[$pid]}" >>"$OUT/timeouts"
			echo "fstests-init: watchdog: ${BASH_REMATCH[2]} ran ${age[$pid]}s, killing it"
			kill -STOP "$check"
			# shellcheck disable=SC2046
			kill -9 $(descendants "$pid") 2>/dev/null
			cleanup_after_kill
			kill -CONT "$check"
		done < <(ps -eo pid=,args=)
		# A PID that went away may come back as another test.
		for pid in "${!age[@]}"; do
			[ -n "${seen[$pid]:-}" ] || unset "age[$pid]"
		done
	done
}
# No -R xunit: that report is rewritten before every test, a dozen
# commands that in UML cost more than the tests of list (a) themselves;
# kernel/fstests/report.py reads check.out instead.
# ./check runs in a session keyring of its own: PID 1 has none (no
# pam_keyinit here), so each keyctl would join a new one that dies with
# it, and the encryption tests' keyring (keyctl newring xfstests @s) was
# gone before their first key went in ("add_key: Required key not
# available", ext4/024 on both kernels).  keyctl says "Joined session
# keyring" on the first line of check.out, which report.py passes over.
session=()
command -v keyctl >/dev/null && session=(keyctl session -)
# shellcheck disable=SC2046
HOST_OPTIONS=$config "${session[@]}" ./check $(cat "${FSTESTS_TESTS_FILE:?}") \
	>"$OUT/check.out" 2>&1 &
check_pid=$!
watchdog "$check_pid" &
watchdog_pid=$!
wait "$check_pid"
echo "fstests-init: ./check exit $? after $(($(date +%s) - start))s"
kill "$watchdog_pid"
umount "$M/test" "$M/scratch" 2>/dev/null
echo "done" >"$OUT/done"
guest_poweroff
