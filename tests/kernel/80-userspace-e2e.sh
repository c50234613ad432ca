#!/bin/bash
# The programs of this checkout (build/extalign, build/extalignd) end to end
# on our ext4 over the guest's atomic-capable scsi_debug disk (4 KiB
# sectors, atomic units 4..64 KiB): set, get and check of a hinted and a
# forcealign file; devices --probe reporting the 64 KiB unit a forcealign
# file gets; extalignd with a rule directory and 200 files created and
# written at once, every one hinted and aligned by inheritance; realign of
# an unaligned file, aligned afterwards and with the same data.
#
# What the kernel keeps is asked with ktool, not with extalign.  A kernel
# that keeps no extent size hint at all is a SKIP.  On one that drops
# FS_XFLAG_FORCEALIGN the forcealign parts are left out (their refusal is
# checked instead) and, when everything else passed, the test is a SKIP
# that names them.
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
EXTALIGN=$TOP/build/extalign
EXTALIGND=$TOP/build/extalignd
NOTIFY_LISTEN=$TOP/build/tests/tools/notify-listen
for p in "$EXTALIGN" "$EXTALIGND" "$NOTIFY_LISTEN"; do
	[ -x "$p" ] || die "$p is not built: run 'make' in $TOP first"
done
command -v python3 >/dev/null || die "python3 is missing on the host root the guest runs on"

# Scratch space on the guest's own tmpfs: the daemon's notify socket has
# no business on hostfs.  lib.sh's cleanup (unmount, e2fsck) is run by
# init.sh after the test; here cleanup only removes the scratch space.
WORK=$(mktemp -d /run/extalign-e2e.XXXXXX) || die "mktemp"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
fail() { die "$@"; }
need_cmd() { command -v "$1" >/dev/null || die "$1 is not installed"; }

UNIT=65536
HINTED="xflags=0x800 extsize=$UNIT"
skipped=()

# run WANT CMD...: CMD must exit WANT; its output is in $WORK/out, $WORK/err.
run() {
	local want=$1 rc=0

	shift
	"$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "command: $*"
		echo "stdout:"; cat "$WORK/out"
		echo "stderr:"; cat "$WORK/err"
		die "exit $rc, want $want"
	fi
	if [ $# -gt 8 ]; then
		set -- "${@:1:7}" "... ($(($# - 7)) more)"
	fi
	ok "exit $rc: ${*#"$TOP/build/"}"
}

# has FILE TEXT: FILE (out or err) contains TEXT.
has() {
	grep -qF -- "$2" "$WORK/$1" || { cat "$WORK/$1"; die "'$2' not in $1"; }
}

# pj EXPR: EXPR over the JSON in $WORK/out as d ("True"/"False" for booleans).
pj() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$WORK/out" "$1"
}

sd=$(scsi_disk) || die "no scsi_debug disk"
fresh_ext4 "$sd" -b 4096

: >"$MNT/.k1"
kt setx "$MNT/.k1" 0x800 $UNIT >/dev/null
[ "$(extsize "$MNT/.k1")" = $UNIT ] ||
	skip "this kernel's ext4 keeps no extent size hint (the extalign series is not applied)"
: >"$MNT/.k2"
kt setx "$MNT/.k2" 0x100800 $UNIT >/dev/null
FA=no
(($(xflags "$MNT/.k2") & 0x100000)) && FA=yes
rm -f "$MNT/.k1" "$MNT/.k2"
echo "this kernel keeps FS_XFLAG_FORCEALIGN: $FA"

# The first aligned request after mount may fall back (see 30-*.sh).
: >"$MNT/warm"
kt setx "$MNT/warm" 0x800 $UNIT >/dev/null
xfs_io -c 'pwrite -q 0 64k' -c fsync "$MNT/warm" || die "warm-up write"

# 1. set, get, check: an extent size hint alone.
f=$MNT/hinted
: >"$f"
run 0 "$EXTALIGN" set --extsize 64k "$f"
run 0 "$EXTALIGN" get --json "$f"
expect "get: extsize" "$(pj 'd["files"][0]["extsize"]')" $UNIT
expect "get: forcealign" "$(pj 'd["files"][0]["forcealign"]')" False
expect "the kernel's view" "$(kt getx "$f")" "$HINTED"
xfs_io -d -c 'pwrite -q -b 1m 0 1m' "$f" || die "direct write"
run 0 "$EXTALIGN" check --json "$f"
expect "check: verdict" "$(pj 'd["files"][0]["verdict"]')" aligned
expect "check: unit" "$(pj 'd["files"][0]["unit"]')" $UNIT

