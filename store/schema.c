/*
 * The store's schema, as a list of migrations: store_migrations[v] takes a
 * store from version v to v + 1. Never edit a released step; add a new one
 * (and bump STORE_SCHEMA_VERSION). store/schema.md documents the result.
 */
#include "store/store_int.h"

/* A new knob needs a new column, hence a migration: stop the build here. */
_Static_assert(KNOB_COUNT == 14, "new knob: add a migration for its column");

/*
 * The text the versions share, each piece written once: the trials table
 * of versions 1 and 2 (its columns before and after phase's CHECK, its
 * indexes) and the parts of the best view that several of its versions
 * hold alike (VIEW_CHOSEN and VIEW_CHOSEN_ORDER: a job's choice first,
 * from version 7 on). A version's SQL is the same text as when released.
 */
#define TRIALS_COLUMNS_HEAD	\
	"  id             INTEGER PRIMARY KEY,"	\
	"  job_id         INTEGER REFERENCES jobs (id),"	\
	"  op_id          INTEGER NOT NULL REFERENCES ops (id),"	\
	"  target_id      INTEGER NOT NULL REFERENCES targets (id),"	\
	"  phase          TEXT NOT NULL CHECK (phase IN"
#define TRIALS_COLUMNS_TAIL	\
	"  config_name    TEXT NOT NULL,"	\
	"  tile_m         INTEGER NOT NULL DEFAULT 0,"	\
	"  tile_n         INTEGER NOT NULL DEFAULT 0,"	\
	"  tile_k         INTEGER NOT NULL DEFAULT 0,"	\
	"  vector_m       INTEGER NOT NULL DEFAULT 0,"	\
	"  vector_n       INTEGER NOT NULL DEFAULT 0,"	\
	"  vector_k       INTEGER NOT NULL DEFAULT 0,"	\
	"  threads        INTEGER NOT NULL DEFAULT 0,"	\
	"  block_dim_x    INTEGER NOT NULL DEFAULT 0,"	\
	"  block_dim_y    INTEGER NOT NULL DEFAULT 0,"	\
	"  block_dim_z    INTEGER NOT NULL DEFAULT 0,"	\
	"  pipeline_depth INTEGER NOT NULL DEFAULT 0,"	\
	"  status         TEXT NOT NULL,"	\
	"  runtime_ms     REAL,"	\
	"  min_ms         REAL,"	\
	"  max_ms         REAL,"	\
	"  cv             REAL,"	\
	"  reps           INTEGER NOT NULL DEFAULT 0,"	\
	"  gflops         REAL,"	\
	"  compile_s      REAL,"	\
	"  measure_s      REAL,"	\
	"  verified       INTEGER NOT NULL DEFAULT 0,"	\
	"  max_err        REAL,"	\
	"  artifact       TEXT NOT NULL DEFAULT '',"	\
	"  error          TEXT,"	\
	"  created        REAL NOT NULL"	\
	");"
#define TRIALS_INDEXES	\
	/* Resume: "was this config of this op measured on this target?" */	\
	"CREATE INDEX trials_resume ON trials (op_id, target_id, config_name, phase);"	\
	/* Best per op and target, baseline and reference look-ups. */	\
	"CREATE INDEX trials_best ON trials (op_id, target_id, phase, status, gflops);"	\
	"CREATE INDEX trials_job ON trials (job_id, phase);"
#define VIEW_VALID	\
	" WITH valid AS ("	\
	"  SELECT t.*, row_number() OVER (PARTITION BY t.job_id, t.op_id, t.target_id,"	\
	"   t.phase, t.config_name ORDER BY t.gflops, t.id) AS mr,"	\
	"  count(*) OVER (PARTITION BY t.job_id, t.op_id, t.target_id, t.phase,"
