#!/bin/bash
# A create storm faster than the daemon hints does not overflow the kernel's
# event queue while the daemon runs: it reads the queue between small
# batches and keeps the records itself (daemon/fan-backlog.c).  The queue is
# made small (4096) and four touch processes create 40,000 files, faster
# than one daemon hints them: before the backlog the queue overflowed (2 or
# 3 times a run here); now every file is hinted from its event, no rescan.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

need_fanotify_queue

N=40000
daemon_xfs ev
conf_rule ev 128k inherit=no >"$CONF"

start_daemon_queue "${BACKLOG_Q:-4096}" "$CONF"

mkdir "$M/ev/storm"
# Four creators at once, no fork per file: together they create files
# several times faster than one daemon hints them.
pids=()
for k in 0 1 2 3; do
	(cd "$M/ev/storm" && touch $(seq -f 'f.%.0f' $((k * N / 4 + 1)) $(((k + 1) * N / 4)))) &
	pids+=($!)
done
wait "${pids[@]}"
wait_until 60 counter_at_least files_hinted "$N" ||
	fail "$(counter files_hinted) of $N files hinted after 60 s (overflows $(counter overflows))"
[ "$(counter overflows)" = 0 ] ||
	fail "the queue overflowed $(counter overflows) times: the records were left in the kernel"
[ "$(counter rescans)" = 0 ] || fail "$(counter rescans) rescans without an overflow"
# The counter says every event was hinted; a sample says the hints are there.
missing=0
for i in $(seq 1 500 "$N"); do
	extsize_is "$M/ev/storm/f.$i" 131072 || missing=$((missing + 1))
done
[ "$missing" = 0 ] || fail "$missing of $(((N + 499) / 500)) sampled files without the hint"
# What the daemon held at once is reported, within the bound.
peak=$(counter backlog_peak_bytes)
[ "$peak" -gt 0 ] && [ "$peak" -le $((32 << 20)) ] ||
	fail "backlog peak $peak bytes: not reported, or over the 32 MiB bound"
"$EXTALIGN" status --state-dir "$RUNDIR" | grep -q 'read ahead at most [0-9.]* of 32 MiB' ||
	fail "extalign status does not show the backlog peak"
echo "$N files hinted, overflows $(counter overflows), rescans $(counter rescans), backlog peak $peak bytes"
stop_daemon
echo ok
