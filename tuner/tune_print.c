/* The CLI's tables: `flashtune results` (a workload's candidates, or the list of workloads) and
 * `flashtune best` (the winners), printed from the rows db/ returns. Which parameters appear
 * comes from the parameter table and the family catalogue, so a new one needs no edit here. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"
#include "tune_print.h"
#include "tune_clocks.h"
#include "tune_table.h"

/* What the workload line states already: the kernel's copy of these is the workload's (SOFTCAP:
 * a tuned workload has no softcap, so its kernels have SOFTCAP 0; DATA_DIM, DATA_DIM_V: its head
 * dims are the kernels', so they pad nothing and have 0; VARLEN: it is a dense batch, 0; SINKS:
 * the workload's sinks). */
static int stated_by_workload(gen_param p)
{
    return p == GEN_DTYPE || p == GEN_HEAD_DIM || p == GEN_HEAD_DIM_V || p == GEN_CAUSAL || p == GEN_SOFTCAP ||
           p == GEN_DATA_DIM || p == GEN_DATA_DIM_V || p == GEN_VARLEN || p == GEN_SINKS;
}

/* 1 when some family of the catalogue for op (DB_OP_FWD, DB_OP_BWD) uses p. */
static int op_uses(int op, gen_param p)
{
    int count;
    const gen_family *const *all = gen_family_list(&count);
    for (int k = 0; k < count; k++)
        if (all[k]->backward == (op == DB_OP_BWD) && (all[k]->params & GEN_BIT(p)))
            return 1;
    return 0;
}

/* Cell text of a real value, "-" when not measured; machine formats keep 10 digits. */
/* A mask beyond causal: "L,R" for a window's sides (-1 no limit), "br" for a bottom-right
 * diagonal, both, or "-". */
static const char *window_cell(const db_workload *w, char *buf, size_t size)
{
    if (w->window)
        snprintf(buf, size, "%d,%d%s", w->window_left, w->window_right, w->bottom_right ? " br" : "");
    else
        snprintf(buf, size, "%s", w->bottom_right ? "br" : "-");
    return buf;
}

static const char *real_cell(double v, const char *fmt, tune_format f, char *buf, size_t size)
{
    if (isnan(v))
        return "-";
    snprintf(buf, size, f == TUNE_FORMAT_TEXT ? fmt : "%.10g", v);
    return buf;
}

static const char *int_cell(long long v, char *buf, size_t size)
{
    if (v < 0)
        return "-";
    snprintf(buf, size, "%lld", v);
    return buf;
}

/* Text only: a device's heading and its table. 0 or -1 (err). */
static int flush_device(tune_table *t, const db_device *dev, int total, int ok, FILE *out, char *err, size_t len)
{
    fprintf(out, "\n%s (%s, cc %d.%d, %d SMs, driver %s, NVRTC %s): %d results, %d ok\n", dev->name, dev->arch,
            dev->cc_major, dev->cc_minor, dev->sm_count, dev->driver_version, dev->nvrtc_version, total, ok);
    return tune_table_write(t, TUNE_FORMAT_TEXT, out, err, len);
}

/* Prefixes err (tune_table_write's reason) with the function's name; returns -1. */
static int failed_in(const char *function, char *err, size_t len)
{
    char why[256];
    snprintf(why, sizeof why, "%s", err);
    snprintf(err, len, "%s: %s", function, why);
    return -1;
}

/* After a line printed outside a table: 0, or -1 with the reason when out refused it. */
static int check_written(const char *function, FILE *out, char *err, size_t len)
{
    if (!ferror(out))
        return 0;
    snprintf(err, len, "%s: writing the output failed: %s", function, errno ? strerror(errno) : "I/O error");
    return -1;
}

