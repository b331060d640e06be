#!/usr/bin/env bash
# The test suite: install what is missing, build the three flavours, run
# every test (CTest) in release, the tests of the C code paths again under
# ASan+UBSan, each fuzzer for a short while; then the time of each part and
# the slowest tests.
#   scripts/test.sh            everything
#   SKIP_ASAN=1 SKIP_FUZZ=1    to leave those out
#   TEST_JOBS=N                tests at once (default: 2 per CPU; most of a
#                              test's time is spent waiting on its children)
# The ASan pass leaves out the tests labelled toolbound (their time is spent
# in compilers, Slurm or a browser, and their C paths are run under the
# sanitizers by other tests) and noasan (meaningless under ASan).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/scripts/deps.sh"
ncpu=$(nproc 2>/dev/null || echo 2)
jobs=${TEST_JOBS:-$((2 * ncpu))}
logs=$(mktemp -d /tmp/autosched-test-logs-XXXXXX)
trap 'rm -rf "$logs"' EXIT

echo "== build (release, ASan + UBSan, fuzz)"
t=$SECONDS
bash "$top/scripts/build.sh" release >/dev/null
[ -n "${SKIP_ASAN:-}" ] || bash "$top/scripts/build.sh" asan >/dev/null
[ -n "${SKIP_FUZZ:-}" ] || bash "$top/scripts/build.sh" fuzz >/dev/null
echo "   $((SECONDS - t)) s"
start=$SECONDS
status=0

echo "== test (release, $jobs at once)"
t=$SECONDS
(cd "$top/build" && ctest --output-on-failure -j "$jobs" --timeout 600) \
    2>&1 | tee "$logs/release.txt" || status=1
release_s=$((SECONDS - t))

asan_s=0
if [ -z "${SKIP_ASAN:-}" ]; then
	echo "== test (ASan + UBSan, $jobs at once, without the toolbound tests)"
	t=$SECONDS
	# LeakSanitizer needs ptrace, which some sandboxes refuse: leaks are
	# checked where it works, the rest of ASan/UBSan everywhere.
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
	if ! "$top/build-asan/tests/util/test_util" >/dev/null 2>&1; then
		export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
	fi
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	(cd "$top/build-asan" && ctest --output-on-failure -j "$jobs" \
	    --timeout 900 -LE 'noasan|toolbound') \
	    2>&1 | tee "$logs/asan.txt" || status=1
	asan_s=$((SECONDS - t))
fi

# fuzz_one NAME: one fuzzer for FUZZ_SECONDS, seeded with the project's own
# inputs of its kind; its last lines in $logs/NAME.txt, non-zero on a crash.
fuzz_one() {
	local f=$top/build-fuzz/fuzz/$1 work rc
	work=$(mktemp -d)
	case $1 in
	fuzz_cfg) cp "$top"/tests/cfg/bad/*.cfg "$top"/configs/*.cfg \
	    "$top"/configs/seed/*.cfg "$work/" ;;
	fuzz_analysis) cp "$top"/tests/analysis/fixtures/*.mlir \
	    "$top"/tests/job/fixtures/*.mlir "$top"/configs/*.mlir "$work/" ;;
	fuzz_conf) cp "$top"/configs/autoschedd.conf "$work/" ;;
	esac
	# (The deadline: libFuzzer's own max_total_time, and a margin past it.)
	ASAN_OPTIONS=detect_leaks=0 timeout -k 5 $((${FUZZ_SECONDS:-20} + 120)) \
	    "$f" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=65536 -timeout=10 \
	    "$work" > "$logs/$1.txt" 2>&1
	rc=$?
	rm -rf "$work"
	return $rc
}
fuzz_s=0
if [ -z "${SKIP_FUZZ:-}" ]; then
	echo "== fuzz (libFuzzer, ${FUZZ_SECONDS:-20} s each, $ncpu at once)"
	t=$SECONDS
	pids=()
	names=()
	for f in "$top"/build-fuzz/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		fuzz_one "$name" &
		pids+=($!)
		names+=("$name")
		if [ ${#pids[@]} -ge "$ncpu" ]; then
			wait "${pids[0]}" || { echo "FAIL: ${names[0]}"; status=1; }
			echo "-- ${names[0]}"; tail -n 2 "$logs/${names[0]}.txt"
			pids=("${pids[@]:1}")
			names=("${names[@]:1}")
		fi
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { echo "FAIL: ${names[$i]}"; status=1; }
		echo "-- ${names[$i]}"; tail -n 2 "$logs/${names[$i]}.txt"
	done
	fuzz_s=$((SECONDS - t))
fi

echo "== times (after the build): release ${release_s} s, ASan ${asan_s} s," \
    "fuzz ${fuzz_s} s; all $((SECONDS - start)) s"
echo "   the slowest tests (s, pass):"
for p in release asan; do
	[ -f "$logs/$p.txt" ] || continue
	awk -v p="$p" '/Test +#[0-9]+: / { for (i = 1; i <= NF; i++)
	    if ($i == "sec") print $(i - 1), p, $4, ($0 ~ /Passed/ ? "" : "(" $5 ")") }' "$logs/$p.txt"
done | sort -rn | head -n 15 | awk '{ printf "   %8.1f  %-7s %s %s\n", $1, $2, $3, $4 }'
# The closing line: every test of both passes and every fuzzer.
np=0
nf=0
for p in release asan; do
	[ -f "$logs/$p.txt" ] || continue
	read -r f n < <(sed -n 's/.* tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' "$logs/$p.txt" | tail -n 1) ||
	    { f=1; n=1; }
	np=$((np + n - f))
	nf=$((nf + f))
done
for f in "$logs"/fuzz_*.txt; do
	[ -f "$f" ] || continue
	if grep -q 'Done [0-9]* runs' "$f"; then np=$((np + 1)); else nf=$((nf + 1)); fi
done
[ "$status" -eq 0 ] || [ "$nf" -gt 0 ] || nf=1
echo "$np passed, $nf failed"
exit $status
