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

/* A plan's counts taken for a flush, to give back if the file cannot take them. */
typedef struct taken {
    rt_plan *plan;
    unsigned long long calls;
} taken;

ft_status rt_capture_flush(ft_context *ctx, const char *func)
{
    if (!ctx->capture[0])
        return rt_fail(ctx, FT_ERR_INVALID_ARGUMENT, "%s: no capture file (set FLASHTUNE_CAPTURE before ft_open, or "
                       "call ft_capture_to)", func);
    taken *plans = NULL;
    db_capture_row *rows = NULL;
    int n_plans = 0, plans_cap = 0, n_rows = 0, rows_cap = 0;
    ft_status s = FT_OK;
    for (int b = 0; b < RT_BUCKETS && s == FT_OK; b++)
        for (rt_plan *p = atomic_load_explicit(&ctx->buckets[b], memory_order_acquire); p && s == FT_OK;
             p = atomic_load_explicit(&p->next, memory_order_acquire)) {
            if (p->variant == RT_REFERENCE || !atomic_load_explicit(&p->calls, memory_order_relaxed))
                continue;
            if (n_plans == plans_cap) {
                plans_cap = plans_cap ? 2 * plans_cap : 64;
                taken *grown = realloc(plans, (size_t)plans_cap * sizeof *plans);
                if (!grown) {
                    s = rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
                    break;
                }
                plans = grown;
            }
            plans[n_plans].plan = p;
            plans[n_plans++].calls = atomic_exchange_explicit(&p->calls, 0, memory_order_relaxed);
        }
    /* One row a problem, as the lookup keys it (head dims padded to the compiled ones, which is
     * what a tuned winner must have): the same problem planned in two CUDA contexts adds up. */
    for (int i = 0; i < n_plans && s == FT_OK; i++) {
        const rt_plan *p = plans[i].plan;
        const int deterministic = p->variant == RT_DETERMINISTIC;
        db_workload key = p->w;
        key.head_dim = ln_padded_head_dim(key.head_dim);
        key.head_dim_v = ln_padded_head_dim(key.head_dim_v);
        int r = 0;
        while (r < n_rows && !(rows[r].deterministic == deterministic && !memcmp(&rows[r].workload, &key, sizeof key)))
            r++;
        if (r == n_rows) {
            if (n_rows == rows_cap) {
                rows_cap = rows_cap ? 2 * rows_cap : 64;
                db_capture_row *grown = realloc(rows, (size_t)rows_cap * sizeof *rows);
                if (!grown) {
                    s = rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
                    break;
                }
                rows = grown;
            }
            memset(&rows[r], 0, sizeof rows[r]);
            rows[r].workload = key;
            rows[r].deterministic = deterministic;
            n_rows++;
        }
        rows[r].calls += plans[i].calls;
        rows[r].served = served_of(p->choice.tier);
    }
    char err[RT_ERR_LEN];
    if (s == FT_OK && n_rows && db_capture_merge(ctx->capture, rows, n_rows, err, sizeof err) != 0)
        s = rt_fail(ctx, FT_ERR_IO, "%s: %s (the counts are kept for the next flush)", func, err);
    if (s != FT_OK)   /* nothing is lost: the counts go back to their plans */
        for (int i = 0; i < n_plans; i++)
            atomic_fetch_add_explicit(&plans[i].plan->calls, plans[i].calls, memory_order_relaxed);
    free(plans);
    free(rows);
    return s;
}
