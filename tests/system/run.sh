#!/bin/bash
# The whole stack as an admin runs it: a QEMU x86 guest with systemd as PID
# 1, our packages installed with apt, extalignd enabled and worked, then
# power cuts (QEMU killed mid-load) each followed by a normal boot and
# checks (make check-system).
#
# Usage: tests/system/run.sh [--debs DIR] [--cuts N]
#
#   --debs DIR  the kernel packages (linux-image, linux-headers); default
#               kernel/deb.sh --small's, built (incrementally) if missing
#   --cuts N    power cuts (default 20)
#
#   1. packages: the kernel's; extalign's built with dpkg-buildpackage from
#      this checkout's tracked files, twice (the second a newer version,
#      for the upgrade); the series' e2fsprogs when e2fsprogs/deb.sh built
#      them
#   2. the root: Debian 12 by mmdebstrap (cached) with systemd and what the
#      packages depend on, extalign-systest.service (tests/system/guest.sh
#      at the end of boot) and the host's shares in fstab
#   3. boot "install": the package's kernel; apt install ./*.deb of all of
#      them, data disks (ext4 on NVMe, XFS on virtio) in fstab with fsck,
#      /etc/extalign.conf, systemctl enable --now extalignd, its status
#   4. boot "work": the kernel dpkg installed; load, reloads, kill -9, the
#      watchdog, the idle realignment of files older than their rule
#   5. N boots "cut-K": checks after the cut before (boot-time fsck, a full
#      e2fsck -fn, every fsynced byte, no torn atomic unit, check clean or
#      realigned), then the load until the host kills QEMU (SIGKILL, disks
#      opened cache=none: what the guest had not written is lost)
#   6. boot "final": the same checks, the upgrade, purge
#
# Prints PASS or FAIL per check of each boot, the journal excerpt and what
# a failed check saw, and "N cuts, B bytes lost, T torn units, F fsck
# errors".  The images and logs stay in $EXTALIGN_KBUILD/system-run for
# inspection.  QEMU_ACCEL=tcg|kvm skips the KVM probe; QEMU_MEM (MiB,
# default 2048).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
export EXTALIGN_KBUILD=$KB
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
RUN=$KB/system-run
MEM=${QEMU_MEM:-2048}
CUTS=20
. "$TOP/scripts/debian-root.bash"
# systemd as init, what the test does (mkfs, xfs_io, python3 for the load)
# and the run-time dependencies of our packages, so that apt can install ours
# with no network.
ROOT_PACKAGES=(systemd systemd-sysv udev dbus kmod procps e2fsprogs xfsprogs util-linux python3
	       libinih1 libsmartcols1 libmount1 libblkid1 libsystemd0 linux-base initramfs-tools-core
	       logsave libss2 libcom-err2 libext2fs2 cpio)

debs=
while [ $# -gt 0 ]; do
	case $1 in
	--debs) debs=${2:?--debs needs a directory}; shift ;;
	--cuts) CUTS=${2:?--cuts needs a number}; shift ;;
	-h | --help) sed -n '2,38s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
[[ $CUTS =~ ^[0-9]+$ ]] || { echo "run.sh: --cuts $CUTS is not a number" >&2; exit 2; }

# shellcheck source=kernel/report.bash
. "$TOP/kernel/report.bash"
overall_start=$(date +%s)
LOGS=$RUN/logs
finish() {
	echo
	echo "== system: $pass passed, $failed failed, $skipped skipped" \
		"in $(($(date +%s) - overall_start))s (images and logs in $RUN)"
	for f in "${failures[@]}"; do echo "   FAILED: $f"; done
	[ "$failed" = 0 ]
	exit
}

[ "$(id -u)" = 0 ] || { echo "SKIP: tests/system/run.sh needs root (mkfs -d of the root image)"; exit 77; }
for c in qemu-system-x86_64 mmdebstrap dpkg-buildpackage; do
	command -v $c >/dev/null || { echo "SKIP: $c is not installed (scripts/install-deps.sh qemu deb)"; exit 77; }
