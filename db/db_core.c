/* The database layer's shared pieces: names of dtypes, ops and statuses; error
 * messages; SQL statement and transaction helpers; the handle lock. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_core_internal.h"

static const char *const op_names[] = { "fwd", "bwd" };
static const char *const status_names[DB_STATUS_COUNT] = {
    "ok", "invalid", "compile_error", "launch_error", "crashed", "timeout", "skipped",
};

const char *db_dtype_name(int dtype)
{
    return gen_param_value_name(GEN_DTYPE, dtype);
}

int db_dtype_parse(const char *name)
{
    const char *const *names = gen_param_get(GEN_DTYPE)->values;
    for (int i = 0; name && names[i]; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

const char *db_op_name(int op)
{
    return op == DB_OP_FWD || op == DB_OP_BWD ? op_names[op] : NULL;
}

int db_op_parse(const char *name)
{
    for (int i = 0; name && i < 2; i++)
        if (!strcmp(op_names[i], name))
            return i;
    return -1;
}

const char *db_status_name(db_status s)
{
    return (unsigned)s < DB_STATUS_COUNT ? status_names[s] : NULL;
}

int db_status_parse(const char *name)
{
    for (int i = 0; name && i < DB_STATUS_COUNT; i++)
        if (!strcmp(status_names[i], name))
            return i;
    return -1;
}

/* ---- errors ---------------------------------------------------------------------------- */

int db_fail(char *err, size_t len, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int db_fail_sql(sqlite3 *sql, char *err, size_t len, const char *what)
{
    if (sql && sqlite3_errcode(sql) == SQLITE_INTERRUPT)
        return db_fail(err, len, "database %s: a statement ran past the bound of one call (%s, default %.0f s) "
                       "and was stopped", what, DB_BOUND_ENV, DB_BOUND_S);
    return db_fail(err, len, "database %s: %s", what, sql ? sqlite3_errmsg(sql) : "no connection");
}

static long long monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* SQLite's progress handler: nonzero stops the running statement (SQLITE_INTERRUPT). */
static int past_deadline(void *arg)
{
    const db *d = arg;   /* deadline_ns 0: outside a public call, or no bound */
    return d->deadline_ns > 0 && monotonic_ns() > d->deadline_ns;
}

int db_bound_statements(db *d, char *err, size_t len)
{
    double bound = DB_BOUND_S;
    const char *env = getenv(DB_BOUND_ENV);
    if (env) {
        char *end = NULL;
        errno = 0;
        bound = strtod(env, &end);
        if (!*env || *end || errno || !(bound >= 0 && bound <= 1e6))
            return db_fail(err, len, "%s='%s' is not a number of seconds from 0 to 1000000 (0: no bound)",
                           DB_BOUND_ENV, env);
    }
    d->bound_ns = (long long)(bound * 1e9);
    /* every 10000 virtual-machine steps: microseconds apart, nothing next to a statement's work */
    sqlite3_progress_handler(d->sql, 10000, past_deadline, d);
    return 0;
}

void *db_grow(void **list, int n, int *cap, size_t size)
{
    if (n == *cap) {
        int want = *cap ? 2 * *cap : 16;
        void *grown = realloc(*list, (size_t)want * size);
        if (!grown)
            return NULL;
        *list = grown;
        *cap = want;
    }
    char *slot = (char *)*list + (size_t)n * size;
    memset(slot, 0, size);
    return slot;
}

int db_list_start(db *d, void *out, int *count, const char *func, char *err, size_t len)
{
    if (d && (!out || !count))
        return db_fail(err, len, "%s: %s is NULL", func, out ? "count" : "out");
    if (out)
        memset(out, 0, sizeof(void *));
    if (count)
        *count = 0;
    return db_enter(d, func, 0, err, len);
}

int db_list_finish(db *d, sqlite3_stmt *st, int rc, int step, void *list, int n, void *out, int *count, char *err,
                   size_t len)
{
    if (rc == 0 && step != SQLITE_DONE)
        rc = db_fail_sql(d->sql, err, len, d->path);
    sqlite3_finalize(st);
    db_leave(d);
    if (rc != 0) {
        free(list);
        return -1;
    }
    memcpy(out, &list, sizeof list);   /* out is a T ** for the caller's element type T */
    *count = n;
    return 0;
}

int db_copy(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len)
        return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

/* ---- handle and statements ---------------------------------------------------------- */

int db_enter(db *d, const char *func, int write, char *err, size_t len)
{
    if (!d || !d->sql)
        return db_fail(err, len, "%s: db is NULL", func);
    if (write && d->readonly)
        return db_fail(err, len, "%s: %s was opened read-only", func, d->path);
    pthread_mutex_lock(&d->lock);
    d->deadline_ns = d->bound_ns > 0 ? monotonic_ns() + d->bound_ns : 0;
    return 0;
}

void db_leave(db *d)
{
    d->deadline_ns = 0;
    pthread_mutex_unlock(&d->lock);
}

int db_exec(db *d, const char *sql, char *err, size_t len)
{
    char *msg = NULL;
    if (sqlite3_exec(d->sql, sql, NULL, NULL, &msg) != SQLITE_OK) {
        if (sqlite3_errcode(d->sql) == SQLITE_INTERRUPT)
            db_fail_sql(d->sql, err, len, d->path);   /* names the bound */
        else
            db_fail(err, len, "database %s: %s", d->path, msg ? msg : sqlite3_errmsg(d->sql));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int db_prepare(db *d, const char *sql, sqlite3_stmt **st, char *err, size_t len)
{
    if (sqlite3_prepare_v2(d->sql, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return db_fail_sql(d->sql, err, len, d->path);
    }
    return 0;
}

int db_step_row(db *d, sqlite3_stmt *st, char *err, size_t len)
{
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return db_fail_sql(d->sql, err, len, d->path);
}

int db_begin(db *d, char *err, size_t len)
{
    return db_exec(d, "BEGIN IMMEDIATE", err, len);
}

int db_commit(db *d, char *err, size_t len)
{
    if (db_exec(d, "COMMIT", err, len) != 0) {
        db_rollback(d);
        return -1;
    }
    return 0;
}

void db_rollback(db *d)
{
    if (!sqlite3_get_autocommit(d->sql))
        sqlite3_exec(d->sql, "ROLLBACK", NULL, NULL, NULL);
}

int db_bind_real(sqlite3_stmt *st, int index, double v)
{
    return isfinite(v) ? sqlite3_bind_double(st, index, v) : sqlite3_bind_null(st, index);
}

double db_column_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

void db_column_text(sqlite3_stmt *st, int col, char *buf, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(buf, len, "%s", t ? (const char *)t : "");
}
