#!/usr/bin/env bash
# The test suite: install what is missing, build, run every test (CTest),
# then the same under ASan+UBSan, then each fuzzer for a short while.
#   scripts/test.sh            everything
#   SKIP_ASAN=1 SKIP_FUZZ=1    to leave those out
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/deps.sh"
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build and test (release)"
bash "$top/scripts/build.sh" release >/dev/null
(cd "$top/build" && ctest --output-on-failure -j "$jobs" --timeout 600)

if [ -z "${SKIP_ASAN:-}" ]; then
	echo "== build and test (ASan + UBSan)"
	bash "$top/scripts/build.sh" asan >/dev/null
	# LeakSanitizer needs ptrace, which some sandboxes refuse: leaks are
	# checked where it works, the rest of ASan/UBSan everywhere.
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
	if ! "$top/build-asan/tests/util/test_util" >/dev/null 2>&1; then
		export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
	fi
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	(cd "$top/build-asan" && ctest --output-on-failure -j "$jobs" --timeout 900 -LE noasan)
fi

if [ -z "${SKIP_FUZZ:-}" ]; then
	echo "== fuzz (libFuzzer, ${FUZZ_SECONDS:-20} s each)"
	bash "$top/scripts/build.sh" fuzz >/dev/null
	for f in "$top"/build-fuzz/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		work=$(mktemp -d)
		# Seed each fuzzer with the project's own inputs of its kind.
		case $name in
		fuzz_cfg) cp "$top"/tests/cfg/bad/*.cfg "$top"/configs/*.cfg \
		    "$top"/configs/seed/*.cfg "$work/" ;;
		fuzz_analysis) cp "$top"/tests/analysis/fixtures/*.mlir \
		    "$top"/tests/job/fixtures/*.mlir "$top"/configs/*.mlir "$work/" ;;
		fuzz_conf) cp "$top"/configs/autoschedd.conf "$work/" ;;
		esac
		echo "-- $name"
		ASAN_OPTIONS=detect_leaks=0 "$f" -max_total_time="${FUZZ_SECONDS:-20}" \
		    -max_len=65536 -timeout=10 "$work" 2>&1 | tail -n 2
		rm -rf "$work"
	done
fi
