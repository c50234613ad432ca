#!/bin/bash
# Build and test the extalign e2fsprogs series.
#
# Usage: e2fsprogs/check.sh [--full]
#
#   1. e2fsprogs/build.sh: the 1.47.4 tree with e2fsprogs/patches applied,
#      built in $EXTALIGN_E2BUILD/build (default /var/tmp/extalign-e2fsprogs)
#   2. the series' own tests (e2fsprogs/tests.list), run by e2fsprogs'
#      harness (tests/test_one) on the programs just built
#   3. $EXTALIGN_E2BUILD/bin: the patched e2fsck (and fsck.ext4),
#      debugfs, resize2fs and dumpe2fs, which the kernel guests put first
#      in their PATH
#   4. with --full, e2fsprogs' whole "make check", and the same on the
#      unpatched tree (built once in $EXTALIGN_E2BUILD/base): a test that
#      passes unpatched and fails patched is a regression; and the tree
#      built after every patch of the series (each patch builds alone)
#
# Prints PASS or FAIL per test and exits non-zero if any failed.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
export EXTALIGN_E2BUILD=$E2B
FULL=0
case ${1:-} in
--full) FULL=1 ;;
-h | --help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
'') ;;
*) echo "check.sh: unknown argument $1" >&2; exit 2 ;;
esac

failed=0
start=$(date +%s)
if ! BUILD=$("$HERE/build.sh" | tail -n 1) || [ ! -x "$BUILD/e2fsck/e2fsck" ]; then
	echo "FAIL e2fsprogs/build"
	exit 1
fi
echo "PASS e2fsprogs/build ($(git -C "$E2B/src" rev-list --count extalign-base..HEAD) patches, $(($(date +%s) - start)) s)"

# The programs, under the names the guests call them by.
mkdir -p "$E2B/bin"
# mke2fs and tune2fs stay Debian's: the series does not change them, and
# the tests' filesystems keep the features Debian's mkfs gives.
rm -f "$E2B/bin/mke2fs" "$E2B/bin/mkfs.ext4" "$E2B/bin/tune2fs"
for p in e2fsck/e2fsck debugfs/debugfs resize/resize2fs misc/dumpe2fs; do
	ln -sfn "$BUILD/$p" "$E2B/bin/$(basename "$p")"
done
ln -sfn "$BUILD/e2fsck/e2fsck" "$E2B/bin/fsck.ext4"

# run_tests BUILD NAME...: e2fsprogs' harness on the named tests.
run_tests() {
	local build=$1 t
	shift
	make -s -C "$build/tests" test_one test_script >/dev/null 2>&1 || return 1
	for t in "$@"; do
		(cd "$build/tests" && ./test_one "$E2B/src/tests/$t") >/dev/null 2>&1
		if [ -f "$build/tests/$t.ok" ]; then
			echo "PASS e2fsprogs/$t"
		else
			echo "FAIL e2fsprogs/$t"
			sed 's/^/    /' "$build/tests/$t.failed" 2>/dev/null | head -n 40
			failed=1
		fi
	done
}
mapfile -t TESTS < <(grep -v '^[[:space:]]*\(#\|$\)' "$HERE/tests.list")
run_tests "$BUILD" "${TESTS[@]}"

if [ "$FULL" = 1 ]; then
	# Each tree's "make check", and the tests that failed in each.
	full_check() { # BUILD LOG
		make -C "$1" -j"$(nproc)" check >"$2" 2>&1
		grep -E '^[a-z0-9_]+: .*: failed$' "$2" | sed 's/:.*//' | sort
	}
	base=$E2B/base/build
	if [ ! -x "$base/e2fsck/e2fsck" ]; then
		mkdir -p "$E2B/empty-series" && : >"$E2B/empty-series/series"
		EXTALIGN_E2BUILD=$E2B/base EXTALIGN_E2PATCHES=$E2B/empty-series \
			"$HERE/build.sh" >/dev/null || { echo "FAIL e2fsprogs/base-build"; exit 1; }
	fi
	full_check "$base" "$E2B/check-base.log" >"$E2B/failed-base"
	full_check "$BUILD" "$E2B/check.log" >"$E2B/failed-series"
	# "N tests succeeded	M tests failed", from lib/ and from tests/.
	summary() { grep -E 'tests succeeded' "$1" | tr '\t' ' ' | paste -sd';'; }
	echo "make check, unpatched: $(summary "$E2B/check-base.log"); failed: $(paste -sd' ' "$E2B/failed-base")"
	echo "make check, series:    $(summary "$E2B/check.log"); failed: $(paste -sd' ' "$E2B/failed-series")"
	new=$(comm -13 "$E2B/failed-base" "$E2B/failed-series")
	if [ -n "$new" ]; then
		echo "FAIL e2fsprogs/make-check: failing only with the series: $new"
		failed=1
	else
		echo "PASS e2fsprogs/make-check (no test fails that passes unpatched)"
	fi

	# Each patch builds alone: a clone of the tree at every commit.
	bis=$E2B/bisect
	rm -rf "$bis"
	git clone -q "$E2B/src" "$bis/src"
	for c in $(git -C "$E2B/src" rev-list --reverse extalign-base..HEAD); do
		git -C "$bis/src" checkout -q "$c"
		rm -rf "$bis/build" && mkdir -p "$bis/build"
		if (cd "$bis/build" && "$bis/src/configure" --disable-nls --enable-libuuid \
			--enable-libblkid >configure.log 2>&1 && make -j"$(nproc)" -s >make.log 2>&1); then
			echo "PASS e2fsprogs/bisect $(git -C "$bis/src" log -1 --format=%s)"
		else
			echo "FAIL e2fsprogs/bisect $(git -C "$bis/src" log -1 --format=%s)"
			failed=1
		fi
	done
	rm -rf "$bis"
fi
echo "time e2fsprogs: $(($(date +%s) - start)) s"
exit $failed