# 2. The same with forcealign.
g=$MNT/forced
: >"$g"
if [ $FA = yes ]; then
	run 0 "$EXTALIGN" set --extsize 64k --force "$g"
	run 0 "$EXTALIGN" get --json "$g"
	expect "get --force: extsize" "$(pj 'd["files"][0]["extsize"]')" $UNIT
	expect "get --force: forcealign" "$(pj 'd["files"][0]["forcealign"]')" True
	xfs_io -d -c 'pwrite -q -b 1m 0 1m' "$g" || die "direct write"
	run 0 "$EXTALIGN" check "$g"
	run 0 "$EXTALIGN" check --json "$g"
	expect "check --force: verdict" "$(pj 'd["files"][0]["verdict"]')" aligned
	expect "statx of the forcealign file" "$(kt statx "$g")" \
		"mask=1 attr=1 min=4096 max=$UNIT segments=1"
	expect "a 64 KiB atomic write" "$(kt awrite "$g" $UNIT $UNIT)" "ok $UNIT"
	expect "a 128 KiB atomic write (above the unit)" "$(kt awrite "$g" 0 131072)" "err EINVAL"
else
	run 4 "$EXTALIGN" set --extsize 64k --force "$g"
	has err "does not support forcealign"
	skipped+=("set/get/check/atomic write of a forcealign file")
fi

# 3. devices --probe: the unit a hinted file gets on this filesystem.
cols=NAME,TYPE,EXTSIZE,FORCEALIGN,HW-MAX,ATOMIC,AWU-MIN,AWU-MAX,STATX,STATX-MIN,STATX-MAX,PROBE,REASON
run 0 "$EXTALIGN" devices --probe --json -o "$cols" "$sd"
cp "$WORK/out" "$WORK/probe.json"
fsrow="[r for r in d['devices'][0]['children'] if r['type'] == 'fs' and r['name'] == '$MNT'][0]"
expect "devices: the disk's unit" "$(pj 'd["devices"][0]["hw_max"]')" $UNIT
if [ $FA = yes ]; then
	expect "probe: file" "$(pj "${fsrow}['probe']")" hinted
	expect "probe: its hint" "$(pj "(${fsrow}['extsize'], ${fsrow}['forcealign'])")" "($UNIT, True)"
	expect "probe: statx" "$(pj "(${fsrow}['statx'], ${fsrow}['statx_min'], ${fsrow}['statx_max'])")" \
		"('yes', 4096, $UNIT)"
	expect "probe: the rule agrees" "$(pj "(${fsrow}['atomic'], ${fsrow}['awu_min'], ${fsrow}['awu_max'])")" \
		"('yes', 4096, $UNIT)"
	run 0 "$EXTALIGN" devices --probe "$sd"
	grep -F -- "$MNT" "$WORK/out" | grep -q " 64K .* hinted" ||
		{ cat "$WORK/out"; die "the table does not show 64K for a hinted probe"; }
	run 0 "$EXTALIGN" devices --probe --json -o NAME,TYPE,EXTSIZE,FORCEALIGN,STATX-MAX,AWU-MAX "$g"
	expect "devices of the forcealign file" \
		"$(pj "[(r['extsize'], r['forcealign'], r['statx_max'], r['awu_max']) for r in ${fsrow}['children']]")" \
		"[($UNIT, True, $UNIT, $UNIT)]"
else
	expect "probe: file" "$(pj "${fsrow}['probe']")" plain
	expect "probe: statx of a plain file" "$(pj "(${fsrow}['statx'], ${fsrow}['statx_max'])")" \
		"('yes', 4096)"
	pj "${fsrow}['reason']" | grep -qF "probe: plain file, forcealign not supported by this kernel" ||
		die "the probe's fallback is not reported: $(pj "${fsrow}['reason']")"
	ok "probe: the fallback to a plain file is reported"
	skipped+=("devices --probe reporting a 64 KiB unit")
fi

# 4. extalignd: a rule directory gets FS_XFLAG_EXTSZINHERIT, the kernel
# hands the hint to every file created in it, 200 at once; with forcealign
# a second rule's directory passes forcealign on too (50 more files).
mkdir "$MNT/db"
CONF=$WORK/extalign.conf
printf '[rule db]\ndirectory = %s\nextsize = 64k\ninherit = yes\n' "$MNT/db" >"$CONF"
nfa=0
if [ $FA = yes ]; then
	nfa=50
	mkdir "$MNT/dbfa"
	printf '[rule dbfa]\ndirectory = %s\nextsize = 64k\nforcealign = yes\ninherit = yes\n' \
		"$MNT/dbfa" >>"$CONF"
else
	skipped+=("extalignd with a forcealign rule")
fi
# shellcheck source=../integration/daemon.bash
. "$TOP/tests/integration/daemon.bash"
# kernel/config.fragment has AF_UNIX for the daemon's NOTIFY_SOCKET.
python3 -c 'import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)' ||
	die "no AF_UNIX sockets in this kernel (CONFIG_UNIX)"
start_daemon "$CONF"
# inherits DIR XFLAGS: DIR has the inheritable hint.
inherits() { [ "$(kt getx "$1")" = "xflags=$2 extsize=$UNIT" ]; }
wait_until 10 inherits "$MNT/db" 0x1000 ||
	{ cat "$DLOG"; die "extalignd did not set inheritance on $MNT/db"; }
ok "extalignd set inheritance on the rule directory"
if [ $FA = yes ]; then
	wait_until 10 inherits "$MNT/dbfa" 0x101000 ||
		{ cat "$DLOG"; die "extalignd did not set inheritance with forcealign on $MNT/dbfa"; }
	ok "extalignd set inheritance with forcealign on the forcealign rule's directory"
