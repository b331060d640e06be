#!/usr/bin/env bash
# The HTML report end to end: a tiny real job (with a failing config), then
# `autosched report`; its points and counts checked against the store, and
# the page loaded in headless Chromium (screenshot not blank, the page's
# script ran, no console error). Also report_file = at the end of `run`,
# `autosched watch`, and bad usage.
#   test_report.sh AUTOSCHED SOURCE_DIR
. "$(dirname "$0")/../checks.sh"
args AS SRC
scratch report
private_work
q() { sqlite3 -cmd ".timeout 10000" "$T/s.db" "$1"; }

cp "$SRC/tests/job/fixtures/small_f32.mlir" "$T/"
cat > "$T/a.cfg" <<C
[Env]
input_file = small_f32.mlir
report_file = run.html
[SearchSpace]
$(space tile_m=16,32,64 tile_n=16,48 tile_k=8,32 threads=1,2 pack_b=1 pack_a=0 vector_m=4 vector_n=16)
[SearchStrategy]
tuner = random
n_trial = 6
[Measure]
min_time = 0.01
min_reps = 3
confirm_top = 2
timeout = 5
C
# One config fails to compile: the report must mark it.
AUTOSCHED_TEST_FAULT="compile_fail:tile_32x48x32" "$AS" run "$T/a.cfg" \
    --db "$T/s.db" --quiet > "$T/run.txt" 2>&1
check "run exits 0" eq "$?" 0
check "report_file written at the end of the run" test -s "$T/run.html"
check "the job log says where" bash -c "'$AS' log 1 --db '$T/s.db' | grep -q 'report written to'"

"$AS" report --db "$T/s.db" -o "$T/r.html" > /dev/null
check "report exits 0" eq "$?" 0
check "report written" test -s "$T/r.html"
"$AS" report --db "$T/s.db" --job 1 -o "$T/j.html" > /dev/null
check "report --job exits 0" eq "$?" 0
"$AS" report --db "$T/s.db" --op 64x48x32 -o "$T/o.html" > /dev/null
check "report --op exits 0" eq "$?" 0

# The page against the store: points, failures, counts, summary.
OP=$(q "select name from ops limit 1")
check "the store has the op" test -n "$OP"
check "points and counts match the store" python3 - "$T/r.html" "$T/s.db" "$OP" <<'PY'
import sqlite3, sys, re
from html.parser import HTMLParser
html, db, opname = sys.argv[1:4]
con = sqlite3.connect(db)
op_id, = con.execute("select id from ops where name=?", (opname,)).fetchone()

class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.section = None; s.pts = {}; s.fails = {}
        s.counts = {}; s.phase_row = None; s.cells = []; s.in_td = False
        s.best_rows = 0; s.in_best = False; s.ext = []; s.charts = {}
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == 'h2' and a.get('class') == 'op': s.section = a.get('data-op')
        if tag == 'svg': s.charts[a.get('class')] = s.charts.get(a.get('class'), 0) + 1
        if tag == 'circle' and a.get('class') == 'pt' and s.section == opname:
            s.pts[int(a['data-trial'])] = float(a['data-gflops'])
        if tag == 'path' and a.get('class') == 'fail' and s.section == opname:
            s.fails[int(a['data-trial'])] = a['data-status']
        if tag == 'table' and a.get('id') == 'best': s.in_best = True
        if tag == 'tr' and s.in_best: s.best_rows += 1
        for k in ('src', 'href'):
            if k in a and re.match(r'(https?:)?//', a[k] or ''): s.ext.append(a[k])
        if tag == 'link' or (tag == 'script' and 'src' in a): s.ext.append(tag)
    def handle_endtag(s, tag):
        if tag == 'table': s.in_best = False
p = P(); p.feed(open(html, encoding='utf-8').read())
ok = True
def want(c, msg):
    global ok
    if not c: print('  ' + msg, file=sys.stderr); ok = False
rows = con.execute("""select id, gflops from trials where op_id=? and
    status in ('ok','unstable') and gflops > 0""", (op_id,)).fetchall()
