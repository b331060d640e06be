#!/usr/bin/env bash
# autosched-measure's options take the cfg's bounds (cfg.h): a value out of
# them, not a number, nan or inf is refused at once, exit 2, naming the
# option and what was expected (a negative --warmup used to spin forever).
#   test_measure_args.sh AUTOSCHED_MEASURE
. "$(dirname "$0")/../checks.sh"
args M
scratch margs
ref=(--ref openblas --shape 1x8x8x8 --types f32,f32,f32)

# refused OPTION VALUE EXPECTED-MESSAGE
refused() {
	timeout 10 "$M" "${ref[@]}" "$1" "$2" > "$T/out" 2> "$T/err"
	check "$1 $2: exit 2" eq "$?" 2
	check "$1 $2: says so" grep -qF "autosched-measure: $1: $3" "$T/err"
	check "$1 $2: nothing measured" eq "$(wc -c < "$T/out")" 0
}
refused --warmup -5 "-5 is out of range; expected 0..1000000"
refused --warmup 1000001 "1000001 is out of range; expected 0..1000000"
refused --warmup 5x "'5x' is not an integer; expected 0..1000000"
refused --warmup 99999999999999999999 "99999999999999999999 is out of range"
refused --min-time nan "'nan' is not a number; expected 0..3600 seconds"
refused --min-time inf "'inf' is not a number"
refused --min-time -0.5 "-0.5 is out of range; expected 0..3600 seconds"
refused --min-time 3601 "3601 is out of range"
refused --min-time "" "'' is not a number"
refused --reps 0,10 "0 is out of range; expected 1..1000000"
refused --reps 3,1000001 "1000001 is out of range"
refused --reps 5,3 "5,3: MAX is below MIN"
refused --reps 3 "'3' is not two integers"
refused --threads 0 "0 is out of range; expected 1.."
refused --threads -1 "-1 is out of range"
refused --seed -1 "-1 is out of range; expected 0..9223372036854775807"
refused --verify 2 "2 is out of range; expected 0..1"
refused --trans 0,2 "2 is out of range; expected 0..1"

# The bounds themselves pass.
timeout 10 "$M" "${ref[@]}" --warmup 0 --min-time 0 --reps 1,1 --threads 1 \
    --seed 0 --verify 0 --trans 0,0 > "$T/out" 2> "$T/err"
check "the lower bounds pass (exit 0)" eq "$?" 0
check "the lower bounds pass: a result" grep -q '"status":"ok"' "$T/out"

echo "measure_args: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
