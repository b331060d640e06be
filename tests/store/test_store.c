/*
 * Tests of the store: schema and migrations, ids, trial round trips, resume,
 * walks, best, the job queue (claimed from several processes at once), logs,
 * and a kill -9 in the middle of inserting trials.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "best/best.h"
#include "store/store.h"
#include "util/util.h"
#include "tests/check.h"

static char	tmpdir[] = "/tmp/test_store.XXXXXX";

/* A fresh store path in the test's folder. Caller frees. */
static char *
db_path(const char *name)
{
	return xasprintf("%s/%s.db", tmpdir, name);
}

/* Run SQL straight on a file, for what the store API must not allow. */
static void
raw_exec(const char *path, const char *sql)
{
	sqlite3	*db;

	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		fprintf(stderr, "raw_exec %s: %s\n", sql, sqlite3_errmsg(db));
	sqlite3_close(db);
}

static const char *
raw_text(const char *path, const char *sql, char *buf, size_t len)
{
	sqlite3		*db;
	sqlite3_stmt	*st;

	buf[0] = '\0';
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return buf;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_text(st, 0) != NULL)
			snprintf(buf, len, "%s", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return buf;
}

static struct op_desc
make_op(const char *name, int64_t m, int64_t n, int64_t k, int ta, int tb)
{
	struct op_desc op;

	memset(&op, 0, sizeof op);
	op.kind = "matmul";
	op.op_name = "linalg.matmul";
	op.name = name;
	op.batch = 1;
	op.m = m;
	op.n = n;
	op.k = k;
	op.lhs = op.rhs = op.acc = ELEM_F32;
	op.transpose_a = ta;
	op.transpose_b = tb;
	op.function = "main";
	op.loc = "x.mlir:1:1";
	op.tunable = 1;
	return op;
}

/* A trial whose every field is derived from seed, to check round trips. */
static void
make_trial(struct store_trial *t, int64_t job, int64_t op, int64_t target,
    const char *phase, const char *config_name, int seed, double gflops)
{
	int	k;

	memset(t, 0, sizeof *t);
	t->job_id = job;
	t->op_id = op;
	t->target_id = target;
	t->phase = phase;
	t->config_name = config_name;
	for (k = 0; k < KNOB_COUNT; k++)
		t->config.v[k] = seed * 100 + k + 1;
	t->result.status = (enum trial_status)(seed % TRIAL_STATUS_COUNT);
	t->result.median_ms = 1.5 + seed;
	t->result.min_ms = 1.25 + seed;
	t->result.max_ms = 2.75 + seed;
	t->result.cv = 0.0125 * seed;
	t->result.reps = 10 + seed;
	t->result.gflops = gflops;
	t->result.compile_s = 0.5 * seed;
	t->result.measure_s = 0.25 * seed;
	t->result.verified = seed & 1;
	t->result.max_err = 1e-6 * seed;
	snprintf(t->result.artifact, sizeof t->result.artifact,
	    "%016x", 0xabc000u + seed);
	t->result.error = seed % 3 ? NULL : xasprintf("error 'it's' \"%d\"\n"
	    "second line", seed);
	if (seed & 1)
		snprintf(t->result.checked_by, sizeof t->result.checked_by,
		    "exact:openblas-dgemm(dense data)");
	t->result.reps_dropped = seed;
	/* Some counters measured, the others absent (NULL). */
	t->result.counters_have = seed & 1 ? 1u << TRIAL_CTR_CONTEXT_SWITCHES :
	    0x0fu;
	for (k = 0; k < TRIAL_CTR_COUNT; k++) {
		if (t->result.counters_have & (1u << k))
			t->result.counters[k] = 1000 * (int64_t)seed + k;
	}
	t->created = 1700000000.5 + seed;
}

static int
result_equal(const struct trial_result *a, const struct trial_result *b)
{
	if (a->error == NULL || b->error == NULL) {
		if (a->error != b->error)
			return 0;
	} else if (strcmp(a->error, b->error) != 0)
		return 0;
	return a->status == b->status && a->median_ms == b->median_ms &&
	    a->min_ms == b->min_ms && a->max_ms == b->max_ms &&
	    a->cv == b->cv && a->reps == b->reps && a->gflops == b->gflops &&
	    a->compile_s == b->compile_s && a->measure_s == b->measure_s &&
	    a->verified == b->verified && a->max_err == b->max_err &&
	    strcmp(a->artifact, b->artifact) == 0 &&
	    strcmp(a->checked_by, b->checked_by) == 0 &&
	    a->reps_dropped == b->reps_dropped &&
	    a->counters_have == b->counters_have &&
	    memcmp(a->counters, b->counters, sizeof a->counters) == 0;
}

/*
 * The store at path (closed) made older: its view a stand-in (the view
 * names columns: the migration makes it again) and the columns
 * added[0..n) dropped from trials. The caller sets user_version.
 */
static void
downgrade(const char *path, const char *const *added, size_t n)
{
	char	*sql;
	size_t	 i;

	raw_exec(path, "DROP VIEW best");
	raw_exec(path, "CREATE VIEW best AS SELECT 1");
	for (i = 0; i < n; i++) {
		sql = xasprintf("ALTER TABLE trials DROP COLUMN %s", added[i]);
		raw_exec(path, sql);
		free(sql);
	}
}

/* The store at path, older than this build's, is refused read-only. */
static void
check_too_old_readonly(const char *path)
{
	struct store	*s;
	char		*err = NULL;

	CHECK(store_open_readonly(path, &s, &err) == -1);
	CHECK(err != NULL && strstr(err, "is older than") != NULL);
	free(err);
}

/*
 * An older store at path: one tune trial "old_cfg" of op on the target
 * (cpu, backend), *opid and *tgt, downgraded (added[0..n) dropped). The
 * caller drops the rest and sets user_version.
 */
static void
old_store(const char *path, const struct op_desc *op, const char *cpu,
    const char *backend, const char *const *added, size_t n, int64_t *opid,
    int64_t *tgt)
{
	struct store	*s;
	struct store_trial t;
	char		*err = NULL;

	CHECK(store_open(path, &s, &err) == 0);
	*opid = store_op(s, op, &err);
	*tgt = store_target(s, cpu, "", "tc", backend, &err);
	make_trial(&t, 0, *opid, *tgt, "tune", "old_cfg", 2, 5.0);
	CHECK(store_trial_add(s, &t, &err) > 0);
	free(t.result.error);
	store_close(s);
	downgrade(path, added, n);
}

/*
 * Schema 2 -> 3: a store written before the counters opens, migrates, keeps
 * its trials (their new columns NULL) and takes the new fields; the
 * reference-only fields are kept for reference trials only.
 */
