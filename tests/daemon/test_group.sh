#!/usr/bin/env bash
# systemd/README.md's group recipe, as users: the service runs as a user of
# its own with UMask=0007 in a 0770 state folder; a member of its group
# submits, reads the status and cancels without sudo. Needs root (it makes
# the two users and the group, and removes them); skips (77) otherwise.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v useradd >/dev/null ||
    ! command -v setpriv >/dev/null; then
	echo "skipped: needs root, useradd and setpriv"
	exit 77
fi
SVC=autosched-tsvc
MEM=autosched-tmem
GRP=autosched-tgrp
gone() {
	userdel "$SVC" 2>/dev/null
	userdel "$MEM" 2>/dev/null
	groupdel "$GRP" 2>/dev/null
	groupdel "$MEM" 2>/dev/null
	return 0
}
gone
groupadd --system "$GRP"
useradd --system --no-create-home --shell /usr/sbin/nologin -g "$GRP" "$SVC"
useradd --system --no-create-home --shell /usr/sbin/nologin -U -G "$GRP" "$MEM"
trap 'gone; cleanup' EXIT

# Both users must reach the binaries (a build tree under a private home
# cannot be tested so).
if ! setpriv --reuid="$MEM" --regid="$MEM" --clear-groups test -x "$AS"; then
	echo "skipped: $MEM cannot run $AS"
	exit 77
fi
chmod 0755 "$T"
STATE=$T/state
install -d -m 0770 -o "$SVC" -g "$GRP" "$STATE"
DB=$STATE/autosched.db
HOME_M=$T/member
install -d -m 0755 -o "$MEM" -g "$MEM" "$HOME_M"
mkjob g 16 32 16 2
cp "$T/g.cfg" "$T/g.mlir" "$HOME_M/" && chown "$MEM" "$HOME_M"/g.*
cat > "$STATE/autoschedd.conf" <<CONF
[autoschedd]
poll_interval = 30
CONF
chown "$SVC:$GRP" "$STATE/autoschedd.conf"

as_svc() { setpriv --reuid="$SVC" --regid="$GRP" --init-groups "$@"; }
as_mem() { setpriv --reuid="$MEM" --regid="$MEM" --init-groups "$@"; }

# The service: UMask=0007, as the drop-in says; its cache beside the store.
as_svc env -u AUTOSCHED_WORK bash -c 'umask 0007; exec "$0" -d -f "$1" --db "$2"' \
    "$ASD" "$STATE/autoschedd.conf" "$DB" >> "$T/daemon.log" 2>&1 &
DPID=$!
check "service started" wait_for 20 test -S "$DB.wake"
check "the store is the group's to write (0660)" \
    [ "$(stat -c %a "$DB" 2>/dev/null)" = 660 ]

id=$(cd "$HOME_M" && as_mem "$AS" submit --db "$DB" g.cfg 2>"$T/submit.err")
check "a member submits without sudo" [ -n "$id" ]
[ -n "$id" ] || cat "$T/submit.err" >&2
check "the job runs to its end" wait_for 120 is_state "${id:-0}" done
check "a member reads its status" as_mem "$AS" status --db "$DB" "${id:-0}"
id2=$(cd "$HOME_M" && as_mem "$AS" submit --db "$DB" --priority -5 g.cfg 2>/dev/null)
check "a member cancels" as_mem "$AS" cancel --db "$DB" "${id2:-0}"
for f in "$DB" "$DB-wal" "$DB-shm"; do
	[ -e "$f" ] || continue
	check "$(basename "$f"): the group may write it" \
	    [ "$(stat -c %a "$f")" = 660 ]
done
stop_daemon TERM
finish
