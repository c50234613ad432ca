# The power-cut loop of issue 17, shared by tests/integration/realign-powercut.sh
# (XFS on a loop device) and tests/kernel/83-realign-powercut.sh (the
# patched ext4 in the guest).  Source it; the caller defines
#   fail MSG          report and exit non-zero
#   pc_hint FILE      put a 64 KiB extent size hint on the empty FILE
#   pc_remount        unmount and mount $mnt again (log or journal recovery)
# and sets EXTALIGN, CUT (build/tests/tools/realign-cut), WORK (scratch
# space off the filesystem under test) and mnt (its mount point).
#
# Files are realigned by realign-cut, which shuts the filesystem down without
# a log flush (XFS_IOC_GOINGDOWN, the same ioctl as EXT4_IOC_SHUTDOWN: as a
# power cut, nothing more reaches the disk) a random few microseconds after
# a random progress report of the engine.  Then remount, run "extalign
# realign" to clean up and finish, and check every file against its
# checksum and that no leftover is visible.  The state directory is on the
# same filesystem, so its records face the cut too.  Half the runs copy
# with O_DIRECT, half through the page cache; in every other pair of those
# the swaps are made durable as a batch (one record for all the files, one
# directory fsync after the last, as extalign realign does for several
# files), and the loop counts the cuts that left a batch's record behind.

# The set: dense, sparse, tiny, a size off the block, unwritten
# preallocation, and files that already carry the hint (the swap path:
# realign-cut rewrites them although they look aligned).
pc_names=(dense sparse tiny odd prealloc hinted hinted2)
declare -A pc_sum pc_size

# pc_make_set: the set's sources under $WORK/src, and their checksums.
pc_make_set() {
	local src=$WORK/src n

	mkdir -p "$src"
	dd if=/dev/urandom of="$src/dense" bs=64k count=12 status=none
	dd if=/dev/urandom of="$src/sparse" bs=4k count=3 status=none
	dd if=/dev/urandom of="$src/sparse" bs=4k count=2 seek=100 conv=notrunc status=none
	printf 'tiny' >"$src/tiny"
	head -c 200001 /dev/urandom >"$src/odd"
	dd if=/dev/urandom of="$src/hinted" bs=64k count=6 status=none
	dd if=/dev/urandom of="$src/hinted2" bs=4k count=5 status=none
	# prealloc's content (pc_fresh puts it in unwritten preallocation).
	xfs_io -f -c 'pwrite -q -S 0x61 256k 256k' -c 'truncate 1m' "$src/prealloc" >/dev/null
	for n in "${pc_names[@]}"; do
		pc_sum[$n]=$(sha256sum <"$src/$n" | cut -c1-64)
		pc_size[$n]=$(stat -c %s "$src/$n")
	done
	# What sha256sum prints for the intact set, one line a file.
	pc_sums=$(cd "$src" && sha256sum "${pc_names[@]}")
}

# pc_fresh: the set in $mnt/data as it was before any realignment, durable.
# Few processes: the guest's UML kernel pays dearly for each.  The hinted
# files keep their inodes (and hints) from one run to the next: realign
# leaves them hinted whichever way it went, and cp writes into them anew.
pc_fresh() {
	local data=$mnt/data n

	mkdir -p "$data"
	rm -f "$data/dense" "$data/sparse" "$data/tiny" "$data/odd" "$data/prealloc"
	cp --sparse=always "$WORK/src/dense" "$WORK/src/sparse" "$WORK/src/tiny" \
		"$WORK/src/odd" "$data/"
	xfs_io -f -c 'falloc 0 1m' -c 'pwrite -q -S 0x61 256k 256k' "$data/prealloc" >/dev/null
	for n in hinted hinted2; do
		[ -f "$data/$n" ] && continue
		: >"$data/$n"
		pc_hint "$data/$n"
	done
	cp "$WORK/src/hinted" "$WORK/src/hinted2" "$data/"
	# This filesystem only: in the guest, / is the host's (hostfs).
	sync -f "$data"
}

