/* The database layer: schema creation and checks, foreign/newer files left untouched,
 * migrations, upserts, winners and nearest lookup, export/import, the CLI tables, and
 * durability across processes (fork, SIGKILL). No GPU; each case works in its own temp dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_core_internal.h"
#include "db_fixture.h"
#include "db_memory_internal.h"
#include "gen_internal.h"
#include "source_path.h"
#include "tune_print.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- fixture: a temp dir per case (db_fixture.c) ---------------------------------- */

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

/* ---- helpers ------------------------------------------------------------------------ */

static db *open_ok(const char *path, int flags)
{
    db *d = NULL;
    char err[512] = "";
    int rc = db_open(path, flags, &d, err, sizeof err);
    if (rc != 0)
        print_error("db_open(%s): %s\n", path, err);
    assert_int_equal(rc, 0);
    assert_non_null(d);
    return d;
}

/* One integer from SQL on the handle. */
static long long query_int(db *d, const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db_sqlite(d), sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void query_text(db *d, const char *sql, char *buf, size_t len)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db_sqlite(d), sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

static db_device device_of(const char *name, const char *arch, const char *driver)
{
    db_device dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "%s", name);
    snprintf(dev.arch, sizeof dev.arch, "%s", arch);
    dev.cc_major = arch[3] - '0';
    dev.cc_minor = arch[4] - '0';
    dev.sm_count = 132;
    snprintf(dev.driver_version, sizeof dev.driver_version, "%s", driver);
    snprintf(dev.nvrtc_version, sizeof dev.nvrtc_version, "13.0");
    return dev;
}

static db_workload workload_of(int op, int dtype, int hd, int causal, int batch, int heads, int sq, int sk)
{
    db_workload w = { .op = op, .dtype = dtype, .head_dim = hd, .head_dim_v = hd, .causal = causal, .batch = batch,
                      .heads = heads, .seqlen_q = sq, .seqlen_k = sk };
    return w;
}

/* A kernel for workload w (CAUSAL for any mask, VARLEN for a bucket); seed makes the hash, block_m
 * the one searched parameter varied. */
static db_kernel kernel_of(const db_workload *w, unsigned seed, int block_m)
{
    db_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.family, sizeof k.family, "%s", w->op == DB_OP_FWD ? "fwd_mma" : "bwd_mma");
    snprintf(k.source_hash, sizeof k.source_hash, "%016llx", (unsigned long long)seed * 0x9e3779b97f4a7c15ull);
    const int p[GEN_PARAM_COUNT] = {
        [GEN_DTYPE] = w->dtype, [GEN_HEAD_DIM] = w->head_dim, [GEN_HEAD_DIM_V] = w->head_dim_v, [GEN_BLOCK_M] = block_m,
        [GEN_BLOCK_N] = 64, [GEN_NUM_WARPS] = 4, [GEN_NUM_STAGES] = 2, [GEN_CAUSAL] = db_workload_masked(w),
        [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 1, [GEN_EVEN_N] = 1, [GEN_DQ_MODE] = w->op == DB_OP_BWD,
        [GEN_SOFTCAP] = w->softcap, [GEN_SPLITS] = 1, [GEN_VARLEN] = w->varlen != 0,
    };
    memcpy(k.p, p, sizeof p);
    return k;
}

static db_result result_of(int64_t sweep, int64_t dev, int64_t wl, int64_t kernel, db_status s, double ms)
{
    db_result r = { sweep, dev, wl, kernel, 0, s, ms, ms, 0.02, NAN, NAN, NAN, NULL, NAN, -1 };
    if (isfinite(ms))
        r.tflops = 100.0 / ms;
    return r;
}

static int64_t upsert_device(db *d, const db_device *dev)
{
    int64_t id = 0;
    char err[512] = "";
    assert_int_equal(db_device_upsert(d, dev, &id, err, sizeof err), 0);
    return id;
}

static int64_t upsert_workload(db *d, const db_workload *w)
{
    int64_t id = 0;
    char err[512] = "";
    assert_int_equal(db_workload_upsert(d, w, &id, err, sizeof err), 0);
    return id;
}

static int64_t upsert_kernel(db *d, const db_kernel *k)
{
    int64_t id = 0;
    char err[512] = "";
    int rc = db_kernel_upsert(d, k, &id, err, sizeof err);
    if (rc != 0)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    return id;
}

static int64_t begin_sweep(db *d)
{
    int64_t id = 0;
    char err[512] = "";
    assert_int_equal(db_sweep_begin(d, "tuner/spaces/test.lua", "0123456789abcdef", "testhost", &id, err,
                                    sizeof err), 0);
    return id;
}

static void put(db *d, const db_result *r)
{
    char err[512] = "";
    int rc = db_result_put(d, r, err, sizeof err);
    if (rc != 0)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
}

/* One kernel (kernel_of's of seed, 64-row tiles) timed ok at w on dev in sweep, 1 ms: w's winner
 * there while nothing faster is stored. */
static void put_timed(db *d, int64_t sweep, int64_t dev, const db_workload *w, unsigned seed)
{
    db_kernel k = kernel_of(w, seed, 64);
    db_result r = result_of(sweep, dev, upsert_workload(d, w), upsert_kernel(d, &k), DB_STATUS_OK, 1.0);
    put(d, &r);
}

/* A result stored in an older file's layout (before the clocks' columns, migration 7), as that
 * version's db_result_put wrote it. */
static void put_before_clocks(db *d, const db_result *r)
{
    char *q = sqlite3_mprintf("INSERT INTO results (sweep_id, device_id, workload_id, kernel_id, status, median_ms, "
                              "min_ms, spread, tflops) VALUES (%lld, %lld, %lld, %lld, '%s', %.17g, %.17g, %.17g, "
                              "%.17g)", (long long)r->sweep_id, (long long)r->device_id, (long long)r->workload_id,
                              (long long)r->kernel_id, db_status_name(r->status), r->median_ms, r->min_ms, r->spread,
                              r->tflops);
    assert_int_equal(sqlite3_exec(db_sqlite(d), q, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(q);
}

/* The whole file, malloc'ed; OUT: *size. */
static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* The sorted names in dir, comma-separated. */
static void list_dir(const char *dir, char *buf, size_t len)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    assert_true(n >= 0);
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        strncat(buf, names[i]->d_name, len - strlen(buf) - 2);
        strncat(buf, ",", len - strlen(buf) - 1);
        free(names[i]);
    }
    free(names);
}

/* ---- names are the generator's ------------------------------------------------------ */

static void names_match_generator(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        assert_string_equal(db_dtype_name(v), gen_dtype_name(v));
        assert_int_equal(db_dtype_parse(db_dtype_name(v)), v);
    }
    assert_null(db_dtype_name(4));
    assert_int_equal(db_dtype_parse("f8"), -1);
    for (int s = 0; s < DB_STATUS_COUNT; s++)
        assert_int_equal(db_status_parse(db_status_name((db_status)s)), s);
    assert_int_equal(db_status_parse("great"), -1);
}

/* ---- schema creation, reopening ------------------------------------------------------ */

static void create_and_reopen(void **state)
{
    fixture *f = *state;
    char err[512] = "", text[64];
    db *d = NULL;
    assert_int_equal(db_open(f->path, 0, &d, err, sizeof err), -1);
    assert_null(d);
    assert_non_null(strstr(err, "does not exist"));
    assert_int_not_equal(access(f->path, F_OK), 0);

    d = open_ok(f->path, DB_OPEN_CREATE);
    assert_int_equal(query_int(d, "PRAGMA application_id"), DB_APPLICATION_ID);
    assert_int_equal(query_int(d, "PRAGMA user_version"), db_schema_version());
    assert_int_equal(query_int(d, "SELECT max(version) FROM schema_version"), db_schema_version());
    assert_int_equal(query_int(d, "PRAGMA foreign_keys"), 1);
    assert_int_equal(query_int(d, "PRAGMA busy_timeout"), DB_BUSY_TIMEOUT_MS);
    query_text(d, "PRAGMA journal_mode", text, sizeof text);
    assert_string_equal(text, "wal");
    static const char *const tables[] = { "devices", "kernels", "binaries", "workloads", "sweeps", "results",
                                          "winners", "schema_version" };
    for (int i = 0; i < ARRAY_LEN(tables); i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE name = '%s'", tables[i]);
        assert_int_equal(query_int(d, sql), 1);
    }
    db_device gpu = device_of("GPU A", "sm_90", "13.0");
    int64_t dev = upsert_device(d, &gpu);
    db_close(d);

    /* Reopened: the same rows, nothing recreated. */
    d = open_ok(f->path, 0);
    assert_int_equal(query_int(d, "SELECT count(*) FROM schema_version"), db_schema_version());
    assert_int_equal(query_int(d, "SELECT id FROM devices"), dev);
    db_close(d);

    /* Read-only: reads work, writes say why they fail. */
    d = open_ok(f->path, DB_OPEN_READONLY);
    assert_int_equal(query_int(d, "SELECT count(*) FROM devices"), 1);
    int64_t id;
    db_device other = device_of("GPU B", "sm_80", "13.0");
    assert_int_equal(db_device_upsert(d, &other, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_device_upsert"));
    assert_non_null(strstr(err, "read-only"));
    db_close(d);
    db_close(NULL);
}

/* Characters a URI would read otherwise ('?', '#', '%', spaces) stay part of the path. */
static void odd_paths_work(void **state)
{
    fixture *f = *state;
    char path[256], listing[1024];
    snprintf(path, sizeof path, "%s/a b?c#d%%20e.db", f->dir);
    db *d = open_ok(path, DB_OPEN_CREATE);
    db_device gpu = device_of("GPU A", "sm_90", "13.0");
    upsert_device(d, &gpu);
    db_close(d);
    /* Read-only first: SQLite may leave -wal and -shm after a read-only connection; the last
     * writable one removes them. */
    for (int flags = DB_OPEN_READONLY; flags >= 0; flags--) {
        d = open_ok(path, flags);
        assert_int_equal(query_int(d, "SELECT count(*) FROM devices"), 1);
        db_close(d);
    }
    list_dir(f->dir, listing, sizeof listing);
    assert_string_equal(listing, ".,..,a b?c#d%20e.db,");
}

/* A zero-byte file (mktemp's) becomes a database only when creating was asked (DB_OPEN_CREATE);
 * read-only or writable without it, it is refused and stays empty: ft_open never creates one. */
static void empty_file_is_created(void **state)
{
    fixture *f = *state;
    FILE *file = fopen(f->path, "wb");
    assert_non_null(file);
    fclose(file);
    char err[512] = "";
    db *d = NULL;
    for (int flags = DB_OPEN_READONLY; flags >= 0; flags--) {
        assert_int_equal(db_open(f->path, flags, &d, err, sizeof err), -1);
        assert_non_null(strstr(err, "is empty"));
        assert_null(d);
        struct stat sb;
        assert_int_equal(stat(f->path, &sb), 0);
        assert_int_equal(sb.st_size, 0);
    }
    d = open_ok(f->path, DB_OPEN_CREATE);
    assert_int_equal(query_int(d, "PRAGMA user_version"), db_schema_version());
    db_close(d);
}

/* Creators racing for one new file: each opens it (created by exactly one of them, complete
 * before anyone sees it) in every round. A reader racing them sees no file or a whole one. */
static void concurrent_creators_agree(void **state)
{
    fixture *f = *state;
    enum { ROUNDS = 25, CREATORS = 4 };
    for (int round = 0; round < ROUNDS; round++) {
        char path[160];
        snprintf(path, sizeof path, "%s/race%d.db", f->dir, round);
        int start[2];
        assert_int_equal(pipe(start), 0);
        pid_t pids[CREATORS + 1];
        for (int i = 0; i <= CREATORS; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                char c, err[512] = "";
                close(start[1]);
                if (read(start[0], &c, 1) < 0)
                    _exit(2);
                db *d = NULL;
                int rc = 0;
                if (i < CREATORS) {
                    rc = db_open(path, DB_OPEN_CREATE, &d, err, sizeof err);
                } else {
                    /* The reader: until the file exists, then it must open read-only. */
                    const struct timespec pause = { 0, 50000 };
                    for (int tries = 0; tries < 20000 && access(path, F_OK) != 0; tries++)
                        nanosleep(&pause, NULL);
                    rc = db_open(path, DB_OPEN_READONLY, &d, err, sizeof err);
                }
                if (rc)
                    fprintf(stderr, "round %d, process %d: %s\n", round, i, err);
                db_close(d);
                _exit(rc ? 1 : 0);
            }
        }
        close(start[0]);
        close(start[1]);
        for (int i = 0; i <= CREATORS; i++) {
            int status = 0;
            assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
            assert_true(WIFEXITED(status));
            assert_int_equal(WEXITSTATUS(status), 0);
        }
        db *d = open_ok(path, DB_OPEN_READONLY);
        assert_int_equal(query_int(d, "SELECT count(*) FROM schema_version"), db_schema_version());
        db_close(d);
    }
    /* Nothing left behind but the databases. */
    char listing[4096];
    list_dir(f->dir, listing, sizeof listing);
    assert_null(strstr(listing, "tmp"));
    assert_null(strstr(listing, "new"));
}

/* ---- files that are not ours are refused and left byte for byte ------------------------- */

static void build_random(const char *path)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned x = 12345;
    for (int i = 0; i < 8192; i++) {
        x = x * 1103515245u + 12345u;
        fputc((int)(x >> 16) & 0xff, f);
    }
    fclose(f);
}

static void build_text(const char *path)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("device,median_ms\nH100,1.5\n", f);
    fclose(f);
}

static void raw_sql(const char *path, const char *sql)
{
    sqlite3 *s = NULL;
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    assert_int_equal(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(s), SQLITE_OK);
}

static void build_foreign(const char *path)
{
    raw_sql(path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x');");
}

static void build_foreign_wal(const char *path)
{
    raw_sql(path, "PRAGMA journal_mode = WAL; CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x');");
}

static void build_other_app(const char *path)
{
    raw_sql(path, "PRAGMA application_id = 305419896;");
}

static void build_newer(const char *path)
{
    db *d = open_ok(path, DB_OPEN_CREATE);
    db_close(d);
    raw_sql(path, "PRAGMA user_version = 99;");
}

/* Triggers and views of another hand in a flashtune database: SQL that would run on our writes (a
 * trigger that deletes winners, or loops forever), a changed body under one of our names, a view. */
static void build_with(const char *path, const char *sql)
{
    db *d = open_ok(path, DB_OPEN_CREATE);
    db_close(d);
    raw_sql(path, sql);
}

static void build_foreign_trigger(const char *path)
{
    build_with(path, "CREATE TRIGGER erase AFTER INSERT ON results BEGIN DELETE FROM results; END;");
}

static void build_changed_trigger(const char *path)
{
    build_with(path, "DROP TRIGGER results_match_insert; CREATE TRIGGER results_match_insert BEFORE INSERT ON "
                     "results BEGIN SELECT 1; END;");
}

static void build_missing_trigger(const char *path)
{
    build_with(path, "DROP TRIGGER results_match_update;");
}

/* Version 3 in the header over version 1's schema (a damaged or hand-edited file): its triggers
 * are not version 3's, so it is refused before a migration could fail half-way ("no such table"). */
static void build_mislabelled(const char *path)
{
    int count;
    const db_migration *list = db_migrations(&count);
    db *d = NULL;
    char err[512];
    if (db_open_with(path, DB_OPEN_CREATE, list, 1, &d, err, sizeof err) != 0)
        fail_msg("%s", err);
    db_close(d);
    raw_sql(path, "PRAGMA user_version = 3;");
}

static void build_view(const char *path)
{
    build_with(path, "CREATE VIEW everything AS SELECT * FROM results;");
}

static void rejected_files_are_untouched(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *name;
        void (*build)(const char *path);
        const char *expected;
    } cases[] = {
        { "random bytes", build_random, "is not a flashtune database (not an SQLite file)" },
        { "a text file", build_text, "is not a flashtune database (not an SQLite file)" },
        { "another program's SQLite", build_foreign, "is not a flashtune database (application_id 0x00000000)" },
        { "another program's SQLite in WAL mode", build_foreign_wal, "(application_id 0x00000000)" },
        { "another application_id", build_other_app, "(application_id 0x12345678)" },
        { "a newer schema", build_newer, "has schema version 99, newer than this flashtune's" },
        { "a trigger of another hand", build_foreign_trigger, "has a trigger 'erase' that flashtune did not make" },
        { "a trigger of ours changed", build_changed_trigger,
          "has a trigger 'results_match_insert' that flashtune did not make" },
        { "a trigger of ours dropped", build_missing_trigger, "lacks flashtune's trigger 'results_match_update'" },
        { "a view", build_view, "has a view 'everything' that flashtune did not make" },
        { "version 3 over version 1's schema", build_mislabelled,
          "has a trigger 'results_match_insert' that flashtune did not make (not one of schema version 3's)" },
    };
    static const int modes[] = { 0, DB_OPEN_CREATE, DB_OPEN_READONLY };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        unlink(f->path);
        cases[i].build(f->path);
        size_t before_size, after_size;
        char *before = slurp(f->path, &before_size), listing[1024], listing_after[1024];
        list_dir(f->dir, listing, sizeof listing);
        for (int m = 0; m < ARRAY_LEN(modes); m++) {
            char err[512] = "";
            db *d = (db *)0x1;
            int rc = db_open(f->path, modes[m], &d, err, sizeof err);
            if (rc != -1 || !strstr(err, cases[i].expected) || !strstr(err, f->path))
                print_error("case '%s' mode %d: rc %d, expected '%s' in '%s'\n", cases[i].name, modes[m], rc,
                            cases[i].expected, err);
            assert_int_equal(rc, -1);
            assert_null(d);
            assert_non_null(strstr(err, cases[i].expected));
            assert_non_null(strstr(err, f->path));
            char *after = slurp(f->path, &after_size);
            assert_int_equal(after_size, before_size);
            assert_memory_equal(after, before, before_size);
            free(after);
            list_dir(f->dir, listing_after, sizeof listing_after);
            assert_string_equal(listing_after, listing);   /* no -wal, -shm or -journal left */
        }
        free(before);
    }
}

/* A file size limit (RLIMIT_FSIZE, in a child) standing in for a full disk at each point of a
 * new database's making: the open fails, says why, and leaves nothing behind (no schema-only
 * file, no -wal or -shm of the file it was building). */
