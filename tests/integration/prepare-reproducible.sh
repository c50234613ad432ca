#!/bin/bash
# kernel/prepare.sh and e2fsprogs/prepare.sh make the same commits from
# the same tarball and series on any machine at any time: the fstests
# results files name a kernel by its commit ids (the "-gSHA" of its
# release), and slices recorded on two machines must name the same kernel
# alike.  A small tarball and a one-patch series stand in for
# linux-source-6.12 and e2fsprogs 1.47.4.
. "$(dirname "$0")/lib.sh"
need_cmd git
need_cmd xz
cd "$WORK" || exit 1

mkdir -p src-x patches
printf 'VERSION = 6\n' >src-x/Makefile
echo '#define E2FSPROGS_VERSION "1"' >src-x/version.h
echo one >src-x/a.c
touch -d '2025-01-02 03:04:05' src-x/*
tar -cJf src-x.tar.xz src-x
git init -q edit
cp src-x/* edit/
GIT=(git -C edit -c user.name=t -c user.email=t@t.invalid -c commit.gpgsign=false)
"${GIT[@]}" add . && "${GIT[@]}" commit -qm base &&
	echo two >>edit/a.c && "${GIT[@]}" commit -qam "change a.c" &&
	"${GIT[@]}" format-patch -q -1 -o "$WORK/patches" || fail "could not make the patch"
(cd patches && ls ./*.patch | sed 's|^\./||') >patches/series
mkdir -p no-harness && : >no-harness/series

prepare() { # kernel|e2fsprogs DIR: prepares DIR/src, prints the base's and HEAD's ids
	case $1 in
	kernel) EXTALIGN_KBUILD=$2 EXTALIGN_KSRC_TARBALL=$WORK/src-x.tar.xz \
		EXTALIGN_PATCHES=$WORK/patches EXTALIGN_HARNESS_PATCHES=$WORK/no-harness \
		"$TOP/kernel/prepare.sh" ;;
	e2fsprogs) EXTALIGN_E2BUILD=$2 EXTALIGN_E2SRC_TARBALL=$WORK/src-x.tar.xz \
		EXTALIGN_E2PATCHES=$WORK/patches "$TOP/e2fsprogs/prepare.sh" ;;
	esac >"$2.out" 2>"$2.err" || { cat "$2.err"; fail "$1/prepare.sh failed in $2"; }
	[ "$(tail -n 1 "$2.out")" = "$2/src" ] || fail "$1/prepare.sh printed $(tail -n 1 "$2.out"), not $2/src"
	[ "$(git -C "$2/src" log -1 --format=%s)" = "change a.c" ] || fail "$1: the patch is not HEAD"
	grep -qx two "$2/src/a.c" || fail "$1: the patch's change is not in the tree"
	git -C "$2/src" rev-parse extalign-base HEAD
}
for what in kernel e2fsprogs; do
	first=$(prepare "$what" "$WORK/$what-1") || exit 1
	# Commit dates taken from the clock would differ from here on.
	sleep 1.1
	second=$(prepare "$what" "$WORK/$what-2") || exit 1
	[ "$first" = "$second" ] ||
		fail "$what: two trees from one tarball and series have different commits: $(echo $first) and $(echo $second)"
	echo "ok: $what/prepare.sh: the same tarball and series give the same commits ($(echo "$second" | cut -c1-12 | tr '\n' ' '))"
done
