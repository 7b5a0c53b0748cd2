/* The rows behind the CLI's tables, read and returned as data (the tuner prints them,
 * tune_print.c): a workload's candidates in a chosen order, the tuned workloads with their
 * counts, and the results counted per (device, workload). */
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"

/* Sort keys: the name users type, its SQL expression, 1 when larger is better. */
static const struct { const char *name, *expr; int desc; } sorts[] = {
    { "median_ms", "r.median_ms", 0 },
    { "min_ms", "r.min_ms", 0 },
    { "spread", "r.spread", 0 },
    { "tflops", "r.tflops", 1 },
    { "rel_error", "r.rel_error", 0 },
    { "max_abs_error", "r.max_abs_error", 0 },
    { "sm_mhz", "r.sm_clock_mhz", 0 },
    { "registers", "b.registers", 0 },
    { "spills", "(b.spill_store_bytes + b.spill_load_bytes)", 0 },
    { "smem", "b.static_smem_bytes", 0 },
    { "compile_seconds", "b.compile_seconds", 0 },
    { "status", "r.status", 0 },
    { "kernel", "r.kernel_id", 0 },
};
#define SORT_COUNT ((int)(sizeof sorts / sizeof sorts[0]))

const char *const db_sort_columns[] = {
    "median_ms", "min_ms", "spread", "tflops", "rel_error", "max_abs_error", "sm_mhz", "registers", "spills",
    "smem", "compile_seconds", "status", "kernel", NULL,
};

/* "ORDER BY" terms for sort into buf; -1 with the allowed names in err when unknown. */
static int sort_clause(const char *sort, char *buf, size_t size, char *err, size_t len)
{
    const char *name = sort ? sort : "median_ms";
    int reverse = name[0] == '-';
    name += reverse;
    char column[160];
    const char *expr = NULL;
    int desc = 0;
    for (int i = 0; i < SORT_COUNT && !expr; i++)
        if (!strcmp(sorts[i].name, name))
            expr = sorts[i].expr, desc = sorts[i].desc;
    const int param = gen_param_lookup(name);
    if (!expr && param >= 0 && !strcmp(name, gen_param_name((gen_param)param))) {
        /* The table's name, never the user's text, goes into the SQL. */
        const gen_param_info *info = gen_param_get((gen_param)param);
        snprintf(column, sizeof column, "coalesce((SELECT kp.value FROM kernel_params kp WHERE kp.kernel_id = "
                 "r.kernel_id AND kp.name = '%s'), %d)", info->name, info->def);
        expr = column;
    }
    if (!expr) {
        char list[512] = "";
        for (int i = 0; i < SORT_COUNT; i++)
            strcat(strcat(list, sorts[i].name), ", ");
        return db_fail(err, len, "unknown sort column '%s' (%sor a parameter such as BLOCK_M; "
                       "'-' in front reverses)", sort, list);
    }
    /* Missing values last whichever the direction: a failed candidate has no time. */
    snprintf(buf, size, "(%s IS NULL), %s %s, r.kernel_id", expr, expr, desc != reverse ? "DESC" : "ASC");
    return 0;
}

/* An integer column, -1 when NULL. */
static long long int_or_none(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : (long long)sqlite3_column_int64(st, col);
}

