#!/bin/bash
# Build Debian kernel packages (linux-image, linux-headers) of Linux 6.12
# with the extalign series applied: "make bindeb-pkg".
#
# Usage: kernel/deb.sh [CONFIG]
#
#   CONFIG  the kernel configuration to start from:
#           (none)   Debian's own 6.12 configuration: the linux-config-6.12
#                    package's config.amd64_none_amd64.xz, or the running
#                    kernel's /boot/config-* when that is a 6.12 kernel, so
#                    that what users install is Debian's kernel plus the
#                    series.  A full build: hours on 2 cores.
#           --small  the small QEMU test kernel kernel/qemu-test.sh boots:
#                    x86_64_defconfig + kvm_guest.config + kernel/qemu.config
#           --server Debian's configuration trimmed to what a server keeps
#                    (make localyesconfig against kernel/server.modules):
#                    Debian's built-in options, those modules built in,
#                    scsi_debug a module; it boots in QEMU without an
#                    initramfs (kernel/qemu-test.sh --debs)
#           FILE     any .config (xz-compressed or not)
#
# The tree is kernel/prepare.sh's (the series and the test harness patches
# on linux-source-6.12).  The kernel release is 6.12.N-extalign-V, V the
# series version (EXTALIGN_SERIES_VERSION, default the project's version in
# the Makefile).  Builds live in $EXTALIGN_KBUILD (default
# /var/tmp/extalign-kernel), one build directory per configuration, and are
# incremental; the packages end up in $EXTALIGN_KBUILD/debs/NAME/, NAME
# "debian", "small", "server" or "config-HASH".  The last lines of stdout
# are the paths of the packages.  Debug information is left out (no
# linux-image-dbg, no BTF) unless EXTALIGN_DEB_DEBUG=1.  JOBS (default
# nproc) make jobs.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
export EXTALIGN_KBUILD=$KB
JOBS=${JOBS:-$(nproc)}
DEBIAN_CONFIG=${EXTALIGN_DEBIAN_CONFIG:-/usr/src/linux-config-6.12/config.amd64_none_amd64.xz}

log() { echo "deb.sh: $*" >&2; }
die() { log "$*"; exit 1; }

case ${1:-} in
-h | --help) sed -n '2,32s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
[ $# -le 1 ] || die "usage: kernel/deb.sh [--small | --server | CONFIG]"

version=${EXTALIGN_SERIES_VERSION:-$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")}
[[ $version =~ ^[0-9a-z.+]+$ ]] ||
	die "series version '$version' is not usable in a package name (digits, a-z, '.', '+')"
localversion=-extalign-$version

# The base configuration and the name of its build.
small=0 server=0
case ${1:-} in
--small) small=1 name=small base= ;;
"" | --server)
	name=debian base=
	[ "${1:-}" != --server ] || server=1 name=server
	if [ -f "$DEBIAN_CONFIG" ]; then
		base=$DEBIAN_CONFIG
	else
		case $(uname -r) in
		6.12.*) [ -f "/boot/config-$(uname -r)" ] && base=/boot/config-$(uname -r) ;;
		esac
	fi
	[ -n "$base" ] || die "no Debian 6.12 configuration: install linux-config-6.12 (scripts/install-deps.sh qemu) or name a CONFIG"
	;;
-*) die "unknown option $1" ;;
*)
	[ -f "$1" ] || die "$1: no such config file"
	base=$(readlink -f "$1")
	name=config-$(sha256sum <"$base" | cut -c1-12)
	;;
esac
BUILD=$KB/build-$name
OUTDIR=$KB/debs/$name
mkdir -p "$BUILD" "$OUTDIR"

SRC=$("$HERE/prepare.sh" | tail -n 1)
[ -d "$SRC" ] || die "kernel/prepare.sh made no tree"

# cat_config FILE: FILE's text, xz-compressed or not.
cat_config() {
	case $1 in *.xz) xz -dc "$1" ;; *) cat "$1" ;; esac
}

# make_small_config: x86_64_defconfig, kvm_guest.config, kernel/qemu.config.
make_small_config() {
	make -s -C "$SRC" O="$BUILD" x86_64_defconfig
	make -s -C "$SRC" O="$BUILD" kvm_guest.config
	cat "$HERE/qemu.config" >>"$BUILD/.config"
	make -s -C "$SRC" O="$BUILD" olddefconfig 2>&1 | grep -v 'override: reassigning' >&2 || true
}

# make_full_config: BASE as it is, but without Debian's signing keys (not
# in the source package) and, unless asked for, without debug information.
make_full_config() {
	cat_config "$base" >"$BUILD/.config"
	"$SRC/scripts/config" --file "$BUILD/.config" \
		--set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS "" \
		--set-str MODULE_SIG_KEY "certs/signing_key.pem" \
		--set-str LOCALVERSION "" \
		--disable LOCALVERSION_AUTO
	if [ "${EXTALIGN_DEB_DEBUG:-0}" != 1 ]; then
		"$SRC/scripts/config" --file "$BUILD/.config" \
			--disable DEBUG_INFO --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
			--disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 \
			--disable DEBUG_INFO_BTF --enable DEBUG_INFO_NONE
	fi
	make -s -C "$SRC" O="$BUILD" olddefconfig
	[ "$server" = 0 ] || trim_config
}

