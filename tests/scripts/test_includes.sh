#!/usr/bin/env bash
# The include check (scripts/check-includes.sh, scripts/layers): the tree's
# includes between folders all point down; in a copy of its sources, a
# planted include pointing up (store -> daemon, a cycle: daemon includes the
# store), one sideways and a folder missing from the layers each fail,
# named by file and line.
#   test_includes.sh SRC
src=$1
. "$src/tests/checks.sh"
scratch includes
run() { deadline 60 bash "$src/scripts/check-includes.sh" "$@" > "$T/out" 2>&1; }

# 1. The tree as it is.
run "$src"
check "the tree passes the include check" eq "$?" 0
check "it says so" grep -q 'all pointing down' "$T/out"

# 2. A copy of the sources (and the layers), each plant undone after.
mkdir -p "$T/tree/scripts"
cp "$src/scripts/layers" "$src/scripts/check-includes.sh" "$T/tree/scripts/"
for d in $(grep -v '^#' "$src/scripts/layers"); do
	[ -d "$src/$d" ] && cp -r "$src/$d" "$T/tree/"
done
run "$T/tree"
check "the copy passes too" eq "$?" 0

cp "$T/tree/store/store.c" "$T/store.c"
n=$(($(wc -l < "$T/tree/store/store.c") + 1))
echo '#include "daemon/daemon.h"' >> "$T/tree/store/store.c"
run "$T/tree"
check "an include up (store -> daemon -> store) fails" eq "$?" 1
check "and only it" eq "$(grep -c '#include' "$T/out")" 1
check "named by file and line" grep -q \
    "^store/store.c:$n: #include \"daemon/daemon.h\": daemon is above store" "$T/out"
cp "$T/store.c" "$T/tree/store/store.c"

cp "$T/tree/html/chart.c" "$T/chart.c"
sed -i '1i #include "export/export.h"' "$T/tree/html/chart.c"
sed -i 's/^html$/html export/; /^export$/d' "$T/tree/scripts/layers"
run "$T/tree"
check "an include beside (html -> export, one layer) fails" eq "$?" 1
check "named by file and line" grep -q \
    '^html/chart.c:1: #include "export/export.h": export is beside html' "$T/out"
check "and only it" eq "$(grep -c '#include' "$T/out")" 1
cp "$T/chart.c" "$T/tree/html/chart.c"
cp "$src/scripts/layers" "$T/tree/scripts/layers"

mkdir "$T/tree/newmod"
echo '#include "util/util.h"' > "$T/tree/newmod/newmod.c"
run "$T/tree"
check "a folder not in the layers fails" eq "$?" 1
check "named" grep -q '^newmod/: a folder of C sources not in' "$T/out"
rm -r "$T/tree/newmod"

run "$T/tree" "$T/no-such-layers"
check "a missing layers file is bad usage (exit 2)" eq "$?" 2

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
