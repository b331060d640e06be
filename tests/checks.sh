# Shared by the shell tests (sourced, under set -u): their arguments by
# name, a scratch folder, the pass/fail counters and the checks that keep
# them, and the deadlines that turn a hang into a failure naming the
# command. A test ends with: echo "$pass passed, $fail failed".
set -u
pass=0
fail=0
# The test's arguments, as ctest passed them (sourced with none of its own,
# this file sees the test's); args names them.
_test_args=("$@")

. "$(dirname "${BASH_SOURCE[0]}")/deadline.sh"

# args NAME...: each NAME set to the test's argument in its place (the
# first NAME to $1, ...); exit 2 with the usage when one is missing.
args() {
	local _i=0 _n
	if [ "${#_test_args[@]}" -lt $# ]; then
		echo "usage: ${0##*/} $*" >&2
		exit 2
	fi
	for _n; do
		printf -v "$_n" '%s' "${_test_args[_i]}"
		_i=$((_i + 1))
	done
}

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
# nolsan COMMAND...: a program that calls into a built library, run with
# LeakSanitizer off (ASan builds): the library's OpenMP workers outlive the
# program's main, and LSan's tracer cannot stop them (it crashes at exit).
nolsan() { ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$@"; }
eq() { [ "$1" = "$2" ] || { echo "  got '$1', want '$2'" >&2; return 1; }; }
ge() { [ "$1" -ge "$2" ] || { echo "  got $1, want >= $2" >&2; return 1; }; }
lt() { [ "$1" -lt "$2" ] || { echo "  got $1, want < $2" >&2; return 1; }; }

# scratch NAME [DIR...]: T, a new folder /tmp/autosched-NAME-XXXXXX removed
# when the test exits, with the folders T/DIR made in it; with KEEP=DIR in
# the environment, T is DIR and is kept, to look at after a failure.
scratch() {
	local d
	if [ -n "${KEEP:-}" ]; then
		T=$KEEP
		mkdir -p "$T"
	else
		T=$(mktemp -d "/tmp/autosched-$1-XXXXXX")
		trap 'rm -rf "$T"' EXIT
	fi
	shift
	for d; do
		mkdir -p "$T/$d"
	done
}

# private_work: the runs of the test use a work folder in T and no store
# the environment names (AUTOSCHED_WORK, AUTOSCHED_DB).
private_work() {
	export AUTOSCHED_WORK=$T/work
	unset AUTOSCHED_DB
}

# slurm_up NAME SRC: T (as scratch NAME) with the local two-node cluster of
# SRC/scripts/slurm-local.sh running under T/cluster and SLURM_CONF exported;
# when the test exits, $bg (a job the test left in the background) killed,
# the cluster taken down, T removed (kept with KEEP=DIR). Exit 77 with the
# reason when the cluster cannot start here.
slurm_up() {
	scratch "$1"
	slurm_src=$2
	export SLURM_LOCAL_DIR=$T/cluster
	export PATH="$PATH:/usr/sbin"
	trap slurm_down EXIT
	if ! up=$(bash "$slurm_src/scripts/slurm-local.sh" up 2>&1); then
		echo "SKIP: no local Slurm cluster here (scripts/slurm-local.sh up):" >&2
		echo "$up" | tail -5 >&2
		exit 77
	fi
	export SLURM_CONF=$SLURM_LOCAL_DIR/slurm.conf
}
slurm_down() {
	[ -n "${bg:-}" ] && kill "$bg" 2>/dev/null
	bash "$slurm_src/scripts/slurm-local.sh" down
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}

# slurm_queue_left: the jobs left in Slurm's queue after up to 5 s (0 once
# it is empty).
slurm_queue_left() {
	local left=1
	for _ in $(seq 50); do
		left=$(squeue -h 2>/dev/null | wc -l)
		[ "$left" -eq 0 ] && break
		sleep 0.1
	done
	echo "$left"
}

# q DB SQL: sqlite3's answer (waiting up to 10 s for a writer's lock, as
# a reader beside a running job must).
q() { sqlite3 -cmd ".timeout 10000" "$1" "$2"; }

# dev_like NAME DIR: a character device like /dev/NAME (null or full) to aim
# a writer at. A private node in DIR when we may make one (root), so that a
# writer that wrongly replaces its target destroys only that copy, not the
# machine's /dev/NAME; else /dev/NAME itself (then /dev is not ours to write).
dev_like() {
	local mm
	case $1 in null) mm="1 3" ;; full) mm="1 7" ;; *) return 1 ;; esac
	if mknod "$2/$1" c $mm 2> /dev/null; then echo "$2/$1"; else echo "/dev/$1"; fi
}

