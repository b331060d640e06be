#!/usr/bin/env bash
# Programs only from trusted places (issue 31): IREE's tools, and any
# program run by name, are taken only from absolute folders owned by root or
# this user and writable by no one else. A planted iree-compile in a
# world-writable, relative or foreign PATH folder is skipped with a warning
# naming why, and `autosched --version` runs nothing it has not checked.
#   test_iree_tools.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
scratch iree-tools
export AUTOSCHED_IREE_VENV=$T/no-venv
# plant DIR MARK: the three tools in DIR, each touching MARK when run.
plant() {
	mkdir -p "$1"
	for t in iree-compile iree-run-module iree-benchmark-module; do
		printf '#!/bin/sh\ntouch %s\necho "IREE compiler version 9.9.9 @ planted"\n' "$2" > "$1/$t"
		chmod 755 "$1/$t"
	done
}
# version WHAT PATHDIR: autosched --version with PATHDIR first on PATH.
version() {
	(cd "$T" && PATH="$2:$PATH" timeout 20 "$AS" --version > "$T/out.txt" 2> "$T/err.txt")
	check "$1: --version exits 0" eq "$?" 0
}

# A world-writable folder.
plant "$T/w" "$T/ran.w"
chmod 777 "$T/w"
version "world-writable folder" "$T/w"
check "world-writable: nothing planted ran" test ! -e "$T/ran.w"
check "world-writable: the warning says why" grep -qF \
    "PATH folder $T/w: IREE's tools there skipped: writable by its group and others (mode 0777)" "$T/err.txt"
check "world-writable: IREE reported not found" grep -q "IREE: not found" "$T/out.txt"

# A group-writable tool in a sound folder.
plant "$T/g" "$T/ran.g"
chmod 775 "$T/g/iree-compile"
version "group-writable tool" "$T/g"
check "group-writable tool: nothing planted ran" test ! -e "$T/ran.g"
check "group-writable tool: the warning names the tool" grep -qF \
    "PATH folder $T/g: IREE's tools there skipped: iree-compile: writable by its group (mode 0775)" "$T/err.txt"

# A relative folder (from the working directory).
plant "$T/rel" "$T/ran.rel"
version "relative folder" "rel"
check "relative folder: nothing planted ran" test ! -e "$T/ran.rel"
check "relative folder: the warning says why" grep -qF \
    "PATH folder rel: IREE's tools there skipped: not an absolute folder" "$T/err.txt"

# Another user's folder (only root can make one).
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	plant "$T/o" "$T/ran.o"
	chown -R nobody "$T/o"
	version "another user's folder" "$T/o"
	check "another user's folder: nothing planted ran" test ! -e "$T/ran.o"
	check "another user's folder: the warning says why" grep -qF \
	    "PATH folder $T/o: IREE's tools there skipped: owned by uid $(id -u nobody), neither root nor this user" "$T/err.txt"
fi

# A sound folder: taken, and its iree-compile asked its version.
plant "$T/ok" "$T/ran.ok"
chmod 755 "$T/ok"
version "trusted folder" "$T/ok"
check "trusted folder: its tools are used" grep -qF "IREE 9.9.9 @ planted ($T/ok/iree-compile" "$T/out.txt"
check "trusted folder: no warning" test ! -s "$T/err.txt"
# The untrusted folder first on PATH is passed over for the trusted one.
(cd "$T" && PATH="$T/w:$T/ok:$PATH" timeout 20 "$AS" --version > "$T/out.txt" 2> "$T/err.txt")
check "w then ok: the trusted folder's tools" grep -qF "($T/ok/iree-compile" "$T/out.txt"
check "w then ok: nothing from w ran" test ! -e "$T/ran.w"

# iree_bin = an untrusted folder in the user's own run: refused, exit 2.
mkdir -p "$T/job"
cp "$SRC/tests/job/fixtures/"*.mlir "$T/job/" 2> /dev/null
cat > "$T/job/m.mlir" <<MLIR
func.func @m(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
MLIR
printf '[Env]\ninput_file = m.mlir\nbackend = iree\niree_bin = %s\n[SearchStrategy]\nn_trial = 1\n' "$T/w" > "$T/job/j.cfg"
timeout 60 "$AS" run "$T/job/j.cfg" --db "$T/job/j.db" > /dev/null 2> "$T/err.txt"
check "iree_bin untrusted: run exits 2" eq "$?" 2
check "iree_bin untrusted: says why" grep -qF "iree_bin = $T/w: writable by its group and others (mode 0777)" "$T/err.txt"
check "iree_bin untrusted: nothing planted ran" test ! -e "$T/ran.w"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