# pc_glob ARRAY PATTERN...: the names PATTERN (quoted by the caller) matches, dot files too, none
# when nothing does (the shell's own options left as they were).
pc_glob() {
	local -n into=$1
	local ng=-u dg=-u

	shift
	shopt -q nullglob && ng=-s
	shopt -q dotglob && dg=-s
	shopt -s nullglob dotglob
	# shellcheck disable=SC2206 # the patterns are meant to expand
	into=($@)
	shopt $ng nullglob
	shopt $dg dotglob
}

# pc_run CUTS: runs, each cut at a random point, until CUTS of them were
# cut (a run may end before its cut point); prints the counts and fails on
# a lost byte, a leftover, or too many runs that ended uncut.
pc_run() {
	local cuts=$1 data=$mnt/data state=$mnt/state
	local lost=0 cut=0 uncut=0 in_batch=0 max_events=60 i at delay out ev rc n sums
	local -a left
	local t0=$SECONDS

	i=0
	while ((cut < cuts)); do
		i=$((i + 1))
		((uncut <= cuts / 4)) || fail "$uncut of $i runs ended before their cut point"
		# Odd runs start from the set as first written (the rename path
		# for the files without the hint); even runs from what the
		# cleanup run left, realigned files that realign-cut rewrites
		# again (it forces), which saves half the set-ups.
		((i % 2 == 0)) || pc_fresh
		at=$((RANDOM % max_events + 1))
		delay=$((RANDOM % 3000))
		# Half the runs through the page cache, half with O_DIRECT; half batched.
		out=$(REALIGN_CUT_BUFFERED=$((i / 2 % 2)) REALIGN_CUT_BATCH=$((i / 4 % 2)) \
			"$CUT" "$at" "$delay" "$state" "$mnt" \
			"${pc_names[@]/#/$data/}" 2>/dev/null) ||
			fail "cut $i: the helper failed"
		case $out in
		"cut at"*) cut=$((cut + 1)) ;;
		"no cut ("*)
			uncut=$((uncut + 1))
			# Fewer reports than the random pick: aim lower next time.
			ev=${out#no cut (}
			ev=${ev%% *}
			[ "$ev" -gt 0 ] && max_events=$ev
			;;
		esac
		pc_remount
		# A batch's shared record that the cut left: its leftovers are
		# found by directory and random part (realign-batch.c).
		pc_glob left "$state/.extalign-realign.batch.*"
		[ ${#left[@]} = 0 ] || in_batch=$((in_batch + 1))
		rc=0
		"$EXTALIGN" realign --state-dir "$state" --extsize 64k -q "$data" >"$WORK/out" 2>&1 ||
			rc=$?
		[ "$rc" = 0 ] ||
			{ cat "$WORK/out" >&2; fail "cut $i (event $at +${delay}us): cleanup run exit $rc"; }
		# One sha256sum for the whole set; file by file only when it differs.
		sums=$(cd "$data" 2>/dev/null && sha256sum "${pc_names[@]}" 2>/dev/null)
		if [ "$sums" != "$pc_sums" ]; then
			for n in "${pc_names[@]}"; do
				if [ ! -f "$data/$n" ] ||
				   [ "$(sha256sum <"$data/$n" | cut -c1-64)" != "${pc_sum[$n]}" ]; then
					echo "cut $i (event $at +${delay}us): $n lost or changed" >&2
					lost=$((lost + pc_size[$n]))
				fi
			done
		fi
		# Leftovers, and any other stray name: no process for the globs.
		pc_glob left "$state/.extalign-realign.*"
		[ ${#left[@]} = 0 ] ||
			fail "cut $i (event $at +${delay}us): records left after cleanup: ${left[*]}"
		pc_glob left "$data/*"
		[ ${#left[@]} = ${#pc_names[@]} ] ||
			fail "cut $i (event $at +${delay}us): leftovers or strays visible after cleanup: ${left[*]##*/}"
		((i % 50)) || echo "  $i cuts, $((SECONDS - t0))s"
	done
	echo "power cuts: $cut cut points ($uncut runs ended before their cut," \
		"$in_batch inside a batch), bytes lost: $lost, $((SECONDS - t0))s"
	[ "$lost" = 0 ] || fail "$lost bytes lost"
	# A quarter of the runs are batched, cut at a random point of seven files.
	((cuts < 40 || in_batch > 0)) || fail "no cut of $cuts fell inside a batch"
}