done
rm -rf "$RUN"
mkdir -p "$RUN" "$LOGS"

# ---- 1. packages --------------------------------------------------------------
echo "== packages"
timer_start
if [ -z "$debs" ]; then
	debs=$KB/debs/small
	if ! ls "$debs"/linux-image-*.deb >/dev/null 2>&1; then
		"$TOP/kernel/deb.sh" --small >"$LOGS/deb.log" 2>&1 ||
			{ report FAIL deb/kernel; show_log "$LOGS/deb.log"; finish; }
	fi
fi
PKG=$RUN/debs
mkdir -p "$PKG/upgrade"
image_deb=
for d in "$debs"/linux-image-*.deb; do
	case $d in *-dbg_*) ;; *) [ -f "$d" ] && image_deb=$d ;; esac
done
[ -n "$image_deb" ] || { report FAIL deb/kernel "no linux-image package in $debs"; finish; }
cp "$image_deb" "$PKG/"
release=$(dpkg-deb -f "$image_deb" Package | sed 's/^linux-image-//')
report PASS deb/kernel "$(basename "$image_deb")"

# build_extalign DIR [VERSION]: a .deb of the checkout's tracked files (and
# their changes), with a changelog entry VERSION on top when given.
build_extalign() {
	local dir=$1 version=${2:-}
	rm -rf "$dir"
	mkdir -p "$dir/src"
	git -C "$TOP" ls-files -z | tar -C "$TOP" --null -T - -cf - | tar -C "$dir/src" -xf -
	if [ -n "$version" ]; then
		{
			printf 'extalign (%s) unstable; urgency=medium\n\n' "$version"
			printf '  * The system test'"'"'s upgrade.\n\n'
			printf ' -- extalign developers <extalign-devel@example.org>  %s\n\n' "$(date -R)"
			cat "$dir/src/debian/changelog"
		} >"$dir/changelog" && mv "$dir/changelog" "$dir/src/debian/changelog"
	fi
	(cd "$dir/src" && dpkg-buildpackage -us -uc -b) >"$dir/build.log" 2>&1
}
version=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
if build_extalign "$RUN/build" && build_extalign "$RUN/build-up" "$version+systest1"; then
	cp "$RUN/build"/extalign_*.deb "$PKG/"
	cp "$RUN/build-up"/extalign_*.deb "$PKG/upgrade/"
	report PASS deb/extalign "$(cd "$PKG" && ls extalign_*.deb) and, for the upgrade, $(cd "$PKG/upgrade" && ls)"
else
	report FAIL deb/extalign "dpkg-buildpackage"
	show_log "$RUN/build/build.log"
	show_log "$RUN/build-up/build.log"
	finish
fi
e2=0
for p in e2fsprogs libext2fs2t64 libext2fs2 libcom-err2 libss2 logsave e2fsprogs-l10n; do
	d=$(find "$E2B/deb" -maxdepth 1 -name "${p}_*.deb" 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] && cp "$d" "$PKG/" && e2=$((e2 + 1))
done
if [ "$e2" -gt 0 ]; then
	report PASS deb/e2fsprogs "$e2 packages of the series' e2fsprogs"
else
	report SKIP deb/e2fsprogs "not built (e2fsprogs/deb.sh): Debian's e2fsprogs checks the disks"
fi
timer_end packages

