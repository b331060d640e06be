# Shared by the shell tests (sourced): the pass/fail counters and the checks
# that keep them. A test ends with: echo "$pass passed, $fail failed".
pass=0
fail=0

check() {	# check DESCRIPTION COMMAND...: the command must succeed
	local what=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $what" >&2
	fi
}
eq() { [ "$1" = "$2" ] || { echo "  got '$1', want '$2'" >&2; return 1; }; }
ge() { [ "$1" -ge "$2" ] || { echo "  got $1, want >= $2" >&2; return 1; }; }
