/* The sweep's plan: one unit per (space, workload) with its kernels and database rows, the
 * stored winners of its workload added to its candidates where the space lacks them, the resume
 * filter that leaves out what the database already holds, and the order a unit's search takes its
 * pending candidates in (this GPU's known winners first, read before each unit, and the shipped
 * table's winner the runtime would serve the workload with). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "tune_sweep_internal.h"

/* ---- resume ------------------------------------------------------------------------------ */

int tune_sweep_pending(db *d, int64_t device_id, int64_t workload_id, const int64_t *kernel_ids, int count,
                       int *pending, int *pending_count, int *pruned, char *err, size_t len)
{
    *pending_count = 0;
    if (pruned)
        *pruned = 0;
    for (int i = 0; i < count; i++) {
        db_status st;
        int found = db_result_get(d, device_id, workload_id, kernel_ids[i], &st, err, len);
        if (found < 0)
            return -1;
        if (!found)
            pending[(*pending_count)++] = i;
        else if (pruned && st == DB_STATUS_SKIPPED)
            (*pruned)++;
    }
    return 0;
}

/* ---- order ------------------------------------------------------------------------------- */

int tune_sweep_same_kernel(const gen_config *c, const db_kernel *k)
{
    if (strcmp(c->family->name, k->family) != 0)
        return 0;
    const gen_param_set tunables = gen_param_mask(GEN_ROLE_TUNABLE) & c->family->params;
    for (int p = 0; p < GEN_PARAM_COUNT; p++)
        if ((tunables & GEN_BIT(p)) && c->p[p] != k->p[p])
            return 0;
    return 1;
}

int tune_sweep_known_first(const gen_config *configs, int *pending, int n, const db_kernel *known, int known_n)
{
    int first = 0;   /* pending[0..first) are known; a stable partition by insertion */
    for (int i = 0; i < n; i++) {
        int hit = 0;
        for (int k = 0; k < known_n && !hit; k++)
            hit = tune_sweep_same_kernel(&configs[pending[i]], &known[k]);
        if (!hit)
            continue;
        const int c = pending[i];
        memmove(&pending[first + 1], &pending[first], (size_t)(i - first) * sizeof *pending);
        pending[first++] = c;
    }
    return first;
}

int tune_sweep_seed(db *seeds, const char *device_name, const char *arch, int sm_count, const db_workload *w,
                    db_kernel *out, char *err, size_t len)
{
    if (!seeds)
        return 0;
    db_winner win;
    const int found = rt_find_served(seeds, device_name, arch, sm_count, w, &win, err, len);
    if (found == 1)
        *out = win.kernel;
    return found;
}

/* ---- the stored winners re-timed ---------------------------------------------------------- */

int tune_sweep_winners_to_add(const gen_config *configs, int n, const db_workload *w, const db_kernel *winners,
                              int winners_n, int smem_limit, const char *arch, gen_config *out)
{
    if (n <= 0)
        return 0;
    const gen_family *f = configs[0].family;
    const gen_param_set tunables = gen_param_mask(GEN_ROLE_TUNABLE) & f->params;
    int added = 0;
    /* A grouped backward's split is the problem's, as every candidate of the enumeration has it:
     * a winner stored for another problem is timed with this one's. */
    const int splits = tune_workload_splits(f, w);
    for (int k = 0; k < winners_n; k++) {
        if (strcmp(winners[k].family, f->name) != 0)
            continue;   /* another family's kernel is no candidate of this space */
        db_kernel winner = winners[k];
        if (splits)
            winner.p[GEN_SPLITS] = splits;
        int have = 0;   /* a candidate already, or added: timed once */
        for (int c = 0; c < n && !have; c++)
            have = tune_sweep_same_kernel(&configs[c], &winner);
        for (int a = 0; a < added && !have; a++)
            have = tune_sweep_same_kernel(&out[a], &winner);
        if (have)
            continue;
        gen_config c = configs[0];   /* the workload's parameters as the space set them, the winner's tunables */
        for (int p = 0; p < GEN_PARAM_COUNT; p++)
            if (tunables & GEN_BIT(p))
                c.p[p] = winner.p[p];
        gen_config_fit_lengths(&c, w->seqlen_q, w->seqlen_k);
        /* The enumeration's checks (tune_space_enum.c) but where(): the space's preferences are
         * what a stored winner outside it escapes, the family's rules are not. */
        char why[TUNE_REASON_LEN];
        if (gen_validate(&c, smem_limit, why, sizeof why) == 0 && gen_check_arch(f, arch, why, sizeof why) == 0 &&
            gen_check_problem_heads(&c, w->heads, w->heads_k, why, sizeof why) == 0)
            out[added++] = c;
    }
    return added;
}

