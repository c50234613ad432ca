#!/bin/bash
# The per-file system calls of the hot paths, counted with strace on a real
# XFS: check starts without the libraries only devices and status need,
# stats a file only when its size matters, never statfs's it, and writes its table
# while it works; set -R stats each file once; apply reads a file's
# attributes twice (before, and back after the change), not three times;
# realign syncs once per file (the copy) and per batch its record and each
# directory;
# extalignd handles a storm of new files in one directory at about as many
# system calls per file as a bare fanotify hinter (daemon-bench reader).
# Counts, not times: tests/bench/compare.sh measures the speed.
. "$(dirname "$0")/lib.sh"
need_cmd strace
need_cmd xfs_io
mnt=$(mkfs_mount xfs 300)
N=200

# count FILE PATTERN: lines of an strace log that match PATTERN
count() { grep -cE "$2" "$1" || true; }
at_most() { # what got limit
	[ "$2" -le "$3" ] || fail "$1: $2, expected at most $3"
}

mkdir "$mnt/c"
for ((i = 0; i < N; i++)); do
	xfs_io -f -c "pwrite -q 0 8k" "$mnt/c/f$i" >/dev/null
done

# check: no stat for a file its directory listed as regular whose size
# cannot change the verdict (one extent each here), no statfs, and the
# first rows leave before the last file is opened (the table is not held
# until the end).
strace -o "$WORK/check.st" -e trace=%%stat,%%statfs,openat,write \
	"$EXTALIGN" check --extsize 4k "$mnt"/c/f* >"$WORK/out" 2>"$WORK/err" || true
[ "$(grep -c ' aligned$' "$WORK/out")" = "$N" ] || fail "check did not report $N aligned files"
stats=$(count "$WORK/check.st" '^(newfstatat|fstat|statx|lstat|stat)\(')
at_most "check: stats for $N files" "$stats" 20
# Its start loads no libmount or libblkid (and no libselinux behind them):
# devices and status open those when they need them.
libs=$(count "$WORK/check.st" '^openat\(.*lib(mount|blkid|selinux)\.so')
at_most "check: libmount, libblkid and libselinux loaded" "$libs" 0
statfs=$(count "$WORK/check.st" '^f?statfs\(')
at_most "check: statfs calls for $N files" "$statfs" 2
first_write=$(grep -n '^write(1,' "$WORK/check.st" | head -1 | cut -d: -f1)
last_open=$(grep -n "^openat(.*\"f$((N - 1))\"" "$WORK/check.st" | tail -1 | cut -d: -f1)
[ -n "$first_write" ] && [ -n "$last_open" ] || fail "check: no write or no open in the trace"
[ "$first_write" -lt "$last_open" ] ||
	fail "check: the first row was written after the last file was opened (not streamed)"

# The streamed text table looks the way the libsmartcols one did.
expect_exit 0 "$EXTALIGN" check --extsize 4k "$mnt/c/f1" "$mnt/c/f10"
awk 'NR == 1 && $1 == "PATH" && $NF == "VERDICT" { ok++ }
     NR > 1 && $2 == "4K" && $NF == "aligned" { ok++ }
     END { exit ok == 3 ? 0 : 1 }' "$WORK/out" || fail "check table: $(cat "$WORK/out")"
# Columns line up: every row as long as the others up to the verdict.
[ "$(awk 'NR == 1 || /^\// { print index($0, $NF) }' "$WORK/out" | sort -u | wc -l)" = 1 ] ||
	fail "check table columns do not line up: $(cat "$WORK/out")"
# A control character in a name is shown escaped, never sent to the terminal.
nl=$'\n'
xfs_io -f -c "pwrite -q 0 4k" "$mnt/c/bad${nl}name" >/dev/null
expect_exit 0 "$EXTALIGN" check --extsize 4k "$mnt/c/bad${nl}name"
expect_in out 'bad\x0aname'
[ "$(wc -l <"$WORK/out")" = 2 ] || fail "a newline in a name split the row"

