/* The strategies of a workload's search, against an oracle (tune_strategy.h):
 *   exhaustive, random  every pending candidate timed with the full bench (random sampled them
 *                       at enumeration, tune_space_enum.c);
 *   prune               every one with a short first pass, the best `keep` fraction re-timed;
 *   halving             as prune, but the first pass goes only as far as the budget affords:
 *                       the known winners first, then a seeded shuffle of the rest;
 *   guided              a first pass that starts from the known winners and a few random picks
 *                       and then times the neighbours (one parameter away) of the best so far,
 *                       until the budget is spent or the best have no untried neighbours.
 * Then, for all of them, a space's confirm step times its finalists again in rotation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_clocks.h"
#include "tune_strategy.h"

int tune_sweep_keep_count(int timed, double keep)
{
    if (timed <= 0)
        return 0;
    int n = (int)ceil(keep * timed - 1e-9);
    return n < 1 ? 1 : n > timed ? timed : n;
}

/* 1 for the searches whose timings are known only as they go (they tell the oracle's plan). */
static int plans_as_it_goes(tune_strategy_kind kind, double budget_s)
{
    return kind == TUNE_GUIDED || (kind == TUNE_HALVING && budget_s > 0);
}

long tune_strategy_planned(const tune_strategy *st, int n, int budgeted)
{
    if (plans_as_it_goes(st->kind, budgeted || st->budget_s > 0))
        return 0;
    if (st->kind == TUNE_PRUNE || st->kind == TUNE_HALVING)
        return n + tune_sweep_keep_count(n, st->keep);
    return n;
}

/* ---- the confirm step ---------------------------------------------------------------------- */

static int timed_ok(const tune_record *r)
{
    return r->id >= 0 && r->status == DB_STATUS_OK && r->median_ms > 0;
}

int tune_confirm_finalists(const tune_record *timed, int n, const tune_confirm *cf, int must, int *finalists)
{
    if (cf->rounds < 1 || cf->top < 2)
        return 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!timed_ok(&timed[i]))
            continue;
        /* Kept sorted: i goes before the slower ones; past top the slowest falls off. */
        int at = k;
        while (at > 0 && timed[finalists[at - 1]].median_ms > timed[i].median_ms)
            at--;
        if (at == cf->top)
            continue;
        if (k < cf->top)
            k++;
        for (int j = k - 1; j > at; j--)
            finalists[j] = finalists[j - 1];
        finalists[at] = i;
    }
    const double limit = k ? timed[finalists[0]].median_ms * (1 + cf->within) : 0;
    while (k > 0 && timed[finalists[k - 1]].median_ms > limit)
        k--;
    if (must >= 0 && must < n && timed_ok(&timed[must])) {
        int in = 0;
        for (int f = 0; f < k && !in; f++)
            in = finalists[f] == must;
        if (!in)
            finalists[k < cf->top ? k++ : k - 1] = must;
    }
    return k >= 2 ? k : 0;
}

/* 1 when one of the task's pending candidates is the workload's incumbent. */
static int has_incumbent(const tune_strategy_task *t)
{
    for (int i = 0; i < t->pending_count; i++)
        if (t->cands[t->pending[i]].incumbent)
            return 1;
    return 0;
}

