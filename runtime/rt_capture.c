/* Capture: with a capture file (FLASHTUNE_CAPTURE at ft_open, or ft_capture_to), every call
 * counts on its plan, and ft_capture_flush (ft_close too) merges the counts into the file, one
 * line a problem with what served it (db_capture_merge), so `flashtune tune --from-capture` can
 * tune what the application runs. Counting is one relaxed atomic add a call, and none without a
 * capture file. */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

void rt_capture_count(const ft_context *ctx, const rt_plan *plan)
{
    /* The one field of a published plan that changes (rt_internal.h). */
    if (ctx->capture[0] && plan->variant != RT_REFERENCE)
        atomic_fetch_add_explicit(&((rt_plan *)plan)->calls, 1, memory_order_relaxed);
}

static int served_of(int tier)
{
    return tier == RT_TIER_DB_EXACT || tier == RT_TIER_SHIPPED_EXACT       ? DB_SERVED_TUNED
           : tier == RT_TIER_DB_NEAREST || tier == RT_TIER_SHIPPED_NEAREST ? DB_SERVED_NEAREST
                                                                            : DB_SERVED_DEFAULT;
}

ft_status rt_capture_flush(ft_context *ctx, const char *func)
{
    if (!ctx->capture[0])
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: no capture file (set FLASHTUNE_CAPTURE before ft_open, or "
                       "call ft_capture_to)", func);
    /* One row a plan, its counts taken (given back if the file cannot take them), the problem as
     * the lookup keys it (head dims padded to the compiled ones, which a tuned winner must have);
     * db_capture_merge adds up the rows of one problem planned in several CUDA contexts. */
    rt_plan **plans = NULL;
    db_capture_row *rows = NULL;
    int n = 0, cap = 0;
    ft_status s = FT_OK;
    for (int b = 0; b < RT_BUCKETS && s == FT_OK; b++)
        for (rt_plan *p = atomic_load_explicit(&ctx->buckets[b], memory_order_acquire); p && s == FT_OK;
             p = atomic_load_explicit(&p->next, memory_order_acquire)) {
            if (p->variant == RT_REFERENCE || !atomic_load_explicit(&p->calls, memory_order_relaxed))
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                rt_plan **more_plans = realloc(plans, (size_t)cap * sizeof *plans);
                if (more_plans)
                    plans = more_plans;
                db_capture_row *more_rows = more_plans ? realloc(rows, (size_t)cap * sizeof *rows) : NULL;
                if (!more_rows) {
                    s = rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
                    break;
                }
                rows = more_rows;
            }
            db_capture_row *r = &rows[n];
            memset(r, 0, sizeof *r);
            r->workload = p->w;
            r->workload.head_dim = ln_padded_head_dim(p->w.head_dim);
            r->workload.head_dim_v = ln_padded_head_dim(p->w.head_dim_v);
            r->deterministic = p->variant == RT_DETERMINISTIC || p->variant == RT_DETERMINISTIC_ANY_ROWS;
            r->served = served_of(p->choice.tier);
            r->calls = atomic_exchange_explicit(&p->calls, 0, memory_order_relaxed);
            plans[n++] = p;
        }
    char err[RT_ERR_LEN];
    if (s == FT_OK && n && db_capture_merge(ctx->capture, rows, n, err, sizeof err) != 0)
        s = rt_fail(ctx, FT_ERR_IO, "%s: %s (the counts are kept for the next flush)", func, err);
    if (s != FT_OK)   /* nothing is lost: the counts go back to their plans */
        for (int i = 0; i < n; i++)
            atomic_fetch_add_explicit(&plans[i]->calls, rows[i].calls, memory_order_relaxed);
    free(plans);
    free(rows);
    return s;
}
