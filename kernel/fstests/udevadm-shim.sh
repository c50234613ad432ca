#!/bin/bash
# udevadm for the UML guest, which runs no udevd: fstests waits for a
# dm node with "udevadm wait /dev/mapper/NAME", which without udevd never
# sees the device initialized and waits for ever (generic/034 hung in
# _init_flakey until the watchdog killed it).  dmsetup makes and removes
# its nodes itself there (DM_DISABLE_UDEV=1), so waiting for the path to
# appear or go is all that a wait can mean; settle has no queue to wait
# for.  Everything else goes to the real udevadm.
#   HOOK_UDEVADM  the real udevadm
case ${1:-} in
settle | trigger)
	exit 0 ;;
wait)
	shift
	removed=0 timeout=30 paths=()
	while [ $# -gt 0 ]; do
		case $1 in
		--removed) removed=1 ;;
		-t | --timeout) timeout=${2:-30}; shift ;;
		--timeout=*) timeout=${1#--timeout=} ;;
		-*) ;;
		*) paths+=("$1") ;;
		esac
		shift
	done
	for ((i = 0; i < timeout * 10; i++)); do
		left=0
		for p in "${paths[@]}"; do
			if [ $removed = 1 ]; then
				[ -e "$p" ] && left=1
			else
				[ -e "$p" ] || left=1
			fi
		done
		[ $left = 0 ] && exit 0
		sleep 0.1
	done
	echo "udevadm-shim: waited ${timeout}s for ${paths[*]}" \
		"to $([ $removed = 1 ] && echo go || echo appear)" >&2
	exit 1 ;;
esac
exec "${HOOK_UDEVADM:?}" "$@"