static void full_disk_leaves_nothing(void **state)
{
    fixture *f = *state;
    static const long limits[] = { 0, 1024, 4096, 16384, 65536 };
    for (int i = 0; i < ARRAY_LEN(limits); i++) {
        unlink(f->path);
        char before[1024], after[1024], err[512] = "";
        list_dir(f->dir, before, sizeof before);
        int pipefd[2];
        assert_int_equal(pipe(pipefd), 0);
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN);
            const struct rlimit r = { (rlim_t)limits[i], (rlim_t)limits[i] };
            setrlimit(RLIMIT_FSIZE, &r);
            db *d = NULL;
            char msg[512] = "";
            const int rc = db_open(f->path, DB_OPEN_CREATE, &d, msg, sizeof msg);
            if (write(pipefd[1], msg, strlen(msg) + 1) < 0)
                _exit(3);
            _exit(rc == 0 ? 0 : 1);
        }
        close(pipefd[1]);
        const ssize_t got = read(pipefd[0], err, sizeof err - 1);
        err[got > 0 ? got : 0] = '\0';
        close(pipefd[0]);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 0)   /* it fit under this limit: nothing to check */
            continue;
        print_message("  limit %ld: %s\n", limits[i], err);
        list_dir(f->dir, after, sizeof after);
        if (strcmp(before, after))
            fail_msg("limit %ld: left '%s' (before: '%s'); error: %s", limits[i], after, before, err);
        if (!strstr(err, f->path) || !strstr(err, "cannot create") || !strstr(err, strerror(EFBIG)))
            fail_msg("limit %ld: error '%s' does not say it could not create %s, and why (%s)", limits[i], err,
                     f->path, strerror(EFBIG));
    }
}

/* ---- migrations ------------------------------------------------------------------------- */

/* The built-in list plus one fake migration to the next version. */
static int list_with(db_migration *list, int max, const char *name, const char *sql)
{
    int count;
    const db_migration *builtin = db_migrations(&count);
    assert_true(count + 1 <= max);
    memcpy(list, builtin, (size_t)count * sizeof *list);
    list[count] = (db_migration){ count + 1, name, sql };
    return count + 1;
}

static void migrations_apply_in_order(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db_migration list[16], broken[16];
    int n = list_with(list, 16, "test_v2.sql", "ALTER TABLE sweeps ADD COLUMN note TEXT;");
    int n_broken = list_with(broken, 16, "test_bad.sql", "ALTER TABLE sweeps ADD COLUMN ok INTEGER; "
                                                         "ALTER TABLE no_such_table ADD COLUMN x INTEGER;");
    /* v1: this build's current version; the fake migration brings files to v1 + 1. */
    const int v1 = db_schema_version(), v2 = v1 + 1;
    char want[160];

    /* A current file with data. */
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    upsert_device(d, &dev);
    db_close(d);

    /* Read-only does not migrate. */
    d = NULL;
    assert_int_equal(db_open_with(f->path, DB_OPEN_READONLY, list, n, &d, err, sizeof err), -1);
    snprintf(want, sizeof want, "older than this flashtune's %d", v2);
    assert_non_null(strstr(err, want));

    /* A failing migration rolls back whole: still version v1, no half-added column. */
    assert_int_equal(db_open_with(f->path, 0, broken, n_broken, &d, err, sizeof err), -1);
    snprintf(want, sizeof want, "migration to schema version %d (test_bad.sql) failed", v2);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "no_such_table"));
    d = open_ok(f->path, 0);
    assert_int_equal(query_int(d, "PRAGMA user_version"), v1);
    assert_int_equal(query_int(d, "SELECT count(*) FROM pragma_table_info('sweeps') WHERE name = 'ok'"), 0);
    db_close(d);

    /* The good one: version v2, recorded, data kept. */
    assert_int_equal(db_open_with(f->path, 0, list, n, &d, err, sizeof err), 0);
    assert_int_equal(query_int(d, "PRAGMA user_version"), v2);
    assert_int_equal(query_int(d, "SELECT count(*) FROM schema_version"), v2);
    assert_int_equal(query_int(d, "SELECT count(*) FROM pragma_table_info('sweeps') WHERE name = 'note'"), 1);
    assert_int_equal(query_int(d, "SELECT count(*) FROM devices"), 1);
    db_close(d);

    /* This build knows only version v1: the migrated file is newer and stays as it is. */
    size_t before_size, after_size;
    char *before = slurp(f->path, &before_size);
    assert_int_equal(db_open(f->path, 0, &d, err, sizeof err), -1);
    snprintf(want, sizeof want, "has schema version %d, newer than this flashtune's %d", v2, v1);
    assert_non_null(strstr(err, want));
    char *after = slurp(f->path, &after_size);
    assert_int_equal(after_size, before_size);
    assert_memory_equal(after, before, before_size);
    free(before);
    free(after);

    /* A new file runs every migration in order. */
    char fresh[160];
    snprintf(fresh, sizeof fresh, "%s/fresh.db", f->dir);
    assert_int_equal(db_open_with(fresh, DB_OPEN_CREATE, list, n, &d, err, sizeof err), 0);
    assert_int_equal(query_int(d, "PRAGMA user_version"), v2);
    char versions[64];
    query_text(d, "SELECT group_concat(version, ',') FROM (SELECT version FROM schema_version ORDER BY version)",
               versions, sizeof versions);
    want[0] = '\0';
    for (int v = 1; v <= v2; v++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", v > 1 ? "," : "", v);
    assert_string_equal(versions, want);
    db_close(d);

    /* A list with a gap is refused before anything is touched. */
    db_migration gap[2] = { list[0], { v2 + 1, "gap.sql", "SELECT 1;" } };
    assert_int_equal(db_open_with(fresh, 0, gap, 2, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "migration 2"));
}

/* ---- upserts --------------------------------------------------------------------------- */

static void upserts_are_idempotent(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device a = device_of("GPU A", "sm_90", "13.0"), a2 = device_of("GPU A", "sm_90", "13.1");
    int64_t id_a = upsert_device(d, &a);
    assert_int_equal(upsert_device(d, &a), id_a);
    assert_int_not_equal(upsert_device(d, &a2), id_a);   /* a driver update is a new row */

    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    int64_t id_w = upsert_workload(d, &w);
    assert_int_equal(upsert_workload(d, &w), id_w);
    int64_t found = 0;
    assert_int_equal(db_workload_find(d, &w, &found, err, sizeof err), 1);
    assert_int_equal(found, id_w);
    db_workload w2 = w;
    w2.seqlen_k = 2048;
    assert_int_equal(db_workload_find(d, &w2, &found, err, sizeof err), 0);

    db_kernel k = kernel_of(&w, 1, 64);
    int64_t id_k = upsert_kernel(d, &k);
    assert_int_equal(upsert_kernel(d, &k), id_k);
    db_kernel back;
    assert_int_equal(db_kernel_get(d, id_k, &back, err, sizeof err), 1);
    assert_memory_equal(&back, &k, sizeof k);
    assert_int_equal(db_kernel_get(d, id_k + 100, &back, err, sizeof err), 0);
    /* The hash is the identity: the same hash with other parameters is a contradiction. */
    db_kernel clash = k;
    clash.p[GEN_BLOCK_M] = 128;
    int64_t id;
    assert_int_equal(db_kernel_upsert(d, &clash, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "BLOCK_M=64, not 128"));

    /* Binaries: stored once per cache key, read back byte for byte. */
    unsigned char bytes[300];
    for (int i = 0; i < ARRAY_LEN(bytes); i++)
        bytes[i] = (unsigned char)(i * 7);
    db_binary b = { "00112233445566ff", "sm_90", "13.0", bytes, sizeof bytes, 96, 0, 0, 16, 0, 1.25, NULL, NULL };
    int64_t id_b = 0, id_b2 = 0;
    assert_int_equal(db_binary_put(d, id_k, &b, &id_b, err, sizeof err), 0);
    assert_int_equal(db_binary_put(d, id_k, &b, &id_b2, err, sizeof err), 0);
    assert_int_equal(id_b, id_b2);
    assert_int_equal(query_int(d, "SELECT count(*) FROM binaries"), 1);
    db_binary got;
    int64_t got_id = 0;
    assert_int_equal(db_binary_find(d, "00112233445566ff", &got, &got_id, err, sizeof err), 1);
    assert_int_equal(got_id, id_b);
    assert_int_equal(got.cubin_size, sizeof bytes);
    assert_memory_equal(got.cubin, bytes, sizeof bytes);
    assert_int_equal(got.registers, 96);
    assert_int_equal(got.stack_frame_bytes, 16);
    assert_true(got.compile_seconds == 1.25);
    assert_string_equal(got.arch, "sm_90");
    db_binary_release(&got);
    assert_null(got.cubin);
    db_binary_release(NULL);
    assert_int_equal(db_binary_find(d, "ffffffffffffffff", &got, NULL, err, sizeof err), 0);
    assert_int_equal(db_binary_find_for_kernel(d, id_k, "sm_90", "13.0", &got, NULL, err, sizeof err), 1);
    db_binary_release(&got);
    assert_int_equal(db_binary_find_for_kernel(d, id_k, "sm_80", "13.0", &got, NULL, err, sizeof err), 0);
    assert_int_equal(db_binary_find_for_kernel(d, id_k, "sm_90", "12.8", &got, NULL, err, sizeof err), 0);
    db_binary orphan = b;
    snprintf(orphan.cache_key, sizeof orphan.cache_key, "0000000000000001");
    assert_int_equal(db_binary_put(d, 999, &orphan, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "kernel_id=999 is not a stored kernel"));
    db_close(d);
}

static void bad_rows_are_named(void **state)
{
    fixture *f = *state;
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_workload good = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    static const struct {
        const char *name;
        int field;                  /* which field to break */
        const char *expected;
    } cases[] = {
        { "device without a name", 0, "device name is empty" },
        { "device with no SMs", 1, "device sm_count=0 is not positive" },
        { "device name with a line break", 9, "device name is empty or has control characters" },
        { "workload op", 2, "workload op=7 is not DB_OP_FWD or DB_OP_BWD" },
        { "workload dtype", 3, "workload dtype=9 is not 0..3" },
        { "workload seqlen", 4, "workload seqlen_k=0 is less than 1" },
        { "workload causal", 5, "workload causal=2 is not 0 or 1" },
        { "kernel hash", 6, "kernel source_hash 'XYZ' is not 16 lower-case hex digits" },
        { "kernel family", 7, "kernel family is empty" },
        { "kernel dtype", 8, "kernel DTYPE=4 is not 0..3" },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        db_device dev = device_of("GPU A", "sm_90", "13.0");
        db_workload w = good;
        db_kernel k = kernel_of(&good, 3, 64);
        char err[512] = "";
        int64_t id;
        int rc;
        switch (cases[i].field) {
        case 0: dev.name[0] = '\0'; rc = db_device_upsert(d, &dev, &id, err, sizeof err); break;
        case 1: dev.sm_count = 0; rc = db_device_upsert(d, &dev, &id, err, sizeof err); break;
        case 2: w.op = 7; rc = db_workload_upsert(d, &w, &id, err, sizeof err); break;
        case 3: w.dtype = 9; rc = db_workload_upsert(d, &w, &id, err, sizeof err); break;
        case 4: w.seqlen_k = 0; rc = db_workload_upsert(d, &w, &id, err, sizeof err); break;
        case 5: w.causal = 2; rc = db_workload_upsert(d, &w, &id, err, sizeof err); break;
        case 6:
            snprintf(k.source_hash, sizeof k.source_hash, "XYZ");
            rc = db_kernel_upsert(d, &k, &id, err, sizeof err);
            break;
        case 7: k.family[0] = '\0'; rc = db_kernel_upsert(d, &k, &id, err, sizeof err); break;
        case 9:
            snprintf(dev.name, sizeof dev.name, "GPU\nA");
            rc = db_device_upsert(d, &dev, &id, err, sizeof err);
            break;
        default: k.p[GEN_DTYPE] = 4; rc = db_kernel_upsert(d, &k, &id, err, sizeof err); break;
        }
        if (rc != -1 || !strstr(err, cases[i].expected))
            print_error("case '%s': rc %d, expected '%s', got '%s'\n", cases[i].name, rc, cases[i].expected, err);
        assert_int_equal(rc, -1);
        assert_non_null(strstr(err, cases[i].expected));
    }
    assert_int_equal(query_int(d, "SELECT (SELECT count(*) FROM devices) + (SELECT count(*) FROM workloads) + "
                                  "(SELECT count(*) FROM kernels)"), 0);
    db_close(d);
}

/* ---- results and winners ---------------------------------------------------------------- */

