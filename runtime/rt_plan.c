/* Plans: what a call needs after the first (the choice, its module and the launch module's
 * steps: functions, grids, shared memory), keyed by CUDA context and problem. Readers walk the
 * buckets without a lock; a plan is complete before it is published with a release store, and
 * never changes or goes away before ft_close. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

static uint64_t plan_hash(CUcontext context, const db_workload *w, rt_variant variant)
{
    const int fields[] = { w->op, w->dtype, w->head_dim, w->head_dim_v, w->causal, w->batch, w->heads,
                           w->seqlen_q, w->seqlen_k, w->heads_k, w->softcap, w->varlen, w->window,
                           w->window_left, w->window_right, w->bottom_right, w->sinks, (int)variant };
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)context;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        h ^= (uint32_t)fields[i];
        h *= 0x100000001b3ull;
    }
    return h ^ (h >> 29);
}

static int same(const rt_plan *p, uint64_t hash, CUcontext context, const db_workload *w, rt_variant variant)
{
    return p->hash == hash && p->context == context && p->variant == variant && !memcmp(&p->w, w, sizeof *w);
}

const rt_plan *rt_plan_find(ft_context *ctx, CUcontext context, const db_workload *w, rt_variant variant)
{
    const uint64_t h = plan_hash(context, w, variant);
    for (const rt_plan *p = atomic_load_explicit(&ctx->buckets[h % RT_BUCKETS], memory_order_acquire); p;
         p = atomic_load_explicit(&p->next, memory_order_acquire))
        if (same(p, h, context, w, variant))
            return p;
    return NULL;
}

/* The family's steps for the plan's problem, from the launch module (the shared-memory opt-in
 * was set when the module was loaded). */
static ft_status fill_steps(ft_context *ctx, const char *func, const cu_driver *cu, rt_plan *p)
{
    char err[512];
    const ln_op op = p->w.op == DB_OP_BWD ? LN_BACKWARD : LN_FORWARD;
    if (ln_plan_make(&p->choice.config, op, p->w.seqlen_q, p->w.seqlen_k, &p->launches, err, sizeof err) != 0)
        return rt_fail(ctx, FT_ERR_INTERNAL, "%s: %s", func, err);
    const char *missing = NULL;
    const CUresult rc = ln_plan_bind(cu, &p->launches, p->module->module, &missing);
    return rc == CUDA_SUCCESS ? FT_OK : rt_fail_cuda(ctx, func, missing, rc);
}

int rt_choose_flags(rt_variant v)
{
    return v == RT_DETERMINISTIC            ? RT_CHOOSE_DETERMINISTIC
           : v == RT_ANY_ROWS               ? RT_CHOOSE_ANY_ROWS
           : v == RT_DETERMINISTIC_ANY_ROWS ? RT_CHOOSE_DETERMINISTIC | RT_CHOOSE_ANY_ROWS
                                            : 0;
}

ft_status rt_plan_get(ft_context *ctx, const char *func, const cu_driver *cu, rt_cuctx *cc, const db_workload *w,
                      rt_variant variant, const rt_plan **out)
{
    const rt_plan *found = rt_plan_find(ctx, cc->context, w, variant);
    if (found) {
        *out = found;
        return FT_OK;
    }
    rt_plan *p = calloc(1, sizeof *p);
    if (!p)
        return rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
    p->hash = plan_hash(cc->context, w, variant);
    p->context = cc->context;
    p->w = *w;
    p->variant = variant;
    ft_status s = FT_OK;
    if (variant == RT_REFERENCE) {
        rt_reference_config(w, &p->choice.config);   /* the reference takes a softcap as it comes */
        p->choice.tier = RT_TIER_REFERENCE;
        snprintf(p->choice.why, sizeof p->choice.why, "GPU reference kernels (templates/families/ref.cu)");
    } else {
        char err[512];
        int db_error;
        if (rt_choose(ctx->user, ctx->shipped, &cc->info, w, rt_choose_flags(variant), &p->choice, &db_error, err,
                      sizeof err) != 0)
            s = rt_fail(ctx, db_error ? FT_ERR_DB : FT_ERR_UNSUPPORTED, "%s: %s", func, err);
    }
    if (s == FT_OK)
        s = rt_module_get(ctx, func, cu, cc, &p->choice.config, &p->module);
    if (s == FT_OK)
        s = fill_steps(ctx, func, cu, p);
    if (s != FT_OK) {
        free(p);
        return s;
    }
    pthread_mutex_lock(&ctx->lock);
    _Atomic(rt_plan *) *bucket = &ctx->buckets[p->hash % RT_BUCKETS];
    found = rt_plan_find(ctx, cc->context, w, variant);
    if (!found) {
        atomic_store_explicit(&p->next, atomic_load_explicit(bucket, memory_order_relaxed), memory_order_relaxed);
        atomic_store_explicit(bucket, p, memory_order_release);
        found = p;
        p = NULL;
    }
    pthread_mutex_unlock(&ctx->lock);
    free(p);
    *out = found;
    return FT_OK;
}

void rt_plans_free(ft_context *ctx)
{
    for (int i = 0; i < RT_BUCKETS; i++) {
        for (rt_plan *p = atomic_load(&ctx->buckets[i]); p;) {
            rt_plan *next = atomic_load(&p->next);
            free(p);
            p = next;
        }
        atomic_store(&ctx->buckets[i], NULL);
    }
}
