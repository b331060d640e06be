# The queue commands without a daemon: a bad cfg is refused (exit 2, nothing
# queued), a queued job snapshots its files, cancel, unknown ids, -n.
. "$(dirname "$0")/lib.sh"

mkjob a 16 16 16 4
njobs() { q "$DB" "SELECT count(*) FROM jobs" 2>/dev/null || echo 0; }

# Bad input: exit 2, nothing queued.
printf '[Env]\ninput_file = a.mlir\n[SearchSpace]\ntile_q = [4]\n' > "$T/bad.cfg"
"$AS" submit "$T/bad.cfg" --db "$DB" 2> "$T/err"
check "bad cfg: exit 2" [ $? -eq 2 ]
check "bad cfg: names file, line and key" grep -q "bad.cfg:4.*tile_q" "$T/err"
check "bad cfg: no store created" [ ! -e "$DB" ]
cat > "$T/none.mlir" <<'MLIR'
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
MLIR
sed 's/a\.mlir/none.mlir/' "$T/a.cfg" > "$T/none.cfg"
"$AS" submit "$T/none.cfg" --db "$DB" 2> "$T/err"
check "no tunable op: exit 2" [ $? -eq 2 ]
check "no tunable op: says so (run's own words)" grep -q "no op the .* backend can tune" "$T/err"
printf 'func.func @f( {\n' > "$T/broken.mlir"
sed 's/a\.mlir/broken.mlir/' "$T/a.cfg" > "$T/broken.cfg"
"$AS" submit "$T/broken.cfg" --db "$DB" 2> "$T/err"
check "bad MLIR: exit 2" [ $? -eq 2 ]
check "bad MLIR: nothing queued" [ "$(njobs)" -eq 0 ]
"$AS" submit --db "$DB" 2> /dev/null
check "submit without CFG: exit 2" [ $? -eq 2 ]

# A good one: its id on stdout, a snapshot of both files.
id=$("$AS" submit "$T/a.cfg" --db "$DB" --priority 5 2> "$T/err")
check "submit: exit 0" [ $? -eq 0 ]
check "submit: prints the id" [ "$id" = 1 ]
check "submit: says no daemon listens" grep -q "no autoschedd" "$T/err"
check "queued" is_state "$id" queued
check "priority kept" [ "$(q "$DB" "SELECT priority FROM jobs WHERE id = $id")" = 5 ]
check "cfg snapshot" [ "$(q "$DB" "SELECT cfg_text FROM jobs WHERE id = $id")" = "$(cat "$T/a.cfg")" ]
check "mlir snapshot" [ "$(q "$DB" "SELECT mlir_text FROM jobs WHERE id = $id")" = "$(cat "$T/a.mlir")" ]
check "mlir hash" [ -n "$(q "$DB" "SELECT mlir_hash FROM jobs WHERE id = $id")" ]
check "budget: n_trial per tunable op" [ "$(q "$DB" "SELECT n_trial FROM jobs WHERE id = $id")" = 4 ]
echo "; edited later" >> "$T/a.cfg"
check "a later edit does not change the job" [ "$(q "$DB" "SELECT instr(cfg_text, 'edited') FROM jobs WHERE id = $id")" = 0 ]

# status, log, cancel.
"$AS" status --db "$DB" > "$T/out"
check "status lists the job" grep -q "^1 *queued" "$T/out"
"$AS" status "$id" --db "$DB" --json > "$T/out"
check "status --json" grep -q '"trials_budget": 4' "$T/out"
"$AS" status 99 --db "$DB" 2> "$T/err"
check "status of an unknown job: exit 2" [ $? -eq 2 ]
check "status of an unknown job: says so" grep -q "no job 99" "$T/err"
"$AS" log 99 --db "$DB" 2> /dev/null
check "log of an unknown job: exit 2" [ $? -eq 2 ]
"$AS" cancel 99 --db "$DB" 2> /dev/null
check "cancel of an unknown job: exit 2" [ $? -eq 2 ]
"$AS" cancel x --db "$DB" 2> /dev/null
check "cancel of a bad id: exit 2" [ $? -eq 2 ]
"$AS" status --db "$T/nonexistent.db" 2> /dev/null
check "status of a missing store: exit 2" [ $? -eq 2 ]
"$AS" cancel "$id" --db "$DB" > "$T/out"
check "cancel a queued job: exit 0" [ $? -eq 0 ]
check "cancel a queued job: cancelled now" is_state "$id" cancelled
"$AS" cancel "$id" --db "$DB" 2> /dev/null
check "cancel an ended job: exit 2" [ $? -eq 2 ]

# autoschedd -n.
out=$("$ASD" -n -f "$T/autoschedd.conf")
check "-n: exit 0" [ $? -eq 0 ]
check "-n: configuration OK" [ "$out" = "configuration OK" ]
printf '[autoschedd]\nlog_level = debug\ncpus = 0,0\n' > "$T/bad.conf"
"$ASD" -n -f "$T/bad.conf" 2> "$T/err"
check "-n bad: exit 2" [ $? -eq 2 ]
check "-n bad: file:line: key" grep -q "bad.conf:3: cpus" "$T/err"
"$ASD" -n -f "$T/missing.conf" 2> /dev/null
check "-n with -f of a missing file: exit 2" [ $? -eq 2 ]
"$ASD" -x 2> /dev/null
check "bad option: exit 2" [ $? -eq 2 ]
finish