static void winners_pick_fastest_valid(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    int64_t sweep = begin_sweep(d), id_d = upsert_device(d, &dev), id_w = upsert_workload(d, &w);
    int64_t k[7];
    for (int i = 0; i < 7; i++) {
        db_kernel kk = kernel_of(&w, 10 + (unsigned)i, 16 * (i + 1));
        k[i] = upsert_kernel(d, &kk);
    }
    /* Each step stores one result, then the winner must be the expected kernel (-1: none). */
    static const struct {
        const char *name;
        int kernel;
        db_status status;
        double ms;
        int winner;
    } steps[] = {
        { "a crash has no time and wins nothing", 3, DB_STATUS_CRASHED, NAN, -1 },
        { "the first valid result wins", 0, DB_STATUS_OK, 2.0, 0 },
        { "an invalid result never wins, however fast", 1, DB_STATUS_INVALID, 0.5, 0 },
        { "a faster valid one takes over", 2, DB_STATUS_OK, 1.5, 2 },
        { "a tie goes to the lower kernel id", 4, DB_STATUS_OK, 1.5, 2 },
        { "faster again", 5, DB_STATUS_OK, 1.0, 5 },
        { "a re-measurement that fails validation loses", 5, DB_STATUS_INVALID, 0.9, 2 },
        { "a timeout is not a winner", 6, DB_STATUS_TIMEOUT, NAN, 2 },
    };
    for (int i = 0; i < ARRAY_LEN(steps); i++) {
        db_result r = result_of(sweep, id_d, id_w, k[steps[i].kernel], steps[i].status, steps[i].ms);
        r.message = steps[i].status == DB_STATUS_OK ? NULL : "why it failed";
        put(d, &r);
        db_winner win;
        int found = db_winner_find(d, "GPU A", "sm_90", &w, &win, err, sizeof err);
        int expected = steps[i].winner;
        if (found != (expected >= 0) || (found == 1 && win.kernel_id != k[expected]))
            print_error("step '%s': found %d kernel %lld, expected %d\n", steps[i].name, found,
                        found == 1 ? (long long)win.kernel_id : -1LL, expected);
        assert_int_equal(found, expected >= 0);
        if (found == 1) {
            assert_int_equal(win.kernel_id, k[expected]);
            assert_int_equal(win.workload_match, DB_MATCH_EXACT);
            assert_int_equal(win.device_match, DB_MATCH_SAME_GPU);
            assert_true(win.distance == 0);
            assert_string_equal(win.device.name, "GPU A");
            assert_int_equal(win.kernel.p[GEN_BLOCK_M], 16 * (expected + 1));
        }
    }
    assert_int_equal(query_int(d, "SELECT count(*) FROM results"), 7);   /* the re-measure replaced */
    assert_int_equal(query_int(d, "SELECT count(*) FROM winners"), 1);

    /* Resume: what is stored, with its status. */
    db_status s = DB_STATUS_COUNT;
    assert_int_equal(db_result_get(d, id_d, id_w, k[5], &s, err, sizeof err), 1);
    assert_int_equal(s, DB_STATUS_INVALID);
    assert_int_equal(db_result_get(d, id_d, id_w, k[6] + 1, &s, err, sizeof err), 0);

    /* Rules of a result. */
    db_result r = result_of(sweep, id_d, id_w, k[6], DB_STATUS_OK, NAN);
    assert_int_equal(db_result_put(d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "status ok needs median_ms > 0"));
    r = result_of(sweep, id_d, id_w, 9999, DB_STATUS_OK, 1.0);
    assert_int_equal(db_result_put(d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not a stored row"));
    r = result_of(0, id_d, id_w, k[6], DB_STATUS_OK, 1.0);
    assert_int_equal(db_result_put(d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "sweep_id=0 is not a row id"));
    /* A kernel generated for another head dim cannot be a result of this workload. */
    db_workload other = workload_of(DB_OP_FWD, 1, 64, 0, 4, 16, 4096, 4096);
    db_kernel wrong = kernel_of(&other, 99, 64);
    r = result_of(sweep, id_d, id_w, upsert_kernel(d, &wrong), DB_STATUS_OK, 0.1);
    assert_int_equal(db_result_put(d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "differs from the workload"));

    assert_int_equal(db_sweep_end(d, sweep, err, sizeof err), 0);
    assert_int_equal(query_int(d, "SELECT count(*) FROM sweeps WHERE finished_at IS NOT NULL"), 1);
    assert_int_equal(db_sweep_end(d, sweep + 5, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not a stored sweep"));
    db_close(d);
}

/* Grouped heads and the softcap are part of a workload's key: the same shape with and without
 * them is three rows; lookup prefers the asked kind (group ratio, softcap), exact first, then the
 * nearest kind (the group ratio by its log, a softcap that differs as 1), and says how far. */
static void workload_kinds_are_keyed_and_preferred(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    int64_t sweep = begin_sweep(d), dev_id;
    const db_device gpu = device_of("GPU A", "sm_90", "13.0");
    dev_id = upsert_device(d, &gpu);
    /* Tuned at N 4096, 16 query heads: plain, 4 K/V heads (ratio 4), softcapped. */
    const struct { int heads_k, softcap; } tuned[] = { { 0, 0 }, { 4, 0 }, { 0, 1 } };
    int64_t ids[3];
    for (int i = 0; i < 3; i++) {
        db_workload w = workload_of(DB_OP_BWD, 2, 128, 1, 4, 16, 4096, 4096);
        w.heads_k = tuned[i].heads_k;
        w.softcap = tuned[i].softcap;
        db_kernel k = kernel_of(&w, 700 + (unsigned)i, 64);
        ids[i] = upsert_workload(d, &w);
        db_result r = result_of(sweep, dev_id, ids[i], upsert_kernel(d, &k), DB_STATUS_OK, 1.0 + i);
        put(d, &r);
    }
    assert_true(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    static const struct {
        const char *name;
        int heads_k, softcap, seq;
        int want;            /* index into tuned */
        int exact;
        double kind_gap;
    } cases[] = {
        { "plain, exact", 0, 0, 4096, 0, 1, 0 },
        { "ratio 4, exact", 4, 0, 4096, 1, 1, 0 },
        { "ratio 4 at another length: the same kind before the exact plain one", 4, 0, 2048, 1, 0, 0 },
        { "ratio 8: the nearest ratio (4)", 2, 0, 4096, 1, 0, 0.6931471805599453 },
        { "ratio 2: 4 and 1 are as near; the first by ratio, then distance", 8, 0, 4096, 0, 0, 0.6931471805599453 },
        { "softcap, exact", 0, 1, 4096, 2, 1, 0 },
        { "softcap and ratio 4: grouped without the softcap is nearer", 4, 1, 4096, 1, 0, 1 },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        db_workload q = workload_of(DB_OP_BWD, 2, 128, 1, 4, 16, cases[i].seq, cases[i].seq);
        q.heads_k = cases[i].heads_k;
        q.softcap = cases[i].softcap;
        db_winner w;
        if (db_winner_find(d, "GPU A", "sm_90", &q, &w, err, sizeof err) != 1)
            fail_msg("case '%s': %s", cases[i].name, err);
        if (w.workload_id != ids[cases[i].want] || (w.workload_match == DB_MATCH_EXACT) != cases[i].exact ||
            fabs(w.kind_gap - cases[i].kind_gap) > 1e-12)
            fail_msg("case '%s': workload %lld (heads_k %d softcap %d), %s, kind gap %g", cases[i].name,
                     (long long)w.workload_id, w.workload.heads_k, w.workload.softcap,
                     w.workload_match == DB_MATCH_EXACT ? "exact" : "nearest", w.kind_gap);
        assert_int_equal(w.workload.heads_k, tuned[cases[i].want].heads_k);
        assert_int_equal(w.kernel.p[GEN_SOFTCAP], tuned[cases[i].want].softcap);
    }
    /* The text form names the features only where a workload has them, and reads them back. */
    db_workload g = workload_of(DB_OP_FWD, 1, 64, 0, 2, 8, 100, 300), back;
    g.heads_k = 2;
    g.softcap = 1;
    char text[256];
    db_workload_format(&g, text, sizeof text);
    assert_non_null(strstr(text, " heads_k=2 softcap=1"));
    assert_int_equal(db_workload_parse(text, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &g, sizeof g);
    g.heads_k = g.softcap = 0;
    db_workload_format(&g, text, sizeof text);
    assert_null(strstr(text, "heads_k"));
    assert_null(strstr(text, "softcap"));
    g.heads_k = 3;
    assert_int_not_equal(db_workload_upsert(d, &g, &dev_id, err, sizeof err), 0);
    assert_non_null(strstr(err, "heads_k=3 must be 0 (no grouping) or fewer than heads=8 and divide it"));
    db_close(d);
}

/* A workload with its mask made by db_workload_set_mask, after its lengths and bucket. */
static db_workload masked_of(int op, int causal, int bottom_right, int left, int right, int varlen, int sq, int sk)
{
    db_workload w = workload_of(op, 1, 128, 0, 4, 16, sq, sk);
    w.varlen = varlen;
    db_workload_set_mask(&w, causal, bottom_right, left, right);
    return w;
}

/* A mask is stored in one form only (db_workload_set_mask's) and a bucket is 0..8: anything else
 * is refused, naming the field and value, before the database is touched. */
static void workload_masks_are_checked(void **state)
{
    fixture *f = *state;
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    static const struct {
        const char *name;
        int causal, window, left, right, bottom_right, varlen, seqlen_k;
        const char *error;          /* NULL: accepted */
    } cases[] = {
        { "plain", 0, 0, 0, 0, 0, 0, 1024, NULL },
        { "causal", 1, 0, 0, 0, 0, 0, 1024, NULL },
        { "causal with a left window", 1, 1, 256, 0, 0, 0, 1024, NULL },
        { "a band", 0, 1, 128, 128, 0, 0, 1024, NULL },
        { "a window limited on the left only", 0, 1, 64, -1, 0, 0, 1024, NULL },
        { "a window limited right of the diagonal only", 0, 1, -1, 16, 0, 0, 1024, NULL },
        { "causal bottom-right on unequal lengths", 1, 0, 0, 0, 1, 0, 2048, NULL },
        { "causal bottom-right on a variable-length batch", 1, 0, 0, 0, 1, 5, 1024, NULL },
        { "bucket 8", 0, 0, 0, 0, 0, 8, 1024, NULL },
        { "window 2", 0, 2, 0, 0, 0, 0, 1024, "workload window=2 is not 0 or 1" },
        { "a left side of -2", 0, 1, -2, 4, 0, 0, 1024,
          "workload window_left=-2 is less than -1 (no limit)" },
        { "a right side of -3", 0, 1, 4, -3, 0, 0, 1024,
          "workload window_right=-3 is less than -1 (no limit)" },
        { "sides without a window", 0, 0, 8, 0, 0, 0, 1024,
          "workload window=0 with window_left=8 window_right=0: without a window" },
        { "a window limiting nothing", 0, 1, -1, -1, 0, 0, 1024,
          "workload window=1 with window_left=-1 window_right=-1 limits nothing" },
        { "a window ending at the diagonal is causal", 0, 1, -1, 0, 0, 0, 1024,
          "workload mask causal=0 window=1 window_left=-1 window_right=0 bottom_right=0 is not "
          "its stored form causal=1 window=0 window_left=0 window_right=0 bottom_right=0" },
        { "a band ending at the diagonal is causal", 0, 1, 32, 0, 0, 0, 1024,
          "is not its stored form causal=1 window=1 window_left=32 window_right=0 bottom_right=0" },
        { "causal with a right side", 1, 1, 32, 8, 0, 0, 1024,
          "is not its stored form causal=1 window=1 window_left=32 window_right=0 bottom_right=0" },
        { "causal with an unlimited left window", 1, 1, -1, 0, 0, 0, 1024,
          "workload mask causal=1 window=1 window_left=-1 window_right=0 bottom_right=0 is not "
          "its stored form causal=1 window=0" },
        { "bottom_right 2", 1, 0, 0, 0, 2, 0, 2048, "workload bottom_right=2 is not 0 or 1" },
        { "bottom_right without a mask", 0, 0, 0, 0, 1, 0, 2048,
          "workload bottom_right=1 without a mask (causal=0 window=0)" },
        { "bottom_right on equal dense lengths", 1, 0, 0, 0, 1, 0, 1024,
          "is not its stored form causal=1 window=0 window_left=0 window_right=0 bottom_right=0" },
        { "bucket 9", 0, 0, 0, 0, 0, 9, 1024, "workload varlen=9 is not 0 (dense) or a bucket 1..8" },
        { "bucket -1", 0, 0, 0, 0, 0, -1, 1024, "workload varlen=-1 is not 0" },
    };
    int accepted = 0;
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        db_workload w = workload_of(DB_OP_FWD, 1, 128, cases[i].causal, 4, 16, 1024, cases[i].seqlen_k);
        w.window = cases[i].window;
        w.window_left = cases[i].left;
        w.window_right = cases[i].right;
        w.bottom_right = cases[i].bottom_right;
        w.varlen = cases[i].varlen;
        char err[512] = "";
        int64_t id = 0;
        const int rc = db_workload_upsert(d, &w, &id, err, sizeof err);
        if (cases[i].error ? rc != -1 || !strstr(err, cases[i].error) : rc != 0)
            fail_msg("case '%s': rc %d, expected %s, got '%s'", cases[i].name, rc,
                     cases[i].error ? cases[i].error : "accepted", err);
        accepted += rc == 0;
        /* A lookup checks the same way. */
        db_winner win;
        const int found = db_winner_find(d, NULL, NULL, &w, &win, err, sizeof err);
        assert_int_equal(found, cases[i].error ? -1 : 0);
        if (cases[i].error)
            assert_non_null(strstr(err, "workload "));
    }
    /* Every accepted mask is a row of its own. */
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads"), accepted);
    assert_int_equal(accepted, 9);
    db_close(d);
}

/* The mask and the bucket are part of a workload's key; lookup takes the winners whose kernels are
 * of the problem's CAUSAL (any mask runs CAUSAL=1), the problem's kind first (the same mask, the
 * same batch kind), then the nearest kind: a window's sides by their log, buckets by their
 * distance, dense before variable-length for a dense problem. */
static void masks_and_buckets_are_keyed_and_preferred(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    int64_t sweep = begin_sweep(d);
    const db_device gpu = device_of("GPU A", "sm_90", "13.0");
    const int64_t dev_id = upsert_device(d, &gpu);
    /* Tuned, fwd b4 h16: (causal, bottom_right, left, right, varlen, seqlen_q, seqlen_k). */
    const db_workload tuned[] = {
        masked_of(DB_OP_FWD, 0, 0, -1, -1, 0, 4096, 4096),     /* 0 plain */
        masked_of(DB_OP_FWD, 1, 0, -1, -1, 0, 4096, 4096),     /* 1 causal */
        masked_of(DB_OP_FWD, 1, 0, 256, -1, 0, 4096, 4096),    /* 2 causal, 256 keys back */
        masked_of(DB_OP_FWD, 0, 0, 128, 128, 0, 4096, 4096),   /* 3 a band of 128 each side */
        masked_of(DB_OP_FWD, 1, 0, -1, -1, 4, 4096, 4096),     /* 4 causal, bucket 4 */
        masked_of(DB_OP_FWD, 0, 0, -1, -1, 8, 2048, 2048),     /* 5 plain, bucket 8 at 2048 */
        masked_of(DB_OP_FWD, 1, 1, -1, -1, 0, 1024, 4096),     /* 6 causal bottom-right */
    };
    enum { TUNED = sizeof tuned / sizeof tuned[0] };
    int64_t ids[TUNED];
    for (int i = 0; i < TUNED; i++) {
        ids[i] = upsert_workload(d, &tuned[i]);
        db_kernel k = kernel_of(&tuned[i], 900 + (unsigned)i, 64);
        db_result r = result_of(sweep, dev_id, ids[i], upsert_kernel(d, &k), DB_STATUS_OK, 1.0 + i);
        put(d, &r);
        for (int j = 0; j < i; j++)
            assert_true(ids[i] != ids[j]);
        assert_int_equal(upsert_workload(d, &tuned[i]), ids[i]);
    }
    /* A shape stored with another mask or bucket is not found as this one. */
    db_workload absent = masked_of(DB_OP_FWD, 0, 0, 128, 64, 0, 4096, 4096);
    int64_t id;
    assert_int_equal(db_workload_find(d, &absent, &id, err, sizeof err), 0);
    absent = masked_of(DB_OP_FWD, 1, 0, -1, -1, 3, 4096, 4096);
    assert_int_equal(db_workload_find(d, &absent, &id, err, sizeof err), 0);

    const double side_256_512 = 0.25 * log(513.0 / 257.0), side_128_64 = 0.25 * log(129.0 / 65.0);
    const struct {
        const char *name;
        int causal, bottom_right, left, right, varlen, seqlen_q, seqlen_k;
        int want;            /* index into tuned */
        int exact;
        double kind_gap;
    } cases[] = {
        { "plain, exact", 0, 0, -1, -1, 0, 4096, 4096, 0, 1, 0 },
        { "plain at the bucket's lengths: dense before variable-length", 0, 0, -1, -1, 0, 2048, 2048, 0, 0, 0 },
        { "causal, exact", 1, 0, -1, -1, 0, 4096, 4096, 1, 1, 0 },
        { "causal dense at 2048: dense before the bucket", 1, 0, -1, -1, 0, 2048, 2048, 1, 0, 0 },
        { "causal window, exact", 1, 0, 256, -1, 0, 4096, 4096, 2, 1, 0 },
        { "causal window of 512: the nearest window, not plain causal", 1, 0, 512, -1, 0, 4096, 4096, 2, 0,
          side_256_512 },
        { "a band, exact (CAUSAL=1 kernels)", 0, 0, 128, 128, 0, 4096, 4096, 3, 1, 0 },
        { "a window of 64 left, unlimited right: the band", 0, 0, 64, -1, 0, 4096, 4096, 3, 0, side_128_64 + 0.5 },
        { "a band of 8 each side: the band, each side at most 0.5 apart", 0, 0, 8, 8, 0, 4096, 4096, 3, 0, 1 },
        { "causal bucket 4, exact", 1, 0, -1, -1, 4, 4096, 4096, 4, 1, 0 },
        { "causal bucket 2: the nearest bucket before dense", 1, 0, -1, -1, 2, 4096, 4096, 4, 0, 0.25 },
        { "plain bucket 1: bucket 8 before dense", 0, 0, -1, -1, 1, 4096, 4096, 5, 0, 7.0 / 8 },
        { "causal bottom-right, exact", 1, 1, -1, -1, 0, 1024, 4096, 6, 1, 0 },
        { "causal bottom-right at 2048 by 4096", 1, 1, -1, -1, 0, 2048, 4096, 6, 0, 0 },
        { "causal top-left at 1024 by 4096: top-left before the exact shape", 1, 0, -1, -1, 0, 1024, 4096, 1, 0, 0 },
        { "a bottom-right band: the band, by 1", 0, 1, 128, 128, 0, 1024, 4096, 3, 0, 1 },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        const db_workload q = masked_of(DB_OP_FWD, cases[i].causal, cases[i].bottom_right, cases[i].left,
                                        cases[i].right, cases[i].varlen, cases[i].seqlen_q, cases[i].seqlen_k);
        db_winner w;
        if (db_winner_find(d, "GPU A", "sm_90", &q, &w, err, sizeof err) != 1)
            fail_msg("case '%s': %s", cases[i].name, err);
        char got[256];
        if (w.workload_id != ids[cases[i].want] || (w.workload_match == DB_MATCH_EXACT) != cases[i].exact ||
            fabs(w.kind_gap - cases[i].kind_gap) > 1e-12)
            fail_msg("case '%s': expected workload %lld, %s, kind gap %g; got %lld (%s), %s, kind gap %g",
                     cases[i].name, (long long)ids[cases[i].want], cases[i].exact ? "exact" : "nearest",
                     cases[i].kind_gap, (long long)w.workload_id, db_workload_format(&w.workload, got, sizeof got),
                     w.workload_match == DB_MATCH_EXACT ? "exact" : "nearest", w.kind_gap);
        assert_memory_equal(&w.workload, &tuned[cases[i].want], sizeof w.workload);
        assert_int_equal(w.kernel.p[GEN_CAUSAL], db_workload_masked(&q));
        assert_int_equal(w.kernel.p[GEN_VARLEN], tuned[cases[i].want].varlen != 0);
    }
    /* Without a winner of the problem's CAUSAL there is none: a band never takes a plain kernel. */
    db_workload band_64 = masked_of(DB_OP_FWD, 0, 0, 64, 64, 0, 4096, 4096);
    band_64.head_dim = band_64.head_dim_v = 64;
    db_workload plain_64 = band_64;
    db_workload_set_mask(&plain_64, 0, 0, -1, -1);
    db_kernel k = kernel_of(&plain_64, 990, 64);
    db_result r = result_of(sweep, dev_id, upsert_workload(d, &plain_64), upsert_kernel(d, &k), DB_STATUS_OK, 1.0);
    put(d, &r);
    db_winner w;
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &band_64, &w, err, sizeof err), 0);
    /* Nor is a plain kernel ever stored as a windowed workload's result (the trigger). */
    r.workload_id = upsert_workload(d, &band_64);
    assert_int_equal(db_result_put(d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "differs from the workload"));

    /* Export and import keep every mask and bucket: the same text from a fresh database. */
    char *first = fixture_export(d);
    assert_non_null(strstr(first, " seqlen_k=4096 window=1 window_left=128 window_right=128 family="));
    assert_non_null(strstr(first, " seqlen_q=1024 seqlen_k=4096 bottom_right=1 family="));
    assert_non_null(strstr(first, " causal=1 batch=4 heads=16 seqlen_q=4096 seqlen_k=4096 varlen=4 family="));
    char copy[160];
    snprintf(copy, sizeof copy, "%s/copy.db", f->dir);
    db *c = open_ok(copy, DB_OPEN_CREATE);
    db_import_counts n;
    assert_int_equal(db_import_text(c, "masks.txt", first, NULL, &n, err, sizeof err), 0);
    assert_int_equal(n.added, TUNED + 1);
    char *second = fixture_export(c);
    assert_string_equal(second, first);
    for (int i = 0; i < TUNED; i++) {
        assert_int_equal(db_workload_find(c, &tuned[i], &id, err, sizeof err), 1);
        assert_int_equal(db_winner_find(c, "GPU A", "sm_90", &tuned[i], &w, err, sizeof err), 1);
        assert_memory_equal(&w.workload, &tuned[i], sizeof w.workload);
    }
    free(first);
    free(second);
    db_close(c);
    db_close(d);
}

/* The text form names the mask and the bucket only where a workload has them, and reads them
 * back; a plain workload's text is as it was before they existed. */
static void mask_text_round_trips(void **state)
{
    (void)state;
    static const struct {
        int causal, bottom_right, left, right, varlen, seqlen_q;
        const char *text;
    } cases[] = {
        { 0, 0, -1, -1, 0, 100, "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 seqlen_q=100 "
                                "seqlen_k=300" },
        { 1, 0, -1, -1, 0, 100, "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=1 batch=4 heads=16 seqlen_q=100 "
                                "seqlen_k=300" },
        { 0, 0, 128, -1, 0, 300, "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 "
                                 "seqlen_q=300 seqlen_k=300 window=1 window_left=128 window_right=-1" },
        { 1, 1, 64, -1, 0, 100, "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=1 batch=4 heads=16 seqlen_q=100 "
                                "seqlen_k=300 window=1 window_left=64 window_right=0 bottom_right=1" },
        { 1, 1, -1, -1, 3, 300, "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=1 batch=4 heads=16 seqlen_q=300 "
                                "seqlen_k=300 bottom_right=1 varlen=3" },
        { 0, 0, -1, -1, 8, 100, "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 seqlen_q=100 "
                                "seqlen_k=300 varlen=8" },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        const db_workload w = masked_of(DB_OP_FWD, cases[i].causal, cases[i].bottom_right, cases[i].left,
                                        cases[i].right, cases[i].varlen, cases[i].seqlen_q, 300);
        char text[256], err[512] = "";
        assert_string_equal(db_workload_format(&w, text, sizeof text), cases[i].text);
        db_workload back;
        if (db_workload_parse(text, &back, err, sizeof err) != 0)
            fail_msg("'%s': %s", text, err);
        assert_memory_equal(&back, &w, sizeof w);
    }
}

/* ---- schema version 5 ---------------------------------------------------------------------- */

/* A version-4 file (workloads without a mask's kind or a bucket) migrates on open: every
 * workload keeps its id and fields with the five new ones 0, results and winners answer as before,
 * the new fields make new keys, and the remade triggers tie CAUSAL to (causal OR window). */
/* Version 6: the fields added since (DB_WORKLOAD_EXTRA_FIELDS) share the workloads' `extra`
 * column; a version-5 file keeps its rows and ids (extra ''), a workload with sinks is another
 * key, its text round-trips, and a row naming a field this build does not know is refused by
 * name, not served as one without it. */
static void migration_6_keeps_workloads_and_adds_the_extra_fields(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    int count;
    const db_migration *list = db_migrations(&count);
    assert_true(count >= 6 && list[4].version == 5 && list[5].version == 6);
    db *old = NULL;
    assert_int_equal(db_open_with(f->path, DB_OPEN_CREATE, list, 5, &old, err, sizeof err), 0);
    assert_int_equal(query_int(old, "SELECT count(*) FROM pragma_table_info('workloads') WHERE name = 'extra'"), 0);
    const db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload plain = workload_of(DB_OP_BWD, 2, 128, 1, 2, 16, 4096, 4096);
    assert_int_equal(sqlite3_exec(db_sqlite(old), "INSERT INTO workloads (id, op, dtype, head_dim, head_dim_v, causal, "
                                  "batch, heads, seqlen_q, seqlen_k) VALUES (77, 'bwd', 'bf16', 128, 128, 1, 2, 16, "
                                  "4096, 4096)", NULL, NULL, NULL), SQLITE_OK);
    const int64_t sweep = begin_sweep(old), dev_id = upsert_device(old, &dev);
    db_kernel k = kernel_of(&plain, 1300, 64);
    const int64_t kernel_id = upsert_kernel(old, &k);
    db_result r = result_of(sweep, dev_id, 77, kernel_id, DB_STATUS_OK, 2.0);
    put_before_clocks(old, &r);
    db_close(old);

    db *d = open_ok(f->path, 0);
    assert_int_equal(query_int(d, "PRAGMA user_version"), list[count - 1].version);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE id = 77 AND extra = ''"), 1);
    assert_int_equal(query_int(d, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* And through migration 7: the result is there, its clocks unknown. */
    assert_int_equal(query_int(d, "SELECT count(*) FROM results WHERE workload_id = 77 AND median_ms = 2.0 AND "
                                  "sm_clock_mhz IS NULL AND clock_events IS NULL"), 1);
    int64_t id = 0;
    assert_int_equal(db_workload_find(d, &plain, &id, err, sizeof err), 1);
    assert_int_equal(id, 77);
    db_winner w;
    assert_int_equal(db_winner_find(d, dev.name, dev.arch, &plain, &w, err, sizeof err), 1);
    assert_int_equal(w.workload_id, 77);

    /* sinks: another key, stored in extra; never served the plain workload's winner. */
    db_workload sinks = plain;
    sinks.sinks = 1;
    const int64_t sinks_id = upsert_workload(d, &sinks);
    assert_true(sinks_id != 77);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE extra = 'sinks=1'"), 1);
    assert_int_equal(db_workload_find(d, &sinks, &id, err, sizeof err), 1);
    assert_int_equal(id, sinks_id);
    assert_int_equal(db_winner_find(d, dev.name, dev.arch, &sinks, &w, err, sizeof err), 0);
    char text[512];
    db_workload back;
    assert_non_null(strstr(db_workload_format(&sinks, text, sizeof text), " sinks=1"));
    assert_int_equal(db_workload_parse(text, &back, err, sizeof err), 0);
    assert_memory_equal(&back, &sinks, sizeof back);
    assert_int_equal(db_workload_parse("op=bwd dtype=bf16 d=128 b=2 h=16 sq=4096 sk=4096 sinks=2", &back, err,
                                       sizeof err), -1);
    assert_non_null(strstr(err, "sinks=2 is not 0 or 1"));
    /* tf32: f32 whose products may round to TF32, stored in extra too; refused in another dtype. */
    assert_int_equal(db_workload_parse("op=fwd dtype=f32 d=64 b=2 h=16 sq=1024 sk=1024 tf32=1", &back, err,
                                       sizeof err), 0);
    assert_int_equal(back.tf32, 1);
    const int64_t tf32_id = upsert_workload(d, &back);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE extra = 'tf32=1'"), 1);
    assert_int_equal(db_workload_find(d, &back, &id, err, sizeof err), 1);
    assert_int_equal(id, tf32_id);
    assert_non_null(strstr(db_workload_format(&back, text, sizeof text), " tf32=1"));
    assert_int_equal(db_workload_parse("op=fwd dtype=bf16 d=64 b=2 h=16 sq=1024 sk=1024 tf32=1", &back, err,
                                       sizeof err), -1);
    assert_non_null(strstr(err, "tf32=1 with dtype bf16"));

    /* A field this build does not know, written by a newer one: refused by name. */
    assert_int_equal(sqlite3_exec(db_sqlite(d), "UPDATE workloads SET extra = 'paged=1' WHERE id = 77", NULL, NULL,
                                  NULL), SQLITE_OK);
    assert_int_equal(db_winner_find(d, dev.name, dev.arch, &plain, &w, err, sizeof err), -1);
    assert_non_null(strstr(err, "field 'paged' is not one this build knows"));
    db_workload_row *rows = NULL;
    int n = 0;
    assert_int_equal(db_workloads_list(d, &rows, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "workload 77"));
    db_close(d);
}

static void migration_5_keeps_workloads(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    int count;
    const db_migration *list = db_migrations(&count);
    assert_true(count >= 5 && list[3].version == 4);
    db *old = NULL;
    assert_int_equal(db_open_with(f->path, DB_OPEN_CREATE, list, 4, &old, err, sizeof err), 0);
    assert_int_equal(query_int(old, "PRAGMA user_version"), 4);
    assert_int_equal(query_int(old, "SELECT count(*) FROM pragma_table_info('workloads') WHERE name = 'window'"), 0);

    /* Rows in the version-4 layout: the workloads and results by SQL, the rest through the API (unchanged). */
    const db_device dev = device_of("GPU A", "sm_90", "13.0");
    const struct { int causal, heads_k, softcap, seq; } shapes[] = {
        { 0, 0, 0, 1024 }, { 1, 0, 0, 1024 }, { 1, 4, 0, 2048 }, { 0, 0, 1, 512 },
    };
    enum { SHAPES = sizeof shapes / sizeof shapes[0] };
    db_workload ws[SHAPES];
    int64_t sweep = begin_sweep(old), dev_id = upsert_device(old, &dev), kernel_ids[SHAPES];
    for (int i = 0; i < SHAPES; i++) {
        ws[i] = workload_of(DB_OP_FWD, 1, 64, shapes[i].causal, 2, 16, shapes[i].seq, shapes[i].seq);
        ws[i].heads_k = shapes[i].heads_k;
        ws[i].softcap = shapes[i].softcap;
        /* Ids 10, 20, ...: kept as they are, not renumbered. */
        char *q = sqlite3_mprintf("INSERT INTO workloads (id, op, dtype, head_dim, head_dim_v, causal, batch, heads, "
                                  "seqlen_q, seqlen_k, heads_k, softcap) VALUES (%d, 'fwd', 'f16', 64, 64, %d, 2, 16, "
                                  "%d, %d, %d, %d)", 10 * (i + 1), shapes[i].causal, shapes[i].seq, shapes[i].seq,
                                  shapes[i].heads_k, shapes[i].softcap);
        assert_int_equal(sqlite3_exec(db_sqlite(old), q, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_free(q);
        db_kernel k = kernel_of(&ws[i], 1200 + (unsigned)i, 64);
        kernel_ids[i] = upsert_kernel(old, &k);
        db_result r = result_of(sweep, dev_id, 10 * (i + 1), kernel_ids[i], DB_STATUS_OK, 1.0 + i);
        put_before_clocks(old, &r);
    }
    db_close(old);

    db *d = open_ok(f->path, 0);   /* migrated to the latest, through 5 */
    assert_int_equal(query_int(d, "PRAGMA user_version"), list[count - 1].version);
    assert_int_equal(query_int(d, "SELECT max(version) FROM schema_version"), list[count - 1].version);
    assert_int_equal(query_int(d, "SELECT count(*) FROM pragma_table_info('workloads') WHERE name IN ('window', "
                                  "'window_left', 'window_right', 'bottom_right', 'varlen')"), 5);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE window = 0 AND window_left = 0 AND "
                                  "window_right = 0 AND bottom_right = 0 AND varlen = 0"), SHAPES);
    assert_int_equal(query_int(d, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    assert_int_equal(query_int(d, "SELECT count(*) FROM results"), SHAPES);
    for (int i = 0; i < SHAPES; i++) {
        int64_t id = 0;
        assert_int_equal(db_workload_find(d, &ws[i], &id, err, sizeof err), 1);
        assert_int_equal(id, 10 * (i + 1));
        db_winner w;
        assert_int_equal(db_winner_find(d, dev.name, dev.arch, &ws[i], &w, err, sizeof err), 1);
        assert_int_equal(w.workload_id, 10 * (i + 1));
        assert_int_equal(w.kernel_id, kernel_ids[i]);
        assert_int_equal(w.workload_match, DB_MATCH_EXACT);
        assert_memory_equal(&w.workload, &ws[i], sizeof w.workload);
    }

    /* The same shape with a window or a bucket is a new workload; a windowed one takes CAUSAL=1
     * kernels only, whether inserted or updated into place. */
    db_workload band = ws[0], bucket = ws[0];
    db_workload_set_mask(&band, 0, 0, 64, 64);
    bucket.varlen = 2;
    const int64_t band_id = upsert_workload(d, &band), bucket_id = upsert_workload(d, &bucket);
    assert_true(band_id > 40 && bucket_id > 40 && band_id != bucket_id);
    db_result r = result_of(sweep, dev_id, band_id, kernel_ids[0], DB_STATUS_OK, 1.0);
    assert_int_equal(db_result_put(d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "differs from the workload"));
    r.kernel_id = kernel_ids[1];   /* the causal workload's: CAUSAL=1 */
    put(d, &r);
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE results SET kernel_id = %lld WHERE workload_id = %lld",
             (long long)kernel_ids[0], (long long)band_id);
    assert_int_not_equal(sqlite3_exec(db_sqlite(d), sql, NULL, NULL, NULL), SQLITE_OK);
    assert_non_null(strstr(sqlite3_errmsg(db_sqlite(d)), "differs from the workload"));
    /* The table's own checks hold a row the API would refuse. */
    assert_int_not_equal(sqlite3_exec(db_sqlite(d), "UPDATE workloads SET window_left = 5 WHERE id = 10", NULL, NULL,
                                      NULL), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(db_sqlite(d), "UPDATE workloads SET varlen = 9 WHERE id = 10", NULL, NULL,
                                      NULL), SQLITE_OK);
    db_close(d);
}

static void nearest_workload_lookup(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    int64_t sweep = begin_sweep(d);
    db_device gpu_a = device_of("GPU A", "sm_90", "13.0"), gpu_b = device_of("GPU B", "sm_90", "13.0"),
              gpu_c = device_of("GPU C", "sm_80", "13.0");
    int64_t a = upsert_device(d, &gpu_a), b = upsert_device(d, &gpu_b), c = upsert_device(d, &gpu_c);
    /* Tuned: GPU A at 1024 and 4096 (b4 h16); GPU B at 2048; GPU C a causal one at 1024. */
    const struct { int64_t dev; int seq, causal; } tuned[] = {
        { a, 1024, 0 }, { a, 4096, 0 }, { b, 2048, 0 }, { c, 1024, 1 },
    };
    for (int i = 0; i < ARRAY_LEN(tuned); i++) {
        db_workload w = workload_of(DB_OP_FWD, 1, 128, tuned[i].causal, 4, 16, tuned[i].seq, tuned[i].seq);
        put_timed(d, sweep, tuned[i].dev, &w, 50 + (unsigned)i);
    }
    static const struct {
        const char *name;
        const char *device, *arch;
        int seq, batch, causal;
        int found, seq_got, workload_match, device_match;
        const char *device_got;
    } cases[] = {
        { "exact on the same GPU", "GPU A", "sm_90", 4096, 4, 0, 1, 4096, DB_MATCH_EXACT, DB_MATCH_SAME_GPU, "GPU A" },
        { "nearest by seqlen ratio", "GPU A", "sm_90", 3000, 4, 0, 1, 4096, DB_MATCH_NEAREST, DB_MATCH_SAME_GPU,
          "GPU A" },
        { "nearest below", "GPU A", "sm_90", 1500, 4, 0, 1, 1024, DB_MATCH_NEAREST, DB_MATCH_SAME_GPU, "GPU A" },
        /* 1024 and 4096 equally far in length; at 2048 the grid (1,024 tiles) is as full as 4096's
         * (both past 4 waves of 132 SMs), 1024's a little less (3.9 waves) */
        { "the same GPU beats another GPU's exact", "GPU A", "sm_90", 2048, 4, 0, 1, 4096, DB_MATCH_NEAREST,
          DB_MATCH_SAME_GPU, "GPU A" },
        { "the lengths before the grid's fill", "GPU A", "sm_90", 4096, 1, 0, 1, 4096, DB_MATCH_NEAREST,
          DB_MATCH_SAME_GPU, "GPU A" },
        { "an unknown GPU of the arch takes the exact one", "GPU Z", "sm_90", 2048, 4, 0, 1, 2048, DB_MATCH_EXACT,
          DB_MATCH_SAME_ARCH, "GPU B" },
        { "no name: any GPU of the arch", NULL, "sm_90", 2048, 4, 0, 1, 2048, DB_MATCH_EXACT, DB_MATCH_SAME_ARCH,
          "GPU B" },
        /* "GPU A2" shares "GPU A" with GPU A, "GPU " only with GPU B: another board of a model
         * takes that model's winners (nearest: 4096, as above) first. */
        { "another board of the model before another model's exact", "GPU A2", "sm_90", 2048, 4, 0, 1, 4096,
          DB_MATCH_NEAREST, DB_MATCH_SAME_ARCH, "GPU A" },
        { "another arch is not used", "GPU A", "sm_80", 4096, 4, 0, 0, 0, 0, 0, NULL },
        { "causal only matches causal", NULL, "sm_80", 8192, 4, 1, 1, 1024, DB_MATCH_NEAREST, DB_MATCH_SAME_ARCH,
          "GPU C" },
        { "causal is never taken for non-causal", "GPU C", "sm_80", 1024, 4, 0, 0, 0, 0, 0, NULL },
        { "no arch: any device", "GPU C", NULL, 1024, 4, 1, 1, 1024, DB_MATCH_EXACT, DB_MATCH_SAME_GPU, "GPU C" },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        db_workload q = workload_of(DB_OP_FWD, 1, 128, cases[i].causal, cases[i].batch, 16, cases[i].seq,
                                    cases[i].seq);
        db_winner win;
        int found = db_winner_find(d, cases[i].device, cases[i].arch, &q, &win, err, sizeof err);
        if (found != cases[i].found
            || (found == 1 && (win.workload.seqlen_q != cases[i].seq_got || win.workload_match != cases[i].workload_match
                               || win.device_match != cases[i].device_match
                               || strcmp(win.device.name, cases[i].device_got))))
            print_error("case '%s': found %d seq %d match %d/%d device %s\n", cases[i].name, found,
                        win.workload.seqlen_q, win.workload_match, win.device_match, win.device.name);
        assert_int_equal(found, cases[i].found);
        if (found == 1) {
            assert_int_equal(win.workload.seqlen_q, cases[i].seq_got);
            assert_int_equal(win.workload_match, cases[i].workload_match);
            assert_int_equal(win.device_match, cases[i].device_match);
            assert_string_equal(win.device.name, cases[i].device_got);
            assert_true(cases[i].workload_match == DB_MATCH_EXACT ? win.distance == 0 : win.distance > 0);
        }
    }
    /* Another dtype or head dim: nothing, never a wrong kernel. */
    db_workload q = workload_of(DB_OP_FWD, 2, 128, 0, 4, 16, 4096, 4096);
    db_winner win;
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &q, &win, err, sizeof err), 0);
    q = workload_of(DB_OP_BWD, 1, 128, 0, 4, 16, 4096, 4096);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &q, &win, err, sizeof err), 0);
    db_close(d);
}

/* Past the lengths, the nearest is the workload whose grid fills the GPU as this one's does: a
 * kernel tuned for idle SMs (a batch of one) serves grids under a wave, one tuned for full waves
 * the grids of two and more (batch x heads alone chose the batch of one for both, 7-65 % slower
 * at head dim 128: notes/tuning.md, section 14). The fill is counted on the row's own SMs. */
static void nearest_by_grid_fill(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    int64_t sweep = begin_sweep(d);
    db_device big = device_of("GPU A", "sm_90", "13.0"), quarter = device_of("GPU Q", "sm_90", "13.0");
    quarter.sm_count = 33;
    const int64_t devs[] = { upsert_device(d, &big), upsert_device(d, &quarter) };
    /* Each GPU tuned at 512 tokens, 16 heads, batches 1 and 32: 64 and 2,048 query tiles. */
    const int batches[] = { 1, 32 };
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 2; i++) {
            db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, batches[i], 16, 512, 512);
            put_timed(d, sweep, devs[g], &w, 70 + (unsigned)(2 * g + i));
        }
    static const struct {
        const char *device;
        int batch, batch_got;
    } cases[] = {
        { "GPU A", 2, 1 },    /* 128 tiles, under a wave of 132 */
        { "GPU A", 4, 32 },   /* 256 tiles, two waves: batch x heads alone took the batch of one */
        { "GPU A", 8, 32 },
        { "GPU Q", 2, 32 },   /* the same 128 tiles on 33 SMs: four waves there */
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        db_workload q = workload_of(DB_OP_FWD, 1, 128, 0, cases[i].batch, 16, 512, 512);
        db_winner win;
        assert_int_equal(db_winner_find(d, cases[i].device, "sm_90", &q, &win, err, sizeof err), 1);
        if (win.workload.batch != cases[i].batch_got)
            fail_msg("case %d (%s, batch %d): served batch %d's winner, expected batch %d's", i, cases[i].device,
                     cases[i].batch, win.workload.batch, cases[i].batch_got);
        assert_string_equal(win.device.name, cases[i].device);
    }
    db_close(d);
}

