#!/usr/bin/env bash
# `autosched build` refuses, before any tool runs, a program whose functions
# C cannot call by name or that would clash with the C library (exit 2, the
# function and what was expected named); and builds a program without any
# tunable op (--untuned) into a library that works.
#   test_build_names.sh AUTOSCHED CALL_PROGRAM
. "$(dirname "$0")/../checks.sh"
args AS CALL
scratch bnames tmp

# refused NAME WHY: a program whose second function is @NAME.
refused() {
	cat > "$T/p.mlir" <<M
func.func @ok(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
func.func @$1(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
M
	TMPDIR=$T/tmp "$AS" build "$T/p.mlir" --untuned -o "$T/p.so" 2> "$T/err"
	check "@$1: exit 2" eq "$?" 2
	check "@$1: the function, where and why" grep -qF "p.mlir:4:1: function @$1: $2" "$T/err"
	check "@$1: what was expected" grep -q 'expected a C identifier' "$T/err"
	check "@$1: nothing written" [ ! -e "$T/p.so" ]
}
refused '"a-b"' "not a C identifier"
refused '"x.y"' "not a C identifier"
refused '"9lives"' "not a C identifier"
refused '"malloc"' "a C library function (libc)"
refused '"free"' "a C library function (libc)"
refused '"main"' "taken by the program's"
refused '"expf"' "a C math library function (libm)"
refused '"int"' "a C keyword"
refused '"__x"' "reserved in C"
refused '"_Matrix"' "reserved in C"
refused '"_mlir_ciface_ok"' "in the namespace of MLIR's C interface"
check "no tool ran: no scratch folder left" eq "$(ls -A "$T/tmp")" ""
# A declaration (no body) is not exported: its name is not checked.
cat > "$T/decl.mlir" <<'M'
func.func private @"ext.fn"(tensor<8xf32>) -> tensor<8xf32>
func.func @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.add ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
M
TMPDIR=$T/tmp "$AS" build "$T/decl.mlir" --untuned -o "$T/decl.so" 2> "$T/err"
check "a declaration's name is not refused" eq "$(grep -c 'expected a C identifier' "$T/err")" 0

# No tunable op at all: --untuned still makes a library, and it adds.
sed '1d' "$T/decl.mlir" > "$T/noop.mlir"
TMPDIR=$T/tmp "$AS" build "$T/noop.mlir" --untuned -o "$T/noop.so" 2> "$T/err"
check "no tunable op, --untuned: exit 0" eq "$?" 0
check "no tunable op: 0 tuned ops" grep -q '0 tuned ops' "$T/err"
check "no tunable op: _mlir_ciface_add called from C adds" python3 - "$T/noop.so" <<'P'
import ctypes, sys
class M1(ctypes.Structure):
    _fields_ = [("alloc", ctypes.POINTER(ctypes.c_float)), ("aligned", ctypes.POINTER(ctypes.c_float)),
                ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * 1), ("strides", ctypes.c_int64 * 1)]
lib = ctypes.CDLL(sys.argv[1])
a = (ctypes.c_float * 8)(*range(8)); b = (ctypes.c_float * 8)(*[10] * 8)
ma = M1(a, a, 0, (ctypes.c_int64 * 1)(8), (ctypes.c_int64 * 1)(1))
mb = M1(b, b, 0, (ctypes.c_int64 * 1)(8), (ctypes.c_int64 * 1)(1))
r = M1()
lib._mlir_ciface_add(ctypes.byref(r), ctypes.byref(ma), ctypes.byref(mb))
got = [r.aligned[r.offset + i * r.strides[0]] for i in range(r.sizes[0])]
sys.exit(0 if got == [10.0 + i for i in range(8)] else 1)
P
check "every library built opens with RTLD_NOW" "$CALL" load "$T"/*.so
check "scratch folders removed" eq "$(ls -A "$T/tmp")" ""

echo "build_names: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
