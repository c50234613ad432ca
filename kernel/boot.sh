#!/bin/bash
# Boot the UML kernel that kernel/check.sh built, for a test or benchmark.
#
# Usage: kernel/boot.sh INIT OUT [NAME=value...]
#
# The guest's root is the host's / (hostfs).  It gets a fresh 2 GiB ubd
# disk (/dev/ubda) and a 512 MiB scsi_debug disk with 4 KiB sectors that
# takes hardware atomic writes of 4 KiB to 64 KiB.  INIT runs as PID 1
# with EXTALIGN_OUT=OUT and each NAME=value in its environment (the
# kernel hands parameters it does not know to init); it must power the
# guest off.  The console goes to stdout; the exit status is the UML
# kernel's.  Scratch files (the disk image, UML's memory file) live in
# $EXTALIGN_RUN, default $EXTALIGN_KBUILD/run, so that two guests can run
# at once with different EXTALIGN_RUN.  BOOT_MEM (1G) and BOOT_SD_MB (512)
# size the guest's memory and the scsi_debug disk, which lives in it.
set -uo pipefail

KB=${EXTALIGN_KBUILD:-/var/tmp/extalign-kernel}
LINUX=$KB/build-um/linux
RUN=${EXTALIGN_RUN:-$KB/run}

if [ $# -lt 2 ]; then
	echo "usage: kernel/boot.sh INIT OUT [NAME=value...]" >&2
	exit 2
fi
init=$(readlink -f "$1") out=$2
shift 2
[ -x "$LINUX" ] || { echo "boot.sh: no kernel at $LINUX (run kernel/check.sh)" >&2; exit 1; }
[ -f "$init" ] || { echo "boot.sh: no init script $init" >&2; exit 1; }

mkdir -p "$RUN"
rm -f "$RUN/ubd0.img"
truncate -s 2G "$RUN/ubd0.img"
# UML keeps its memory in a file under TMPDIR (default /dev/shm, often
# small in containers): keep it next to the run directory instead.
TMPDIR=$RUN exec timeout 1800 "$LINUX" mem="${BOOT_MEM:-1G}" \
	ubd0="$RUN/ubd0.img" \
	root=/dev/root rootfstype=hostfs rootflags=/ rw \
	init="$init" \
	scsi_debug.dev_size_mb="${BOOT_SD_MB:-512}" scsi_debug.sector_size=4096 \
	scsi_debug.atomic_wr=1 scsi_debug.atomic_wr_max_length=16 \
	scsi_debug.atomic_wr_gran=1 scsi_debug.atomic_wr_align=1 \
	EXTALIGN_OUT="$out" "$@" </dev/null
