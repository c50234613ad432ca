#!/bin/bash
# kernel/prepare.sh makes the same commits from the same tarball and
# series on any machine at any time: the fstests results files name a
# kernel by its commit ids (the "-gSHA" of its release), and slices
# recorded on two machines must name the same kernel alike.  A small
# tarball and a one-patch series stand in for linux-source-6.12.
. "$(dirname "$0")/lib.sh"
need_cmd git
need_cmd xz
cd "$WORK" || exit 1

mkdir -p linux-x patches harness
printf 'VERSION = 6\n' >linux-x/Makefile
echo one >linux-x/a.c
touch -d '2025-01-02 03:04:05' linux-x/Makefile linux-x/a.c
tar -cJf linux-x.tar.xz linux-x
git init -q edit
cp linux-x/* edit/
GIT=(git -C edit -c user.name=t -c user.email=t@t.invalid -c commit.gpgsign=false)
"${GIT[@]}" add . && "${GIT[@]}" commit -qm base &&
	echo two >>edit/a.c && "${GIT[@]}" commit -qam "change a.c" &&
	"${GIT[@]}" format-patch -q -1 -o "$WORK/patches" || fail "could not make the patch"
(cd patches && ls ./*.patch | sed 's|^\./||') >patches/series
: >harness/series

prepare() { # KB: prints the base's and HEAD's commit ids
	EXTALIGN_KBUILD=$1 EXTALIGN_KSRC_TARBALL=$WORK/linux-x.tar.xz \
		EXTALIGN_PATCHES=$WORK/patches EXTALIGN_HARNESS_PATCHES=$WORK/harness \
		"$TOP/kernel/prepare.sh" >"$1.out" 2>"$1.err" ||
		{ cat "$1.err"; fail "prepare.sh failed in $1"; }
	[ "$(tail -n 1 "$1.out")" = "$1/src" ] || fail "prepare.sh printed $(tail -n 1 "$1.out"), not $1/src"
	git -C "$1/src" rev-parse extalign-base HEAD
}
first=$(prepare "$WORK/kb1")
# Commit dates taken from the clock would differ from here on.
sleep 1.1
second=$(prepare "$WORK/kb2")
[ "$(git -C kb2/src log -1 --format=%s)" = "change a.c" ] || fail "the patch is not HEAD"
grep -qx two kb2/src/a.c || fail "the patch's change is not in the tree"
[ "$first" = "$second" ] ||
	fail "two trees from one tarball and series have different commits: $(echo $first) and $(echo $second)"
echo "ok: the same tarball and series give the same commits ($(echo "$second" | cut -c1-12 | tr '\n' ' '))"
