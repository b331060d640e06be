#!/usr/bin/env bash
# The store as a trust boundary (issue 19): a store path naming a FIFO or a
# folder is refused at once, strings from the store reach MLIR, HTML and the
# terminal escaped for each, and absurd knob values in a stored best config
# are refused by every reader.
#   test_trust.sh AUTOSCHED AUTOSCHEDD SOURCE_DIR MLIR_OPT
set -u
AS=$1
ASD=$2
SRC=$3
OPT=$4
T=$(mktemp -d /tmp/autosched-trust-XXXXXX)
trap 'rm -rf "$T"' EXIT
unset AUTOSCHED_DB
export AUTOSCHED_WORK=$T/work
. "$SRC/tests/checks.sh"

# --- 1. A FIFO (or a folder) as the store: exit 2 at once, with the message.
mkfifo "$T/fifo.db"
mkdir "$T/dir.db"
MSG='not a regular file; expected an SQLite store'
# refused WHAT COMMAND...: exit 2 within the timeout, stderr naming the path.
refused() {
	local what=$1
	shift
	timeout 20 "$@" > "$T/out.txt" 2> "$T/err.txt"
	check "$what: exit 2" eq "$?" 2
	check "$what: says why" grep -q "$MSG" "$T/err.txt"
}
for db in "$T/fifo.db" "$T/dir.db"; do
	k=$(basename "$db")
	refused "best --db $k" "$AS" best --db "$db"
	refused "status --db $k" "$AS" status --db "$db"
	refused "export --db $k" "$AS" export --format transform --db "$db"
	refused "report --db $k" "$AS" report --db "$db" -o "$T/r.html"
	refused "watch --once --db $k" "$AS" watch --once --db "$db"
	refused "AUTOSCHED_DB=$k best" env AUTOSCHED_DB="$db" "$AS" best
	refused "AUTOSCHED_DB=$k status" env AUTOSCHED_DB="$db" "$AS" status
	refused "AUTOSCHED_DB=$k export" env AUTOSCHED_DB="$db" "$AS" export --format iree-spec
	refused "AUTOSCHED_DB=$k watch --once" env AUTOSCHED_DB="$db" "$AS" watch --once
	printf '[autoschedd]\ndatabase = %s\n' "$db" > "$T/d.conf"
	refused "autoschedd -n, database $k" "$ASD" -n -f "$T/d.conf"
	refused "autoschedd -d, database $k" "$ASD" -d -f "$T/d.conf"
done
check "no report written" test ! -e "$T/r.html"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
