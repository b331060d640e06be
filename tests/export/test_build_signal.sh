#!/usr/bin/env bash
# `autosched build` stopped by a signal leaves nothing behind: SIGTERM,
# SIGINT and SIGHUP kill its tools (and what they started), one or several
# running at once, and remove its scratch folder, exit 128+N; SIGKILL still
# takes its direct children along. A tool that fails while others run
# stops them. The tools are wrappers around the real ones that start a busy
# grandchild first, so there is always something running to catch.
#   test_build_signal.sh AUTOSCHED SOURCE_DIR LLVM_BIN CALL_PROGRAM
. "$(dirname "$0")/../checks.sh"
args AS SRC LLVM_BIN CALL
scratch bsig

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

# Several tools at once: clang on the pieces of a program of many ops, one
# per CPU (wrappers that never finish), the other tools the real ones.
n=200
chain_mlir "$n" > "$T/chain.mlir"
mkdir "$T/par"
for t in mlir-opt mlir-translate opt llvm-extract llvm-split; do
	ln -s "$LLVM_BIN/$t" "$T/par/$t"
done
clang=$(basename "$(ls "$LLVM_BIN"/clang-[0-9]* | head -1)")
# The clang wrappers running under pid $1 (their shells), one per line.
clangs() {
	local p
	for p in $(descendants "$1"); do
		ps -o args= -p "$p" 2>/dev/null | grep -q "/par/$clang " && echo "$p"
	done
}
ncpu=$(nproc)
want=$((ncpu < 2 ? ncpu : 2))
cat > "$T/par/$clang" <<'EOF'
#!/bin/sh
sh -c 'while :; do :; done' &
wait
EOF
chmod +x "$T/par/$clang"
rm -rf "$T/tmp"/*
AUTOSCHED_LLVM_BIN=$T/par TMPDIR=$T/tmp env --default-signal "$AS" build \
    "$T/chain.mlir" --untuned --rest-fuse off -o "$T/chain.so" 2> "$T/err_par" &
pid=$!
running=0
for i in $(seq 600); do
	running=$(clangs "$pid" | wc -l)
	[ "$running" -ge "$want" ] && break
	sleep 0.1
done
check "parallel: $want clang at once (of $ncpu CPUs)" ge "$running" "$want"
sleep 0.2
kids=$(descendants "$pid")
kill -TERM "$pid"
wait "$pid"
check "parallel: SIGTERM: exit 143" eq "$?" 143
check "parallel: every clang and what it started gone" all_gone $kids
check "parallel: scratch folder removed" eq "$(ls -A "$T/tmp")" ""
check "parallel: nothing written" [ ! -e "$T/chain.so" ]
check "parallel: says it was interrupted" grep -q 'interrupted' "$T/err_par"

# One clang fails while the others run: they are killed, its error is said.
cat > "$T/par/$clang" <<'EOF'
#!/bin/sh
case "$*" in
*piece.0\ *) sleep 1; echo "clang: error: this piece fails" >&2; exit 1 ;;
esac
sh -c 'while :; do :; done' &
wait
EOF
AUTOSCHED_LLVM_BIN=$T/par TMPDIR=$T/tmp timeout 120 "$AS" build \
    "$T/chain.mlir" --untuned --rest-fuse off -o "$T/chain.so" 2> "$T/err_fail" &
pid=$!
kids=""
for i in $(seq 400); do
	kids="$kids $(descendants "$pid")"
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
wait "$pid"
check "a piece fails: exit 2, not the timeout" eq "$?" 2
check "a piece fails: its error said" grep -q 'clang failed: clang: error: this piece fails' "$T/err_fail"
check "a piece fails: the others killed" all_gone $kids
check "a piece fails: scratch folder removed" eq "$(ls -A "$T/tmp")" ""
check "a piece fails: nothing written" [ ! -e "$T/chain.so" ]

# The tools as they are: the build still works.
rm -rf "$T/tmp"/*
TMPDIR=$T/tmp "$AS" build "$T/example.mlir" --untuned -o "$T/ex.so" 2> "$T/err_ok"
check "unsignalled build exits 0" eq "$?" 0
check "unsignalled build: scratch folder removed" eq "$(ls -A "$T/tmp")" ""
check "unsignalled build: opens with RTLD_NOW" "$CALL" load "$T/ex.so"

echo "build_signal: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
