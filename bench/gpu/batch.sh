#!/bin/bash
# bench/gpu/batch.sh: executor = batch with a GPU host, one trip a round.
# Here (no GPU needed):
#   bench/gpu/batch.sh stage W     the job of bench/gpu/batch.cfg (or $CFG)
#                                  staged: W/r1, and W/payload to carry
#   bench/gpu/batch.sh next W RES  RES (the results a trip brought back) put
#                                  beside the round's manifest, ingested, the
#                                  next round staged into W/payload (exit 3),
#                                  or the job finished (exit 0/1: its summary)
# On the GPU host, with W/payload carried (the harness, one binary that needs
# only the C library, and the round's folder):
#   bash W/payload/run.sh          → $OUT/results (and the machine's clocks)
# Every tool runs under a deadline. The store is W/s.db.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/deadline.sh"
BUILD=${BUILD:-$top/build}
CFG=${CFG:-$top/bench/gpu/batch.cfg}
AS=$BUILD/daemon/autosched
GM=$BUILD/measure/autosched-gpu-measure
cmd=${1:-} W=${2:-}
[ -n "$W" ] || { echo "usage: bench/gpu/batch.sh stage W | next W RESULTS" >&2; exit 2; }
for f in "$AS" "$GM"; do
	[ -x "$f" ] || { echo "bench/gpu/batch.sh: $f missing (scripts/build.sh release)" >&2; exit 2; }
done
mkdir -p "$W"
W=$(cd "$W" && pwd)
# payload N: W/payload holds round N, the harness and run.sh.
payload() {
	rm -rf "$W/payload"
	mkdir -p "$W/payload"
	cp -r "$W/r$1" "$W/payload/round"
	cp "$GM" "$W/payload/"
	cat > "$W/payload/run.sh" <<'R'
#!/bin/bash
# On the GPU host: the staged round measured by autosched-gpu-measure.
P=$(cd "$(dirname "$0")" && pwd)
R=${OUT:-$P/out}
mkdir -p "$R"
timeout 30 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > "$R/gpu.txt" 2>&1
timeout 570 "$P/autosched-gpu-measure" --batch "$P/round" 2> "$R/measure.log"
echo "exit $?" >> "$R/measure.log"
cp "$P/round/results" "$R/results" 2> /dev/null
tail -3 "$R/measure.log"
R
	echo "round $1: $(head -1 "$W/r$1/manifest" | grep -o '"entries":[0-9]*' | cut -d: -f2) measurements in $W/payload (carry it; run: bash payload/run.sh)"
}
case "$cmd" in
stage)
	[ -e "$W/s.db" ] && { echo "bench/gpu/batch.sh: $W/s.db exists: use next, or a new W" >&2; exit 2; }
	cp "$CFG" "$W/batch.cfg"
	cp "$(dirname "$CFG")/$(sed -n 's/^input_file *= *//p' "$CFG")" "$W/"
	(cd "$W" && deadline 3600 "$AS" run batch.cfg --db s.db --stage r1 --quiet)
	rc=$?
	[ $rc = 3 ] || exit $rc
	echo 1 > "$W/round"
	payload 1 ;;
next)
	res=${3:?usage: bench/gpu/batch.sh next W RESULTS}
	n=$(cat "$W/round")
	cp "$res" "$W/r$n/results"
	(cd "$W" && deadline 3600 "$AS" run batch.cfg --db s.db --ingest "r$n" --stage "r$((n + 1))" --quiet)
	rc=$?
	[ $rc = 3 ] || exit $rc
	echo $((n + 1)) > "$W/round"
	payload $((n + 1)) ;;
*)
	echo "usage: bench/gpu/batch.sh stage W | next W RESULTS" >&2
	exit 2 ;;
esac