/* The fill weighs four times a length: a problem nearer one row in length and another in fill
 * takes the fill's at that weight (at twice a length's it would take the length's). Decode shapes
 * weigh batch x K/V heads (here the query heads: no grouping) at half a length's weight instead.
 * The backward's grid is counted in key tiles. */
static void fill_weighs_four_lengths(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    int64_t sweep = begin_sweep(d);
    db_device gpu = device_of("GPU A", "sm_90", "13.0");
    const int64_t dev = upsert_device(d, &gpu);
    const db_workload tuned[] = {
        workload_of(DB_OP_FWD, 1, 128, 0, 2, 16, 1024, 1024),    /* the length, 1.9 waves */
        workload_of(DB_OP_FWD, 1, 128, 0, 32, 16, 3072, 3072),   /* 3x the length, past 4 waves */
        workload_of(DB_OP_FWD, 1, 128, 0, 1, 32, 1, 8192),       /* decode: the keys, 32 heads */
        workload_of(DB_OP_FWD, 1, 128, 0, 4, 32, 1, 32768),      /* decode: 4x the keys, 128 heads */
        workload_of(DB_OP_BWD, 1, 128, 0, 1, 16, 512, 512),      /* half a wave of key tiles */
        workload_of(DB_OP_BWD, 1, 128, 0, 32, 16, 512, 512),     /* past 4 waves */
    };
    for (int i = 0; i < ARRAY_LEN(tuned); i++)
        put_timed(d, sweep, dev, &tuned[i], 90 + (unsigned)i);
    db_winner win;
    /* 3.9 waves: 3x the length away from the full grid, 2x the fill away from the other */
    db_workload q = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 1024, 1024);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &q, &win, err, sizeof err), 1);
    assert_int_equal(win.workload.seqlen_q, 3072);
    /* decode, 4 sequences of 8192 keys: the same keys at a quarter of the heads, not 4x the keys */
    q = workload_of(DB_OP_FWD, 1, 128, 0, 4, 32, 1, 8192);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &q, &win, err, sizeof err), 1);
    assert_int_equal(win.workload.seqlen_k, 8192);
    /* the backward's grid is its key tiles: 4096 queries over 512 keys run half a wave, as the
     * batch of one did (its query tiles would count 3.9 waves, the full grid's) */
    q = workload_of(DB_OP_BWD, 1, 128, 0, 1, 16, 4096, 512);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &q, &win, err, sizeof err), 1);
    assert_int_equal(win.workload.batch, 1);
    db_close(d);
}