static void
test_migrate_v3(void)
{
	static const char *const added[] = { "checked_by", "ref_routine",
	    "ref_same_precision", "reps_dropped", "context_switches",
	    "cpu_migrations", "page_faults", "task_clock_ns", "cycles",
	    "instructions", "cache_misses", "host", "pack_b", "gpu", "sm_mhz",
	    "mem_mhz", "temp_c", "power_w", "peak_gflops", "peak_routine",
	    "pad_smem", "pack_a" };
	struct op_desc	 op = make_op("matmul_32x32x32_f32t_f32t_f32t", 32, 32,
			    32, 0, 0);
	struct store	*s;
	struct store_trial t;
	struct trial_result r;
	char		*path = db_path("v2"), *err = NULL, *sql, buf[128];
	int64_t		 opid, tgt;
	size_t		 i;

	/* Make a version-2 store: today's, less what versions 3, 4, 6-9 add. */
	old_store(path, &op, "cpu-v2", "mlir-cpu", added,
	    sizeof added / sizeof added[0], &opid, &tgt);
	/* Version 7's tables. */
	raw_exec(path, "DROP TABLE job_ops");
	raw_exec(path, "DROP TABLE allocations");
	raw_exec(path, "DROP TABLE choices");
	raw_exec(path, "PRAGMA user_version = 2");
	CHECK(atoi(raw_text(path, "SELECT count(*) FROM pragma_table_info"
	    "('trials') WHERE name = 'task_clock_ns'", buf, sizeof buf)) == 0);

	/* Read-only cannot migrate: it says so. */
	CHECK(store_open_readonly(path, &s, &err) == -1);
	CHECK(err != NULL && strstr(err, "older") != NULL);
	free(err);
	err = NULL;

	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_schema_version(s, NULL) == STORE_SCHEMA_VERSION);
	for (i = 0; i < sizeof added / sizeof added[0]; i++) {
		sql = xasprintf("SELECT count(*) FROM pragma_table_info('trials')"
		    " WHERE name = '%s'", added[i]);
		CHECK(atoi(raw_text(path, sql, buf, sizeof buf)) == 1);
		free(sql);
	}
	/* The old trial: found, its new fields empty (NULL in SQL). */
	CHECK(store_trial_find(s, opid, tgt, "old_cfg", &r, &err) == 1);
	CHECK(r.counters_have == 0 && r.checked_by[0] == '\0' &&
	    r.reps_dropped == 0 && r.gflops == 5.0 && r.host[0] == '\0');
	trial_result_clear(&r);
	CHECK(strcmp(raw_text(path, "SELECT coalesce(task_clock_ns, 'null') "
	    "FROM trials WHERE config_name = 'old_cfg'", buf, sizeof buf),
	    "null") == 0);

	/* A reference trial keeps its routine; a tune trial never has one. */
	make_trial(&t, 0, opid, tgt, "reference", "openblas", 1, 50.0);
	snprintf(t.result.ref_routine, sizeof t.result.ref_routine,
	    "onednn:matmul_u8s8s32(brg:avx512_core_vnni)");
	t.result.ref_same_precision = 1;
	CHECK(store_trial_add(s, &t, &err) > 0);
	free(t.result.error);
	make_trial(&t, 0, opid, tgt, "tune", "new_cfg", 1, 6.0);
	snprintf(t.result.ref_routine, sizeof t.result.ref_routine, "bogus");
	/* Version 4: the host that measured, read back as written. */
	snprintf(t.result.host, sizeof t.result.host, "n2");
	CHECK(store_trial_add(s, &t, &err) > 0);
	free(t.result.error);
	CHECK(store_trial_find(s, opid, tgt, "new_cfg", &r, &err) == 1);
	CHECK_STR(r.host, "n2");
	trial_result_clear(&r);
	CHECK_STR(raw_text(path, "SELECT coalesce(host, 'null') FROM trials "
	    "WHERE config_name = 'old_cfg'", buf, sizeof buf), "null");
	CHECK_STR(raw_text(path, "SELECT ref_routine || ' ' || ref_same_precision"
	    " FROM trials WHERE phase = 'reference'", buf, sizeof buf),
	    "onednn:matmul_u8s8s32(brg:avx512_core_vnni) 1");
	CHECK_STR(raw_text(path, "SELECT coalesce(ref_routine, 'null') || ' ' ||"
	    " context_switches || ' ' || coalesce(page_faults, 'null') || ' ' ||"
	    " checked_by FROM trials WHERE config_name = 'new_cfg'", buf,
	    sizeof buf), "null 1000 null exact:openblas-dgemm(dense data)");
	CHECK(store_check(s, &err) == 0);
	store_close(s);
	free(path);
}

/* A GPU trial of the CUDA space's config 64x64x16, thread tile 4x4. */
static void
make_gpu_trial(struct store_trial *t, int64_t job, int64_t op, int64_t tgt,
    const char *phase, const char *name, double gflops)
{
	make_trial(t, job, op, tgt, phase, name, 2, gflops);
	memset(&t->config, 0, sizeof t->config);
	if (strcmp(phase, "reference") == 0)
		t->config.v[KNOB_THREADS] = 1;	/* as the engine records it */
	else if (strcmp(name, "baseline") != 0) {
		t->config.v[KNOB_TILE_M] = t->config.v[KNOB_TILE_N] = 64;
		t->config.v[KNOB_TILE_K] = 16;
		t->config.v[KNOB_VECTOR_M] = t->config.v[KNOB_VECTOR_N] = 4;
	}
	t->result.status = TRIAL_OK;
	free(t->result.error);
	t->result.error = NULL;
	snprintf(t->result.gpu, sizeof t->result.gpu, "NVIDIA H200");
	t->result.sm_mhz = 1980;
	t->result.temp_c = 41;
	t->result.power_w = 350;
	t->result.mem_mhz = strcmp(phase, "final") == 0 ? 3201 : 0;
}

/*
 * Schema 7 -> 8: a store written before the GPU's fields migrates (old rows
 * read "" and 0); GPU trials keep their GPU and clocks, a reference row its
 * peak (no other phase has one); best gives the winner's GPU and clocks,
 * the job's peak, the reference's routine and the choice's interval; a
 * clock out of range read back is refused, naming the column.
 */