/* Gives u the stored winners of its workload that its space lacks (tune_sweep_winners_to_add):
 * this GPU's winner in the sweep's database (a winners file's import, an earlier sweep's; of
 * every device row of its name) and the shipped tables' seed. They are known winners, so the
 * search times them first; the kernels and the resume filter take them as any candidate, so a
 * resumed sweep does not time them twice. And u's incumbent: of those, the one the declaration
 * will weigh the timings against. list[0..list_n): the database's winners. 0 or -1 (s->err). */
static int add_stored_winners(tune_sweep *s, tune_unit *u, const tune_space_set *set, const db_winner *list,
                              int list_n)
{
    const int count = u->cands->count;
    db_kernel *stored = malloc((size_t)(list_n + 1) * sizeof *stored);
    gen_config *configs = malloc((size_t)(count + list_n + 1) * sizeof *configs);
    if (!stored || !configs) {
        free(stored), free(configs);
        return snprintf(s->err, sizeof s->err, "out of memory"), -1;
    }
    int n = 0;
    for (int i = 0; i < list_n; i++)
        if (list[i].workload_id == u->workload_id && !strcmp(list[i].device.name, s->gpu->dev.name))
            stored[n++] = list[i].kernel;
    /* The incumbent (db_declared_incumbent): this row's declaration, else another row's of the
     * GPU (an older driver's). The winners view serves declarations, so it is one of `stored`
     * (a candidate, or added below) but where its declared kernel lost its valid result: then
     * no candidate is marked. */
    int64_t inc_id;
    int found = db_declared_incumbent(s->d, s->device_id, u->workload_id, &inc_id, s->err, sizeof s->err);
    if (found == 1)
        found = db_kernel_get(s->d, inc_id, &u->incumbent, s->err, sizeof s->err);
    if (found < 0) {
        free(stored), free(configs);
        return -1;
    }
    u->has_incumbent = found == 1;
    if (u->seeded)
        stored[n++] = u->seed;
    const int smem_limit = set->device.smem_per_block_optin > 0 ? set->device.smem_per_block_optin
                                                                : gen_smem_limit_for_arch(set->device.arch);
    u->added = tune_sweep_winners_to_add(u->cands->configs, count, &u->cands->workload, stored, n, smem_limit,
                                         set->device.arch, configs + count);
    free(stored);
    if (!u->added) {
        free(configs);
        return 0;
    }
    memcpy(configs, u->cands->configs, (size_t)count * sizeof *configs);
    u->grown = *u->cands;
    u->grown.configs = configs;
    u->grown.count = count + u->added;
    u->cands = &u->grown;
    return 0;
}

int tune_sweep_known_winners(tune_sweep *s, db_kernel **known, int *n)
{
    db_winner *list = NULL;
    int count = 0;
    *known = NULL;
    *n = 0;
    if (db_winners_list(s->d, &list, &count, s->err, sizeof s->err) != 0)
        return -1;
    *known = malloc((size_t)(count ? count : 1) * sizeof **known);
    if (!*known) {
        free(list);
        return snprintf(s->err, sizeof s->err, "out of memory"), -1;
    }
    for (int i = 0; i < count; i++)
        if (!strcmp(list[i].device.name, s->gpu->dev.name))
            (*known)[(*n)++] = list[i].kernel;
    free(list);
    return 0;
}

/* ---- units ------------------------------------------------------------------------------- */

/* The shipped tables' winner for u's workload dw, kept in u (a failed lookup said once: the seed
 * only adds a candidate and orders the search, so the sweep goes on). */
static void find_seed(tune_sweep *s, tune_unit *u, const db_workload *dw)
{
    char why[256];
    const int found = tune_sweep_seed(s->seeds, s->gpu->dev.name, s->gpu->dev.arch, s->gpu->dev.sm_count, dw, &u->seed, why,
                                      sizeof why);
    u->seeded = found == 1;
    if (found < 0 && !s->seed_failure_said) {
        printf("flashtune tune: the shipped winners could not seed the searches: %s\n", why);
        s->seed_failure_said = 1;
    }
}

/* The units of the set, in order: their workload rows, the stored winners they lack (winners:
 * the database's), their kernels and rows, and what is pending. 0 or -1 (s->err). */
