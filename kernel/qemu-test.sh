#!/bin/bash
# Boot the extalign kernel package in QEMU, install it there and run the
# kernel tests on it.
#
# Usage: kernel/qemu-test.sh [--debs DIR] [TEST...]
#
#   1. the packages: kernel/deb.sh --small (incremental), or the linux-image
#      and linux-headers .debs in DIR
#   2. a Debian 12 root image made with mmdebstrap (cached), the guest's
#      PID 1 (tests/kernel/qemu-init.sh) in it, and the series' e2fsprogs
#      packages (e2fsprogs/deb.sh) installed over Debian's when they are
#      built, so that the e2fsck -fn after every test is the series'
#   3. boot 1: the package's kernel boots the root image and installs the
#      packages there with dpkg -i
#   4. boot 2: the kernel that dpkg installed in the image (its
#      /boot/vmlinuz-*, handed to the host, identical to the package's)
#      boots with the modules dpkg installed; the guest checks that it is the package's kernel, loads
#      scsi_debug as a module with atomic-write parameters as fstests'
#      generic/767 does, and tests/kernel/init.sh runs tests/kernel/[0-9]*.sh
#      (or only the TESTs named), among them 86-scsi-debug-module, the host's
#      devices-scsi-debug integration test on its modprobe path
#
# The guest has a virtio root disk, a 2 GiB virtio scratch disk (the UML
# ubd disk's part, /dev/vdb), an emulated NVMe disk with 4 KiB blocks and
# the scsi_debug disk; the checkout, a shared directory (ktool, results),
# the packages and the fstests snapshot come from the host over 9p.  KVM
# when the package's kernel boots under it (a short probe boot), TCG
# otherwise.
#
# Prints PASS, FAIL or SKIP per step and test and the time of each step;
# exits non-zero if anything failed.  Environment: EXTALIGN_KBUILD (default
# /var/tmp/extalign-kernel): the kernel build and the run directory;
# EXTALIGN_FRESH_CACHE (default /var/tmp/extalign-fresh): the cached root;
# EXTALIGN_TOOLS: the fstests snapshot for the crash test (default
# ../shared/tools beside the checkout); QEMU_MEM (MiB, default 2048);
# QEMU_TIMEOUT (seconds a boot may take, default 3600: the test boot alone
# takes 1000-1350 s under TCG on two idle cores, and more beside other
# work);
# QEMU_ACCEL=tcg or kvm: that accelerator, without the probe (on a
# nested-KVM host the kernel hangs while decompressing under KVM, and the
# probe finds it out in 30 s).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
export EXTALIGN_KBUILD=$KB
RUN=$KB/qemu-run
LOGS=$KB/logs
MEM=${QEMU_MEM:-2048}
GUEST_TIMEOUT=${QEMU_TIMEOUT:-3600}
TOOLS=${EXTALIGN_TOOLS:-$TOP/../shared/tools}
. "$TOP/scripts/debian-root.bash"
# What the guest runs besides the minimal root: modprobe, dmsetup,
# xfs_io, python3, setfacl and attr, setquota (the tests), gcc, libc6-dev and xz (the crash test
# builds its tools in the guest from the fstests tarball), and the libraries the programs of the
# checkout link against.
GUEST_PACKAGES=(kmod dmsetup xfsprogs e2fsprogs python3 procps gcc libc6-dev acl attr quota xz-utils
		libsmartcols1 libinih1 libmount1 libblkid1 libsystemd0)

debs=
TESTS=()
while [ $# -gt 0 ]; do
	case $1 in
	--debs) debs=${2:?--debs needs a directory}; shift ;;
	-h | --help) sed -n '2,36s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "qemu-test.sh: unknown option $1" >&2; exit 2 ;;
	*) TESTS+=("$1") ;;
	esac
	shift
done

mkdir -p "$RUN" "$LOGS"
# shellcheck source=kernel/report.bash
. "$HERE/report.bash"
finish() {
	echo
	echo "== qemu: $pass passed, $failed failed, $skipped skipped" \
		"in $(($(date +%s) - overall_start))s (logs in $LOGS)"
	for f in "${failures[@]}"; do echo "   FAILED: $f"; done
	[ "$failed" = 0 ]
	exit
}
overall_start=$(date +%s)

