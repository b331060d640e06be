#!/usr/bin/env bash
# `autosched build --buffers pool|malloc` (fixtures/pool.mlir: intermediates
# of 512 KiB, past glibc malloc's mmap threshold): called N times from a
# plain C caller (pool_calls.c, glibc's default malloc), the pool's library
# pays no page fault after the first call when results are given back with
# autosched_pool_free, and a constant (the first result free()'d moves
# glibc's mmap threshold: the next comes from its heap) independent of N
# when they are free()'d; the malloc library pays faults every call.
# Results equal malloc's bit for bit, from one thread and two at once
# (also under ASan, where only the given-back count is checked).
#   test_build_pool.sh AUTOSCHED SOURCE_DIR POOL_CALLS
. "$(dirname "$0")/../checks.sh"
args AS SRC CALLS
FIX=$SRC/tests/export/fixtures
scratch bpool tmp

for b in pool malloc; do
	TMPDIR=$T/tmp deadline 300 "$AS" build "$FIX/pool.mlir" --untuned \
	    --rest-threads 1 --buffers $b -o "$T/$b.so" 2> "$T/err_$b"
	check "$b: build exits 0" eq "$?" 0
	check "$b: says so" grep -q "$b.so: math [a-z]*, buffers $b" "$T/err_$b"
done
check "pool: exports its two functions" bash -c "nm -D --defined-only '$T/pool.so' | grep -q ' autosched_pool_free\$' && nm -D --defined-only '$T/pool.so' | grep -q ' autosched_pool_release\$'"
check "malloc: no pool" bash -c "! nm -D --defined-only '$T/malloc.so' | grep -q autosched_pool"

faults() {	# faults LIB N free|give: minor faults of calls 2..N
	nolsan deadline 120 "$CALLS" "$T/$1.so" "$T/malloc.so" "$2" "$3" > "$T/out" 2>&1
	check "$1 $2 $3: results equal malloc's" eq "$?" 0
	sed -n 's/^faults after the first call: \([0-9]*\) .*/\1/p' "$T/out"
}
g20=$(faults pool 20 give)
g5=$(faults pool 5 give)
f20=$(faults pool 20 free)
f5=$(faults pool 5 free)
m20=$(faults malloc 20 free)
echo "faults after the first call: pool, given back: $g5 (5 calls), $g20 (20); pool, free(): $f5, $f20; malloc: $m20 (20)"
check "pool, given back: no fault after the first call" eq "$g20" 0
check "pool, given back (5 calls): none" eq "$g5" 0
# glibc's malloc only: ASan's (a sanitized caller) keeps freed blocks in
# quarantine and maps new ones.
if ! nm "$CALLS" 2> /dev/null | grep -q __asan_init; then
	check "pool, free(): the same few faults for 5 and 20 calls" eq "$f20" "$f5"
	check "pool, free(): fewer than one result's pages (129)" lt "${f20:-999}" 130
fi
check "malloc: faults every call" ge "${m20:-0}" 1000

check "scratch folders removed" eq "$(ls -A "$T/tmp")" ""
echo "build_pool: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