static void
test_migrate_v8(void)
{
	static const char *const added[] = { "gpu", "sm_mhz", "mem_mhz",
	    "temp_c", "power_w", "peak_gflops", "peak_routine", "pad_smem",
	    "pack_a" };
	struct op_desc	 op = make_op("matmul_256x256x256_f32t_f32t_f32t", 256,
			    256, 256, 0, 0);
	struct store	*s;
	struct store_trial t;
	struct store_choice ch;
	struct store_job j;
	struct store_best *rows = NULL;
	struct trial_result r;
	char		*path = db_path("v7"), *err = NULL, buf[128];
	int64_t		 opid, tgt, job;
	size_t		 i, n = 0;

	old_store(path, &op, "NVIDIA GPU sm_80", "iree-cuda", added,
	    sizeof added / sizeof added[0], &opid, &tgt);
	raw_exec(path, "PRAGMA user_version = 7");
	check_too_old_readonly(path);

	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_schema_version(s, NULL) == STORE_SCHEMA_VERSION);
	CHECK(store_trial_find(s, opid, tgt, "old_cfg", &r, &err) == 1);
	CHECK(r.gpu[0] == '\0' && r.sm_mhz == 0 && r.peak_gflops == 0);
	trial_result_clear(&r);

	memset(&j, 0, sizeof j);
	job = store_job_add(s, &j, &err);
	make_gpu_trial(&t, job, opid, tgt, "baseline", "baseline", 500);
	CHECK(store_trial_add(s, &t, &err) > 0);
	make_gpu_trial(&t, job, opid, tgt, "final", "t64", 1000);
	t.result.peak_gflops = 9999;	/* not a reference row: not kept */
	snprintf(t.result.peak_routine, sizeof t.result.peak_routine, "x");
	CHECK(store_trial_add(s, &t, &err) > 0);
	make_gpu_trial(&t, job, opid, tgt, "reference", "reference_thr_1",
	    2000);
	snprintf(t.result.ref_routine, sizeof t.result.ref_routine,
	    "cublas:GemmEx");
	t.result.ref_same_precision = 1;
	t.result.peak_gflops = 4000;
	snprintf(t.result.peak_routine, sizeof t.result.peak_routine,
	    "peak:fma.rn.f32");
	CHECK(store_trial_add(s, &t, &err) > 0);
	memset(&ch, 0, sizeof ch);
	ch.job_id = job;
	ch.op_id = opid;
	ch.target_id = tgt;
	ch.config_name = "t64";
	ch.reason = "faster than the default";
	ch.speedup = 2;
	ch.lo = 1.9;
	ch.hi = 2.1;
	ch.rounds = 5;
	CHECK(store_choice_add(s, &ch, &err) > 0);
	CHECK_STR(raw_text(path, "SELECT coalesce(peak_gflops, 'null') || ' ' "
	    "|| gpu || ' ' || sm_mhz || ' ' || coalesce(mem_mhz, 'null') FROM "
	    "trials WHERE config_name = 't64'", buf, sizeof buf),
	    "null NVIDIA H200 1980 3201");
	CHECK_STR(raw_text(path, "SELECT peak_gflops || ' ' || peak_routine "
	    "FROM trials WHERE phase = 'reference'", buf, sizeof buf),
	    "4000.0 peak:fma.rn.f32");
	CHECK_STR(raw_text(path, "SELECT gpu || ' ' || peak_gflops || ' ' || "
	    "reference_gflops FROM best", buf, sizeof buf),
	    "NVIDIA H200 4000.0 2000.0");
	CHECK(store_best(s, NULL, job, &rows, &n, &err) == 0);
	CHECK(n == 1);
	if (n == 1) {
		CHECK_STR(rows[0].config_name, "t64");
		CHECK_STR(rows[0].gpu, "NVIDIA H200");
		CHECK(rows[0].sm_mhz == 1980 && rows[0].mem_mhz == 3201 &&
		    rows[0].temp_c == 41);
		CHECK(rows[0].reference_gflops == 2000 &&
		    rows[0].peak_gflops == 4000);
		CHECK_STR(rows[0].reference_routine, "cublas:GemmEx");
		CHECK_STR(rows[0].peak_routine, "peak:fma.rn.f32");
		CHECK_STR(rows[0].choice_reason, "faster than the default");
		CHECK(rows[0].speedup == 2 && rows[0].speedup_lo == 1.9 &&
		    rows[0].speedup_hi == 2.1 && rows[0].speedup_rounds == 5);
	}
	for (i = 0; i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);
	/* A clock no GPU has, written by hand: refused on read, named. */
	raw_exec(path, "UPDATE trials SET sm_mhz = 5000000 WHERE "
	    "config_name = 't64'");
	CHECK(store_best(s, NULL, job, &rows, &n, &err) == -1);
	CHECK(err != NULL && strstr(err, "sm_mhz") != NULL);
	free(err);
	err = NULL;
	CHECK(store_check(s, &err) == 0);
	store_close(s);
	free(path);
}

/*
 * Schema 8 -> 9: pad_smem. The iree-cuda rows of an f16 or bf16 op with
 * tiles were padded (IREE's default): 1; every other row (a CPU backend's,
 * f32 on CUDA, IREE's own choice) 0, the value of a knob its backend
 * lacks. The best view and store_best read it back.
 */
static void
test_migrate_v9(void)
{
	static const char *const added[] = { "pad_smem", "pack_a" };
	struct op_desc	 h = make_op("matmul_256x256x256_f16t_f16t_f32t", 256,
			    256, 256, 0, 0), f = make_op(
			    "matmul_128x128x128_f32t_f32t_f32t", 128, 128, 128,
			    0, 0);
	struct store	*s;
	struct store_trial t;
	struct store_best *rows = NULL;
	char		*path = db_path("v8"), *err = NULL, buf[128];
	int64_t		 oh, of, cuda, cpu;
	size_t		 i, n = 0;

	h.lhs = h.rhs = ELEM_F16;
	CHECK(store_open(path, &s, &err) == 0);
	oh = store_op(s, &h, &err);
	of = store_op(s, &f, &err);
	cuda = store_target(s, "NVIDIA GPU sm_80", "", "tc", "iree-cuda", &err);
	cpu = store_target(s, "cpu", "", "tc", "mlir-cpu", &err);
	make_gpu_trial(&t, 0, oh, cuda, "tune", "mma", 1000);
	CHECK(store_trial_add(s, &t, &err) > 0);
	make_gpu_trial(&t, 0, oh, cuda, "baseline", "baseline", 500);
	CHECK(store_trial_add(s, &t, &err) > 0);
	make_gpu_trial(&t, 0, of, cuda, "tune", "simt", 100);
	CHECK(store_trial_add(s, &t, &err) > 0);
	make_gpu_trial(&t, 0, oh, cpu, "tune", "cpu", 10);
	CHECK(store_trial_add(s, &t, &err) > 0);
	store_close(s);
	downgrade(path, added, sizeof added / sizeof added[0]);
	raw_exec(path, "PRAGMA user_version = 8");
	check_too_old_readonly(path);

	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_schema_version(s, NULL) == STORE_SCHEMA_VERSION);
	CHECK_STR(raw_text(path, "SELECT group_concat(config_name || '=' || "
	    "pad_smem, ' ') FROM (SELECT * FROM trials ORDER BY id)", buf,
	    sizeof buf), "mma=1 baseline=0 simt=0 cpu=0");
	CHECK_STR(raw_text(path, "SELECT config_name || ' ' || pad_smem FROM "
	    "best WHERE backend = 'iree-cuda' AND op LIKE '%f16t%'", buf,
	    sizeof buf), "mma 1");
	CHECK(store_best(s, "matmul_256x256x256_f16t_f16t_f32t", 0, &rows, &n,
	    &err) == 0);
	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].backend, "iree-cuda") == 0)
			CHECK(rows[i].config.v[KNOB_PAD_SMEM] == 1 &&
			    rows[i].config.v[KNOB_TILE_M] == 64 &&
			    rows[i].gflops == 1000);
		else
			CHECK(rows[i].config.v[KNOB_PAD_SMEM] == 0);
		store_best_clear(&rows[i]);
	}
	CHECK(n == 2);
	free(rows);
	CHECK(store_check(s, &err) == 0);
	store_close(s);
	free(path);
}

/* An mlir-cpu trial of config 64x64x256, register tile 4x16, A packed or not. */
static void
make_cpu_trial(struct store_trial *t, int64_t op, int64_t tgt,
    const char *phase, const char *name, double gflops, int pack_a)
{
	static const int64_t v[] = { 64, 64, 256, 4, 16, 1, 1 };
	int k;

	make_trial(t, 0, op, tgt, phase, name, 2, gflops);
	memset(&t->config, 0, sizeof t->config);
	for (k = 0; k < 7; k++)
		t->config.v[k] = v[k];
	t->config.v[KNOB_PACK_B] = 1;
	t->config.v[KNOB_PACK_A] = pack_a;
	t->result.status = TRIAL_OK;
	free(t->result.error);
	t->result.error = NULL;
}

/*
 * Schema 9 -> 10: pack_a. Every older row read A in place: 0, in the
 * trials and the best view; store_best reads it back, and a packed row
 * written after the migration keeps its 1 and its name.
 */
