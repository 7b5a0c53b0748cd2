/* `flashtune db import`: reads the winners text of db_export. Every line is checked before
 * anything is written (its form here, what the generator would build through the caller's
 * check); then one transaction adds what is missing and replaces slower winners, so an import
 * is all or nothing and importing the same text twice changes nothing. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_core_internal.h"

typedef struct entry {
    int line;
    db_device device;
    db_workload workload;
    db_kernel kernel;
    double median_ms, tflops;
} entry;

/* A required text field copied into dst (size bytes). */
static int take_text(db_fields *f, const char *name, char *dst, size_t size, char *err, size_t len)
{
    const char *v = db_field_take(f, name);
    if (!v)
        return db_fail(err, len, "missing field '%s'", name);
    if (!*v)
        return db_fail(err, len, "field '%s' is empty", name);
    if (db_copy(dst, size, v) != 0)
        return db_fail(err, len, "field '%s' is longer than %zu characters", name, size - 1);
    return 0;
}

/* The length of s's MAJOR part when s is MAJOR.MINOR, each of 1 to `digits` decimal digits; else 0. */
static size_t major_minor(const char *s, size_t digits)
{
    const size_t major = strspn(s, "0123456789");
    const size_t minor = major && s[major] == '.' ? strspn(s + major + 1, "0123456789") : 0;
    return minor && major <= digits && minor <= digits && !s[major + 1 + minor] ? major : 0;
}

/* A version field: MAJOR.MINOR in decimal digits, as the tuner writes the driver's and NVRTC's. */
static int take_version(db_fields *f, const char *name, char *dst, size_t size, char *err, size_t len)
{
    if (take_text(f, name, dst, size, err, len) != 0)
        return -1;
    if (!major_minor(dst, size))
        return db_fail(err, len, "field '%s': '%s' is not MAJOR.MINOR", name, dst);
    return 0;
}

/* cc: MAJOR.MINOR, each one to three decimal digits (sscanf's %d took "+9.-0" and wrapped
 * 99999999999). */
static int take_cc(db_fields *f, db_device *d, char *err, size_t len)
{
    const char *cc = db_field_take(f, "cc");
    if (!cc)
        return db_fail(err, len, "missing field 'cc'");
    const size_t major = major_minor(cc, 3);
    if (!major)
        return db_fail(err, len, "field 'cc': '%s' is not MAJOR.MINOR (one to three decimal digits each)", cc);
    d->cc_major = atoi(cc);
    d->cc_minor = atoi(cc + major + 1);
    return 0;
}

/* A finite number field in decimal notation (strtod alone also takes hex and "infinity"):
 * required, or optional (absent gives NAN). */
static int take_real(db_fields *f, const char *name, int required, double *out, char *err, size_t len)
{
    const char *v = db_field_take(f, name);
    *out = NAN;
    if (!v)
        return required ? db_fail(err, len, "missing field '%s'", name) : 0;
    errno = 0;
    char *end;
    *out = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(*out) || *out < 0 || v[strspn(v, "0123456789.eE+-")])
        return db_fail(err, len, "field '%s': '%s' is not a non-negative number", name, v);
    return 0;
}

