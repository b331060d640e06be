#!/usr/bin/env bash
# No tool a test starts runs without a deadline (tests/deadline.sh): a fake
# iree-compile that hangs, first under `deadline`, then inside the real
# IREE test with a short budget: each fails within its limit and the message
# names the command, instead of waiting for ctest's timeout.
#   test_deadline.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
scratch deadline

# Fake IREE tools that never answer.
mkdir -p "$T/fake"
for t in iree-compile iree-run-module iree-benchmark-module; do
	printf '#!/bin/sh\nsleep 1017\nexit 0\n' > "$T/fake/$t"
	chmod 755 "$T/fake/$t"
done

# 1. deadline: the hanging tool killed at its limit, named, status 124.
start=$SECONDS
PATH=$T/fake:$PATH deadline 2 iree-compile prog.mlir -o out.vmfb 2> "$T/err1"
rc=$?
check "deadline: status 124" eq "$rc" 124
check "deadline: within its limit" lt $((SECONDS - start)) 10
check "deadline: names the command" grep -q '^TIMEOUT: killed after 2 s: iree-compile prog.mlir -o out.vmfb$' "$T/err1"
check "deadline: nothing of it left running" bash -c "! pgrep -f '^sleep 1017' > /dev/null"

# 2. The IREE test with the fake tools first on PATH and a 15 s budget:
# it fails in about that, saying what it was waiting for (a fake tool).
start=$SECONDS
PATH=$T/fake:$PATH AUTOSCHED_TEST_BUDGET=15 \
    bash "$SRC/tests/backends/test_iree.sh" "$AS" "$SRC" > "$T/out2" 2> "$T/err2"
rc=$?
check "a hanging IREE: the test fails" test "$rc" -ne 0
check "... within its budget" lt $((SECONDS - start)) 40
check "... saying it ran past its budget" grep -q 'TIMEOUT: test_iree.sh ran past its 15 s budget' "$T/err2"
check "... naming the tool it waited for" grep -q "$T/fake/iree-" "$T/err2"
check "... nothing of it left running" bash -c "! pgrep -f '^sleep 1017' > /dev/null"
[ "$fail" -eq 0 ] || cat "$T/err2" >&2

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
