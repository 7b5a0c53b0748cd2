/* Declaring winners: which of a workload's timed kernels the winners view serves. Timing the
 * same kernels twice moves their medians by about 2 %, so among kernels that close the fastest
 * is chance; a winner replaced on chance makes every sweep churn the tables, and a pick that
 * holds at one shape only is likelier to be chance than one that holds at its neighbours. The
 * rule (db_internal.h, db_declare_winners): the stored winner while a sweep's timing of it here
 * ties with the fastest (an imported figure is another run's: it keeps nothing), else of the tied
 * kernels one that spills no registers, the one that ties at the most other workloads of its
 * kind, else the fastest. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"

static const char *const reason_names[DB_DECLARED_COUNT] = { "fastest", "kept", "holds", "imported", "spill_free" };

const char *db_declared_name(int reason)
{
    return reason >= 0 && reason < DB_DECLARED_COUNT ? reason_names[reason] : "?";
}

static int declared_parse(const char *name)
{
    for (int i = 0; i < DB_DECLARED_COUNT; i++)
        if (!strcmp(name, reason_names[i]))
            return i;
    return -1;
}

/* A valid timing a sweep stored (of results r JOIN sweeps s): imported ones are another machine's
 * or run's figures. */
#define SWEEP_TIMING "r.status = 'ok' AND r.median_ms > 0 AND s.space_file NOT LIKE 'import:%'"

/* One valid timing a sweep stored (SWEEP_TIMING). */
typedef struct timing {
    int64_t workload_id, kernel_id;
    double median, spread;   /* spread 0 when not stored */
    int spills;              /* its binary's spill bytes (stores and loads); -1 not known (no binary) */
    db_workload w;
    db_kernel k;
    int tie;                 /* 1: within the interval of its workload's fastest (the first of its group) */
} timing;

/* A workload's timings: rows [first, first + n) of the list, fastest first. */
typedef struct group {
    int first, n;
} group;

/* How far behind the fastest f a timing t may be and still tie with it: the two intervals
 * (each timing's spread: the repetitions' p90 - p10, or a confirmed finalist's rounds' range)
 * overlap, the spreads counting at most DB_DECLARE_SPREAD_CAP, never less than margin. */
static int ties(const timing *f, double median, double spread, double margin)
{
    const double width = fmax(margin, fmin(0.5 * (f->spread + spread), DB_DECLARE_SPREAD_CAP));
    return median <= f->median * (1 + width);
}

/* Two workloads of one kind: every field but the sizes (batch, heads, lengths) the same, the group
 * ratio too, and both decode shapes or neither. */
static int same_kind(const db_workload *a, const db_workload *b)
{
    static const char *const sizes[] = { "batch", "heads", "seqlen_q", "seqlen_k", "heads_k" };
    int same = a->op == b->op && a->dtype == b->dtype && db_workload_decode(a) == db_workload_decode(b);
#define SAME_(x, name, ...)                                                                 \
    {                                                                                       \
        int size = 0;                                                                       \
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)                         \
            size |= !strcmp(#name, sizes[i]);                                               \
        same = same && (size || a->name == b->name);                                        \
    }
    DB_WORKLOAD_FIELDS(SAME_, )
#undef SAME_
    const long ra = a->heads_k ? a->heads / a->heads_k : 1, rb = b->heads_k ? b->heads / b->heads_k : 1;
    return same && ra == rb;
}

/* The same kernel for the search: one family and every tunable equal (EVEN_M, EVEN_N and the
 * other parameters the problem decides may differ between two workloads' kernels). */
static int same_tunables(const db_kernel *a, const db_kernel *b)
{
    if (strcmp(a->family, b->family) != 0)
        return 0;
    const gen_param_set tunables = gen_param_mask(GEN_ROLE_TUNABLE);   /* 64 bits: the table has more than 32 rows */
    for (int p = 0; p < GEN_PARAM_COUNT; p++)
        if ((tunables & GEN_BIT(p)) && a->p[p] != b->p[p])
            return 0;
    return 1;
}