static void
test_migrate_v10(void)
{
	static const char *const added[] = { "pack_a" };
	struct op_desc	 op = make_op("matmul_64x64x2048_f32t_f32t_f32t", 64,
			    64, 2048, 0, 0);
	struct store	*s;
	struct store_trial t;
	struct store_best *rows = NULL;
	char		*path = db_path("v10"), *err = NULL, buf[128];
	int64_t		 opid, cpu;
	size_t		 i, n = 0;

	CHECK(store_open(path, &s, &err) == 0);
	opid = store_op(s, &op, &err);
	cpu = store_target(s, "cpu", "", "tc", "mlir-cpu", &err);
	make_cpu_trial(&t, opid, cpu, "tune", "inplace", 10, 0);
	CHECK(store_trial_add(s, &t, &err) > 0);
	make_cpu_trial(&t, opid, cpu, "baseline", "baseline", 5, 0);
	CHECK(store_trial_add(s, &t, &err) > 0);
	store_close(s);
	downgrade(path, added, sizeof added / sizeof added[0]);
	raw_exec(path, "PRAGMA user_version = 9");
	check_too_old_readonly(path);

	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_schema_version(s, NULL) == 10);
	CHECK_STR(raw_text(path, "SELECT group_concat(config_name || '=' || "
	    "pack_a, ' ') FROM (SELECT * FROM trials ORDER BY id)", buf,
	    sizeof buf), "inplace=0 baseline=0");
	CHECK_STR(raw_text(path, "SELECT config_name || ' ' || pack_a FROM "
	    "best", buf, sizeof buf), "inplace 0");
	make_cpu_trial(&t, opid, cpu, "tune", "packed_packa", 20, 1);
	CHECK(store_trial_add(s, &t, &err) > 0);
	CHECK_STR(raw_text(path, "SELECT config_name || ' ' || pack_a FROM "
	    "best", buf, sizeof buf), "packed_packa 1");
	CHECK(store_best(s, op.name, 0, &rows, &n, &err) == 0);
	CHECK(n == 1);
	for (i = 0; i < n; i++) {
		CHECK(rows[i].config.v[KNOB_PACK_A] == 1 &&
		    rows[i].gflops == 20);
		store_best_clear(&rows[i]);
	}
	free(rows);
	CHECK(store_check(s, &err) == 0);
	store_close(s);
	free(path);
}

static void
test_schema(void)
{
	struct store	*s;
	char		*path = db_path("schema"), *other, *err = NULL;
	char		 buf[64];

	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_schema_version(s, NULL) == STORE_SCHEMA_VERSION);
	store_close(s);
	CHECK(atoi(raw_text(path, "PRAGMA user_version", buf, sizeof buf)) ==
	    STORE_SCHEMA_VERSION);
	CHECK_STR(raw_text(path, "PRAGMA journal_mode", buf, sizeof buf), "wal");
	CHECK(atoi(raw_text(path, "SELECT value FROM meta WHERE key = "
	    "'schema_version'", buf, sizeof buf)) == STORE_SCHEMA_VERSION);
	raw_text(path, "SELECT value FROM meta WHERE key = 'created'", buf,
	    sizeof buf);
	CHECK(atof(buf) > 1e9);

	/* Reopen: nothing to migrate, created stays. */
	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_schema_version(s, NULL) == STORE_SCHEMA_VERSION);
	CHECK(store_check(s, &err) == 0);
	store_close(s);

	/* Read-only: reads, refuses writes. */
	CHECK(store_open_readonly(path, &s, &err) == 0);
	CHECK(store_target(s, "cpu", "", "", "x", &err) == -1);
	CHECK(err != NULL && strstr(err, path) != NULL);
	free(err);
	err = NULL;
	store_close(s);

	/* A store from the future is refused, clearly. */
	raw_exec(path, "PRAGMA user_version = 99");
	CHECK(store_open(path, &s, &err) == -1 && s == NULL);
	CHECK(err != NULL && strstr(err, "newer") != NULL &&
	    strstr(err, path) != NULL);
	free(err);
	err = NULL;
	CHECK(store_open_readonly(path, &s, &err) == -1);
	free(err);
	err = NULL;

	/* Some other program's database is not ours to migrate. */
	other = db_path("foreign");
	raw_exec(other, "CREATE TABLE t (x)");
	CHECK(store_open(other, &s, &err) == -1);
	CHECK(err != NULL && strstr(err, "not an autosched store") != NULL);
	free(err);
	err = NULL;
	free(other);

	/* A missing file cannot be opened read-only. */
	other = db_path("missing");
	CHECK(store_open_readonly(other, &s, &err) == -1);
	CHECK(err != NULL && strncmp(err, "store ", 6) == 0);
	free(err);
	free(other);
	free(path);
}

static void
test_ids(struct store *s)
{
	struct op_desc	 a = make_op("matmul_64x32x16_f32t_f32t_f32t", 64, 32,
			    16, 0, 0);
	struct op_desc	 b = a, c = a;
	char		*sig, *err = NULL;
	int64_t		 t1, t2, t3, o1, o2, o3;

	t1 = store_target(s, "znver4", "avx512f", "llvm 22", "mlir-cpu", &err);
	t2 = store_target(s, "znver4", "avx512f", "llvm 22", "mlir-cpu", &err);
	t3 = store_target(s, "znver4", "avx512f", "llvm 22", "iree", &err);
	CHECK(t1 > 0 && t1 == t2 && t3 > 0 && t3 != t1);
	CHECK(store_target(s, NULL, NULL, NULL, NULL, &err) > 0);

	sig = store_op_signature(&a);
	CHECK_STR(sig, "matmul_64x32x16_f32t_f32t_f32t");
	free(sig);
	b.transpose_b = 1;
	sig = store_op_signature(&b);
	CHECK_STR(sig, "matmul_64x32x16_f32t_f32t_f32t_tb");
	free(sig);
	c.kind = "batch_matmul";
	c.batch = 4;
	c.lhs = c.rhs = ELEM_I8;
	c.acc = ELEM_I32;
	c.lhs_unsigned = 1;
	c.transpose_a = 1;
	sig = store_op_signature(&c);
	CHECK_STR(sig, "batch_matmul_4x64x32x16_u8t_i8t_i32t_ta");
	free(sig);

	o1 = store_op(s, &a, &err);
	o2 = store_op(s, &a, &err);
	o3 = store_op(s, &b, &err);
	CHECK(o1 > 0 && o1 == o2 && o3 > 0 && o3 != o1);
	/* Same op under another name (another file): the same row. */
	a.name = "renamed";
	CHECK(store_op(s, &a, &err) == o1);
	CHECK(store_op(s, &c, &err) > 0);
	CHECK(err == NULL);
	free(err);
}

