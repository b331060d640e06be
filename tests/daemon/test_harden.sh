# The service as a boundary (issue 11): special files never hang it, the
# spool refuses links, foreign owners, unreadable inputs, reports outside the
# output folder and half-written files, never crashes twice on one file,
# escapes names in its log; a deleted store stops it (exit non-zero); -n
# opens the store; the unit has a start limit.
. "$(dirname "$0")/lib.sh"
spool_conf "output_dir = $T/reports"
mkdir -p "$T/reports"
# The spool belongs to a submitting account (nobody): its files and root's are taken.
chown nobody "$SPOOL"

# --- Special files: -f naming a FIFO, and a SIGHUP re-read of one.
mkfifo "$T/fifo.conf"
timeout 10 "$ASD" -n -f "$T/fifo.conf" > /dev/null 2>&1
check "-n -f FIFO: exit 2, no hang" [ $? -eq 2 ]

# --- -n opens the store: a corrupt one is a configuration error.
head -c 8192 /dev/urandom > "$T/corrupt.db"
timeout 10 "$ASD" -n -f "$T/autoschedd.conf" --db "$T/corrupt.db" > "$T/n.out" 2>&1
check "-n on a corrupt store: exit 2" [ $? -eq 2 ]
timeout 10 "$ASD" -d -f "$T/autoschedd.conf" --db "$T/corrupt.db" > /dev/null 2>&1
check "start on a corrupt store: exit 2 (no restart)" [ $? -eq 2 ]
check "the unit has a start limit" grep -q '^StartLimitBurst=' "$SRC/systemd/autoschedd.service"
check "the unit's start limit is in [Unit]" awk '/^\[Unit\]/{u=1} /^\[Service\]/{u=0} u && /^StartLimitIntervalSec=/{f=1} END{exit !f}' "$SRC/systemd/autoschedd.service"

start_daemon

# A link to a secret, a foreign owner, an unreadable input, a report outside
# the output folder, a file nested to crash MLIR's parser, a forged name.
echo "TOPSECRET-LINE = 1" > "$T/secret"
chmod 600 "$T/secret"
mkjob ok 16 16 16 2
ln -s "$T/secret" "$SPOOL/link.cfg"
mkfifo "$SPOOL/pipe.cfg"
mkjob unread 16 16 16 2
sed -i "s|^input_file = .*|input_file = $T/secret|" "$T/unread.cfg"
chown nobody "$T/unread.cfg"
# Readable by its mode bits but in a folder its owner cannot enter.
mkdir -m 700 "$T/closed"
mkjob hidden 16 16 16 2
mv "$T/hidden.mlir" "$T/closed/hidden.mlir"
chmod 644 "$T/closed/hidden.mlir"
sed -i "s|^input_file = .*|input_file = $T/closed/hidden.mlir|" "$T/hidden.cfg"
chown nobody "$T/hidden.cfg"
mkjob outside 16 16 16 2
sed -i "2i output_file = $T/elsewhere.csv" "$T/outside.cfg"
sed -i "s|^input_file = outside.mlir|input_file = $T/outside.mlir|" "$T/outside.cfg"
python3 -c "
n = 100000
print('func.func @f() attributes {a = ' + '[' * n + ']' * n + '} { return }')" > "$T/deep.mlir"
sed "s|^input_file = .*|input_file = $T/deep.mlir|" "$T/ok.cfg" > "$T/deep.cfg"
sed -i "s|^input_file = ok.mlir|input_file = $T/ok.mlir|" "$T/ok.cfg"
cp "$T/ok.cfg" "$T/forged.cfg"
for f in unread hidden outside deep; do cp -p "$T/$f.cfg" "$SPOOL/$f.cfg"; done
cp "$T/forged.cfg" "$SPOOL/x
FORGED autoschedd: spool: owned by root.cfg"
cp "$T/ok.cfg" "$SPOOL/stranger.cfg"; chown 12345 "$SPOOL/stranger.cfg"
check "the link is refused" wait_for 20 test -e "$SPOOL/failed/link.cfg"
check "a FIFO in the spool is refused" wait_for 20 test -p "$SPOOL/failed/pipe.cfg"
check "a stranger's file is refused" wait_for 20 test -e "$SPOOL/failed/stranger.cfg"
check "an input its owner cannot read is refused" wait_for 20 test -e "$SPOOL/failed/unread.cfg"
check "an input in a folder its owner cannot enter is refused" wait_for 20 test -e "$SPOOL/failed/hidden.cfg"
check "the reason says who may not read it" wait_for 20 grep -q "hidden.mlir: the submitter (uid $(id -u nobody)) may not read it" "$SPOOL/failed/hidden.cfg.reason"
check "the deep file is refused" wait_for 20 test -e "$SPOOL/failed/deep.cfg"
check "the daemon survived the deep file" kill -0 "$DPID"
check "no reason echoes the secret" bash -c "! grep -rq TOPSECRET '$SPOOL'"
check "the log does not echo the secret" bash -c "! grep -q TOPSECRET '$T/daemon.log'"
check "the forged name is taken" wait_for 20 bash -c "ls '$SPOOL/done' | grep -q FORGED"
check "no forged log line" bash -c "! grep -q '^FORGED' '$T/daemon.log'"
check "a report outside output_dir is refused" wait_for 20 test -e "$SPOOL/failed/outside.cfg"
check "the reason names output_dir" wait_for 20 grep -q output_dir "$SPOOL/failed/outside.cfg.reason"
check "nothing but the forged-name job queued" [ "$(q "$DB" "SELECT count(*) FROM jobs")" -eq 1 ]

