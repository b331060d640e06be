# Soak: 50 tiny jobs through one daemon. Its memory (VmRSS) and open files
# must not grow between job 10 and job 50 beyond a small margin.
. "$(dirname "$0")/lib.sh"

mkjob s 32 32 32 1
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DPID/status"; }
nfd() { ls "/proc/$DPID/fd" | wc -l; }
ndone() { q "$DB" "SELECT count(*) FROM jobs WHERE state = 'done'"; }
done_is() { [ "$(ndone)" -eq "$1" ]; }
submit_n() {
	local i
	for i in $(seq "$1"); do
		"$AS" submit "$T/s.cfg" --db "$DB" > /dev/null || fail "submit $i"
	done
}

start_daemon
submit_n 10
check "first 10 jobs done" wait_for 120 done_is 10
rss10=$(rss)
fd10=$(nfd)
submit_n 40
check "50 jobs done" wait_for 150 done_is 50
rss50=$(rss)
fd50=$(nfd)
echo "VmRSS: ${rss10} kB after 10 jobs, ${rss50} kB after 50; fds: $fd10, $fd50"
check "no growth of memory (< 4 MiB)" [ $((rss50 - rss10)) -lt 4096 ]
check "no growth of open files" [ "$fd50" -le "$fd10" ]
check "all 50 done" [ "$(ndone)" -eq 50 ]
check "nothing failed" [ "$(q "$DB" "SELECT count(*) FROM jobs WHERE state <> 'done'")" -eq 0 ]
stop_daemon TERM
check "exit 0" [ "$DRC" -eq 0 ]
check "integrity" integrity_ok "$DB"
finish
