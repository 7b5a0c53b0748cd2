/* The sweep's side of a workload's search: the strategy (tune_strategy.c) runs against an oracle
 * that times candidates in the sweep's workers on the GPU, stores each result in the database and
 * counts wall-clock seconds. */
#include <stdio.h>
#include <stdlib.h>

#include "tune_sweep_internal.h"

typedef struct sweep_oracle {
    tune_sweep *s;
    tune_unit *u;
    double start;
    double built;               /* seconds of it spent compiling a lazy unit's kernels */
} sweep_oracle;

/* A lazy unit's batch: its kernels built first; one that did not compile is stored as such and
 * the rest are timed (their records put back in the batch's order). */
static int time_lazily(sweep_oracle *so, const int *cands, int n, const tune_bench *bench, int store_ok,
                       tune_record *out, const char *pass)
{
    tune_sweep *s = so->s;
    tune_unit *u = so->u;
    if (n == 0)
        return TUNE_PHASE_OK;
    const double t0 = tune_now();
    const int built = tune_sweep_build_batch(s, u, cands, n);
    so->built += tune_now() - t0;
    if (built != 0)
        return TUNE_PHASE_DB_ERROR;
    if (tune_sweep_interrupted)
        return TUNE_PHASE_INTERRUPTED;
    int *run = malloc((size_t)n * sizeof *run), *at = malloc((size_t)n * sizeof *at);
    tune_record *got = malloc((size_t)n * sizeof *got);
    if (!run || !at || !got) {
        free(run), free(at), free(got);
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    int m = 0, rc = TUNE_PHASE_OK;
    for (int i = 0; i < n && rc == TUNE_PHASE_OK; i++) {
        const tune_kernel_job *j = &s->ks.jobs[u->job[cands[i]]];
        if (j->ready) {
            run[m] = cands[i], at[m] = i;
            tune_record_init(&got[m++], -1);
            continue;
        }
        tune_record_init(&out[i], i);
        out[i].status = DB_STATUS_COMPILE_ERROR;
        snprintf(out[i].message, sizeof out[i].message, "%.500s", j->error[0] ? j->error : "not compiled");
        rc = tune_sweep_store(s, u, cands[i], &out[i]) == 0 ? TUNE_PHASE_OK : TUNE_PHASE_DB_ERROR;
        tune_sweep_progress(s, u, cands[i], &out[i], pass);
    }
    if (rc == TUNE_PHASE_OK)
        rc = tune_sweep_run_phase(s, u, run, m, bench, !store_ok, got, pass);
    for (int k = 0; k < m; k++)
        if (got[k].id >= 0) {
            out[at[k]] = got[k];
            out[at[k]].id = at[k];
        }
    free(run), free(at), free(got);
    return rc;
}

static int oracle_time(void *ctx, const int *cands, int n, const tune_bench *bench, int store_ok, tune_record *out,
                       const char *pass)
{
    sweep_oracle *so = ctx;
    for (int i = 0; i < n; i++)
        tune_record_init(&out[i], -1);
    if (so->u->lazy)
        return time_lazily(so, cands, n, bench, store_ok, out, pass);
    return tune_sweep_run_phase(so->s, so->u, cands, n, bench, !store_ok, out, pass);
}

static int oracle_store(void *ctx, int c, const tune_record *r)
{
    sweep_oracle *so = ctx;
    return tune_sweep_store(so->s, so->u, c, r) == 0 ? TUNE_PHASE_OK : TUNE_PHASE_DB_ERROR;
}

static double oracle_spent(void *ctx)
{
    return tune_now() - ((sweep_oracle *)ctx)->start;
}

static void oracle_plan(void *ctx, long more)
{
    ((sweep_oracle *)ctx)->s->total += more;
}

static double oracle_built(void *ctx)
{
    return ((sweep_oracle *)ctx)->built;
}

int tune_sweep_measure_unit(tune_sweep *s, tune_unit *u, double share_s)
{
    const int n = u->cands->count;
    tune_strategy_cand *cands = calloc((size_t)(n ? n : 1), sizeof *cands);
    if (!cands) {
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    for (int c = 0; c < n; c++) {
        cands[c].config = &u->cands->configs[c];
        cands[c].incumbent = u->has_incumbent && tune_sweep_same_kernel(cands[c].config, &u->incumbent);
    }
    /* This GPU's winners, read now: the workloads this sweep measured before have theirs. */
    db_kernel *known;
    int known_n;
    if (tune_sweep_known_winners(s, &known, &known_n) != 0) {
        free(cands);
        snprintf(u->failure, sizeof u->failure, "%s", s->err);
        return TUNE_PHASE_DB_ERROR;
    }
    /* And the shipped tables' winner for this workload (the plan's lookup): the runtime's choice
     * today, which the search then starts from (a sweep of a GPU model they hold improves on its
     * table). A candidate with it or the workload's own stored winner is one the plan may have
     * added (tune_sweep_winners_to_add): known, so timed first. */
    db_kernel *grown = u->seeded ? realloc(known, (size_t)(known_n + 1) * sizeof *known) : NULL;
    if (grown) {
        known = grown;
        known[known_n++] = u->seed;
    }
    const int known_count = tune_sweep_known_first(u->cands->configs, u->pending, u->pending_count, known, known_n);
    free(known);
    for (int i = 0; i < known_count; i++)
        cands[u->pending[i]].known = 1;
    const tune_strategy *st = &u->space->strategy;
    const tune_strategy_task task = {
        .strategy = st, .bench = &u->space->bench, .confirm = &u->space->confirm, .cands = cands,
        .pending = u->pending, .pending_count = u->pending_count, .decided_before = u->pruned_before,
        .budget_s = st->budget_s > 0 ? st->budget_s : share_s,
    };
    sweep_oracle so = { s, u, tune_now(), 0 };
    const tune_oracle o = { .time = oracle_time, .store = oracle_store, .spent = oracle_spent, .plan = oracle_plan,
                            .built = oracle_built, .width = s->threads, .ctx = &so };
    const int rc = tune_strategy_measure(&task, &o);
    tune_sweep_end_unit(u);
    if (rc == TUNE_PHASE_SETUP_FAILED && !u->failure[0])
        snprintf(u->failure, sizeof u->failure, "out of memory");
    free(cands);
    return rc;
}