/* At how many workloads of g's kind other than g the kernel of t ties with their fastest. */
static int neighbours_tied(const timing *list, const group *groups, int ngroups, int g, const timing *t)
{
    int count = 0;
    for (int h = 0; h < ngroups; h++) {
        if (h == g || !same_kind(&list[groups[h].first].w, &list[groups[g].first].w))
            continue;
        int hit = 0;
        for (int i = groups[h].first; i < groups[h].first + groups[h].n && !hit; i++)
            hit = list[i].tie && same_tunables(&list[i].k, &t->k);
        count += hit;
    }
    return count;
}

/* The valid timings sweeps stored for device_id, grouped by workload, fastest first; each
 * marked whether it ties with its workload's fastest. OUT: *list, *groups (malloc'ed). */
static int load(db *d, int64_t device_id, double margin, timing **list, int *n, group **groups, int *ngroups,
                char *err, size_t len)
{
    sqlite3_stmt *st;
    *list = NULL;
    *groups = NULL;
    *n = *ngroups = 0;
    if (db_prepare(d, "SELECT r.workload_id, r.kernel_id, r.median_ms, r.spread,"
                      " CASE WHEN b.id IS NULL THEN -1 ELSE COALESCE(b.spill_store_bytes, 0)"
                      " + COALESCE(b.spill_load_bytes, 0) END, "
                      DB_WORKLOAD_COLUMNS("l") ", " DB_KERNEL_COLUMNS("k") " FROM results r JOIN sweeps s ON s.id = r.sweep_id"
                      " JOIN workloads l ON l.id = r.workload_id JOIN kernels k ON k.id = r.kernel_id"
                      " LEFT JOIN binaries b ON b.id = r.binary_id"
                      " WHERE r.device_id = ?1 AND " SWEEP_TIMING " ORDER BY r.workload_id, r.median_ms, r.kernel_id",
                   &st, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, device_id);
    int cap = 0, gcap = 0, rc = 0, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        timing *t = db_grow((void **)list, *n, &cap, sizeof *t);
        if (!t) {
            rc = db_fail(err, len, "db_declare_winners: out of memory for %d timings", *n + 1);
            break;
        }
        t->workload_id = sqlite3_column_int64(st, 0);
        t->kernel_id = sqlite3_column_int64(st, 1);
        t->median = sqlite3_column_double(st, 2);
        t->spread = db_column_real(st, 3);
        if (!(t->spread >= 0))
            t->spread = 0;
        t->spills = sqlite3_column_int(st, 4);
        char why[256];
        int col = db_workload_read(st, 5, &t->w, why, sizeof why);
        if (col < 0 || db_kernel_read(st, col, &t->k, why, sizeof why) != 0) {
            rc = db_fail(err, len, "database %s: %s", d->path, why);
            break;
        }
        if (!*n || (*list)[*n - 1].workload_id != t->workload_id) {
            group *g = db_grow((void **)groups, *ngroups, &gcap, sizeof *g);
            if (!g) {
                rc = db_fail(err, len, "db_declare_winners: out of memory for %d workloads", *ngroups + 1);
                break;
            }
            g->first = *n;
            (*ngroups)++;
        }
        group *g = &(*groups)[*ngroups - 1];
        g->n = *n - g->first + 1;
        t->tie = ties(&(*list)[g->first], t->median, t->spread, margin);
        (*n)++;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = db_fail_sql(d->sql, err, len, d->path);
    sqlite3_finalize(st);
    return rc;
}

/* The kernel declared for workload_id on device_id, or on another row of the same GPU (name and
 * arch; another driver or NVRTC), this row's first, then the newest row's: 1 found (OUT:
 * *kernel_id), 0 none, -1. */
static int incumbent(db *d, int64_t device_id, int64_t workload_id, int64_t *kernel_id, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT c.kernel_id FROM declared c JOIN devices x ON x.id = c.device_id"
                      " JOIN devices me ON me.id = ?1 WHERE c.workload_id = ?2 AND x.name = me.name"
                      " AND x.arch = me.arch ORDER BY c.device_id = ?1 DESC, c.device_id DESC LIMIT 1",
                   &st, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, device_id);
    sqlite3_bind_int64(st, 2, workload_id);
    const int found = db_step_row(d, st, err, len);
    if (found == 1)
        *kernel_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

int db_declared_put_tx(db *d, int64_t device_id, int64_t workload_id, const db_declared *c, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (db_prepare(d, "INSERT INTO declared (device_id, workload_id, kernel_id, reason, behind, neighbours)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (device_id, workload_id) DO UPDATE SET"
                      " kernel_id = excluded.kernel_id, reason = excluded.reason, behind = excluded.behind,"
                      " neighbours = excluded.neighbours, declared_at = excluded.declared_at",
                   &st, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, device_id);
    sqlite3_bind_int64(st, 2, workload_id);
    sqlite3_bind_int64(st, 3, c->kernel_id);
    sqlite3_bind_text(st, 4, db_declared_name(c->reason), -1, SQLITE_STATIC);
    db_bind_real(st, 5, c->behind);
    if (c->neighbours >= 0)
        sqlite3_bind_int(st, 6, c->neighbours);
    const int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail_sql(d->sql, err, len, d->path);
}

/* The choice for group g (list, groups: load's), with the stored winner inc (0: none). A kernel
 * that spills registers is as fast as its tie says on this GPU, driver and compiler; one that
 * spills nothing is not exposed to local memory's latency at all, so of tied kernels it goes
 * first (the "no spills in what ships", within the noise only). */
static db_declared decide(const timing *list, const group *groups, int ngroups, int g, int64_t inc)
{
    const group *gr = &groups[g];
    const timing *fastest = &list[gr->first];
    /* clean: a tied kernel known to spill nothing (a timing without its binary is not known) */
    int pick = -1, best_score = -1, clean = -1;   /* clean: the fastest such, or -1 */
    for (int i = gr->first; i < gr->first + gr->n && clean < 0; i++)
        if (list[i].tie && list[i].spills == 0)
            clean = i;
    for (int i = gr->first; i < gr->first + gr->n && inc; i++)
        if (list[i].tie && list[i].kernel_id == inc && (list[i].spills == 0 || clean < 0))
            pick = i;
    int reason = DB_DECLARED_KEPT;
    if (pick < 0) {
        for (int i = gr->first; i < gr->first + gr->n; i++) {
            if (!list[i].tie || (clean >= 0 && list[i].spills != 0))
                continue;
            const int score = neighbours_tied(list, groups, ngroups, g, &list[i]);
            if (score > best_score)   /* fastest first: an equal score keeps the faster */
                best_score = score, pick = i;
        }
        /* spill_free: the pick is the fastest clean kernel and faster ones spill; a clean kernel
         * chosen over a faster clean one holds at more neighbours. */
        reason = pick == clean && clean > gr->first ? DB_DECLARED_SPILL_FREE : DB_DECLARED_HOLDS;
    }
    if (pick == gr->first)
        reason = DB_DECLARED_FASTEST;
    db_declared c = { .kernel_id = list[pick].kernel_id, .reason = reason, .spills = list[pick].spills,
                      .behind = list[pick].median / fastest->median - 1,
                      .neighbours = best_score >= 0 ? best_score : neighbours_tied(list, groups, ngroups, g, &list[pick]) };
    return c;
}

/* How a sweep timed a stored winner at its workload on this device: */
enum stored_timing {
    STORED_TIMED,            /* a sweep timed it: the declaration judges that timing */
    STORED_UNTIMED,          /* no sweep did, but one timed its family there (its space ran: it was a
                              * candidate, or its family's checks refused it): replaced */
    STORED_FAMILY_UNTIMED,   /* no sweep timed its family there (another family's space alone, as
                              * bwd_f32 beside bwd_f32_hopper): judged by its stored figure */
};
/* Which, for kernel_id at the workload; -1 on error. */
static int stored_timing(db *d, int64_t device_id, int64_t workload_id, int64_t kernel_id, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT max(r.kernel_id = ?3) FROM results r JOIN sweeps s ON s.id = r.sweep_id"
                      " JOIN kernels k ON k.id = r.kernel_id WHERE r.device_id = ?1 AND r.workload_id = ?2 AND "
                      SWEEP_TIMING " AND k.family = (SELECT family FROM kernels WHERE id = ?3)", &st, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, device_id);
    sqlite3_bind_int64(st, 2, workload_id);
    sqlite3_bind_int64(st, 3, kernel_id);
    int rc = db_step_row(d, st, err, len);   /* an aggregate: one row, max NULL where none matched */
    if (rc == 1)
        rc = sqlite3_column_type(st, 0) == SQLITE_NULL ? STORED_FAMILY_UNTIMED
             : sqlite3_column_int(st, 0)               ? STORED_TIMED
                                                       : STORED_UNTIMED;
    sqlite3_finalize(st);
    return rc;
}

/* The stored result of kernel_id at the workload (an import's figure where no sweep timed it):
 * 1 found (OUT: *median, *spread), 0 none, -1 error. */
static int stored_result(db *d, int64_t device_id, int64_t workload_id, int64_t kernel_id, double *median,
                         double *spread, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (db_prepare(d, "SELECT median_ms, spread FROM results WHERE device_id = ?1 AND workload_id = ?2"
                      " AND kernel_id = ?3 AND status = 'ok' AND median_ms > 0", &st, err, len) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, device_id);
    sqlite3_bind_int64(st, 2, workload_id);
    sqlite3_bind_int64(st, 3, kernel_id);
    const int found = db_step_row(d, st, err, len);
    if (found == 1) {
        *median = sqlite3_column_double(st, 0);
        *spread = db_column_real(st, 1);
        if (!(*spread >= 0))
            *spread = 0;
    }
    sqlite3_finalize(st);
    return found;
}

/* A stored winner inc of a family no sweep timed here: its stored figure is the best there is of
 * it, so it stays while that ties with the fastest timing. 1 kept (OUT: *c), 0 not, -1 error. */
static int keep_other_family(db *d, int64_t device_id, int64_t workload_id, const timing *list, const group *g,
                             int64_t inc, double margin, db_declared *c, char *err, size_t len)
{
    double median = 0, spread = 0;
    const int found = stored_result(d, device_id, workload_id, inc, &median, &spread, err, len);
    if (found <= 0 || !ties(&list[g->first], median, spread, margin))
        return found < 0 ? -1 : 0;
    *c = (db_declared){ .kernel_id = inc, .reason = DB_DECLARED_KEPT,
                        .behind = fmax(0, median / list[g->first].median - 1), .neighbours = -1, .spills = -1 };
    return 1;
}

/* Declares the workloads of one device (ids NULL: every one with timings). A stored winner no
 * sweep timed here (an import's, or another row's) is not kept on a figure of another run where
 * a sweep timed its family there (its space ran, so it was a candidate, or its family's checks
 * refused it): the workload's timings decide alone, and counts->untimed says how often. Where no
 * sweep timed its family (another family's space alone), its stored figure is all there is of it:
 * it stays while that ties with the fastest. */
static int declare_device(db *d, int64_t device_id, const int64_t *ids, int n, double margin,
                          db_declare_counts *counts, char *err, size_t len)
{
    timing *list;
    group *groups;
    int count, ngroups;
    int rc = load(d, device_id, margin, &list, &count, &groups, &ngroups, err, len);
    for (int g = 0; rc == 0 && g < ngroups; g++) {
        const int64_t w = list[groups[g].first].workload_id;
        int wanted = !ids;
        for (int i = 0; i < n && !wanted; i++)
            wanted = ids[i] == w;
        if (!wanted)
            continue;
        int64_t inc = 0;
        const int found = incumbent(d, device_id, w, &inc, err, len);
        if (found < 0) {
            rc = -1;
            break;
        }
        const int how = found ? stored_timing(d, device_id, w, inc, err, len) : STORED_TIMED;
        db_declared c;
        const int kept = how == STORED_FAMILY_UNTIMED
                             ? keep_other_family(d, device_id, w, list, &groups[g], inc, margin, &c, err, len)
                             : 0;
        if (how < 0 || kept < 0) {
            rc = -1;
            break;
        }
        const int untimed = how == STORED_UNTIMED;
        if (!kept)
            c = decide(list, groups, ngroups, g, found && !untimed ? inc : 0);
        rc = db_declared_put_tx(d, device_id, w, &c, err, len);
        if (rc == 0 && counts) {
            counts->workloads++;
            counts->by_reason[c.reason]++;
            counts->untimed += untimed;
        }
    }
    free(list);
    free(groups);
    return rc;
}

int db_declare_winners(db *d, int64_t device_id, const int64_t *workload_ids, int n, double margin,
                       db_declare_counts *counts, char *err, size_t len)
{
    const char *func = "db_declare_winners";
    if (counts)
        memset(counts, 0, sizeof *counts);
    if (d && (n < 0 || (n > 0 && !workload_ids)))
        return db_fail(err, len, n < 0 ? "%s: n %d is negative" : "%s: workload_ids is NULL with n %d", func, n);
    if (d && !(margin >= 0 && margin <= 1))
        return db_fail(err, len, "%s: margin %g is not a fraction from 0 to 1", func, margin);
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    int rc = db_begin(d, err, len);
    if (rc == 0 && device_id > 0) {
        rc = declare_device(d, device_id, n > 0 ? workload_ids : NULL, n, margin, counts, err, len);
    } else if (rc == 0) {   /* every device that has timings */
        sqlite3_stmt *st = NULL;
        int64_t *devs = NULL;
        int ndev = 0, cap = 0, step = SQLITE_DONE;
        rc = db_prepare(d, "SELECT DISTINCT device_id FROM results ORDER BY device_id", &st, err, len);
        while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t *slot = db_grow((void **)&devs, ndev, &cap, sizeof *slot);
            if (!slot)
                rc = db_fail(err, len, "%s: out of memory", func);
            else
                devs[ndev++] = sqlite3_column_int64(st, 0);
        }
        if (rc == 0 && step != SQLITE_DONE)
            rc = db_fail_sql(d->sql, err, len, d->path);
        if (st)
            sqlite3_finalize(st);
        for (int i = 0; rc == 0 && i < ndev; i++)
            rc = declare_device(d, devs[i], n > 0 ? workload_ids : NULL, n, margin, counts, err, len);
        free(devs);
    }
    if (rc == 0)
        rc = db_commit(d, err, len);
    else
        db_rollback(d);
    db_leave(d);
    if (rc != 0 && counts)
        memset(counts, 0, sizeof *counts);
    return rc;
}

