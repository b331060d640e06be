#!/usr/bin/env bash
# repro.sh [N] [EXTRA_FLAGS...]: compile program.mlir with spec.mlir N times
# (default 100), two compiles at once, each under a 20 s deadline (a good
# compile takes 1-5 s), and print how many hung. With --mlir-disable-threading
# as EXTRA_FLAGS none should. IREE_COMPILE names the compiler (default: the
# one on PATH).
set -u
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-100}
shift || true
ic=${IREE_COMPILE:-$(command -v iree-compile)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() {	# one I: compile I; prints "hang" or "fail" or nothing
	local d=$work/$1
	mkdir -p "$d"
	timeout -s KILL 20 "$ic" "$here/program.mlir" \
	    --iree-hal-target-device=local \
	    --iree-hal-local-target-device-backends=llvm-cpu \
	    --iree-llvmcpu-target-cpu=host \
	    --iree-hal-dump-executable-configurations-to="$d/configs" \
	    --iree-codegen-tuning-spec-path="$here/spec.mlir" "$@" \
	    -o "$d/out.vmfb" 2> "$d/err"
	case $? in 0) ;; 137) echo hang ;; *) echo fail ;; esac
	rm -rf "$d"
}
for i in $(seq "$n"); do
	one "$i" "$@" &
	[ $((i % 2)) -eq 0 ] && wait
done > "$work/out"
wait
echo "$n compiles ($ic ${*:-}): $(grep -c hang "$work/out") hung, $(grep -c fail "$work/out") failed"