/* The index in cands[0..n) of the workload's incumbent (tune_strategy_cand), or -1. */
static int incumbent_of(const tune_strategy_task *t, const int *cands, int n)
{
    for (int i = 0; i < n; i++)
        if (t->cands[cands[i]].incumbent)
            return i;
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tune_confirm_combine(const tune_record *const *timings, int m, tune_record *out)
{
    double med[TUNE_CONFIRM_MAX_TIMINGS];
    if (m > TUNE_CONFIRM_MAX_TIMINGS)
        m = TUNE_CONFIRM_MAX_TIMINGS;
    *out = *timings[0];
    tune_clock_span clocks;   /* over every round: the least SM clock, every reason any round saw */
    tune_clock_span_init(&clocks);
    for (int i = 0; i < m; i++) {
        med[i] = timings[i]->median_ms;
        if (timings[i]->min_ms < out->min_ms)
            out->min_ms = timings[i]->min_ms;
        if (timings[i]->rel_error > out->rel_error)
            out->rel_error = timings[i]->rel_error;
        if (timings[i]->max_abs_error > out->max_abs_error)
            out->max_abs_error = timings[i]->max_abs_error;
        if (timings[i]->sm_mhz > 0)
            tune_clock_span_add(&clocks, (unsigned)timings[i]->sm_mhz, timings[i]->clock_events);
    }
    out->sm_mhz = clocks.sm_mhz;
    out->clock_events = clocks.events;
    qsort(med, (size_t)m, sizeof med[0], cmp_double);
    out->median_ms = m % 2 ? med[m / 2] : 0.5 * (med[m / 2 - 1] + med[m / 2]);
    out->spread = (med[m - 1] - med[0]) / out->median_ms;
    out->tflops = timings[0]->tflops * timings[0]->median_ms / out->median_ms;   /* the same FLOPs */
}

/* The finalists among the candidates cands[0..n) just timed (timed[i]: cands[i]'s result,
 * already stored), the incumbent always among them, in rotation, each stored again with the
 * median of its timings. One that fails a round keeps that failure (the oracle stored it). */
static int confirm_finalists(const tune_strategy_task *t, const tune_oracle *o, const int *cands,
                             const tune_record *timed, int n)
{
    const tune_confirm *cf = t->confirm;
    int fin[16];
    const int k = tune_confirm_finalists(timed, n, cf, incumbent_of(t, cands, n), fin);
    if (k == 0)
        return TUNE_PHASE_OK;
    const int m = k * cf->rounds;
    int *list = malloc((size_t)m * sizeof *list);
    tune_record *rec = malloc((size_t)m * sizeof *rec);
    if (!list || !rec) {
        free(list);
        free(rec);
        return TUNE_PHASE_SETUP_FAILED;
    }
    for (int i = 0; i < m; i++) {
        list[i] = cands[fin[i % k]];
        tune_record_init(&rec[i], -1);
    }
    if (o->plan)
        o->plan(o->ctx, m);
    int rc = o->time(o->ctx, list, m, t->bench, 0, rec, " (confirm)");
    for (int f = 0; f < k && rc == TUNE_PHASE_OK; f++) {
        const tune_record *x[TUNE_CONFIRM_MAX_TIMINGS] = { &timed[fin[f]] };
        int got = 1;
        for (int r = 0; r < cf->rounds && got; r++) {
            const tune_record *y = &rec[r * k + f];
            got = y->id >= 0 && y->status == DB_STATUS_OK ? got + 1 : 0;
            if (got)
                x[got - 1] = y;
        }
        if (!got)
            continue;   /* a round failed (stored as such) or never ran */
        tune_record final;
        tune_confirm_combine(x, got, &final);
        snprintf(final.message, sizeof final.message, "confirmed: the median of %d timings, in rotation with %d other %s",
                 got, k - 1, k == 2 ? "finalist" : "finalists");
        rc = o->store(o->ctx, cands[fin[f]], &final);
    }
    free(list);
    free(rec);
    return rc;
}

/* ---- the steps the strategies share ---------------------------------------------------------- */

static tune_record *new_records(int n)
{
    tune_record *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    for (int i = 0; r && i < n; i++)
        tune_record_init(&r[i], -1);
    return r;
}

/* cands[0..n) with the full bench, each stored, then the confirm step. */
static int time_full(const tune_strategy_task *t, const tune_oracle *o, const int *cands, int n)
{
    if (n == 0)
        return TUNE_PHASE_OK;
    tune_record *timed = new_records(n);
    if (!timed)
        return TUNE_PHASE_SETUP_FAILED;
    int rc = o->time(o->ctx, cands, n, t->bench, 1, timed, "");
    if (rc == TUNE_PHASE_OK)
        rc = confirm_finalists(t, o, cands, timed, n);
    free(timed);
    return rc;
}

static int store_skipped(const tune_oracle *o, int c, const tune_record *first, const char *why)
{
    tune_record r;
    if (first)
        r = *first;
    else
        tune_record_init(&r, -1);
    r.status = DB_STATUS_SKIPPED;
    snprintf(r.message, sizeof r.message, "%s", why);
    return o->store(o->ctx, c, &r);
}

typedef struct ranked {
    int cand;
    tune_record r;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return (x->r.median_ms > y->r.median_ms) - (x->r.median_ms < y->r.median_ms);
}

/* After a first pass over cands[0..n) (first[i]: cands[i]'s unstored ok result, or a failure
 * the oracle stored): the best `keep` fraction of the ok ones, and the incumbent wherever it
 * ranked, re-timed with the full bench and confirmed, the others stored as skipped with their
 * first-pass rank. */
static int cut_and_finish(const tune_strategy_task *t, const tune_oracle *o, const int *cands,
                          const tune_record *first, int n)
{
    ranked *ok = malloc((size_t)(n ? n : 1) * sizeof *ok);
    int *kept = malloc((size_t)(n ? n : 1) * sizeof *kept);
    if (!ok || !kept) {
        free(ok);
        free(kept);
        return TUNE_PHASE_SETUP_FAILED;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (first[i].id >= 0 && first[i].status == DB_STATUS_OK)
            ok[m++] = (ranked){ cands[i], first[i] };
    qsort(ok, (size_t)m, sizeof *ok, cmp_ranked);
    const int keep = tune_sweep_keep_count(m, t->strategy->keep);
    int kept_n = keep;
    for (int i = 0; i < keep; i++)
        kept[i] = ok[i].cand;
    int rc = TUNE_PHASE_OK;
    for (int i = keep; i < m && rc == TUNE_PHASE_OK; i++) {
        if (t->cands[ok[i].cand].incumbent) {   /* ranked out by its first pass, kept all the same */
            kept[kept_n++] = ok[i].cand;
            continue;
        }
        char why[200];
        snprintf(why, sizeof why, "pruned: first-pass median %.4f ms ranks %d of %d (keep %d)", ok[i].r.median_ms,
                 i + 1, m, keep);
        rc = store_skipped(o, ok[i].cand, &ok[i].r, why);
    }
    if (o->plan)   /* planned as it goes: all kept; else the plan counted `keep` (tune_strategy_planned) */
        o->plan(o->ctx, plans_as_it_goes(t->strategy->kind, t->budget_s) ? kept_n : kept_n - keep);
    if (rc == TUNE_PHASE_OK)
        rc = time_full(t, o, kept, kept_n);
    free(ok);
    free(kept);
    return rc;
}

/* Seconds one timing with bench b costs: its windows plus what each timing has cost beyond its
 * windows and its kernel's compiling so far (validation, launch, the worker's messages), at least
 * 10 ms. */
static double timing_cost(const tune_bench *b, double overhead_s)
{
    return (b->warmup_ms + b->rep_ms) / 1000 + (overhead_s > 0.01 ? overhead_s : 0.01);
}

/* The first pass under a budget: how the cost of the rest is foreseen. */
typedef struct first_pass {
    const tune_strategy_task *t;
    const tune_oracle *o;
    double start_s, start_built_s;  /* o->spent() and o->built() when the workload began */
    int measured;               /* first-pass timings done (their cost is in o->spent()) */
    int timed;                  /* those and the ones queued after them */
    int rounds;                 /* compile rounds those cost: a call's timings over the oracle's width */
    int first_took;             /* timings of the first call */
    double first_cost;          /* what it cost beside compiling: its windows, and a worker's start */
} first_pass;

static int width(const tune_oracle *o)
{
    return o->width > 1 ? o->width : 1;
}

static double built_s(const tune_oracle *o)
{
    return o->built ? o->built(o->ctx) : 0;
}

/* After a call of the first pass that timed `took` more. */
static void first_pass_took(first_pass *fp, int took)
{
    if (fp->measured == 0) {
        fp->first_took = took;
        fp->first_cost = (fp->o->spent(fp->o->ctx) - fp->start_s) - (built_s(fp->o) - fp->start_built_s);
    }
    fp->rounds += (took + width(fp->o) - 1) / width(fp->o);
    fp->timed = fp->measured = fp->measured + took;
}

/* 1 when one more first-pass timing still leaves the budget room for the cut's full timings and
 * the confirm step. Until a first-pass timing has been measured nothing is known of what one costs
 * (a worker to start, kernels to compile): the oracle's width is allowed, and no more. One at a
 * time, each kernel's compile would be charged whole to its timing and the projection would see
 * every timing as dear as the first (a sweep on 16 cores compiled one to a few kernels a step). */
static int affords_one_more(const first_pass *fp)
{
    const tune_strategy_task *t = fp->t;
    if (t->budget_s <= 0)
        return 1;
    if (fp->measured == 0)
        return fp->timed < width(fp->o);
    const tune_bench *f = &t->strategy->first;
    const double spent = fp->o->spent(fp->o->ctx) - fp->start_s;
    const double built = built_s(fp->o) - fp->start_built_s;
    /* Per first-pass timing: beyond its windows, as the calls after the first cost, once there
     * are any (the first also paid the worker's start, which one worker a workload pays once);
     * until then as the first cost, the start spread over its timings. Per round of compiling
     * (the kernels of one call, up to the width side by side) what the rounds so far took. The
     * cut's and the confirm step's kernels are built by then. */
    const double windows = (f->warmup_ms + f->rep_ms) / 1000;
    const double overhead = fp->measured > fp->first_took
                                ? (spent - built - fp->first_cost) / (fp->measured - fp->first_took) - windows
                                : (spent - built) / fp->measured - windows;
    const double round = built / fp->rounds;
    const int more = fp->timed - fp->measured + 1;
    const double projected =
        spent + more * timing_cost(f, overhead) + (more + width(fp->o) - 1) / width(fp->o) * round;
    /* The cut keeps, and the confirm step rotates, the incumbent beside them wherever it ranks. */
    const int keep = tune_sweep_keep_count(fp->timed + 1, t->strategy->keep) + has_incumbent(t);
    const int rounds = t->confirm->rounds > 0 && t->confirm->top >= 2 ? t->confirm->rounds : 0;
    const int finalists = keep < t->confirm->top ? keep : t->confirm->top;
    const int tail_timings = keep + (finalists >= 2 ? finalists * rounds : 0);
    /* After the first call alone, one more timing as a probe of what a later call costs, where the
     * budget holds it at the first call's rate and the cut and confirm step at their windows' own:
     * the first call's rate may be mostly a start paid once. Where it is not, the probe and its
     * share of the tail overrun the budget by about a timing. */
    if (fp->measured == fp->first_took && fp->timed == fp->measured)
        return projected + tail_timings * timing_cost(t->bench, 0) <= t->budget_s;
    return projected + tail_timings * timing_cost(t->bench, overhead) <= t->budget_s;
}

/* xorshift64*: the strategies' own generator, so a seed gives the same search everywhere. */
static unsigned long long next_random(unsigned long long *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static void shuffle(int *a, int n, unsigned long long *state)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next_random(state) % (unsigned long long)(i + 1));
        int x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
}

/* Stores list[0..count), the candidates a first pass did not reach, as skipped: `tried` of
 * `total` were tried, and `how` says why it stopped. */
static int store_unreached(const tune_oracle *o, const int *list, int count, int tried, int total, const char *how)
{
    char why[200];
    snprintf(why, sizeof why, "not timed: %s (%d of %d tried)", how, tried, total);
    int rc = TUNE_PHASE_OK;
    for (int i = 0; i < count && rc == TUNE_PHASE_OK; i++)
        rc = store_skipped(o, list[i], NULL, why);
    return rc;
}

/* ---- halving ------------------------------------------------------------------------------- */

/* The candidates a budgeted search times before any other: the incumbent and the known winners. */
static int starts(const tune_strategy_cand *c)
{
    return c->incumbent || c->known;
}
/* The task's pending starts into out, the incumbent first (so that even the least budget
 * reaches it), then the known winners in the plan's order; returns how many. */
static int starts_first(const tune_strategy_task *t, int *out)
{
    int k = 0;
    for (int i = 0; i < t->pending_count; i++)
        if (t->cands[t->pending[i]].incumbent)
            out[k++] = t->pending[i];
    for (int i = 0; i < t->pending_count; i++)
        if (t->cands[t->pending[i]].known && !t->cands[t->pending[i]].incumbent)
            out[k++] = t->pending[i];
    return k;
}

#define TUNE_FIRST_CHUNK 16   /* first-pass timings between two looks at the budget */

static int measure_halving(const tune_strategy_task *t, const tune_oracle *o)
{
    const int n = t->pending_count;
    int *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    tune_record *first = new_records(n);
    if (!order || !first) {
        free(order);
        free(first);
        return TUNE_PHASE_SETUP_FAILED;
    }
    /* Known winners first, then a seeded shuffle of the rest. (Spills, the compile fact at hand,
     * ordered nothing better in the replay: notes/tuning.md.) */
    const int known = starts_first(t, order);
    int k = known;
    for (int i = 0; i < n; i++)
        if (!starts(&t->cands[t->pending[i]]))
            order[k++] = t->pending[i];
    unsigned long long state = t->strategy->seed * 0x9E3779B97F4A7C15ULL + 1;
    shuffle(order + known, k - known, &state);

    first_pass fp = { t, o, o->spent(o->ctx), built_s(o), 0, 0, 0, 0, 0 };
    int rc = TUNE_PHASE_OK, done = 0;
    while (done < n && rc == TUNE_PHASE_OK) {
        int chunk = 0;
        while (done + chunk < n && chunk < TUNE_FIRST_CHUNK) {
            fp.timed = done + chunk;
            if (!affords_one_more(&fp))
                break;
            chunk++;
        }
        if (chunk == 0)
            break;
        if (o->plan && plans_as_it_goes(t->strategy->kind, t->budget_s))
            o->plan(o->ctx, chunk);
        rc = o->time(o->ctx, order + done, chunk, &t->strategy->first, 0, first + done, " (first pass)");
        done += chunk;
        first_pass_took(&fp, chunk);
    }
    if (rc == TUNE_PHASE_OK && done < n)
        rc = store_unreached(o, order + done, n - done, done, n, "the workload's budget was spent");
    if (rc == TUNE_PHASE_OK)
        rc = cut_and_finish(t, o, order, first, done);
    free(order);
    free(first);
    return rc;
}

/* ---- guided -------------------------------------------------------------------------------- */

int tune_strategy_neighbours(const tune_strategy_cand *cands, int n, const unsigned char *tried, int from,
                             int *out)
{
    const gen_config *a = cands[from].config;
    const gen_param_set tunable = gen_param_mask(GEN_ROLE_TUNABLE);
    int m = 0;
    for (int i = 0; i < n; i++) {
        const gen_config *b = cands[i].config;
        if (tried[i] || i == from || b->family != a->family)
            continue;
        int diff = 0;   /* the problem's parameters are one workload's (EVEN_M, EVEN_N follow the tiles) */
        for (int p = 0; p < GEN_PARAM_COUNT && diff <= 1; p++)
            diff += ((tunable >> p) & 1u) && a->p[p] != b->p[p];
        if (diff == 1)
            out[m++] = i;
    }
    return m;
}

/* How many random picks start the guided search beside the known winners. */
#define TUNE_GUIDED_STARTS 8
/* The best this many timed so far have their neighbours tried next. */
#define TUNE_GUIDED_TOP 3

static int measure_guided(const tune_strategy_task *t, const tune_oracle *o)
{
    const int n = t->pending_count;
    /* Candidate indices index t->cands; the pending ones are the search's universe. */
    int universe = 0;
    for (int i = 0; i < n; i++)
        universe = t->pending[i] + 1 > universe ? t->pending[i] + 1 : universe;
    unsigned char *tried = calloc((size_t)(universe ? universe : 1), 1);
    unsigned char *pending = calloc((size_t)(universe ? universe : 1), 1);
    int *order = malloc((size_t)(n ? n : 1) * sizeof *order);   /* the timed, in the order timed */
    int *batch = malloc((size_t)(n ? n : 1) * sizeof *batch);
    int *nb = malloc((size_t)(universe ? universe : 1) * sizeof *nb);
    int *rest = malloc((size_t)(n ? n : 1) * sizeof *rest);
    tune_record *first = new_records(n);
    if (!tried || !pending || !order || !batch || !nb || !rest || !first) {
        free(tried), free(pending), free(order), free(batch), free(nb), free(rest), free(first);
        return TUNE_PHASE_SETUP_FAILED;
    }
    /* Outside the pending set, everything counts as tried: stored before, never searched again. */
    memset(tried, 1, (size_t)universe);
    for (int i = 0; i < n; i++)
        tried[t->pending[i]] = 0, pending[t->pending[i]] = 1;
    unsigned long long state = t->strategy->seed * 0x9E3779B97F4A7C15ULL + 1;
    /* The starts: the incumbent and the known winners, then random picks. */
    int b = starts_first(t, batch), r = 0;
    for (int i = 0; i < n; i++)
        if (!starts(&t->cands[t->pending[i]]))
            rest[r++] = t->pending[i];
    shuffle(rest, r, &state);
    for (int i = 0; i < r && i < TUNE_GUIDED_STARTS; i++)
        batch[b++] = rest[i];

    first_pass fp = { t, o, o->spent(o->ctx), built_s(o), 0, 0, 0, 0, 0 };
    int rc = TUNE_PHASE_OK, done = 0, budget_spent = 0;
    while (b > 0 && rc == TUNE_PHASE_OK) {
        /* The batch in pieces, each as large as the budget affords as far as it is known. */
        for (int from = 0; from < b && rc == TUNE_PHASE_OK;) {
            int take = 0;
            while (from + take < b) {
                fp.timed = done + take;
                if (!affords_one_more(&fp))
                    break;
                take++;
            }
            if (take == 0) {
                budget_spent = 1;
                break;
            }
            for (int i = 0; i < take; i++)
                tried[batch[from + i]] = 1, order[done + i] = batch[from + i];
            if (o->plan)
                o->plan(o->ctx, take);
            rc = o->time(o->ctx, batch + from, take, &t->strategy->first, 0, first + done, " (first pass)");
            done += take;
            from += take;
            first_pass_took(&fp, take);
        }
        if (budget_spent || rc != TUNE_PHASE_OK)
            break;
        /* Next: the untried neighbours of the best so far, best first. */
        int idx[TUNE_GUIDED_TOP], top = 0;
        for (int i = 0; i < done; i++) {
            if (first[i].id < 0 || first[i].status != DB_STATUS_OK)
                continue;
            int at = top;
            while (at > 0 && first[idx[at - 1]].median_ms > first[i].median_ms)
                at--;
            if (at == TUNE_GUIDED_TOP)
                continue;
            if (top < TUNE_GUIDED_TOP)
                top++;
            for (int j = top - 1; j > at; j--)
                idx[j] = idx[j - 1];
            idx[at] = i;
        }
        b = 0;
        for (int k = 0; k < top; k++) {
            const int m = tune_strategy_neighbours(t->cands, universe, tried, order[idx[k]], nb);
            for (int j = 0; j < m; j++)
                if (pending[nb[j]] && !tried[nb[j]]) {
                    tried[nb[j]] = 1;   /* queued; marked so that two tops do not queue it twice */
                    batch[b++] = nb[j];
                }
        }
        for (int j = 0; j < b; j++)
            tried[batch[j]] = 0;
    }
    /* What the search never reached, stored as skipped. */
    int left = 0;
    for (int i = 0; i < n; i++)
        if (!tried[t->pending[i]])
            rest[left++] = t->pending[i];
    if (rc == TUNE_PHASE_OK && left)
        rc = store_unreached(o, rest, left, done, n, budget_spent ? "the workload's budget was spent"
                                                                  : "the guided search reached its best");
    if (rc == TUNE_PHASE_OK)
        rc = cut_and_finish(t, o, order, first, done);
    free(tried), free(pending), free(order), free(batch), free(nb), free(rest), free(first);
    return rc;
}

/* ---- the entry ------------------------------------------------------------------------------ */

int tune_strategy_measure(const tune_strategy_task *t, const tune_oracle *o)
{
    const tune_strategy *st = t->strategy;
    if (t->pending_count == 0)
        return TUNE_PHASE_OK;
    if (t->decided_before || st->kind == TUNE_EXHAUSTIVE || st->kind == TUNE_RANDOM)
        return time_full(t, o, t->pending, t->pending_count);
    if (st->kind == TUNE_GUIDED)
        return measure_guided(t, o);
    if (st->kind == TUNE_HALVING)
        return measure_halving(t, o);
    /* Prune: everything briefly, then the best fraction with the full bench. */
    tune_record *first = new_records(t->pending_count);
    if (!first)
        return TUNE_PHASE_SETUP_FAILED;
    int rc = o->time(o->ctx, t->pending, t->pending_count, &st->first, 0, first, " (first pass)");
    if (rc == TUNE_PHASE_OK)
        rc = cut_and_finish(t, o, t->pending, first, t->pending_count);
    free(first);
    return rc;
}