#define VIEW_CHOSEN	\
	"  EXISTS (SELECT 1 FROM choices ch WHERE ch.job_id = t.job_id"	\
	"   AND ch.op_id = t.op_id AND ch.target_id = t.target_id"	\
	"   AND ch.config_name = t.config_name) AS chosen"	\
	"  FROM trials t WHERE t.status IN ('ok','unstable') AND (t.phase IN"	\
	"   ('tune','confirm','final') OR (t.phase = 'baseline' AND EXISTS"	\
	"   (SELECT 1 FROM choices ch WHERE ch.job_id = t.job_id"	\
	"   AND ch.op_id = t.op_id AND ch.target_id = t.target_id"	\
	"   AND ch.config_name = t.config_name)))),"
#define VIEW_PER_JOB	\
	" per_job AS ("	\
	"  SELECT valid.*, row_number() OVER (PARTITION BY op_id, target_id, job_id"
#define VIEW_CHOSEN_ORDER	\
	"   ORDER BY chosen DESC, phase IN ('final','baseline') DESC,"	\
	"   phase = 'confirm' DESC, gflops DESC, id DESC) AS jr"
#define VIEW_RANKED	\
	"  FROM valid WHERE phase = 'tune' OR mr = (mc + 1) / 2),"	\
	" ranked AS ("	\
	"  SELECT per_job.*, row_number() OVER (PARTITION BY op_id, target_id"	\
	"   ORDER BY gflops DESC, id DESC) AS rn FROM per_job WHERE jr = 1)"	\
	" SELECT o.name AS op, o.signature AS signature, g.cpu AS cpu,"	\
	"  g.toolchain AS toolchain, g.backend AS backend,"	\
	"  r.config_name AS config_name, r.phase AS phase, r.gflops AS gflops,"	\
	"  r.runtime_ms AS runtime_ms, r.cv AS cv,"	\
	"  r.tile_m, r.tile_n, r.tile_k, r.vector_m, r.vector_n, r.vector_k,"	\
	"  r.threads, r.block_dim_x, r.block_dim_y, r.block_dim_z, r.pipeline_depth,"
#define VIEW_BASELINE_MEAN	\
	"  (SELECT avg(b.gflops) FROM trials b WHERE b.op_id = r.op_id"	\
	"   AND b.target_id = r.target_id AND b.job_id IS r.job_id"	\
	"   AND b.phase = 'baseline' AND b.threads = r.threads"	\
	"   AND b.status IN ('ok','unstable')) AS baseline_gflops,"
#define VIEW_REFERENCE_MEAN	\
	"  (SELECT avg(b.gflops) FROM trials b WHERE b.op_id = r.op_id"	\
	"   AND b.target_id = r.target_id AND b.job_id IS r.job_id"	\
	"   AND b.phase = 'reference' AND b.threads = r.threads"	\
	"   AND b.status IN ('ok','unstable')) AS reference_gflops,"
#define VIEW_REFERENCE_LATEST	\
	"  (SELECT b.gflops FROM trials b WHERE b.op_id = r.op_id"	\
	"   AND b.target_id = r.target_id AND b.phase = 'reference' AND b.status IN ('ok','unstable')"	\
	"   ORDER BY b.id DESC LIMIT 1) AS reference_gflops,"
#define VIEW_TRIALS	\
	"  (SELECT count(*) FROM trials c WHERE c.op_id = r.op_id"	\
	"   AND c.target_id = r.target_id AND c.phase = 'tune') AS trials,"
#define VIEW_FROM	\
	"  r.job_id AS job_id, r.id AS trial_id, r.op_id AS op_id,"	\
	"  r.target_id AS target_id"	\
	" FROM ranked r JOIN ops o ON o.id = r.op_id"	\
	" JOIN targets g ON g.id = r.target_id WHERE r.rn = 1;"

