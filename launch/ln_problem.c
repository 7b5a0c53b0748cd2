/* A problem's sizes: element bytes, the resolved scale, contiguous strides, extents and the
 * backward workspace's layout (one definition for every caller's allocation). */
#include <math.h>

#include "ft_mask.h"
#include "ln_internal.h"

size_t ln_elem_bytes(int dtype)
{
    return dtype == 0 ? 4 : dtype == 3 ? 8 : 2;
}

size_t ln_acc_bytes(int dtype)
{
    return dtype == 3 ? 8 : 4;
}

double ln_softmax_scale(double scale, int head_dim)
{
    return scale != 0 ? scale : 1.0 / sqrt((double)head_dim);
}

void ln_contiguous_strides(int heads, int seqlen, int dim, long long stride[3])
{
    stride[2] = dim;
    stride[1] = (long long)seqlen * dim;
    stride[0] = stride[1] * heads;
}

int ln_heads_k(const ln_problem *p)
{
    return p->heads_k != 0 ? p->heads_k : p->heads;
}

unsigned ln_problem_features(const ln_problem *p)
{
    return (ln_heads_k(p) != p->heads ? GEN_FEATURE_GROUPS : 0u) | (p->softcap != 0 ? GEN_FEATURE_SOFTCAP : 0u) |
           (ln_varlen(p) ? GEN_FEATURE_VARLEN : 0u) | (p->sinks ? GEN_FEATURE_SINKS : 0u);
}

void ln_problem_mask(ln_problem *p, int causal, int bottom_right, int window_left, int window_right)
{
    p->causal = ft_mask_active(causal, window_left, window_right);
    ft_mask_band(causal, bottom_right, window_left, window_right, p->seqlen_q, p->seqlen_k, &p->mask_lo, &p->mask_hi);
    p->mask_left = window_left;
    p->mask_right = causal ? 0 : window_right;
    p->mask_bottom_right = bottom_right;
}

int ln_varlen(const ln_problem *p)
{
    return p->cu_seqlens_q != 0;
}

size_t ln_lse_rows(const ln_problem *p)
{
    return ln_varlen(p) ? (size_t)p->heads * p->total_q : (size_t)p->batch * p->heads * p->seqlen_q;
}

size_t ln_tensor_elems(const long long stride[3], int batch, int heads, int seqlen, int dim)
{
    return (size_t)((batch - 1) * stride[0] + (heads - 1) * stride[1] + (seqlen - 1) * stride[2] + dim);
}

size_t ln_dq_sems_per_head(int seqlen_q)
{
    return ((size_t)seqlen_q + FT_DQ_SEM_ROWS - 1) / FT_DQ_SEM_ROWS;
}

size_t ln_dq_order_ints(int batch, int heads, int seqlen_q)
{
    return (size_t)batch + (size_t)batch * heads * ln_dq_sems_per_head(seqlen_q);
}

const int ln_head_dims[] = { 32, 64, 96, 128, 192, 256 };
const int ln_head_dim_count = (int)(sizeof ln_head_dims / sizeof ln_head_dims[0]);

int ln_padded_head_dim(int d)
{
    for (int i = 0; i < ln_head_dim_count; i++)
        if (d <= ln_head_dims[i])
            return ln_head_dims[i];
    return d;
}

int ln_family_head_dim(const gen_family *f, int d)
{
    const int padded = ln_padded_head_dim(d);
    return padded > f->min_head_dim ? padded : f->min_head_dim;
}

int ln_accum_head_dim(int d)
{
    int widest = ln_padded_head_dim(d), count;
    const gen_family *const *all = gen_family_list(&count);
    for (int i = 0; i < count; i++) {
        const int h = ln_family_head_dim(all[i], d);
        widest = h > widest ? h : widest;
    }
    return widest;
}

/* Rows of delta and of the dQ accumulator. */
static size_t query_rows(int batch, int heads, int seqlen_q, int total_q)
{
    return total_q > 0 ? (size_t)heads * total_q : (size_t)batch * heads * seqlen_q;
}

size_t ln_accum_bytes(int dtype, int batch, int heads, int seqlen_q, int total_q, int head_dim)
{
    return query_rows(batch, heads, seqlen_q, total_q) * (size_t)ln_accum_head_dim(head_dim) * ln_acc_bytes(dtype) +
           ln_dq_order_ints(batch, heads, seqlen_q) * sizeof(int);
}

size_t ln_dq_order_offset(const ln_problem *p)
{
    return ln_lse_rows(p) * (size_t)ln_accum_head_dim(p->head_dim) * ln_acc_bytes(p->dtype);
}

size_t ln_fwd_workspace_bytes(int splits, size_t rows, int cols, size_t *lse_offset)
{
    const size_t offset = splits > 1 ? ((size_t)splits * rows * (size_t)cols * sizeof(float) + 255) / 256 * 256 : 0;
    if (lse_offset)
        *lse_offset = offset;
    return splits > 1 ? offset + (size_t)splits * rows * sizeof(float) : 0;
}

size_t ln_bwd_split_bytes(int splits, size_t rows, int dk_cols, int dv_cols, size_t *dv_offset)
{
    const size_t offset = splits > 1 ? ((size_t)splits * rows * (size_t)dk_cols * sizeof(float) + 255) / 256 * 256 : 0;
    if (dv_offset)
        *dv_offset = offset;
    return splits > 1 ? offset + (size_t)splits * rows * (size_t)dv_cols * sizeof(float) : 0;
}

size_t ln_workspace_bytes(int dtype, int batch, int heads, int seqlen_q, int total_q, int head_dim,
                          size_t *accum_offset)
{
    const size_t rows = query_rows(batch, heads, seqlen_q, total_q), a = ln_acc_bytes(dtype);
    const size_t offset = (rows * a + 255) / 256 * 256;
    if (accum_offset)
        *accum_offset = offset;
    return offset + ln_accum_bytes(dtype, batch, heads, seqlen_q, total_q, head_dim);
}
