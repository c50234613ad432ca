#!/bin/bash
# The fresh-machine suite: what a new user does on a Debian 12 machine that
# has never seen extalign, in a minimal Debian 12 root made by mmdebstrap.
#
#   1. scripts/demo.sh, the README's first command, as root in the chroot
#      (/dev, /proc, /sys bind-mounted for the loop devices): exit 0, every
#      section printed, and none of the test packages installed.
#   2. dpkg-buildpackage -us -uc -b there, lintian with no errors.
#   3. The .deb installed: extalign --version, man extalign renders, the
#      completion loads and answers, systemd-analyze verify on the installed
#      unit, which is disabled and not started yet and enabled by "systemctl
#      enable extalignd"; an edited conffile survives a reinstall.
#   4. apt-get purge (and autoremove) leaves nothing but what policy keeps
#      (dpkg's own records and logs).
#   5. The patched e2fsprogs packages (e2fsprogs/deb.sh, built on the host
#      if they are not there yet) installed over Debian 12's: the version,
#      e2fsck -V, debugfs set_extsize and stat, a clean e2fsck, and
#      extalign devices saying the boot-time e2fsck knows forcealign.
#
# Usage: tests/fresh/run.sh [--refresh]
#   --refresh  build the base root again instead of reusing the cached one
# Environment: EXTALIGN_FRESH_CACHE (default /var/tmp/extalign-fresh) holds
# the base root tarball and the downloaded .debs between runs;
# EXTALIGN_FRESH_KEEP=1 keeps the root for a look after the run.
# Prints "time PHASE: Ns" per phase.  Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
shopt -s inherit_errexit

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${EXTALIGN_FRESH_CACHE:-/var/tmp/extalign-fresh}
# The smallest root apt works in (minbase: Essential and required packages
# and apt), cached by debian_root.
. "$TOP/scripts/debian-root.bash"
# The sections scripts/demo.sh prints on every kernel.
SECTIONS=("XFS (stripe-aligned" "A database directory on XFS" "set refuses it"
	  "Bad input changes nothing" "ext4 on this kernel" "== Done")

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

[ "${1:-}" = --refresh ] && refresh=1 || refresh=0
[ "$(id -u)" = 0 ] || skip "needs root for chroot, mounts and loop devices"
command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (scripts/install-deps.sh fresh)"

t0=$SECONDS
phase_start=$SECONDS
phase() { echo "time $1: $((SECONDS - phase_start))s"; phase_start=$SECONDS; }

mkdir -p "$CACHE/archives/partial"
[ "$refresh" = 1 ] && rm -f "$CACHE/$DEBIAN_SUITE-minbase-"*.tar
rc=0
base=$(debian_root minbase "$CACHE/mmdebstrap.log") || rc=$?
if [ "$rc" != 0 ]; then
	tail -20 "$CACHE/mmdebstrap.log"
	[ "$rc" = 77 ] && skip "no Debian mirror reachable"
	fail "mmdebstrap"
fi
phase mmdebstrap

