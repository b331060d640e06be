# Sourced by the project's scripts, benchmarks and tests: no tool they start
# runs without a deadline.
# deadline SECONDS COMMAND...: COMMAND (a program, not a shell function)
# under a time limit. Past it, COMMAND and its process group are killed,
# "TIMEOUT: ..." naming the command goes to stderr, and the status is 124.
deadline() {
	local s=$1 rc
	shift
	timeout -k 5 "$s" "$@"
	rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "TIMEOUT: killed after $s s: $*" >&2
		return 124
	fi
	return "$rc"
}
