#!/bin/bash
# Get a Linux 6.12 tree for the extalign kernel series and apply the series.
#
# The tree lives in $EXTALIGN_KBUILD/src (default /var/tmp/extalign-kernel),
# outside the checkout, and is kept between runs.  It is a git repository
# whose first commit (tag extalign-base) is the pristine linux-source-6.12
# tarball; the series is applied on top with "git am" (no fuzz).  Every
# commit's dates come from what it is made of (the tarball's Makefile, the
# patch's Date:), so the same tarball and series give the same commit ids,
# and the same "-gSHA" in the kernel's release, on any machine: results
# recorded on two machines name the same kernel alike.  If the
# series has not changed since the last run nothing is done; otherwise the
# tree is reset to the base and the series re-applied.
#
# Prints the tree path on the last line of stdout.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
TARBALL=${EXTALIGN_KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
# EXTALIGN_PATCHES: another patches directory (its series file), e.g. an
# empty one for the unpatched baseline kernel/fstests.sh --base builds.
PATCHES=${EXTALIGN_PATCHES:-$HERE/patches}
# Test harness patches outside ext4 (kernel/fstests/harness-patches: dm
# log-writes passing atomic write limits, for the crash test), applied on
# top of the series; not part of it.
HARNESS=${EXTALIGN_HARNESS_PATCHES:-$HERE/fstests/harness-patches}
SRC=$KB/src
GIT=(git -C "$SRC" -c user.name="extalign developers"
     -c user.email=dev@extalign.invalid -c commit.gpgsign=false
     -c core.autocrlf=false)

log() { echo "prepare: $*" >&2; }

mkdir -p "$KB"

if [ ! -f "$TARBALL" ]; then
	log "$TARBALL missing, installing the kernel build dependencies"
	"$TOP/scripts/install-deps.sh" kernel
	[ -f "$TARBALL" ] || { log "still no $TARBALL"; exit 1; }
fi

if ! "${GIT[@]}" rev-parse -q --verify extalign-base >/dev/null 2>&1; then
	log "unpacking $TARBALL into $SRC"
	rm -rf "$SRC" "$KB/unpack"
	mkdir -p "$KB/unpack"
	tar -xJf "$TARBALL" -C "$KB/unpack"
	top=$(find "$KB/unpack" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	mv "$top" "$SRC"
	rm -rf "$KB/unpack"
	"${GIT[@]}" init -q
	# The tarball's .gitignore ignores files at the top level: force them.
	"${GIT[@]}" add -f .
	when="@$(stat -c %Y "$SRC/Makefile") +0000"
	GIT_AUTHOR_DATE=$when GIT_COMMITTER_DATE=$when \
		"${GIT[@]}" commit -q -m "linux-source-6.12 as shipped by Debian"
	"${GIT[@]}" tag extalign-base
fi

# series_list [DIR]: the patches DIR/series names (default the
# series), in order.
series_list() {
	local dir=${1:-$PATCHES}
	[ -f "$dir/series" ] || return 0
	grep -v '^[[:space:]]*\(#\|$\)' "$dir/series" || true
}

# A stamp of the series and the harness patches: the series files and
# every patch they name.
series_stamp() {
	local d p
	for d in "$PATCHES" "$HARNESS"; do
		cat "$d/series" 2>/dev/null || true
		series_list "$d" | while read -r p; do cat "$d/$p"; done
	done | sha256sum | cut -d' ' -f1
}

want=$(series_stamp)
stamp_file=$SRC/.git/extalign-series
have=$(cat "$stamp_file" 2>/dev/null || true)
head=$("${GIT[@]}" rev-parse HEAD)
applied_head=$(cat "$SRC/.git/extalign-head" 2>/dev/null || true)

if [ "$want" = "$have" ] && [ "$head" = "$applied_head" ] &&
   [ -z "$("${GIT[@]}" status --porcelain --untracked-files=no)" ]; then
	log "series already applied ($("${GIT[@]}" rev-list --count extalign-base..HEAD) patches)"
	echo "$SRC"
	exit 0
fi

# Re-applying the series gives every file it touches a new mtime, and the
# next build recompiles all that includes them (0006 touches a uapi
# header most of the kernel includes).  Remember the mtimes of the files
# the applied series touched, to put back those whose content the new
# series leaves as it was.
mtimes=$KB/.prepare-mtimes
: >"$mtimes"
if [ -n "$applied_head" ] &&
   "${GIT[@]}" cat-file -e "$applied_head^{commit}" 2>/dev/null; then
	"${GIT[@]}" diff --name-only extalign-base "$applied_head" |
		while read -r f; do
			[ -f "$SRC/$f" ] && printf '%s %s\n' \
				"$(stat -c %.9Y "$SRC/$f")" "$f"
		done >"$mtimes"
fi

log "applying the series on the base"
"${GIT[@]}" am --abort >/dev/null 2>&1 || true
"${GIT[@]}" checkout -q --detach extalign-base 2>/dev/null ||
	"${GIT[@]}" reset -q --hard extalign-base
"${GIT[@]}" reset -q --hard extalign-base
"${GIT[@]}" branch -f extalign extalign-base
"${GIT[@]}" checkout -q extalign
rm -f "$stamp_file"
for d in "$PATCHES" "$HARNESS"; do
	for p in $(series_list "$d"); do
		log "  $p"
		if ! "${GIT[@]}" am -q --whitespace=error-all \
			--committer-date-is-author-date "$d/$p" >&2; then
			"${GIT[@]}" am --abort >/dev/null 2>&1 || true
			log "patch $p does not apply cleanly"
			exit 1
		fi
	done
done
new_head=$("${GIT[@]}" rev-parse HEAD)
kept=0
while read -r when f; do
	if [ "$("${GIT[@]}" rev-parse -q --verify "$applied_head:$f")" = \
	     "$("${GIT[@]}" rev-parse -q --verify "$new_head:$f" 2>/dev/null)" ]; then
		touch -m -d "@$when" "$SRC/$f" && kept=$((kept + 1))
	fi
done <"$mtimes"
log "$kept unchanged files keep their mtimes"
echo "$new_head" >"$SRC/.git/extalign-head"
echo "$want" >"$stamp_file"
echo "$SRC"
