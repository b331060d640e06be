# Under systemd (no -d): sd_notify READY=1, STATUS= per trial, watchdog
# pings, STOPPING=1; log lines carry syslog priorities for the journal.
. "$(dirname "$0")/lib.sh"

mkjob a 32 32 32 3
# A stand-in for systemd's notify socket: records every datagram.
"$SINK" "$T/notify" "$T/notify.log" 90 &
LPID=$!
wait_for 10 test -S "$T/notify" || fail "no notify socket"

NOTIFY_SOCKET=$T/notify WATCHDOG_USEC=1000000 "$ASD" -f "$T/autoschedd.conf" \
    --db "$DB" > "$T/daemon.log" 2>&1 &
DPID=$!
check "READY=1" wait_for 20 grep -q "READY=1" "$T/notify.log"
id=$("$AS" submit "$T/a.cfg" --db "$DB") || fail "submit"
check "job done" wait_for 60 is_state "$id" done
check "STATUS= names the job and its progress" grep -q "STATUS=job $id: .*trial" "$T/notify.log"
check "STATUS=idle after the job" grep -q "STATUS=idle" "$T/notify.log"
# Pings go on while the daemon idles: three more after the job (waiting
# as long as a slow machine needs; no timing is asserted).
pings() { grep -c "WATCHDOG=1" "$T/notify.log"; }
idle0=$(pings)
check "watchdog pings when idle" wait_for 60 bash -c "[ \$(grep -c WATCHDOG=1 '$T/notify.log') -ge $((idle0 + 3)) ]"
stop_daemon TERM
check "exit 0" [ "$DRC" -eq 0 ]
check "STOPPING=1" wait_for 10 grep -q "STOPPING=1" "$T/notify.log"
wait "$LPID" 2>/dev/null
check "journal priorities on log lines" grep -q "^<6>serving" "$T/daemon.log"
check "debug lines at <7>" grep -q "^<7>job $id: " "$T/daemon.log"
finish