static void
test_trials(struct store *s)
{
	struct op_desc		 op = make_op("matmul_128x128x128_f32t_f32t_f32t",
				    128, 128, 128, 0, 0);
	struct store_trial	 t;
	struct trial_result	 r;
	char			*err = NULL, name[32];
	int64_t			 opid, tgt, id;
	int			 i;

	opid = store_op(s, &op, &err);
	tgt = store_target(s, "cpu-trials", "", "tc", "mlir-cpu", &err);

	/* Every field round-trips, with and without error text. */
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof name, "cfg_%d", i);
		make_trial(&t, 0, opid, tgt, "tune", name, i, 10.0 * i);
		CHECK((id = store_trial_add(s, &t, &err)) > 0);
		CHECK(store_trial_find(s, opid, tgt, name, &r, &err) == 1);
		CHECK(result_equal(&r, &t.result));
		trial_result_clear(&r);
		free(t.result.error);
	}

	/* The latest tune trial of a config is the one found. */
	make_trial(&t, 0, opid, tgt, "tune", "cfg_1", 3, 99.0);
	CHECK(store_trial_add(s, &t, &err) > 0);
	CHECK(store_trial_find(s, opid, tgt, "cfg_1", &r, &err) == 1);
	CHECK(r.gflops == 99.0 && r.error != NULL &&
	    strcmp(r.error, t.result.error) == 0);
	trial_result_clear(&r);
	free(t.result.error);

	/* Confirm trials, other targets and unknown configs are not resumed. */
	make_trial(&t, 0, opid, tgt, "confirm", "cfg_only_confirmed", 1, 5);
	CHECK(store_trial_add(s, &t, &err) > 0);
	CHECK(store_trial_find(s, opid, tgt, "cfg_only_confirmed", &r,
	    &err) == 0);
	CHECK(store_trial_find(s, opid, tgt + 1000, "cfg_1", &r, &err) == 0);
	CHECK(store_trial_find(s, opid, tgt, "nope", &r, &err) == 0);

	/* Bad input is refused before SQL. */
	make_trial(&t, 0, opid, tgt, "warmup", "x", 1, 1);
	CHECK(store_trial_add(s, &t, &err) == -1);
	CHECK(err != NULL && strstr(err, "warmup") != NULL);
	free(err);
	err = NULL;
	make_trial(&t, 0, opid + 1000, tgt, "tune", "x", 1, 1);
	CHECK(store_trial_add(s, &t, &err) == -1);	/* no such op */
	CHECK(err != NULL && strstr(err, "FOREIGN KEY") != NULL);
	free(err);
	err = NULL;

	/* Without a name, the config is named by the search module. */
	make_trial(&t, 0, opid, tgt, "tune", NULL, 1, 1);
	CHECK(store_trial_add(s, &t, &err) > 0);

	CHECK(store_trial_count(s, 0, NULL) >= 9);
}

struct walk {
	int	n;
	int	stop_at;
	int64_t	last_id;
	int	ordered;
	int	op_ok;
	int	phase_ok;
	const char *phase;
	int	nested;
	struct store *s;
};

static int
walk_fn(const struct store_trial *t, const struct op_desc *op, void *arg)
{
	struct walk	*w = arg;
	struct trial_result r;

	w->n++;
	if (t->id <= w->last_id)
		w->ordered = 0;
	w->last_id = t->id;
	if (op->m != 256 || op->n != 64 || op->k != 32 || op->lhs != ELEM_F32 ||
	    op->acc != ELEM_F32 || op->transpose_b != 1 || op->batch != 1 ||
	    strcmp(op->kind, "matmul") != 0 || strcmp(op->name, "walk_op") != 0)
		w->op_ok = 0;
	if (w->phase != NULL && strcmp(t->phase, w->phase) != 0)
		w->phase_ok = 0;
	/* The store may be used from inside a walk. */
	if (w->s != NULL && store_trial_find(w->s, t->op_id, t->target_id,
	    t->config_name, &r, NULL) >= 0) {
		w->nested++;
		trial_result_clear(&r);
	}
	return w->stop_at != 0 && w->n == w->stop_at ? 7 : 0;
}

static void
test_foreach(struct store *s)
{
	struct op_desc		 op = make_op("walk_op", 256, 64, 32, 0, 1);
	struct op_desc		 op2 = make_op("walk_other", 8, 8, 8, 0, 0);
	struct store_trial	 t;
	struct walk		 w;
	char			*err = NULL, name[32];
	int64_t			 o1, o2, g1, g2;
	int			 i;

	o1 = store_op(s, &op, &err);
	o2 = store_op(s, &op2, &err);
	g1 = store_target(s, "walk-cpu", "", "", "mlir-cpu", &err);
	g2 = store_target(s, "walk-cpu2", "", "", "mlir-cpu", &err);
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "w%d", i);
		make_trial(&t, 0, i % 4 == 3 ? o2 : o1, i % 2 ? g2 : g1,
		    i % 5 == 0 ? "baseline" : "tune", name, i, i);
		CHECK(store_trial_add(s, &t, &err) > 0);
		free(t.result.error);
	}
	/* o1: i % 4 != 3 → 15 trials; on g1 (even i): 10; tune & g1: 8. */
#define WALK_INIT(w) do { memset(&(w), 0, sizeof (w)); (w).ordered = 1;	\
	(w).op_ok = 1; (w).phase_ok = 1; } while (0)
	WALK_INIT(w);
	CHECK(store_trial_foreach(s, o1, 0, NULL, walk_fn, &w, &err) == 0);
	CHECK(w.n == 15 && w.ordered && w.op_ok);
	WALK_INIT(w);
	CHECK(store_trial_foreach(s, o1, g1, NULL, walk_fn, &w, &err) == 0);
	CHECK(w.n == 10);
	WALK_INIT(w);
	w.phase = "tune";
	w.s = s;
	CHECK(store_trial_foreach(s, o1, g1, "tune", walk_fn, &w, &err) == 0);
	CHECK(w.n == 8 && w.phase_ok && w.nested == 8);
	WALK_INIT(w);
	CHECK(store_trial_foreach(s, 0, g2, NULL, walk_fn, &w, &err) == 0);
	CHECK(w.n == 10);
	WALK_INIT(w);
	w.stop_at = 3;
	CHECK(store_trial_foreach(s, o1, 0, NULL, walk_fn, &w, &err) == 7);
	CHECK(w.n == 3);
	WALK_INIT(w);
	CHECK(store_trial_foreach(s, 0, 0, "baseline", walk_fn, &w, &err) == 0);
	CHECK(w.n >= 4);
	CHECK(err == NULL);
}

