/* Winners: the best kernel for a device and workload (exact or nearest tuned shape), and the
 * full list in a stable order for `flashtune best` and the export. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"

#define WINNER_SELECT \
    "SELECT w.device_id, w.workload_id, w.kernel_id, w.result_id, w.median_ms, w.tflops, " \
    DB_DEVICE_COLUMNS("d") ", " DB_WORKLOAD_COLUMNS("l") ", " DB_KERNEL_COLUMNS("k") \
    " FROM winners w JOIN devices d ON d.id = w.device_id JOIN workloads l ON l.id = w.workload_id" \
    " JOIN kernels k ON k.id = w.kernel_id"

/* The export order: a total order, so the same database always prints the same text. */
#define WINNER_ORDER \
    " ORDER BY d.name, d.arch, d.driver_version, d.nvrtc_version, l.op, l.dtype, l.head_dim, l.head_dim_v," \
    " l.causal, l.heads_k, l.softcap, l.window, l.window_left, l.window_right, l.bottom_right, l.varlen," \
    " l.batch, l.heads, l.seqlen_q, l.seqlen_k"

/* 0, or -1 with err when the kernel's parameters cannot be read (db_kernel_read). */
static int read_winner(sqlite3_stmt *st, db_winner *w, char *err, size_t len)
{
    memset(w, 0, sizeof *w);
    w->device_id = sqlite3_column_int64(st, 0);
    w->workload_id = sqlite3_column_int64(st, 1);
    w->kernel_id = sqlite3_column_int64(st, 2);
    w->result_id = sqlite3_column_int64(st, 3);
    w->median_ms = db_column_real(st, 4);
    w->tflops = db_column_real(st, 5);
    int col = db_device_read(st, 6, &w->device);
    col = db_workload_read(st, col, &w->workload, err, len);
    return col < 0 ? -1 : db_kernel_read(st, col, &w->kernel, err, len);
}

/* |ln(a/b)|: how far apart two sizes are, scale-free. */
static double log_gap(double a, double b)
{
    return fabs(log(a / b));
}

/* How full a workload's grid keeps a GPU of sm_count SMs: its tiles of 128 rows over the SMs,
 * counted in waves with the fraction kept (not rounded up), capped at 4, past which the fill no
 * longer sets which kernel wins. The forward's tiles are query tiles of each query head; the
 * backward's key tiles of each K/V head; a packed batch's are its longest lengths' scaled by its
 * bucket's fill. */
static double grid_fill(const db_workload *w, int sm_count)
{
    const int backward = w->op == DB_OP_BWD;
    const double rows = backward ? w->seqlen_k : w->seqlen_q;
    const double heads = backward && w->heads_k ? w->heads_k : w->heads;
    double tiles = (double)w->batch * heads * ceil(rows / 128);
    if (w->varlen)
        tiles *= db_varlen_fill(w->varlen);
    return fmin(tiles / sm_count, 4.0);
}

/* The key/value heads a decode shape's grid is made of: its kernels pack a group's query heads
 * into one tile (PACK_GQA), so a block row is a sequence's K/V head and its key split. */
static double decode_rows(const db_workload *w)
{
    return (double)w->batch * (w->heads_k ? w->heads_k : w->heads);
}

/* How far problem a, on a GPU of a_sms SMs, is from the workload b tuned on one of b_sms. Sequence
 * lengths decide tiles and masking; the grid's fill decides whether a kernel made for idle SMs
 * (64-row tiles) or for full waves wins, and weighs four times a length (notes/tuning.md, section
 * 14: chosen by replaying exhaustive sweeps). Decode shapes weigh their grid's K/V-head rows
 * (batch x K/V heads) at half a length's weight: batch x query heads sent 64 query heads over 8
 * to a batch of two at 32 over 8, whose key splits halve the blocks (section 16). */
static double distance(const db_workload *a, int a_sms, const db_workload *b, int b_sms)
{
    const double lengths = log_gap(a->seqlen_q, b->seqlen_q) + log_gap(a->seqlen_k, b->seqlen_k);
    if (db_workload_decode(a))
        return lengths + 0.5 * log_gap(decode_rows(a), decode_rows(b));
    return lengths + 4.0 * log_gap(grid_fill(a, a_sms), grid_fill(b, b_sms));
}

/* Query heads per key/value head: 1 without grouping. */
static double group_ratio(const db_workload *w)
{
    return w->heads_k ? (double)w->heads / w->heads_k : 1.0;
}

/* How far two windows' sides (-1: no limit) are apart: at most 0.5 a side, so that two windows
 * are never farther apart than a window and no window (1). */
static double side_gap(int a, int b)
{
    if (a < 0 || b < 0)
        return a == b ? 0 : 0.5;
    return fmin(0.5, 0.25 * log_gap(a + 1.0, b + 1.0));
}

/* How far two masks are apart: 1 for each of causal, window, bottom_right that differs; two
 * windows by their sides. Two decode shapes whose masks do not change their work (none, or the
 * diagonal bottom-right: db_workload_decode_any_mask) only half of one: nearer than a top-left
 * diagonal, whose rows see a few keys. */
static double mask_gap(const db_workload *a, const db_workload *b)
{
    if (db_workload_masked(a) != db_workload_masked(b) && db_workload_decode_any_mask(a) &&
        db_workload_decode_any_mask(b))
        return 0.5;
    double gap = (a->causal != b->causal) + (a->window != b->window) + (a->bottom_right != b->bottom_right);
    if (a->window && b->window)
        gap += side_gap(a->window_left, b->window_left) + side_gap(a->window_right, b->window_right);
    return gap;
}

/* How far two batches' kinds are apart: dense against variable-length 1, two buckets by their
 * fill (at most 7/8, nearer than a dense batch). */