# ---- 2. the root --------------------------------------------------------------
echo "== root image"
timer_start
rc=0
base=$(debian_root system "$LOGS/mmdebstrap.log" "${ROOT_PACKAGES[@]}") || rc=$?
report_root "$rc" "$LOGS/mmdebstrap.log" || finish
R=$RUN/root
mkdir -p "$R"
tar -C "$R" -xf "$base"
echo extalign-system >"$R/etc/hostname"
cat >"$R/etc/fstab" <<EOF
/dev/vda / ext4 rw,errors=remount-ro 0 1
top /mnt/systest-top 9p trans=virtio,version=9p2000.L,ro,nofail 0 0
shared /mnt/systest 9p trans=virtio,version=9p2000.L,nofail 0 0
debs /mnt/systest-debs 9p trans=virtio,version=9p2000.L,ro,nofail 0 0
EOF
cat >"$R/etc/systemd/system/extalign-systest.service" <<'EOF'
[Unit]
Description=extalign system test step (tests/system/guest.sh)
After=multi-user.target extalignd.service
RequiresMountsFor=/mnt/systest /mnt/systest-top /mnt/systest-debs

[Service]
Type=oneshot
ExecStart=/mnt/systest-top/tests/system/guest.sh
TimeoutStartSec=infinity
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EOF
mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/extalign-systest.service "$R/etc/systemd/system/multi-user.target.wants/"
# No apt timers running into the test's own use of apt.
for u in apt-daily.timer apt-daily-upgrade.timer; do ln -sf /dev/null "$R/etc/systemd/system/$u"; done
# A persistent journal, so that the boot after a cut shows the one before.
mkdir -p "$R/var/log/journal"
if ! mkfs.ext4 -q -F -L system-root -d "$R" "$RUN/root.img" 4G >"$LOGS/mkfs-root.log" 2>&1; then
	report FAIL root/image "mkfs.ext4 -d"
	show_log "$LOGS/mkfs-root.log"
	finish
fi
rm -rf "$R"
truncate -s 2G "$RUN/xfs.img"
truncate -s 2G "$RUN/nvme.img"
report PASS root/image "$(basename "$base"), systemd as PID 1"
timer_end root

# ---- boots ----------------------------------------------------------------------
SHARE=$RUN/share
mkdir -p "$SHARE"
rm -rf "$RUN/kernel"
dpkg-deb -x "$image_deb" "$RUN/kernel"
deb_vmlinuz=$RUN/kernel/boot/vmlinuz-$release
accel=(-accel tcg)
accel_name=TCG
case ${QEMU_ACCEL:-} in
kvm) accel=(-accel kvm) accel_name=KVM ;;
tcg) ;;
*)
	# A kernel that prints its version under KVM within 30 s boots there.
	if [ -w /dev/kvm ]; then
		timeout 30 qemu-system-x86_64 -accel kvm -m 256 -nodefaults -display none -no-reboot \
			-serial "file:$LOGS/kvm-probe.log" -kernel "$deb_vmlinuz" \
			-append "console=ttyS0 panic=-1" </dev/null >/dev/null 2>&1 &
		probe=$!
		for _ in $(seq 60); do
			grep -q 'Linux version' "$LOGS/kvm-probe.log" 2>/dev/null && break
			sleep 0.5
		done
		grep -q 'Linux version' "$LOGS/kvm-probe.log" 2>/dev/null && accel=(-accel kvm) accel_name=KVM
		kill "$probe" 2>/dev/null
		wait "$probe" 2>/dev/null
	fi
	;;
esac
echo "(QEMU under $accel_name)"

# start_guest NAME STEP KERNEL: QEMU in the background (pid in qemu_pid).
start_guest() {
	local name=$1 step=$2 kernel=$3
	rm -rf "$SHARE/out-$name"
	qemu-system-x86_64 "${accel[@]}" -m "$MEM" -smp 2 -nographic -no-reboot -nic none \
		-kernel "$kernel" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 extalign.step=$step extalign.boot=$name" \
		-drive "file=$RUN/root.img,if=virtio,format=raw,cache=none" \
		-drive "file=$RUN/xfs.img,if=virtio,format=raw,cache=none" \
		-drive "file=$RUN/nvme.img,if=none,id=nvm,format=raw,cache=none" \
		-device "nvme,serial=extalign0,drive=nvm,logical_block_size=4096,physical_block_size=4096" \
		-virtfs "local,path=$TOP,mount_tag=top,security_model=none,readonly=on" \
		-virtfs "local,path=$SHARE,mount_tag=shared,security_model=none" \
		-virtfs "local,path=$PKG,mount_tag=debs,security_model=none,readonly=on" \
		</dev/null >"$LOGS/console-$name.log" 2>&1 &
	qemu_pid=$!
}

