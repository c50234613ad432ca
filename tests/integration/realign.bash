# Shared by the tests/integration/realign-*.sh tests (sourced after lib.sh):
# "extalign realign" with the test's own state directory, and what the tests
# ask of it.  Each test makes its filesystem on $mnt itself (sizes and mkfs
# options differ).
need_cmd xfs_io
need_cmd python3
STATE=$WORK/state
R=("$EXTALIGN" realign --state-dir "$STATE")
MiB=1048576

# leftovers: leftover names under $mnt and records in $STATE.
leftovers() { find "$mnt" "$STATE" -name '.extalign-realign.*' 2>/dev/null | wc -l; }

# json KEY: KEY of the first file in the JSON output in $WORK/out.
json() {
	python3 -c 'import json,sys; f = json.load(open(sys.argv[1]))["files"][0]; print(f[sys.argv[2]])' \
		"$WORK/out" "$1"
}

# in_copy PID DIR [blocks]: wait until PID's unnamed copy in DIR (its
# O_TMPFILE, "DIR/#INO" in /proc) has a size, i.e. realign holds the lease
# and copies; with "blocks", until data has reached it.
in_copy() {
	local i fd fmt=%s

	[ "${3:-}" = blocks ] && fmt=%b
	for i in $(seq 600); do
		for fd in /proc/$1/fd/*; do
			[[ $(readlink "$fd" 2>/dev/null) == "$2/#"* ]] || continue
			[ "$(stat -L -c "$fmt" "$fd" 2>/dev/null || echo 0)" -gt 0 ] && return 0
		done
		sleep 0.05
	done
	fail "realign never started copying"
}