static const char schema_v1[] =
	"CREATE TABLE meta ("
	"  key   TEXT PRIMARY KEY,"
	"  value TEXT"
	");"

	"CREATE TABLE targets ("
	"  id        INTEGER PRIMARY KEY,"
	"  cpu       TEXT NOT NULL DEFAULT '',"
	"  flags     TEXT NOT NULL DEFAULT '',"
	"  toolchain TEXT NOT NULL DEFAULT '',"
	"  backend   TEXT NOT NULL DEFAULT '',"
	"  UNIQUE (cpu, flags, toolchain, backend)"
	");"

	"CREATE TABLE jobs ("
	"  id               INTEGER PRIMARY KEY,"
	"  state            TEXT NOT NULL DEFAULT 'queued' CHECK (state IN"
	"                   ('queued','running','done','failed','cancelled')),"
	"  priority         INTEGER NOT NULL DEFAULT 0,"
	"  cfg_path         TEXT,"
	"  cfg_text         TEXT,"
	"  mlir_path        TEXT,"
	"  mlir_text        TEXT,"
	"  mlir_hash        TEXT,"
	"  tuner            TEXT,"
	"  n_trial          INTEGER NOT NULL DEFAULT 0,"
	"  trials_done      INTEGER NOT NULL DEFAULT 0,"
	"  created          REAL NOT NULL,"
	"  started          REAL,"
	"  finished         REAL,"
	"  cancel_requested INTEGER NOT NULL DEFAULT 0,"
	"  error            TEXT"
	");"
	"CREATE INDEX jobs_queue ON jobs (state, priority DESC, created);"

	"CREATE TABLE ops ("
	"  id          INTEGER PRIMARY KEY,"
	"  signature   TEXT NOT NULL UNIQUE,"
	"  name        TEXT NOT NULL,"
	"  kind        TEXT NOT NULL,"
	"  op_name     TEXT NOT NULL DEFAULT '',"
	"  batch       INTEGER NOT NULL,"
	"  m           INTEGER NOT NULL,"
	"  n           INTEGER NOT NULL,"
	"  k           INTEGER NOT NULL,"
	"  lhs         TEXT NOT NULL,"
	"  rhs         TEXT NOT NULL,"
	"  acc         TEXT NOT NULL,"
	"  transpose_a INTEGER NOT NULL DEFAULT 0,"
	"  transpose_b INTEGER NOT NULL DEFAULT 0,"
	"  lhs_unsigned INTEGER NOT NULL DEFAULT 0,"
	"  rhs_unsigned INTEGER NOT NULL DEFAULT 0"
	");"

	"CREATE TABLE trials ("
	TRIALS_COLUMNS_HEAD
	"                 ('baseline','tune','confirm','reference')),"
	TRIALS_COLUMNS_TAIL
	TRIALS_INDEXES

	"CREATE TABLE job_log ("
	"  id      INTEGER PRIMARY KEY,"
	"  job_id  INTEGER NOT NULL REFERENCES jobs (id),"
	"  time    REAL NOT NULL,"
	"  level   TEXT NOT NULL,"
	"  message TEXT NOT NULL"
	");"
	"CREATE INDEX job_log_job ON job_log (job_id, id);"

	/*
	 * For sqlite3 users: the winner per op and target, as store_best picks
	 * it (without its job filter): within a job that confirmed, the best
	 * confirm figure; else the best tune figure; then the best across jobs.
	 */
	"CREATE VIEW best AS"
	VIEW_VALID
	"   t.config_name) AS mc"
	"  FROM trials t WHERE t.status IN ('ok','unstable') AND t.phase IN ('tune','confirm')),"
	VIEW_PER_JOB
	"   ORDER BY phase = 'confirm' DESC, gflops DESC, id DESC) AS jr"
	VIEW_RANKED
	"  (SELECT b.gflops FROM trials b WHERE b.op_id = r.op_id"
	"   AND b.target_id = r.target_id AND b.phase = 'baseline' AND b.status IN ('ok','unstable')"
	"   ORDER BY b.id DESC LIMIT 1) AS baseline_gflops,"
	VIEW_REFERENCE_LATEST
	VIEW_TRIALS
	VIEW_FROM;


/*
 * Version 2: the phases of a trustworthy figure. "final" holds the chosen
 * config measured again after it was chosen (interleaved with the default
 * at the same thread count, recorded as "baseline"); "noise" holds the
 * default re-measured between tuning batches (the job's noise floor). The
 * view prefers the post-choice figure and takes the baseline at the winner's
 * thread count. SQLite cannot widen a CHECK in place: the table is rebuilt.
 */
