#!/bin/bash
# scripts/packages.txt is the one list of Debian packages: debian/control's
# Build-Depends are its build purpose (build-essential is implied by policy),
# the demo asks for build and demo only, and nothing else installs packages.
# The Makefile and debian/changelog name the same version.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1

purpose() { # PURPOSE: the packages of that purpose, sorted
	awk -v p="$1" '!/^#/ && NF > 1 { for (i = 2; i <= NF; i++) if ($i == p) print $1 }' \
		scripts/packages.txt | sort
}

# Build-Depends: the field and its continuation lines, names only.
awk '/^Build-Depends:/ { f = 1; sub(/^Build-Depends:/, ""); print; next }
     f && /^[ \t]/ { print; next } { f = 0 }' debian/control |
	tr ',' '\n' | sed 's/([^)]*)//; s/\[.*\]//; s/[[:space:]]//g' | grep -v '^$' |
	sort >"$WORK/build-depends"
[ -s "$WORK/build-depends" ] || fail "no Build-Depends in debian/control"
grep -v '^debhelper-compat$' "$WORK/build-depends" >"$WORK/bd"
purpose build | grep -v '^build-essential$' >"$WORK/build"
diff -u "$WORK/build" "$WORK/bd" >"$WORK/diff" ||
	{ cat "$WORK/diff"; fail "Build-Depends differ from the build purpose of scripts/packages.txt"; }
if grep -q '^debhelper-compat$' "$WORK/build-depends"; then
	purpose deb | grep -qx debhelper || fail "debian/control uses debhelper, packages.txt has no 'debhelper deb'"
fi

# One version: the Makefile's (extalign --version) is the package's.
mk=$(sed -n 's/^VERSION *:= *//p' Makefile)
deb=$(sed -n '1s/^extalign (\([^)-]*\).*/\1/p' debian/changelog)
[ -n "$mk" ] && [ "$mk" = "$deb" ] || fail "Makefile VERSION '$mk' differs from debian/changelog's '$deb'"

# Every name appears once.
dups=$(awk '!/^#/ && NF { print $1 }' scripts/packages.txt | sort | uniq -d)
[ -z "$dups" ] || fail "listed twice in packages.txt: $dups"

# The demo must run on a machine with only its own packages.
grep -qE '^[[:space:]]*scripts/install-deps.sh build demo$' scripts/demo.sh ||
	fail "scripts/demo.sh does not install exactly the build and demo purposes"
# Packages are installed by install-deps.sh only.  Installing .deb files
# we built into a guest's root (kernel/qemu-test.sh: the e2fsprogs series)
# names no package of packages.txt: such lines name a .deb.
others=$(grep -rnE 'apt-get +(-[a-z]+ +)*install|apt +install' scripts kernel tests .ci 2>/dev/null |
	grep -v '\.deb' | cut -d: -f1 | sort -u |
	grep -v -e '^scripts/install-deps.sh$' -e '^tests/integration/packages.sh$' -e '^tests/fresh/' || true)
[ -z "$others" ] || fail "packages installed outside scripts/install-deps.sh: $others"
echo ok