static int plan_units(tune_sweep *s, const tune_space_set *set, const db_winner *winners, int winners_n)
{
    for (int i = 0; i < set->space_count; i++)
        for (int w = 0; w < set->spaces[i].workload_count; w++) {
            tune_unit *u = &s->units[s->unit_count++];
            u->space = &set->spaces[i];
            u->worker = (tune_worker_proc){ .pid = -1, .fd = -1, .cmd_fd = -1 };   /* none yet */
            u->cands = &set->spaces[i].workloads[w];
            u->backward = u->space->family->backward;
            const db_workload *tw = &u->cands->workload;
            db_workload dw;
            tune_workload_db(tw, u->backward ? DB_OP_BWD : DB_OP_FWD, &dw);
            if (db_workload_upsert(s->d, &dw, &u->workload_id, s->err, sizeof s->err) != 0)
                return -1;
            find_seed(s, u, &dw);
            if (add_stored_winners(s, u, set, winners, winners_n) != 0)
                return -1;
            gen_config_init(&u->ref_config, gen_family_find("ref"));
            u->ref_config.p[GEN_DTYPE] = tw->dtype;
            u->ref_config.p[GEN_HEAD_DIM] = tw->head_dim;
            u->ref_config.p[GEN_HEAD_DIM_V] = tw->head_dim_v;
            u->ref_config.p[GEN_CAUSAL] = db_workload_masked(tw);
            u->ref_config.p[GEN_VARLEN] = tw->varlen != 0;
            u->job = malloc((size_t)(u->cands->count ? u->cands->count : 1) * sizeof *u->job);
            u->pending = malloc((size_t)(u->cands->count ? u->cands->count : 1) * sizeof *u->pending);
            int64_t *ids = malloc((size_t)(u->cands->count ? u->cands->count : 1) * sizeof *ids);
            if (!u->job || !u->pending || !ids || (u->ref_job = tune_kernels_add(&s->ks, &u->ref_config)) < 0) {
                free(ids);
                return snprintf(s->err, sizeof s->err, "out of memory, or a template missing from this build"), -1;
            }
            for (int c = 0; c < u->cands->count; c++)
                if ((u->job[c] = tune_kernels_add(&s->ks, &u->cands->configs[c])) < 0) {
                    free(ids);
                    return snprintf(s->err, sizeof s->err, "out of memory, or a template missing from this build"), -1;
                }
            /* Kernels get their rows now: the resume filter needs their ids. */
            int rc = 0;
            for (int c = 0; c < u->cands->count && rc == 0; c++) {
                tune_kernel_job *j = &s->ks.jobs[u->job[c]];
                if (!j->kernel_id) {
                    db_kernel k = { .p = { 0 } };
                    snprintf(k.family, sizeof k.family, "%s", j->config.family->name);
                    memcpy(k.source_hash, j->hash, sizeof k.source_hash);
                    memcpy(k.p, j->config.p, sizeof k.p);
                    rc = db_kernel_upsert(s->d, &k, &j->kernel_id, s->err, sizeof s->err);
                }
                ids[c] = j->kernel_id;
            }
            if (rc == 0)
                rc = tune_sweep_pending(s->d, s->device_id, u->workload_id, ids, u->cands->count, u->pending,
                                        &u->pending_count, &u->pruned_before, s->err, sizeof s->err);
            free(ids);
            if (rc != 0)
                return -1;
            u->lazy = !u->pruned_before && tune_strategy_takes_budget(u->space->strategy.kind);
            for (int c = 0; c < u->pending_count && !u->lazy; c++)
                s->ks.jobs[u->job[u->pending[c]]].needed = 1;
            if (u->pending_count)
                s->ks.jobs[u->ref_job].needed = 1;
        }
    return 0;
}

int tune_sweep_plan(tune_sweep *s, const tune_space_set *set)
{
    int count = 0;
    for (int i = 0; i < set->space_count; i++)
        count += set->spaces[i].workload_count;
    s->units = calloc((size_t)(count ? count : 1), sizeof *s->units);
    if (!s->units)
        return snprintf(s->err, sizeof s->err, "out of memory"), -1;
    db_winner *winners = NULL;   /* read once: the plan stores no result, so none changes */
    int winners_n = 0;
    if (db_winners_list(s->d, &winners, &winners_n, s->err, sizeof s->err) != 0)
        return -1;
    const int rc = plan_units(s, set, winners, winners_n);
    free(winners);
    return rc;
}