fi
# writers DIR N: start N processes, each creating and writing a file in
# DIR, half with direct I/O, half buffered with fsync.
pids=()
writers() {
	local i

	for i in $(seq "$2"); do
		if ((i % 2)); then
			xfs_io -f -d -c 'pwrite -q -b 256k 0 256k' "$1/f$i" &
		else
			xfs_io -f -c 'pwrite -q 0 192k' -c fsync "$1/f$i" &
		fi
		pids+=($!)
	done
}
writers "$MNT/db" 200
[ $nfa = 0 ] || writers "$MNT/dbfa" $nfa
for p in "${pids[@]}"; do
	wait "$p" || die "a writer failed"
done
expect "200 files created at once" "$(find "$MNT/db" -type f | wc -l)" 200
expect "all 200 hinted" "$(kt getx "$MNT"/db/f* | sort | uniq -c | sed 's/^ *//')" "200 $HINTED"
run 0 "$EXTALIGN" check --json "$MNT"/db/f*
expect "all 200 aligned" "$(pj 'sorted(set(f["verdict"] for f in d["files"])), len(d["files"])')" \
	"(['aligned'], 200)"
if [ $nfa != 0 ]; then
	expect "$nfa files with forcealign" \
		"$(kt getx "$MNT"/dbfa/f* | sort | uniq -c | sed 's/^ *//')" \
		"$nfa xflags=0x100800 extsize=$UNIT"
	run 0 "$EXTALIGN" check --json "$MNT"/dbfa/f*
	expect "all $nfa aligned" \
		"$(pj 'sorted(set(f["verdict"] for f in d["files"])), len(d["files"])')" \
		"(['aligned'], $nfa)"
	expect "statx of an inherited forcealign file" "$(kt statx "$MNT/dbfa/f1")" \
		"mask=1 attr=1 min=4096 max=$UNIT segments=1"
fi
wait_until 10 counter_at_least files_inherited $((200 + nfa)) ||
	{ cat "$DLOG"; die "extalignd counted $(counter files_inherited) inherited files, want $((200 + nfa))"; }
ok "extalignd counted the $((200 + nfa)) files as inherited"
for c in files_late files_hinted errors unsupported; do
	expect "extalignd counter $c" "$(counter $c)" 0
done
stop_daemon
ok "extalignd stopped on SIGTERM"

# 5. realign: files written before any hint, their 4 KiB blocks
# interleaved with another file's, so that nothing in them sits on a 64 KiB
# unit; realigned, they must be aligned and hold the same data.  Each case
# runs in a subshell, so that a failure of one still lets the other run.
# unaligned FILE: write FILE that way, and its copy to $WORK.
unaligned() {
	local i

	for i in $(seq 0 31); do
		one_cpu xfs_io -f -c "pwrite -q -S $((i + 1)) $((i * 4096)) 4096" -c fsync "$1" >/dev/null ||
			die "write $1"
		one_cpu xfs_io -f -c "pwrite -q $((i * 4096)) 4096" -c fsync "$1.pad" >/dev/null ||
			die "write $1.pad"
	done
	cp "$1" "$WORK/${1##*/}.orig" || die "copy of $1"
	run 1 "$EXTALIGN" check --extsize 64k "$1"
}

# realign_case FILE [--force]
realign_case() {
	local file=$1 force=${2:-} what

	what="realign${2:+ $2}"
	unaligned "$file"
	run 0 "$EXTALIGN" realign --extsize 64k ${force:+"$force"} --state-dir "$WORK/realign" --json "$file"
	expect "$what: outcome" "$(pj 'd["files"][0]["outcome"]')" "done"
	run 0 "$EXTALIGN" check "$file"
	run 0 "$EXTALIGN" get --json "$file"
	expect "$what: extsize" "$(pj 'd["files"][0]["extsize"]')" $UNIT
	expect "$what: forcealign" "$(pj 'd["files"][0]["forcealign"]')" \
		"$([ -n "$force" ] && echo True || echo False)"
	cmp "$file" "$WORK/${file##*/}.orig" || die "$what changed the data of $file"
	ok "$what kept the data"
	if [ -n "$force" ]; then
		expect "realign --force: statx" "$(kt statx "$file")" \
			"mask=1 attr=1 min=4096 max=$UNIT segments=1"
	fi
}

bad=()
(realign_case "$MNT/old") || bad+=("realign")
if [ $FA = yes ]; then
	(realign_case "$MNT/old-force" --force) || bad+=("realign --force")
else
	skipped+=("realign --force")
fi
[ ${#bad[@]} = 0 ] || die "failed: ${bad[*]}"

if [ ${#skipped[@]} -gt 0 ]; then
	parts=$(printf '%s; ' "${skipped[@]}")
	skip "forcealign parts not run, this kernel drops FS_XFLAG_FORCEALIGN: ${parts%; } (the rest passed)"
fi
ok "userspace end to end"
