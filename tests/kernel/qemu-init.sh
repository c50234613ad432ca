#!/bin/bash
# PID 1 of the QEMU guest that kernel/qemu-test.sh boots.  It is copied
# into the guest's root image (as /sbin/extalign-qemu-init), since the
# checkout only becomes visible once it has mounted the host's shares
# (9p): the checkout at EXTALIGN_TOP, the shared directory (ktool, the
# results) at EXTALIGN_SHARE, the packages at /mnt/debs, and the fstests
# snapshot at EXTALIGN_TOOLS when one is given; each at the host's path.
#
# EXTALIGN_QEMU_STEP says what to do (the kernel hands unknown NAME=value
# command line parameters to init as its environment):
#   install  dpkg -i the linux-image and linux-headers packages from
#            /mnt/debs, record the outcome, copy the installed
#            /boot/vmlinuz-* to the results for the host, power off
#   test     check that the running kernel is the installed package's and
#            that its scsi_debug is a module from it, load scsi_debug with
#            atomic-write parameters (tests/kernel/lib.sh), then hand over
#            to tests/kernel/init.sh, which runs the tests and powers off
# Its own checks go to $EXTALIGN_OUT/qemu-checks, one "NAME RC DETAIL" line
# each.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
echo 1 >/proc/sys/kernel/sysrq

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 10
	exit 0
}

# share TAG DIR [ro]: mount the host's 9p share TAG on DIR.
share() {
	mkdir -p "$2"
	mount -t 9p -o "trans=virtio,version=9p2000.L,msize=262144${3:+,$3}" "$1" "$2" ||
		{ echo "extalign-qemu-init: cannot mount the share $1 on $2"; poweroff_now; }
}

share top "${EXTALIGN_TOP:?}" ro
share shared "${EXTALIGN_SHARE:?}"
share debs /mnt/debs ro
[ -n "${EXTALIGN_TOOLS:-}" ] && share tools "$EXTALIGN_TOOLS" ro
OUT=${EXTALIGN_OUT:?}
mkdir -p "$OUT"
CHECKS=$OUT/qemu-checks

# check NAME RC DETAIL...: one line for the host.
check() {
	local name=$1 rc=$2

	shift 2
	echo "$name $rc $*" >>"$CHECKS"
	echo "extalign-qemu-init: $name rc=$rc $*"
}

release=${EXTALIGN_RELEASE:?}
echo "extalign-qemu-init: step ${EXTALIGN_QEMU_STEP:-} on $(uname -r)"

case ${EXTALIGN_QEMU_STEP:-} in
install)
	: >"$CHECKS"
	# Every package but the debug symbols, as a user installs them.
	debs=()
	for d in /mnt/debs/linux-image-*.deb /mnt/debs/linux-headers-*.deb; do
		case $d in *-dbg_*) continue ;; esac
		[ -f "$d" ] && debs+=("$d")
	done
	if [ ${#debs[@]} = 0 ]; then
		check install 1 "no linux-image or linux-headers package in the share"
	else
		dpkg -i "${debs[@]}" >"$OUT/install.log" 2>&1
		rc=$?
		check install "$rc" "dpkg -i ${debs[*]##*/}"
	fi
	st=$(dpkg-query -W -f='${Status}' "linux-image-$release" 2>&1)
	[ "$st" = "install ok installed" ]
	check installed-image $? "linux-image-$release: $st"
	st=$(dpkg-query -W -f='${Status}' "linux-headers-$release" 2>&1)
	[ "$st" = "install ok installed" ]
	check installed-headers $? "linux-headers-$release: $st"
	[ -f "/boot/vmlinuz-$release" ] && [ -f "/lib/modules/$release/modules.dep" ]
	check installed-files $? "/boot/vmlinuz-$release, /lib/modules/$release/modules.dep"
	# The host boots the installed kernel next: hand it over, and leave
	# the root clean.
	cp "/boot/vmlinuz-$release" "$OUT/vmlinuz"
	mount -o remount,ro /
	echo "done" >"$OUT/done"
	poweroff_now
	;;
test)
	: >"$CHECKS"
	[ "$(uname -r)" = "$release" ]
	check kernel-release $? "uname -r: $(uname -r)"
	st=$(dpkg-query -W -f='${Status}' "linux-image-$release" 2>&1)
	[ "$st" = "install ok installed" ]
	check package-installed $? "linux-image-$release: $st"
	# The module comes from the package: dpkg knows the file (under /lib
	# or /usr/lib: Debian 12's /lib is a link to /usr/lib).
	mod=$(modinfo -n scsi_debug 2>&1)
	{ dpkg -S "$mod"; dpkg -S "${mod#/usr}"; dpkg -S "/usr$mod"; } 2>/dev/null |
		grep -q "^linux-image-$release:"
	check scsi_debug-module $? "$mod"
	# The NVMe disk and the atomic write limits the kernel gives it.
	nvme=
	for b in /sys/block/nvme*n1; do
		[ -e "$b" ] && nvme=$b && break
	done
	if [ -n "$nvme" ]; then
		q=$nvme/queue
		check nvme-disk 0 "/dev/${nvme##*/}: logical block $(cat "$q/logical_block_size")," \
			"atomic units $(cat "$q/atomic_write_unit_min_bytes")..$(cat "$q/atomic_write_unit_max_bytes")"
	else
		check nvme-disk 1 "no NVMe disk"
	fi
	. "$EXTALIGN_TOP/tests/kernel/lib.sh"
	out=$(scsi_debug_load 2>&1)
	check scsi_debug-load $? "modprobe scsi_debug ${SCSI_DEBUG_OPTS[*]}: $(scsi_disk) $out"
	exec /bin/bash "$EXTALIGN_TOP/tests/kernel/init.sh"
	;;
*)
	echo "extalign-qemu-init: EXTALIGN_QEMU_STEP must be install or test"
	poweroff_now
	;;
esac
