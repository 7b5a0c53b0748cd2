/* The CLI's tables: `flashtune results` (a workload's candidates, sortable), `flashtune best`
 * (the winners) and the list of tuned workloads. */
#include <math.h>
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
    { "registers", "b.registers", 0 },
    { "spills", "(b.spill_store_bytes + b.spill_load_bytes)", 0 },
    { "smem", "b.static_smem_bytes", 0 },
    { "compile_seconds", "b.compile_seconds", 0 },
    { "status", "r.status", 0 },
    { "kernel", "r.kernel_id", 0 },
};
#define SORT_COUNT ((int)(sizeof sorts / sizeof sorts[0]))

const char *const db_sort_columns[] = {
    "median_ms", "min_ms", "spread", "tflops", "rel_error", "max_abs_error", "registers", "spills",
    "smem", "compile_seconds", "status", "kernel", NULL,
};

/* "ORDER BY" terms for sort into buf; -1 with the allowed names in err when unknown. */
static int sort_clause(const char *sort, char *buf, size_t size, char *err, size_t len)
{
    const char *name = sort ? sort : "median_ms";
    int reverse = name[0] == '-';
    name += reverse;
    char column[64];
    const char *expr = NULL;
    int desc = 0;
    for (int i = 0; i < SORT_COUNT && !expr; i++)
        if (!strcmp(sorts[i].name, name))
            expr = sorts[i].expr, desc = sorts[i].desc;
    if (!expr && db_param_lookup(name) >= 0) {
        snprintf(column, sizeof column, "k.%s", name);
        expr = column;
    }
    if (!expr) {
        char list[512] = "";
        for (int i = 0; i < SORT_COUNT; i++)
            strcat(strcat(list, sorts[i].name), ", ");
        return db_fail(err, len, "db_print_results: unknown sort column '%s' (%sor a parameter such as BLOCK_M; "
                       "'-' in front reverses)", sort, list);
    }
    /* Missing values last whichever the direction: a failed candidate has no time. */
    snprintf(buf, size, "(%s IS NULL), %s %s, r.kernel_id", expr, expr, desc != reverse ? "DESC" : "ASC");
    return 0;
}

/* Cell text of a real column, "-" when NULL. */
static const char *real_cell(sqlite3_stmt *st, int col, const char *fmt, char *buf, size_t size)
{
    double v = db_column_real(st, col);
    if (isnan(v))
        return "-";
    snprintf(buf, size, fmt, v);
    return buf;
}

static const char *int_cell(sqlite3_stmt *st, int col, char *buf, size_t size)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return "-";
    snprintf(buf, size, "%lld", (long long)sqlite3_column_int64(st, col));
    return buf;
}

/* Parameters the results table shows: the searched ones (the problem fixes the rest). */
static const int shown_params[] = { DB_BLOCK_M, DB_BLOCK_N, DB_NUM_WARPS, DB_NUM_STAGES, DB_CAUSAL_SKIP,
                                    DB_EVEN_M, DB_EVEN_N, DB_DQ_MODE };
#define SHOWN ((int)(sizeof shown_params / sizeof shown_params[0]))

static void flush_device(db_table *t, const db_device *dev, int total, int ok, FILE *out)
{
    fprintf(out, "\n%s (%s, cc %d.%d, %d SMs, driver %s, NVRTC %s): %d results, %d ok\n", dev->name, dev->arch,
            dev->cc_major, dev->cc_minor, dev->sm_count, dev->driver_version, dev->nvrtc_version, total, ok);
    db_table_print(t, out);
}

