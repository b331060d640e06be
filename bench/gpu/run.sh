#!/bin/bash
# Runs on the GPU host, inside the payload bench/gpu.sh made (the folder
# this script is in): every staged kernel of every op checked and timed by
# autosched-gpu-measure next to cuBLAS and the mma.sync peak, the winner and
# IREE's default cross-checked with IREE's own runtime, then a table.
#   bash run.sh            (results under $OUT, else ./out)
# Every tool runs under timeout. Writes at most 8 files, flat, into $OUT.
set -u
P=$(cd "$(dirname "$0")" && pwd)
R=${OUT:-$P/out}
mkdir -p "$R"
exec > >(tee "$R/run.log") 2>&1
START=$SECONDS
BIN=$P/bin
JS=$R/results.jsonl
: > "$JS"

echo "== machine"
timeout 30 nvidia-smi -q > "$R/nvidia-smi.txt" 2>&1
timeout 30 nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu \
    --format=csv 2>&1 | head -3
timeout 30 nvidia-smi -q -d CLOCK,POWER,PERFORMANCE 2>&1 | grep -E '^ *(SM|Graphics|Memory|Current Power Limit|Max Power Limit|Power Draw|Average Power Draw) *:|Clocks|Throttle|Event Reasons$' | head -24
timeout 10 lscpu > "$R/lscpu.txt" 2>&1
grep -E '^(Model name|CPU\(s\)|Socket|Thread)' "$R/lscpu.txt"
if grep -qw amx_tile "$R/lscpu.txt"; then echo "CPU has AMX (amx_tile amx_bf16 amx_int8)"; else echo "CPU has no AMX"; fi

# IREE's CUDA HAL dlopens "libcuda.so"; give it a private link to the driver.
mkdir -p "$P/lib"
drv=$(ldconfig -p 2> /dev/null | awk '/libcuda\.so\.1 / { print $NF; exit }')
for f in /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1; do
  [ -z "$drv" ] && [ -e "$f" ] && drv=$f
done
[ -n "$drv" ] && ln -sf "$drv" "$P/lib/libcuda.so"
export LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# cuBLAS for the harness: the toolkit's, else a pip wheel's (PyTorch has one).
for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda-12*/lib64 /usr/lib/x86_64-linux-gnu \
    $(timeout 30 python3 -c 'import os, nvidia.cublas as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2> /dev/null); do
  if ls "$d"/libcublas.so.1[23] > /dev/null 2>&1; then export LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH; echo "cuBLAS from $d"; break; fi
done

echo "== autosched-gpu-measure: every staged kernel, cuBLAS, the peak"
for d in "$P"/ops/*/; do
  op=$(basename "$d")
  spec=$(cat "$d/op.txt")
  n=$(grep -c . "$d/kernels.txt")
  echo "-- $op ($spec): $n kernels"
  echo "{\"kind\":\"op\",\"op\":\"$op\",\"spec\":\"$spec\"}" >> "$JS"
  (cd "$d" && timeout "${OP_TIMEOUT:-100}" "$BIN/autosched-gpu-measure" --op "$spec" --kernels kernels.txt --peak \
      --min-time "${MIN_TIME:-0.1}") >> "$JS" 2> "$R/stderr.tmp"
  rc=$?
  echo "   exit $rc $(head -c 1500 "$R/stderr.tmp")"
done
rm -f "$R/stderr.tmp"

echo "== IREE's runtime on the winner and IREE's default (iree-run-module check, iree-benchmark-module)"
IC=$R/iree_check.txt
: > "$IC"
python3 "$P/table.py" --winners "$JS" 2> /dev/null | while read -r op name; do
  d=$P/ops/$op
  IFS=, read -r m n k t rest < "$d/op.txt"
  # The runtime check's splat inputs are those of a plain matmul.
  [ -z "$rest" ] || { echo "-- $op: a batch or transposed op, no IREE runtime check"; continue; }
  case $t in f16f32) in=f16 acc=f32 ;; f16) in=f16 acc=f16 ;; bf16f32) in=bf16 acc=f32 ;; *) in=f32 acc=f32 ;; esac
  inputs=(--input="${m}x${k}x${in}=1" --input="${k}x${n}x${in}=0.25")
  for v in "$name" iree_default; do
    # NAME.iree: the dispatch repeats in the module (a call = rep dispatches)
    rep=$(awk '$1 == "repeat" { print $2 }' "$d/$v.iree" 2> /dev/null)
    rep=${rep:-1}
    check=fail
    timeout 60 "$BIN/iree-run-module" --device=cuda --module="$d/$v.vmfb" --function=mm "${inputs[@]}" \
        --expected_output="${m}x${n}x${acc}=$((k / 4))" > /dev/null 2>> "$IC" && check=ok
    ms=$(timeout 90 "$BIN/iree-benchmark-module" --device=cuda --module="$d/$v.vmfb" --function=mm "${inputs[@]}" \
        --batch_size="$rep" --benchmark_repetitions=5 --benchmark_min_time=0.05s --benchmark_format=json 2>> "$IC" |
      python3 -c 'import json,sys
d=json.load(sys.stdin); u={"ns":1e-6,"us":1e-3,"ms":1,"s":1e3}
v=sorted(b["real_time"]*u[b["time_unit"]] for b in d["benchmarks"] if b.get("run_type")=="iteration")
print("%.4f" % v[len(v)//2] if v else "-")' 2>> "$IC")
    echo "IREE $op $v check=$check ms=${ms:--} repeat=$rep" | tee -a "$IC"
  done
done

echo "== table (figures from autosched-gpu-measure: median of CUDA-event samples)"
python3 "$P/table.py" "$JS" "$IC" | tee "$R/table.txt"
echo "== clocks after the run"
timeout 30 nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv 2>&1 | head -3
echo "== done in $((SECONDS - START)) s"
