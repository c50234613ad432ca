#!/bin/bash
# Build the patched e2fsprogs (e2fsprogs/prepare.sh's tree) out of tree in
# $EXTALIGN_E2BUILD/build, incrementally.  Prints the build directory on
# the last line of stdout; the programs are e2fsck/e2fsck, debugfs/debugfs,
# resize/resize2fs and misc/mke2fs under it.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
E2B=${EXTALIGN_E2BUILD:-/var/tmp/extalign-e2fsprogs}
BUILD=$E2B/build
SRC=$("$HERE/prepare.sh" | tail -n 1)

# Private uuid and blkid libraries: nothing to install but a compiler,
# and programs that run wherever the build does.  The configuration files
# are the system's (/etc/mke2fs.conf, /etc/e2fsck.conf).
CONF=(--disable-nls --disable-fuse2fs --disable-fsck --disable-uuidd
      --enable-libuuid --enable-libblkid --sysconfdir=/etc)

mkdir -p "$BUILD"
# Configure again when the tree was re-applied (configure's inputs may
# have changed with it) or the options changed.
want="$(cat "$SRC/.git/extalign-head") ${CONF[*]}"
if [ ! -f "$BUILD/Makefile" ] ||
   [ "$want" != "$(cat "$BUILD/.extalign-configured" 2>/dev/null || true)" ]; then
	(cd "$BUILD" && "$SRC/configure" "${CONF[@]}" >"$BUILD/configure.log" 2>&1) ||
		{ tail -n 20 "$BUILD/configure.log" >&2; exit 1; }
	echo "$want" >"$BUILD/.extalign-configured"
fi
make -C "$BUILD" -j"$(nproc)" -s >"$BUILD/make.log" 2>&1 ||
	{ grep -E 'error|Error' "$BUILD/make.log" | head -n 20 >&2; exit 1; }
echo "$BUILD"
