#!/bin/bash
# Benchmarks of the CLI against the tools a user has today, run in this same
# script on the same loop-mounted XFS, printed as ratios (lower is better for
# extalign).  Not a test: nothing here passes or fails on speed.
#   tree:  extalign set -R over N empty files  vs  find | xargs xfs_io extsize
#   check: extalign check on a file of E extents  vs  xfs_io -c fiemap
#   rss:   peak memory of the two on the same file (GNU time)
# Hardware atomic writes need our kernel's UML guest: tests/bench/atomic.sh.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
X=${EXTALIGN:-$TOP/build/extalign}
N=${BENCH_FILES:-5000}
E=${BENCH_EXTENTS:-20000}
[ "$(id -u)" = 0 ] || { echo "bench: needs root for a loop-mounted XFS" >&2; exit 77; }
W=$(mktemp -d /tmp/extalign-bench.XXXXXX)
trap 'umount "$W/m" 2>/dev/null; losetup -d "$loop" 2>/dev/null; rm -rf "$W"' EXIT
truncate -s 2G "$W/img"
mkfs.xfs -q "$W/img"
loop=$(losetup -f --show "$W/img")
mkdir "$W/m"
mount "$loop" "$W/m"

now() { date +%s.%N; }
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.3f}')" "$1" "$2"; }
elapsed() { # CMD...: seconds
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>&1 || true
	t1=$(now)
	python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$t0" "$t1"
}
mktree() {
	mkdir -p "$1"
	(cd "$1" && for ((d = 0; d < N / 100; d++)); do
		mkdir "d$d"
		(cd "d$d" && touch $(seq -f 'f%g' 1 100))
	done)
}

mktree "$W/m/a"
mktree "$W/m/b"
sync
base=$(elapsed sh -c "find '$W/m/a' -type f -print0 | xargs -0 -n 1 xfs_io -c 'extsize 64k'")
ours=$(elapsed "$X" set -R --extsize 64k "$W/m/b")
echo "tree  files=$N  xfs_io=${base}s  extalign=${ours}s  ratio=$(ratio "$ours" "$base")"

# A file of E extents: write every other 4k block.
xfs_io -f -c "pwrite -q 0 4k" "$W/m/frag" >/dev/null
python3 - "$W/m/frag" "$E" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(int(sys.argv[2])):
    os.pwrite(fd, b"x" * 4096, i * 8192)
os.fsync(fd)
PY
base=$(elapsed xfs_io -c fiemap "$W/m/frag")
ours=$(elapsed "$X" check --extsize 4k "$W/m/frag")
echo "check extents=$E  xfs_io=${base}s  extalign=${ours}s  ratio=$(ratio "$ours" "$base")"

if [ -x /usr/bin/time ]; then
	rb=$(/usr/bin/time -f %M xfs_io -c fiemap "$W/m/frag" 2>&1 >/dev/null | tail -1)
	ro=$(/usr/bin/time -f %M "$X" check --extsize 4k "$W/m/frag" 2>&1 >/dev/null | tail -1)
	echo "rss   extents=$E  xfs_io=${rb}KiB  extalign=${ro}KiB  ratio=$(ratio "$ro" "$rb")"
else
	echo "rss   skipped: /usr/bin/time (package time) is not installed"
fi