int tune_print_results_as(db *d, const db_workload *w, const char *sort, tune_format f, FILE *out, char *err,
                          size_t len)
{
    char wl[256];
    db_result_row *rows;
    int count;
    if (d && !out)
        return snprintf(err, len, "tune_print_results: out is NULL"), -1;
    if (db_results_list(d, w, sort, &rows, &count, err, len) != 0)
        return -1;

    const int text = f == TUNE_FORMAT_TEXT;
    gen_param shown[GEN_PARAM_COUNT];
    int nshown = 0;
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        if (!stated_by_workload((gen_param)i) && op_uses(w->op, (gen_param)i))
            shown[nshown++] = (gen_param)i;
    const char *head[5 + GEN_PARAM_COUNT + 12];
    char align[sizeof head / sizeof head[0] + 1];
    int cols = 0;
    if (!text) {
        head[cols] = "device", align[cols++] = 'l';
        head[cols] = "arch", align[cols++] = 'l';
    }
    head[cols] = text ? "" : "winner", align[cols++] = text ? 'l' : 'b';
    head[cols] = "kernel", align[cols++] = 'r';
    head[cols] = "family", align[cols++] = 'l';
    for (int i = 0; i < nshown; i++)
        head[cols] = gen_param_name(shown[i]), align[cols++] = 'r';
    /* The clocks (tune_clocks.h): the least SM clock while timed and the reasons it was held. */
    const char *rest[] = { "status", "median_ms", "min_ms", "spread", text ? "TFLOP/s" : "tflops", "rel_error",
                           text ? "MHz" : "sm_mhz", text ? "clocks" : "clock_events", text ? "regs" : "registers",
                           "spills", "smem", "message" };
    enum { REST = sizeof rest / sizeof rest[0] };
    for (int i = 0; i < REST; i++)
        head[cols] = rest[i], align[cols++] = i == 0 || i == 7 || i == REST - 1 ? 'l' : 'r';
    align[cols] = '\0';

    if (text)
        fprintf(out, "workload %s\n", db_workload_format(w, wl, sizeof wl));
    tune_table t;
    tune_table_init(&t, cols, head, align);
    int total = 0, ok = 0, rc = 0;
    for (int r = 0; r < count && rc == 0; r++) {
        const db_result_row *row = &rows[r];
        if (text && (r == 0 || row->device_id != rows[r - 1].device_id)) {
            if (r > 0)
                rc = flush_device(&t, &rows[r - 1].device, total, ok, out, err, len);
            tune_table_free(&t);
            tune_table_init(&t, cols, head, align);
            total = ok = 0;
        }
        char buf[GEN_PARAM_COUNT + 12][48], message[61], reasons[160];   /* every reason's name: 110 */
        const char *cell[sizeof head / sizeof head[0]];
        int c = 0, b = 0;
        if (!text) {
            cell[c++] = row->device.name;
            cell[c++] = row->device.arch;
        }
        cell[c++] = row->winner ? "*" : "";
        cell[c++] = int_cell(row->kernel_id, buf[b++], sizeof buf[0]);
        cell[c++] = row->kernel.family;
        for (int i = 0; i < nshown; i++)
            cell[c++] = gen_param_format(shown[i], row->kernel.p[shown[i]], buf[b++], sizeof buf[0]);
        total++;
        ok += row->status == DB_STATUS_OK;
        cell[c++] = db_status_name(row->status);
        cell[c++] = real_cell(row->median_ms, "%.4f", f, buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(row->min_ms, "%.4f", f, buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(row->spread, "%.3f", f, buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(row->tflops, "%.1f", f, buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(row->rel_error, "%.1e", f, buf[b++], sizeof buf[0]);
        cell[c++] = real_cell(row->sm_mhz, "%.0f", f, buf[b++], sizeof buf[0]);
        cell[c++] = tune_clock_events_name(row->clock_events, reasons, sizeof reasons);
        cell[c++] = int_cell(row->registers, buf[b++], sizeof buf[0]);
        cell[c++] = int_cell(row->spills, buf[b++], sizeof buf[0]);
        cell[c++] = int_cell(row->smem, buf[b++], sizeof buf[0]);
        /* Text: one line per row, the first 60 characters of the message, line breaks as spaces. */
        snprintf(message, sizeof message, "%.60s", row->message);
        for (char *m = message; *m; m++)
            if (*m == '\n' || *m == '\r' || *m == '\t')
                *m = ' ';
        cell[c++] = text ? message : row->message;
        tune_table_add(&t, cell);
    }
    if (rc == 0 && !text)
        rc = tune_table_write(&t, f, out, err, len);
    else if (rc == 0 && count == 0)
        fprintf(out, "no results\n");
    else if (rc == 0)
        rc = flush_device(&t, &rows[count - 1].device, total, ok, out, err, len);
    tune_table_free(&t);
    free(rows);
    if (rc)
        return failed_in("tune_print_results", err, len);
    return check_written("tune_print_results", out, err, len);
}

int tune_print_best_as(db *d, tune_format f, FILE *out, char *err, size_t len)
{
    if (!d || !out)
        return snprintf(err, len, "tune_print_best: %s is NULL", d ? "out" : "db"), -1;
    db_winner *list;
    int count;
    if (db_winners_list(d, &list, &count, err, len) != 0)
        return -1;
    const int text = f == TUNE_FORMAT_TEXT;
    if (count == 0 && text) {
        free(list);
        fprintf(out, "no winners: %s holds no valid result yet\n", db_file_path(d));
        return check_written("tune_print_best", out, err, len);
    }
    gen_param shown[GEN_PARAM_COUNT];
    int nshown = 0;
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        if (gen_param_get((gen_param)i)->role == GEN_ROLE_TUNABLE)
            shown[nshown++] = (gen_param)i;
    static const char *const fields[] = { "device", "arch", "op", "dtype", "head_dim", "head_dim_v", "causal",
                                          "batch", "heads", "heads_k", "softcap", "seqlen_q", "seqlen_k", "window",
                                          "varlen", "kernel", "family" };
    enum { FIELDS = sizeof fields / sizeof fields[0] };
    const char *head[FIELDS + GEN_PARAM_COUNT + 6];   /* + times, counts, declared, behind */
    char align[sizeof head / sizeof head[0] + 1];
    int cols = 0;
    for (int i = 0; i < FIELDS; i++)
        head[cols] = fields[i], align[cols++] = i < 4 || i == FIELDS - 1 ? 'l' : 'r';
    for (int i = 0; i < nshown; i++)
        head[cols] = gen_param_name(shown[i]), align[cols++] = 'r';
    head[cols] = "median_ms", align[cols++] = 'r';
    head[cols] = text ? "TFLOP/s" : "tflops", align[cols++] = 'r';
    if (text) {
        head[cols] = "ok/total", align[cols++] = 'r';
    } else {
        head[cols] = "ok", align[cols++] = 'r';
        head[cols] = "total", align[cols++] = 'r';
    }
    /* Why it is the winner (db_declare_winners): text "kept +1.2%"; CSV and JSON the reason and
     * how far behind the fastest apart. "-": none declared (the least median). */
    head[cols] = "declared", align[cols++] = 'l';
    if (!text)
        head[cols] = "behind", align[cols++] = 'r';
    align[cols] = '\0';
    tune_table t;
    tune_table_init(&t, cols, head, align);
    int rc = 0;
    for (int i = 0; rc == 0 && i < count; i++) {
        const db_winner *w = &list[i];
        char num[sizeof head / sizeof head[0]][32];
        const char *cell[sizeof head / sizeof head[0]];
        int c = 0, n = 0;
        cell[c++] = w->device.name;
        cell[c++] = w->device.arch;
        cell[c++] = db_op_name(w->workload.op);
        cell[c++] = db_dtype_name(w->workload.dtype);
        const int v[] = { w->workload.head_dim, w->workload.head_dim_v, w->workload.causal, w->workload.batch,
                          w->workload.heads, w->workload.heads_k, w->workload.softcap, w->workload.seqlen_q,
                          w->workload.seqlen_k };
        for (int j = 0; j < 9; j++)
            snprintf(num[n], sizeof num[0], "%d", v[j]), cell[c++] = num[n++];
        cell[c++] = window_cell(&w->workload, num[n++], sizeof num[0]);
        snprintf(num[n], sizeof num[0], "%d", w->workload.varlen), cell[c++] = num[n++];
        snprintf(num[n], sizeof num[0], "%lld", (long long)w->kernel_id), cell[c++] = num[n++];
        cell[c++] = w->kernel.family;
        for (int j = 0; j < nshown; j++)
            cell[c++] = op_uses(w->workload.op, shown[j])
                            ? gen_param_format(shown[j], w->kernel.p[shown[j]], num[n++], sizeof num[0]) : "-";
        cell[c++] = real_cell(w->median_ms, "%.4f", f, num[n++], sizeof num[0]);
        cell[c++] = real_cell(w->tflops, "%.1f", f, num[n++], sizeof num[0]);
        int total = 0, ok = 0;
        rc = db_result_counts(d, w->device_id, w->workload_id, &total, &ok, err, len);
        if (text) {
            snprintf(num[n], sizeof num[0], "%d/%d", ok, total), cell[c++] = num[n++];
        } else {
            snprintf(num[n], sizeof num[0], "%d", ok), cell[c++] = num[n++];
            snprintf(num[n], sizeof num[0], "%d", total), cell[c++] = num[n++];
        }
        db_declared dc;
        const int has = rc == 0 ? db_declared_get(d, w->device_id, w->workload_id, &dc, err, len) : 0;
        if (has < 0)
            rc = -1;
        const int declared = has == 1 && dc.kernel_id == w->kernel_id;   /* else the view fell back */
        if (text && declared && dc.behind > 0)
            snprintf(num[n], sizeof num[0], "%s +%.1f%%", db_declared_name(dc.reason), 100 * dc.behind);
        else
            snprintf(num[n], sizeof num[0], "%s", declared ? db_declared_name(dc.reason) : "-");
        cell[c++] = num[n++];
        if (!text)
            cell[c++] = real_cell(declared ? dc.behind : NAN, "%.4f", f, num[n++], sizeof num[0]);
        tune_table_add(&t, cell);
    }
    free(list);
    if (rc == 0 && tune_table_write(&t, f, out, err, len) != 0)
        rc = failed_in("tune_print_best", err, len);
    tune_table_free(&t);
    return rc;
}

int tune_print_workloads_as(db *d, tune_format f, FILE *out, char *err, size_t len)
{
    if (d && !out)
        return snprintf(err, len, "tune_print_workloads: out is NULL"), -1;
    db_workload_row *rows;
    int count;
    if (db_workloads_list(d, &rows, &count, err, len) != 0)
        return -1;
    static const char *const head[] = { "id", "op", "dtype", "head_dim", "head_dim_v", "causal", "batch", "heads",
                                        "heads_k", "softcap", "seqlen_q", "seqlen_k", "window", "varlen", "results",
                                        "ok", "best_ms" };
    enum { COLS = sizeof head / sizeof head[0] };
    tune_table t;
    tune_table_init(&t, COLS, head, "rllrrrrrrrrrrrrrr");
    for (int r = 0; r < count; r++) {
        const db_workload_row *row = &rows[r];
        const db_workload *w = &row->workload;
        char num[COLS][32];
        const char *cell[COLS];
        for (int c = 0; c < COLS; c++)
            cell[c] = num[c];
        snprintf(num[0], sizeof num[0], "%lld", (long long)row->id);
        snprintf(num[1], sizeof num[1], "%s", db_op_name(w->op) ? db_op_name(w->op) : "");
        snprintf(num[2], sizeof num[2], "%s", db_dtype_name(w->dtype) ? db_dtype_name(w->dtype) : "");
        const int v[] = { w->head_dim, w->head_dim_v, w->causal, w->batch, w->heads, w->heads_k, w->softcap,
                          w->seqlen_q, w->seqlen_k, 0, w->varlen, row->results, row->ok };
        for (int c = 3; c < COLS - 1; c++)
            snprintf(num[c], sizeof num[0], "%d", v[c - 3]);
        cell[12] = window_cell(w, num[12], sizeof num[0]);   /* the 0 above */
        cell[COLS - 1] = real_cell(row->best_ms, "%.4f", f, num[COLS - 1], sizeof num[COLS - 1]);
        tune_table_add(&t, cell);
    }
    free(rows);
    int rc = 0;
    if (count == 0 && f == TUNE_FORMAT_TEXT) {
        fprintf(out, "no workloads: nothing was tuned yet\n");
        rc = check_written("tune_print_workloads", out, err, len);
    } else if (tune_table_write(&t, f, out, err, len) != 0) {
        rc = failed_in("tune_print_workloads", err, len);
    }
    tune_table_free(&t);
    return rc;
}

int tune_print_results(db *d, const db_workload *w, const char *sort, FILE *out, char *err, size_t len)
{
    return tune_print_results_as(d, w, sort, TUNE_FORMAT_TEXT, out, err, len);
}

int tune_print_best(db *d, FILE *out, char *err, size_t len)
{
    return tune_print_best_as(d, TUNE_FORMAT_TEXT, out, err, len);
}

int tune_print_workloads(db *d, FILE *out, char *err, size_t len)
{
    return tune_print_workloads_as(d, TUNE_FORMAT_TEXT, out, err, len);
}

void tune_print_declare_counts(FILE *out, const char *prefix, const db_declare_counts *c, double margin)
{
    fprintf(out, "%s%d workloads (a tie: within %g %% of the fastest, or the spreads): %d the fastest, %d the stored "
            "winner kept, %d a tied kernel without spills, %d the tied kernel that holds at neighbouring shapes",
            prefix, c->workloads, 100 * margin, c->by_reason[DB_DECLARED_FASTEST], c->by_reason[DB_DECLARED_KEPT],
            c->by_reason[DB_DECLARED_SPILL_FREE], c->by_reason[DB_DECLARED_HOLDS]);
    if (c->untimed)   /* an imported figure is another run's: it does not keep a winner */
        fprintf(out, "; %d stored winner%s without a valid timing here, replaced", c->untimed, c->untimed == 1 ? "" : "s");
    fprintf(out, "\n");
}
