#!/usr/bin/env bash
# probe.sh N [FLAGS...]: N compiles of program.mlir with spec.mlir, one at a
# time (run two at once for two); one still running after 30 s has its CPU
# time printed twice 5 s apart (flat: it is stalled), its threads' states
# and a gdb stack (gdb.N.txt here), and is killed. Prints "done" at the end.
IC=${IREE_COMPILE:?the iree-compile binary (the _mlir_libs one, not the Python wrapper)}
here=$(cd "$(dirname "$0")" && pwd)
n=$1; shift
for i in $(seq $n); do
  d=$(mktemp -d)
  "$IC" "$here/program.mlir" --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=host --iree-hal-dump-executable-configurations-to=$d/c --iree-codegen-tuning-spec-path="$here/spec.mlir" "$@" -o $d/o.vmfb 2>$d/err &
  pid=$!
  t=0
  while kill -0 $pid 2>/dev/null && [ $t -lt 300 ]; do sleep 0.1; t=$((t+1)); done
  if kill -0 $pid 2>/dev/null; then
    echo "== compile $i past 30 s: pid $pid cpu(ticks)=$(awk '{print $14+$15}' /proc/$pid/stat)"
    sleep 5
    echo "   5 s later cpu(ticks)=$(awk '{print $14+$15}' /proc/$pid/stat)"
    ps -L -o tid,stat,wchan:25,pcpu,comm -p $pid
    timeout 20 gdb -p $pid -batch -ex "thread apply all bt 8" 2>/dev/null | grep -E "^Thread|^#" | head -60 > gdb.$i.txt
    kill -9 $pid
  fi
  wait $pid 2>/dev/null
  rm -rf $d
done
echo done
