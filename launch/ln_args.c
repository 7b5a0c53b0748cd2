/* The kernels' argument blocks (ft_kernel_args.h) from a problem, for one batch slice. */
#include <stdint.h>
#include <string.h>

#include "ln_internal.h"

/* ptr moved by elems elements of bytes each; a null pointer stays null. */
static void *at(CUdeviceptr ptr, long long elems, size_t bytes)
{
    return ptr ? (void *)(uintptr_t)(ptr + (CUdeviceptr)(elems * (long long)bytes)) : NULL;
}

/* Batch b0 of a tensor of batch stride s, as an offset in elements: 0 for a variable-length
 * batch, whose sequences the prefix sums place. */
static long long batch_at(const ln_problem *p, int b0, long long s)
{
    return ln_varlen(p) ? 0 : b0 * s;
}

/* The fields ft_fwd_args and ft_bwd_args share, by name: q, k, v, o and lse moved to batch b0,
 * their strides, the sizes (batch = nb), the scale and the band, and a variable-length batch's
 * prefix sums from sequence b0 on, its total rows and its per-sequence band. */
#define FILL_SHARED(a, p, b0, nb)                                                              \
    do {                                                                                       \
        const size_t e_ = ln_elem_bytes((p)->dtype), acc_ = ln_acc_bytes((p)->dtype);          \
        (a)->q = at((p)->q, batch_at(p, b0, (p)->q_stride[0]), e_);                            \
        (a)->k = at((p)->k, batch_at(p, b0, (p)->k_stride[0]), e_);                            \
        (a)->v = at((p)->v, batch_at(p, b0, (p)->v_stride[0]), e_);                            \
        (a)->o = at((p)->o, batch_at(p, b0, (p)->o_stride[0]), e_);                            \
        (a)->lse = at((p)->lse, batch_at(p, b0, (long long)(p)->heads * (p)->seqlen_q), acc_); \
        memcpy((a)->q_stride, (p)->q_stride, sizeof (a)->q_stride);                            \
        memcpy((a)->k_stride, (p)->k_stride, sizeof (a)->k_stride);                            \
        memcpy((a)->v_stride, (p)->v_stride, sizeof (a)->v_stride);                            \
        memcpy((a)->o_stride, (p)->o_stride, sizeof (a)->o_stride);                            \
        (a)->batch = (nb);                                                                     \
        (a)->heads = (p)->heads;                                                               \
        (a)->seqlen_q = (p)->seqlen_q;                                                         \
        (a)->seqlen_k = (p)->seqlen_k;                                                         \
        (a)->softmax_scale = (p)->softmax_scale;                                               \
        (a)->mask_lo = (p)->mask_lo;                                                           \
        (a)->mask_hi = (p)->mask_hi;                                                           \
        (a)->heads_k = ln_heads_k(p);                                                          \
        (a)->softcap = (p)->softcap;                                                           \
        (a)->cu_seqlens_q = (const int *)at((p)->cu_seqlens_q, b0, sizeof(int));               \
        (a)->cu_seqlens_k = (const int *)at((p)->cu_seqlens_k, b0, sizeof(int));               \
        (a)->total_q = (p)->total_q;                                                           \
        (a)->mask_left = (p)->mask_left;                                                       \
        (a)->mask_right = (p)->mask_right;                                                     \
        (a)->mask_bottom_right = (p)->mask_bottom_right;                                       \
        (a)->sinks = at((p)->sinks, 0, acc_); /* a logit a query head, whatever the slice */   \
    } while (0)

void ln_fwd_args(const ln_problem *p, int splits, int part_cols, int b0, int nb, ft_fwd_args *a)
{
    memset(a, 0, sizeof *a);
    FILL_SHARED(a, p, b0, nb);
    if (splits > 1) {   /* partial rows move with lse's; a split's rows are those of the whole problem */
        size_t lse_offset;
        const size_t rows = ln_lse_rows(p);
        ln_fwd_workspace_bytes(splits, rows, part_cols, &lse_offset);
        const long long row0 = batch_at(p, b0, (long long)p->heads * p->seqlen_q);
        a->o_part = (float *)at(p->split_ws, row0 * part_cols, sizeof(float));
        a->lse_part = (float *)at(p->split_ws + lse_offset, row0, sizeof(float));
        a->part_rows = (long long)rows;
    }
}

