#!/bin/bash
# The system test inside the QEMU guest (tests/system/run.sh boots it): run
# by extalign-systest.service once systemd, PID 1, has brought the system
# up, as an admin would work.  The kernel command line says which step:
#
#   extalign.step=install  the packages installed by apt, data disks and
#                          fstab, /etc/extalign.conf, files written before
#                          their rule, systemctl enable --now extalignd
#   extalign.step=work     the installed kernel: the database-like load,
#                          reload (changed, broken), kill -9, the watchdog,
#                          the idle realignment of the old files
#   extalign.step=cut      the checks after a power cut (if there was one),
#                          then the load again until the host kills QEMU
#   extalign.step=final    the checks after the last cut, the upgrade to a
#                          newer package, purge
#
# Every check appends "NAME RC DETAIL" to $OUT/checks and keeps what it saw
# in $OUT/NAME.log (and the journal's last lines in NAME.journal when it
# failed).  All steps but cut power the guest off at the end.
set -uo pipefail
PATH=/usr/sbin:/usr/bin:/sbin:/bin

step=$(sed -n 's/.*extalign\.step=\([a-z]*\).*/\1/p' /proc/cmdline)
boot=$(sed -n 's/.*extalign\.boot=\([a-z0-9-]*\).*/\1/p' /proc/cmdline)
SHARE=/mnt/systest
DEBS=/mnt/systest-debs
SRC=/mnt/systest-top
OUT=$SHARE/out-$boot
mkdir -p "$OUT"
: >"$OUT/checks"
exec >>"$OUT/guest.log" 2>&1
echo "== step $step, boot $boot, $(uname -r), $(date -u)"

# check NAME CMD...: CMD's output in NAME.log, its status in checks.
check() {
	local name=$1 rc
	shift
	"$@" >"$OUT/$name.log" 2>&1
	rc=$?
	# Beside the output, not after it: the host shows the end of each.
	[ "$rc" = 0 ] || journalctl -b --no-pager -n 60 >"$OUT/$name.journal" 2>&1
	echo "$name $rc $(tail -n 1 "$OUT/$name.log" | tr -d '\n' | cut -c1-160)" >>"$OUT/checks"
	return "$rc"
}
say() { echo "$*"; }
die() {
	echo "FATAL: $*" | tee "$OUT/fatal.log"
	echo "fatal 1 $*" >>"$OUT/checks"
	finish
}
finish() {
	journalctl -b --no-pager >"$OUT/journal.txt" 2>&1
	touch "$OUT/done"
	sync
	[ "$step" = cut ] || systemctl poweroff --no-block
	exit 0
}

wait_for() { # SECONDS CMD...: poll CMD every 0.2 s
	local n=$(($1 * 5))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.2
	done
}

pid1_is_systemd() {
	[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] ||
		[ "$(readlink /proc/1/exe)" = /lib/systemd/systemd ] || return 1
	echo "PID 1: $(readlink /proc/1/exe), $(systemctl --version | head -n 1)"
}

