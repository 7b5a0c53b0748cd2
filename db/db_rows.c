/* Devices, kernels and workloads: field checks, find-or-insert by their natural key, and the
 * row readers the queries share. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"

/* 1 when the fixed-size field is a non-empty NUL-terminated string without control
 * characters (the export writes one line per winner). */
static int text_ok(const char *s, size_t size)
{
    if (!s[0] || !memchr(s, '\0', size))
        return 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return 0;
    return 1;
}

int db_device_check(const db_device *dev, char *err, size_t len)
{
    if (!text_ok(dev->name, sizeof dev->name))
        return db_fail(err, len, "device name is empty or has control characters");
    if (!text_ok(dev->arch, sizeof dev->arch))
        return db_fail(err, len, "device arch is empty or has control characters");
    if (!text_ok(dev->driver_version, sizeof dev->driver_version))
        return db_fail(err, len, "device driver_version is empty or has control characters");
    if (!text_ok(dev->nvrtc_version, sizeof dev->nvrtc_version))
        return db_fail(err, len, "device nvrtc_version is empty or has control characters");
    if (dev->cc_major < 1 || dev->cc_minor < 0)
        return db_fail(err, len, "device compute capability %d.%d is not valid", dev->cc_major, dev->cc_minor);
    if (dev->sm_count < 1)
        return db_fail(err, len, "device sm_count=%d is not positive", dev->sm_count);
    return 0;
}

int db_kernel_check(const db_kernel *k, char *err, size_t len)
{
    if (!text_ok(k->family, sizeof k->family))
        return db_fail(err, len, "kernel family is empty or has control characters");
    if (strspn(k->source_hash, "0123456789abcdef") != 16 || k->source_hash[16])
        return db_fail(err, len, "kernel source_hash '%.17s' is not 16 lower-case hex digits", k->source_hash);
    if (!db_dtype_name(k->p[GEN_DTYPE]))
        return db_fail(err, len, "kernel DTYPE=%d is not 0..3", k->p[GEN_DTYPE]);
    if (k->p[GEN_HEAD_DIM] < 1 || k->p[GEN_HEAD_DIM_V] < 1)
        return db_fail(err, len, "kernel HEAD_DIM=%d HEAD_DIM_V=%d: not positive", k->p[GEN_HEAD_DIM],
                       k->p[GEN_HEAD_DIM_V]);
    return 0;
}

/* The mask's fields: each in range, and in the one form db_workload_set_mask makes, so that equal
 * masks are equal keys (a window ending at the diagonal is stored as causal, never as a window). */
static int mask_check(const db_workload *w, char *err, size_t len)
{
    if (w->window != 0 && w->window != 1)
        return db_fail(err, len, "workload window=%d is not 0 or 1", w->window);
    if (w->window_left < -1 || w->window_right < -1)
        return db_fail(err, len, "workload %s=%d is less than -1 (no limit)",
                       w->window_left < -1 ? "window_left" : "window_right",
                       w->window_left < -1 ? w->window_left : w->window_right);
    if (!w->window && (w->window_left || w->window_right))
        return db_fail(err, len, "workload window=0 with window_left=%d window_right=%d: without a window both "
                       "sides are 0", w->window_left, w->window_right);
    if (w->window && w->window_left == -1 && w->window_right == -1)
        return db_fail(err, len, "workload window=1 with window_left=-1 window_right=-1 limits nothing: a window "
                       "limits a side");
    if (w->bottom_right != 0 && w->bottom_right != 1)
        return db_fail(err, len, "workload bottom_right=%d is not 0 or 1", w->bottom_right);
    if (w->bottom_right && !db_workload_masked(w))
        return db_fail(err, len, "workload bottom_right=1 without a mask (causal=0 window=0): only a mask is "
                       "aligned");
    db_workload stored = *w;
    int left, right;
    db_workload_mask_sides(w, &left, &right);
    db_workload_set_mask(&stored, w->causal, w->bottom_right, left, right);
    if (stored.causal != w->causal || stored.window != w->window || stored.window_left != w->window_left
        || stored.window_right != w->window_right || stored.bottom_right != w->bottom_right)
        return db_fail(err, len, "workload mask causal=%d window=%d window_left=%d window_right=%d bottom_right=%d "
                       "is not its stored form causal=%d window=%d window_left=%d window_right=%d bottom_right=%d "
                       "(db_workload_set_mask)", w->causal, w->window, w->window_left, w->window_right,
                       w->bottom_right, stored.causal, stored.window, stored.window_left, stored.window_right,
                       stored.bottom_right);
    return 0;
}

