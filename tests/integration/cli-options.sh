#!/bin/bash
# One option scheme across the subcommands: a letter means one thing
# everywhere (-n --dry-run, -b --bytes, -R --recursive, -J --json, -q
# --quiet, -v --verbose); older spellings still work but are not offered;
# JSON keys use '_' only; --help, completion and extalign(8) agree.
. "$(dirname "$0")/lib.sh"
need_cmd xfs_io
mnt=$(mkfs_mount xfs 300)
mkdir -p "$mnt/t/a"
touch "$mnt/t/e" "$mnt/t/a/e2"
touch "$mnt/t/data"
xfs_io -c 'extsize 64k' -c 'pwrite -q 0 64k' -c fsync "$mnt/t/data"

cmds=(set get clear check devices realign apply status "policy check" "policy explain" "policy show")

# Every "-X, --long" pair in every --help: one long option per letter.
for c in "${cmds[@]}"; do
	# shellcheck disable=SC2086
	"$EXTALIGN" $c --help | sed -n 's/^ *\(-[A-Za-z]\), \(--[a-z-]*\).*/\1 \2/p' | sed "s|^|$c: |"
done >"$WORK/letters"
awk '{ l = $(NF - 1); o = $NF; if (l in seen && seen[l] != o) { print "letter " l ": " seen[l] " and " o; bad = 1 } seen[l] = o } END { exit bad }' \
	"$WORK/letters" || { cat "$WORK/letters"; fail "a letter means two things"; }
grep -q -- '-n --dry-run' "$WORK/letters" || fail "-n is not --dry-run"
grep -q -- '-b --bytes' "$WORK/letters" || fail "-b is not --bytes"

# Each command that takes paths and can walk says -R, --recursive.
for c in set get clear check; do
	"$EXTALIGN" $c --help | grep -q -- '-R, --recursive' || fail "$c has no -R, --recursive"
done

# The older spellings keep working.
expect_exit 0 "$EXTALIGN" get -n "$mnt/t"
grep -q '^PATH' "$WORK/out" && fail "get -n printed a header"
expect_exit 0 "$EXTALIGN" devices -n -o NAME "$mnt"
grep -q '^NAME' "$WORK/out" && fail "devices -n printed a header"
printf '[rule t]\ndirectory = %s/t\nextsize = 64k\n' "$mnt" >"$WORK/conf"
printf '7:p7\n' >"$WORK/projid"
expect_exit 1 "$EXTALIGN" policy explain -c "$WORK/conf" --projid "$WORK/projid" -p 7 /elsewhere
expect_exit 0 "$EXTALIGN" realign -n -b 10M --extsize 64k "$mnt/t/data"

# --noheadings wherever there is a table header.
for args in "get --noheadings" "check --noheadings -e 64k"; do
	# shellcheck disable=SC2086
	expect_exit 0 "$EXTALIGN" $args "$mnt/t/e"
	grep -q '^PATH' "$WORK/out" && fail "$args printed a header"
done
expect_exit 0 "$EXTALIGN" policy show -c "$WORK/conf" --noheadings
grep -q '^NAME' "$WORK/out" && fail "policy show --noheadings printed a header"

# -R walks: get lists everything below, check every file, clear clears.
"$EXTALIGN" set -R -e 64k "$mnt/t" >/dev/null
expect_exit 0 "$EXTALIGN" get -R -b "$mnt/t"
[ "$(grep -c ' 65536 ' "$WORK/out")" = 5 ] || { cat "$WORK/out"; fail "get -R: not every path hinted"; }
expect_in out "$mnt/t/a/e2"
"$EXTALIGN" check -R -J -e 64k "$mnt/t" >"$WORK/out" || true
python3 -c 'import json,sys; f = json.load(open(sys.argv[1]))["files"]; assert len(f) == 3, f' "$WORK/out" ||
	fail "check -R does not check the three files"
expect_exit 0 "$EXTALIGN" clear -R "$mnt/t"
expect_in out "4 cleared; 1 file with data keeps its hint"
[ "$(xfs_extsize "$mnt/t/a/e2")" = 0 ] || fail "clear -R left a hint"