[ "$(id -u)" = 0 ] || { echo "SKIP: kernel/qemu-test.sh needs root (mkfs -d of the root image)"; exit 77; }
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "SKIP: qemu-system-x86_64 is not installed (scripts/install-deps.sh qemu)"; exit 77; }
command -v mmdebstrap >/dev/null ||
	{ echo "SKIP: mmdebstrap is not installed (scripts/install-deps.sh qemu)"; exit 77; }
for p in extalign extalignd tests/tools/notify-listen; do
	[ -x "$TOP/build/$p" ] || { echo "qemu-test.sh: $TOP/build/$p is not built: run 'make tests'" >&2; exit 1; }
done

# 1. The packages.
echo "== kernel packages"
timer_start
if [ -z "$debs" ]; then
	if "$HERE/deb.sh" --small >"$LOGS/deb.log" 2>&1; then
		debs=$KB/debs/small
		report PASS deb/build "$(grep -o 'kernel .* built in [0-9]*s' "$LOGS/deb.log")"
	else
		report FAIL deb/build
		grep -E 'error|Error' "$LOGS/deb.log" | head -20 | sed 's/^/    /'
		show_log "$LOGS/deb.log" 15
		finish
	fi
fi
debs=$(readlink -f "$debs")
image_deb="" headers_deb=""
for d in "$debs"/linux-image-*.deb; do
	case $d in *-dbg_*) ;; *) [ -f "$d" ] && image_deb=$d ;; esac
done
for d in "$debs"/linux-headers-*.deb; do
	[ -f "$d" ] && headers_deb=$d
done
if [ -z "$image_deb" ] || [ -z "$headers_deb" ]; then
	report FAIL deb/files "no linux-image and linux-headers package in $debs"
	finish
fi
release=$(dpkg-deb -f "$image_deb" Package | sed 's/^linux-image-//')
report PASS deb/files "$(basename "$image_deb"), $(basename "$headers_deb")"
# The package's own kernel, for the first boot.
rm -rf "$RUN/deb"
dpkg-deb -x "$image_deb" "$RUN/deb"
deb_vmlinuz=$RUN/deb/boot/vmlinuz-$release
[ -f "$deb_vmlinuz" ] || { report FAIL deb/vmlinuz "no /boot/vmlinuz-$release in $image_deb"; finish; }
timer_end packages

# 2. The root image: a minimal Debian 12 with the guest packages, built by
# mmdebstrap once (cached as a tarball, like tests/fresh/run.sh's root), and
# an ext4 image of it with the guest's PID 1, made again when that changes.
echo "== root image"
timer_start
rc=0
base=$(debian_root qemu "$LOGS/mmdebstrap.log" "${GUEST_PACKAGES[@]}") || rc=$?
report_root "$rc" "$LOGS/mmdebstrap.log" || finish
init_key=$(sha256sum <"$TOP/tests/kernel/qemu-init.sh" | cut -c1-12)
# The series' e2fsprogs, newest build of each package.
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
e2debs=()
for p in e2fsprogs libext2fs2t64 libcom-err2 libss2 logsave; do
	d=$(find "$E2B/deb" -maxdepth 1 -name "${p}_*_amd64.deb" 2>/dev/null | sort -V | tail -n 1)
	[ -n "$d" ] && e2debs+=("$d")
