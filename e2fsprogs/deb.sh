#!/bin/bash
# Debian packages of the patched e2fsprogs for Debian 12, version
# 1.47.4-0extalign1 (patch 0006 adapts the snapshot's packaging).
#
# Usage: e2fsprogs/deb.sh [OUTDIR]
#
# Exports e2fsprogs/prepare.sh's tree to $EXTALIGN_E2BUILD/deb/tree, runs
# dpkg-buildpackage there (no tests, which e2fsprogs/check.sh runs; no udeb,
# static e2fsck or fuse2fs, which nothing here uses) and puts the .debs in
# OUTDIR (default $EXTALIGN_E2BUILD/deb).  Build dependencies:
# scripts/install-deps.sh e2fsprogs.  Prints the .debs, one a line.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
OUT=${1:-$E2B/deb}
SRC=$("$HERE/prepare.sh" | tail -n 1)
TREE=$E2B/deb/tree

version=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
rm -rf "$TREE"
mkdir -p "$TREE" "$OUT"
git -C "$SRC" archive --format=tar --prefix=e2fsprogs/ HEAD | tar -x -C "$TREE"
rm -f "$TREE"/*.deb "$OUT"/*_"$version"_*.deb
(
	cd "$TREE/e2fsprogs"
	DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	DEB_BUILD_PROFILES="nocheck noudeb pkg.e2fsprogs.no-static pkg.e2fsprogs.no-fuse2fs" \
		dpkg-buildpackage -us -uc -b >"$TREE/build.log" 2>&1
) || { tail -n 30 "$TREE/build.log" >&2; echo "deb.sh: dpkg-buildpackage failed (log: $TREE/build.log)" >&2; exit 1; }
mv "$TREE"/*.deb "$OUT"/
ls "$OUT"/*_"$version"_*.deb