void ln_bwd_split_args(const ln_problem *p, int splits, int dk_cols, int dv_cols, int b0, ft_bwd_args *a)
{
    if (splits <= 1)
        return;
    size_t dv_offset;
    const size_t rows = (size_t)p->batch * ln_heads_k(p) * p->seqlen_k;
    ln_bwd_split_bytes(splits, rows, dk_cols, dv_cols, &dv_offset);
    const long long row0 = (long long)b0 * ln_heads_k(p) * p->seqlen_k;
    a->dk_part = (float *)at(p->split_ws, row0 * dk_cols, sizeof(float));
    a->dv_part = (float *)at(p->split_ws + dv_offset, row0 * dv_cols, sizeof(float));
    a->part_rows = (long long)rows;
}

void ln_bwd_args(const ln_problem *p, int accum_cols, int b0, int nb, ft_bwd_args *a)
{
    const size_t e = ln_elem_bytes(p->dtype), acc = ln_acc_bytes(p->dtype);
    const long long rows = (long long)p->heads * p->seqlen_q;
    const int accum = accum_cols > 0;
    memset(a, 0, sizeof *a);
    FILL_SHARED(a, p, b0, nb);
    a->dout = at(p->dout, batch_at(p, b0, p->o_stride[0]), e);
    a->dq = at(p->dq, batch_at(p, b0, p->q_stride[0]), e);
    a->dk = at(p->dk, batch_at(p, b0, p->k_stride[0]), e);
    a->dv = at(p->dv, batch_at(p, b0, p->v_stride[0]), e);
    a->delta = at(p->delta, batch_at(p, b0, rows), acc);
    a->dq_accum = accum ? at(p->dq_accum, batch_at(p, b0, rows * accum_cols), acc) : NULL;
    a->dsinks = at(p->dsinks, 0, acc);   /* summed over the batch: every slice adds into the same */
    if (accum) {   /* the dQ order area past the whole accumulator (ln_workspace_bytes) */
        const CUdeviceptr order = p->dq_accum + (CUdeviceptr)ln_dq_order_offset(p);
        const long long sems_per_batch = (long long)p->heads * (long long)ln_dq_sems_per_head(p->seqlen_q);
        a->dq_ticket = at(order, b0, sizeof(int));
        a->dq_sems = at(order, p->batch + b0 * sems_per_batch, sizeof(int));
    }
    memcpy(a->do_stride, p->o_stride, sizeof a->do_stride);
    memcpy(a->dq_stride, p->q_stride, sizeof a->dq_stride);
    memcpy(a->dk_stride, p->k_stride, sizeof a->dk_stride);
    memcpy(a->dv_stride, p->v_stride, sizeof a->dv_stride);
}

/* One [batch][heads][rows][cols] tensor at base with element strides st (batch, head, row) as a
 * 4-D map, boxes of row_bytes a row (128: 64 16-bit columns or 32 floats, 128-byte swizzle; 64:
 * 32 16-bit columns, 64-byte swizzle) by box_rows rows, out-of-range rows as zeros.
 * A dimension of extent 1 gets a stride of its inner neighbour's span (the copy engine wants
 * every stride a multiple of 16 bytes, whatever the caller passed for an unused one). */
