#!/bin/sh
# Install the Debian packages of scripts/packages.txt that one or more
# purposes (build, demo, test, kernel, deb, fresh, fstests, qemu, e2fsprogs) need and this machine lacks.
set -eu
here=$(dirname "$0")
[ $# -gt 0 ] || { echo "usage: $0 PURPOSE..." >&2; exit 2; }
missing=
for purpose in "$@"; do
	pkgs=$(awk -v p="$purpose" '!/^#/ && NF > 1 {
			for (i = 2; i <= NF; i++) if ($i == p) print $1 }' "$here/packages.txt")
	# A misspelt purpose would otherwise install nothing and say nothing.
	[ -n "$pkgs" ] || { echo "$0: no package in packages.txt has the purpose '$purpose'" >&2; exit 2; }
	for pkg in $pkgs; do
		status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
		case "$status" in
		*" installed") ;;
		*) case " $missing " in *" $pkg "*) ;; *) missing="$missing $pkg" ;; esac ;;
		esac
	done
done
[ -n "$missing" ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "$0: missing packages:$missing; run as root to install them" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -q -y --no-install-recommends $missing >/dev/null
