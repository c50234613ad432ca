#!/bin/bash
# Set up and run every test on a fresh Debian 12 machine, as root: installs
# the missing packages (scripts/packages.txt), builds, then runs the unit,
# e2fsprogs, integration, fuzz, kernel, fstests and fresh-root suites
# (tests/run.sh).
# Skips are counted and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh build test e2fsprogs kernel fstests fresh
make -j"$(nproc)" tests
exec tests/run.sh "$@"