static void
test_best(struct store *s)
{
	struct op_desc		 a = make_op("best_a", 512, 512, 512, 0, 0);
	struct op_desc		 b = make_op("best_b", 1024, 64, 64, 0, 0);
	struct op_desc		 c = make_op("best_c", 64, 64, 64, 0, 0);
	struct store_trial	 t;
	struct store_best	*rows;
	struct store_job	 j;
	struct config		 cfg;
	size_t			 n, i;
	char			*err = NULL;
	int64_t			 oa, ob, oc, g, j1, j2;

	memset(&j, 0, sizeof j);
	j1 = store_job_add(s, &j, &err);
	j2 = store_job_add(s, &j, &err);
	oa = store_op(s, &a, &err);
	ob = store_op(s, &b, &err);
	g = store_target(s, "best-cpu", "", "llvm", "mlir-cpu", &err);

	/* A point of mlir-cpu's space for both ops (read back, it is checked). */
	memset(&cfg, 0, sizeof cfg);
	cfg.v[KNOB_TILE_M] = cfg.v[KNOB_TILE_N] = cfg.v[KNOB_TILE_K] = 64;
	cfg.v[KNOB_VECTOR_M] = 8;
	cfg.v[KNOB_VECTOR_N] = 16;
	cfg.v[KNOB_VECTOR_K] = cfg.v[KNOB_THREADS] = cfg.v[KNOB_PACK_B] = 1;
#define ADD(job, op, phase, name, st, gf) do {			\
	make_trial(&t, job, op, g, phase, name, 1, gf);			\
	t.config = cfg;							\
	t.result.status = (st);						\
	free(t.result.error);						\
	t.result.error = NULL;						\
	CHECK(store_trial_add(s, &t, &err) > 0);			\
} while (0)
	/* Job 1 on a: tune, then confirm of the top two. */
	ADD(j1, oa, "baseline", "base", TRIAL_OK, 20);
	ADD(j1, oa, "reference", "openblas", TRIAL_OK, 150);
	ADD(j1, oa, "tune", "c1", TRIAL_OK, 100);
	ADD(j1, oa, "tune", "c2", TRIAL_OK, 98);
	ADD(j1, oa, "tune", "c3", TRIAL_OK, 97);
	ADD(j1, oa, "tune", "wrong", TRIAL_WRONG_RESULT, 500);
	ADD(j1, oa, "confirm", "c1", TRIAL_OK, 90);
	ADD(j1, oa, "confirm", "c2", TRIAL_OK, 92);
	/* Job 2 on b: tune only; a failed baseline. */
	ADD(j2, ob, "baseline", "base", TRIAL_CRASHED, 0);
	ADD(j2, ob, "tune", "d1", TRIAL_OK, 40);
	ADD(j2, ob, "tune", "d2", TRIAL_UNSTABLE, 80);
	ADD(j2, ob, "tune", "d3", TRIAL_OK, 45);
	/* Job 2 also tunes a, unconfirmed, lower than a's confirmed best. */
	ADD(j2, oa, "tune", "c9", TRIAL_OK, 91);
	ADD(j2, oa, "baseline", "base", TRIAL_OK, 21);

	CHECK(best_configs(s, "best_", 0, &rows, &n, &err) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK_STR(rows[0].op_name, "best_a");
		CHECK_STR(rows[0].config_name, "c2");	/* confirmed winner */
		CHECK(rows[0].gflops == 92 && rows[0].confirmed == 1);
		CHECK(rows[0].baseline_gflops == 20);	/* the winning job's */
		CHECK(rows[0].reference_gflops == 150);
		CHECK(rows[0].trials == 5);
		CHECK(rows[0].job_id == j1 && rows[0].target_id == g);
		CHECK(rows[0].config.v[KNOB_TILE_M] == 64);
		CHECK_STR(rows[0].cpu, "best-cpu");
		CHECK_STR(rows[0].backend, "mlir-cpu");
		CHECK_STR(rows[1].op_name, "best_b");
		/* Unstable is noisy, not wrong: it can win. */
		CHECK_STR(rows[1].config_name, "d2");
		CHECK(rows[1].confirmed == 0 && rows[1].baseline_gflops == 0 &&
		    rows[1].reference_gflops == 0 && rows[1].trials == 3);
	}
	for (i = 0; i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);

	/* Filter by signature substring and by job. */
	CHECK(best_configs(s, "matmul_1024x64x64", 0, &rows, &n, &err) == 0);
	CHECK(n == 1 && strcmp(rows[0].op_name, "best_b") == 0);
	for (i = 0; i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);
	CHECK(best_configs(s, "best_a", j2, &rows, &n, &err) == 0);
	CHECK(n == 1 && strcmp(rows[0].config_name, "c9") == 0 &&
	    rows[0].trials == 1 && rows[0].reference_gflops == 0 &&
	    rows[0].baseline_gflops == 21);
	for (i = 0; i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);
	CHECK(best_configs(s, "no such op", 0, &rows, &n, &err) == 0 && n == 0);
	free(rows);
	CHECK(err == NULL);

	/*
	 * A best config outside the space's rules (written by hand, say) is
	 * refused on read, the message naming the op, config and knob, escaped.
	 */
	oc = store_op(s, &c, &err);
	cfg.v[KNOB_VECTOR_N] = 80;		/* wider than its tile, 64 */
	ADD(j1, oc, "tune", "bad\x1b[2Jname", TRIAL_OK, 1000);
	CHECK(best_configs(s, "best_c", 0, &rows, &n, &err) == -1 && n == 0);
	CHECK(err != NULL && strstr(err, "op best_c: config "
	    "bad\\x1b[2Jname: vector_n 80: does not fit in the N tile 64") !=
	    NULL);
	CHECK(rows == NULL);
	free(err);
	err = NULL;
	/* The others are still read (the filter leaves the bad one out). */
	CHECK(best_configs(s, "best_a", 0, &rows, &n, &err) == 0 && n == 1);
	for (i = 0; i < n; i++)
		store_best_clear(&rows[i]);
	free(rows);
	CHECK(err == NULL);
}

static void
test_jobs(struct store *s)
{
	struct store_job	 j, got, *list;
	size_t			 n, i;
	char			*err = NULL;
	int64_t			 lo, hi1, hi2, run;

	/* Two store_best jobs are queued already; take them out of the way. */
	while (store_job_claim(s, &got, &err) == 1) {
		CHECK(store_job_set_state(s, got.id, "done", NULL, &err) == 0);
		store_job_clear(&got);
	}

	memset(&j, 0, sizeof j);
	j.cfg_path = "/x/auto-scheduler.cfg";
	j.cfg_text = "[Env]\ninput_file = m.mlir\n";
	j.mlir_path = "/x/m.mlir";
	j.mlir_text = "module {}";
	j.mlir_hash = "0123456789abcdef";
	j.tuner = "grid";
	j.n_trial = 16;
	j.created = 1000;
	lo = store_job_add(s, &j, &err);
	j.priority = 5;
	j.created = 3000;
	hi1 = store_job_add(s, &j, &err);
	j.created = 2000;	/* older, same priority: first */
	hi2 = store_job_add(s, &j, &err);
	CHECK(lo > 0 && hi1 > 0 && hi2 > 0);

	CHECK(store_job_get(s, lo, &got, &err) == 1);
	CHECK_STR(got.state, "queued");
	CHECK_STR(got.cfg_text, j.cfg_text);
	CHECK_STR(got.mlir_hash, j.mlir_hash);
	CHECK_STR(got.tuner, "grid");
	CHECK(got.n_trial == 16 && got.created == 1000 && got.started == 0 &&
	    got.error == NULL && got.priority == 0);
	store_job_clear(&got);
	CHECK(store_job_get(s, 99999, &got, &err) == 0);

	CHECK(store_job_claim(s, &got, &err) == 1 && got.id == hi2);
	CHECK_STR(got.state, "running");
	CHECK(got.started > 1e9);
	store_job_clear(&got);
	CHECK(store_job_claim(s, &got, &err) == 1 && got.id == hi1);
	store_job_clear(&got);
	CHECK(store_job_claim(s, &got, &err) == 1 && got.id == lo);
	store_job_clear(&got);
	CHECK(store_job_claim(s, &got, &err) == 0);

	/* Cancel: a running job is asked, a queued one stops at once. */
	CHECK(store_job_cancel_requested(s, hi2) == 0);
	CHECK(store_job_cancel(s, hi2, &err) == 0);
	CHECK(store_job_cancel_requested(s, hi2) == 1);
	CHECK(store_job_get(s, hi2, &got, &err) == 1);
	CHECK_STR(got.state, "running");
	store_job_clear(&got);
	j.priority = 0;
	j.created = 0;
	run = store_job_add(s, &j, &err);
	CHECK(store_job_cancel(s, run, &err) == 0);
	CHECK(store_job_get(s, run, &got, &err) == 1);
	CHECK_STR(got.state, "cancelled");
	CHECK(got.finished > 1e9 && got.created > 1e9);
	store_job_clear(&got);
	CHECK(store_job_cancel(s, run, &err) == -1);	/* already over */
	CHECK(err != NULL && strstr(err, "cancelled") != NULL);
	free(err);
	err = NULL;
	CHECK(store_job_cancel(s, 99999, &err) == -1);
	free(err);
	err = NULL;

	/* Progress, states, stamps, errors. */
	CHECK(store_job_set_progress(s, lo, 7, &err) == 0);
	CHECK(store_job_set_state(s, lo, "failed", "backend 'x' died", &err) == 0);
	CHECK(store_job_get(s, lo, &got, &err) == 1);
	CHECK(got.trials_done == 7 && got.finished > 0);
	CHECK_STR(got.error, "backend 'x' died");
	store_job_clear(&got);
	CHECK(store_job_set_state(s, lo, "bogus", NULL, &err) == -1);
	free(err);
	err = NULL;
	CHECK(store_job_set_state(s, 99999, "done", NULL, &err) == -1);
	free(err);
	err = NULL;

	/* A crash leaves hi1 running (requeued) and hi2 asked to stop. */
	CHECK(store_job_requeue_running(s, &err) == 1);
	CHECK(store_job_get(s, hi1, &got, &err) == 1);
	CHECK_STR(got.state, "queued");
	CHECK(got.started == 0);
	store_job_clear(&got);
	CHECK(store_job_get(s, hi2, &got, &err) == 1);
	CHECK_STR(got.state, "cancelled");
	store_job_clear(&got);
	CHECK(store_job_requeue_running(s, &err) == 0);

	CHECK(store_job_list(s, &list, &n, &err) == 0);
	CHECK(n >= 4 && list[0].id == run);	/* newest first */
	for (i = 0; i < n; i++)
		store_job_clear(&list[i]);
	free(list);
	CHECK(err == NULL);
}

