/* Sweeps and results: each result is one committed transaction, so an interrupted sweep keeps
 * everything it measured and a rerun resumes by asking db_result_get. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db_core_internal.h"

int db_sweep_begin(db *d, const char *space_file, const char *space_hash, const char *host, int64_t *id,
                   char *err, size_t len)
{
    const char *func = "db_sweep_begin";
    if (d && (!space_file || !space_hash || !id))
        return db_fail(err, len, "%s: %s is NULL", func,
                       !space_file ? "space_file" : !space_hash ? "space_hash" : "id");
    char name[256] = "unknown";
    if (!host) {
        if (gethostname(name, sizeof name - 1) != 0 || !name[0])
            snprintf(name, sizeof name, "unknown");
        name[sizeof name - 1] = '\0';
        host = name;
    }
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int rc = db_prepare(d, "INSERT INTO sweeps (space_file, space_hash, host) VALUES (?1, ?2, ?3)", &st,
                        err, len);
    if (rc == 0) {
        sqlite3_bind_text(st, 1, space_file, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, space_hash, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, host, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_DONE)
            *id = sqlite3_last_insert_rowid(d->sql);
        else
            rc = db_fail_sql(d->sql, err, len, d->path);
        sqlite3_finalize(st);
    }
    db_leave(d);
    return rc;
}

int db_sweep_end(db *d, int64_t sweep_id, char *err, size_t len)
{
    const char *func = "db_sweep_end";
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int rc = db_prepare(d, "UPDATE sweeps SET finished_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?1",
                        &st, err, len);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, sweep_id);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_fail_sql(d->sql, err, len, d->path);
        else if (sqlite3_changes(d->sql) != 1)
            rc = db_fail(err, len, "%s: sweep_id=%lld is not a stored sweep", func, (long long)sweep_id);
        sqlite3_finalize(st);
    }
    db_leave(d);
    return rc;
}

/* Argument checks of db_result_put; 0 or -1. */
static int result_check(const db_result *r, const char *func, char *err, size_t len)
{
    const struct { const char *name; int64_t id; } ids[] = {
        { "sweep_id", r->sweep_id }, { "device_id", r->device_id }, { "workload_id", r->workload_id },
        { "kernel_id", r->kernel_id },
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i].id < 1)
            return db_fail(err, len, "%s: %s=%lld is not a row id", func, ids[i].name, (long long)ids[i].id);
    if (r->binary_id < 0)
        return db_fail(err, len, "%s: binary_id=%lld is negative", func, (long long)r->binary_id);
    if (!db_status_name(r->status))
        return db_fail(err, len, "%s: status=%d is not a db_status", func, (int)r->status);
    if (r->status == DB_STATUS_OK && !(isfinite(r->median_ms) && r->median_ms > 0))
        return db_fail(err, len, "%s: status ok needs median_ms > 0 (got %g)", func, r->median_ms);
    return 0;
}