int db_print_results(db *d, const db_workload *w, const char *sort, FILE *out, char *err, size_t len)
{
    const char *func = "db_print_results";
    char order[256], why[256], wl[256];
    if (d && (!w || !out))
        return db_fail(err, len, "%s: %s is NULL", func, w ? "out" : "w");
    if (w && db_workload_check(w, why, sizeof why) != 0)
        return db_fail(err, len, "%s: %s", func, why);
    if (d && sort_clause(sort, order, sizeof order, err, len) != 0)
        return -1;
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    int64_t workload_id;
    int rc = db_workload_find_tx(d, w, &workload_id, func, err, len);
    if (rc == 0)
        rc = db_fail(err, len, "%s: workload %s is not in %s", func, db_workload_format(w, wl, sizeof wl), d->path);
    if (rc < 0) {
        db_leave(d);
        return -1;
    }
    rc = 0;
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SELECT r.device_id, EXISTS (SELECT 1 FROM winners x WHERE x.result_id = r.id), r.kernel_id, k.family, "
             "k.BLOCK_M, k.BLOCK_N, k.NUM_WARPS, k.NUM_STAGES, k.CAUSAL_SKIP, k.EVEN_M, k.EVEN_N, k.DQ_MODE, "
             "r.status, r.median_ms, r.min_ms, r.spread, r.tflops, r.rel_error, b.registers, "
             "b.spill_store_bytes + b.spill_load_bytes, b.static_smem_bytes, r.message, " DB_DEVICE_COLUMNS("d")
             " FROM results r JOIN kernels k ON k.id = r.kernel_id JOIN devices d ON d.id = r.device_id"
             " LEFT JOIN binaries b ON b.id = r.binary_id WHERE r.workload_id = ?1"
             " ORDER BY d.name, d.arch, d.driver_version, d.nvrtc_version, r.device_id, %s", order);
    sqlite3_stmt *st;
    if (db_prepare(d, sql, &st, func, err, len) != 0) {
        db_leave(d);
        return -1;
    }
    sqlite3_bind_int64(st, 1, workload_id);

    const char *head[8 + SHOWN + 6];
    char align[sizeof head / sizeof head[0] + 1];
    int cols = 0;
    head[cols] = "", align[cols++] = 'l';
    head[cols] = "kernel", align[cols++] = 'r';
    head[cols] = "family", align[cols++] = 'l';
    for (int i = 0; i < SHOWN; i++)
        if (shown_params[i] != DB_DQ_MODE || w->op == DB_OP_BWD)
            head[cols] = db_param_name(shown_params[i]), align[cols++] = 'r';
    const char *rest[] = { "status", "median_ms", "min_ms", "spread", "TFLOP/s", "rel_error", "regs", "spills",
                           "smem", "message" };
    for (int i = 0; i < 10; i++)
        head[cols] = rest[i], align[cols++] = i == 0 || i == 9 ? 'l' : 'r';
    align[cols] = '\0';

    fprintf(out, "workload %s\n", db_workload_format(w, wl, sizeof wl));
    db_table t;
    db_table_init(&t, cols, head, align);
    db_device dev;
    int64_t device_id = 0;
    int total = 0, ok = 0, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_int64(st, 0) != device_id) {
            if (device_id)
                flush_device(&t, &dev, total, ok, out);
            db_table_free(&t);
            db_table_init(&t, cols, head, align);
            device_id = sqlite3_column_int64(st, 0);
            db_device_read(st, 22, &dev);
            total = ok = 0;
        }
        char buf[SHOWN + 10][48], message[64];
        const char *cell[sizeof head / sizeof head[0]];
        int c = 0, b = 0;
        cell[c++] = sqlite3_column_int(st, 1) ? "*" : "";
        cell[c++] = int_cell(st, 2, buf[b++], sizeof buf[0]);
        cell[c++] = (const char *)sqlite3_column_text(st, 3);
        for (int i = 0; i < SHOWN; i++)
            if (shown_params[i] != DB_DQ_MODE || w->op == DB_OP_BWD)
                cell[c++] = db_param_format(shown_params[i], sqlite3_column_int(st, 4 + i), buf[b++], sizeof buf[0]);
        const char *status = (const char *)sqlite3_column_text(st, 12);
        total++;
        ok += status && !strcmp(status, "ok");
        cell[c++] = status;
        cell[c++] = real_cell(st, 13, "%.4f", buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(st, 14, "%.4f", buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(st, 15, "%.3f", buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(st, 16, "%.1f", buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(st, 17, "%.1e", buf[b++], sizeof buf[0]);
        cell[c++] = int_cell(st, 18, buf[b++], sizeof buf[0]);
        cell[c++] = int_cell(st, 19, buf[b++], sizeof buf[0]);
        cell[c++] = int_cell(st, 20, buf[b++], sizeof buf[0]);
        /* One line per row: the first 60 characters of the message, line breaks as spaces. */
        db_column_text(st, 21, message, sizeof message > 61 ? 61 : sizeof message);
        for (char *m = message; *m; m++)
            if (*m == '\n' || *m == '\r' || *m == '\t')
                *m = ' ';
        cell[c++] = message;
        db_table_add(&t, cell);
    }
    if (step != SQLITE_DONE)
        rc = db_fail_sql(d->sql, err, len, func, d->path);
    else if (!device_id)
        fprintf(out, "no results\n");
    else
        flush_device(&t, &dev, total, ok, out);
    if (rc == 0 && t.failed)
        rc = db_fail(err, len, "%s: out of memory", func);
    db_table_free(&t);
    sqlite3_finalize(st);
    db_leave(d);
    return rc;
}

int db_print_best(db *d, FILE *out, char *err, size_t len)
{
    const char *func = "db_print_best";
    if (!d || !out)
        return db_fail(err, len, "%s: %s is NULL", func, d ? "out" : "db");
    db_winner *list;
    int count;
    if (db_winners_list(d, &list, &count, err, len) != 0)
        return -1;
    if (count == 0) {
        fprintf(out, "no winners: %s holds no valid result yet\n", d->path);
        return 0;
    }
    static const char *const head[] = {
        "device", "arch", "op", "dtype", "head_dim", "head_dim_v", "causal", "batch", "heads", "seqlen_q",
        "seqlen_k", "kernel", "family", "BLOCK_M", "BLOCK_N", "NUM_WARPS", "NUM_STAGES", "CAUSAL_SKIP",
        "DQ_MODE", "median_ms", "TFLOP/s", "ok/total",
    };
    db_table t;
    db_table_init(&t, (int)(sizeof head / sizeof head[0]), head, "llllrrrrrrrrlrrrrrrrrr");
    int rc = db_enter(d, func, 0, err, len), entered = rc == 0;
    sqlite3_stmt *st = NULL;
    if (rc == 0)
        rc = db_prepare(d, "SELECT count(*), total(status = 'ok') FROM results WHERE device_id = ?1 AND "
                           "workload_id = ?2", &st, func, err, len);
    for (int i = 0; rc == 0 && i < count; i++) {
        const db_winner *w = &list[i];
        char num[20][32];
        int n = 0;
        const char *cell[sizeof head / sizeof head[0]];
        int c = 0;
        cell[c++] = w->device.name;
        cell[c++] = w->device.arch;
        cell[c++] = db_op_name(w->workload.op);
        cell[c++] = db_dtype_name(w->workload.dtype);
        const int v[] = { w->workload.head_dim, w->workload.head_dim_v, w->workload.causal, w->workload.batch,
                          w->workload.heads, w->workload.seqlen_q, w->workload.seqlen_k };
        for (int j = 0; j < 7; j++)
            snprintf(num[n], sizeof num[0], "%d", v[j]), cell[c++] = num[n++];
        snprintf(num[n], sizeof num[0], "%lld", (long long)w->kernel_id), cell[c++] = num[n++];
        cell[c++] = w->kernel.family;
        const int p[] = { DB_BLOCK_M, DB_BLOCK_N, DB_NUM_WARPS, DB_NUM_STAGES, DB_CAUSAL_SKIP };
        for (int j = 0; j < 5; j++)
            cell[c++] = db_param_format(p[j], w->kernel.p[p[j]], num[n], sizeof num[0]), n++;
        cell[c++] = w->workload.op == DB_OP_BWD ? db_param_format(DB_DQ_MODE, w->kernel.p[DB_DQ_MODE], num[n++],
                                                                  sizeof num[0]) : "-";
        snprintf(num[n], sizeof num[0], "%.4f", w->median_ms), cell[c++] = num[n++];
        if (isnan(w->tflops))
            cell[c++] = "-";
        else
            snprintf(num[n], sizeof num[0], "%.1f", w->tflops), cell[c++] = num[n++];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, w->device_id);
        sqlite3_bind_int64(st, 2, w->workload_id);
        if (sqlite3_step(st) != SQLITE_ROW) {
            rc = db_fail_sql(d->sql, err, len, func, d->path);
            break;
        }
        snprintf(num[n], sizeof num[0], "%d/%d", (int)sqlite3_column_double(st, 1), sqlite3_column_int(st, 0));
        cell[c++] = num[n++];
        db_table_add(&t, cell);
    }
    sqlite3_finalize(st);
    if (entered)
        db_leave(d);
    free(list);
    if (rc == 0 && db_table_print(&t, out) != 0)
        rc = db_fail(err, len, "%s: out of memory", func);
    db_table_free(&t);
    return rc;
}

int db_print_workloads(db *d, FILE *out, char *err, size_t len)
{
    const char *func = "db_print_workloads";
    if (d && !out)
        return db_fail(err, len, "%s: out is NULL", func);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT l.id, " DB_WORKLOAD_COLUMNS("l") ", count(r.id), total(r.status = 'ok'), "
                      "min(CASE WHEN r.status = 'ok' THEN r.median_ms END) FROM workloads l LEFT JOIN results r "
                      "ON r.workload_id = l.id GROUP BY l.id ORDER BY l.op, l.dtype, l.head_dim, l.head_dim_v, "
                      "l.causal, l.batch, l.heads, l.seqlen_q, l.seqlen_k", &st, func, err, len) != 0) {
        db_leave(d);
        return -1;
    }
    static const char *const head[] = { "id", "op", "dtype", "head_dim", "head_dim_v", "causal", "batch", "heads",
                                        "seqlen_q", "seqlen_k", "results", "ok", "best_ms" };
    db_table t;
    db_table_init(&t, (int)(sizeof head / sizeof head[0]), head, "rllrrrrrrrrrr");
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        char num[13][32];
        const char *cell[13];
        for (int c = 0; c < 13; c++)
            cell[c] = num[c];
        snprintf(num[0], sizeof num[0], "%lld", (long long)sqlite3_column_int64(st, 0));
        db_column_text(st, 1, num[1], sizeof num[1]);
        db_column_text(st, 2, num[2], sizeof num[2]);
        for (int c = 3; c < 12; c++)
            snprintf(num[c], sizeof num[0], "%lld", (long long)sqlite3_column_int64(st, c));
        cell[12] = real_cell(st, 12, "%.4f", num[12], sizeof num[12]);
        db_table_add(&t, cell);
    }
    int rc = step == SQLITE_DONE ? 0 : db_fail_sql(d->sql, err, len, func, d->path);
    sqlite3_finalize(st);
    db_leave(d);
    if (rc == 0 && t.rows == 0)
        fprintf(out, "no workloads: nothing was tuned yet\n");
    else if (rc == 0 && db_table_print(&t, out) != 0)
        rc = db_fail(err, len, "%s: out of memory", func);
    db_table_free(&t);
    return rc;
}
