#!/usr/bin/env bash
# `autosched build` stopped by a signal leaves nothing behind: SIGTERM,
# SIGINT and SIGHUP kill its tool (and what the tool started) and remove its
# scratch folder, exit 128+N; SIGKILL still takes its direct child along.
# The tools are wrappers around the real ones that start a busy grandchild
# first, so there is always something running to catch.
#   test_build_signal.sh AUTOSCHED SOURCE_DIR LLVM_BIN
set -u
AS=$1
SRC=$2
LLVM_BIN=$3
T=$(mktemp -d /tmp/autosched-bsig-XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../checks.sh"

mkdir -p "$T/bin" "$T/tmp"
# A tool that spins at 100% CPU in a grandchild and never finishes on its own.
for t in mlir-opt mlir-translate; do
	cat > "$T/bin/$t" <<EOF
#!/bin/sh
sh -c 'while :; do :; done' &
"$LLVM_BIN/$t" "\$@"
wait
EOF
	chmod +x "$T/bin/$t"
done
cp "$SRC/configs/example.mlir" "$T/"

# All descendants of pid $1, one per line.
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}
# Wait (up to 10 s) until pid $1 has a descendant; print them all.
wait_children() {
	local i d
	for i in $(seq 200); do
		d=$(descendants "$1")
		[ -n "$d" ] && { echo "$d"; return 0; }
		sleep 0.05
	done
	return 1
}
# 0 when none of the pids given lives (waits up to 5 s).
all_gone() {
	local i p alive
	for i in $(seq 100); do
		alive=0
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null && alive=1
		done
		[ "$alive" = 0 ] && return 0
		sleep 0.05
	done
	ps -o pid,ppid,stat,args -p "$(echo "$@" | tr ' ' ',')" >&2
	return 1
}

for sig in TERM INT HUP; do
	rm -rf "$T/tmp"/*
	# A script's background job starts with SIGINT ignored (and build
	# keeps ignoring what it was started ignoring): give it the default.
	AUTOSCHED_LLVM_BIN=$T/bin TMPDIR=$T/tmp env --default-signal "$AS" build \
	    "$T/example.mlir" --untuned -o "$T/ex.so" 2> "$T/err_$sig" &
	pid=$!
	kids=$(wait_children "$pid")
	check "$sig: the build started its tool" [ -n "$kids" ]
	check "$sig: the build made its scratch folder" [ -n "$(ls -A "$T/tmp")" ]
	sleep 0.2	# the grandchild spinning too
	kids="$kids $(descendants "$pid")"
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	num=$(kill -l "$sig")
	check "$sig: exit 128+$num" eq "$rc" $((128 + num))
	check "$sig: every descendant gone" all_gone $kids
	check "$sig: scratch folder removed" eq "$(ls -A "$T/tmp")" ""
	check "$sig: nothing written" [ ! -e "$T/ex.so" ]
	check "$sig: says it was interrupted" grep -q 'interrupted' "$T/err_$sig"
done

# Started with SIGHUP ignored (nohup): a hangup does not stop it.
AUTOSCHED_LLVM_BIN=$T/bin TMPDIR=$T/tmp nohup "$AS" build "$T/example.mlir" \
    --untuned -o "$T/ex.so" > /dev/null 2> "$T/err_nohup" &
pid=$!
kids=$(wait_children "$pid")
check "nohup: the build started its tool" [ -n "$kids" ]
kill -HUP "$pid"
sleep 0.5
check "nohup: SIGHUP ignored, still building" kill -0 "$pid"
kill -TERM "$pid"
wait "$pid"
check "nohup: SIGTERM still stops it" eq "$?" 143
check "nohup: every descendant gone" all_gone $kids

# SIGKILL: no handler runs, but the tool dies with its parent.
cat > "$T/bin/mlir-opt" <<'EOF'
#!/bin/sh
exec sleep 300
EOF
AUTOSCHED_LLVM_BIN=$T/bin TMPDIR=$T/tmp "$AS" build "$T/example.mlir" \
    --untuned -o "$T/ex.so" 2> /dev/null &
pid=$!
kids=$(wait_children "$pid")
check "KILL: the build started its tool" [ -n "$kids" ]
kill -KILL "$pid"
wait "$pid" 2> /dev/null
check "KILL: its tool died with it" all_gone $kids

# The tools as they are: the build still works.
rm -rf "$T/tmp"/*
TMPDIR=$T/tmp "$AS" build "$T/example.mlir" --untuned -o "$T/ex.so" 2> "$T/err_ok"
check "unsignalled build exits 0" eq "$?" 0
check "unsignalled build: scratch folder removed" eq "$(ls -A "$T/tmp")" ""

echo "build_signal: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