done
[ ${#e2debs[@]} = 5 ] || e2debs=()
init_key+=-$(cat "${e2debs[@]}" </dev/null | sha256sum | cut -c1-8)
root_img=${base%.tar}-$init_key.img
if [ ! -s "$root_img" ]; then
	rm -f "${base%.tar}"-*.img
	dir=$(mktemp -d "$RUN/root.XXXXXX")
	tar -C "$dir" -xf "$base"
	install -m 755 "$TOP/tests/kernel/qemu-init.sh" "$dir/sbin/extalign-qemu-init"
	echo extalign-qemu >"$dir/etc/hostname"
	if [ ${#e2debs[@]} -gt 0 ]; then
		mkdir -p "$dir/tmp/e2debs"
		cp "${e2debs[@]}" "$dir/tmp/e2debs/"
		if ! chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive sh -c 'apt-get install -y -q /tmp/e2debs/*.deb' \
			>"$LOGS/e2fsprogs-root.log" 2>&1; then
			report FAIL root/e2fsprogs "installing the series' e2fsprogs in the root"
			show_log "$LOGS/e2fsprogs-root.log"
			rm -rf "$dir"
			finish
		fi
		rm -rf "$dir/tmp/e2debs"
	fi
	if ! mkfs.ext4 -q -F -L extalign-root -d "$dir" "$root_img.new" 3G >"$LOGS/mkfs-root.log" 2>&1; then
		report FAIL root/image "mkfs.ext4 -d"
		show_log "$LOGS/mkfs-root.log"
		rm -rf "$dir" "$root_img.new"
		finish
	fi
	rm -rf "$dir"
	mv -f "$root_img.new" "$root_img"
fi
cp --sparse=always "$root_img" "$RUN/root.img"
report PASS root/image "$(basename "$root_img")${e2debs:+, with $(basename "${e2debs[0]}")}"
timer_end root

# The tools the guest takes from the host.
SHARE=$RUN/share
rm -rf "$SHARE"
mkdir -p "$SHARE"
if ! gcc -O2 -Wall -Wextra -Werror -o "$SHARE/ktool" "$TOP/tests/kernel/ktool.c" \
	>"$LOGS/ktool.log" 2>&1; then
	report FAIL tests/ktool
	show_log "$LOGS/ktool.log"
fi
# kvm_boots KERNEL: KERNEL, booted under KVM with no disks, gets as far as
# printing its version within 30 s (it then panics: no root).  On a host
# that is itself a KVM guest /dev/kvm opens and QEMU starts, but the
# kernel hangs while decompressing; a working KVM prints the version in a
# second or two.  The console goes to $LOGS/kvm-probe.log.
kvm_boots() {
	local log=$LOGS/kvm-probe.log pid

	rm -f "$log"
	# QEMU's default CPU model: "-cpu host" aborts under nested KVM
	# ("failed to set MSR 0x10a").
	qemu-system-x86_64 -accel kvm -m 256 -nodefaults -display none -no-reboot \
		-serial "file:$log" -kernel "$1" \
		-append "console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1" \
		</dev/null >"$LOGS/kvm-probe-qemu.log" 2>&1 &
	pid=$!
	for _ in $(seq 60); do
		grep -q 'Linux version' "$log" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	grep -q 'Linux version' "$log" 2>/dev/null
}
accel=(-accel tcg)
accel_name=TCG
case ${QEMU_ACCEL:-} in
tcg) ;;
kvm) accel=(-accel kvm) accel_name=KVM ;;
*)
	if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
		if kvm_boots "$deb_vmlinuz"; then
			accel=(-accel kvm)
			accel_name=KVM
		else
			echo "KVM cannot boot the kernel here (no version line within 30 s," \
				"$LOGS/kvm-probe.log): falling back to TCG"
		fi
	fi
	;;
esac
tools_args=() tools_env=()
if ls "$TOOLS"/xfstests-*.tar.xz >/dev/null 2>&1; then
	TOOLS=$(readlink -f "$TOOLS")
	tools_args=(-virtfs "local,path=$TOOLS,mount_tag=tools,security_model=none,readonly=on")
	tools_env=(EXTALIGN_TOOLS="$TOOLS")
fi

# boot NAME KERNEL PARAM=value...: boot KERNEL on the root image with a
# fresh scratch and NVMe disk; the console goes to $LOGS/console-NAME.log.
boot() {
	local name=$1 kernel=$2

	shift 2
	rm -f "$RUN/scratch.img" "$RUN/nvme.img"
	truncate -s 2G "$RUN/scratch.img"
	truncate -s 1G "$RUN/nvme.img"
	rm -rf "$SHARE/out-$name"
	timeout "$GUEST_TIMEOUT" qemu-system-x86_64 "${accel[@]}" -m "$MEM" -smp 2 \
		-nographic -no-reboot -nic none \
		-kernel "$kernel" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 init=/sbin/extalign-qemu-init EXTALIGN_TOP=$TOP EXTALIGN_SHARE=$SHARE EXTALIGN_OUT=$SHARE/out-$name EXTALIGN_RELEASE=$release EXTALIGN_SCRATCH_DISK=/dev/vdb $*" \
		-drive "file=$RUN/root.img,if=virtio,format=raw" \
		-drive "file=$RUN/scratch.img,if=virtio,format=raw" \
		-drive "file=$RUN/nvme.img,if=none,id=nvm,format=raw" \
		-device "nvme,serial=extalign0,drive=nvm,logical_block_size=4096,physical_block_size=4096" \
		-virtfs "local,path=$TOP,mount_tag=top,security_model=none,readonly=on" \
		-virtfs "local,path=$SHARE,mount_tag=shared,security_model=none" \
		-virtfs "local,path=$debs,mount_tag=debs,security_model=none,readonly=on" \
		"${tools_args[@]}" \
		</dev/null >"$LOGS/console-$name.log" 2>&1
}

# report_checks OUT: the guest PID 1's own checks.
report_checks() {
	local name rc detail

	[ -f "$1/qemu-checks" ] || return 0
	while read -r name rc detail; do
		if [ "$rc" = 0 ]; then
			report PASS "qemu/$name" "$detail"
		else
			report FAIL "qemu/$name" "$detail"
		fi
	done <"$1/qemu-checks"
}

# 3. Boot the package's kernel and install the packages.
echo "== boot 1: install the packages ($accel_name)"
timer_start
boot install "$deb_vmlinuz" EXTALIGN_QEMU_STEP=install
rc=$?
out=$SHARE/out-install
if [ ! -f "$out/done" ]; then
	report FAIL boot/install "$(guest_unfinished "$LOGS/console-install.log" "$rc" "${GUEST_TIMEOUT}s (QEMU_TIMEOUT)")"
	show_log "$LOGS/console-install.log" 40
	finish
fi
report PASS boot/install "$(grep -m1 -o 'Linux version [^ ]*' "$LOGS/console-install.log")"
report_checks "$out"
cp "$out/install.log" "$LOGS/dpkg-install.log" 2>/dev/null
grep -q '^install 0' "$out/qemu-checks" || { show_log "$LOGS/dpkg-install.log"; finish; }
timer_end install

# 4. Boot what dpkg installed and run the tests.
echo "== boot 2: the installed kernel, tests ($accel_name)"
timer_start
installed_vmlinuz=$RUN/vmlinuz-installed
rm -f "$installed_vmlinuz"
cp "$SHARE/out-install/vmlinuz" "$installed_vmlinuz" 2>/dev/null
if ! cmp -s "$installed_vmlinuz" "$deb_vmlinuz"; then
	report FAIL boot/installed-kernel "the guest's /boot/vmlinuz-$release is not the package's"
	finish
fi
report PASS boot/installed-kernel "the guest's /boot/vmlinuz-$release"
boot test "$installed_vmlinuz" EXTALIGN_QEMU_STEP=test KTOOL="$SHARE/ktool" \
	EXTALIGN_TESTS="$(IFS=,; echo "${TESTS[*]}")" "${tools_env[@]}"
rc=$?
out=$SHARE/out-test
console=$LOGS/console-test.log
if [ ! -f "$out/done" ]; then
	report FAIL boot/test "$(guest_unfinished "$console" "$rc" "${GUEST_TIMEOUT}s (QEMU_TIMEOUT)")"
	show_log "$console" 40
else
	report PASS boot/test "$(grep -m1 -o 'Linux version [^ ]*' "$console")"
fi
report_checks "$out"
report_kunit_boot "$console" "$RUN/deb/boot/config-$release"
report_guest_results "$out"
rm -rf "$LOGS/qemu-out"
cp -a "$out" "$LOGS/qemu-out" 2>/dev/null
timer_end tests
finish