int db_result_put(db *d, const db_result *r, char *err, size_t len)
{
    const char *func = "db_result_put";
    if (d && !r)
        return db_fail(err, len, "%s: r is NULL", func);
    if (r && result_check(r, func, err, len) != 0)
        return -1;
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    /* One statement in autocommit mode: its own transaction, durable when step returns. */
    int rc = db_prepare(d,
        "INSERT INTO results (sweep_id, device_id, workload_id, kernel_id, binary_id, status, median_ms, "
        "min_ms, spread, tflops, rel_error, max_abs_error, message, sm_clock_mhz, clock_events) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
        "ON CONFLICT (device_id, workload_id, kernel_id) DO UPDATE SET sweep_id = excluded.sweep_id, "
        "binary_id = excluded.binary_id, status = excluded.status, median_ms = excluded.median_ms, "
        "min_ms = excluded.min_ms, spread = excluded.spread, tflops = excluded.tflops, "
        "rel_error = excluded.rel_error, max_abs_error = excluded.max_abs_error, message = excluded.message, "
        "sm_clock_mhz = excluded.sm_clock_mhz, clock_events = excluded.clock_events, "
        "measured_at = excluded.measured_at", &st, err, len);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, r->sweep_id);
        sqlite3_bind_int64(st, 2, r->device_id);
        sqlite3_bind_int64(st, 3, r->workload_id);
        sqlite3_bind_int64(st, 4, r->kernel_id);
        if (r->binary_id > 0)
            sqlite3_bind_int64(st, 5, r->binary_id);
        else
            sqlite3_bind_null(st, 5);
        sqlite3_bind_text(st, 6, db_status_name(r->status), -1, SQLITE_STATIC);
        const double v[] = { r->median_ms, r->min_ms, r->spread, r->tflops, r->rel_error, r->max_abs_error };
        for (int i = 0; i < 6; i++)
            db_bind_real(st, 7 + i, v[i]);
        if (r->message)
            sqlite3_bind_text(st, 13, r->message, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 13);
        if (isfinite(r->sm_mhz) && r->sm_mhz > 0) {   /* sampled: the clock, and the reasons where known */
            sqlite3_bind_double(st, 14, r->sm_mhz);
            if (r->clock_events >= 0)
                sqlite3_bind_int64(st, 15, r->clock_events);
        }
        if (sqlite3_step(st) != SQLITE_DONE) {
            if (sqlite3_extended_errcode(d->sql) == SQLITE_CONSTRAINT_FOREIGNKEY)
                rc = db_fail(err, len, "%s: sweep_id=%lld, device_id=%lld, workload_id=%lld, kernel_id=%lld or "
                             "binary_id=%lld is not a stored row", func, (long long)r->sweep_id,
                             (long long)r->device_id, (long long)r->workload_id, (long long)r->kernel_id,
                             (long long)r->binary_id);
            else
                rc = db_fail_sql(d->sql, err, len, d->path);
        }
        sqlite3_finalize(st);
    }
    db_leave(d);
    return rc;
}

int db_result_get(db *d, int64_t device_id, int64_t workload_id, int64_t kernel_id, db_status *status,
                  char *err, size_t len)
{
    const char *func = "db_result_get";
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int found = -1;
    /* A result imported from a winners file is not this GPU's timing in a sweep: a sweep re-times it
     * beside its own candidates, so that a shipped winner competes on the same clocks (the guard
     * against replacing a winner with one that only ran on a cooler GPU). */
    if (db_prepare(d, "SELECT r.status FROM results r JOIN sweeps s ON s.id = r.sweep_id WHERE r.device_id = ?1 "
                      "AND r.workload_id = ?2 AND r.kernel_id = ?3 AND s.space_file NOT LIKE 'import:%'",
                   &st, err, len) == 0) {
        sqlite3_bind_int64(st, 1, device_id);
        sqlite3_bind_int64(st, 2, workload_id);
        sqlite3_bind_int64(st, 3, kernel_id);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            found = 1;
            if (status)
                *status = (db_status)db_status_parse((const char *)sqlite3_column_text(st, 0));
        } else if (rc == SQLITE_DONE) {
            found = 0;
        } else {
            db_fail_sql(d->sql, err, len, d->path);
        }
        sqlite3_finalize(st);
    }
    db_leave(d);
    return found;
}

int db_sweep_clocks(db *d, int64_t sweep_id, int64_t device_id, db_clock_summary *out, char *err, size_t len)
{
    const char *func = "db_sweep_clocks";
    if (d && !out)
        return db_fail(err, len, "%s: out is NULL", func);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    *out = (db_clock_summary){ 0, 0, 0, NAN, NAN, 0 };
    sqlite3_stmt *st;
    int rc = db_prepare(d, "SELECT sm_clock_mhz, clock_events FROM results WHERE sweep_id = ?1 AND device_id = ?2 "
                           "AND status = 'ok'", &st, err, len);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, sweep_id);
        sqlite3_bind_int64(st, 2, device_id);
        int step;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            out->timed++;
            if (sqlite3_column_type(st, 0) == SQLITE_NULL)
                continue;
            const double mhz = sqlite3_column_double(st, 0);
            const long long events = sqlite3_column_int64(st, 1);
            out->sampled++;
            out->held += events != 0;
            out->events |= events;
            if (isnan(out->least_mhz) || mhz < out->least_mhz)
                out->least_mhz = mhz;
            if (isnan(out->most_mhz) || mhz > out->most_mhz)
                out->most_mhz = mhz;
        }
        if (step != SQLITE_DONE)
            rc = db_fail_sql(d->sql, err, len, d->path);
        sqlite3_finalize(st);
    }
    db_leave(d);
    return rc;
}