# ---- install ----------------------------------------------------------------
install_packages() {
	# Nothing is downloaded (the guest has no network) but --no-download
	# makes apt lose the path of a local package it upgrades ("Pathname to
	# install is not absolute").
	DEBIAN_FRONTEND=noninteractive apt-get install -y "$DEBS"/*.deb
}

data_disks() {
	# ext4 on the NVMe disk (4 KiB blocks: atomic writes of one block), with
	# project ids; XFS on the virtio disk.  Checked at boot by systemd-fsck.
	mkfs.ext4 -q -F -L data -O project,quota -E quotatype=prjquota /dev/nvme0n1 || return 1
	mkfs.xfs -q -f -L xdata /dev/vdb || return 1
	mkdir -p /data /xdata
	cat >>/etc/fstab <<'EOF'
LABEL=data /data ext4 defaults 0 2
LABEL=xdata /xdata xfs defaults 0 2
EOF
	systemctl daemon-reload
	mount /data && mount /xdata || return 1
	mkdir -p /data/db /data/late /xdata/proj
	# The project tree: id 42, inherited by what is made in it.
	xfs_io -c 'chproj 42' -c 'chattr +P' /xdata/proj || return 1
	xfs_io -c lsproj /xdata/proj | grep -q 'projid = 42' || return 1
	findmnt /data && findmnt /xdata
}

# Files written before any rule: interleaved 12 KiB writes, so that their
# extents start off the 16 KiB unit.  The idle realignment must find them.
old_files() {
	local i k
	for k in 1 2 3 4 5 6 7 8; do
		for i in 1 2 3 4; do
			dd if=/dev/urandom of=/data/late/old$i bs=12k count=1 seek=$((k - 1)) \
				conv=notrunc,fsync status=none || return 1
		done
	done
	md5sum /data/late/old* >"$SHARE/late.md5"
	extalign check --extsize 16k /data/late/old* && return 1
	return 0
}

write_config() {
	cat >/etc/extalign.conf <<'EOF'
# The system test's rules (tests/system/guest.sh).
[daemon]
idle_time = 3s
idle_poll = 200ms
idle_cpu_load = 100
idle_io_pressure = 100
idle_disk_util = 100

[rule db]
directory = /data/db
extsize = 16k
forcealign = yes

[rule proj]
project = 42
filesystem = /xdata
extsize = 64k
EOF
	extalign policy check
}

enable_daemon() {
	# The package's postinst ran the generator before these rules existed:
	# a daemon-reload gives the unit their trees (extalignd(8), SERVICE).
	systemctl daemon-reload || return 1
	systemctl show -p ReadWritePaths extalignd | grep /data/db || return 1
	systemctl enable --now extalignd || return 1
	systemctl is-active extalignd
}

status_shows_rules() {
	systemctl status --no-pager extalignd
	systemctl show -p StatusText extalignd | grep -q 'running: 2 rules' || return 1
	# The watcher is asserted, not assumed: fanotify under the unit's sandbox.
	systemctl show -p StatusText extalignd | grep -q '(fanotify)'
}

journal_shows_start() {
	journalctl -b -u extalignd --no-pager
	journalctl -b -u extalignd --no-pager | grep -q 'Started extalignd.service\|Started Extent size hints'
}

new_files_hinted() {
	touch /data/db/hello /xdata/proj/hello
	wait_for 5 sh -c 'extalign get /data/db/hello | grep -q 16K' || { extalign get /data/db/hello; return 1; }
	wait_for 5 sh -c 'extalign get /xdata/proj/hello | grep -q 64K' || { extalign get /xdata/proj/hello; return 1; }
	extalign get /data/db/hello /xdata/proj/hello
}

step_install() {
	check pid1 pid1_is_systemd || die "PID 1 is not systemd"
	check install install_packages || die "the packages did not install"
	cp "/boot/vmlinuz-$(uname -r)" "$OUT/vmlinuz-running" 2>/dev/null
	local k
	for k in /boot/vmlinuz-*-extalign-*; do
		[ -f "$k" ] && cp "$k" "$OUT/vmlinuz" && echo "$k" >"$OUT/installed-kernel"
	done
	check disks data_disks || die "data disks"
	check old-files old_files
	check config write_config || die "the configuration"
	check enable enable_daemon || die "extalignd did not start"
	check status status_shows_rules
	check journal journal_shows_start
	check extalign-status extalign status
	check hinted new_files_hinted
	finish
}

# ---- work -------------------------------------------------------------------
kernel_is_package() {
	dpkg -S "/boot/vmlinuz-$(uname -r)" && uname -r | grep -q extalign
}

db_load() {
	python3 "$SRC/tests/system/dbload.py" run /data/db "$SHARE/work-load.log" 20 1 || return 1
	python3 "$SRC/tests/system/dbload.py" verify /data/db "$SHARE/work-load.log" || return 1
	# New files inherit forcealign from the directory (the kernel does it).
	extalign check -R /data/db
}

reload_changed() {
	sed -i 's/^extsize = 64k$/extsize = 128k/' /etc/extalign.conf
	systemctl reload extalignd || return 1
	touch /xdata/proj/after-reload
	wait_for 5 sh -c 'extalign get /xdata/proj/after-reload | grep -q 128K' ||
		{ extalign get /xdata/proj/after-reload; return 1; }
	echo "the changed rule applies: $(extalign get /xdata/proj/after-reload | tail -n 1)"
}

reload_broken() {
	cp /etc/extalign.conf /etc/extalign.conf.good
	printf '\n[rule broken]\ndirectory = relative\nextsize = 12k\n' >>/etc/extalign.conf
	systemctl reload extalignd
	wait_for 5 sh -c 'systemctl show -p StatusText extalignd | grep -q "reload failed"' || return 1
	journalctl -b -u extalignd --no-pager | grep 'extalign.conf:.*' | tail -n 3
	touch /data/db/after-broken
	wait_for 5 sh -c 'extalign get /data/db/after-broken | grep -q 16K' || return 1
	mv /etc/extalign.conf.good /etc/extalign.conf
	systemctl reload extalignd
	systemctl is-active extalignd
}

kill9() {
	local before after
	before=$(systemctl show -p MainPID --value extalignd)
	n0=$(systemctl show -p NRestarts --value extalignd)
	systemctl kill -s KILL extalignd
	# Files made while it is down: hinted by the kernel (inherit), or
	# listed as late and caught up by the restarted daemon.
	for i in 1 2 3; do dd if=/dev/zero of=/xdata/proj/while-down$i bs=64k count=1 status=none; done
	wait_for 15 sh -c "[ \"\$(systemctl show -p NRestarts --value extalignd)\" -gt $n0 ]" || return 1
	wait_for 10 systemctl is-active extalignd || return 1
	after=$(systemctl show -p MainPID --value extalignd)
	[ "$before" != "$after" ] || return 1
	echo "restarted: pid $before -> $after, NRestarts $(systemctl show -p NRestarts --value extalignd)"
	touch /data/db/after-restart
	wait_for 5 sh -c 'extalign get /data/db/after-restart | grep -q 16K' || return 1
	extalign status
}

watchdog() {
	local pid n0
	pid=$(systemctl show -p MainPID --value extalignd)
	n0=$(systemctl show -p NRestarts --value extalignd)
	kill -STOP "$pid"
	# WatchdogSec=30s: systemd aborts the stopped daemon and restarts it.
	wait_for 60 sh -c "[ \"\$(systemctl show -p NRestarts --value extalignd)\" -gt $n0 ]" || return 1
	wait_for 10 systemctl is-active extalignd || return 1
	journalctl -b -u extalignd --no-pager | grep -i 'watchdog' | tail -n 2
	journalctl -b -u extalignd --no-pager | grep -qi 'watchdog timeout'
}

realigned() {
	cat >>/etc/extalign.conf <<'EOF'

[rule late]
directory = /data/late
extsize = 16k
forcealign = yes
realign = yes
EOF
	# As extalignd(8) says: the new tree needs the generator and a restart;
	# realigning files the daemon's transient user does not own needs the
	# capabilities to write their copies, in a drop-in.
	mkdir -p /etc/systemd/system/extalignd.service.d
	cat >/etc/systemd/system/extalignd.service.d/realign.conf <<'EOF'
[Service]
CapabilityBoundingSet=CAP_DAC_OVERRIDE CAP_CHOWN CAP_FSETID CAP_LEASE
AmbientCapabilities=CAP_DAC_OVERRIDE CAP_CHOWN CAP_FSETID CAP_LEASE
EOF
	systemctl daemon-reload && systemctl restart extalignd || return 1
	systemctl show -p StatusText extalignd
	systemctl show -p StatusText extalignd | grep -q READ-ONLY && return 1
	wait_for 120 extalign check --extsize 16k /data/late/old1 /data/late/old2 /data/late/old3 /data/late/old4 ||
		{ extalign check --extsize 16k /data/late/old*; extalign status; return 1; }
	(cd / && md5sum -c "$SHARE/late.md5") || return 1
	extalign check --extsize 16k /data/late/old*
}

step_work() {
	check kernel kernel_is_package
	check active systemctl is-active extalignd || die "extalignd is not running after boot"
	check status status_shows_rules
	check load db_load
	check reload-changed reload_changed
	check reload-broken reload_broken
	check kill-9 kill9
	check watchdog watchdog
	check realign realigned
	finish
}

# ---- power cuts -------------------------------------------------------------
fsck_at_boot() {
	# systemd-fsck checked /data before mounting it; its verdict.
	journalctl -b --no-pager -u 'systemd-fsck@*' | tail -n 8
	systemctl is-failed --quiet 'systemd-fsck@dev-disk-by\x2dlabel-data.service' && return 1
	return 0
}

fsck_full() {
	# A full read-only e2fsck of the data disk, unmounted: the daemon stops
	# for it (its fanotify mark holds the mount).
	systemctl stop extalignd || return 1
	umount /data || return 1
	e2fsck -fn /dev/nvme0n1
	local rc=$?
	mount /data && systemctl start extalignd
	return $rc
}

load_intact() {
	local log=$SHARE/cut-load.log
	[ -f "$log" ] || { echo "no load log: first boot of the loop"; return 0; }
	python3 "$SRC/tests/system/dbload.py" verify /data/db "$log" | tee "$OUT/verify.json"
	return "${PIPESTATUS[0]}"
}

aligned_or_listed() {
	# Each file check calls misaligned must be one realign then repairs.
	local bad
	bad=$(extalign check -R --noheadings /data/db 2>/dev/null |
		awk '$NF != "aligned" && $NF != "empty" { print $1 }')
	if [ -n "$bad" ]; then
		echo "misaligned after the cut: $bad"
		# shellcheck disable=SC2086
		extalign realign --extsize 16k --force $bad || return 1
	fi
	extalign check -R /data/db | tail -n 3
	extalign check -R --noheadings /data/db >/dev/null
}

daemon_caught_up() {
	wait_for 20 systemctl is-active extalignd || return 1
	journalctl -b -u extalignd --no-pager | tail -n 5
	extalign status
}

step_cut() {
	check active systemctl is-active extalignd
	check fsck-boot fsck_at_boot
	check fsck fsck_full
	check load-intact load_intact
	check aligned aligned_or_listed
	check caught-up daemon_caught_up
	mv -f "$SHARE/cut-load.log" "$OUT/cut-load.log" 2>/dev/null
	touch "$OUT/done"
	# The load until the host cuts the power.  "loading" once it has made
	# 200 changes durable (python starts slowly under TCG): the host cuts
	# 2 to 10 s after that.
	python3 "$SRC/tests/system/dbload.py" run /data/db "$SHARE/cut-load.log" 600 "$(date +%s)" &
	wait_for 120 sh -c "[ \$(grep -c '^d ' '$SHARE/cut-load.log') -ge 200 ]"
	touch "$OUT/loading"
	sync
	wait
}

# ---- upgrade and purge --------------------------------------------------------
upgrade() {
	echo "# edited by the admin" >>/etc/extalign.conf
	local sum pid
	sum=$(md5sum </etc/extalign.conf)
	pid=$(systemctl show -p MainPID --value extalignd)
	DEBIAN_FRONTEND=noninteractive apt-get install -y "$DEBS"/upgrade/extalign_*.deb || return 1
	[ "$(md5sum </etc/extalign.conf)" = "$sum" ] || { echo "the edited configuration was replaced"; return 1; }
	wait_for 10 systemctl is-active extalignd || return 1
	[ "$(systemctl show -p MainPID --value extalignd)" != "$pid" ] || { echo "not restarted"; return 1; }
	dpkg -s extalign | grep '^Version'
}

purge() {
	DEBIAN_FRONTEND=noninteractive apt-get purge -y extalign || return 1
	[ ! -e /etc/extalign.conf ] || { echo "/etc/extalign.conf left after purge"; return 1; }
	systemctl is-active extalignd && return 1
	[ ! -e /usr/bin/extalign ] && [ ! -e /usr/sbin/extalignd ]
}

step_final() {
	check active systemctl is-active extalignd
	check fsck-boot fsck_at_boot
	check fsck fsck_full
	check load-intact load_intact
	check aligned aligned_or_listed
	mv -f "$SHARE/cut-load.log" "$OUT/cut-load.log" 2>/dev/null
	check upgrade upgrade
	check purge purge
	finish
}

case $step in
install) step_install ;;
work) step_work ;;
cut) step_cut ;;
final) step_final ;;
*) die "unknown step '$step'" ;;
esac