int db_workload_check(const db_workload *w, char *err, size_t len)
{
    if (!db_op_name(w->op))
        return db_fail(err, len, "workload op=%d is not DB_OP_FWD or DB_OP_BWD", w->op);
    if (!db_dtype_name(w->dtype))
        return db_fail(err, len, "workload dtype=%d is not 0..3 (f32, f16, bf16, f64)", w->dtype);
    if (w->causal != 0 && w->causal != 1)
        return db_fail(err, len, "workload causal=%d is not 0 or 1", w->causal);
    const struct { const char *name; int value; } dims[] = {
        { "head_dim", w->head_dim }, { "head_dim_v", w->head_dim_v }, { "batch", w->batch },
        { "heads", w->heads }, { "seqlen_q", w->seqlen_q }, { "seqlen_k", w->seqlen_k },
    };
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].value < 1)
            return db_fail(err, len, "workload %s=%d is less than 1", dims[i].name, dims[i].value);
    if (w->heads_k != 0 && (w->heads_k < 1 || w->heads_k >= w->heads || w->heads % w->heads_k != 0))
        return db_fail(err, len, "workload heads_k=%d must be 0 (no grouping) or fewer than heads=%d and divide it",
                       w->heads_k, w->heads);
    if (w->softcap != 0 && w->softcap != 1)
        return db_fail(err, len, "workload softcap=%d is not 0 or 1", w->softcap);
    if (w->varlen < 0 || w->varlen > 8)
        return db_fail(err, len, "workload varlen=%d is not 0 (dense) or a bucket 1..8", w->varlen);
    if (w->sinks != 0 && w->sinks != 1)
        return db_fail(err, len, "workload sinks=%d is not 0 or 1", w->sinks);
    if (w->tf32 != 0 && w->tf32 != 1)
        return db_fail(err, len, "workload tf32=%d is not 0 or 1", w->tf32);
    if (w->tf32 && w->dtype != 0)
        return db_fail(err, len, "workload tf32=1 with dtype %s: only f32 has products to round to TF32",
                       db_dtype_name(w->dtype));
    return mask_check(w, err, len);
}

/* Runs st (bound, no rows) to completion; OUT: *id, the new row's id. */
static int insert(db *d, sqlite3_stmt *st, int64_t *id, char *err, size_t len)
{
    if (db_step_row(d, st, err, len) != 0)
        return -1;
    *id = sqlite3_last_insert_rowid(d->sql);
    return 0;
}

