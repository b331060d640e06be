#!/bin/sh
# Copy a recorded sweep store into bench/data/ keeping only what replay and
# the benchmark read: targets, ops, trials (error texts cut short), the job.
# usage: compact.sh SRC.db DST.db
# Recording one (about 10 minutes, nothing else running if you can help it):
#   autosched run bench/sweeps/mm512.cfg --db /tmp/mm512.db --quiet
#   bench/sweeps/compact.sh /tmp/mm512.db bench/data/mm512.db
set -eu
src=$1 dst=$2
rm -f "$dst" "$dst-wal" "$dst-shm"
sqlite3 "$src" ".backup '$dst'"
sqlite3 "$dst" <<'SQL'
PRAGMA journal_mode = DELETE;
DELETE FROM job_log;
DELETE FROM trials WHERE phase NOT IN ('tune', 'baseline', 'reference');
UPDATE trials SET error = substr(error, 1, 200) WHERE error IS NOT NULL;
VACUUM;
SQL
ls -l "$dst"
