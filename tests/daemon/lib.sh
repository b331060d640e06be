# Shared by the daemon's shell tests (sourced): a temporary folder, tiny jobs,
# autoschedd started and stopped by its pid, waits with deadlines, and checks
# that print the closing "N passed, N failed" line.
# Usage of a test: bash test_X.sh AUTOSCHED AUTOSCHEDD SOURCE_DIR NOTIFY_SINK
set -u
AS=$1
ASD=$2
SRC=$3
SINK=${4:-}
. "$(dirname "${BASH_SOURCE[0]}")/../deadline.sh"
T=$(mktemp -d /tmp/autosched-daemon-test.XXXXXX)
DB=$T/queue.db
export AUTOSCHED_WORK=$T/work
unset AUTOSCHED_DB NOTIFY_SOCKET WATCHDOG_USEC
PASSED=0
FAILED=0
DPID=

cleanup() {
	if [ -n "$DPID" ]; then kill -9 "$DPID" 2>/dev/null; fi
	wait 2>/dev/null
	if [ "$FAILED" -ne 0 ] && [ -f "$T/daemon.log" ]; then
		echo "--- daemon log:" >&2
		tail -n 40 "$T/daemon.log" >&2
	fi
	rm -rf "$T"
}
trap cleanup EXIT

ok() { PASSED=$((PASSED + 1)); }
fail() { echo "FAIL: $*" >&2; FAILED=$((FAILED + 1)); }
# check DESC COMMAND...: the command must succeed.
check() { local d=$1; shift; if "$@"; then ok; else fail "$d"; fi; }
finish() { echo "$PASSED passed, $FAILED failed"; [ "$FAILED" -eq 0 ]; }

# sqlite3 on a store the daemon may be writing.
q() { local db=$1; shift; sqlite3 -cmd ".timeout 10000" "$db" "$@"; }

# wait_for SECONDS COMMAND...: poll until the command succeeds; 1 on timeout.
wait_for() {
	local end=$(( $(date +%s%N) / 1000000 + $1 * 1000 )); shift
	until "$@"; do
		if [ $(( $(date +%s%N) / 1000000 )) -ge "$end" ]; then
			return 1
		fi
		sleep 0.05
	done
}

# mkjob NAME M N K NTRIAL [TUNER]: a tiny matmul and its cfg in $T.
mkjob() {
	local name=$1 m=$2 n=$3 k=$4 trials=$5 tuner=${6:-GridTuner}
	cat > "$T/$name.mlir" <<MLIR
func.func @$name(%a: tensor<${m}x${k}xf32>, %b: tensor<${k}x${n}xf32>,
    %c: tensor<${m}x${n}xf32>) -> tensor<${m}x${n}xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<${m}x${k}xf32>, tensor<${k}x${n}xf32>)
      outs(%c : tensor<${m}x${n}xf32>) -> tensor<${m}x${n}xf32>
  return %0 : tensor<${m}x${n}xf32>
}
MLIR
	cat > "$T/$name.cfg" <<CFG
[Env]
input_file = $name.mlir
backend = mlir-cpu

[SearchSpace]
tile_m = [8,16,32]
tile_n = [16,32]
tile_k = [8,16,32]

[SearchStrategy]
tuner = $tuner
n_trial = $trials

[Measure]
min_time = 0.02
warmup = 1
min_reps = 3
confirm_top = 0
CFG
}

# The daemon's own configuration.
cat > "$T/autoschedd.conf" <<CONF
[autoschedd]
log_level = debug
poll_interval = 30
CONF

# spool_conf [LINE...]: the folder SPOOL ($T/spool) made, and the daemon's
# configuration watching it, LINEs added.
spool_conf() {
	SPOOL=$T/spool
	mkdir -p "$SPOOL"
	{
		printf '[autoschedd]\nlog_level = debug\npoll_interval = 30\n'
		printf 'spool = %s\n' "$SPOOL"
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} > "$T/autoschedd.conf"
}

# start_daemon [ARGS...]: autoschedd -d on $DB, ready when its socket is bound.
start_daemon() {
	rm -f "$DB.wake"
	"$ASD" -d -f "$T/autoschedd.conf" --db "$DB" "$@" >> "$T/daemon.log" 2>&1 &
	DPID=$!
	wait_for 20 test -S "$DB.wake" || fail "autoschedd did not start"
}

# stop_daemon SIGNAL: send it and reap; sets DRC to the exit status.
stop_daemon() {
	kill -"$1" "$DPID" 2>/dev/null
	wait "$DPID"
	DRC=$?
	DPID=
}

state() { q "$DB" "SELECT state FROM jobs WHERE id = $1"; }
is_state() { [ "$(state "$1")" = "$2" ]; }
tune_trials() { q "$DB" "SELECT count(*) FROM trials WHERE job_id = $1 AND phase = 'tune'"; }
has_trials() { [ "$(tune_trials "$1")" -ge "$2" ]; }
all_ended() { [ "$(q "$DB" "SELECT count(*) FROM jobs WHERE state IN ('queued','running')")" -eq 0 ]; }

# No (op, target, config) measured twice in the tune phase, and a sound file.
no_duplicates() {
	[ -z "$(q "$1" "SELECT op_id, config_name FROM trials WHERE phase = 'tune'
	    GROUP BY op_id, target_id, config_name HAVING count(*) > 1")" ]
}
integrity_ok() { [ "$(q "$1" "PRAGMA integrity_check")" = "ok" ]; }

# The tune trials of an op as "config status" lines (unstable counts as ok:
# it is noise, not a different outcome).
op_trials() {
	q "$1" "SELECT t.config_name || ' ' || CASE t.status WHEN 'unstable'
	    THEN 'ok' ELSE t.status END FROM trials t JOIN ops o ON o.id = t.op_id
	    WHERE t.phase = 'tune' AND o.signature = '$2' ORDER BY 1"
}
