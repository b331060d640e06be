#!/usr/bin/env bash
# Configure and build one flavour of autosched into a build folder.
#   scripts/build.sh [release|asan|fuzz]   (default: release → build/)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/toolchain.env"
flavour=${1:-release}
jobs=$(nproc 2>/dev/null || echo 2)
case "$flavour" in
release)
	dir="$top/build"
	cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ;;
asan)
	dir="$top/build-asan"
	cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DAUTOSCHED_SANITIZE=ON >/dev/null ;;
fuzz)
	dir="$top/build-fuzz"
	cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DAUTOSCHED_FUZZ=ON \
	    -DAUTOSCHED_SANITIZE=ON \
	    -DCMAKE_C_COMPILER="clang-$LLVM_VERSION" \
	    -DCMAKE_CXX_COMPILER="clang++-$LLVM_VERSION" >/dev/null ;;
*)
	echo "usage: scripts/build.sh [release|asan|fuzz]" >&2; exit 2 ;;
esac
# (The fuzz flavour needs only its harnesses, not the tests and tools again.)
target=()
[ "$flavour" = fuzz ] && target=(--target fuzzers)
cmake --build "$dir" -j "$jobs" "${target[@]}"
echo "$dir"