static const char schema_v2[] =
	"DROP VIEW best;"
	"CREATE TABLE trials_v2 ("
	TRIALS_COLUMNS_HEAD
	"                 ('baseline','tune','confirm','final','noise','reference')),"
	TRIALS_COLUMNS_TAIL
	"INSERT INTO trials_v2 SELECT * FROM trials;"
	"DROP TABLE trials;"
	"ALTER TABLE trials_v2 RENAME TO trials;"
	TRIALS_INDEXES

	"CREATE VIEW best AS"
	VIEW_VALID
	"   t.config_name) AS mc"
	"  FROM trials t WHERE t.status IN ('ok','unstable') AND t.phase IN ('tune','confirm','final')),"
	VIEW_PER_JOB
	"   ORDER BY phase = 'final' DESC, phase = 'confirm' DESC, gflops DESC, id DESC) AS jr"
	VIEW_RANKED
	"  (SELECT b.gflops FROM trials b WHERE b.op_id = r.op_id"
	"   AND b.target_id = r.target_id AND b.phase = 'baseline' AND b.threads = r.threads"
	"   AND b.status IN ('ok','unstable')"
	"   ORDER BY b.id DESC LIMIT 1) AS baseline_gflops,"
	VIEW_REFERENCE_LATEST
	VIEW_TRIALS
	VIEW_FROM;

/*
 * Version 3: which reference checked a trial, which routine a reference
 * trial timed (and whether in the op's precision), the repetitions dropped
 * as disturbed, and the measuring child's counters (NULL: not measured).
 */
static const char schema_v3[] =
	"ALTER TABLE trials ADD COLUMN checked_by TEXT;"
	"ALTER TABLE trials ADD COLUMN ref_routine TEXT;"
	"ALTER TABLE trials ADD COLUMN ref_same_precision INTEGER;"
	"ALTER TABLE trials ADD COLUMN reps_dropped INTEGER;"
	"ALTER TABLE trials ADD COLUMN context_switches INTEGER;"
	"ALTER TABLE trials ADD COLUMN cpu_migrations INTEGER;"
	"ALTER TABLE trials ADD COLUMN page_faults INTEGER;"
	"ALTER TABLE trials ADD COLUMN task_clock_ns INTEGER;"
	"ALTER TABLE trials ADD COLUMN cycles INTEGER;"
	"ALTER TABLE trials ADD COLUMN instructions INTEGER;"
	"ALTER TABLE trials ADD COLUMN cache_misses INTEGER;";

/*
 * Version 4: the machine that measured a trial (the Slurm node under
 * executor = slurm, else the host name; NULL in older rows).
 */
static const char schema_v4[] =
	"ALTER TABLE trials ADD COLUMN host TEXT;";

/*
 * The best view of versions 5 and 6 (6 adds knob columns after
 * pipeline_depth: KNOBS_AFTER, "" for 5).
 */
#define SCHEMA_BEST_VIEW(KNOBS_AFTER)					\
	"DROP VIEW best;"	\
	"CREATE VIEW best AS"	\
	VIEW_VALID	\
	"   t.config_name) AS mc"	\
	"  FROM trials t WHERE t.status IN ('ok','unstable') AND t.phase IN ('tune','confirm','final')),"	\
	VIEW_PER_JOB	\
	"   ORDER BY phase = 'final' DESC, phase = 'confirm' DESC, gflops DESC, id DESC) AS jr"	\
	VIEW_RANKED	\
	KNOBS_AFTER								\
	VIEW_BASELINE_MEAN	\
	VIEW_REFERENCE_MEAN	\
	VIEW_TRIALS	\
	VIEW_FROM

/*
 * Version 5: the view's baseline and reference are the mean of the winning
 * job's measurements at the winner's thread count (the engine measures
 * both in every final round), not the latest single one: one run of a
 * multi-threaded library moved by 20%, and a ratio to it flattered or hid.
 */