int db_device_upsert_tx(db *d, const db_device *dev, int64_t *id, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT id FROM devices WHERE name = ?1 AND arch = ?2 AND driver_version = ?3 "
                      "AND nvrtc_version = ?4", &st, err, len) != 0)
        return -1;
    sqlite3_bind_text(st, 1, dev->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, dev->arch, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, dev->driver_version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, dev->nvrtc_version, -1, SQLITE_STATIC);
    int found = db_step_row(d, st, err, len);
    if (found == 1)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (found != 0)
        return found < 0 ? -1 : 0;
    if (db_prepare(d, "INSERT INTO devices (name, arch, cc_major, cc_minor, sm_count, driver_version, "
                      "nvrtc_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &st, err, len) != 0)
        return -1;
    sqlite3_bind_text(st, 1, dev->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, dev->arch, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, dev->cc_major);
    sqlite3_bind_int(st, 4, dev->cc_minor);
    sqlite3_bind_int(st, 5, dev->sm_count);
    sqlite3_bind_text(st, 6, dev->driver_version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, dev->nvrtc_version, -1, SQLITE_STATIC);
    int rc = insert(d, st, id, err, len);
    sqlite3_finalize(st);
    return rc;
}

int db_kernel_upsert_tx(db *d, const db_kernel *k, int64_t *id, char *err, size_t len)
{
    sqlite3_stmt *st;
    char why[256];
    if (db_prepare(d, "SELECT id, " DB_KERNEL_COLUMNS("k") " FROM kernels k WHERE source_hash = ?1", &st, err, len)
        != 0)
        return -1;
    sqlite3_bind_text(st, 1, k->source_hash, -1, SQLITE_STATIC);
    int found = db_step_row(d, st, err, len);
    if (found == 1) {
        db_kernel old;
        *id = sqlite3_column_int64(st, 0);
        const int bad = db_kernel_read(st, 1, &old, why, sizeof why);
        sqlite3_finalize(st);
        if (bad)
            return db_fail(err, len, "database %s: %s", d->path, why);
        if (strcmp(old.family, k->family))
            return db_fail(err, len, "source_hash %s is stored as kernel %lld of family %s, not %s",
                           k->source_hash, (long long)*id, old.family, k->family);
        for (int i = 0; i < GEN_PARAM_COUNT; i++)
            if (old.p[i] != k->p[i])
                return db_fail(err, len, "source_hash %s is stored as kernel %lld with %s=%d, not %d",
                               k->source_hash, (long long)*id, gen_param_name((gen_param)i), old.p[i], k->p[i]);
        return 0;
    }
    sqlite3_finalize(st);
    if (found < 0)
        return -1;
    if (db_prepare(d, "INSERT INTO kernels (family, source_hash) VALUES (?1, ?2)", &st, err, len) != 0)
        return -1;
    sqlite3_bind_text(st, 1, k->family, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, k->source_hash, -1, SQLITE_STATIC);
    int rc = insert(d, st, id, err, len);
    sqlite3_finalize(st);
    /* Every parameter of the table, by name: a new one needs no column. */
    if (rc != 0
        || db_prepare(d, "INSERT INTO kernel_params (kernel_id, name, value) VALUES (?1, ?2, ?3)", &st, err, len) != 0)
        return -1;
    for (int i = 0; rc == 0 && i < GEN_PARAM_COUNT; i++) {
        int64_t unused;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, *id);
        sqlite3_bind_text(st, 2, gen_param_name((gen_param)i), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, k->p[i]);
        rc = insert(d, st, &unused, err, len);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Binds the workload's fields to parameters 1, 2, ... in the table's order (db_workload_fields.h),
 * the extra ones last as one text. */
static void bind_workload(sqlite3_stmt *st, const db_workload *w)
{
    sqlite3_bind_text(st, 1, db_op_name(w->op), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, db_dtype_name(w->dtype), -1, SQLITE_STATIC);
    int param = 3;
#define BIND_(a, name, ...) sqlite3_bind_int(st, param++, w->name);
    DB_WORKLOAD_INT_FIELDS(BIND_, )
#undef BIND_
    char extra[512];
    db_workload_extra_format(w, extra, sizeof extra);
    sqlite3_bind_text(st, param, extra, -1, SQLITE_TRANSIENT);
}

int db_workload_find_tx(db *d, const db_workload *w, int64_t *id, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT id FROM workloads WHERE " DB_WORKLOAD_MATCH, &st, err, len) != 0)
        return -1;
    bind_workload(st, w);
    int found = db_step_row(d, st, err, len);
    if (found == 1)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

int db_workload_upsert_tx(db *d, const db_workload *w, int64_t *id, char *err, size_t len)
{
    int found = db_workload_find_tx(d, w, id, err, len);
    if (found != 0)
        return found < 0 ? -1 : 0;
    sqlite3_stmt *st;
    if (db_prepare(d, "INSERT INTO workloads (" DB_WORKLOAD_NAMES ") VALUES (" DB_WORKLOAD_PARAMS ")", &st, err, len)
        != 0)
        return -1;
    bind_workload(st, w);
    int rc = insert(d, st, id, err, len);
    sqlite3_finalize(st);
    return rc;
}

/* ---- the public calls: check, lock, one transaction ---------------------------------- */

enum { ROW_DEVICE, ROW_KERNEL, ROW_WORKLOAD };

static int upsert(db *d, int kind, const void *row, int64_t *id, const char *func, char *err, size_t len)
{
    char why[256];
    if (!d)
        return db_fail(err, len, "%s: db is NULL", func);
    if (!row || !id)
        return db_fail(err, len, "%s: %s is NULL", func, row ? "id" : "the row");
    int bad = kind == ROW_DEVICE ? db_device_check(row, why, sizeof why)
            : kind == ROW_KERNEL ? db_kernel_check(row, why, sizeof why)
                                 : db_workload_check(row, why, sizeof why);
    if (bad)
        return db_fail(err, len, "%s", why);   /* the checks name the row: "workload op=7 ..." */
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    int rc = db_begin(d, err, len);
    if (rc == 0) {
        rc = kind == ROW_DEVICE ? db_device_upsert_tx(d, row, id, err, len)
           : kind == ROW_KERNEL ? db_kernel_upsert_tx(d, row, id, err, len)
                                : db_workload_upsert_tx(d, row, id, err, len);
        if (rc != 0)
            db_rollback(d);
        else
            rc = db_commit(d, err, len);
    }
    db_leave(d);
    return rc;
}

int db_device_upsert(db *d, const db_device *dev, int64_t *id, char *err, size_t len)
{
    return upsert(d, ROW_DEVICE, dev, id, "db_device_upsert", err, len);
}

int db_kernel_upsert(db *d, const db_kernel *k, int64_t *id, char *err, size_t len)
{
    return upsert(d, ROW_KERNEL, k, id, "db_kernel_upsert", err, len);
}

int db_workload_upsert(db *d, const db_workload *w, int64_t *id, char *err, size_t len)
{
    return upsert(d, ROW_WORKLOAD, w, id, "db_workload_upsert", err, len);
}

int db_workload_find(db *d, const db_workload *w, int64_t *id, char *err, size_t len)
{
    const char *func = "db_workload_find";
    char why[256];
    if (d && (!w || !id))
        return db_fail(err, len, "%s: %s is NULL", func, w ? "id" : "w");
    if (w && db_workload_check(w, why, sizeof why) != 0)
        return db_fail(err, len, "%s", why);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    int found = db_workload_find_tx(d, w, id, err, len);
    db_leave(d);
    return found;
}

int db_kernel_get(db *d, int64_t id, db_kernel *out, char *err, size_t len)
{
    const char *func = "db_kernel_get";
    if (d && !out)
        return db_fail(err, len, "%s: out is NULL", func);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int found = -1;
    if (db_prepare(d, "SELECT " DB_KERNEL_COLUMNS("k") " FROM kernels k WHERE id = ?1", &st, err, len) == 0) {
        char why[256];
        sqlite3_bind_int64(st, 1, id);
        found = db_step_row(d, st, err, len);
        if (found == 1 && db_kernel_read(st, 0, out, why, sizeof why) != 0)
            found = db_fail(err, len, "database %s: %s", d->path, why);
        sqlite3_finalize(st);
    }
    db_leave(d);
    return found;
}

/* ---- row readers ------------------------------------------------------------------ */

int db_device_read(sqlite3_stmt *st, int col, db_device *dev)
{
    memset(dev, 0, sizeof *dev);
    db_column_text(st, col, dev->name, sizeof dev->name);
    db_column_text(st, col + 1, dev->arch, sizeof dev->arch);
    dev->cc_major = sqlite3_column_int(st, col + 2);
    dev->cc_minor = sqlite3_column_int(st, col + 3);
    dev->sm_count = sqlite3_column_int(st, col + 4);
    db_column_text(st, col + 5, dev->driver_version, sizeof dev->driver_version);
    db_column_text(st, col + 6, dev->nvrtc_version, sizeof dev->nvrtc_version);
    return col + 7;
}

int db_workload_read(sqlite3_stmt *st, int col, db_workload *w, char *err, size_t len)
{
    w->op = db_op_parse((const char *)sqlite3_column_text(st, col));
    w->dtype = db_dtype_parse((const char *)sqlite3_column_text(st, col + 1));
    col += 2;
#define READ_(a, name, ...) w->name = sqlite3_column_int(st, col++);
    DB_WORKLOAD_INT_FIELDS(READ_, )
#undef READ_
    if (db_workload_extra_parse((const char *)sqlite3_column_text(st, col), w, err, len) != 0)
        return -1;
    return col + 1;
}

int db_kernel_read(sqlite3_stmt *st, int col, db_kernel *k, char *err, size_t len)
{
    memset(k, 0, sizeof *k);
    db_column_text(st, col, k->family, sizeof k->family);
    db_column_text(st, col + 1, k->source_hash, sizeof k->source_hash);
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        k->p[i] = gen_param_get((gen_param)i)->def;
    const char *text = (const char *)sqlite3_column_text(st, col + 2);
    /* "NAME=VALUE NAME=VALUE": names and integers as kernel_params holds them. */
    for (const char *s = text ? text : ""; *s;) {
        const size_t n = strcspn(s, " ");
        const char *eq = memchr(s, '=', n);
        char name[64];
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - s) : (int)n, s);
        const int param = gen_param_lookup(name);
        if (param < 0 || strcmp(name, gen_param_name((gen_param)param)))
            return db_fail(err, len, "kernel %s (%s) has parameter '%s', unknown to this flashtune (a newer one "
                           "wrote it?): use a newer flashtune", k->source_hash, k->family, name);
        char *end;
        const long v = eq ? strtol(eq + 1, &end, 10) : 0;
        if (!eq || end != s + n || v < INT_MIN || v > INT_MAX)
            return db_fail(err, len, "kernel %s (%s): parameter %.*s is not an integer", k->source_hash, k->family,
                           (int)n, s);
        k->p[param] = (int)v;
        s += n + (s[n] == ' ');
    }
    return 0;
}
