/* The launches: the project's only cuLaunchKernel, and a plan's launches for a problem with
 * the batch split so grid.y (batch*heads) stays within 65535. The runtime's hot path: no
 * locks, no allocation. */
#include "ln_internal.h"

CUresult ln_launch_one(const cu_driver *cu, CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned block_x,
                       unsigned smem, CUstream stream, void **params)
{
    return cu->LaunchKernel(fn, grid_x, grid_y, 1, block_x, 1, 1, smem, stream, params, NULL);
}

CUresult ln_launch(const cu_driver *cu, const ln_plan *plan, const ln_problem *p, CUstream stream)
{
    const int heads_k = ln_heads_k(p);
    if (p->batch < 1 || p->heads < 1 || p->heads > LN_GRID_Y_MAX || p->seqlen_q != plan->seqlen_q ||
        p->seqlen_k != plan->seqlen_k || p->head_dim != plan->head_dim || p->head_dim_v != plan->head_dim_v ||
        plan->accum_cols > ln_accum_head_dim(p->head_dim) || heads_k < 1 || p->heads % heads_k != 0 ||
        (ln_problem_features(p) & ~plan->features) != 0 || (plan->required & ~ln_problem_features(p)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* A split plan: its workspace, and (backward) shares of whole groups. */
    if (plan->splits > 1 && (!p->split_ws || p->split_ws_bytes < ln_split_workspace_bytes(plan, p) ||
                             (plan->backward && (p->heads / heads_k) % plan->splits != 0)))
        return CUDA_ERROR_INVALID_VALUE;
    const int per_launch = LN_GRID_Y_MAX / p->heads;
    CUresult rc;
    /* Once for every slice: the accumulator and the order area cover the whole batch. DQ_INIT
     * store: the order area alone (its counters say which share comes first). */
    if (plan->accum) {
        const size_t bytes = ln_accum_bytes(p->dtype, p->batch, p->heads, p->seqlen_q, p->total_q, p->head_dim);
        const size_t skip = plan->accum_stored ? ln_dq_order_offset(p) : 0;
        if ((rc = cu->MemsetD8Async(p->dq_accum + skip, 0, bytes - skip, stream)) != CUDA_SUCCESS)
            return rc;
    }
    /* The sinks' gradient is summed over the whole batch, each slice's rows adding theirs. */
    if (plan->backward && p->dsinks &&
        (rc = cu->MemsetD8Async(p->dsinks, 0, (size_t)p->heads * ln_acc_bytes(p->dtype), stream)) != CUDA_SUCCESS)
        return rc;
    for (int b0 = 0; b0 < p->batch; b0 += per_launch) {
        const int nb = p->batch - b0 < per_launch ? p->batch - b0 : per_launch;
        ft_fwd_args fa;
        ft_bwd_args ba;
        void *params[1];
        if (plan->backward) {
            ln_bwd_args(p, plan->accum_cols, b0, nb, &ba);
            ln_bwd_split_args(p, plan->splits, plan->part_cols_k, plan->part_cols, b0, &ba);
            if (plan->map_rows &&
                (rc = ln_bwd_tensor_maps(cu, p, plan->map_rows, plan->o_map_rows, &ba)) != CUDA_SUCCESS)
                return rc;
            params[0] = &ba;
        } else {
            ln_fwd_args(p, plan->splits, plan->part_cols, b0, nb, &fa);
            if (plan->map_rows && (rc = ln_fwd_tensor_maps(cu, p, plan->map_rows, plan->q_map_rows, plan->o_map_rows,
                                                           plan->map_row_bytes, &fa)) != CUDA_SUCCESS)
                return rc;
            params[0] = &fa;
        }
        for (int i = 0; i < plan->count; i++) {
            const ln_step *s = &plan->steps[i];
            unsigned gx, gy;
            ln_step_grid(s, p, nb, &gx, &gy);
            if ((rc = ln_launch_one(cu, s->fn, gx, gy, s->block_x, s->smem, stream, params)) != CUDA_SUCCESS)
                return rc;
        }
    }
    return CUDA_SUCCESS;
}
