#!/bin/bash
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for a
# short time (FUZZ_SECONDS, default 20) from its seed corpus.  A crash, a
# leak or a sanitizer report fails; no clang or no libFuzzer runtime skips.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
command -v clang >/dev/null || { echo "SKIP: clang is not installed"; exit 77; }
out=build/fuzz
mkdir -p "$out"
# shellcheck disable=SC2054 # the commas belong to -fsanitize
flags=(-g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined)
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
	>"$out/probe.c"
clang "${flags[@]}" -o "$out/probe" "$out/probe.c" 2>/dev/null ||
	{ echo "SKIP: clang has no libFuzzer runtime (libclang-rt-14-dev)"; exit 77; }

# Every target links the whole library, so a new target needs no edit here.
libsrc=(lib/*.c)
read -ra pkgs <<<"$(pkg-config --cflags --libs mount blkid libsystemd inih smartcols)"
status=0
for t in tests/fuzz/fuzz-*.c; do
	name=$(basename "$t" .c)
	clang "${flags[@]}" -o "$out/$name" "$t" "${libsrc[@]}" "${pkgs[@]}"
	corpus=$out/$name.corpus
	mkdir -p "$corpus"
	[ -d "tests/fuzz/seeds/$name" ] && cp -n tests/fuzz/seeds/"$name"/* "$corpus"/ 2>/dev/null || true
	if "$out/$name" -max_total_time="${FUZZ_SECONDS:-20}" -print_final_stats=0 -artifact_prefix="$out/$name-" \
		"$corpus" >"$out/$name.log" 2>&1; then
		echo "fuzz $name: $(grep -E '^#[0-9]+.*DONE' "$out/$name.log" | tail -1)"
	else
		echo "fuzz $name: FAILED"; tail -30 "$out/$name.log"; status=1
	fi
done
exit $status
