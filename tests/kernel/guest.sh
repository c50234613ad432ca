#!/bin/bash
# The minimal system every PID 1 script booted by kernel/boot.sh needs.
# Source it, call guest_setup, do the work, call guest_poweroff.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LC_ALL=C

guest_poweroff() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 5
	exit 0
}

guest_setup() {
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	# No tmpfs on /tmp: the guest's root is the host's through hostfs, and
	# a checkout under the host's /tmp (a CI clone, say) must stay
	# visible.  Scratch files under /tmp go to the host's /tmp.
	mount -t tmpfs tmpfs /run
	mkdir -p /dev/pts /dev/shm
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	# devtmpfs has no /dev/fd (udev makes it): bash's <(...) needs it.
	ln -sfn /proc/self/fd /dev/fd
	echo 1 >/proc/sys/kernel/sysrq

	# Wait for the disks: ubd at once, scsi_debug after its scan.
	for _ in $(seq 50); do
		[ -b /dev/ubda ] && ls /sys/bus/scsi/devices/*/block/ >/dev/null 2>&1 &&
			break
		sleep 0.1
	done
}
