# Sourced by every shell test (through checks.sh or daemon/lib.sh): no tool
# a test starts runs without a deadline. deadline wraps one command; the
# watchdog bounds the whole script, so a hang anywhere fails in minutes,
# naming what it was waiting for, never at ctest's timeout.
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/deadline.sh"

# The test's own deadline: AUTOSCHED_TEST_BUDGET seconds (default 600, under
# ctest's timeout) for the whole script. Past it, a watchdog prints what the
# test was waiting for (every process under it, with its age), kills them,
# and the test exits 124 (its EXIT trap still cleans up).
_descendants() {	# _descendants PID: every process under PID, depth first
	local c
	for c in $(ps -o pid= --ppid "$1" 2> /dev/null); do
		echo "$c"
		_descendants "$c"
	done
}
_watchdog() {
	local me=$1 budget=$2 end own pids
	trap - EXIT
	end=$((SECONDS + budget))
	while [ "$SECONDS" -lt "$end" ]; do
		sleep 1
		kill -0 "$me" 2> /dev/null || exit 0
	done
	own=$BASHPID
	pids=$(_descendants "$me" | grep -vx "$own" | grep -vxF "$(_descendants "$own")")
	{
		echo "TIMEOUT: ${0##*/} ran past its ${budget} s budget (AUTOSCHED_TEST_BUDGET); it was waiting for:"
		# shellcheck disable=SC2086
		[ -n "$pids" ] && ps -o pid=,etimes=,args= -p $(echo $pids | tr ' ' ,) | sed 's/^/  /'
	} >&2
	kill -USR1 "$me" 2> /dev/null
	# shellcheck disable=SC2086
	[ -n "$pids" ] && kill -KILL $pids 2> /dev/null
	exit 0
}
trap 'echo "FAIL: ${0##*/}: stopped by its deadline" >&2; exit 124' USR1
_watchdog $$ "${AUTOSCHED_TEST_BUDGET:-600}" < /dev/null > /dev/null &
# (Out of the job table: a test's own "wait" for its children must not wait
# for the watchdog.)
disown $!
