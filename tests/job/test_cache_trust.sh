#!/usr/bin/env bash
# The compile cache runs only what this user made (issue 19): a kernel.so
# planted in the cache (another owner, or a group-writable folder) is never
# loaded, neither by the backend nor by the harness; the job compiles again
# and completes. A cache root others can write stops the job (exit 2).
#   test_cache_trust.sh AUTOSCHED AUTOSCHED_MEASURE CC SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS MEASURE CC SRC
FIX=$SRC/tests/job/fixtures
scratch cache-trust
umask 022
export AUTOSCHED_WORK=$T/work
unset AUTOSCHED_DB
MARK=$T/planted-ran

has() { grep -q -- "$2" "$1" || { echo "  $1 lacks '$2':" >&2; head -c 800 "$1" >&2; return 1; }; }

# A kernel whose constructor leaves a mark: what a planted one would do.
cat > "$T/evil.c" <<C
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void)
{
	close(open("$MARK", O_WRONLY | O_CREAT, 0644));
}
void dispatch(const void *a, const void *b, void *c) { (void)a; (void)b; (void)c; }
C
deadline 120 "$CC" -shared -fPIC -o "$T/evil.so" "$T/evil.c" || { echo "cannot build evil.so" >&2; exit 1; }

mkdir -p "$T/job"
cp "$FIX/small_f32.mlir" "$T/job/m.mlir"
MIN_TIME=0.01 CONFIRM_TOP=0 grid_cfg m.mlir 2 5 > "$T/job/a.cfg" <<'CFG'
tile_m = [16,32]
tile_n = [16]
tile_k = [8]
CFG

# run NAME: the job on a fresh store; its exit status in $rc.
run() {
	"$AS" run "$T/job/a.cfg" --db "$T/$1.db" > "$T/$1.out" 2>&1
	rc=$?
}
valid() { q "$T/$1.db" "select count(*) from trials where phase='tune' and verified=1 and status in ('ok','unstable')"; }
# plant: every cached kernel.so replaced by evil.so, then "$@" on each folder.
plant() {
	local d n=0
	for d in "$AUTOSCHED_WORK"/mlir-cpu/*/; do
		d=${d%/}
		case $d in *.untrusted.*|*.tmp.*) continue ;; esac
		[ -f "$d/kernel.so" ] || continue
		cp "$T/evil.so" "$d/kernel.so"
		"$@" "$d"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# 0. A real job fills the cache with kernels of ours: 0755 folders, no group write.
run first
check "first run exits 0" eq "$rc" 0
check "first run: 2 valid trials" eq "$(valid first)" 2
check "cached folders are not group- or other-writable" \
    eq "$(find "$AUTOSCHED_WORK" -perm /022 | wc -l)" 0

# 1. Planted kernel, its folder made group-writable: not loaded, compiled again.
gw() { chmod g+w "$1"; }
check "planted in group-writable folders" plant gw
run gw
check "group-writable: the job completes" eq "$rc" 0
check "group-writable: the planted kernel never ran" test ! -e "$MARK"
check "group-writable: 2 valid trials (recompiled)" eq "$(valid gw)" 2
check "group-writable: says why it was not used" has "$T/gw.out" "not used (writable by its group"
check "group-writable: set aside" test -n "$(ls -d "$AUTOSCHED_WORK"/mlir-cpu/*.untrusted.* 2>/dev/null)"
check "group-writable: its compile was not counted as cached" \
    ge "$(q "$T/gw.db" "select count(*) from trials where phase='tune' and compile_s > 0")" 1

# 2. Planted kernel owned by another user (nobody): root only.
if [ "$(id -u)" -eq 0 ]; then
	mine() { chown nobody "$1/kernel.so"; }
	check "planted, owned by nobody" plant mine
	run nobody
	check "nobody's kernel: the job completes" eq "$rc" 0
	check "nobody's kernel: never ran" test ! -e "$MARK"
	check "nobody's kernel: 2 valid trials" eq "$(valid nobody)" 2
	check "nobody's kernel: says why" has "$T/nobody.out" "owned by uid $(id -u nobody), not by this user"

	# The harness checks again right before dlopen (it may run on a Slurm node).
	mkdir -p "$T/h"
	cp "$T/evil.so" "$T/h/kernel.so"
	chown nobody "$T/h/kernel.so"
	"$MEASURE" --kernel "$T/h/kernel.so" --shape 1x4x4x4 --types f32,f32,f32 \
	    --warmup 0 --min-time 0 --reps 1,1 --verify 1 > "$T/h.out" 2>&1
	check "harness: another owner's kernel is exit 2" eq "$?" 2
	check "harness: untrusted kernel named" has "$T/h.out" "untrusted kernel: owned by uid"
	check "harness: it never ran" test ! -e "$MARK"
else
	echo "not root: the other-owner cases are skipped"
fi

# The harness refuses a group-writable kernel, and one in a group-writable folder.
mkdir -p "$T/h2"
cp "$T/evil.so" "$T/h2/kernel.so"
chmod g+w "$T/h2/kernel.so"
"$MEASURE" --kernel "$T/h2/kernel.so" --shape 1x4x4x4 --types f32,f32,f32 \
    --warmup 0 --min-time 0 --reps 1,1 --verify 1 > "$T/h2.out" 2>&1
check "harness: a group-writable kernel is exit 2" eq "$?" 2
check "harness: says so" has "$T/h2.out" "untrusted kernel: writable by its group"
chmod g-w "$T/h2/kernel.so"; chmod g+w "$T/h2"
"$MEASURE" --kernel "$T/h2/kernel.so" --shape 1x4x4x4 --types f32,f32,f32 \
    --warmup 0 --min-time 0 --reps 1,1 --verify 1 > "$T/h3.out" 2>&1
check "harness: a kernel in a group-writable folder is exit 2" eq "$?" 2
check "harness: names the folder" has "$T/h3.out" "untrusted kernel: its folder $T/h2 is writable by its group"
ln -s "$T/h2/kernel.so" "$T/link.so"
chmod g-w "$T/h2"
"$MEASURE" --kernel "$T/link.so" --shape 1x4x4x4 --types f32,f32,f32 \
    --warmup 0 --min-time 0 --reps 1,1 --verify 1 > "$T/h4.out" 2>&1
check "harness: a symbolic link is exit 2" eq "$?" 2
check "harness: the planted kernels never ran" test ! -e "$MARK"

# 3. A cache root others can write: the job stops, exit 2, before any compile.
chmod g+w "$AUTOSCHED_WORK"
run root
check "group-writable cache root: exit 2" eq "$rc" 2
check "group-writable cache root: names it, what and how" has "$T/root.out" \
    "the compile cache $AUTOSCHED_WORK is not this user's to trust (writable by its group"
check "group-writable cache root: says AUTOSCHED_WORK" has "$T/root.out" "AUTOSCHED_WORK"
chmod g-w "$AUTOSCHED_WORK"
chmod o+w "$AUTOSCHED_WORK/mlir-cpu"
run root2
check "other-writable mlir-cpu folder: exit 2" eq "$rc" 2
check "other-writable mlir-cpu folder: named" has "$T/root2.out" "$AUTOSCHED_WORK/mlir-cpu is not this user's"
chmod o-w "$AUTOSCHED_WORK/mlir-cpu"
check "no planted kernel ever ran" test ! -e "$MARK"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
