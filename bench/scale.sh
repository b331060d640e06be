#!/usr/bin/env bash
# Scale-out: how many trials a minute autosched measures with executor =
# local and = slurm (1 and 2 nodes of the local cluster of
# scripts/slurm-local.sh), and what the recorded sweeps of bench/data/ say
# it would do on 1…64 nodes. Prints two tables; takes 1-3 minutes.
#   bench/scale.sh               BUILD=build (autosched built there)
# Without root or the Slurm packages the live Slurm rows are skipped and the
# model uses an assumed step overhead (said in its header).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
AS=$build/daemon/autosched
[ -x "$AS" ] || { echo "scale.sh: build autosched first ($AS missing)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "scale.sh: sqlite3 missing" >&2; exit 2; }
T=$(mktemp -d /tmp/autosched-scale-XXXXXX)
export SLURM_LOCAL_DIR=$T/cluster
export PATH="$PATH:/usr/sbin"
cleanup() {
	bash "$top/scripts/slurm-local.sh" down >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

# The job: mm512 (the sweep's op), 16 configs of its space, each measured
# for 0.25 s, so that a measurement costs about as much as a compile.
mkjob() {	# mkjob NAME [ENV LINES]
	mkdir -p "$T/$1"
	cp "$top/bench/sweeps/mm512.mlir" "$T/$1/"
	{
		printf '[Env]\ninput_file = mm512.mlir\n'
		printf '%s' "${2:-}"
		printf '[SearchSpace]\ntile_m = [32,64]\ntile_n = [64,128]\n'
		printf 'tile_k = [64,128]\nvector_m = [4,8]\nvector_n = [16]\n'
		printf 'vector_k = [1]\nthreads = [1]\n'
		printf '[SearchStrategy]\ntuner = grid\nn_trial = 16\n'
		printf '[Measure]\nmin_time = 0.25\nmin_reps = 3\nmax_reps = 100000\n'
		printf 'confirm_top = 1\ntimeout = 30\n'
	} > "$T/$1/a.cfg"
}

# run NAME: the job from a fresh store; prints "wall tune_per_min measure_s"
run() {
	local t0 t1 db=$T/$1/s.db
	t0=$(date +%s.%N)
	# A cache of its own: every run compiles its kernels.
	if ! AUTOSCHED_WORK=$T/$1/work "$AS" run "$T/$1/a.cfg" --db "$db" \
	    --quiet > "$T/$1/out.txt" 2>&1; then
		echo "scale.sh: $1 failed:" >&2
		tail -5 "$T/$1/out.txt" >&2
		return 1
	fi
	t1=$(date +%s.%N)
	sqlite3 "$db" "select printf('%.1f %.1f %.3f', $t1 - $t0,
	    (count(*) - 1) * 60.0 / (max(created) - min(created)), avg(measure_s))
	    from trials where phase = 'tune'"
}

echo "== live: the same job (mm512, 16 tune trials of 0.25 s) on this machine ($(nproc) CPUs)"
printf '%-26s %8s %14s %12s\n' executor "wall s" "tune trials/min" "measure_s"
mkjob local
local_row=$(run local) || exit 1
set -- $local_row
printf '%-26s %8s %14s %12s\n' "local (one at a time)" "$1" "$2" "$3"
local_ms=$3
overhead=
if up=$(bash "$top/scripts/slurm-local.sh" up 2>&1); then
	export SLURM_CONF=$SLURM_LOCAL_DIR/slurm.conf
	for p in one autosched; do
		mkjob "slurm-$p" "executor = slurm
slurm_partition = $p
slurm_step_timeout = 120
"
		row=$(run "slurm-$p") || continue
		set -- $row
		label="slurm, 1 node (n1)"
		[ "$p" = autosched ] && label="slurm, 2 nodes (n1, n2)"
		printf '%-26s %8s %14s %12s\n' "$label" "$1" "$2" "$3"
		overhead=$(awk -v a="$3" -v b="$local_ms" 'BEGIN { d = a - b; if (d < 0) d = 0; printf "%.3f", d }')
	done
	bash "$top/scripts/slurm-local.sh" down >/dev/null 2>&1
else
	echo "slurm rows skipped: no local cluster here ($(echo "$up" | tail -1))"
fi
echo "(the two simulated nodes share this machine's CPUs with the coordinator's compiles)"

assumed=
if [ -z "$overhead" ]; then
	overhead=0.15
	assumed=" (assumed: no live Slurm run)"
fi
echo
echo "== model: trials/min on N nodes from the recorded sweeps (bench/data)"
echo "coordinator per trial c = compile + tuner and store (the gap between two"
echo "trials not spent compiling or measuring, median); a step per trial ="
echo "measure + step overhead ${overhead} s${assumed} (the engine compiles the"
echo "next candidate while the steps run); trials/min = 60 / max(c, step / N)."
for db in "$top"/bench/data/*.db; do
	name=$(basename "$db" .db)
	stats=$(sqlite3 "$db" "with g as (select created - lag(created) over
	    (order by id) - compile_s - measure_s as r from trials where
	    phase = 'tune'), s as (select r from g where r is not null order by r)
	    select printf('%.4f %.4f %.4f %d', (select avg(compile_s) from trials
	    where phase = 'tune'), (select avg(measure_s) from trials where
	    phase = 'tune'), max(0, (select r from s limit 1 offset
	    (select count(*) / 2 from s))), (select count(*) from trials where
	    phase = 'tune'))")
	echo "$name $stats"
done > "$T/model.txt"
awk -v o="$overhead" '
	{ name[NR] = $1; comp[NR] = $2; meas[NR] = $3; rest[NR] = $4; n[NR] = $5 }
	END {
		printf "%-6s", "sweep"
		printf " %9s %9s %9s %7s\n", "compile s", "tuner+st s", "measure s", "trials"
		for (i = 1; i <= NR; i++)
			printf "%-6s %9.3f %9.4f %9.3f %7d\n", name[i], comp[i], rest[i], meas[i], n[i]
		# The sweeps measured for min_time 0.05 s: what longer ones give.
		for (i = 1; i <= NR; i++) {
			mc += (comp[i] + rest[i]) / NR
			mm += meas[i] / NR
		}
		printf "\n%5s", "nodes"
		for (i = 1; i <= NR; i++)
			printf " %20s", name[i] " trials/min"
		printf " %20s %20s\n", "min_time 0.2 s", "min_time 1 s"
		split("1 2 4 8 16 32 64", ns, " ")
		for (k = 1; k <= 7; k++) {
			N = ns[k]
			printf "%5d", N
			for (i = 1; i <= NR; i++) {
				c = comp[i] + rest[i]
				m = (meas[i] + o) / N
				t = (c > m) ? c : m
				b = (c >= m) ? "(coord)" : "(nodes)"
				printf " %11.0f %-8s", 60 / t, b
			}
			for (x = 0.2; x <= 1; x += 0.8) {
				m = (mm - 0.05 + x + o) / N
				t = (mc > m) ? mc : m
				b = (mc >= m) ? "(coord)" : "(nodes)"
				printf " %11.0f %-8s", 60 / t, b
			}
			printf "\n"
		}
	}' "$T/model.txt"
echo "The last two columns: the sweeps' mean with min_time raised from the recorded"
echo "0.05 s to 0.2 s (the cfg's default) and 1 s per measurement."
echo "(coord): the coordinator's serial compile + tuner + store work is the limit;"
echo "(nodes): the measurements are. Compiling on the nodes would lift the first."
