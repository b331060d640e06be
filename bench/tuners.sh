#!/bin/sh
# The tuner benchmark: build bench_tuners (in build-bench/ unless BUILD is
# set) and replay every recorded sweep of bench/data/. Arguments go to
# bench_tuners: -s SEEDS, -o key=value (XGBoostTuner settings).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/deadline.sh"
build=${BUILD:-$top/build-bench}
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S "$top" -B "$build" >/dev/null
fi
# Quiet unless the build fails.
if ! out=$(cmake --build "$build" -j2 --target bench_tuners 2>&1); then
	printf '%s\n' "$out" >&2
	exit 1
fi
exec "$build/bench/bench_tuners" "$@" "$top"/bench/data/*.db