/* Decode shapes (notes/tuning.md, section 16): their grid is made of K/V heads (a group's query
 * heads share a tile), so 64 query heads over 8 take 32 over 8 at the same batch, not the batch of
 * two whose batch x query heads is the same; and a draft causal bottom-right takes a decode winner
 * without a mask where none of its own mask exists (the diagonal hides keys of the last tile
 * only), never a window's problem, a top-left diagonal's or a longer query's. */
static void decode_lookup_by_kv_heads_and_either_mask(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    int64_t sweep = begin_sweep(d);
    db_device gpu = device_of("GPU A", "sm_90", "13.0");
    const int64_t dev = upsert_device(d, &gpu);
    db_workload tuned[] = {
        workload_of(DB_OP_FWD, 2, 128, 0, 1, 32, 1, 32768),   /* 8 K/V-head rows */
        workload_of(DB_OP_FWD, 2, 128, 0, 2, 32, 1, 32768),   /* 16, batch x heads 64 */
        workload_of(DB_OP_FWD, 2, 128, 0, 8, 32, 1, 8192),    /* one row, no mask */
    };
    for (int i = 0; i < ARRAY_LEN(tuned); i++) {
        tuned[i].heads_k = 8;
        put_timed(d, sweep, dev, &tuned[i], 120 + (unsigned)i);
    }
    db_winner win;
    db_workload q = workload_of(DB_OP_FWD, 2, 128, 0, 1, 64, 1, 32768);
    q.heads_k = 8;
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &q, &win, err, sizeof err), 1);
    assert_int_equal(win.workload.batch, 1);
    /* four draft rows, causal bottom-right: the one-row winner without a mask */
    db_workload draft = workload_of(DB_OP_FWD, 2, 128, 0, 8, 32, 4, 8192);
    draft.heads_k = 8;
    db_workload_set_mask(&draft, 1, 1, -1, 0);
    assert_int_equal(draft.bottom_right, 1);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &draft, &win, err, sizeof err), 1);
    assert_int_equal(win.workload.seqlen_q, 1);
    assert_int_equal(win.workload.causal, 0);
    /* not a top-left diagonal, a window, nor a query past the decode rows */
    db_workload other = draft;
    db_workload_set_mask(&other, 1, 0, -1, 0);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &other, &win, err, sizeof err), 0);
    other = draft;
    db_workload_set_mask(&other, 0, 1, 256, 0);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &other, &win, err, sizeof err), 0);
    other = workload_of(DB_OP_FWD, 2, 128, 0, 8, 32, 64, 8192);
    other.heads_k = 8;
    db_workload_set_mask(&other, 1, 1, -1, 0);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &other, &win, err, sizeof err), 0);
    /* a draft winner of the draft's own mask comes first (kind gap 0 against 0.5), and a
     * top-left diagonal's (1) never before the unmasked one */
    db_workload top = workload_of(DB_OP_FWD, 2, 128, 0, 8, 32, 4, 8192);
    top.heads_k = 8;
    db_workload_set_mask(&top, 1, 0, -1, 0);
    put_timed(d, sweep, dev, &top, 129);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &draft, &win, err, sizeof err), 1);
    assert_int_equal(win.workload.seqlen_q, 1);
    db_workload spec = workload_of(DB_OP_FWD, 2, 128, 0, 8, 32, 16, 8192);
    spec.heads_k = 8;
    db_workload_set_mask(&spec, 1, 1, -1, 0);
    put_timed(d, sweep, dev, &spec, 130);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &draft, &win, err, sizeof err), 1);
    assert_int_equal(win.workload.seqlen_q, 16);
    assert_int_equal(win.workload.bottom_right, 1);
    /* and the other way only from those: a decode shape without a mask never takes a window's
     * winner or a top-left diagonal's (f16: no other winner of its kind here) */
    db_workload windowed = workload_of(DB_OP_FWD, 1, 128, 0, 8, 32, 4, 8192), top_left = windowed;
    db_workload_set_mask(&windowed, 0, 1, 256, 0);
    db_workload_set_mask(&top_left, 1, 0, -1, 0);
    put_timed(d, sweep, dev, &windowed, 131);
    put_timed(d, sweep, dev, &top_left, 132);
    db_workload open = workload_of(DB_OP_FWD, 1, 128, 0, 8, 32, 4, 8192);
    assert_int_equal(db_winner_find(d, "GPU A", "sm_90", &open, &win, err, sizeof err), 0);
    db_close(d);
}

/* ---- export / import ------------------------------------------------------------------- */

/* A database with winners on two GPUs, one with an awkward name, fwd and bwd, a missing tflops. */
static void fill_for_export(db *d)
{
    int64_t sweep = begin_sweep(d);
    db_device gpus[] = { device_of("NVIDIA H100 80GB HBM3", "sm_90", "13.0"),
                         device_of("Lab \"GPU\" \\ 2", "sm_80", "12.8") };
    for (int g = 0; g < 2; g++) {
        int64_t dev = upsert_device(d, &gpus[g]);
        for (int op = 0; op < 2; op++)
            for (int seq = 512; seq <= 2048; seq *= 2) {
                db_workload w = workload_of(op, op ? 2 : 1, 64 * (op + 1), seq == 1024, 2, 8, seq, seq / 2);
                int64_t wl = upsert_workload(d, &w);
                for (int i = 0; i < 3; i++) {
                    db_kernel k = kernel_of(&w, (unsigned)(1000 * g + 100 * op + seq + i), 32 * (i + 1));
                    k.p[GEN_DQ_MODE] = op ? (i + 1) % 2 : 0;
                    db_result r = result_of(sweep, dev, wl, upsert_kernel(d, &k),
                                            i == 2 ? DB_STATUS_INVALID : DB_STATUS_OK, 0.1 * (i + 1) + seq * 1e-4);
                    if (g == 1)
                        r.tflops = NAN;
                    r.median_ms += 1.0 / 3.0;   /* more digits than the text keeps */
                    put(d, &r);
                }
            }
    }
}

static void export_import_round_trip(void **state)
{
    fixture *f = *state;
    char err[512] = "", copy[160], file[160];
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    fill_for_export(d);
    char *first = fixture_export(d);
    int winners = (int)query_int(d, "SELECT count(*) FROM winners");
    assert_int_equal(winners, 12);
    assert_non_null(strstr(first, "flashtune winners format 1\n"));
    assert_non_null(strstr(first, "device=\"Lab \\\"GPU\\\" \\\\ 2\" arch=sm_80"));
    assert_non_null(strstr(first, "DQ_MODE=separate"));

    /* Into a fresh database through a file: every winner added, the text the same. */
    snprintf(file, sizeof file, "%s/winners.txt", f->dir);
    FILE *out = fopen(file, "w");
    assert_non_null(out);
    fputs(first, out);
    fclose(out);
    snprintf(copy, sizeof copy, "%s/copy.db", f->dir);
    db *c = open_ok(copy, DB_OPEN_CREATE);
    db_import_counts n = { -1, -1, -1 };
    assert_int_equal(db_import_file(c, file, NULL, &n, err, sizeof err), 0);
    assert_int_equal(n.added, winners);
    assert_int_equal(n.kept, 0);
    assert_int_equal(n.replaced, 0);
    char *second = fixture_export(c);
    assert_string_equal(second, first);
    char space[256];
    query_text(c, "SELECT space_file FROM sweeps", space, sizeof space);
    assert_true(!strncmp(space, "import:", 7) && strstr(space, "winners.txt"));


    /* Importing again changes nothing, not even a sweep row. */
    long long sweeps = query_int(c, "SELECT count(*) FROM sweeps"), rows = query_int(c, "SELECT count(*) FROM results");
    assert_int_equal(db_import_text(c, "again.txt", second, NULL, &n, err, sizeof err), 0);
    assert_int_equal(n.added, 0);
    assert_int_equal(n.kept, winners);
    assert_int_equal(n.replaced, 0);
    assert_int_equal(query_int(c, "SELECT count(*) FROM sweeps"), sweeps);
    assert_int_equal(query_int(c, "SELECT count(*) FROM results"), rows);
    char *third = fixture_export(c);
    assert_string_equal(third, first);

    /* An imported winner is not a sweep's timing on this GPU: a sweep re-times it (resume does not
     * count it), and its own timing then counts. */
    char guard_path[160];
    snprintf(guard_path, sizeof guard_path, "%s/guard.db", f->dir);
    db *g = open_ok(guard_path, DB_OPEN_CREATE);
    assert_int_equal(db_import_text(g, "guard.txt", first, NULL, &n, err, sizeof err), 0);
    const int64_t dev = query_int(g, "SELECT device_id FROM results ORDER BY id LIMIT 1");
    const int64_t wl = query_int(g, "SELECT workload_id FROM results ORDER BY id LIMIT 1");
    const int64_t kern = query_int(g, "SELECT kernel_id FROM results ORDER BY id LIMIT 1");
    db_status st = DB_STATUS_COUNT;
    assert_int_equal(db_result_get(g, dev, wl, kern, &st, err, sizeof err), 0);
    int64_t sweep = 0;
    assert_int_equal(db_sweep_begin(g, "space.lua", "0123456789abcdef", "host", &sweep, err, sizeof err), 0);
    db_result again = result_of(sweep, dev, wl, kern, DB_STATUS_OK, 2.5);
    put(g, &again);
    assert_int_equal(db_result_get(g, dev, wl, kern, &st, err, sizeof err), 1);
    assert_int_equal(st, DB_STATUS_OK);
    db_close(g);

    /* Into the database it came from: all there already. */
    assert_int_equal(db_import_text(d, "self.txt", first, NULL, &n, err, sizeof err), 0);
    assert_int_equal(n.added, 0);
    free(first);
    free(second);
    free(third);
    db_close(c);
    db_close(d);
}

/* One winner, for the exact text and for the malformed-line cases. */
static const char golden_line[] =
    "device=\"GPU A\" arch=sm_90 cc=9.0 sm_count=132 driver=13.0 nvrtc=13.0 op=fwd dtype=f16 head_dim=128 "
    "head_dim_v=128 causal=0 batch=2 heads=8 seqlen_q=1024 seqlen_k=1024 family=fwd_mma "
    "source_hash=00000000000000aa DTYPE=f16 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=4 "
    "NUM_STAGES=2 CAUSAL=0 CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic OVERLAP=0 PINGPONG=0 PERSISTENT=0 "
    "SOFTCAP=0 DATA_DIM=0 DATA_DIM_V=0 VARLEN=0 SPLITS=1 PACK_GQA=0 DQ_FIRST=0 DK_SS=0 DV_EARLY=0 L_EARLY=0 "
    "DQ_INIT=zero SINKS=0 ALLOW_TF32=0 SPLIT_SMEM=0 PRODUCER_REGS=0 STAGGER=0 MULTICAST=0 SPLIT_QUERIES=0 DQ_BULK=0 P_SMEM=0 BF16_PARTS=0 "
    "median_ms=0.5 tflops=123.457";

static void export_text_is_stable(void **state)
{
    fixture *f = *state;
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 2, 8, 1024, 1024);
    db_kernel k = kernel_of(&w, 0, 64);
    snprintf(k.source_hash, sizeof k.source_hash, "00000000000000aa");
    db_result r = result_of(begin_sweep(d), upsert_device(d, &dev), upsert_workload(d, &w), upsert_kernel(d, &k),
                            DB_STATUS_OK, 0.5);
    r.tflops = 123.456789;
    put(d, &r);
    char *text = fixture_export(d);
    char expected[2048];
    snprintf(expected, sizeof expected,
             "flashtune winners format 1\n"
             "# One line per (device, workload): its declared winner, a valid kernel (the fastest, or one within "
             "the\n# timing noise of it). Written by 'flashtune db export', read by 'flashtune db import'. Fields\n"
             "# are NAME=VALUE; text with spaces is double-quoted.\n%s\n",
             golden_line);
    assert_string_equal(text, expected);
    free(text);
    db_close(d);
}

/* The shipped winners (db/tuned/) import unchanged: every line a workload of its own kind (the
 * varlen and window ones of tuner/spaces/kinds.lua among them), and the export prints each line
 * back byte for byte (in the export's order: the file keeps the decode and kinds winners apart, at
 * its end). */
static void shipped_winners_import_unchanged(void **state)
{
    fixture *f = *state;
    char path[512], err[512] = "";
    test_source_path(path, sizeof path, "db/tuned/h100-sm90.txt");
    size_t size;
    char *text = slurp(path, &size);
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_import_counts n;
    if (db_import_text(d, path, text, NULL, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads"), n.added);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE varlen = 3 AND window = 0"), 4);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE window = 1 AND window_left = 1024 AND "
                                  "window_right = 0 AND causal = 1 AND varlen = 0"), 2);
    char *back = fixture_export(d);
    assert_int_equal(strlen(back), size);
    int lines = 0;
    for (char *line = text, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        assert_non_null(end);
        *end = '\0';
        if (line[0] == 'd') {
            lines++;
            char *at = strstr(back, line);
            if (!at || at[strlen(line)] != '\n')
                fail_msg("%s:%d is not exported as it is: %.200s", path, lines + 3, line);
        }
    }
    assert_true(lines > 100);
    assert_int_equal(lines, n.added);
    free(back);
    free(text);
    db_close(d);
}

/* golden_line with the first `find` replaced by `repl`, into buf. */
static const char *line_with(const char *find, const char *repl, char *buf, size_t len)
{
    const char *at = find ? strstr(golden_line, find) : NULL;
    if (!at) {
        snprintf(buf, len, "%s", golden_line);
        return buf;
    }
    snprintf(buf, len, "%.*s%s%s", (int)(at - golden_line), golden_line, repl, at + strlen(find));
    return buf;
}