# trim_config: keep only the modules of kernel/server.modules, built in
# (localyesconfig reads them in lsmod's format), then make scsi_debug a
# module again.  localyesconfig asks about options the trimmed
# configuration newly reaches: with no input, their defaults are taken.
trim_config() {
	local lsmod=$BUILD/.extalign-server.lsmod
	{
		echo "Module Size Used by"
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*$/ 16384 0/' "$HERE/server.modules"
	} >"$lsmod"
	make -s -C "$SRC" O="$BUILD" LSMOD="$lsmod" localyesconfig </dev/null \
		>"$BUILD/.extalign-localyesconfig.log" 2>&1 ||
		{ cat "$BUILD/.extalign-localyesconfig.log" >&2; return 1; }
	"$SRC/scripts/config" --file "$BUILD/.config" --module SCSI_DEBUG
	make -s -C "$SRC" O="$BUILD" olddefconfig
}

# The configuration is only made again when its inputs changed, so that a
# rebuild stays incremental.
if [ "$small" = 1 ]; then
	inputs=$(cat "$HERE/qemu.config" "$SRC/arch/x86/configs/x86_64_defconfig" \
		"$SRC/kernel/configs/kvm_guest.config" | sha256sum | cut -d' ' -f1)
else
	inputs=$({ cat_config "$base"; echo "debug=${EXTALIGN_DEB_DEBUG:-0}"
		[ "$server" = 0 ] || cat "$HERE/server.modules"; } | sha256sum | cut -d' ' -f1)
fi
if [ ! -f "$BUILD/.config" ] || [ "$(cat "$BUILD/.extalign-config" 2>/dev/null)" != "$inputs" ]; then
	log "configuring $BUILD (${base:-small QEMU config})"
	rm -f "$BUILD/.extalign-config"
	if [ "$small" = 1 ]; then make_small_config; else make_full_config; fi
fi

# The options the series and its tests need must have survived.
missing=0
if [ "$small" = 1 ]; then
	while read -r line; do
		case $line in
		CONFIG_*=n) grep -q "^${line%=n}=" "$BUILD/.config" &&
			{ log "config: $line did not survive olddefconfig"; missing=1; } ;;
		CONFIG_*=*) grep -qx "$line" "$BUILD/.config" ||
			{ log "config: $line did not survive olddefconfig"; missing=1; } ;;
		esac
	done <"$HERE/qemu.config"
else
	for o in EXT4_FS BLK_DEV_SD; do
		grep -q "^CONFIG_$o=[ym]" "$BUILD/.config" ||
			{ log "config: CONFIG_$o is off"; missing=1; }
	done
	# Trimmed, what the guests boot from and test with must be built in.
	[ "$server" = 0 ] || for line in CONFIG_EXT4_FS=y CONFIG_XFS_FS=y \
		CONFIG_VIRTIO_BLK=y CONFIG_BLK_DEV_NVME=y CONFIG_9P_FS=y \
		CONFIG_NET_9P_VIRTIO=y CONFIG_DM_LOG_WRITES=y CONFIG_SCSI_DEBUG=m; do
		grep -qx "$line" "$BUILD/.config" ||
			{ log "config: $line did not survive the trimming"; missing=1; }
	done
fi
[ "$missing" = 0 ] || die "the configuration lacks what the series needs"
echo "$inputs" >"$BUILD/.extalign-config"

# bindeb-pkg leaves the packages in the build directory's parent: start
# from a clean one so that only this build's packages are collected.
rm -f "$KB"/linux-*.deb "$KB"/linux-upstream_* "$KB"/linux-extalign_*
start=$(date +%s)
log "make bindeb-pkg LOCALVERSION=$localversion in $BUILD (-j$JOBS)"
DEBEMAIL="dev@extalign.invalid" DEBFULLNAME="extalign developers" \
	make -C "$SRC" O="$BUILD" -j"$JOBS" LOCALVERSION="$localversion" \
	KDEB_SOURCENAME=linux-extalign KBUILD_BUILD_USER=extalign \
	KBUILD_BUILD_HOST=extalign.invalid bindeb-pkg >&2
release=$(cat "$BUILD/include/config/kernel.release")
rm -f "$OUTDIR"/*.deb
mv "$KB"/linux-*.deb "$OUTDIR"/
rm -f "$KB"/linux-extalign_*
log "kernel $release built in $(($(date +%s) - start))s; packages in $OUTDIR"
log "disk: build $(du -sh "$BUILD" | cut -f1), packages $(du -ch "$OUTDIR"/*.deb | tail -n 1 | cut -f1)"
ls -1 "$OUTDIR"/*.deb