int db_results_list(db *d, const db_workload *w, const char *sort, db_result_row **out, int *count, char *err,
                    size_t len)
{
    const char *func = "db_results_list";
    char order[512], why[256], wl[256];
    if (d && (!w || !out || !count))
        return db_fail(err, len, "%s: %s is NULL", func, !w ? "w" : !out ? "out" : "count");
    if (out)
        *out = NULL;
    if (count)
        *count = 0;
    if (w && db_workload_check(w, why, sizeof why) != 0)
        return db_fail(err, len, "%s", why);
    if (d && sort_clause(sort, order, sizeof order, err, len) != 0)
        return -1;
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    int64_t workload_id;
    int rc = db_workload_find_tx(d, w, &workload_id, err, len);
    if (rc == 0)
        rc = db_fail(err, len, "workload %s is not in %s", db_workload_format(w, wl, sizeof wl), d->path);
    if (rc < 0) {
        db_leave(d);
        return -1;
    }
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SELECT r.device_id, EXISTS (SELECT 1 FROM winners x WHERE x.result_id = r.id), r.kernel_id, "
             "r.status, r.median_ms, r.min_ms, r.spread, r.tflops, r.rel_error, b.registers, "
             "b.spill_store_bytes + b.spill_load_bytes, b.static_smem_bytes, r.message, r.sm_clock_mhz, "
             "r.clock_events, " DB_DEVICE_COLUMNS("d")
             ", " DB_KERNEL_COLUMNS("k")
             " FROM results r JOIN kernels k ON k.id = r.kernel_id JOIN devices d ON d.id = r.device_id"
             " LEFT JOIN binaries b ON b.id = r.binary_id WHERE r.workload_id = ?1"
             " ORDER BY d.name, d.arch, d.driver_version, d.nvrtc_version, r.device_id, %s", order);
    sqlite3_stmt *st;
    if (db_prepare(d, sql, &st, err, len) != 0) {
        db_leave(d);
        return -1;
    }
    sqlite3_bind_int64(st, 1, workload_id);
    db_result_row *list = NULL;
    int n = 0, cap = 0, step = SQLITE_DONE;
    rc = 0;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        db_result_row *row = db_grow((void **)&list, n, &cap, sizeof *row);
        if (!row) {
            rc = db_fail(err, len, "%s: out of memory", func);
            break;
        }
        row->device_id = sqlite3_column_int64(st, 0);
        row->winner = sqlite3_column_int(st, 1);
        row->kernel_id = sqlite3_column_int64(st, 2);
        row->status = (db_status)db_status_parse((const char *)sqlite3_column_text(st, 3));
        row->median_ms = db_column_real(st, 4);
        row->min_ms = db_column_real(st, 5);
        row->spread = db_column_real(st, 6);
        row->tflops = db_column_real(st, 7);
        row->rel_error = db_column_real(st, 8);
        row->registers = int_or_none(st, 9);
        row->spills = int_or_none(st, 10);
        row->smem = int_or_none(st, 11);
        db_column_text(st, 12, row->message, sizeof row->message);
        row->sm_mhz = db_column_real(st, 13);
        row->clock_events = int_or_none(st, 14);
        const int col = db_device_read(st, 15, &row->device);
        if (db_kernel_read(st, col, &row->kernel, why, sizeof why) != 0)
            rc = db_fail(err, len, "database %s: %s", d->path, why);
        n++;
    }
    return db_list_finish(d, st, rc, step, list, n, out, count, err, len);
}

int db_workloads_list(db *d, db_workload_row **out, int *count, char *err, size_t len)
{
    const char *func = "db_workloads_list";
    if (db_list_start(d, out, count, func, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT l.id, " DB_WORKLOAD_COLUMNS("l") ", count(r.id), total(r.status = 'ok'), "
                      "min(CASE WHEN r.status = 'ok' THEN r.median_ms END) FROM workloads l LEFT JOIN results r "
                      "ON r.workload_id = l.id GROUP BY l.id ORDER BY l.op, l.dtype, l.head_dim, l.head_dim_v, "
                      "l.causal, l.heads_k, l.softcap, l.window, l.window_left, l.window_right, l.bottom_right, "
                      "l.varlen, l.batch, l.heads, l.seqlen_q, l.seqlen_k", &st, err, len) != 0) {
        db_leave(d);
        return -1;
    }
    db_workload_row *list = NULL;
    int n = 0, cap = 0, step = SQLITE_DONE, rc = 0;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        db_workload_row *row = db_grow((void **)&list, n, &cap, sizeof *row);
        if (!row) {
            rc = db_fail(err, len, "%s: out of memory", func);
            break;
        }
        row->id = sqlite3_column_int64(st, 0);
        char why[256];
        const int col = db_workload_read(st, 1, &row->workload, why, sizeof why);
        if (col < 0) {
            rc = db_fail(err, len, "database %s: workload %lld: %s", d->path, (long long)row->id, why);
            break;
        }
        row->results = sqlite3_column_int(st, col);
        row->ok = (int)sqlite3_column_double(st, col + 1);
        row->best_ms = db_column_real(st, col + 2);
        n++;
    }
    return db_list_finish(d, st, rc, step, list, n, out, count, err, len);
}

int db_result_counts(db *d, int64_t device_id, int64_t workload_id, int *total, int *ok, char *err, size_t len)
{
    const char *func = "db_result_counts";
    if (d && (!total || !ok))
        return db_fail(err, len, "%s: %s is NULL", func, total ? "ok" : "total");
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int rc = db_prepare(d, "SELECT count(*), total(status = 'ok') FROM results WHERE device_id = ?1 AND "
                           "workload_id = ?2", &st, err, len);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, device_id);
        sqlite3_bind_int64(st, 2, workload_id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            *total = sqlite3_column_int(st, 0);
            *ok = (int)sqlite3_column_double(st, 1);
        } else {
            rc = db_fail_sql(d->sql, err, len, d->path);
        }
        sqlite3_finalize(st);
    }
    db_leave(d);
    return rc;
}