want(set(p.pts) == {r[0] for r in rows}, f'plotted trials {sorted(p.pts)} != store {sorted(r[0] for r in rows)}')
for i, g in rows:
    want(abs(p.pts.get(i, -1) - g) <= 1e-4 * max(1, g), f'trial {i}: plotted {p.pts.get(i)} != {g}')
bad = dict(con.execute("""select id, status from trials where op_id=? and
    not (status in ('ok','unstable') and gflops > 0)""", (op_id,)).fetchall())
want(p.fails == bad, f'failures {p.fails} != store {bad}')
want('compile_failed' in p.fails.values(), 'the injected compile failure is not marked')
nbest = con.execute("select count(*) from best").fetchone()[0]
want(p.best_rows == nbest + 1, f'summary has {p.best_rows - 1} rows, best has {nbest}')
for cls in ('chart-conv', 'chart-trials', 'chart-knob', 'chart-ci', 'chart-time'):
    want(p.charts.get(cls, 0) > 0, f'no {cls} chart')
want(not p.ext, f'external references: {p.ext}')
sys.exit(0 if ok else 1)
PY
check "status counts match the store" python3 - "$T/r.html" "$T/s.db" <<'PY'
import sqlite3, sys, re
html = open(sys.argv[1], encoding='utf-8').read()
con = sqlite3.connect(sys.argv[2])
ok = True
for phase, status, n in con.execute("select phase, status, count(*) from trials group by 1, 2"):
    # the row of this phase in the counts table, the cell of this status
    m = re.search(r'<tr><td>' + re.escape(phase) + r'</td>(.*?)</tr>', html)
    c = m and re.search(r'data-status="' + status + r'">(\d+)<', m.group(1))
    if not c or int(c.group(1)) != n:
        print(f'  {phase}/{status}: want {n}, got {c and c.group(1)}', file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY

# A real browser: it loads the file offline, draws it, runs its script.
CHROME=$(command -v chromium || command -v chromium-browser || true)
check "chromium is installed (scripts/deps.sh)" test -n "$CHROME"
if [ -n "$CHROME" ]; then
	flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	    --disable-background-networking --disable-component-update --disable-sync
	    --enable-logging=stderr --v=0)
	timeout 120 "$CHROME" "${flags[@]}" --user-data-dir="$T/ud1" \
	    --screenshot="$T/shot.png" --window-size=1280,2000 "file://$T/r.html" \
	    > "$T/chrome1.out" 2> "$T/chrome1.err"
	check "chromium took a screenshot" test -s "$T/shot.png"
	check "the screenshot is not blank" python3 "$SRC/tests/html/png_not_blank.py" "$T/shot.png"
	timeout 120 "$CHROME" "${flags[@]}" --user-data-dir="$T/ud2" \
	    --dump-dom "file://$T/r.html" > "$T/dom.html" 2> "$T/chrome2.err"
	check "the page's script ran" grep -q 'data-js-ok="1"' "$T/dom.html"
	check "no script error trapped" grep -q 'data-js-errors="0"' "$T/dom.html"
	check "no console error" bash -c "! grep -hiE 'CONSOLE|Uncaught|SyntaxError|ReferenceError|TypeError' '$T/chrome1.err' '$T/chrome2.err'"
fi

# 100,000 trials of one op (copies of a real tune trial, a tenth failed):
# a page of a few MB, each scatter thinned to at most 2000 points and saying
# so, every improvement of the best so far drawn, the counts still exact.
cp "$T/s.db" "$T/big.db"
python3 - "$T/big.db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in con.execute("pragma table_info(trials)") if r[1] != 'id']
src = con.execute("select min(id) from trials where phase='tune' and status in ('ok','unstable')").fetchone()[0]
expr = {'gflops': "t.gflops * (0.2 + (n.i * 7919 % 1000) / 1250.0 + n.i / 1e6)",
        'config_name': "'big_' || n.i",
        'status': "case when n.i % 10 = 0 then 'compile_failed' else t.status end"}