# JSON keys: '_' only, in every command's JSON.
json_keys_ok() {
	python3 -c '
import json, sys
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            assert "-" not in k and ":" not in k, k
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(json.load(open(sys.argv[1])))' "$WORK/out"
}
for args in "get -J $mnt/t" "check -J -e 64k $mnt/t/data" "devices -J $mnt" \
	"policy show -J -c $WORK/conf" "policy show -D -J -c $WORK/conf" \
	"policy explain -J -c $WORK/conf $mnt/t/x"; do
	# shellcheck disable=SC2086
	"$EXTALIGN" $args >"$WORK/out" 2>/dev/null || true
	json_keys_ok || fail "extalign $args: a JSON key with '-' or ':'"
done

# Completion offers exactly the long options --help lists (and --help).
if [ -f /usr/share/bash-completion/bash_completion ]; then
	for c in "${cmds[@]}"; do
		# shellcheck disable=SC2086
		want=$("$EXTALIGN" $c --help | grep -o -- '--[a-z][a-z-]*' | grep -v -- '^--help$' | sort -u | tr '\n' ' ')
		# shellcheck disable=SC2086
		got=$(bash -c '. /usr/share/bash-completion/bash_completion; . "$0"
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			_extalign_module; printf "%s\n" "${COMPREPLY[@]}"' "$TOP/completions/extalign" extalign $c -- |
			sed 's/=$//' | grep -v -- '^--help$' | sort -u | tr '\n' ' ')
		[ "$want" = "$got" ] || fail "completion of '$c': '$got', --help: '$want'"
	done
	# extalignd's own completion, against its --help too.
	want=$("$EXTALIGND" --help | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ')
	got=$(bash -c '. /usr/share/bash-completion/bash_completion; . "$0"
		COMP_WORDS=(extalignd --); COMP_CWORD=1; COMP_LINE="extalignd --"; COMP_POINT=12
		_extalignd; printf "%s\n" "${COMPREPLY[@]}"' "$TOP/completions/extalignd" |
		sort -u | tr '\n' ' ')
	[ "$want" = "$got" ] || fail "completion of extalignd: '$got', --help: '$want'"
	got=$(bash -c '. /usr/share/bash-completion/bash_completion; . "$0"
		COMP_WORDS=(extalignd --watch f); COMP_CWORD=2; COMP_LINE="extalignd --watch f"
		COMP_POINT=${#COMP_LINE}; _extalignd; echo "${COMPREPLY[*]}"' "$TOP/completions/extalignd")
	[ "$got" = fanotify ] || fail "completion of 'extalignd --watch f' gave '$got'"
	# "-o NAME,MAJ:<TAB>": bash splits the word at ':' (COMP_WORDBREAKS);
	# what replaces the text after the ':' is the rest of MAJ:MIN.
	got=$(bash -c '. /usr/share/bash-completion/bash_completion; . "$0"
		COMP_WORDS=(extalign devices -o NAME,MAJ :); COMP_CWORD=4
		COMP_LINE="extalign devices -o NAME,MAJ:"; COMP_POINT=${#COMP_LINE}
		_extalign_module; echo "${COMPREPLY[*]}"' "$TOP/completions/extalign")
	[ "$got" = MIN ] || fail "completion of '-o NAME,MAJ:' gave '$got'"
fi

# extalign(8) documents every long option of every --help.
for c in "${cmds[@]}"; do
	# shellcheck disable=SC2086
	for o in $("$EXTALIGN" $c --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		man_o=${o//-/\\\\-}
		grep -q -- "$man_o" "$TOP/cmd/extalign.8" || fail "extalign(8) does not mention $o ($c)"
	done
done

# "help [COMMAND]", as git and systemctl have it.
expect_exit 0 "$EXTALIGN" help
expect_in out "Commands:"
expect_exit 0 "$EXTALIGN" help check
expect_in out "Usage: extalign check"
expect_exit 2 "$EXTALIGN" help nosuch
expect_in err "unknown command 'nosuch'"
expect_exit 2 "$EXTALIGN" help check get
echo ok
