/* The launches of a plan: argument blocks, batches split so grid.y stays within CUDA's 65535,
 * and the dQ accumulator zeroed where the atomic backward needs it. The hot path: no locks,
 * no allocation. */
#include <math.h>
#include <string.h>

#include "ft_mask.h"
#include "rt_internal.h"

#define GRID_Y_MAX 65535

static const void *offset(const void *p, int64_t elems, size_t bytes)
{
    return p ? (const char *)p + elems * (int64_t)bytes : NULL;
}

static void copy_strides(long long dst[3], const int64_t src[3])
{
    for (int i = 0; i < 3; i++)
        dst[i] = (long long)src[i];
}

static double scale_of(const ft_attention_desc *d)
{
    return d->softmax_scale != 0 ? (double)d->softmax_scale : 1.0 / sqrt((double)d->head_dim);
}

/* Forward argument block for batches [b0, b0 + nb). */
static void fwd_args(const ft_attention_desc *d, const rt_data *p, int b0, int nb, ft_fwd_args *a)
{
    const size_t e = rt_elem_bytes(d->dtype), acc = rt_acc_bytes(d->dtype);
    const int64_t rows = (int64_t)d->heads * d->seqlen_q;
    memset(a, 0, sizeof *a);
    a->q = offset(p->q, b0 * d->q_stride[0], e);
    a->k = offset(p->k, b0 * d->k_stride[0], e);
    a->v = offset(p->v, b0 * d->v_stride[0], e);
    a->o = (void *)offset(p->o_out, b0 * d->o_stride[0], e);
    a->lse = (void *)offset(p->lse_out, b0 * rows, acc);
    copy_strides(a->q_stride, d->q_stride);
    copy_strides(a->k_stride, d->k_stride);
    copy_strides(a->v_stride, d->v_stride);
    copy_strides(a->o_stride, d->o_stride);
    a->batch = nb;
    a->heads = d->heads;
    a->seqlen_q = d->seqlen_q;
    a->seqlen_k = d->seqlen_k;
    a->softmax_scale = scale_of(d);
    rt_mask_band(d, &a->mask_lo, &a->mask_hi);
}

static void bwd_args(const ft_attention_desc *d, const rt_data *p, CUdeviceptr delta, CUdeviceptr accum, int b0,
                     int nb, ft_bwd_args *a)
{
    const size_t e = rt_elem_bytes(d->dtype), acc = rt_acc_bytes(d->dtype);
    const int64_t rows = (int64_t)d->heads * d->seqlen_q, dim = d->head_dim;
    memset(a, 0, sizeof *a);
    a->q = offset(p->q, b0 * d->q_stride[0], e);
    a->k = offset(p->k, b0 * d->k_stride[0], e);
    a->v = offset(p->v, b0 * d->v_stride[0], e);
    a->o = offset(p->o, b0 * d->o_stride[0], e);
    a->dout = offset(p->dout, b0 * d->o_stride[0], e);
    a->lse = offset(p->lse, b0 * rows, acc);
    a->dq = (void *)offset(p->dq, b0 * d->q_stride[0], e);
    a->dk = (void *)offset(p->dk, b0 * d->k_stride[0], e);
    a->dv = (void *)offset(p->dv, b0 * d->v_stride[0], e);
    a->delta = (void *)offset((const void *)(uintptr_t)delta, b0 * rows, acc);
    a->dq_accum = accum ? (void *)offset((const void *)(uintptr_t)accum, b0 * rows * dim, acc) : NULL;
    copy_strides(a->q_stride, d->q_stride);
    copy_strides(a->k_stride, d->k_stride);
    copy_strides(a->v_stride, d->v_stride);
    copy_strides(a->o_stride, d->o_stride);
    copy_strides(a->do_stride, d->o_stride);
    copy_strides(a->dq_stride, d->q_stride);
    copy_strides(a->dk_stride, d->k_stride);
    copy_strides(a->dv_stride, d->v_stride);
    a->batch = nb;
    a->heads = d->heads;
    a->seqlen_q = d->seqlen_q;
    a->seqlen_k = d->seqlen_k;
    a->softmax_scale = scale_of(d);
    rt_mask_band(d, &a->mask_lo, &a->mask_hi);
}

CUresult rt_launch(const cu_driver *cu, const rt_plan *plan, const ft_attention_desc *d, const rt_data *p,
                   CUdeviceptr delta, CUdeviceptr accum, CUstream stream)
{
    const int per_launch = GRID_Y_MAX / d->heads;   /* rt_check_desc keeps heads <= 65535 */
    const int backward = plan->w.op == DB_OP_BWD;
    if (!plan->uses_accum)
        accum = 0;
    if (plan->zero_accum_before >= 0) {
        const size_t bytes = (size_t)d->batch * d->heads * d->seqlen_q * d->head_dim * rt_acc_bytes(d->dtype);
        CUresult rc = cu->MemsetD8Async(accum, 0, bytes, stream);
        if (rc != CUDA_SUCCESS)
            return rc;
    }
    for (int b0 = 0; b0 < d->batch; b0 += per_launch) {
        const int nb = d->batch - b0 < per_launch ? d->batch - b0 : per_launch;
        ft_fwd_args fa;
        ft_bwd_args ba;
        void *params[1];
        if (backward) {
            bwd_args(d, p, delta, accum, b0, nb, &ba);
            params[0] = &ba;
        } else {
            fwd_args(d, p, b0, nb, &fa);
            params[0] = &fa;
        }
        for (int i = 0; i < plan->step_count; i++) {
            const rt_step *s = &plan->steps[i];
            CUresult rc = cu->LaunchKernel(s->fn, s->grid_x, (unsigned)(nb * d->heads), 1, s->block_x, 1, 1, s->smem,
                                           stream, params, NULL);
            if (rc != CUDA_SUCCESS)
                return rc;
        }
    }
    return CUDA_SUCCESS;
}