static const char schema_v5[] = SCHEMA_BEST_VIEW("");

/*
 * Version 6: pack_b, the mlir-cpu knob choosing whether B is packed into
 * register-tile panels (1, what every older row did) or read in place (0).
 */
static const char schema_v6[] =
	"ALTER TABLE trials ADD COLUMN pack_b INTEGER NOT NULL DEFAULT 1;"
	SCHEMA_BEST_VIEW("  r.pack_b,");


/*
 * Version 7: whole models. job_ops: a job's distinct ops, with how often
 * and where the program uses each. allocations: the scheduler's rounds
 * (which op got how many trials, why, at what expected gain), so a job run
 * again continues its plan. choices: the config a job chose for an op and
 * why -- the default kept when the search's winner was not measurably
 * faster is one; the best view (and store_best) take a job's choice when it
 * made one: the chosen config's median after the choice ("final", or the
 * default's "baseline" rounds at the same thread count).
 */
static const char schema_v7[] =
	"CREATE TABLE job_ops ("
	"  job_id      INTEGER NOT NULL REFERENCES jobs (id),"
	"  op_id       INTEGER NOT NULL REFERENCES ops (id),"
	"  occurrences INTEGER NOT NULL,"
	"  locations   TEXT NOT NULL,"
	"  PRIMARY KEY (job_id, op_id)"
	");"
	"CREATE TABLE allocations ("
	"  id            INTEGER PRIMARY KEY,"
	"  job_id        INTEGER NOT NULL REFERENCES jobs (id),"
	"  seq           INTEGER NOT NULL,"
	"  op_id         INTEGER NOT NULL REFERENCES ops (id),"
	"  trials        INTEGER NOT NULL,"
	"  trials_before INTEGER NOT NULL,"
	"  weight        INTEGER NOT NULL,"
	"  now_ms        REAL,"
	"  gain          REAL,"
	"  elapsed_s     REAL,"
	"  reason        TEXT NOT NULL,"
	"  created       REAL NOT NULL"
	");"
	"CREATE INDEX allocations_job ON allocations (job_id, seq);"
	"CREATE TABLE choices ("
	"  id          INTEGER PRIMARY KEY,"
	"  job_id      INTEGER NOT NULL REFERENCES jobs (id),"
	"  op_id       INTEGER NOT NULL REFERENCES ops (id),"
	"  target_id   INTEGER NOT NULL REFERENCES targets (id),"
	"  config_name TEXT NOT NULL,"
	"  reason      TEXT NOT NULL,"
	"  speedup     REAL,"
	"  speedup_lo  REAL,"
	"  speedup_hi  REAL,"
	"  rounds      INTEGER,"
	"  occurrences INTEGER,"
	"  created     REAL NOT NULL"
	");"
	"CREATE INDEX choices_job ON choices (job_id, op_id, target_id);"
	"DROP VIEW best;"
	"CREATE VIEW best AS"
	VIEW_VALID
	"   t.config_name) AS mc,"
	VIEW_CHOSEN
	VIEW_PER_JOB
	VIEW_CHOSEN_ORDER
	VIEW_RANKED
	"  r.pack_b,"
	VIEW_BASELINE_MEAN
	VIEW_REFERENCE_MEAN
	VIEW_TRIALS
	"  r.chosen AS chosen,"
	VIEW_FROM;

/*
 * The best view of versions 8 to 10 (9 and 10 add knob columns after
 * pack_b: KNOBS_AFTER, "  r.pack_b," for 8).
 */
