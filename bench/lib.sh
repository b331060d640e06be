# Sourced by the benchmarks once they have set top (the source tree): the
# deadline helper, the build tree they run (BUILD, default build) and its
# autosched (AS), and what each of them did alike before.
. "$top/scripts/deadline.sh"
build=${BUILD:-$top/build}
AS=$build/daemon/autosched

# bench_build [FILE...]: configure and build the build tree (Release) unless
# it holds autosched and each FILE (a path under it) already.
bench_build() {
	local f missing=
	[ -x "$AS" ] || missing=1
	for f in "$@"; do
		[ -x "$build/$f" ] || missing=1
	done
	[ -n "$missing" ] || return 0
	deadline 600 cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	deadline 3600 cmake --build "$build" -j2 >/dev/null
}

# bench_work NAME: work, a new temporary folder, removed at exit unless
# KEEP is set.
bench_work() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT INT TERM
}
