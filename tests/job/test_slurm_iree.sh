#!/usr/bin/env bash
# backend = iree under executor = slurm on the local two-node cluster
# (scripts/slurm-local.sh): the IREE tools run as job steps on the nodes
# through the executors module, as mlir-cpu's harness does: verified tune
# trials measured on n1 and n2, two at once; the rounds compared side by
# side (baseline, confirm, final, reference) on one node; a hanging
# candidate ends as a timeout on its node, recorded once.
# Skips (exit 77, with the reason) when the cluster cannot start here or
# IREE's tools cannot be installed.
#   test_slurm_iree.sh AUTOSCHED SOURCE_DIR   (KEEP=DIR keeps its folder there)
. "$(dirname "$0")/../checks.sh"
args AS SRC
FIX=$SRC/tests/backends/fixtures
slurm_up slurm-iree "$SRC"

# IREE's tools: PATH, else the venv scripts/iree-deps.sh installs. On this
# cluster the nodes are this machine: the same paths hold there.
if command -v iree-compile > /dev/null && command -v iree-benchmark-module > /dev/null &&
    command -v iree-run-module > /dev/null; then
	IREE_BIN=$(dirname "$(command -v iree-compile)")
elif ! IREE_BIN=$(bash "$SRC/scripts/iree-deps.sh" 2> "$T/deps.txt"); then
	echo "SKIP: IREE's tools cannot be installed here: $(tail -n 1 "$T/deps.txt")" >&2
	exit 77
fi

mkcfg() {	# mkcfg DIR: an iree cfg under executor slurm, [SearchSpace] from stdin
	mkdir -p "$1"
	cp "$FIX/iree_program.mlir" "$1/"
	{
		printf '[Env]\ninput_file = iree_program.mlir\nbackend = iree\n'
		printf 'iree_bin = %s\nexecutor = slurm\n' "$IREE_BIN"
		printf 'slurm_partition = autosched\nslurm_step_timeout = 120\n'
		printf '[SearchSpace]\n'
		cat
		printf '[SearchStrategy]\ntuner = grid\nn_trial = 6\n'
		printf '[Measure]\nmin_time = 0.05\nmin_reps = 3\nconfirm_top = 1\ntimeout = 20\n'
	} > "$1/a.cfg"
}

# 1. Tuned through Slurm: every IREE run a step on a node.
mkcfg "$T/run" <<C
$(space tile_m=8,16,32 tile_n=16,48 tile_k=32 vector_m=4 vector_n=16 vector_k=1 threads=1)
C
# A timing run longer than a candidate's two compiles, so that the steps
# overlap and Slurm puts them on both nodes.
sed -i 's/^min_time = 0.05/min_time = 3/' "$T/run/a.cfg"
"$AS" run "$T/run/a.cfg" --db "$T/run/s.db" > "$T/run/out.txt" 2>&1
rc=$?
DB=$T/run/s.db
check "iree under slurm: run exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/run/out.txt" >&2
check "6 tune trials, verified exactly" eq "$(q "$DB" "select count(*) from trials where phase='tune' and verified=1 and status in ('ok','unstable') and checked_by like 'exact:openblas-%'")" 6
check "every trial measured on a node" eq "$(q "$DB" "select count(*) from trials where host is null or host not in ('n1','n2')")" 0
check "tune trials from both nodes" eq "$(q "$DB" "select group_concat(h) from (select distinct host h from trials where phase='tune' order by h)")" "n1,n2"
check "rounds side by side on one node" eq "$(q "$DB" "select count(distinct host) from trials where phase <> 'tune'")" 1
check "the baseline is IREE's own config, verified on a node" ge "$(q "$DB" "select count(*) from trials where phase='baseline' and config_name='tile_0x0x0_vec_0x0x0_thr_1' and verified=1 and host in ('n1','n2')")" 1
check "the reference ran as a step" ge "$(q "$DB" "select count(*) from trials where phase='reference' and host in ('n1','n2')")" 1
check "the target is IREE's" eq "$(q "$DB" "select count(*) from targets where backend='iree'")" 1
check "the log says how many at once" ge "$(q "$DB" "select count(*) from job_log where message like '%up to 2 measurements at once%'")" 1
check "job done" eq "$(q "$DB" "select state from jobs")" done
check "nothing of ours left in the queue" eq "$(squeue -h -o '%j' 2>/dev/null | grep -c '^autosched-')" 0

# 2. A hanging candidate ends on its node (the step's own timeout): a
# timeout recorded once, on n1 or n2; the job goes on.
mkcfg "$T/hang" <<C
$(space tile_m=16,32 tile_n=48 tile_k=32 vector_m=4 vector_n=16 vector_k=1 threads=1)
C
sed -i 's/^n_trial = 6/n_trial = 2/; s/^timeout = 20/timeout = 5/' "$T/hang/a.cfg"
AUTOSCHED_TEST_FAULT=hang:tile_32x48 "$AS" run "$T/hang/a.cfg" --db "$T/hang/s.db" \
    > "$T/hang/out.txt" 2>&1
rc=$?
check "hang under slurm: run exits 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 "$T/hang/out.txt" >&2
check "the hang is one timeout, on a node" eq \
    "$(q "$T/hang/s.db" "select count(*) || ' ' || status || ' ' || (host in ('n1','n2')) from trials where phase='tune' and config_name like 'tile_32x48%'")" "1 timeout 1"
check "the other candidate verified" eq \
    "$(q "$T/hang/s.db" "select count(*) from trials where phase='tune' and config_name like 'tile_16x48%' and verified=1")" 1

echo "test_slurm_iree: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
