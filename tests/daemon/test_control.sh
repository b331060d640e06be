# Controlling a running autoschedd: the spool folder, SIGHUP (a bad new
# configuration is refused, the old kept), cancel of a running job, and a
# second daemon kept off the same store.
. "$(dirname "$0")/lib.sh"

mkjob a 16 16 8 2
mkjob long 32 32 32 18
SPOOL=$T/spool
cat > "$T/autoschedd.conf" <<CONF
[autoschedd]
log_level = debug
spool = $SPOOL
CONF
start_daemon
# (The service makes them after its wake socket: waited for, not raced.)
spool_made() { [ -d "$SPOOL/done" ] && [ -d "$SPOOL/failed" ]; }
check "spool folders made" wait_for 20 spool_made

# A second daemon on the same store is refused.
"$ASD" -d -f "$T/autoschedd.conf" --db "$DB" 2> "$T/err"
check "second daemon: refused" [ $? -ne 0 ]
check "second daemon: says why" grep -q "another autoschedd" "$T/err"

# Spool: a good cfg is queued and moved to done/, a bad one to failed/.
cp "$T/a.mlir" "$SPOOL/a.mlir"
cp "$T/a.cfg" "$SPOOL/.a.cfg.tmp" && mv "$SPOOL/.a.cfg.tmp" "$SPOOL/a.cfg"
printf '[Env]\ninput_file = a.mlir\n[SearchStrategy]\nn_trial = lots\n' > "$SPOOL/.bad.tmp"
mv "$SPOOL/.bad.tmp" "$SPOOL/bad.cfg"
check "spool: good cfg moved to done/" wait_for 20 test -f "$SPOOL/done/a.cfg"
check "spool: reason beside it" wait_for 20 grep -q "queued as job" "$SPOOL/done/a.cfg.reason"
check "spool: no reason left in failed/ for a queued cfg" [ ! -e "$SPOOL/failed/a.cfg.reason" ]
check "spool: bad cfg moved to failed/" wait_for 20 test -f "$SPOOL/failed/bad.cfg"
# (A refused file waits in failed/ under a provisional reason, "taken",
# while it is read: the final one replaces it.)
check "spool: the error beside it" wait_for 20 grep -q "bad.cfg:4.*n_trial" "$SPOOL/failed/bad.cfg.reason"
id=$(sed 's/[^0-9]//g' "$SPOOL/done/a.cfg.reason")
check "spooled job runs to its end" wait_for 120 is_state "$id" done
check "only one job queued from the spool" [ "$(q "$DB" "SELECT count(*) FROM jobs")" -eq 1 ]

# SIGHUP: a bad configuration is refused and the daemon goes on.
cp "$T/autoschedd.conf" "$T/good.conf"
echo "cpus = 0-999999" >> "$T/autoschedd.conf"
kill -HUP "$DPID"
check "SIGHUP bad: logged" wait_for 10 grep -q "reload: .*keeping" "$T/daemon.log"
check "SIGHUP bad: still running" kill -0 "$DPID"
cp "$T/good.conf" "$T/autoschedd.conf"
echo "log_level = info" >> "$T/good.conf"
sed -i 's/log_level = debug/log_level = info/' "$T/autoschedd.conf"
kill -HUP "$DPID"
check "SIGHUP good: read" wait_for 10 grep -q "reload: configuration" "$T/daemon.log"

# Cancel of a running job: it stops at its next trial boundary.
idl=$("$AS" submit "$T/long.cfg" --db "$DB") || fail "submit long"
check "long job measures" wait_for 60 has_trials "$idl" 1
"$AS" cancel "$idl" --db "$DB" > "$T/out"
check "cancel running: exit 0" [ $? -eq 0 ]
check "cancel running: says so" grep -q "next trial boundary" "$T/out"
check "cancel running: cancelled" wait_for 30 is_state "$idl" cancelled
check "cancel running: stopped early" [ "$(tune_trials "$idl")" -lt 18 ]
# The daemon goes on with the next job.
ida=$("$AS" submit "$T/a.cfg" --db "$DB") || fail "submit after cancel"
check "next job after a cancel" wait_for 60 is_state "$ida" done
stop_daemon TERM
check "exit 0" [ "$DRC" -eq 0 ]
check "socket removed" [ ! -e "$DB.wake" ]
check "integrity" integrity_ok "$DB"
finish
