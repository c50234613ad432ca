#!/bin/bash
# Get an e2fsprogs 1.47.4 tree and apply the extalign series to it.
#
# The tree lives in $EXTALIGN_E2BUILD/src (default
# /var/tmp/extalign-e2fsprogs), outside the checkout.  It is a git
# repository whose first commit (tag extalign-base) is the snapshot in
# ../shared/tools; e2fsprogs/patches/series is applied on top with
# "git am".  Nothing is done when the series has not changed since the
# last run; otherwise the tree is reset to the base and the series applied
# again.  The commits take their dates from the snapshot's version.h and
# the patches' Date: lines, as kernel/prepare.sh's do: the same snapshot
# and series give the same commit ids on any machine.  Prints the tree's
# path on the last line of stdout.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
TARBALL=${EXTALIGN_E2SRC_TARBALL:-$TOP/../shared/tools/e2fsprogs-1.47.4.tar.xz}
# EXTALIGN_E2PATCHES: another patches directory, e.g. an empty one for
# the unpatched tools that the "before" half of a test runs.
PATCHES=${EXTALIGN_E2PATCHES:-$HERE/patches}
SRC=$E2B/src
GIT=(git -C "$SRC" -c user.name="extalign developers"
     -c user.email=dev@extalign.invalid -c commit.gpgsign=false
     -c core.autocrlf=false)

log() { echo "prepare: $*" >&2; }

[ -f "$TARBALL" ] || { log "$TARBALL missing (the shared tools snapshot)"; exit 1; }
mkdir -p "$E2B"

if ! "${GIT[@]}" rev-parse -q --verify extalign-base >/dev/null 2>&1; then
	log "unpacking $TARBALL into $SRC"
	rm -rf "$SRC" "$E2B/unpack"
	mkdir -p "$E2B/unpack"
	tar -xJf "$TARBALL" -C "$E2B/unpack"
	mv "$(find "$E2B/unpack" -mindepth 1 -maxdepth 1 -type d | head -n 1)" "$SRC"
	rm -rf "$E2B/unpack"
	"${GIT[@]}" init -q
	"${GIT[@]}" add -f .
	when="@$(stat -c %Y "$SRC/version.h") +0000"
	GIT_AUTHOR_DATE=$when GIT_COMMITTER_DATE=$when \
		"${GIT[@]}" commit -q -m "e2fsprogs 1.47.4 as in shared/tools"
	"${GIT[@]}" tag extalign-base
fi

series() { grep -v '^[[:space:]]*\(#\|$\)' "$PATCHES/series" 2>/dev/null || true; }

want=$( (cat "$PATCHES/series" 2>/dev/null || true
	 series | while read -r p; do cat "$PATCHES/$p"; done) |
	sha256sum | cut -d' ' -f1)
stamp=$SRC/.git/extalign-series
# Work in progress in the tree is never thrown away: it is committed and
# written to e2fsprogs/patches first (README.md), or discarded by hand.
if [ -n "$("${GIT[@]}" status --porcelain)" ]; then
	log "$SRC has changes not in a commit; commit them and write the patches"
	log "(e2fsprogs/README.md), or discard them with git -C $SRC checkout -f ."
	exit 1
fi
if [ "$want" = "$(cat "$stamp" 2>/dev/null || true)" ] &&
   [ "$("${GIT[@]}" rev-parse HEAD)" = "$(cat "$SRC/.git/extalign-head" 2>/dev/null || true)" ]; then
	log "series already applied ($("${GIT[@]}" rev-list --count extalign-base..HEAD) patches)"
	echo "$SRC"
	exit 0
fi

log "applying the series on the base"
"${GIT[@]}" am --abort >/dev/null 2>&1 || true
"${GIT[@]}" checkout -q -f -B extalign extalign-base
"${GIT[@]}" clean -q -fdx
rm -f "$stamp"
for p in $(series); do
	log "  $p"
	if ! "${GIT[@]}" am -q --whitespace=error-all \
		--committer-date-is-author-date "$PATCHES/$p" >&2; then
		"${GIT[@]}" am --abort >/dev/null 2>&1 || true
		log "patch $p does not apply cleanly"
		exit 1
	fi
done
"${GIT[@]}" rev-parse HEAD >"$SRC/.git/extalign-head"
echo "$want" >"$stamp"
echo "$SRC"