# A half-written cfg is not taken while its writer holds it open.
exec 7> "$SPOOL/half.cfg"
head -n 8 "$T/ok.cfg" >&7
sleep 2.5
check "a cfg still being written is not taken" test -e "$SPOOL/half.cfg"
tail -n +9 "$T/ok.cfg" | sed 's/^n_trial = 2/n_trial = 3/' >&7
exec 7>&-
check "the finished cfg is taken" wait_for 20 test -e "$SPOOL/done/half.cfg"
check "the whole cfg was snapshotted" [ "$(q "$DB" "SELECT n_trial FROM jobs ORDER BY id DESC LIMIT 1")" -eq 3 ]
wait_for 120 all_ended

# The spool's owner swaps failed/ for a link to a folder of root's: nothing
# is moved nor written there, the dropped file stays where it is.
mkdir "$T/rootdir"
mv "$SPOOL/failed" "$T/failed.real"
ln -s "$T/rootdir" "$SPOOL/failed"
cp "$T/ok.cfg" "$SPOOL/swap.cfg"; chown nobody "$SPOOL/swap.cfg"
check "failed/ a link: the service says so" wait_for 20 grep -q "spool: $SPOOL/failed: not the service's own folder (a symbolic link)" "$T/daemon.log"
check "failed/ a link: nothing moved nor written through it" [ -z "$(ls -A "$T/rootdir")" ]
check "failed/ a link: the file left in the spool" test -e "$SPOOL/swap.cfg"
rm "$SPOOL/failed" "$SPOOL/swap.cfg"
mv "$T/failed.real" "$SPOOL/failed"

# --- SIGHUP with the conf replaced by a FIFO: still answers SIGTERM.
mv "$T/autoschedd.conf" "$T/autoschedd.conf.real"
mkfifo "$T/autoschedd.conf"
kill -HUP "$DPID"
sleep 1
kill -TERM "$DPID"
check "SIGTERM after a SIGHUP on a FIFO stops it" wait_for 15 bash -c "! kill -0 $DPID 2>/dev/null"
wait "$DPID" 2>/dev/null
DPID=
rm -f "$T/autoschedd.conf"
mv "$T/autoschedd.conf.real" "$T/autoschedd.conf"

# --- A store deleted under the service: it stops, loudly, non-zero.
start_daemon
mkjob long 64 64 64 30
sed -i 's/^min_time = .*/min_time = 1/' "$T/long.cfg"
id=$("$AS" submit --db "$DB" "$T/long.cfg" 2>/dev/null)
check "the long job runs" wait_for 60 has_trials "$id" 1
rm -f "$DB" "$DB-wal" "$DB-shm"
check "the service stops when its store is deleted" wait_for 30 bash -c "! kill -0 $DPID 2>/dev/null"
wait "$DPID" 2>/dev/null
DRC=$?
DPID=
check "... with a non-zero exit" [ "$DRC" -ne 0 ]
check "... saying why" grep -q "deleted or replaced" "$T/daemon.log"

finish