static double varlen_gap(const db_workload *a, const db_workload *b)
{
    if (!a->varlen != !b->varlen)
        return 1;
    return abs(a->varlen - b->varlen) / 8.0;
}

/* How far the kinds of two workloads are apart: 0 the same (group ratio, softcap, mask, varlen,
 * float32's TF32 rounding). */
static double kind_gap(const db_workload *a, const db_workload *b)
{
    return log_gap(group_ratio(a), group_ratio(b)) + (a->softcap != b->softcap) + mask_gap(a, b) + varlen_gap(a, b) +
           (a->tf32 != b->tf32);
}

/* How many characters two names share from their start. */
static int shared_start(const char *a, const char *b)
{
    int n = 0;
    while (a[n] && a[n] == b[n])
        n++;
    return n;
}

/* Whether a winner tuned on workload c may serve problem w as far as their masks go: kernels of w's
 * CAUSAL (every mask, causal or windowed, runs CAUSAL=1), or two decode shapes the mask does not
 * change (db_workload_decode_any_mask), of either. */
static int mask_may_serve(const db_workload *w, const db_workload *c)
{
    return db_workload_masked(c) == db_workload_masked(w) ||
           (db_workload_decode_any_mask(w) && db_workload_decode_any_mask(c));
}

/* 1 when candidate c should be preferred over the best so far b. */
static int better(const db_winner *c, const db_winner *b)
{
    if (c->device_match != b->device_match)
        return c->device_match < b->device_match;
    if (c->name_match != b->name_match)   /* another GPU of the arch: the nearest model's first */
        return c->name_match > b->name_match;
    if (c->kind_gap != b->kind_gap)
        return c->kind_gap < b->kind_gap;
    if (c->workload_match != b->workload_match)
        return c->workload_match < b->workload_match;
    if (c->distance != b->distance)
        return c->distance < b->distance;
    if (c->device_id != b->device_id)
        return c->device_id > b->device_id;   /* the newest driver/NVRTC row of that GPU */
    return c->workload_id < b->workload_id;
}

int db_winner_find(db *d, const char *device_name, const char *arch, const db_workload *w, db_winner *out,
                   char *err, size_t len)
{
    return db_winner_find_if(d, device_name, arch, 0, w, NULL, NULL, out, err, len);
}

int db_winner_find_if(db *d, const char *device_name, const char *arch, int sm_count, const db_workload *w,
                      int (*accept)(const db_winner *candidate, void *ctx), void *ctx, db_winner *out, char *err,
                      size_t len)
{
    const char *func = "db_winner_find";
    char why[256];
    if (d && (!w || !out))
        return db_fail(err, len, "%s: %s is NULL", func, w ? "out" : "w");
    if (w && db_workload_check(w, why, sizeof why) != 0)
        return db_fail(err, len, "%s", why);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int found = -1;
    if (db_prepare(d, WINNER_SELECT " WHERE (?1 IS NULL OR d.arch = ?1) AND l.op = ?2 AND l.dtype = ?3"
                      " AND l.head_dim = ?4 AND l.head_dim_v = ?5", &st, err, len) == 0) {
        if (arch)
            sqlite3_bind_text(st, 1, arch, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, db_op_name(w->op), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, db_dtype_name(w->dtype), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, w->head_dim);
        sqlite3_bind_int(st, 5, w->head_dim_v);
        found = 0;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            db_winner c;
            if (read_winner(st, &c, why, sizeof why) != 0) {
                found = db_fail(err, len, "database %s: %s", d->path, why);
                break;
            }
            if (c.workload.sinks != w->sinks)   /* sinks are compiled in, as the mask is: never served across */
                continue;
            if (!mask_may_serve(w, &c.workload))
                continue;
            if (accept && !accept(&c, ctx))
                continue;
            c.device_match = device_name && !strcmp(c.device.name, device_name) ? DB_MATCH_SAME_GPU
                                                                                 : DB_MATCH_SAME_ARCH;
            c.name_match = device_name ? shared_start(c.device.name, device_name) : 0;
            /* the problem's fill on its own GPU (the row's SMs where the caller does not say) */
            c.distance = distance(w, sm_count > 0 ? sm_count : c.device.sm_count, &c.workload, c.device.sm_count);
            c.kind_gap = kind_gap(w, &c.workload);
            int exact = 1;   /* every field (op, dtype and the head dims are the statement's) */
#define SAME_(a, name, ...) exact = exact && c.workload.name == w->name;
            DB_WORKLOAD_FIELDS(SAME_, )
#undef SAME_
            c.workload_match = exact ? DB_MATCH_EXACT : DB_MATCH_NEAREST;
            if (exact)
                c.distance = 0;
            if (!found || better(&c, out))
                *out = c;
            found = 1;
        }
        if (rc != SQLITE_DONE && found >= 0)
            found = db_fail_sql(d->sql, err, len, d->path);
        sqlite3_finalize(st);
    }
    db_leave(d);
    return found;
}

int db_winners_list(db *d, db_winner **out, int *count, char *err, size_t len)
{
    const char *func = "db_winners_list";
    if (db_list_start(d, out, count, func, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int rc = db_prepare(d, WINNER_SELECT WINNER_ORDER, &st, err, len);
    db_winner *list = NULL;
    int n = 0, cap = 0, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        db_winner *row = db_grow((void **)&list, n, &cap, sizeof *row);
        if (!row) {
            rc = db_fail(err, len, "%s: out of memory for %d winners", func, n + 1);
            break;
        }
        char why[256];
        n++;
        if (read_winner(st, row, why, sizeof why) != 0)
            rc = db_fail(err, len, "database %s: %s", d->path, why);
    }
    return db_list_finish(d, st, rc, step, list, n, out, count, err, len);
}