static void malformed_import_is_rejected(void **state)
{
    fixture *f = *state;
    static const char H[] = "flashtune winners format 1\n";
    static const struct {
        const char *name;
        const char *before;         /* text before the line */
        const char *find, *repl;    /* the change to the golden line (NULL: none) */
        const char *after;          /* text after it */
        const char *expected;
    } cases[] = {
        { "no header", "", NULL, NULL, "\n", "x.txt:1: expected 'flashtune winners format 1' before any winner" },
        { "a newer format", "flashtune winners format 2\n", NULL, NULL, "\n", "x.txt:1: format 2 is not one this" },
        { "an empty file", "", "", "", "", "x.txt: no 'flashtune winners format 1' line" },
        { "a missing field", H, " seqlen_k=1024", "", "\n", "x.txt:2: missing field 'seqlen_k'" },
        { "an unknown field", H, "tflops", "color=red tflops", "\n", "x.txt:2: unknown field 'color'" },
        { "a word without =", H, "tflops", "stray tflops", "\n", "x.txt:2: 'stray' is not NAME=VALUE" },
        { "a bad integer", H, "batch=2", "batch=two", "\n", "x.txt:2: field 'batch': 'two' is not an integer" },
        { "a zero batch", H, "batch=2", "batch=0", "\n", "x.txt:2: field 'batch': 0 is not in 1.." },
        { "an unclosed quote", H, "\"GPU A\"", "\"GPU A", "\n",
          "x.txt:2: field 'device': the quoted value is not closed" },
        { "a bad escape", H, "\"GPU A\"", "\"GPU\\n A\"", "\n", "x.txt:2: field 'device': unknown escape" },
        { "a repeated field", H, "tflops", "op=bwd tflops", "\n", "x.txt:2: field 'op' appears twice" },
        { "an unknown dtype", H, "DTYPE=f16", "DTYPE=f8", "\n", "x.txt:2: field 'DTYPE': 'f8' is not a value of it" },
        { "a bad op", H, "op=fwd", "op=sideways", "\n", "x.txt:2: field 'op': 'sideways' is not fwd or bwd" },
        { "a bad compute capability", H, "cc=9.0", "cc=9", "\n", "x.txt:2: field 'cc': '9' is not MAJOR.MINOR" },
        { "a bad hash", H, "00000000000000aa", "zz", "\n", "x.txt:2: kernel source_hash 'zz' is not 16" },
        { "a zero time", H, "median_ms=0.5", "median_ms=0", "\n", "x.txt:2: field 'median_ms': 0 is not positive" },
        { "a negative time", H, "median_ms=0.5", "median_ms=-1", "\n", "x.txt:2: field 'median_ms': '-1' is not" },
        { "a kernel of another head dim", H, "HEAD_DIM=128", "HEAD_DIM=64", "\n",
          "x.txt:2: the kernel's DTYPE, HEAD_DIM, HEAD_DIM_V, SOFTCAP, SINKS and ALLOW_TF32 must be the workload's" },
        { "a softcapped kernel for a plain workload", H, "SOFTCAP=0", "SOFTCAP=1", "\n",
          "x.txt:2: the kernel's DTYPE, HEAD_DIM, HEAD_DIM_V, SOFTCAP, SINKS and ALLOW_TF32 must be the workload's" },
        { "a plain kernel for a softcapped workload", H, "seqlen_k=1024", "seqlen_k=1024 softcap=1", "\n",
          "x.txt:2: the kernel's DTYPE, HEAD_DIM, HEAD_DIM_V, SOFTCAP, SINKS and ALLOW_TF32 must be the workload's" },
        { "a kernel with sinks for a workload without", H, "SINKS=0", "SINKS=1", "\n",
          "x.txt:2: the kernel's DTYPE, HEAD_DIM, HEAD_DIM_V, SOFTCAP, SINKS and ALLOW_TF32 must be the workload's" },
        { "a tf32 workload of a 16-bit kernel", H, "seqlen_k=1024", "seqlen_k=1024 tf32=1", "\n",
          "x.txt:2: workload tf32=1 with dtype f16: only f32 has products to round to TF32" },
        { "a causal kernel for an unmasked workload", H, "CAUSAL=0", "CAUSAL=1", "\n",
          "x.txt:2: the kernel's CAUSAL=1 is not the workload's mask: causal=0 window=0 runs CAUSAL=0 kernels" },
        { "an unmasked kernel for a windowed workload", H, "seqlen_k=1024",
          "seqlen_k=1024 window=1 window_left=64 window_right=64", "\n",
          "x.txt:2: the kernel's CAUSAL=0 is not the workload's mask: causal=0 window=1 runs CAUSAL=1 kernels" },
        { "a dense kernel for a variable-length workload", H, "seqlen_k=1024", "seqlen_k=1024 varlen=4", "\n",
          "x.txt:2: the kernel's VARLEN=0 is not the workload's batch: varlen=4 runs VARLEN=1 kernels" },
        { "a variable-length kernel for a dense workload", H, "VARLEN=0", "VARLEN=1", "\n",
          "x.txt:2: the kernel's VARLEN=1 is not the workload's batch: varlen=0 runs VARLEN=0 kernels" },
        { "a window limiting nothing", H, "seqlen_k=1024", "seqlen_k=1024 window=1 window_left=-1 window_right=-1",
          "\n", "x.txt:2: workload window=1 with window_left=-1 window_right=-1 limits nothing" },
        { "a window ending at the diagonal is causal", H, "seqlen_k=1024",
          "seqlen_k=1024 window=1 window_left=-1 window_right=0", "\n",
          "x.txt:2: workload mask causal=0 window=1 window_left=-1 window_right=0 bottom_right=0 is not its stored "
          "form causal=1 window=0 window_left=0 window_right=0 bottom_right=0" },
        { "a side without a window", H, "seqlen_k=1024", "seqlen_k=1024 window_right=8", "\n",
          "x.txt:2: workload window=0 with window_left=0 window_right=8" },
        { "a side below -1", H, "seqlen_k=1024", "seqlen_k=1024 window=1 window_left=-2 window_right=4", "\n",
          "x.txt:2: field 'window_left': -2 is not in -1.." },
        { "bottom_right without a mask", H, "seqlen_k=1024", "seqlen_k=1024 bottom_right=1", "\n",
          "x.txt:2: workload bottom_right=1 without a mask" },
        { "bottom_right where the lengths are equal", H, "causal=0 batch=2", "causal=1 bottom_right=1 batch=2", "\n",
          "x.txt:2: workload mask causal=1 window=0 window_left=0 window_right=0 bottom_right=1 is not its stored "
          "form causal=1 window=0 window_left=0 window_right=0 bottom_right=0" },
        { "a bucket of 9", H, "seqlen_k=1024", "seqlen_k=1024 varlen=9", "\n", "field 'varlen': 9 is not in 0..8" },
        { "a padded kernel", H, "DATA_DIM=0", "DATA_DIM=40", "\n", "x.txt:2: the kernel pads its head dims" },
        { "heads_k not dividing heads", H, "seqlen_k=1024", "seqlen_k=1024 heads_k=3", "\n",
          "x.txt:2: workload heads_k=3 must be 0 (no grouping) or fewer than heads=8 and divide it" },
        { "heads_k equal to heads", H, "seqlen_k=1024", "seqlen_k=1024 heads_k=8", "\n", "workload heads_k=8" },
        { "a softcap of 2", H, "seqlen_k=1024", "seqlen_k=1024 softcap=2", "\n", "field 'softcap': 2 is not in 0..1" },
        { "comments and blanks still count lines", "# a comment\n\nflashtune winners format 1\n", "batch=2",
          "batch=x", "\n", "x.txt:4: field 'batch'" },
        { "a good line, then a duplicate", H, NULL, NULL, "\n" /* + golden again, below */,
          "x.txt:3: the same device and workload as line 2" },
        { "a good line, then a bad one: nothing written", H, NULL, NULL, "\nbroken\n", "x.txt:3: 'broken' is not" },
    };
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        char line[2048], text[8192], err[512] = "";
        if (cases[i].find && !*cases[i].find)
            line[0] = '\0';
        else
            line_with(cases[i].find, cases[i].repl, line, sizeof line);
        snprintf(text, sizeof text, "%s%s%s%s", cases[i].before, line, cases[i].after,
                 strstr(cases[i].name, "duplicate") ? golden_line : "");
        db_import_counts n = { -1, -1, -1 };
        int rc = db_import_text(d, "x.txt", text, NULL, &n, err, sizeof err);
        if (rc != -1 || !strstr(err, cases[i].expected))
            print_error("case '%s': rc %d, expected '%s', got '%s'\n", cases[i].name, rc, cases[i].expected, err);
        assert_int_equal(rc, -1);
        assert_non_null(strstr(err, cases[i].expected));
        assert_int_equal(n.added, 0);
        assert_int_equal(query_int(d, "SELECT (SELECT count(*) FROM results) + (SELECT count(*) FROM devices) + "
                                      "(SELECT count(*) FROM sweeps)"), 0);
    }
    /* A kernel hash stored with other parameters: reported with its line, all rolled back. */
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 2, 8, 1024, 1024);
    db_kernel k = kernel_of(&w, 0, 32);
    snprintf(k.source_hash, sizeof k.source_hash, "00000000000000aa");
    upsert_kernel(d, &k);
    char text[8192], other[2048], err[512] = "";
    line_with("batch=2", "batch=3", other, sizeof other);
    char *swapped = strstr(other, "00000000000000aa");
    memcpy(swapped, "00000000000000bb", 16);
    snprintf(text, sizeof text, "%s%s\n%s\n", H, other, golden_line);
    assert_int_equal(db_import_text(d, "x.txt", text, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "x.txt:3: source_hash 00000000000000aa is stored as kernel"));
    assert_int_equal(query_int(d, "SELECT (SELECT count(*) FROM results) + (SELECT count(*) FROM devices) + "
                                  "(SELECT count(*) FROM sweeps)"), 0);
    assert_int_equal(db_import_file(d, "/nonexistent/winners.txt", NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot read winners file /nonexistent/winners.txt"));
    /* A winner with sinks, as db export writes it (its workload's sinks=1, its kernel's SINKS=1),
     * imports (refused as an unknown field before). */
    char sinks[2048];
    line_with("SINKS=0", "SINKS=1", other, sizeof other);
    char *cut = strstr(other, " family=");
    snprintf(sinks, sizeof sinks, "%.*s sinks=1%s", (int)(cut - other), other, cut);
    memcpy(strstr(sinks, "00000000000000aa"), "00000000000000cc", 16);   /* not the kernel stored above */
    snprintf(text, sizeof text, "%s%s\n", H, sinks);
    db_import_counts n = { -1, -1, -1 };
    if (db_import_text(d, "x.txt", text, NULL, &n, err, sizeof err) != 0)
        fail_msg("a winner with sinks: %s", err);
    assert_int_equal(n.added, 1);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE extra = 'sinks=1'"), 1);
    db_close(d);
}

/* ---- the CLI's tables -------------------------------------------------------------------- */

/* Kernel ids in the order the rows of a results table list them. */
static int row_order(const char *text, int64_t *ids, int max)
{
    int n = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line;
        while (*p == ' ')
            p++;
        if (*p == '*')
            p++;
        while (*p == ' ')
            p++;
        if (isdigit((unsigned char)*p) && n < max)
            ids[n++] = strtoll(p, NULL, 10);
    }
    return n;
}

/* A result keeps the GPU's clocks while it was timed (sm_clock_mhz, clock_events), NULL where
 * none were sampled; the results table prints them, the reasons by name; the clock without the reasons keeps the reasons NULL. */
static void results_keep_clocks(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    int64_t sweep = begin_sweep(d), id_d = upsert_device(d, &dev), id_w = upsert_workload(d, &w), k[3];
    for (int i = 0; i < 3; i++) {
        db_kernel kk = kernel_of(&w, 300 + (unsigned)i, 64 << i);
        k[i] = upsert_kernel(d, &kk);
        db_result r = result_of(sweep, id_d, id_w, k[i], DB_STATUS_OK, 1.0 + i);
        if (i == 0)
            r.sm_mhz = 1755, r.clock_events = 0x24;   /* power cap and thermal slowdown */
        if (i == 1)
            r.sm_mhz = 1980, r.clock_events = 0;
        put(d, &r);   /* the third: not sampled (a zeroed struct's clocks) */
    }
    char sql[256], text[64];
    snprintf(sql, sizeof sql, "SELECT sm_clock_mhz FROM results WHERE kernel_id = %lld", (long long)k[0]);
    assert_int_equal(query_int(d, sql), 1755);
    snprintf(sql, sizeof sql, "SELECT clock_events FROM results WHERE kernel_id = %lld", (long long)k[0]);
    assert_int_equal(query_int(d, sql), 0x24);
    snprintf(sql, sizeof sql, "SELECT clock_events FROM results WHERE kernel_id = %lld", (long long)k[1]);
    assert_int_equal(query_int(d, sql), 0);
    snprintf(sql, sizeof sql, "SELECT typeof(sm_clock_mhz) || typeof(clock_events) FROM results WHERE kernel_id = %lld",
             (long long)k[2]);
    query_text(d, sql, text, sizeof text);
    assert_string_equal(text, "nullnull");
    /* Timed again without clocks (a machine without NVML): the old ones do not linger. */
    db_result again = result_of(sweep, id_d, id_w, k[0], DB_STATUS_OK, 1.0);
    again.sm_mhz = NAN, again.clock_events = 0x24;
    put(d, &again);
    snprintf(sql, sizeof sql, "SELECT typeof(sm_clock_mhz) || typeof(clock_events) FROM results WHERE kernel_id = %lld",
             (long long)k[0]);
    query_text(d, sql, text, sizeof text);
    assert_string_equal(text, "nullnull");
    again.sm_mhz = 1755, again.clock_events = -1;   /* the clock without the reasons */
    put(d, &again);
    snprintf(sql, sizeof sql, "SELECT typeof(sm_clock_mhz) || typeof(clock_events) FROM results WHERE kernel_id = %lld",
             (long long)k[0]);
    query_text(d, sql, text, sizeof text);
    assert_string_equal(text, "realnull");
    again.clock_events = 0x24;
    put(d, &again);
    for (int csv = 0; csv < 2; csv++) {
        char *out_text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&out_text, &size);
        assert_int_equal(tune_print_results_as(d, &w, NULL, csv ? TUNE_FORMAT_CSV : TUNE_FORMAT_TEXT, out, err,
                                               sizeof err), 0);
        fclose(out);
        assert_non_null(strstr(out_text, csv ? "sm_mhz,clock_events" : "MHz"));
        assert_non_null(strstr(out_text, csv ? "1755,\"sw_power_cap,sw_thermal\"" : "sw_power_cap,sw_thermal"));
        assert_non_null(strstr(out_text, csv ? "1980,none" : "none"));
        free(out_text);
    }
    char *sorted = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&sorted, &size);
    assert_int_equal(tune_print_results(d, &w, "-sm_mhz", out, err, sizeof err), 0);
    fclose(out);
    int64_t ids[4];
    assert_int_equal(row_order(sorted, ids, 4), 3);
    assert_true(ids[0] == k[1] && ids[1] == k[0] && ids[2] == k[2]);   /* the fastest clock first, none last */
    free(sorted);
    /* The sweep's summary: three valid timings, two sampled, one held back by power and heat. A
     * failed result and another sweep's do not count. */
    db_kernel failed = kernel_of(&w, 400, 16);
    db_result crash = result_of(sweep, id_d, id_w, upsert_kernel(d, &failed), DB_STATUS_CRASHED, NAN);
    crash.sm_mhz = 900, crash.clock_events = 0x8;
    put(d, &crash);
    db_clock_summary c;
    assert_int_equal(db_sweep_clocks(d, sweep, id_d, &c, err, sizeof err), 0);
    assert_int_equal(c.timed, 3);
    assert_int_equal(c.sampled, 2);
    assert_int_equal(c.held, 1);
    assert_true(c.least_mhz == 1755 && c.most_mhz == 1980);
    assert_int_equal(c.events, 0x24);
    assert_int_equal(db_sweep_clocks(d, sweep + 1, id_d, &c, err, sizeof err), 0);
    assert_true(c.timed == 0 && c.sampled == 0 && isnan(c.least_mhz));
    db_close(d);
}