int db_declared_incumbent(db *d, int64_t device_id, int64_t workload_id, int64_t *kernel_id, char *err, size_t len)
{
    const char *func = "db_declared_incumbent";
    if (d && !kernel_id)
        return db_fail(err, len, "%s: kernel_id is NULL", func);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    const int found = incumbent(d, device_id, workload_id, kernel_id, err, len);
    db_leave(d);
    return found;
}

int db_declared_untimed(db *d, int64_t device_id, int64_t workload_id, int64_t *kernel_id, char *err, size_t len)
{
    const char *func = "db_declared_untimed";
    if (d && !kernel_id)
        return db_fail(err, len, "%s: kernel_id is NULL", func);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    int64_t inc = 0;
    int found = incumbent(d, device_id, workload_id, &inc, err, len);
    if (found == 1) {   /* replaced by declare_device: untimed where its family was timed */
        const int how = stored_timing(d, device_id, workload_id, inc, err, len);
        found = how < 0 ? -1 : how == STORED_UNTIMED;
    }
    if (found == 1)
        *kernel_id = inc;
    db_leave(d);
    return found;
}

int db_declared_get(db *d, int64_t device_id, int64_t workload_id, db_declared *out, char *err, size_t len)
{
    const char *func = "db_declared_get";
    if (d && !out)
        return db_fail(err, len, "%s: out is NULL", func);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int found = -1;
    if (db_prepare(d, "SELECT c.kernel_id, c.reason, c.behind, c.neighbours, (SELECT CASE WHEN b.id IS NULL THEN -1"
                      " ELSE COALESCE(b.spill_store_bytes, 0) + COALESCE(b.spill_load_bytes, 0) END FROM results r"
                      " LEFT JOIN binaries b ON b.id = r.binary_id WHERE r.device_id = c.device_id"
                      " AND r.workload_id = c.workload_id AND r.kernel_id = c.kernel_id)"
                      " FROM declared c WHERE c.device_id = ?1 AND c.workload_id = ?2", &st, err, len) == 0) {
        sqlite3_bind_int64(st, 1, device_id);
        sqlite3_bind_int64(st, 2, workload_id);
        found = db_step_row(d, st, err, len);
        if (found == 1) {
            char reason[16];
            db_column_text(st, 1, reason, sizeof reason);
            out->kernel_id = sqlite3_column_int64(st, 0);
            out->reason = declared_parse(reason);
            out->behind = db_column_real(st, 2);
            out->neighbours = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 3);
            out->spills = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
        }
        sqlite3_finalize(st);
    }
    db_leave(d);
    return found;
}