# set -R: one stat per file.
mkdir "$mnt/t"
(cd "$mnt/t" && touch $(seq -f 'e%g' 1 "$N"))
strace -o "$WORK/set.st" -e trace=%%stat "$EXTALIGN" set -R --extsize 64k "$mnt/t" >/dev/null
stats=$(count "$WORK/set.st" '^(newfstatat|fstat|statx|lstat|stat)\(')
at_most "set -R: stats for $N files" "$stats" $((N + 20))
[ "$(xfs_extsize "$mnt/t/e$N")" = 65536 ] || fail "set -R did not hint e$N"

# apply: FS_IOC_FSGETXATTR twice per changed file.
printf '[rule t]\ndirectory = %s\nextsize = 128k\n' "$mnt/t" >"$WORK/apply.conf"
strace -o "$WORK/apply.st" -e trace=ioctl "$EXTALIGN" apply --config "$WORK/apply.conf" \
	"$mnt/t" >/dev/null
gets=$(count "$WORK/apply.st" 'FS_IOC_FSGETXATTR')
at_most "apply: FSGETXATTR for $N files" "$gets" $((2 * (N + 1)))
[ "$(xfs_extsize "$mnt/t/e$N")" = 131072 ] || fail "apply did not hint e$N"
# realign of many files: the copy's fsync per file; per batch, the shared
# record's two (created, then one per further directory) and each
# directory's one (before batches, the record's two and the directory's
# were per file: 61 for these 20).
mkdir "$mnt/r"
for ((i = 0; i < 20; i++)); do
	xfs_io -f -c "pwrite -q 0 192k" "$mnt/r/f$i" >/dev/null
done
strace -f -o "$WORK/realign.st" -e trace=fsync,fdatasync "$EXTALIGN" realign -q \
	--state-dir "$WORK/rstate" --extsize 64k "$mnt/r" >"$WORK/out" 2>&1 ||
	fail "realign failed: $(cat "$WORK/out")"
grep -q "realigned 20 of 20" "$WORK/out" || fail "realign: $(cat "$WORK/out")"
syncs=$(count "$WORK/realign.st" '(fsync|fdatasync)\(')
# (a batch is flushed after a second too: a slow machine may need a few)
at_most "realign: fsyncs for 20 files" "$syncs" $((20 + 3 * 4))

# extalignd: per new file the name opened O_PATH, stat, reopened, its
# attributes read, the hint set, stat again (data raced in?), two closes;
# the directory's handle, path and containment once per directory,
# the read-back once per filesystem.  Stopped while the files are made, so
# that their events come in a few reads, the way a storm does.
mkdir -p "$mnt/ev/a/b"
printf '[rule ev]\ndirectory = %s\nextsize = 64k\ninherit = no\n' "$mnt/ev" >"$WORK/d.conf"
"$EXTALIGND" --foreground --config "$WORK/d.conf" --state-dir "$WORK/run" \
	--persistent-dir "$WORK/lib" --watch fanotify --log-target stderr 2>"$WORK/d.log" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; cleanup' EXIT
for ((i = 0; i < 100; i++)); do
	grep -qs '^phase	running' "$WORK/run/state" && break
	sleep 0.05
done
grep -qs '^phase	running' "$WORK/run/state" || fail "extalignd did not start: $(cat "$WORK/d.log")"
strace -o "$WORK/d.st" -p "$dpid" 2>/dev/null &
spid=$!
sleep 0.5
kill -STOP "$dpid"
(cd "$mnt/ev/a/b" && touch $(seq -f 's%g' 1 "$N"))
kill -CONT "$dpid"
for ((i = 0; i < 200; i++)); do
	[ "$(xfs_extsize "$mnt/ev/a/b/s$N")" = 65536 ] && break
	sleep 0.05
done
[ "$(xfs_extsize "$mnt/ev/a/b/s$N")" = 65536 ] || fail "extalignd did not hint s$N"
sleep 0.2
kill "$spid"
wait "$spid" 2>/dev/null || true
calls=$(grep -cE '^[a-z_0-9]+\(' "$WORK/d.st" || true)
echo "extalignd: $calls system calls for $N new files"
at_most "extalignd: system calls for $N new files" "$calls" $((10 * N + 60))
kill "$dpid"
wait "$dpid" || fail "extalignd exited $?"
trap cleanup EXIT
echo "PASS"