static void results_table_sorts(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    int64_t sweep = begin_sweep(d), id_d = upsert_device(d, &dev), id_w = upsert_workload(d, &w);
    const struct { int block_m; db_status s; double ms; } rows[] = {
        { 64, DB_STATUS_OK, 2.0 }, { 32, DB_STATUS_INVALID, 0.5 }, { 128, DB_STATUS_OK, 1.5 },
        { 16, DB_STATUS_CRASHED, NAN },
    };
    int64_t k[4];
    for (int i = 0; i < 4; i++) {
        db_kernel kk = kernel_of(&w, 200 + (unsigned)i, rows[i].block_m);
        k[i] = upsert_kernel(d, &kk);
        db_result r = result_of(sweep, id_d, id_w, k[i], rows[i].s, rows[i].ms);
        if (rows[i].s != DB_STATUS_OK)
            r.tflops = NAN, r.message = "illegal memory access\nat line 3";
        put(d, &r);
    }
    static const struct { const char *sort; int order[4]; } cases[] = {
        { NULL, { 1, 2, 0, 3 } },
        { "median_ms", { 1, 2, 0, 3 } },
        { "-median_ms", { 0, 2, 1, 3 } },
        { "tflops", { 2, 0, 1, 3 } },
        { "BLOCK_M", { 3, 1, 0, 2 } },
        { "-BLOCK_M", { 2, 0, 1, 3 } },
        { "status", { 3, 1, 0, 2 } },
        { "kernel", { 0, 1, 2, 3 } },
        { "registers", { 0, 1, 2, 3 } },   /* no binaries: all missing, by kernel id */
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        int printed = tune_print_results(d, &w, cases[i].sort, out, err, sizeof err);
        if (printed != 0)
            print_error("sort %s: %s\n", cases[i].sort ? cases[i].sort : "NULL", err);
        assert_int_equal(printed, 0);
        fclose(out);
        int64_t ids[8];
        assert_int_equal(row_order(text, ids, 8), 4);
        for (int j = 0; j < 4; j++) {
            if (ids[j] != k[cases[i].order[j]])
                print_error("sort %s, row %d: expected kernel %lld, got %lld\n%s", cases[i].sort ? cases[i].sort : "NULL",
                            j, (long long)k[cases[i].order[j]], (long long)ids[j], text);
            assert_int_equal(ids[j], k[cases[i].order[j]]);
        }
        /* The winner is marked, the header names the device and counts, messages stay on one line. */
        char mark[32];
        snprintf(mark, sizeof mark, "*  %*lld", 6, (long long)k[2]);
        assert_non_null(strstr(text, mark));
        assert_non_null(strstr(text, "GPU A (sm_90, cc 9.0, 132 SMs, driver 13.0, NVRTC 13.0): 4 results, 2 ok"));
        assert_non_null(strstr(text, "illegal memory access at line 3"));
        assert_null(strstr(text, " \n"));   /* no trailing blanks */
        free(text);
    }
    FILE *sink = fopen("/dev/null", "w");
    assert_int_equal(tune_print_results(d, &w, "speed", sink, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown sort column 'speed' (median_ms, min_ms"));
    db_workload missing = w;
    missing.batch = 5;
    assert_int_equal(tune_print_results(d, &missing, NULL, sink, err, sizeof err), -1);
    assert_non_null(strstr(err, "workload op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=0 batch=5"));
    fclose(sink);

    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_int_equal(tune_print_best(d, out, err, sizeof err), 0);
    assert_int_equal(tune_print_workloads(d, out, err, sizeof err), 0);
    fclose(out);
    assert_non_null(strstr(text, "device"));
    assert_non_null(strstr(text, "median_ms"));
    assert_non_null(strstr(text, "1.5000"));
    assert_non_null(strstr(text, "2/4"));
    assert_non_null(strstr(text, "best_ms"));
    assert_null(strstr(text, " \n"));
    free(text);
    db_close(d);
}

/* ---- parameters as rows: migration 2, unknown names, every row of the table ---------------- */

/* Everything the CLI and the export show for the workloads ws, as one text. */
static char *print_all(db *d, const db_workload *ws, int nw)
{
    char *text = NULL, err[512] = "";
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_int_equal(db_export(d, out, err, sizeof err), 0);
    assert_int_equal(tune_print_best(d, out, err, sizeof err), 0);
    assert_int_equal(tune_print_workloads(d, out, err, sizeof err), 0);
    static const char *const sorts[] = { NULL, "-BLOCK_M", "DQ_MODE", "registers", "status" };
    for (int i = 0; i < nw; i++)
        for (int k = 0; k < ARRAY_LEN(sorts); k++)
            if (tune_print_results(d, &ws[i], sorts[k], out, err, sizeof err) != 0)
                fail_msg("results, sort %s: %s", sorts[k] ? sorts[k] : "NULL", err);
    fclose(out);
    return text;
}

/* A version-1 file (the old twelve kernel columns) filled by SQL, migrated on open, must hold
 * every value and answer every query exactly as a file written through this build's API with
 * the same rows. */
static void migration_2_keeps_every_value(void **state)
{
    fixture *f = *state;
    char err[512] = "", v1_path[160], ref_path[160];
    snprintf(v1_path, sizeof v1_path, "%s/v1.db", f->dir);
    snprintf(ref_path, sizeof ref_path, "%s/ref.db", f->dir);
    const db_device dev = device_of("GPU A", "sm_90", "13.0");
    const db_workload ws[2] = { workload_of(DB_OP_FWD, 1, 64, 0, 2, 4, 512, 512),
                                workload_of(DB_OP_BWD, 2, 128, 1, 1, 8, 1024, 1000) };
    db_kernel ks[6];
    for (int i = 0; i < 6; i++) {
        ks[i] = kernel_of(&ws[i / 3], 300 + (unsigned)i, 16 << (i % 3));
        ks[i].p[GEN_EVEN_N] = i % 2;
        ks[i].p[GEN_NUM_STAGES] = 1 + i % 3;
        if (ws[i / 3].op == DB_OP_BWD)
            ks[i].p[GEN_DQ_MODE] = i % 2;
    }
    static const unsigned char cubin[] = { 0x7f, 'E', 'L', 'F', 2, 1 };
    const db_binary bin = { "00112233445566aa", "sm_90", "13.0", (void *)cubin, sizeof cubin, 168, 4, 8, 16, 1024, 2.5,
                            NULL, NULL };
    const struct { int kernel; db_status s; double ms; } rs[] = {
        { 0, DB_STATUS_OK, 2.0 }, { 1, DB_STATUS_OK, 1.0 }, { 2, DB_STATUS_CRASHED, NAN },
        { 3, DB_STATUS_INVALID, 0.5 }, { 4, DB_STATUS_OK, 3.0 }, { 5, DB_STATUS_OK, 3.5 },
    };

    /* The reference: this build's API. */
    db *ref = open_ok(ref_path, DB_OPEN_CREATE);
    int64_t sweep = begin_sweep(ref), id_d = upsert_device(ref, &dev), id_w[2], id_k[6], id_b;
    for (int i = 0; i < 2; i++)
        id_w[i] = upsert_workload(ref, &ws[i]);
    for (int i = 0; i < 6; i++)
        id_k[i] = upsert_kernel(ref, &ks[i]);
    assert_int_equal(db_binary_put(ref, id_k[1], &bin, &id_b, err, sizeof err), 0);
    for (int i = 0; i < ARRAY_LEN(rs); i++) {
        db_result r = result_of(sweep, id_d, id_w[rs[i].kernel / 3], id_k[rs[i].kernel], rs[i].s, rs[i].ms);
        r.binary_id = rs[i].kernel == 1 ? id_b : 0;
        if (rs[i].s != DB_STATUS_OK)
            r.message = "failed\nhere";
        put(ref, &r);
    }

    /* The same rows in a version-1 file, by SQL in the old layout (ids as above). */
    int count;
    const db_migration *list = db_migrations(&count);
    assert_true(count >= 2 && list[0].version == 1);
    db *old = NULL;
    assert_int_equal(db_open_with(v1_path, DB_OPEN_CREATE, list, 1, &old, err, sizeof err), 0);
    assert_int_equal(query_int(old, "PRAGMA user_version"), 1);
    sqlite3 *sql = db_sqlite(old);
    char *q = sqlite3_mprintf(
        "INSERT INTO sweeps (space_file, space_hash, host) VALUES ('test.lua', '00', 'host');"
        "INSERT INTO devices (name, arch, cc_major, cc_minor, sm_count, driver_version, nvrtc_version) "
        "VALUES (%Q, %Q, %d, %d, %d, %Q, %Q);", dev.name, dev.arch, dev.cc_major, dev.cc_minor, dev.sm_count,
        dev.driver_version, dev.nvrtc_version);
    assert_int_equal(sqlite3_exec(sql, q, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(q);
    for (int i = 0; i < 2; i++) {
        const db_workload *w = &ws[i];
        q = sqlite3_mprintf("INSERT INTO workloads (op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, "
                            "seqlen_k) VALUES (%Q, %Q, %d, %d, %d, %d, %d, %d, %d)", db_op_name(w->op),
                            db_dtype_name(w->dtype), w->head_dim, w->head_dim_v, w->causal, w->batch, w->heads,
                            w->seqlen_q, w->seqlen_k);
        assert_int_equal(sqlite3_exec(sql, q, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_free(q);
    }
    for (int i = 0; i < 6; i++) {
        const int *p = ks[i].p;
        q = sqlite3_mprintf("INSERT INTO kernels (family, source_hash, DTYPE, HEAD_DIM, HEAD_DIM_V, BLOCK_M, BLOCK_N, "
                            "NUM_WARPS, NUM_STAGES, CAUSAL, CAUSAL_SKIP, EVEN_M, EVEN_N, DQ_MODE) VALUES (%Q, %Q, "
                            "%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d)", ks[i].family, ks[i].source_hash,
                            p[GEN_DTYPE], p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V], p[GEN_BLOCK_M], p[GEN_BLOCK_N],
                            p[GEN_NUM_WARPS], p[GEN_NUM_STAGES], p[GEN_CAUSAL], p[GEN_CAUSAL_SKIP], p[GEN_EVEN_M],
                            p[GEN_EVEN_N], p[GEN_DQ_MODE]);
        assert_int_equal(sqlite3_exec(sql, q, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_free(q);
    }
    q = sqlite3_mprintf("INSERT INTO binaries (kernel_id, cache_key, arch, nvrtc_version, cubin, registers, "
                        "spill_store_bytes, spill_load_bytes, stack_frame_bytes, static_smem_bytes, compile_seconds) "
                        "VALUES (2, %Q, %Q, %Q, x'7f454c460201', %d, %d, %d, %d, %d, %.17g)", bin.cache_key, bin.arch,
                        bin.nvrtc_version, bin.registers, bin.spill_store_bytes, bin.spill_load_bytes,
                        bin.stack_frame_bytes, bin.static_smem_bytes, bin.compile_seconds);
    assert_int_equal(sqlite3_exec(sql, q, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(q);
    for (int i = 0; i < ARRAY_LEN(rs); i++) {
        const int ok = rs[i].s == DB_STATUS_OK || rs[i].s == DB_STATUS_INVALID;
        char ms[32] = "NULL", tflops[32] = "NULL";
        if (ok) {
            snprintf(ms, sizeof ms, "%.17g", rs[i].ms);
            snprintf(tflops, sizeof tflops, "%.17g", 100.0 / rs[i].ms);
        }
        q = sqlite3_mprintf("INSERT INTO results (sweep_id, device_id, workload_id, kernel_id, binary_id, status, "
                            "median_ms, min_ms, spread, tflops, message) VALUES (1, 1, %d, %d, %s, %Q, %s, %s, %s, %s, %Q)",
                            rs[i].kernel / 3 + 1, rs[i].kernel + 1, rs[i].kernel == 1 ? "1" : "NULL",
                            db_status_name(rs[i].s), ms, ms, "0.02", tflops,
                            rs[i].s == DB_STATUS_OK ? NULL : "failed\nhere");
        assert_int_equal(sqlite3_exec(sql, q, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_free(q);
    }
    db_close(old);

    /* Opening migrates: the columns are gone, each value is a row, and nothing was lost. */
    db *d = open_ok(v1_path, 0);
    assert_int_equal(query_int(d, "PRAGMA user_version"), db_schema_version());
    /* Through versions 4 and 5 the workloads stay plain and dense, with their ids. */
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads WHERE id IN (1, 2) AND heads_k = 0 AND softcap = 0 "
                                  "AND window = 0 AND window_left = 0 AND window_right = 0 AND bottom_right = 0 "
                                  "AND varlen = 0"), 2);
    assert_int_equal(query_int(d, "SELECT count(*) FROM pragma_table_info('kernels')"), 3);
    assert_int_equal(query_int(d, "SELECT count(*) FROM kernel_params"), 6 * 12);
    for (int i = 0; i < 6; i++) {
        db_kernel got, want;
        assert_int_equal(db_kernel_get(d, i + 1, &got, err, sizeof err), 1);
        assert_int_equal(db_kernel_get(ref, id_k[i], &want, err, sizeof err), 1);
        assert_memory_equal(&got, &ks[i], sizeof got);
        assert_memory_equal(&want, &ks[i], sizeof want);
    }
    db_binary b;
    assert_int_equal(db_binary_find(d, bin.cache_key, &b, NULL, err, sizeof err), 1);
    assert_int_equal(b.registers, 168);
    assert_int_equal(b.cubin_size, sizeof cubin);
    assert_memory_equal(b.cubin, cubin, sizeof cubin);
    db_binary_release(&b);
    db_winner a, c;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(db_winner_find(d, dev.name, dev.arch, &ws[i], &a, err, sizeof err), 1);
        assert_int_equal(db_winner_find(ref, dev.name, dev.arch, &ws[i], &c, err, sizeof err), 1);
        assert_int_equal(a.kernel_id, c.kernel_id);
        assert_memory_equal(&a.kernel, &c.kernel, sizeof a.kernel);
        assert_true(a.median_ms == c.median_ms);
    }
    char *got = print_all(d, ws, 2), *want = print_all(ref, ws, 2);
    if (strcmp(got, want)) {
        size_t at = 0;
        while (got[at] == want[at])
            at++;
        fail_msg("the migrated file answers differently at byte %zu:\n%.300s\n---- expected:\n%.300s", at,
                 got + (at > 100 ? at - 100 : 0), want + (at > 100 ? at - 100 : 0));
    }
    /* kernel 3's row (PERSISTENT, SPLITS, the product order and DQ_INIT: bwd_wgmma's; ALLOW_TF32;
     * SPLIT_SMEM; PRODUCER_REGS; STAGGER; SPLIT_QUERIES; DQ_BULK; BF16_PARTS) */
    assert_non_null(strstr(got, "  separate           0       1         0      0         0        0     zero           0           0              0        0              0        0           0  invalid"));
    free(got);
    free(want);

    /* The rebuilt triggers still tie a kernel to its workload. */
    db_result bad = result_of(1, 1, 1, 4, DB_STATUS_OK, 1.0);
    assert_int_equal(db_result_put(d, &bad, err, sizeof err), -1);
    assert_non_null(strstr(err, "differs from the workload"));
    db_close(d);
    db_close(ref);
}

/* A parameter this build does not know (a newer flashtune wrote it) is an error naming it; one
 * the row lacks (written before the parameter existed) reads as the table's default. */
static void unknown_parameter_names_are_refused(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 64, 0, 2, 4, 512, 512);
    db_kernel k = kernel_of(&w, 77, 64);
    k.p[GEN_CAUSAL_SKIP] = 0;
    int64_t sweep = begin_sweep(d), id_d = upsert_device(d, &dev), id_w = upsert_workload(d, &w);
    int64_t id_k = upsert_kernel(d, &k);
    db_result r = result_of(sweep, id_d, id_w, id_k, DB_STATUS_OK, 1.0);
    put(d, &r);

    /* Missing: the default. */
    assert_int_equal(sqlite3_exec(db_sqlite(d), "DELETE FROM kernel_params WHERE name = 'CAUSAL_SKIP'", NULL, NULL,
                                  NULL), SQLITE_OK);
    db_kernel got;
    assert_int_equal(db_kernel_get(d, id_k, &got, err, sizeof err), 1);
    assert_int_equal(got.p[GEN_CAUSAL_SKIP], gen_param_get(GEN_CAUSAL_SKIP)->def);
    assert_int_equal(got.p[GEN_BLOCK_M], 64);

    /* Unknown: every reader refuses, naming the kernel and the parameter. */
    char *q = sqlite3_mprintf("INSERT INTO kernel_params (kernel_id, name, value) VALUES (%lld, 'BLOCK_K', 32)",
                              (long long)id_k);
    assert_int_equal(sqlite3_exec(db_sqlite(d), q, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(q);
    char want[160];
    snprintf(want, sizeof want, "kernel %s (fwd_mma) has parameter 'BLOCK_K', unknown to this flashtune", k.source_hash);
    db_winner win;
    db_winner *list;
    int count;
    FILE *sink = fopen("/dev/null", "w");
    for (int i = 0; i < 5; i++) {
        int rc;
        err[0] = '\0';
        switch (i) {
        case 0: rc = db_kernel_get(d, id_k, &got, err, sizeof err); break;
        case 1: rc = db_winner_find(d, dev.name, dev.arch, &w, &win, err, sizeof err); break;
        case 2: rc = db_winners_list(d, &list, &count, err, sizeof err); break;
        case 3: rc = db_export(d, sink, err, sizeof err); break;
        default: rc = tune_print_results(d, &w, NULL, sink, err, sizeof err); break;
        }
        if (rc != -1 || !strstr(err, want))
            fail_msg("reader %d: rc %d, expected '%s', got '%s'", i, rc, want, err);
    }
    /* An upsert of the same hash refuses too, instead of taking the row as equal. */
    assert_int_equal(db_kernel_upsert(d, &k, &id_k, err, sizeof err), -1);
    assert_non_null(strstr(err, "'BLOCK_K'"));
    fclose(sink);
    db_close(d);
}

/* Each row of the parameter table is stored and read back through kernel_params and the text
 * export: a new parameter needs no schema or db/ change. */
static void every_parameter_row_is_stored(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_workload w = workload_of(DB_OP_BWD, 2, 64, 1, 2, 4, 512, 512);
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const gen_param_info *info = gen_param_get((gen_param)i);
        db_kernel k = kernel_of(&w, 500 + (unsigned)i, 64);
        const int problem = i == GEN_DTYPE || i == GEN_HEAD_DIM || i == GEN_HEAD_DIM_V || i == GEN_CAUSAL;
        if (!problem)   /* the largest value the table allows, unlike kernel_of's */
            k.p[i] = info->max;
        int64_t id;
        assert_int_equal(db_kernel_upsert(d, &k, &id, err, sizeof err), 0);
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT value FROM kernel_params WHERE kernel_id = %lld AND name = '%s'",
                 (long long)id, info->name);
        assert_int_equal(query_int(d, sql), k.p[i]);
        db_kernel got;
        assert_int_equal(db_kernel_get(d, id, &got, err, sizeof err), 1);
        assert_memory_equal(&got, &k, sizeof k);
    }
    /* The export names every parameter, and what it writes imports back to the same kernel. */
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    int64_t sweep = begin_sweep(d), id_d = upsert_device(d, &dev), id_w = upsert_workload(d, &w);
    db_kernel k = kernel_of(&w, 999, 32);
    k.p[GEN_DQ_MODE] = 1;
    int64_t id_k = upsert_kernel(d, &k);
    db_result r = result_of(sweep, id_d, id_w, id_k, DB_STATUS_OK, 1.0);
    put(d, &r);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_int_equal(db_export(d, out, err, sizeof err), 0);
    fclose(out);
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        char field[64], value[32];
        snprintf(field, sizeof field, " %s=%s ", gen_param_name((gen_param)i),
                 gen_param_format((gen_param)i, k.p[i], value, sizeof value));
        if (!strstr(text, field))
            fail_msg("export lacks '%s':\n%s", field, text);
    }
    db_close(d);
    char fresh[160];
    snprintf(fresh, sizeof fresh, "%s/fresh.db", f->dir);
    d = open_ok(fresh, DB_OPEN_CREATE);
    db_import_counts n;
    assert_int_equal(db_import_text(d, "x.txt", text, NULL, &n, err, sizeof err), 0);
    assert_int_equal(n.added, 1);
    db_winner win;
    assert_int_equal(db_winner_find(d, dev.name, dev.arch, &w, &win, err, sizeof err), 1);
    assert_memory_equal(&win.kernel, &k, sizeof k);
    free(text);
    db_close(d);
}

static void workload_text_parses(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        db_workload expected;
        const char *error;          /* NULL: parses */
    } cases[] = {
        { "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 seqlen_q=4096 seqlen_k=4096",
          { .op = DB_OP_FWD, .dtype = 1, .head_dim = 128, .head_dim_v = 128, .batch = 4, .heads = 16,
            .seqlen_q = 4096, .seqlen_k = 4096 }, NULL },
        { "op=bwd dtype=bf16 d=64 b=2 h=8 sq=100 sk=300 causal=1",
          { .op = DB_OP_BWD, .dtype = 2, .head_dim = 64, .head_dim_v = 64, .causal = 1, .batch = 2, .heads = 8,
            .seqlen_q = 100, .seqlen_k = 300 }, NULL },
        { "  sk=7 sq=5 h=1 b=1 dv=32 d=64 dtype=f32 op=fwd ",
          { .op = DB_OP_FWD, .head_dim = 64, .head_dim_v = 32, .batch = 1, .heads = 1, .seqlen_q = 5, .seqlen_k = 7 },
          NULL },
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=100 sk=100 window=1 window_left=32 window_right=-1",
          { .op = DB_OP_FWD, .dtype = 1, .head_dim = 64, .head_dim_v = 64, .batch = 2, .heads = 8, .seqlen_q = 100,
            .seqlen_k = 100, .window = 1, .window_left = 32, .window_right = -1 }, NULL },
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=100 sk=300 causal=1 bottom_right=1 varlen=3",
          { .op = DB_OP_FWD, .dtype = 1, .head_dim = 64, .head_dim_v = 64, .causal = 1, .batch = 2, .heads = 8,
            .seqlen_q = 100, .seqlen_k = 300, .bottom_right = 1, .varlen = 3 }, NULL },
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=100", { 0 }, "missing field 'seqlen_k'" },
        { "op=fwd dtype=f8 d=64 b=2 h=8 sq=1 sk=1", { 0 }, "dtype=f8 is not f32, f16, bf16 or f64" },
        { "dtype=f16 d=64 b=2 h=8 sq=1 sk=1", { 0 }, "missing field 'op'" },
        { "op=fwd dtype=f16 d=64 head_dim=64 b=2 h=8 sq=1 sk=1", { 0 }, "both 'head_dim' and 'd'" },
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=1 sk=1 wnd=4", { 0 }, "unknown field 'wnd'" },
        { "op=fwd foo=1", { 0 }, "unknown field 'foo' (a workload takes op, dtype" },   /* not "missing dtype" */
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=1 sk=1 window=4", { 0 }, "workload window=4 is not 0 or 1" },
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=1 sk=1 window_left=16", { 0 },
          "workload window=0 with window_left=16 window_right=0" },
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=1 sk=1 varlen=9", { 0 }, "workload varlen=9 is not 0 (dense) or a bucket" },
        { "op=fwd dtype=f16 d=64 b=2 h=8 sq=0 sk=1", { 0 }, "seqlen_q=0 is less than 1" },
        { "op=fwd dtype=f16 d=sixty b=2 h=8 sq=1 sk=1", { 0 }, "field 'head_dim': 'sixty' is not an integer" },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        db_workload w;
        char err[512] = "", back[256];
        int rc = db_workload_parse(cases[i].text, &w, err, sizeof err);
        if (!cases[i].error) {
            if (rc != 0)
                print_error("'%s': %s\n", cases[i].text, err);
            assert_int_equal(rc, 0);
            assert_memory_equal(&w, &cases[i].expected, sizeof w);
            db_workload again;
            assert_int_equal(db_workload_parse(db_workload_format(&w, back, sizeof back), &again, err, sizeof err), 0);
            assert_memory_equal(&again, &w, sizeof w);
        } else {
            if (rc != -1 || !strstr(err, cases[i].error))
                print_error("'%s': expected '%s', got '%s'\n", cases[i].text, cases[i].error, err);
            assert_int_equal(rc, -1);
            assert_int_equal(strncmp(err, "workload", 8), 0);   /* "workload: ..." or the check's "workload op=..." */
            assert_non_null(strstr(err, cases[i].error));
        }
    }
}

/* ---- durability and concurrency --------------------------------------------------------- */

enum { WRITES_PER_CHILD = 60 };

/* A child process: waits for the start signal, opens (maybe creating) the file, writes n
 * results of its own kernels. Exit status 0 when all went in. */
static int child_writer(const char *path, int who, int start_fd)
{
    char c, err[512] = "";
    if (read(start_fd, &c, 1) < 0)
        return 2;
    db *d = NULL;
    if (db_open(path, DB_OPEN_CREATE, &d, err, sizeof err) != 0) {
        fprintf(stderr, "child %d: %s\n", who, err);
        return 1;
    }
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    int64_t id_d, id_w, sweep, id_k;
    int rc = db_device_upsert(d, &dev, &id_d, err, sizeof err) || db_workload_upsert(d, &w, &id_w, err, sizeof err)
          || db_sweep_begin(d, "space.lua", "0000000000000000", NULL, &sweep, err, sizeof err);
    for (int i = 0; !rc && i < WRITES_PER_CHILD; i++) {
        db_kernel k = kernel_of(&w, (unsigned)(who * 10000 + i), 16 + i);
        rc = db_kernel_upsert(d, &k, &id_k, err, sizeof err);
        db_result r = result_of(sweep, id_d, id_w, id_k, DB_STATUS_OK, 1.0 + i);
        if (!rc)
            rc = db_result_put(d, &r, err, sizeof err);
    }
    if (rc)
        fprintf(stderr, "child %d: %s\n", who, err);
    db_close(d);
    return rc ? 1 : 0;
}

static void two_processes_write_one_file(void **state)
{
    fixture *f = *state;
    int start[2];
    assert_int_equal(pipe(start), 0);
    pid_t pids[2];
    for (int i = 0; i < 2; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(start[1]);
            _exit(child_writer(f->path, i + 1, start[0]));
        }
    }
    /* Both children race from here, creating the file too. */
    close(start[0]);
    close(start[1]);
    for (int i = 0; i < 2; i++) {
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    db *d = open_ok(f->path, 0);
    char check[64];
    query_text(d, "PRAGMA integrity_check", check, sizeof check);
    assert_string_equal(check, "ok");
    assert_int_equal(query_int(d, "SELECT count(*) FROM results"), 2 * WRITES_PER_CHILD);
    assert_int_equal(query_int(d, "SELECT count(*) FROM devices"), 1);
    assert_int_equal(query_int(d, "SELECT count(*) FROM workloads"), 1);
    assert_int_equal(query_int(d, "SELECT count(*) FROM sweeps"), 2);
    assert_int_equal(query_int(d, "SELECT count(*) FROM schema_version"), db_schema_version());
    db_close(d);
}

static void killed_writer_keeps_committed_results(void **state)
{
    fixture *f = *state;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        char err[512];
        db *d = NULL;
        if (db_open(f->path, DB_OPEN_CREATE, &d, err, sizeof err) != 0)
            _exit(1);
        db_device dev = device_of("GPU A", "sm_90", "13.0");
        db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
        int64_t id_d, id_w, sweep, id_k = 0;
        if (db_device_upsert(d, &dev, &id_d, err, sizeof err) || db_workload_upsert(d, &w, &id_w, err, sizeof err)
            || db_sweep_begin(d, "space.lua", "0000000000000000", NULL, &sweep, err, sizeof err))
            _exit(1);
        for (int i = 0; i < 6; i++) {
            db_kernel k = kernel_of(&w, 300 + (unsigned)i, 16 * (i + 1));
            if (db_kernel_upsert(d, &k, &id_k, err, sizeof err))
                _exit(1);
            db_result r = result_of(sweep, id_d, id_w, id_k, DB_STATUS_OK, 1.0 + i);
            if (i < 5 && db_result_put(d, &r, err, sizeof err))
                _exit(1);
        }
        /* The candidate in flight: written, not committed, when the kill comes. */
        char sql[256];
        snprintf(sql, sizeof sql, "BEGIN IMMEDIATE; INSERT INTO results (sweep_id, device_id, workload_id, kernel_id, "
                 "status, median_ms) VALUES (%lld, %lld, %lld, %lld, 'ok', 0.1);", (long long)sweep, (long long)id_d,
                 (long long)id_w, (long long)id_k);
        if (sqlite3_exec(db_sqlite(d), sql, NULL, NULL, NULL) != SQLITE_OK)
            _exit(1);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));

    db *d = open_ok(f->path, 0);
    char check[64];
    query_text(d, "PRAGMA integrity_check", check, sizeof check);
    assert_string_equal(check, "ok");
    assert_int_equal(query_int(d, "SELECT count(*) FROM results"), 5);
    assert_int_equal(query_int(d, "SELECT count(*) FROM kernels"), 6);
    assert_int_equal(query_int(d, "SELECT count(*) FROM results WHERE median_ms < 0.5"), 0);
    /* The rerun resumes: it sees five done, and can write the sixth at once (no stale lock). */
    int64_t k6 = query_int(d, "SELECT max(id) FROM kernels");
    char err[512] = "";
    assert_int_equal(db_result_get(d, 1, 1, k6, NULL, err, sizeof err), 0);
    assert_int_equal(db_result_get(d, 1, 1, k6 - 1, NULL, err, sizeof err), 1);
    db_result r = result_of(1, 1, 1, k6, DB_STATUS_OK, 6.0);
    put(d, &r);
    assert_int_equal(query_int(d, "SELECT count(*) FROM results"), 6);
    db_close(d);
}

typedef struct thread_arg {
    db *d;
    int who;
    int64_t sweep, dev, wl;
    int failed;
} thread_arg;

static void *thread_writer(void *p)
{
    thread_arg *a = p;
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    for (int i = 0; i < 25 && !a->failed; i++) {
        char err[512];
        int64_t id_k;
        db_kernel k = kernel_of(&w, (unsigned)(a->who * 1000 + i + 7), 16);
        db_result r;
        a->failed = db_kernel_upsert(a->d, &k, &id_k, err, sizeof err) != 0;
        r = result_of(a->sweep, a->dev, a->wl, id_k, DB_STATUS_OK, 1.0 + i);
        if (!a->failed)
            a->failed = db_result_put(a->d, &r, err, sizeof err) != 0;
    }
    return NULL;
}

static void threads_share_a_handle(void **state)
{
    fixture *f = *state;
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    thread_arg args[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){ d, i, 0, 0, 0, 0 };
        args[i].sweep = begin_sweep(d);
        args[i].dev = upsert_device(d, &dev);
        args[i].wl = upsert_workload(d, &w);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, thread_writer, &args[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        assert_false(args[i].failed);
    }
    assert_int_equal(query_int(d, "SELECT count(*) FROM results"), 100);
    db_close(d);
}

/* A statement that would never end (a recursive query without a limit; none of flashtune's does,
 * but a damaged database or a bug might) is stopped at the call's time bound and named; a bound
 * that is not a number of seconds is refused by its variable's name. */
static void statements_are_bounded_in_time(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    setenv(DB_BOUND_ENV, "0.3", 1);
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    assert_int_equal(db_enter(d, "test", 0, err, sizeof err), 0);
    const long long t0 = (long long)time(NULL);
    const int rc = db_exec(d, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                              "SELECT count(*) FROM c", err, sizeof err);
    db_leave(d);
    assert_int_equal(rc, -1);
    assert_true((long long)time(NULL) - t0 <= 5);
    if (!strstr(err, "a statement ran past the bound of one call (FLASHTUNE_DB_BOUND_S"))
        fail_msg("unexpected message: %s", err);
    /* the next call has a bound of its own: the handle still works */
    assert_int_equal(query_int(d, "SELECT count(*) FROM results"), 0);
    db_close(d);
    const char *bad[] = { "", "soon", "-1", "1e9", "5s" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(DB_BOUND_ENV, bad[i], 1);
        db *e = NULL;
        assert_int_equal(db_open(f->path, 0, &e, err, sizeof err), -1);
        assert_null(e);
        char want[128];
        snprintf(want, sizeof want, "FLASHTUNE_DB_BOUND_S='%s' is not a number of seconds", bad[i]);
        if (!strstr(err, want))
            fail_msg("'%s': unexpected message: %s", bad[i], err);
    }
    unsetenv(DB_BOUND_ENV);
}

/* ---- bad arguments -------------------------------------------------------------------- */

static void bad_arguments_are_named(void **state)
{
    fixture *f = *state;
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    db_device dev = device_of("GPU A", "sm_90", "13.0");
    db_workload w = workload_of(DB_OP_FWD, 1, 128, 0, 4, 16, 4096, 4096);
    db_kernel k = kernel_of(&w, 1, 64);
    db_result r = result_of(1, 1, 1, 1, DB_STATUS_OK, 1.0);
    db_binary b;
    db_winner win;
    db_winner *list;
    int count;
    int64_t id;
    char fifo[160];
    snprintf(fifo, sizeof fifo, "%s/fifo", f->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    static const char *const expected[] = {
        "db_open: path is NULL",
        "db_open: out is NULL",
        "db_open: flags=3 is not",
        "db_open: path is empty",
        "is a directory",
        "is not a regular file",
        "db is NULL",
        "db is NULL",
        "db is NULL",
        "id is NULL",
        "db_binary_find: db is NULL",
        "db_binary_find: cache_key is NULL",
        "db_sweep_begin: db is NULL",
        "db_sweep_begin: space_file is NULL",
        "db_result_put: db is NULL",
        "db_result_put: r is NULL",
        "db_result_put: status=42 is not a db_status",
        "db_result_get: db is NULL",
        "db_winner_find: db is NULL",
        "db_winner_find: w is NULL",
        "db_winners_list: db is NULL",
        "db_export: db is NULL",
        "db_export: out is NULL",
        "db_import_text: db is NULL",
        "db_import_file: db is NULL",
        "db_results_list: db is NULL",
        "unknown sort column 'fastest'",
        "tune_print_best: db is NULL",
        "db_workloads_list: db is NULL",
        "db_sweep_clocks: db is NULL",
        "db_sweep_clocks: out is NULL",
        "db_workload_parse: text is NULL",
    };
    for (int i = 0; i < ARRAY_LEN(expected); i++) {
        char err[512] = "";
        db *o = NULL;
        db_result bad = r;
        int rc;
        switch (i) {
        case 0: rc = db_open(NULL, 0, &o, err, sizeof err); break;
        case 1: rc = db_open(f->path, 0, NULL, err, sizeof err); break;
        case 2: rc = db_open(f->path, DB_OPEN_READONLY | DB_OPEN_CREATE, &o, err, sizeof err); break;
        case 3: rc = db_open("", 0, &o, err, sizeof err); break;
        case 4: rc = db_open(f->dir, DB_OPEN_CREATE, &o, err, sizeof err); break;
        case 5: rc = db_open(fifo, DB_OPEN_CREATE, &o, err, sizeof err); break;
        case 6: rc = db_device_upsert(NULL, &dev, &id, err, sizeof err); break;
        case 7: rc = db_kernel_upsert(NULL, &k, &id, err, sizeof err); break;
        case 8: rc = db_workload_upsert(NULL, &w, &id, err, sizeof err); break;
        case 9: rc = db_workload_upsert(d, &w, NULL, err, sizeof err); break;
        case 10: rc = db_binary_find(NULL, "00", &b, NULL, err, sizeof err); break;
        case 11: rc = db_binary_find(d, NULL, &b, NULL, err, sizeof err); break;
        case 12: rc = db_sweep_begin(NULL, "a", "b", NULL, &id, err, sizeof err); break;
        case 13: rc = db_sweep_begin(d, NULL, "b", NULL, &id, err, sizeof err); break;
        case 14: rc = db_result_put(NULL, &r, err, sizeof err); break;
        case 15: rc = db_result_put(d, NULL, err, sizeof err); break;
        case 16: bad.status = (db_status)42; rc = db_result_put(d, &bad, err, sizeof err); break;
        case 17: rc = db_result_get(NULL, 1, 1, 1, NULL, err, sizeof err); break;
        case 18: rc = db_winner_find(NULL, NULL, NULL, &w, &win, err, sizeof err); break;
        case 19: rc = db_winner_find(d, NULL, NULL, NULL, &win, err, sizeof err); break;
        case 20: rc = db_winners_list(NULL, &list, &count, err, sizeof err); break;
        case 21: rc = db_export(NULL, stdout, err, sizeof err); break;
        case 22: rc = db_export(d, NULL, err, sizeof err); break;
        case 23: rc = db_import_text(NULL, "x", "", NULL, NULL, err, sizeof err); break;
        case 24: rc = db_import_file(NULL, "x", NULL, NULL, err, sizeof err); break;
        case 25: rc = tune_print_results(NULL, &w, NULL, stdout, err, sizeof err); break;
        case 26: rc = tune_print_results(d, &w, "fastest", stdout, err, sizeof err); break;
        case 27: rc = tune_print_best(NULL, stdout, err, sizeof err); break;
        case 28: rc = tune_print_workloads(NULL, stdout, err, sizeof err); break;
        case 29: rc = db_sweep_clocks(NULL, 1, 1, &(db_clock_summary){ 0 }, err, sizeof err); break;
        case 30: rc = db_sweep_clocks(d, 1, 1, NULL, err, sizeof err); break;
        default: rc = db_workload_parse(NULL, &w, err, sizeof err); break;
        }
        if (rc != -1 || !strstr(err, expected[i]))
            print_error("call %d: rc %d, expected '%s', got '%s'\n", i, rc, expected[i], err);
        assert_int_equal(rc, -1);
        assert_non_null(strstr(err, expected[i]));
        assert_null(o);
    }
    /* err may be NULL: still -1, no crash. */
    assert_int_equal(db_device_upsert(NULL, &dev, &id, NULL, 0), -1);
    db_close(d);
}

/* A packed image (what the runtime's shipped winners are) opens in memory with its rows; an image
 * of another schema version, or bytes that are no database, are refused with a message. */
static void memory_images_open_as_packed(void **state)
{
    (void)state;
    char err[512];
    db *d;
    assert_int_equal(db_open_memory(&d, err, sizeof err), 0);
    db_workload w = workload_of(DB_OP_FWD, 2, 128, 1, 2, 8, 1024, 1024);
    w.varlen = 3;
    int64_t id;
    assert_int_equal(db_workload_upsert(d, &w, &id, err, sizeof err), 0);
    sqlite3_int64 size = 0;
    unsigned char *image = sqlite3_serialize(d->sql, "main", &size, 0);
    assert_non_null(image);
    db *copy;
    assert_int_equal(db_open_memory_image(image, (size_t)size, &copy, err, sizeof err), 0);
    int64_t again;
    assert_int_equal(db_workload_find(copy, &w, &again, err, sizeof err), 1);
    assert_int_equal(again, id);
    db_close(copy);
    /* Another schema version. */
    assert_int_equal(sqlite3_exec(d->sql, "PRAGMA user_version = 4", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(image);
    image = sqlite3_serialize(d->sql, "main", &size, 0);
    assert_int_equal(db_open_memory_image(image, (size_t)size, &copy, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_open_memory_image: the image has schema version 4"));
    /* Not a database. */
    memset(image, 'x', 100);
    assert_int_equal(db_open_memory_image(image, (size_t)size, &copy, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_open_memory_image:"));
    sqlite3_free(image);
    db_close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_match_generator),
        cmocka_unit_test(memory_images_open_as_packed),
        CASE(create_and_reopen),
        CASE(empty_file_is_created),
        CASE(concurrent_creators_agree),
        CASE(odd_paths_work),
        CASE(rejected_files_are_untouched),
        CASE(full_disk_leaves_nothing),
        CASE(migrations_apply_in_order),
        CASE(upserts_are_idempotent),
        CASE(bad_rows_are_named),
        CASE(winners_pick_fastest_valid),
        CASE(nearest_workload_lookup),
        CASE(nearest_by_grid_fill),
        CASE(fill_weighs_four_lengths),
        CASE(decode_lookup_by_kv_heads_and_either_mask),
        CASE(workload_kinds_are_keyed_and_preferred),
        CASE(workload_masks_are_checked),
        CASE(masks_and_buckets_are_keyed_and_preferred),
        CASE(mask_text_round_trips),
        CASE(migration_5_keeps_workloads),
        CASE(migration_6_keeps_workloads_and_adds_the_extra_fields),
        CASE(export_import_round_trip),
        CASE(export_text_is_stable),
        CASE(shipped_winners_import_unchanged),
        CASE(malformed_import_is_rejected),
        CASE(results_table_sorts),
        CASE(results_keep_clocks),
        CASE(migration_2_keeps_every_value),
        CASE(unknown_parameter_names_are_refused),
        CASE(every_parameter_row_is_stored),
        cmocka_unit_test(workload_text_parses),
        CASE(two_processes_write_one_file),
        CASE(killed_writer_keeps_committed_results),
        CASE(threads_share_a_handle),
        CASE(statements_are_bounded_in_time),
        CASE(bad_arguments_are_named),
    };
    return cmocka_run_group_tests_name("test_db", tests, NULL, NULL);
}