/* One winner line into e; 0, or -1 with the reason. */
static int parse_line(const char *line, entry *e, char *err, size_t len)
{
    db_fields f;
    if (db_fields_parse(line, &f, err, len) != 0)
        return -1;
    memset(e, 0, sizeof *e);
    int rc = 0;
    if (take_text(&f, "device", e->device.name, sizeof e->device.name, err, len)
        || take_text(&f, "arch", e->device.arch, sizeof e->device.arch, err, len) || take_cc(&f, &e->device, err, len))
        rc = -1;
    else if (db_field_int(&f, "sm_count", 1, 1 << 20, &e->device.sm_count, err, len)
             || take_version(&f, "driver", e->device.driver_version, sizeof e->device.driver_version, err, len)
             || take_version(&f, "nvrtc", e->device.nvrtc_version, sizeof e->device.nvrtc_version, err, len))
        rc = -1;

    /* The workload: the same fields as db_workload_format, all required here but the features. */
    const char *op = rc ? NULL : db_field_take(&f, "op");
    const char *dtype = rc ? NULL : db_field_take(&f, "dtype");
    if (rc == 0 && (!op || db_op_parse(op) < 0))
        rc = op ? db_fail(err, len, "field 'op': '%s' is not fwd or bwd", op) : db_fail(err, len, "missing field 'op'");
    if (rc == 0 && (!dtype || db_dtype_parse(dtype) < 0))
        rc = dtype ? db_fail(err, len, "field 'dtype': '%s' is not f32, f16, bf16 or f64", dtype)
                   : db_fail(err, len, "missing field 'dtype'");
    if (rc == 0) {
        db_workload *w = &e->workload;
        w->op = db_op_parse(op);
        w->dtype = db_dtype_parse(dtype);
        if (db_field_int(&f, "head_dim", 1, 1 << 16, &w->head_dim, err, len)
            || db_field_int(&f, "head_dim_v", 1, 1 << 16, &w->head_dim_v, err, len)
            || db_field_int(&f, "causal", 0, 1, &w->causal, err, len)
            || db_field_int(&f, "batch", 1, INT32_MAX, &w->batch, err, len)
            || db_field_int(&f, "heads", 1, INT32_MAX, &w->heads, err, len)
            || db_field_int(&f, "seqlen_q", 1, INT32_MAX, &w->seqlen_q, err, len)
            || db_field_int(&f, "seqlen_k", 1, INT32_MAX, &w->seqlen_k, err, len))
            rc = -1;
        /* The features, which a plain workload's line leaves out (db_workload_format). */
        if (rc == 0 && (db_field_int_or(&f, "heads_k", 0, INT32_MAX, 0, 0, &w->heads_k, err, len)
                        || db_field_int_or(&f, "softcap", 0, 1, 0, 0, &w->softcap, err, len)
                        || db_field_int_or(&f, "window", 0, 1, 0, 0, &w->window, err, len)
                        || db_field_int_or(&f, "window_left", -1, INT32_MAX, 0, 0, &w->window_left, err, len)
                        || db_field_int_or(&f, "window_right", -1, INT32_MAX, 0, 0, &w->window_right, err, len)
                        || db_field_int_or(&f, "bottom_right", 0, 1, 0, 0, &w->bottom_right, err, len)
                        || db_field_int_or(&f, "varlen", 0, 8, 0, 0, &w->varlen, err, len)))
            rc = -1;
        /* The fields added since schema 6, as the list names them (db_workload_check bounds them). */
#define EXTRA_(a, name, ...)                                                                                      \
    if (rc == 0 && db_field_int_or(&f, #name, 0, INT32_MAX, 0, 0, &w->name, err, len))                            \
        rc = -1;
        DB_WORKLOAD_EXTRA_FIELDS(EXTRA_, )
#undef EXTRA_
        if (rc == 0 && db_workload_check(w, err, len))
            rc = -1;
    }

    /* The kernel: family, hash, every parameter of the table by its name; one the text lacks
     * (written before the parameter existed) takes the table's default. */
    if (rc == 0 && (take_text(&f, "family", e->kernel.family, sizeof e->kernel.family, err, len)
                    || take_text(&f, "source_hash", e->kernel.source_hash, sizeof e->kernel.source_hash, err, len)))
        rc = -1;
    for (int p = 0; rc == 0 && p < GEN_PARAM_COUNT; p++) {
        const char *name = gen_param_name((gen_param)p), *v = db_field_take(&f, name);
        if (!v)
            e->kernel.p[p] = gen_param_get((gen_param)p)->def;
        else if (gen_param_parse((gen_param)p, v, &e->kernel.p[p], NULL, 0) != 0)
            rc = db_fail(err, len, "field '%s': '%s' is not a value of it", name, v);
    }
    if (rc == 0 && (take_real(&f, "median_ms", 1, &e->median_ms, err, len)
                    || take_real(&f, "tflops", 0, &e->tflops, err, len)))
        rc = -1;
    if (rc == 0 && !(e->median_ms > 0))
        rc = db_fail(err, len, "field 'median_ms': %g is not positive", e->median_ms);
    if (rc == 0 && db_fields_unused(&f))
        rc = db_fail(err, len, "unknown field '%s'", db_fields_unused(&f));
    if (rc == 0 && (db_device_check(&e->device, err, len) || db_kernel_check(&e->kernel, err, len)))
        rc = -1;
    if (rc == 0) {
        const db_workload *w = &e->workload;
        const int *p = e->kernel.p;
        /* Every mask runs the CAUSAL kernels (the band is a launch argument); a kernel row stores
         * every parameter, so VARLEN is 0 for a dense workload whatever the family. */
        if (p[GEN_DTYPE] != w->dtype || p[GEN_HEAD_DIM] != w->head_dim || p[GEN_HEAD_DIM_V] != w->head_dim_v
            || p[GEN_SOFTCAP] != w->softcap || p[GEN_SINKS] != w->sinks || p[GEN_ALLOW_TF32] != w->tf32)
            rc = db_fail(err, len, "the kernel's DTYPE, HEAD_DIM, HEAD_DIM_V, SOFTCAP, SINKS and ALLOW_TF32 must be "
                         "the workload's dtype, head_dim, head_dim_v, softcap, sinks and tf32");
        else if (p[GEN_CAUSAL] != db_workload_masked(w))
            rc = db_fail(err, len, "the kernel's CAUSAL=%d is not the workload's mask: causal=%d window=%d runs "
                         "CAUSAL=%d kernels", p[GEN_CAUSAL], w->causal, w->window, db_workload_masked(w));
        else if (p[GEN_VARLEN] != (w->varlen != 0))
            rc = db_fail(err, len, "the kernel's VARLEN=%d is not the workload's batch: varlen=%d runs VARLEN=%d "
                         "kernels", p[GEN_VARLEN], w->varlen, w->varlen != 0);
        else if (p[GEN_DATA_DIM] || p[GEN_DATA_DIM_V])
            rc = db_fail(err, len, "the kernel pads its head dims (DATA_DIM=%d DATA_DIM_V=%d): a tuned kernel's are "
                         "the workload's", p[GEN_DATA_DIM], p[GEN_DATA_DIM_V]);
    }
    db_fields_free(&f);
    return rc;
}

static int same_key(const entry *a, const entry *b)
{
    return !strcmp(a->device.name, b->device.name) && !strcmp(a->device.arch, b->device.arch)
        && !strcmp(a->device.driver_version, b->device.driver_version)
        && !strcmp(a->device.nvrtc_version, b->device.nvrtc_version)
        && !memcmp(&a->workload, &b->workload, sizeof a->workload);
}

/* Splits text into entries, each checked by check (may be NULL). OUT: *list (malloc'ed), *count. */
static int parse_text(const char *name, const char *text, db_import_check_fn check, entry **list, int *count,
                      char *err, size_t len)
{
    *list = NULL;
    *count = 0;
    int cap = 0, line_no = 0, header = 0;
    char why[512];
    const char *p = text;
    char *line = NULL;
    size_t line_cap = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        line_no++;
        if (n + 1 > line_cap) {
            char *grown = realloc(line, n + 1);
            if (!grown)
                goto oom;
            line = grown;
            line_cap = n + 1;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (nl ? 1 : 0);
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        const char *s = line + strspn(line, " \t");
        if (!*s || *s == '#')
            continue;
        if (!header) {
            int version;
            char tail;
            if (sscanf(s, "flashtune winners format %d%c", &version, &tail) != 1) {
                db_fail(err, len, "%s:%d: expected 'flashtune winners format %d' before any winner", name,
                        line_no, DB_TEXT_FORMAT);
                goto fail;
            }
            if (version < 1 || version > DB_TEXT_FORMAT) {
                db_fail(err, len, "%s:%d: format %d is not one this flashtune reads (1..%d)", name, line_no,
                        version, DB_TEXT_FORMAT);
                goto fail;
            }
            header = 1;
            continue;
        }
        if (*count == cap) {
            cap = cap ? 2 * cap : 64;
            entry *grown = realloc(*list, (size_t)cap * sizeof **list);
            if (!grown)
                goto oom;
            *list = grown;
        }
        entry *e = &(*list)[*count];
        if (parse_line(s, e, why, sizeof why) != 0
            || (check && check(&e->device, &e->workload, &e->kernel, why, sizeof why) != 0)) {
            db_fail(err, len, "%s:%d: %s", name, line_no, why);
            goto fail;
        }
        e->line = line_no;
        for (int i = 0; i < *count; i++)
            if (same_key(&(*list)[i], e)) {
                db_fail(err, len, "%s:%d: the same device and workload as line %d", name, line_no,
                        (*list)[i].line);
                goto fail;
            }
        (*count)++;
    }
    if (!header) {
        db_fail(err, len, "%s: no 'flashtune winners format %d' line: not a winners file", name, DB_TEXT_FORMAT);
        goto fail;
    }
    free(line);
    return 0;
oom:
    db_fail(err, len, "%s:%d: out of memory", name, line_no);
fail:
    free(line);
    free(*list);
    *list = NULL;
    *count = 0;
    return -1;
}

/* 64-bit FNV-1a of the text, as the generator prints its hashes: the import sweep's space_hash. */
static void text_hash(const char *text, char out[17])
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* One row of a single-row query with up to three int64 parameters and a text one: 1 found
 * (OUT: *id from column 0, *ms from column 1 when ms is not NULL; *ok 1 when column 2 is 'ok'),
 * 0 none, -1 error. */
static int query_row(db *d, const char *sql, const int64_t *args, int nargs, const char *text_arg, int64_t *id,
                     double *ms, int *ok, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (db_prepare(d, sql, &st, err, len) != 0)
        return -1;
    for (int i = 0; i < nargs; i++)
        sqlite3_bind_int64(st, i + 1, args[i]);
    if (text_arg)
        sqlite3_bind_text(st, nargs + 1, text_arg, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        if (ms)
            *ms = db_column_real(st, 1);
        if (ok)
            *ok = sqlite3_column_type(st, 2) == SQLITE_TEXT && !strcmp((const char *)sqlite3_column_text(st, 2), "ok");
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : db_fail_sql(d->sql, err, len, d->path);
}

/* The import's sweep row, created before the first result it writes. */
static int import_sweep(db *d, const char *name, const char *text, int64_t *sweep_id, char *err, size_t len)
{
    if (*sweep_id)
        return 0;
    char space[1100], hash[17], host[256] = "unknown";
    snprintf(space, sizeof space, "import:%s", name);
    text_hash(text, hash);
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    sqlite3_stmt *st;
    if (db_prepare(d, "INSERT INTO sweeps (space_file, space_hash, host, finished_at) VALUES "
                      "(?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))", &st, err, len) != 0)
        return -1;
    sqlite3_bind_text(st, 1, space, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, host, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail_sql(d->sql, err, len, d->path);
    *sweep_id = sqlite3_last_insert_rowid(d->sql);
    return 0;
}

enum { ADDED, REPLACED, KEPT };

/* The line's kernel declared the winner of its (device, workload): a winner declared where it was
 * tuned, which the view then serves and the next sweep keeps while it ties. */
static int declare_line(db *d, const char *name, const entry *e, int64_t device_id, int64_t workload_id,
                        int64_t kernel_id, char *err, size_t len)
{
    char why[512];
    const db_declared c = { .kernel_id = kernel_id, .reason = DB_DECLARED_IMPORTED, .behind = NAN, .neighbours = -1,
                            .spills = -1 };
    if (db_declared_put_tx(d, device_id, workload_id, &c, why, sizeof why) != 0)
        return db_fail(err, len, "%s:%d: %s", name, e->line, why);
    return 0;
}

/* Stores one entry (the lock and transaction are held). Its (device, workload) without a
 * winner gets its result; with one, a faster line becomes the winner unless keep. A result of
 * the same kernel that failed on this device is never overwritten, nor one a sweep timed here (the
 * line then only declares its kernel). OUT: *what, ADDED, REPLACED or KEPT. */
static int store(db *d, const char *name, const char *text, const entry *e, int keep, int64_t *sweep_id,
                 int *what, char *err, size_t len)
{
    char why[512];
    int64_t device_id, workload_id, kernel_id = 0, winner_kernel = 0, result_id = 0;
    double winner_ms = NAN;
    int result_ok = 0;
    *what = KEPT;
    if (db_device_upsert_tx(d, &e->device, &device_id, why, sizeof why)
        || db_workload_upsert_tx(d, &e->workload, &workload_id, why, sizeof why))
        return db_fail(err, len, "%s:%d: %s", name, e->line, why);
    const int64_t key[2] = { device_id, workload_id };
    int has_winner = query_row(d, "SELECT kernel_id, median_ms FROM winners WHERE device_id = ?1 AND workload_id = ?2",
                               key, 2, NULL, &winner_kernel, &winner_ms, NULL, err, len);
    int has_kernel = has_winner < 0 ? -1
                   : query_row(d, "SELECT id FROM kernels WHERE source_hash = ?1", NULL, 0, e->kernel.source_hash,
                               &kernel_id, NULL, NULL, err, len);
    if (has_kernel < 0)
        return -1;
    if (has_winner && has_kernel && kernel_id == winner_kernel && !keep) {
        /* Already served (the least median of a workload none declared): declared now, so that it
         * guards the next sweep as every imported line does. */
        int64_t declared_kernel;
        const int declared = query_row(d, "SELECT kernel_id FROM declared WHERE device_id = ?1 AND workload_id = ?2",
                                       key, 2, NULL, &declared_kernel, NULL, NULL, err, len);
        return declared ? (declared < 0 ? -1 : 0) : declare_line(d, name, e, device_id, workload_id, kernel_id, err, len);
    }
    if (has_winner && (keep || !(e->median_ms < winner_ms)))
        return 0;
    if (db_kernel_upsert_tx(d, &e->kernel, &kernel_id, why, sizeof why))
        return db_fail(err, len, "%s:%d: %s", name, e->line, why);
    const int64_t row[3] = { device_id, workload_id, kernel_id };
    int has_result = query_row(d, "SELECT id, median_ms, status FROM results WHERE device_id = ?1 AND workload_id = ?2 "
                                  "AND kernel_id = ?3", row, 3, NULL, &result_id, NULL, &result_ok, err, len);
    if (has_result < 0)
        return -1;
    if (has_result && !result_ok)
        return 0;
    /* The line's kernel timed here by a sweep (the served winner being another, kept within the
     * timing noise): the line declares it, and its own timing stays, not the line's figure. */
    int64_t timed_here = 0;
    if (has_result && query_row(d, "SELECT s.space_file NOT LIKE 'import:%' FROM results r JOIN sweeps s ON "
                                   "s.id = r.sweep_id WHERE r.id = ?1", &result_id, 1, NULL, &timed_here, NULL, NULL,
                                err, len) < 0)
        return -1;
    if (timed_here) {
        *what = REPLACED;
        return declare_line(d, name, e, device_id, workload_id, kernel_id, err, len);
    }
    if (import_sweep(d, name, text, sweep_id, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    const char *sql = has_result
        ? "UPDATE results SET sweep_id = ?1, median_ms = ?5, tflops = ?6, min_ms = NULL, spread = NULL, "
          "rel_error = NULL, max_abs_error = NULL, message = NULL, sm_clock_mhz = NULL, clock_events = NULL, "
          "measured_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?7"
        : "INSERT INTO results (sweep_id, device_id, workload_id, kernel_id, status, median_ms, tflops) "
          "VALUES (?1, ?2, ?3, ?4, 'ok', ?5, ?6)";
    if (db_prepare(d, sql, &st, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, *sweep_id);
    if (!has_result) {
        sqlite3_bind_int64(st, 2, device_id);
        sqlite3_bind_int64(st, 3, workload_id);
        sqlite3_bind_int64(st, 4, kernel_id);
    }
    db_bind_real(st, 5, e->median_ms);
    db_bind_real(st, 6, e->tflops);
    if (has_result)
        sqlite3_bind_int64(st, 7, result_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(err, len, "%s:%d: %s", name, e->line, sqlite3_errmsg(d->sql));
    *what = has_winner ? REPLACED : ADDED;
    return declare_line(d, name, e, device_id, workload_id, kernel_id, err, len);
}

int db_import_check(const char *name, const char *text, const db_import_options *opt, int *count, char *err,
                    size_t len)
{
    if (count)
        *count = 0;
    if (!name || !text)
        return db_fail(err, len, "db_import_check: %s is NULL", name ? "text" : "name");
    entry *list;
    int n;
    if (parse_text(name, text, opt ? opt->check : NULL, &list, &n, err, len) != 0)
        return -1;
    free(list);
    if (count)
        *count = n;
    return 0;
}

int db_import_text(db *d, const char *name, const char *text, const db_import_options *opt,
                   db_import_counts *counts, char *err, size_t len)
{
    const char *func = "db_import_text";
    if (counts)
        memset(counts, 0, sizeof *counts);
    if (d && (!name || !text))
        return db_fail(err, len, "%s: %s is NULL", func, name ? "text" : "name");
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    entry *list;
    int count;
    if (parse_text(name, text, opt ? opt->check : NULL, &list, &count, err, len) != 0) {
        db_leave(d);
        return -1;
    }
    int64_t sweep_id = 0;
    int n[3] = { 0, 0, 0 }, rc = db_begin(d, err, len);
    for (int i = 0; rc == 0 && i < count; i++) {
        int what;
        rc = store(d, name, text, &list[i], opt && opt->keep, &sweep_id, &what, err, len);
        n[what]++;
    }
    if (rc == 0)
        rc = db_commit(d, err, len);
    else
        db_rollback(d);
    db_leave(d);
    free(list);
    if (rc == 0 && counts) {
        counts->added = n[ADDED];
        counts->replaced = n[REPLACED];
        counts->kept = n[KEPT];
    }
    return rc;
}

int db_import_read(const char *path, char **text, char *err, size_t len)
{
    if (text)
        *text = NULL;
    if (!path || !text)
        return db_fail(err, len, "db_import_read: %s is NULL", path ? "text" : "path");
    return db_text_file_read(path, "winners file", DB_IMPORT_MAX_BYTES, text, err, len);
}

int db_import_file(db *d, const char *path, const db_import_options *opt, db_import_counts *counts, char *err,
                   size_t len)
{
    const char *func = "db_import_file";
    if (counts)
        memset(counts, 0, sizeof *counts);
    if (!path)
        return db_fail(err, len, "%s: path is NULL", func);
    if (!d)
        return db_fail(err, len, "%s: db is NULL", func);
    char *text;
    if (db_import_read(path, &text, err, len) != 0)
        return -1;
    int rc = db_import_text(d, path, text, opt, counts, err, len);
    free(text);
    return rc;
}
