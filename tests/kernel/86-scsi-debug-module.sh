#!/bin/bash
# The host suite's tests/integration/devices-scsi-debug.sh on its own
# module path, unchanged: it loads scsi_debug itself (modprobe atomic_wr=1),
# checks the device figures against sysfs and statx and an ext4 on the
# disk, and unloads it.  Hosts without the module skip it; the QEMU guest
# of kernel/qemu-test.sh has it as a module of the installed kernel package,
# so there a skip is a failure.  The guest's own scsi_debug disk is unloaded
# first and loaded again afterwards with the same parameters.
# (85-devices-scsi-debug runs the same test on the guest's disk as it is.)
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$TOP/build/extalign" ] || die "$TOP/build/extalign is not built: run 'make' in $TOP first"
[ -d /sys/module/scsi_debug ] && [ ! -e /sys/module/scsi_debug/initstate ] &&
	skip "scsi_debug is built into this kernel (UML): the module path runs under kernel/qemu-test.sh"
modinfo scsi_debug >/dev/null 2>&1 || die "this kernel has no scsi_debug module"

if [ -d /sys/module/scsi_debug ]; then
	sd=$(scsi_disk) && grep -q "^$sd " /proc/mounts && die "$sd is mounted"
	modprobe -r scsi_debug || die "modprobe -r scsi_debug"
fi
rc=0
EXTALIGN=$TOP/build/extalign bash "$TOP/tests/integration/devices-scsi-debug.sh" || rc=$?
[ -d /sys/module/scsi_debug ] && die "devices-scsi-debug.sh left scsi_debug loaded"
scsi_debug_load || die "loading scsi_debug again"
case $rc in
0) ok "devices-scsi-debug.sh passed on the module it loaded" ;;
77) die "devices-scsi-debug.sh skipped although this kernel has the module" ;;
*) die "devices-scsi-debug.sh exited $rc" ;;
esac
