#!/bin/bash
# The minimal system every PID 1 script booted by kernel/boot.sh (or the
# QEMU guest of kernel/qemu-test.sh) needs.  Source it, call guest_setup, do
# the work, call guest_poweroff.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LC_ALL=C

guest_poweroff() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 5
	exit 0
}

# mount_once TYPE DIR: mount a TYPE filesystem on DIR unless something is
# mounted there already (the QEMU guest's first PID 1 mounted it before
# handing over to init.sh).
mount_once() {
	mountpoint -q "$2" 2>/dev/null || mount -t "$1" "$1" "$2"
}

guest_setup() {
	mount_once proc /proc
	mount_once sysfs /sys
	mount_once devtmpfs /dev
	# No tmpfs on /tmp: the guest's root is the host's through hostfs, and
	# a checkout under the host's /tmp (a CI clone, say) must stay
	# visible.  Scratch files under /tmp go to the host's /tmp.
	mount_once tmpfs /run
	mkdir -p /dev/pts /dev/shm
	mount_once devpts /dev/pts
	mount_once tmpfs /dev/shm
	# devtmpfs has no /dev/fd (udev makes it): bash's <(...) needs it.
	ln -sfn /proc/self/fd /dev/fd
	echo 1 >/proc/sys/kernel/sysrq

	# Wait for the disks: ubd (or the QEMU guest's scratch disk) at once,
	# scsi_debug after its scan.
	for _ in $(seq 50); do
		[ -b "${EXTALIGN_SCRATCH_DISK:-/dev/ubda}" ] &&
			ls /sys/bus/scsi/devices/*/block/ >/dev/null 2>&1 &&
			break
		sleep 0.1
	done

	# The patched e2fsprogs (e2fsprogs/check.sh), when the host built
	# them: the tests and the checks after each use them by name.
	if [ -x "${EXTALIGN_E2FSPROGS:-}/e2fsck" ]; then
		export PATH=$EXTALIGN_E2FSPROGS:$PATH
	fi
}