# report_boot NAME: each check of the boot; a failed one with what it saw.
report_boot() {
	local name=$1 out=$SHARE/out-$1 check rc detail
	if [ ! -s "$out/checks" ]; then
		report FAIL "$name/boot" "no checks ran (console: $LOGS/console-$name.log)"
		show_log "$LOGS/console-$name.log" 40
		return 1
	fi
	while read -r check rc detail; do
		if [ "$rc" = 0 ]; then
			report PASS "$name/$check" "$detail"
		else
			report FAIL "$name/$check" "exit $rc"
			[ -f "$out/$check.log" ] && show_log "$out/$check.log" 40
			[ -f "$out/$check.journal" ] && show_log "$out/$check.journal" 30
		fi
	done <"$out/checks"
}

# boot NAME STEP KERNEL: a boot that powers itself off (30 min at most).
boot() {
	local name=$1
	start_guest "$@"
	( sleep 1800; kill "$qemu_pid" 2>/dev/null ) &
	local guard=$!
	wait "$qemu_pid"
	kill "$guard" 2>/dev/null
	wait "$guard" 2>/dev/null
	[ -f "$SHARE/out-$name/done" ] || report FAIL "$name/done" "the guest did not finish its step"
	report_boot "$name"
}

echo "== boot install: the package's kernel ($release)"
timer_start
boot install install "$deb_vmlinuz"
installed=$RUN/vmlinuz-installed
cp "$SHARE/out-install/vmlinuz" "$installed" 2>/dev/null
if cmp -s "$installed" "$deb_vmlinuz"; then
	report PASS install/kernel "the guest's $(cat "$SHARE/out-install/installed-kernel") is the package's"
else
	report FAIL install/kernel "dpkg installed no /boot/vmlinuz-$release identical to the package's"
	finish
fi
grep -q '^install 0' "$SHARE/out-install/checks" || finish
timer_end install

echo "== boot work"
timer_start
boot work work "$installed"
timer_end work

echo "== $CUTS power cuts"
timer_start
for k in $(seq 1 "$CUTS"); do
	name=cut-$k
	start_guest "$name" cut "$installed"
	waited=0
	while [ ! -f "$SHARE/out-$name/loading" ] && kill -0 "$qemu_pid" 2>/dev/null && [ $waited -lt 1200 ]; do
		sleep 1
		waited=$((waited + 1))
	done
	# The load runs 2 to 10 s, then the power goes.
	sleep $((2 + RANDOM % 9))
	kill -KILL "$qemu_pid" 2>/dev/null
	wait "$qemu_pid" 2>/dev/null
	report_boot "$name"
	[ -f "$SHARE/out-$name/loading" ] || report FAIL "$name/load" "the load never started"
done
timer_end cuts

echo "== boot final: checks after the last cut, upgrade, purge"
timer_start
boot final final "$installed"
timer_end final

# The loop's verdict: lost bytes and torn units from each verify, fsck
# failures from each boot.
lost=0 torn=0 fsck=0 cuts=0
for k in $(seq 2 "$CUTS") final; do
	out=$SHARE/out-$([ "$k" = final ] && echo final || echo "cut-$k")
	[ -d "$out" ] || continue
	cuts=$((cuts + 1))
	if [ -s "$out/verify.json" ]; then
		read -r l t u < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["lost"], j["torn"], j["unit"])' "$out/verify.json")
		lost=$((lost + l * u)) torn=$((torn + t))
	fi
	grep -qE '^fsck(-boot)? [1-9]' "$out/checks" && fsck=$((fsck + 1))
done
echo "$cuts cuts, $lost bytes lost, $torn torn units, $fsck fsck errors"
finish