R=$(mktemp -d "$CACHE/root.XXXXXX")
cleanup() {
	local m l back
	# Loop devices the demo may have left behind if it was interrupted.
	while read -r l back; do
		case $back in "$R"/*) losetup -d "$l" 2>/dev/null || true ;; esac
	done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null || true)
	# Deepest first; lazily, so a busy mount does not stop the rest.
	for m in $(findmnt -rn -o TARGET | grep "^$R/" | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	if findmnt -rn -o TARGET | grep -q "^$R/"; then
		echo "mounts remain under $R; it is not removed" >&2
	elif [ "${EXTALIGN_FRESH_KEEP:-0}" = 1 ]; then
		echo "kept: $R"
	else
		# --one-file-system: never reach through a bind mount into the host.
		rm -rf --one-file-system "$R"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

tar -C "$R" -xf "$base"
cp -L /etc/resolv.conf "$R/etc/resolv.conf"
# The checkout as a clone has it: tracked and new files, nothing built.
mkdir -p "$R/root/extalign"
if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$TOP" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) | tar -C "$R/root/extalign" -xf -
else
	tar -C "$TOP" --exclude=./build -cf - . | tar -C "$R/root/extalign" -xf -
fi
rm -rf "$R/root/extalign/build"

mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys" && mount --make-rslave "$R/sys"
mount -t tmpfs tmpfs "$R/run"
# Downloaded packages are kept here between runs.
mount --bind "$CACHE/archives" "$R/var/cache/apt/archives"
phase unpack

# in_root SCRIPT: run SCRIPT with bash in the root, in a clean environment
# like a root login's, with output to a file (not a terminal).
in_root() {
	chroot "$R" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive /bin/bash -c "$1"
}
LOG=$R/root/log
mkdir -p "$LOG"

# 1. The README's first command on a machine that never built extalign.
rc=0
in_root 'cd /root/extalign && scripts/demo.sh' >"$LOG/demo" 2>&1 || rc=$?
[ "$rc" = 0 ] || { tail -40 "$LOG/demo"; fail "scripts/demo.sh exited $rc in the fresh root"; }
for s in "${SECTIONS[@]}"; do
	grep -qF -- "$s" "$LOG/demo" || { cat "$LOG/demo"; fail "the demo printed no section '$s'"; }
done
# The test packages must not have been asked for (some come in as
# dependencies of the demo's); check.h, whose absence broke the demo once,
# must not be there at all.
in_root 'apt-mark showmanual' >"$LOG/manual"
# shellcheck disable=SC2013 # package names: one word each
for p in $(awk '!/^#/ && NF > 1 { t = 0; d = 0
		for (i = 2; i <= NF; i++) { if ($i == "test") t = 1; if ($i == "build" || $i == "demo") d = 1 }
		if (t && !d) print $1 }' "$TOP/scripts/packages.txt"); do
	if grep -qx "$p" "$LOG/manual"; then
		fail "the demo installed the test package $p"
	fi
done
[ -e "$R/usr/include/check.h" ] && fail "check.h is installed: the demo did not prove it can do without"
ok "scripts/demo.sh exits 0 with every section, without the test packages"
phase demo

# 2. The Debian package.
in_root 'cd /root/extalign && scripts/install-deps.sh build deb' >"$LOG/deps" 2>&1 ||
	{ cat "$LOG/deps"; fail "installing the build and deb packages"; }
phase deb-deps
in_root 'cd /root/extalign && dpkg-buildpackage -us -uc -b' >"$LOG/build" 2>&1 ||
	{ tail -40 "$LOG/build"; fail "dpkg-buildpackage"; }
version=$(sed -n '1s/^extalign (\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
deb=/root/extalign_${version}_amd64.deb
[ -f "$R$deb" ] || fail "dpkg-buildpackage made no $deb"
ok "dpkg-buildpackage made $(basename "$deb")"
phase dpkg-buildpackage
rc=0
in_root "lintian --fail-on error /root/extalign_${version}_amd64.changes" >"$LOG/lintian" 2>&1 || rc=$?
sed 's/^/  lintian: /' "$LOG/lintian"
[ "$rc" = 0 ] || fail "lintian reports errors"
ok "lintian: no errors"
phase lintian

# 3. Installed as an admin would.  The file list before, for the purge.
snapshot() {
	in_root 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp \
		-o -path /root -o -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache \
		-o -path /var/log \) -prune -o -print | sort'
}
snapshot >"$LOG/files-before"
in_root "apt-get install -y -q $deb" >"$LOG/install" 2>&1 || { cat "$LOG/install"; fail "apt-get install $deb"; }

out=$(in_root 'extalign --version') || fail "extalign --version failed"
case $out in *"$version"*) ok "extalign --version: $out" ;; *) fail "extalign --version says '$out', not $version" ;; esac
in_root 'extalignd --version' >/dev/null || fail "extalignd --version failed"

for page in extalign extalignd extalign.conf; do
	in_root "MANWIDTH=80 man -P cat $page" >"$LOG/man" 2>"$LOG/man.err" ||
		{ cat "$LOG/man.err"; fail "man $page does not render"; }
	grep -q '^NAME' "$LOG/man" || { head "$LOG/man"; fail "man $page has no NAME section"; }
	sed "s/^/  man $page: /" "$LOG/man.err"
done
ok "man extalign, extalignd, extalign.conf render"

# shellcheck disable=SC2016 # expanded by the shell in the root
got=$(in_root '. /usr/share/bash-completion/bash_completion; _completion_loader extalign
	COMP_WORDS=(extalign se); COMP_CWORD=1; COMP_LINE="extalign se"; COMP_POINT=11
	_extalign_module; echo "${COMPREPLY[*]}"' 2>&1) || fail "the completion does not load: $got"
[ "$got" = set ] || fail "the installed completion of 'se' gave '$got'"
ok "bash completion loads on demand and completes"

unit=/lib/systemd/system/extalignd.service
in_root "SYSTEMD_LOG_LEVEL=warning systemd-analyze verify $unit" >"$LOG/verify" 2>&1 ||
	{ cat "$LOG/verify"; fail "systemd-analyze verify $unit"; }
grep -v -e '^$' -e 'Failed to connect' "$LOG/verify" | grep -q . && { cat "$LOG/verify"; fail "verify warned"; }
ok "systemd-analyze verify $unit"

state=$(in_root 'systemctl is-enabled extalignd' 2>&1 || true)
[ "$state" = disabled ] || fail "after install the unit is '$state', not disabled"
# The postinst may restart a running daemon on upgrade (try-restart under
# [ -n "$2" ]), never start one: debian/rules --no-start --restart-after-upgrade.
postinst="$R/var/lib/dpkg/info/extalign.postinst"
grep 'deb-systemd-invoke' "$postinst" | grep -v 'try-restart' | grep -q . &&
	{ cat "$postinst"; fail "the postinst starts the unit (only try-restart on upgrade is wanted)"; }
grep -B2 'deb-systemd-invoke try-restart' "$postinst" | grep -q 'if \[ -n "\$2" \]' ||
	{ cat "$postinst"; fail "the postinst's try-restart is not limited to upgrades"; }
in_root 'systemctl enable extalignd' >"$LOG/enable" 2>&1 || { cat "$LOG/enable"; fail "systemctl enable extalignd"; }
[ -L "$R/etc/systemd/system/multi-user.target.wants/extalignd.service" ] || fail "enable made no multi-user.target.wants link"
in_root 'systemctl disable extalignd' >"$LOG/enable" 2>&1 || { cat "$LOG/enable"; fail "systemctl disable extalignd"; }
ok "the unit is installed disabled and not started; systemctl enable extalignd enables it"

conffiles=$(in_root "dpkg-query -W -f='\${Conffiles}' extalign")
case $conffiles in *"/etc/extalign.conf "*) ;; *) fail "/etc/extalign.conf is no conffile: $conffiles" ;; esac
echo '# edited by the admin' >>"$R/etc/extalign.conf"
in_root "dpkg -i --force-confold $deb" >"$LOG/reinstall" 2>&1 || { cat "$LOG/reinstall"; fail "reinstall"; }
tail -1 "$R/etc/extalign.conf" | grep -q 'edited by the admin' || fail "a reinstall lost the admin's edit of extalign.conf"
ok "/etc/extalign.conf is a conffile; an edit survives a reinstall"
phase install

# 4. Purge, and the dependencies it pulled in: back to the file list from
# before the install.
in_root 'apt-get purge -y -q extalign && apt-get autoremove --purge -y -q' >"$LOG/purge" 2>&1 ||
	{ cat "$LOG/purge"; fail "apt-get purge extalign"; }
snapshot >"$LOG/files-after"
diff -u "$LOG/files-before" "$LOG/files-after" >"$LOG/files-diff" ||
	{ cat "$LOG/files-diff"; fail "purge left files behind or removed others"; }
ok "apt-get purge extalign leaves the root as it was before the install"
phase purge

# 5. The patched e2fsprogs over Debian 12's.
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
e2v=$(sed -n 's/^+e2fsprogs (\([^)]*\)).*/\1/p' "$TOP"/e2fsprogs/patches/*-debian-*.patch | head -n 1)
[ -n "$e2v" ] || fail "no debian/changelog entry in e2fsprogs/patches"
e2debs=(e2fsprogs libext2fs2t64 libcom-err2 libss2 logsave e2fsprogs-l10n)
if [ ! -f "$E2B/deb/e2fsprogs_${e2v}_amd64.deb" ]; then
	"$TOP/e2fsprogs/deb.sh" >"$LOG/e2deb" 2>&1 || { tail -30 "$LOG/e2deb"; fail "e2fsprogs/deb.sh"; }
fi
mkdir -p "$R/root/e2debs"
for p in "${e2debs[@]}"; do
	cp "$E2B/deb/${p}_${e2v}"_*.deb "$R/root/e2debs/" || fail "no ${p}_$e2v package in $E2B/deb"
done
in_root 'apt-get install -y -q /root/e2debs/*.deb && apt-get check' >"$LOG/e2install" 2>&1 ||
	{ cat "$LOG/e2install"; fail "apt-get install of the patched e2fsprogs"; }
got=$(in_root "dpkg-query -W -f='\${Version}' e2fsprogs")
[ "$got" = "$e2v" ] || fail "e2fsprogs is at '$got' after the install, not $e2v"
# Debian 12's packages that depend on libext2fs2 (zerofree, say) must
# still install: libext2fs2t64 provides it.
in_root 'apt-get install -s -q zerofree' >"$LOG/e2provides" 2>&1 ||
	{ cat "$LOG/e2provides"; fail "zerofree (depends on libext2fs2) cannot be installed next to the patched e2fsprogs"; }
if ! grep -q '^Inst zerofree' "$LOG/e2provides" || grep -q '^Remv' "$LOG/e2provides"; then
	cat "$LOG/e2provides"
	fail "installing zerofree would remove packages, or does not install"
fi
in_root '/sbin/e2fsck -V' 2>&1 | grep -q 'Knows extent size hints and forcealign' ||
	fail "the installed e2fsck -V does not say it knows forcealign"
# shellcheck disable=SC2016 # expanded in the root
in_root 'set -e; truncate -s 64M /root/e2.img; mkfs.ext4 -q -F -b 4096 /root/e2.img
	debugfs -w -R "write /dev/null f" /root/e2.img >/dev/null 2>&1
	debugfs -w -R "set_extsize -f f 4" /root/e2.img
	debugfs -R "stat f" /root/e2.img 2>/dev/null | grep "^Extent size hint"
	dumpe2fs -h /root/e2.img 2>/dev/null | grep "^Filesystem features:"
	e2fsck -fn /root/e2.img' >"$LOG/e2use" 2>&1 || { cat "$LOG/e2use"; fail "the installed e2fsprogs on an image"; }
# mkfs.ext4 keeps Debian 12's defaults: GRUB 2.06 reads none of these.
grep -E '^Filesystem features:.*(metadata_csum_seed|orphan_file)' "$LOG/e2use" &&
	fail "mkfs.ext4 of the patched e2fsprogs enables features Debian 12's GRUB cannot read"
grep -q '^Extent size hint: 4 blocks (16384 bytes), forcealign$' "$LOG/e2use" ||
	{ cat "$LOG/e2use"; fail "debugfs stat does not show the hint set_extsize gave"; }
ok "e2fsprogs $e2v installed over Debian 12's: e2fsck -V, debugfs set_extsize and stat, e2fsck -fn"
in_root "apt-get install -y -q $deb" >"$LOG/install2" 2>&1 || { cat "$LOG/install2"; fail "apt-get install $deb again"; }
# shellcheck disable=SC2016 # expanded in the root
in_root 'set -e; mkdir -p /root/e2mnt; mount -o loop /root/e2.img /root/e2mnt
	extalign devices /root/e2mnt; umount /root/e2mnt' >"$LOG/e2devices" 2>&1 ||
	{ cat "$LOG/e2devices"; fail "extalign devices on the ext4 image"; }
grep -q '^e2fsck (/sbin/e2fsck) knows forcealign' "$LOG/e2devices" ||
	{ cat "$LOG/e2devices"; fail "extalign devices does not say the installed e2fsck knows forcealign"; }
ok "extalign devices: the installed e2fsck knows forcealign"
phase e2fsprogs

echo "time total: $((SECONDS - t0))s"