static void
log_fn(double when, const char *level, const char *msg, void *arg)
{
	char	**out = arg, *s;

	s = xasprintf("%s%s:%s|", *out ? *out : "", level, msg);
	free(*out);
	*out = s;
	(void)when;
}

static void
test_log(struct store *s)
{
	struct store_job	 j;
	char			*out = NULL, *err = NULL;
	int64_t			 id;

	memset(&j, 0, sizeof j);
	j.state = "done";
	id = store_job_add(s, &j, &err);
	CHECK(store_log(s, id, "info", "started") == 0);
	CHECK(store_log(s, id, "warn", "knob 'block_dim_x' ignored") == 0);
	CHECK(store_log(s, id, NULL, "done") == 0);
	CHECK(store_log(s, 99999, "info", "no such job") == -1);
	CHECK(store_log_foreach(s, id, log_fn, &out, &err) == 0);
	CHECK_STR(out, "info:started|warn:knob 'block_dim_x' ignored|info:done|");
	free(out);
}

/* Several processes claim from one queue: each job is taken exactly once. */
static void
test_claim_race(void)
{
	struct store		*s;
	struct store_job	 j;
	char			*path = db_path("race"), *err = NULL;
	int			 fds[2], c, i, nchild = 4, njobs = 60;
	int			 seen[61];
	int64_t			 id;
	pid_t			 pids[4];
	FILE			*f;

	CHECK(store_open(path, &s, &err) == 0);
	memset(&j, 0, sizeof j);
	for (i = 0; i < njobs; i++)
		store_job_add(s, &j, &err);
	store_close(s);
	if (pipe(fds) != 0)
		return;
	for (c = 0; c < nchild; c++) {
		if ((pids[c] = fork()) == 0) {
			close(fds[0]);
			if (store_open(path, &s, &err) != 0)
				_exit(2);
			while (store_job_claim(s, &j, &err) == 1) {
				id = j.id;
				if (write(fds[1], &id, sizeof id) != sizeof id)
					_exit(3);
				store_job_clear(&j);
			}
			store_close(s);
			_exit(err != NULL ? 4 : 0);
		}
	}
	close(fds[1]);
	memset(seen, 0, sizeof seen);
	f = fdopen(fds[0], "r");
	while (fread(&id, sizeof id, 1, f) == 1) {
		if (id >= 1 && id <= njobs)
			seen[id]++;
		else
			CHECK(!"claimed id out of range");
	}
	fclose(f);
	for (c = 0; c < nchild; c++) {
		int st;
		CHECK(waitpid(pids[c], &st, 0) == pids[c] && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0);
	}
	for (i = 1; i <= njobs; i++) {
		if (seen[i] != 1)
			fprintf(stderr, "job %d claimed %d times\n", i, seen[i]);
		CHECK(seen[i] == 1);
	}
	free(path);
}

/* The fault test: rows a killed writer committed must all be whole. */
#define KILL_PAD	3000	/* an error text spanning pages */

static char *
kill_error(int64_t i)
{
	char	*head = xasprintf("trial %" PRId64 " #", i);
	char	*e = xmalloc(KILL_PAD + 1);

	memset(e, 'a' + (int)(i % 26), KILL_PAD);
	memcpy(e, head, strlen(head));
	e[KILL_PAD] = '\0';
	free(head);
	return e;
}

/* Insert trial number i of the fault test's pattern. */
static int64_t
kill_add(struct store *s, int64_t opid, int64_t tgt, int64_t i)
{
	struct store_trial	 t;
	char			 name[32];
	int64_t			 id;

	memset(&t, 0, sizeof t);
	t.op_id = opid;
	t.target_id = tgt;
	t.phase = "tune";
	snprintf(name, sizeof name, "k%" PRId64, i);
	t.config_name = name;
	t.config.v[KNOB_TILE_M] = i;
	t.config.v[KNOB_PIPELINE_DEPTH] = i * 3;
	t.result.reps = (int)i;
	t.result.median_ms = i + 0.25;
	memcpy(t.result.artifact, "feedfacefeedface", 17);
	t.result.error = kill_error(i);
	id = store_trial_add(s, &t, NULL);
	free(t.result.error);
	return id;
}

struct kill_check {
	int64_t	n;
	int	bad;
};

static int
kill_walk(const struct store_trial *t, const struct op_desc *op, void *arg)
{
	struct kill_check *k = arg;
	int64_t		 i = t->config.v[KNOB_TILE_M];
	char		*want = kill_error(i);

	k->n++;
	if (t->result.reps != (int)i || t->result.median_ms != i + 0.25 ||
	    t->config.v[KNOB_PIPELINE_DEPTH] != i * 3 ||
	    t->result.error == NULL || strcmp(t->result.error, want) != 0 ||
	    strcmp(t->result.artifact, "feedfacefeedface") != 0) {
		fprintf(stderr, "trial %" PRId64 " is torn\n", t->id);
		k->bad++;
	}
	free(want);
	return 0;
}

