# shellcheck shell=bash
# The Debian 12 roots the fresh-machine suite and the QEMU guests start
# from: mmdebstrap runs once per package set, and its tarball is kept in
# $EXTALIGN_FRESH_CACHE (default /var/tmp/extalign-fresh).  The suite,
# mirrors and packages are part of the name, so a change to any of them
# makes a new root instead of reusing a stale one.
#
#   debian_root NAME LOG [PACKAGE...]
#       prints the tarball's path (minbase plus the PACKAGEs); returns 0,
#       77 when no Debian mirror is reachable (the caller's skip), or 1
#       when mmdebstrap failed for another reason (its output is in LOG).

DEBIAN_ROOT_CACHE=${EXTALIGN_FRESH_CACHE:-/var/tmp/extalign-fresh}
DEBIAN_SUITE=bookworm
DEBIAN_MIRRORS=("deb http://deb.debian.org/debian $DEBIAN_SUITE main"
		"deb http://deb.debian.org/debian $DEBIAN_SUITE-updates main"
		"deb http://deb.debian.org/debian-security $DEBIAN_SUITE-security main")

debian_root() {
	local name=$1 log=$2 key base include=()
	shift 2
	key=$(printf '%s\n' "$DEBIAN_SUITE" minbase "${DEBIAN_MIRRORS[@]}" "$@" |
		sha256sum | cut -c1-12)
	base=$DEBIAN_ROOT_CACHE/$DEBIAN_SUITE-$name-$key.tar
	if [ ! -s "$base" ]; then
		echo "making the root $base (cached for later runs)" >&2
		mkdir -p "$DEBIAN_ROOT_CACHE"
		[ $# -gt 0 ] && include=(--include="$(IFS=,; echo "$*")")
		rm -f "$base.new.tar"
		# mmdebstrap picks the output format by the name's extension.
		# Not --quiet: it hides apt's reason, and only the reason tells
		# an unreachable mirror from a real failure.
		if ! mmdebstrap --variant=minbase "${include[@]}" "$DEBIAN_SUITE" \
			"$base.new.tar" "${DEBIAN_MIRRORS[@]}" >"$log" 2>&1; then
			rm -f "$base.new.tar"
			grep -q -e 'Temporary failure resolving' -e 'Could not connect' \
				-e 'Failed to fetch' "$log" && return 77
			return 1
		fi
		mv -f "$base.new.tar" "$base"
	fi
	echo "$base"
}