#define SCHEMA_BEST_VIEW_GPU(KNOBS_AFTER)					\
	"DROP VIEW best;"	\
	"CREATE VIEW best AS"	\
	VIEW_VALID	\
	"   t.config_name) AS mc,"	\
	VIEW_CHOSEN	\
	VIEW_PER_JOB	\
	VIEW_CHOSEN_ORDER	\
	VIEW_RANKED	\
	KNOBS_AFTER								\
	"  r.gpu AS gpu, r.sm_mhz AS sm_mhz, r.mem_mhz AS mem_mhz,"	\
	"  r.temp_c AS temp_c,"	\
	VIEW_BASELINE_MEAN	\
	"  (SELECT avg(b.gflops) FROM trials b WHERE b.op_id = r.op_id"	\
	"   AND b.target_id = r.target_id AND b.job_id IS r.job_id"	\
	"   AND b.phase = 'reference' AND max(b.threads, 1) = max(r.threads, 1)"	\
	"   AND b.status IN ('ok','unstable')) AS reference_gflops,"	\
	"  (SELECT avg(b.peak_gflops) FROM trials b WHERE b.op_id = r.op_id"	\
	"   AND b.target_id = r.target_id AND b.job_id IS r.job_id"	\
	"   AND b.phase = 'reference' AND max(b.threads, 1) = max(r.threads, 1)"	\
	"   AND b.status IN ('ok','unstable')) AS peak_gflops,"	\
	VIEW_TRIALS	\
	"  r.chosen AS chosen,"	\
	VIEW_FROM

/*
 * Version 8: what a GPU trial was measured on and against (issue 33): the
 * GPU's name, its SM and memory clocks, temperature and power during the
 * trial, and in reference rows the device's measured peak for the op's
 * types (peak_gflops, peak_routine says what was timed). NULL in CPU rows
 * and in rows written before. The view adds the winner's GPU fields and
 * the winning job's mean peak; its reference (and peak) of a config without
 * a thread count (threads 0: a GPU's) is the one measured at 1 thread, as
 * the engine records it.
 */
static const char schema_v8[] =
	"ALTER TABLE trials ADD COLUMN gpu TEXT;"
	"ALTER TABLE trials ADD COLUMN sm_mhz INTEGER;"
	"ALTER TABLE trials ADD COLUMN mem_mhz INTEGER;"
	"ALTER TABLE trials ADD COLUMN temp_c INTEGER;"
	"ALTER TABLE trials ADD COLUMN power_w INTEGER;"
	"ALTER TABLE trials ADD COLUMN peak_gflops REAL;"
	"ALTER TABLE trials ADD COLUMN peak_routine TEXT;"
	SCHEMA_BEST_VIEW_GPU("  r.pack_b,");

/*
 * Version 9: pad_smem, the iree-cuda knob choosing whether the promoted A
 * and B tiles' rows in shared memory are padded by 4 elements (1, IREE's
 * default: what every older iree-cuda mma row did) or not (0). 0 in the
 * rows of backends without the knob (every CPU one, f32 on CUDA, IREE's
 * own choice), as the space's check wants of a knob a backend lacks.
 */
static const char schema_v9[] =
	"ALTER TABLE trials ADD COLUMN pad_smem INTEGER NOT NULL DEFAULT 0;"
	"UPDATE trials SET pad_smem = 1 WHERE tile_m > 0 AND target_id IN"
	" (SELECT id FROM targets WHERE backend = 'iree-cuda') AND op_id IN"
	" (SELECT id FROM ops WHERE lhs IN ('f16', 'bf16'));"
	SCHEMA_BEST_VIEW_GPU("  r.pack_b, r.pad_smem,");

/*
 * Version 10: pack_a, the mlir-cpu knob choosing whether A's cache tile is
 * packed into register-tile panels (1) or read in place (0: what every
 * older row did). 0 in every older row and in the rows of backends without
 * the knob.
 */
static const char schema_v10[] =
	"ALTER TABLE trials ADD COLUMN pack_a INTEGER NOT NULL DEFAULT 0;"
	SCHEMA_BEST_VIEW_GPU("  r.pack_b, r.pad_smem, r.pack_a,");

const char *const store_migrations[STORE_SCHEMA_VERSION] = {
	schema_v1,
	schema_v2,
	schema_v3,
	schema_v4,
	schema_v5,
	schema_v6,
	schema_v7,
	schema_v8,
	schema_v9,
	schema_v10,
};