static void
test_kill(void)
{
	struct store		*s;
	struct op_desc		 op = make_op("kill_op", 32, 32, 32, 0, 0);
	struct kill_check	 k;
	char			*path = db_path("kill"), *err = NULL;
	int			 fds[2], st, round;
	int64_t			 opid, tgt, i, last = 0, committed;
	pid_t			 pid;
	FILE			*f;

	CHECK(store_open(path, &s, &err) == 0);
	opid = store_op(s, &op, &err);
	tgt = store_target(s, "kill-cpu", "", "", "mlir-cpu", &err);
	store_close(s);

	for (round = 0; round < 8; round++) {
		if (pipe(fds) != 0)
			return;
		if ((pid = fork()) == 0) {
			close(fds[0]);
			if (store_open(path, &s, &err) != 0)
				_exit(2);
			for (i = last + 1;; i++) {
				if (kill_add(s, opid, tgt, i) < 0)
					_exit(3);
				/* Told only after the commit returned. */
				if (write(fds[1], &i, sizeof i) != sizeof i)
					_exit(4);
			}
		}
		close(fds[1]);
		f = fdopen(fds[0], "r");
		/* Let it commit a few hundred, then kill it mid-stride. */
		committed = 0;
		while (committed < last + 200 + 37 * round &&
		    fread(&i, sizeof i, 1, f) == 1)
			committed = i;
		kill(pid, SIGKILL);
		while (fread(&i, sizeof i, 1, f) == 1)
			committed = i;
		fclose(f);
		CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
		    WTERMSIG(st) == SIGKILL);

		/* Reopen as the restarted daemon would. */
		CHECK(store_open(path, &s, &err) == 0);
		if (s == NULL)
			break;
		CHECK(store_check(s, &err) == 0);
		memset(&k, 0, sizeof k);
		CHECK(store_trial_foreach(s, opid, tgt, "tune", kill_walk, &k,
		    &err) == 0);
		/* All it said it committed, perhaps one more, all whole. */
		CHECK(k.bad == 0);
		CHECK(k.n >= committed && k.n <= committed + 1);
		CHECK(store_trial_count(s, 0, "tune") == k.n);

		/* Inserting goes on, here and in the next round's child. */
		CHECK(kill_add(s, opid, tgt, k.n + 1) == k.n + 1);
		last = k.n + 1;
		store_close(s);
	}
	free(path);
	CHECK(err == NULL);
}

/* While a writer holds its transaction open, readers (status) go on. */
static void
test_concurrent_read(void)
{
	struct store		*s, *ro;
	struct store_job	*list;
	sqlite3			*w;
	size_t			 n, i;
	char			*path = db_path("busy"), *err = NULL;

	CHECK(store_open(path, &s, &err) == 0);
	store_close(s);
	CHECK(sqlite3_open(path, &w) == SQLITE_OK);
	CHECK(sqlite3_exec(w, "BEGIN IMMEDIATE; INSERT INTO jobs (created) "
	    "VALUES (1)", NULL, NULL, NULL) == SQLITE_OK);
	/*
	 * The writer keeps its transaction open until after these calls: had
	 * any of them waited for its lock, it would have failed (busy).
	 */
	CHECK(store_open_readonly(path, &ro, &err) == 0);
	CHECK(store_open(path, &s, &err) == 0);
	if (ro != NULL && s != NULL) {
		CHECK(store_job_list(ro, &list, &n, &err) == 0 && n == 0);
		free(list);
		CHECK(store_job_cancel_requested(s, 1) == 0);
	}
	CHECK(sqlite3_exec(w, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(w);
	if (ro != NULL) {
		CHECK(store_job_list(ro, &list, &n, &err) == 0 && n == 1);
		for (i = 0; i < n; i++)
			store_job_clear(&list[i]);
		free(list);
	}
	store_close(ro);
	store_close(s);
	free(err);
	free(path);
}

static void
test_check_damage(void)
{
	struct store	*s;
	char		*path = db_path("fk"), *err = NULL;

	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_check(s, &err) == 0);
	store_close(s);
	/* A row pointing nowhere, written behind the store's back. */
	raw_exec(path, "INSERT INTO job_log (job_id, time, level, message) "
	    "VALUES (42, 0, 'info', 'orphan')");
	CHECK(store_open(path, &s, &err) == 0);
	CHECK(store_check(s, &err) == -1);
	CHECK(err != NULL && strstr(err, "job_log") != NULL);
	free(err);
	store_close(s);
	free(path);
}

/* A FIFO or a folder as the store (or its -wal) is refused, never opened. */
static void
test_special_files(void)
{
	struct store	*s = NULL;
	char		*fifo = db_path("fifo"), *dir = db_path("dir");
	char		*walstore = db_path("walfifo"), *missing = db_path("new");
	char		*wal = xasprintf("%s-wal", walstore), *err = NULL;

	CHECK(mkfifo(fifo, 0600) == 0 && mkdir(dir, 0700) == 0);
	CHECK(store_open(fifo, &s, &err) == -1 && s == NULL);
	CHECK(err != NULL && strstr(err, "fifo.db: not a regular file; "
	    "expected an SQLite store") != NULL);
	CHECK(store_open_readonly(fifo, &s, &err) == -1 && s == NULL);
	CHECK(store_open_readonly(dir, &s, &err) == -1 && s == NULL);
	CHECK(err != NULL && strstr(err, "dir.db: not a regular file") != NULL);
	CHECK(mkfifo(wal, 0600) == 0);
	CHECK(store_open(walstore, &s, &err) == -1 && s == NULL);
	CHECK(err != NULL && strstr(err, "walfifo.db-wal: not a regular file; "
	    "expected the store's SQLite write-ahead log") != NULL);
	free(err);
	err = NULL;
	/* A missing store is created. */
	CHECK(store_check_path(missing, &err) == 0 && err == NULL);
	CHECK(store_open(missing, &s, &err) == 0 && s != NULL);
	store_close(s);
	free(fifo);
	free(dir);
	free(wal);
	free(walstore);
	free(missing);
}

/*
 * Several processes making one new store at once (issue 31: "setting WAL
 * mode: database is locked", exit 2): every one opens it, rounds over.
 */
static void
test_create_race(void)
{
	struct store	*s;
	char		*path, *err = NULL, go;
	int		 fds[2], c, round, nchild = 6, bad = 0, st;
	pid_t		 pids[6];

	for (round = 0; round < 20 && bad == 0; round++) {
		char *name = xasprintf("create%d", round);

		path = db_path(name);
		free(name);
		if (pipe(fds) != 0)
			return;
		for (c = 0; c < nchild; c++) {
			if ((pids[c] = fork()) == 0) {
				close(fds[1]);
				/* All start when the pipe closes. */
				if (read(fds[0], &go, 1) < 0)
					_exit(3);
				if (store_open(path, &s, &err) != 0) {
					fprintf(stderr, "%s\n", err);
					_exit(2);
				}
				store_close(s);
				_exit(0);
			}
		}
		close(fds[0]);
		close(fds[1]);
		for (c = 0; c < nchild; c++) {
			if (waitpid(pids[c], &st, 0) != pids[c] ||
			    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				bad++;
		}
		free(path);
	}
	CHECK(bad == 0);
}

int
main(void)
{
	struct store	*s;
	char		*path, *err = NULL;

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_schema();
	test_migrate_v3();
	test_migrate_v8();
	test_migrate_v9();
	test_migrate_v10();
	test_special_files();

	path = db_path("main");
	if (store_open(path, &s, &err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	test_ids(s);
	test_trials(s);
	test_foreach(s);
	test_best(s);
	test_jobs(s);
	test_log(s);
	CHECK(store_check(s, &err) == 0);
	if (err != NULL)
		fprintf(stderr, "%s\n", err);
	store_close(s);
	free(path);

	test_claim_race();
	test_create_race();
	test_kill();
	test_concurrent_read();
	test_check_damage();

	if (check_failed == 0 && getenv("KEEP_TEST_STORE") == NULL) {
		char *cmd = xasprintf("rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
		free(cmd);
	}
	return check_done();
}
