#!/bin/bash
# The tree stays as its own tools want it: no warning or error from
# the shell linter on any script (-x follows what the scripts source), and
# every C file of ours laid out as .clang-format says.  The kernel patches
# have checkpatch in the kernel suite instead.
. "$(dirname "$0")/lib.sh"
need_cmd shellcheck
need_cmd clang-format
cd "$TOP" || exit 1

# The .bash files are libraries: checked through the scripts that source them.
mapfile -t scripts < <(git ls-files '*.sh')
[ "${#scripts[@]}" -gt 50 ] || fail "found only ${#scripts[@]} shell scripts: is this the checkout?"
shellcheck -x -S warning "${scripts[@]}" >"$WORK/shellcheck" 2>&1 ||
	{ cat "$WORK/shellcheck"; fail "shellcheck warnings (shellcheck -x -S warning FILE)"; }

mapfile -t sources < <(git ls-files '*.c' '*.h' | grep -v '^kernel/')
[ "${#sources[@]}" -gt 50 ] || fail "found only ${#sources[@]} C files"
clang-format --dry-run -Werror "${sources[@]}" >"$WORK/clang-format" 2>&1 ||
	{ head -40 "$WORK/clang-format"; fail "not clang-formatted (clang-format -i FILE)"; }
echo "ok: ${#scripts[@]} scripts shellcheck clean, ${#sources[@]} C files formatted"
