#!/bin/bash
# extalign check --map on real XFS files whose layout is made with xfs_io:
# one character per unit for aligned, physically off, split, hole and
# unwritten, wrapped to the width, legend and summary, colour only when
# asked or on a terminal without NO_COLOR.
. "$(dirname "$0")/lib.sh"
need_cmd xfs_io
export COLUMNS=80
unset NO_COLOR

# Stripe-aligned XFS with swalloc: a 64k hint gives extents aligned on disk.
mnt=$(mkfs_mount xfs 1024 -d su=64k,sw=1)
mount -o remount,swalloc "$mnt"
f=$mnt/layout
touch "$f"
xfs_io -c 'extsize 64k' "$f"
# 0-256k written, 256k-512k hole, 512k-640k fallocated, 640k-704k hole,
# 704k-768k one written block in an allocated unit (the rest unwritten).
xfs_io -c 'pwrite -q 0 256k' -c fsync -c 'falloc 512k 128k' -c 'pwrite -q 704k 4k' -c fsync "$f"

map_row() { sed -n 2p "$WORK/out" | awk '{ print $2 }'; }

expect_exit 0 "$EXTALIGN" check --map "$f"
[ "$(map_row)" = '####....__.#' ] || { cat "$WORK/out"; fail "map of the layout file"; }
expect_in out "$f: 12 units of 64K"
expect_in out "# aligned  o physically off  / split across extents  . hole  _ unwritten"
expect_in out "12 units: 5 aligned, 0 physically off, 0 split, 5 holes, 2 unwritten"
grep -q $'\033' "$WORK/out" && fail "colour codes in a pipe"

# Split: two files written in turns, 32k at a time, so that the first unit of
# each is two extents apart on disk.
for i in 0 1; do
	xfs_io -f -c "pwrite -q $((i * 32))k 32k" -c fsync "$mnt/g"
	xfs_io -f -c "pwrite -q $((i * 32))k 32k" -c fsync "$mnt/h"
done
expect_exit 1 "$EXTALIGN" check --map --extsize 64k "$mnt/g"
[ "$(map_row)" = '/' ] || { cat "$WORK/out"; fail "interleaved unit is not drawn split"; }
expect_in out "1 units: 0 aligned, 0 physically off, 1 split, 0 holes, 0 unwritten"

# An aligned file: exit 0, all '#'.
touch "$mnt/ok"
xfs_io -c 'extsize 64k' -c 'pwrite -q 0 512k' -c fsync "$mnt/ok"
expect_exit 0 "$EXTALIGN" check --map "$mnt/ok"
[ "$(map_row)" = '########' ] || { cat "$WORK/out"; fail "aligned file"; }

# Physically off: on XFS without stripe alignment, a 64k extent placed
# right after a 4k file starts off a 64k boundary on the device; add 4k
# files until it does.
plain=$(mkfs_mount xfs 300)
for i in $(seq 1 16); do
	xfs_io -f -c 'pwrite -q 0 4k' -c fsync "$plain/fill$i"
	rm -f "$plain/off"
	xfs_io -f -c 'pwrite -q 0 64k' -c fsync "$plain/off"
	start=$(xfs_io -c 'fiemap' "$plain/off" | awk -F'[ :.]+' 'NR == 2 { print $4 }')
	[ $((start * 512 % 65536)) != 0 ] && break
done
[ $((start * 512 % 65536)) != 0 ] || skip "could not place a 64k extent off a 64k boundary"
expect_exit 1 "$EXTALIGN" check --map --extsize 64k "$plain/off"
[ "$(map_row)" = 'o' ] || { cat "$WORK/out"; fail "physically off unit"; }

# Wrapping: rows of whole groups of 8 units within COLUMNS, each row led by
# its offset.
touch "$mnt/big"
xfs_io -c 'extsize 64k' -c 'pwrite -q 0 2560k' -c fsync "$mnt/big"
COLUMNS=30 expect_exit 0 "$EXTALIGN" check --map "$mnt/big"
[ "$(sed -n '2,4p' "$WORK/out" | awk '{ print $1 ":" length($2) }' | tr '\n' ' ')" = '0:16 1M:16 2M:8 ' ] ||
	{ cat "$WORK/out"; fail "not wrapped to 30 columns"; }
# Map rows and legend fit; the summary is one line of text.
head -n -1 "$WORK/out" | tail -n +2 | awk 'length > 30 { exit 1 }' ||
	{ cat "$WORK/out"; fail "lines wider than 30 columns"; }

# Colour: --color=always, never; auto only on a terminal, never with NO_COLOR.
expect_exit 0 "$EXTALIGN" check --map --color=always "$f"
grep -q $'\033\\[32m#' "$WORK/out" || fail "--color=always gave no colour"
expect_exit 0 "$EXTALIGN" check --map --color=never "$f"
grep -q $'\033' "$WORK/out" && fail "--color=never coloured"
if command -v script >/dev/null; then
	script -qec "$EXTALIGN check --map $f" /dev/null >"$WORK/tty" || true
	grep -q $'\033\\[32m#' "$WORK/tty" || { cat -v "$WORK/tty"; fail "no colour on a terminal"; }
	NO_COLOR=1 script -qec "$EXTALIGN check --map $f" /dev/null >"$WORK/tty" || true
	grep -q $'\033\\[' "$WORK/tty" && fail "NO_COLOR ignored on a terminal"
fi

# Bad combinations.
expect_exit 2 "$EXTALIGN" check --map --json "$f"
expect_exit 2 "$EXTALIGN" check --map --color=sometimes "$f"
expect_in err "--color 'sometimes': use auto, always or never"
# Completion offers --map and the --color values.
if [ -f /usr/share/bash-completion/bash_completion ]; then
	comp() {
		bash -c '. /usr/share/bash-completion/bash_completion; . "$0"
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_extalign_module; echo "${COMPREPLY[*]}"' "$TOP/completions/extalign" "$@"
	}
	[ "$(comp extalign check --ma)" = --map ] || fail "completion of 'check --ma'"
	[ "$(comp extalign check --color=al)" = --color=always ] || fail "completion of --color=al"
	# as bash hands it over, split at the "="
	[ "$(comp extalign check --color = al)" = always ] || fail "completion of --color = al"
fi
echo ok
