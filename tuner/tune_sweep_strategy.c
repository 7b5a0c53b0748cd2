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
} sweep_oracle;

static int oracle_time(void *ctx, const int *cands, int n, const tune_bench *bench, int store_ok, tune_record *out,
                       const char *pass)
{
    sweep_oracle *so = ctx;
    for (int i = 0; i < n; i++)
        tune_record_init(&out[i], -1);
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

int tune_sweep_measure_unit(tune_sweep *s, tune_unit *u, double budget_s)
{
    const int n = u->cands->count;
    tune_strategy_cand *cands = calloc((size_t)(n ? n : 1), sizeof *cands);
    if (!cands) {
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    for (int c = 0; c < n; c++)
        cands[c].config = &u->cands->configs[c];
    /* The known winners again: the workloads measured since the plan have theirs now. */
    db_kernel *known;
    int known_n;
    if (tune_sweep_known_winners(s, &known, &known_n) != 0) {
        free(cands);
        snprintf(u->failure, sizeof u->failure, "%s", s->err);
        return TUNE_PHASE_DB_ERROR;
    }
    u->known_count = tune_sweep_known_first(u->cands->configs, u->pending, u->pending_count, known, known_n);
    free(known);
    for (int i = 0; i < u->known_count; i++)
        cands[u->pending[i]].known = 1;
    tune_strategy strategy = u->space->strategy;
    if (strategy.budget_s <= 0 && budget_s > 0)
        strategy.budget_s = budget_s;
    const tune_strategy_task task = {
        .strategy = &strategy, .bench = &u->space->bench, .confirm = &u->space->confirm, .cands = cands,
        .pending = u->pending, .pending_count = u->pending_count, .decided_before = u->pruned_before,
        .budget_s = strategy.budget_s,
    };
    sweep_oracle so = { s, u, tune_now() };
    const tune_oracle o = { oracle_time, oracle_store, oracle_spent, oracle_plan, &so };
    const int rc = tune_strategy_measure(&task, &o);
    if (rc == TUNE_PHASE_SETUP_FAILED && !u->failure[0])
        snprintf(u->failure, sizeof u->failure, "out of memory");
    free(cands);
    return rc;
}
