#!/bin/bash
# Build fstests, fio and xfsprogs (xfs_io) from the snapshots in
# ../shared/tools into DIR, once: kernel/fstests.sh runs them in the UML
# guest.  Nothing is fetched.  Usage: build-tools.sh DIR
#
# DIR/xfstests    fstests, built in place (./check runs from there)
# DIR/bin         fio and xfs_io, first in the guest's PATH
#
# A stamp naming the three tarballs and this script's hash marks a
# finished build; a changed tarball or script (or an interrupted build)
# builds again.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
TOOLS_SRC=${EXTALIGN_TOOLS:-$(cd "$TOP/.." && pwd)/shared/tools}
DIR=${1:?usage: build-tools.sh DIR}
JOBS=${JOBS:-2}

log() { echo "build-tools: $*" >&2; }

one() { # GLOB: the one tarball of TOOLS_SRC that matches
	local f
	f=$(find "$TOOLS_SRC" -maxdepth 1 -name "$1" | sort | tail -n 1)
	[ -n "$f" ] || { log "no $1 in $TOOLS_SRC"; exit 1; }
	echo "$f"
}
FSTESTS_TAR=$(one 'xfstests-*.tar.xz')
FIO_TAR=$(one 'fio-*.tar.xz')
XFSPROGS_TAR=$(one 'xfsprogs-*.tar.xz')

stamp=$DIR/.built
want="$(basename -a "$FSTESTS_TAR" "$FIO_TAR" "$XFSPROGS_TAR" | tr '\n' ' ')$(sha256sum <"$0" | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	exit 0
fi

"$TOP/scripts/install-deps.sh" fstests >&2
rm -rf "$DIR"
mkdir -p "$DIR/src" "$DIR/bin"

# unpack TARBALL NAME: into DIR/src/NAME (the tarballs have one top dir).
unpack() {
	local top
	mkdir -p "$DIR/unpack"
	tar -xJf "$1" -C "$DIR/unpack"
	top=$(find "$DIR/unpack" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	mv "$top" "$DIR/src/$2"
	rm -rf "$DIR/unpack"
}

log "xfsprogs ($(basename "$XFSPROGS_TAR")): xfs_io only"
unpack "$XFSPROGS_TAR" xfsprogs
(
	cd "$DIR/src/xfsprogs"
	# The snapshot's io/ is all the harness needs.  xfs_io links only
	# libfrog, libxcmd and libhandle, but the top Makefile builds libxfs
	# (two thirds of the compile time) before any tool: build the four
	# directories one by one after installing the headers.
	make configure >/dev/null
	./configure --disable-scrub --disable-lto >/dev/null
	make headers >/dev/null
	for d in libfrog libxcmd libhandle io; do
		make -j"$JOBS" -C "$d" >/dev/null
	done
)
cp "$DIR/src/xfsprogs/io/xfs_io" "$DIR/bin/"

log "fio ($(basename "$FIO_TAR"))"
unpack "$FIO_TAR" fio
(
	cd "$DIR/src/fio"
	# The UML kernel has no System V IPC (CONFIG_SYSVIPC reaches
	# linux/sched.h: a rebuild of everything), and fio keeps its job
	# table in shmget() memory unless built without: then it runs its
	# jobs as threads.
	./configure --disable-native --disable-shm >/dev/null
	make -j"$JOBS" fio >/dev/null
)
cp "$DIR/src/fio/fio" "$DIR/bin/"

log "fstests ($(basename "$FSTESTS_TAR"))"
unpack "$FSTESTS_TAR" xfstests
mv "$DIR/src/xfstests" "$DIR/xfstests"
make -C "$DIR/xfstests" -j"$JOBS" >/dev/null

echo "$want" >"$stamp"
log "done in $DIR"
