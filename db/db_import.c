/* `flashtune db import`: reads the winners text of db_export. Every line is checked before
 * anything is written; then one transaction adds what is missing, so an import is all or
 * nothing and importing the same text twice changes nothing. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* A finite number field: required, or optional (absent gives NAN). */
static int take_real(db_fields *f, const char *name, int required, double *out, char *err, size_t len)
{
    const char *v = db_field_take(f, name);
    *out = NAN;
    if (!v)
        return required ? db_fail(err, len, "missing field '%s'", name) : 0;
    errno = 0;
    char *end;
    *out = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(*out) || *out < 0)
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
    const char *cc = NULL;
    char tail;
    if (take_text(&f, "device", e->device.name, sizeof e->device.name, err, len)
        || take_text(&f, "arch", e->device.arch, sizeof e->device.arch, err, len))
        rc = -1;
    else if (!(cc = db_field_take(&f, "cc")))
        rc = db_fail(err, len, "missing field 'cc'");
    else if (sscanf(cc, "%d.%d%c", &e->device.cc_major, &e->device.cc_minor, &tail) != 2)
        rc = db_fail(err, len, "field 'cc': '%s' is not MAJOR.MINOR", cc);
    else if (db_field_int(&f, "sm_count", 1, 1 << 20, &e->device.sm_count, err, len)
             || take_text(&f, "driver", e->device.driver_version, sizeof e->device.driver_version, err, len)
             || take_text(&f, "nvrtc", e->device.nvrtc_version, sizeof e->device.nvrtc_version, err, len))
        rc = -1;

    /* The workload: the same fields as db_workload_format, all required here. */
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
        if (p[GEN_DTYPE] != w->dtype || p[GEN_HEAD_DIM] != w->head_dim || p[GEN_HEAD_DIM_V] != w->head_dim_v
            || p[GEN_CAUSAL] != w->causal)
            rc = db_fail(err, len, "the kernel's DTYPE, HEAD_DIM, HEAD_DIM_V and CAUSAL must be the workload's "
                         "dtype, head_dim, head_dim_v and causal");
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

/* Splits text into entries. OUT: *list (malloc'ed), *count. */
static int parse_text(const char *name, const char *text, entry **list, int *count, char *err, size_t len)
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
        if (parse_line(s, e, why, sizeof why) != 0) {
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

/* Inserts one entry's rows (the lock and transaction are held). *sweep_id is created on the
 * first result added. OUT: *added, 1 when a result was written. */
static int store(db *d, const char *name, const char *text, const entry *e, int64_t *sweep_id, int *added,
                 char *err, size_t len)
{
    const char *func = "db_import";
    char why[512];
    int64_t device_id, workload_id, kernel_id;
    *added = 0;
    if (db_device_upsert_tx(d, &e->device, &device_id, func, why, sizeof why)
        || db_workload_upsert_tx(d, &e->workload, &workload_id, func, why, sizeof why)
        || db_kernel_upsert_tx(d, &e->kernel, &kernel_id, func, why, sizeof why))
        return db_fail(err, len, "%s:%d: %s", name, e->line, why);
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT 1 FROM results WHERE device_id = ?1 AND workload_id = ?2 AND kernel_id = ?3", &st,
                   func, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, device_id);
    sqlite3_bind_int64(st, 2, workload_id);
    sqlite3_bind_int64(st, 3, kernel_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return db_fail_sql(d->sql, err, len, func, d->path);

    if (!*sweep_id) {
        char space[1100], hash[17], host[256] = "unknown";
        snprintf(space, sizeof space, "import:%s", name);
        text_hash(text, hash);
        if (gethostname(host, sizeof host - 1) != 0 || !host[0])
            snprintf(host, sizeof host, "unknown");
        host[sizeof host - 1] = '\0';
        if (db_prepare(d, "INSERT INTO sweeps (space_file, space_hash, host, finished_at) VALUES "
                          "(?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))", &st, func, err, len) != 0)
            return -1;
        sqlite3_bind_text(st, 1, space, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, hash, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, host, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return db_fail_sql(d->sql, err, len, func, d->path);
        *sweep_id = sqlite3_last_insert_rowid(d->sql);
    }
    if (db_prepare(d, "INSERT INTO results (sweep_id, device_id, workload_id, kernel_id, status, median_ms, "
                      "tflops) VALUES (?1, ?2, ?3, ?4, 'ok', ?5, ?6)", &st, func, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, *sweep_id);
    sqlite3_bind_int64(st, 2, device_id);
    sqlite3_bind_int64(st, 3, workload_id);
    sqlite3_bind_int64(st, 4, kernel_id);
    db_bind_real(st, 5, e->median_ms);
    db_bind_real(st, 6, e->tflops);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(err, len, "%s:%d: %s", name, e->line, sqlite3_errmsg(d->sql));
    *added = 1;
    return 0;
}

int db_import_text(db *d, const char *name, const char *text, int *added, int *kept, char *err, size_t len)
{
    const char *func = "db_import_text";
    if (added)
        *added = 0;
    if (kept)
        *kept = 0;
    if (d && (!name || !text))
        return db_fail(err, len, "%s: %s is NULL", func, name ? "text" : "name");
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    entry *list;
    int count;
    if (parse_text(name, text, &list, &count, err, len) != 0) {
        db_leave(d);
        return -1;
    }
    int64_t sweep_id = 0;
    int n_added = 0, rc = db_begin(d, func, err, len);
    for (int i = 0; rc == 0 && i < count; i++) {
        int one;
        rc = store(d, name, text, &list[i], &sweep_id, &one, err, len);
        n_added += one;
    }
    if (rc == 0)
        rc = db_commit(d, func, err, len);
    else
        db_rollback(d);
    db_leave(d);
    free(list);
    if (rc == 0) {
        if (added)
            *added = n_added;
        if (kept)
            *kept = count - n_added;
    }
    return rc;
}

int db_import_file(db *d, const char *path, int *added, int *kept, char *err, size_t len)
{
    const char *func = "db_import_file";
    if (added)
        *added = 0;
    if (kept)
        *kept = 0;
    if (!path)
        return db_fail(err, len, "%s: path is NULL", func);
    if (!d)
        return db_fail(err, len, "%s: db is NULL", func);
    FILE *f = fopen(path, "rb");
    if (!f)
        return db_fail(err, len, "%s: cannot read %s: %s", func, path, strerror(errno));
    char *text = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (cap - size < 65536) {
            cap = cap ? 2 * cap : 65536 + 1;
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                fclose(f);
                return db_fail(err, len, "%s: out of memory reading %s", func, path);
            }
            text = grown;
        }
        size_t got = fread(text + size, 1, cap - size - 1, f);
        size += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        return db_fail(err, len, "%s: cannot read %s", func, path);
    }
    text[size] = '\0';
    if (memchr(text, '\0', size)) {
        free(text);
        return db_fail(err, len, "%s: %s is not a text file (it holds NUL bytes)", func, path);
    }
    int rc = db_import_text(d, path, text, added, kept, err, len);
    free(text);
    return rc;
}