static CUresult encode_map(const cu_driver *cu, CUtensorMapDataType type, const void *base, const long long st[3],
                           int batch, int heads, int rows, int cols, int box_rows, int row_bytes, size_t e,
                           ft_tensor_map *out)
{
    if (row_bytes != 128 && row_bytes != 64)
        return CUDA_ERROR_INVALID_VALUE;
    const cuuint64_t dims[4] = { (cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)heads, (cuuint64_t)batch };
    cuuint64_t strides[3] = { (cuuint64_t)st[2] * e, (cuuint64_t)st[1] * e, (cuuint64_t)st[0] * e };
    for (int d = 1; d < 4; d++)
        if (dims[d] == 1)
            strides[d - 1] = d == 1 ? (cuuint64_t)cols * e : strides[d - 2] * dims[d - 1];
    const cuuint32_t box[4] = { (cuuint32_t)(row_bytes / e), (cuuint32_t)box_rows, 1, 1 }, unit[4] = { 1, 1, 1, 1 };
    return cu->TensorMapEncodeTiled((CUtensorMap *)out, type, 4, (void *)base, dims, strides, box, unit,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* One tensor of rows x cols of p's dtype as a map (encode_map), boxes of box_rows; the 16-bit
 * types and f32 (ft_dtype: 0 f32, 1 f16, 2 bf16; f32 for fwd_wgmma's TF32 products). */
static CUresult encode_one(const cu_driver *cu, const ln_problem *p, int batch, int heads, int rows, int box_rows,
                           int row_bytes, const void *base, const long long st[3], int cols, ft_tensor_map *out)
{
    if (p->dtype != 0 && p->dtype != 1 && p->dtype != 2)
        return CUDA_ERROR_INVALID_VALUE;
    const CUtensorMapDataType type = p->dtype == 0   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                     : p->dtype == 1 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                     : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return encode_map(cu, type, base, st, batch, heads, rows, cols, box_rows, row_bytes, ln_elem_bytes(p->dtype), out);
}

/* Two tensors of rows x (cols_a, cols_b) as maps (encode_one), boxes of box_rows. */
static CUresult encode_pair(const cu_driver *cu, const ln_problem *p, int batch, int heads, int rows, int box_rows,
                            int row_bytes, const void *a, const long long sa[3], int cols_a, ft_tensor_map *ma,
                            const void *b, const long long sb[3], int cols_b, ft_tensor_map *mb)
{
    CUresult rc = encode_one(cu, p, batch, heads, rows, box_rows, row_bytes, a, sa, cols_a, ma);
    return rc == CUDA_SUCCESS ? encode_one(cu, p, batch, heads, rows, box_rows, row_bytes, b, sb, cols_b, mb) : rc;
}

/* The maps' batch and row extents: a's slice, or for a variable-length batch one packed
 * sequence of all the rows (ft_kernel_args.h). */
static int map_batch(const ln_problem *p, int slice_batch)
{
    return ln_varlen(p) ? 1 : slice_batch;
}

CUresult ln_bwd_tensor_maps(const cu_driver *cu, const ln_problem *p, int box_rows, int out_box_rows, ft_bwd_args *a)
{
    const int batch = map_batch(p, a->batch);
    const int rows_q = ln_varlen(p) ? p->total_q : a->seqlen_q, rows_k = ln_varlen(p) ? p->total_k : a->seqlen_k;
    CUresult rc = encode_pair(cu, p, batch, a->heads, rows_q, box_rows, 128, a->q, a->q_stride, p->head_dim, &a->q_map,
                              a->dout, a->do_stride, p->head_dim_v, &a->do_map);
    if (rc != CUDA_SUCCESS || out_box_rows <= 0)
        return rc;
    rc = encode_pair(cu, p, batch, a->heads_k, rows_k, out_box_rows, 128, a->k, a->k_stride, p->head_dim, &a->k_map,
                     a->v, a->v_stride, p->head_dim_v, &a->v_map);
    return rc == CUDA_SUCCESS ? encode_pair(cu, p, batch, a->heads_k, rows_k, out_box_rows, 128, a->dk, a->dk_stride,
                                            p->head_dim, &a->dk_map, a->dv, a->dv_stride, p->head_dim_v, &a->dv_map)
                              : rc;
}

CUresult ln_fwd_tensor_maps(const cu_driver *cu, const ln_problem *p, int box_rows, int q_box_rows, int o_box_rows,
                            int row_bytes, ft_fwd_args *a)
{
    const int batch = map_batch(p, a->batch);
    const int rows_q = ln_varlen(p) ? p->total_q : a->seqlen_q, rows_k = ln_varlen(p) ? p->total_k : a->seqlen_k;
    CUresult rc = encode_pair(cu, p, batch, a->heads_k, rows_k, box_rows, row_bytes, a->k, a->k_stride, p->head_dim,
                              &a->k_map, a->v, a->v_stride, p->head_dim_v, &a->v_map);
    if (rc == CUDA_SUCCESS && q_box_rows > 0)
        rc = encode_one(cu, p, batch, a->heads, rows_q, q_box_rows, row_bytes, a->q, a->q_stride, p->head_dim,
                        &a->q_map);
    if (rc == CUDA_SUCCESS && o_box_rows > 0)
        rc = encode_one(cu, p, batch, a->heads, rows_q, o_box_rows, row_bytes, a->o, a->o_stride, p->head_dim_v,
                        &a->o_map);
    return rc;
}