sel = ", ".join(expr.get(c, "t." + c) for c in cols)
with con:
    con.execute("with recursive n(i) as (select 1 union all select i + 1 from n where i < 100000) "
        "insert into trials (%s) select %s from n, trials t where t.id = %d" % (", ".join(cols), sel, src))
PY
"$AS" report --db "$T/big.db" -o "$T/big.html" > /dev/null 2> "$T/big.err"
check "100k trials: report exits 0" eq "$?" 0
check "100k trials: the page is under 4 MB" [ "$(wc -c < "$T/big.html")" -lt 4000000 ]
check "100k trials: thinned charts say how many of how many" python3 - "$T/big.html" "$T/big.db" <<'PY'
import re, sqlite3, sys
html = open(sys.argv[1], encoding='utf-8').read()
con = sqlite3.connect(sys.argv[2])
op, = con.execute("select op_id from trials group by op_id order by count(*) desc limit 1").fetchone()
name, = con.execute("select name from ops where id=?", (op,)).fetchone()
sec = html.split('data-op="%s"' % name)[1].split('<h2 ')[0]
ok = True
def want(c, msg):
    global ok
    if not c: print('  ' + msg, file=sys.stderr); ok = False
n_all, = con.execute("select count(*) from trials where op_id=?", (op,)).fetchone()
notes = re.findall(r'data-shown="(\d+)" data-total="(\d+)"', sec)
want(len(notes) == 2, f'{len(notes)} thinning notes, want 2 (trials, knobs)')
want(any(int(t) == n_all for s, t in notes), f'no note counting all {n_all} trials: {notes}')
for s, t in notes:
    want(int(s) <= 2000, f'{s} points drawn of {t}')
trials = sec.split('class="chart-trials"')[1].split('</svg>')[0]
pts = [int(x) for x in re.findall(r'class="pt" data-trial="(\d+)"', trials)]
fails = re.findall(r'class="fail" data-trial', trials)
want(len(pts) + len(fails) <= 2000, f'{len(pts) + len(fails)} points in the trials chart')
want(len(fails) > 0, 'no failure drawn')
best, rows = 0, []
for i, g in con.execute("select id, gflops from trials where op_id=? and status in ('ok','unstable') and gflops > 0 order by id", (op,)):
    if g > best: best = g; rows.append(i)
want(rows[-1] in pts, 'the best trial is not drawn')
want(not set(rows) - set(pts), f'{len(set(rows) - set(pts))} improvements not drawn')
cnt = re.search(r'compile_failed \((\d+)\)', sec)
nf, = con.execute("select count(*) from trials where op_id=? and status='compile_failed'", (op,)).fetchone()
want(cnt and int(cnt.group(1)) == nf, f'legend counts {cnt and cnt.group(1)} failures, store {nf}')
sys.exit(0 if ok else 1)
PY
if [ -n "$CHROME" ]; then
	timeout 60 "$CHROME" "${flags[@]}" --user-data-dir="$T/ud3" \
	    --dump-dom "file://$T/big.html" > "$T/bigdom.html" 2> /dev/null
	check "100k trials: chromium draws the page within 60 s" grep -q 'data-js-ok="1"' "$T/bigdom.html"
fi

# The terminal view of the same job.
"$AS" watch 1 --db "$T/s.db" --once > "$T/watch.txt"
check "watch exits 0" eq "$?" 0
check "watch shows the op and the progress" bash -c "grep -q '$OP' '$T/watch.txt' && grep -q '6/6 tune trials' '$T/watch.txt'"
check "watch shows the failure" grep -q 'compile_failed 1' "$T/watch.txt"

# Bad usage: exit 2, nothing written.
"$AS" report --db "$T/s.db" > /dev/null 2>&1
check "report without -o: exit 2" eq "$?" 2
"$AS" report --db "$T/s.db" --job 99 -o "$T/none.html" > /dev/null 2>&1
check "report of an unknown job: exit 2" eq "$?" 2
check "  nothing written" test ! -e "$T/none.html"
"$AS" report --db "$T/nope.db" -o "$T/none.html" > /dev/null 2>&1
check "report of a missing store: exit 2" eq "$?" 2
check "  no store created" test ! -e "$T/nope.db"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
