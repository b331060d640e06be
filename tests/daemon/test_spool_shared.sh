# Two services on one spool (issue 31): they would take each other's jobs
# and measure on the same CPUs at once. The second says so in its log and
# does not watch it; the first goes on serving it.
. "$(dirname "$0")/lib.sh"
spool_conf
start_daemon
first=$DPID
check "the first service watches the spool" wait_for 20 grep -q "spool: watching $SPOOL" "$T/daemon.log"
"$ASD" -d -f "$T/autoschedd.conf" --db "$T/other.db" > "$T/second.log" 2>&1 &
second=$!
check "the second service says the spool is taken" wait_for 20 grep -qF \
    "spool $SPOOL: another autoschedd (pid $first) watches it; two services on one spool would take each other's jobs and measure on the same CPUs at once: not watched by this one" "$T/second.log"
check "the second service does not watch it" bash -c "! grep -q 'spool: watching' '$T/second.log'"
kill "$second"
wait "$second" 2> /dev/null
# The first still takes what is dropped there.
mkjob ok 16 16 16 1
sed "s|^input_file = ok.mlir|input_file = $T/ok.mlir|" "$T/ok.cfg" > "$SPOOL/dropped.cfg"
check "the first service takes a dropped cfg" wait_for 60 test -e "$SPOOL/done/dropped.cfg"
stop_daemon TERM
finish
