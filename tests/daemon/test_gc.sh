# `autosched gc` (issue 31): what a kill -9'd run leaves is removed on
# demand -- its "running" job row (a real run killed mid-search) marked
# failed, the backends' scratch of dead processes under the work folder
# (IREE's compile, data and measurement scratch, planted as a killed run
# names it: IREE's own runs do not sweep it) and hidden output temporaries
# -- while live processes' scratch, names autosched does not make, links
# and other owners' files are left.
. "$(dirname "$0")/lib.sh"
W=$AUTOSCHED_WORK
mkjob slow 32 32 32 18
sed -i 's/^min_time = 0.02$/min_time = 0.5/; /^\[Env\]/a output_file = out.csv' "$T/slow.cfg"

# A run killed outright once it has recorded a trial.
"$AS" run "$T/slow.cfg" --db "$DB" --quiet > /dev/null 2>&1 &
bg=$!
wait_for 120 bash -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$DB' 'SELECT count(*) FROM trials' 2>/dev/null)\" -ge 1 ] 2>/dev/null"
check "the run recorded a trial before the kill" [ "$(q "$DB" "SELECT count(*) FROM trials")" -ge 1 ]
kill -9 "$bg"
wait "$bg" 2>/dev/null
check "killed: its job row left running" [ "$(state 1)" = running ]

# What killed processes leave, named as autosched names it.
sh -c 'exit 0' &
dead=$!
wait "$dead"
sleep 300 &
alive=$!
mkdir -p "$W/iree" "$W/mlir-cpu" "$T/outside"
echo keep > "$T/outside/keep.txt"
for p in "$dead" "$alive"; do
	mkdir -p "$W/iree/0123456789abcdef.tmp.$p.1/configs" \
	    "$W/iree/data-fedcba9876543210.tmp.$p.2" "$W/iree/run.$p.3" \
	    "$W/mlir-cpu/0123456789abcdef.tmp.$p.4"
	echo '// a dispatch' > "$W/iree/0123456789abcdef.tmp.$p.1/dispatch.mlir"
	echo 'vmfb' > "$W/iree/0123456789abcdef.tmp.$p.1/bench.vmfb"
	echo 'dump' > "$W/iree/0123456789abcdef.tmp.$p.1/configs/c.mlir"
	echo 'npy' > "$W/iree/data-fedcba9876543210.tmp.$p.2/lhs.npy"
	echo 'out' > "$W/iree/run.$p.3/out.bin"
	echo '// half' > "$W/mlir-cpu/0123456789abcdef.tmp.$p.4/dispatch.mlir"
	echo 'half a CSV' > "$T/.out.csv.$p.AbC123"
done
# Not autosched's names, or a link: left.
mkdir -p "$W/iree/notes.$dead"
ln -s "$T/outside" "$W/iree/link.tmp.$dead.5"
echo 'mine' > "$T/.notes.$dead"
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	mkdir -p "$W/iree/aaaa.tmp.$dead.6"
	chown -R nobody "$W/iree/aaaa.tmp.$dead.6"
	other=1
else
	other=0
fi

"$AS" gc --db "$DB" > "$T/gc.out" 2> "$T/gc.err"
check "gc: exit 0" [ $? -eq 0 ]
check "gc: the killed run's job marked failed" [ "$(state 1)" = failed ]
check "gc: its error says abandoned" grep -q "abandoned" <(q "$DB" "SELECT error FROM jobs WHERE id = 1")
check "gc: says the job" grep -qF "job 1: marked failed" "$T/gc.out"
for d in "iree/0123456789abcdef.tmp.$dead.1" "iree/data-fedcba9876543210.tmp.$dead.2" \
    "iree/run.$dead.3" "mlir-cpu/0123456789abcdef.tmp.$dead.4"; do
	check "gc: $d removed" [ ! -e "$W/$d" ]
	check "gc: $d said" grep -qF "removed $W/$d" "$T/gc.out"
	live=${d/.$dead./.$alive.}
	check "gc: $live (a live process's) kept" [ -d "$W/$live" ]
done
check "gc: a dead writer's CSV temporary removed" [ ! -e "$T/.out.csv.$dead.AbC123" ]
check "gc: a live writer's CSV temporary kept" [ -e "$T/.out.csv.$alive.AbC123" ]
check "gc: another name kept" [ -d "$W/iree/notes.$dead" ]
check "gc: another hidden file kept" [ -e "$T/.notes.$dead" ]
check "gc: a link named like scratch kept, not followed" [ -L "$W/iree/link.tmp.$dead.5" ]
check "gc: what the link points to kept" [ -e "$T/outside/keep.txt" ]
if [ "$other" -eq 1 ]; then
	check "gc: another owner's scratch kept" [ -d "$W/iree/aaaa.tmp.$dead.6" ]
	check "gc: and named" grep -qF "$W/iree/aaaa.tmp.$dead.6: owned by uid" "$T/gc.err"
fi
check "gc: the store intact" integrity_ok "$DB"
# Nothing left: a second gc removes nothing.
"$AS" gc --db "$DB" > "$T/gc2.out" 2>&1
check "gc again: exit 0" [ $? -eq 0 ]
check "gc again: nothing removed" grep -qF "0 removed, 0 jobs marked" "$T/gc2.out"
check "gc: bad usage exits 2" bash -c "'$AS' gc extra > /dev/null 2>&1; [ \$? -eq 2 ]"
kill "$alive"
wait "$alive" 2>/dev/null
finish