# link_like_stdout DIR: a symbolic link like /dev/stdout, private in DIR.
link_like_stdout() {
	ln -s /proc/self/fd/1 "$1/stdout" && echo "$1/stdout"
}

# chain_mlir N: on stdout @chain, N elementwise adds one after the other
# (x + N): a program of many ops, which build compiles in several pieces.
chain_mlir() {
	local n=$1 i

	echo "func.func @chain(%x: tensor<64xf32>) -> tensor<64xf32> {"
	echo "  %one = arith.constant dense<1.0> : tensor<64xf32>"
	echo "  %v0 = arith.addf %x, %one : tensor<64xf32>"
	for i in $(seq 1 $((n - 1))); do
		echo "  %v$i = arith.addf %v$((i - 1)), %one : tensor<64xf32>"
	done
	echo "  return %v$((n - 1)) : tensor<64xf32>"
	echo "}"
}

# space KEY=VALUES...: on stdout a [SearchSpace] line "KEY = [VALUES]" per
# argument, in order (space tile_m=16,32 threads=1).
space() {
	local kv
	for kv; do
		printf '%s = [%s]\n' "${kv%%=*}" "${kv#*=}"
	done
}

# grid_cfg INPUT N_TRIAL TIMEOUT [ENV_LINES]: on stdout the cfg of a small
# grid job of INPUT (a few seconds): ENV_LINES added to its [Env], its
# [SearchSpace] lines from stdin, quick measurements (min_time $MIN_TIME,
# default 0.005), the best $CONFIRM_TOP (default 1) confirmed.
grid_cfg() {
	printf '[Env]\ninput_file = %s\n' "$1"
	[ -z "${4:-}" ] || printf '%s\n' "$4"
	printf '[SearchSpace]\n'
	cat
	printf '[SearchStrategy]\ntuner = grid\nn_trial = %s\n' "$2"
	printf '[Measure]\nmin_time = %s\nmin_reps = 3\nconfirm_top = %s\n' \
	    "${MIN_TIME:-0.005}" "${CONFIRM_TOP:-1}"
	printf 'timeout = %s\n' "$3"
}

# tuned_store AS DIR FIXTURES [ENV_LINE]: DIR/s.db with best configs for the
# two ops of FIXTURES/tuned.mlir (a few seconds), from DIR/a.cfg (ENV_LINE
# added to its [Env]); the run's output in DIR/run.txt. The default (which
# this CPU decides) is made to fail, so that each op's best is a tuned
# tile_16x16x16 config on every machine, not whichever the timings favour.
tuned_store() {
	local as=$1 dir=$2
	cp "$3/tuned.mlir" "$dir/"
	grid_cfg tuned.mlir 2 5 "${4:-}" > "$dir/a.cfg" <<'C'
tile_m = [16,32]
tile_n = [16]
tile_k = [16]
vector_m = [4,6]
vector_n = [16]
C
	AUTOSCHED_TEST_FAULT='compile_fail:!tile_16x16x16' deadline 300 \
	    "$as" run "$dir/a.cfg" --db "$dir/s.db" --quiet > "$dir/run.txt" 2>&1
	check "tuning run exits 0" eq "$?" 0
}
