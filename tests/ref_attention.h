/* CPU reference attention in double and float: the oracle every GPU kernel is judged against. */
#ifndef REF_ATTENTION_H
#define REF_ATTENTION_H

#include <stddef.h>

/* Per (batch, head), with s = softmax_scale (0 means 1/sqrt(head_dim)):
 *   S = s * Q K^T, capped to c * tanh(S / c) when softcap c > 0 (Gemma 2's logit softcap),
 *       then masked (-inf) outside the band of templates/common/ft_mask.h: key j is
 *       visible to query i iff i + lo <= j <= i + hi, (lo, hi) = ft_mask_band(causal,
 *       causal_align, window ? window_left : -1, window ? window_right : -1, seqlen_q, seqlen_k).
 *       Causal top-left: query i sees keys 0..i; bottom-right: keys 0..i + seqlen_k - seqlen_q;
 *       a window (left, right) keeps keys diag - left .. diag + right, -1 unlimited.
 *   P = softmax(S) row-wise, O = P V, L = rowmax(S) + log(rowsum(exp(S - rowmax))) (natural log).
 *   A row that sees no key (bottom-right with seqlen_q > seqlen_k, windows) has P = 0: O = 0,
 *   L = +inf (so exp(S - L) = 0 in a backward), dQ = 0. A key no row sees gets dK = dV = 0.
 *   Backward: D = rowsum(dO * O); dV = P^T dO; dP = dO V^T; dS = P * (dP - D), times
 *             1 - tanh^2(S / c) with a softcap; dQ = s * dS K; dK = s * dS^T Q.
 *   Grouped-query attention (heads_k < heads): query head h reads K and V head h / (heads /
 *   heads_k), and dK, dV of a K/V head are the sums over the query heads that read it.
 *   Attention sinks (sinks non-NULL, gpt-oss's): head h's logit sinks[h] joins every row's
 *   softmax as one more score that has no value: P = exp(S - L) with L = log(sum_j exp(S_j) +
 *   exp(sinks[h])), O = P V (its rows sum to less than 1). The sink is in the scores' units (not
 *   scaled, not capped) and every row sees it, so a row that sees no key has O = 0 and L =
 *   sinks[h]. D, dS, dQ, dK and dV are as without it (the sink's dP is 0); the sink's own
 *   gradient is dsinks[h] = -sum over the batch and the rows of exp(sinks[h] - L) D
 *   (ref_sinks_grad).
 *
 * Layouts (all element counts, never bytes):
 *   q    [batch, heads, seqlen_q, head_dim]     strides q_stride
 *   k    [batch, heads_k, seqlen_k, head_dim]   strides k_stride (heads_k: heads when 0)
 *   v    [batch, heads_k, seqlen_k, head_dim_v] strides v_stride
 *   o    [batch, heads, seqlen_q, head_dim_v]   strides o_stride; dout uses o_stride too
 *   dq, dk, dv use the strides of q, k, v.
 *   lse  [batch, heads, seqlen_q] contiguous.
 * Strides are [0] batch, [1] head, [2] sequence; the head dim is contiguous (stride 1). Elements a
 * layout never addresses (padding between rows) are neither read nor written. Variable-length
 * batches (cu_seqlens_q, cu_seqlens_k below) pack the sequences' rows instead.
 *
 * Errors: every compute function returns REF_OK (0) or a negative REF_ERR_*; on error it writes a
 * NUL-terminated message naming the function, the argument and its value into err (for example
 * "ref_forward_tiled_d: seqlen_k=0 must be >= 1"), truncated to err_len bytes. err may be NULL
 * (or err_len 0) when no message is wanted. Outputs are unspecified after an error.
 * Argument checks: problem and every pointer non-NULL; sizes >= 1; causal, causal_align and
 * window 0 or 1; heads_k >= 0 and dividing heads; softcap finite and >= 0; with window,
 * window_left and window_right >= -1 (without, both 0); with causal and window, window_right 0
 * or -1; with a mask, seqlen_q + seqlen_k < 2^31; softmax_scale finite; block sizes >= 1; strides >= 1 where the extent is > 1 (>= 0 otherwise) and no two
 * elements of one tensor at the same address (so seq stride >= head dim in the usual layouts);
 * no output overlapping an input, and no two outputs starting at the same address (outputs may
 * interleave, e.g. a packed dqkv buffer).
 *
 * Thread safety: the compute functions keep no state except the allocation counters below, which
 * are atomic; distinct calls on distinct outputs may run concurrently. */

enum {
    REF_OK = 0,
    REF_ERR_INVALID = -1,   /* bad argument; message says which */
    REF_ERR_NOMEM = -2      /* scratch allocation failed (or was made to fail) */
};

typedef struct ref_problem {
    int batch, heads, seqlen_q, seqlen_k;
    int head_dim;           /* Q and K */
    int head_dim_v;         /* V and O; may differ from head_dim */
    int causal;             /* 0 none, 1 causal (the diagonal where causal_align says) */
    double softmax_scale;   /* 0 means 1/sqrt(head_dim) */
    long long q_stride[3], k_stride[3], v_stride[3], o_stride[3];   /* elements: batch, head, seq */
    /* As in ft_attention_desc (flashtune.h); ref_problem_init zeroes them: top-left, no window. */
    int causal_align;       /* 0 top-left; 1 bottom-right: query i's diagonal is key
                             * i + seqlen_k - seqlen_q */
    int window;             /* 0 none; 1 window_left, window_right apply */
    int window_left, window_right;   /* keys visible left / right of the diagonal; -1 unlimited */
    int heads_k;            /* heads of K and V; 0 means heads; must divide heads */
    double softcap;         /* 0 none; c > 0: scores become c * tanh(S / c) */
    /* Variable-length batches: both NULL for none (ref_problem_init's). Else each holds batch + 1
     * prefix sums of the sequences' lengths, from 0 and never decreasing: sequence b's queries
     * are rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 of packed tensors [total_q, heads,
     * head_dim], addressed by the strides' [1] (head) and [2] (row) alone, its keys the same rows
     * of cu_seqlens_k in K and V; a sequence may be empty. seqlen_q and seqlen_k are then the
     * longest lengths (none may be longer), and lse is [heads, total_q]. Each sequence is its own
     * problem: the mask's diagonal (bottom-right) is placed by its own lengths. */
    const int *cu_seqlens_q, *cu_seqlens_k;
    /* Attention sinks: NULL for none (ref_problem_init's); else one finite logit per query head,
     * [heads]. */
    const double *sinks;
    /* The float reference's products as tensor cores make them from TF32 operands (10 mantissa
     * bits, rounded to nearest): 0 plain float (ref_problem_init's); 1 each operand rounded to
     * TF32; 3 each operand split into a TF32 high part and a TF32 remainder, and a product made
     * as high x high + high x low + low x high (3xTF32: float32's accuracy on tensor cores). The
     * products summed in float, as the tensor cores accumulate. The softmax, the backward's
     * delta (rowsum(dO * O), on CUDA cores) and every accumulation stay plain float. The double
     * reference takes 0 only. */
    int tf32_splits;
    /* The same from bfloat16 operands (8 significant bits, 7 stored; rounded to nearest even): 0 none
     * (ref_problem_init's); each operand split into three bfloat16 parts, high, middle and low (24
     * bits: a float's), and a product made as the 3 largest part products (high x high + high x
     * middle + middle x high, about 2^-16 of the product left out) or the 6 largest (+ high x low +
     * low x high + middle x middle, about 2^-24). Each part product is exact in float; summed in
     * float, smallest first. Not with tf32_splits; the float reference's only. */
    int bf16_products;
} ref_problem;

/* Work counters of the tiled paths, for checking masked block skipping. Each call overwrites them
 * with totals over all batches and heads. */
typedef struct ref_stats {
    long long tiles_visited;   /* (query tile, key tile) pairs whose scores were computed */
    long long tiles_masked;    /* of those, tiles not wholly inside the band (masked per element) */
} ref_stats;

/* ---- problem helpers ---- */

/* x rounded to bfloat16 as cvt.rn.bf16.f32 rounds (nearest, ties to even; infinities kept): the
 * rounding of bf16_products' parts, exposed for its test. */
float ref_bf16_round(float x);

/* Fills stride (OUT) for a contiguous [batch, heads, seqlen, dim] tensor. */
void ref_strides_contiguous(long long stride[3], int heads, int seqlen, int dim);

/* Fills *p (OUT) with the sizes given and contiguous [B, H, N, D] strides for all four tensors. */
void ref_problem_init(ref_problem *p, int batch, int heads, int seqlen_q, int seqlen_k,
                      int head_dim, int head_dim_v, int causal, double softmax_scale);

/* The scale actually used: softmax_scale, or 1/sqrt(head_dim) when it is 0. */
double ref_problem_scale(const ref_problem *p);

/* The heads of K and V: heads_k, or heads when it is 0. */
int ref_problem_heads_k(const ref_problem *p);

/* 1 when p is a variable-length batch; its packed tensors' total rows (0 for a dense one). */
int ref_problem_varlen(const ref_problem *p);
int ref_problem_total_q(const ref_problem *p);
int ref_problem_total_k(const ref_problem *p);

/* Elements a strided [batch, heads, seqlen, dim] tensor spans from its first element to its last,
 * inclusive: the size of the buffer to allocate. Assumes valid (non-negative) strides. */
long long ref_tensor_extent(const long long stride[3], int batch, int heads, int seqlen, int dim);

/* Buffer sizes in elements for each tensor of *p (dq, dk, dv, dout as q, k, v, o). */
long long ref_extent_q(const ref_problem *p);
long long ref_extent_k(const ref_problem *p);
long long ref_extent_v(const ref_problem *p);
long long ref_extent_o(const ref_problem *p);
long long ref_extent_lse(const ref_problem *p);

/* ---- naive: materializes the [seqlen_q, seqlen_k] scores per head; obviously correct ---- */

/* Forward. Writes o and lse (OUT). */
int ref_forward_naive_d(const ref_problem *p, const double *q, const double *k, const double *v,
                        double *o, double *lse, char *err, size_t err_len);
int ref_forward_naive_f(const ref_problem *p, const float *q, const float *k, const float *v,
                        float *o, float *lse, char *err, size_t err_len);

/* Backward from first principles (recomputes P; D as rowsum(P * dP), the textbook softmax
 * gradient, so it needs neither O nor L). Writes dq, dk, dv (OUT). */
int ref_backward_naive_d(const ref_problem *p, const double *q, const double *k, const double *v,
                         const double *dout, double *dq, double *dk, double *dv,
                         char *err, size_t err_len);
int ref_backward_naive_f(const ref_problem *p, const float *q, const float *k, const float *v,
                         const float *dout, float *dq, float *dk, float *dv,
                         char *err, size_t err_len);

/* ---- tiled: FlashAttention, O(tile) scratch ---- */

/* Forward with block_m query rows and block_n key rows per tile: online softmax with a running
 * max and sum per row over key tiles; masked runs visit only the key tiles that hold a key of the
 * query tile's band (ft_mask_key_range), as the kernels do.
 * Writes o and lse (OUT); stats (OUT, may be NULL) gets the tile counts. */
int ref_forward_tiled_d(const ref_problem *p, int block_m, int block_n,
                        const double *q, const double *k, const double *v, double *o, double *lse,
                        ref_stats *stats, char *err, size_t err_len);
int ref_forward_tiled_f(const ref_problem *p, int block_m, int block_n,
                        const float *q, const float *k, const float *v, float *o, float *lse,
                        ref_stats *stats, char *err, size_t err_len);

/* Backward, key tiles outer and query tiles inner: P = exp(S - L) recomputed tile by tile from
 * the forward's o and lse, D = rowsum(dO * O), dK and dV accumulated per key tile, dQ accumulated
 * in place in dq across key tiles; masked runs visit only the query tiles that see the key tile
 * (ft_mask_query_range). Writes dq, dk, dv (OUT); stats (OUT, may be NULL). */
int ref_backward_tiled_d(const ref_problem *p, int block_m, int block_n,
                         const double *q, const double *k, const double *v,
                         const double *o, const double *lse, const double *dout,
                         double *dq, double *dk, double *dv,
                         ref_stats *stats, char *err, size_t err_len);
int ref_backward_tiled_f(const ref_problem *p, int block_m, int block_n,
                         const float *q, const float *k, const float *v,
                         const float *o, const float *lse, const float *dout,
                         float *dq, float *dk, float *dv,
                         ref_stats *stats, char *err, size_t err_len);

/* The sinks' gradient from the forward's o and lse: dsinks[h] (OUT, [heads]) = -sum over the
 * batch and the rows of head h of exp(sinks[h] - L) * rowsum(dO * O). p->sinks must be set. */
int ref_sinks_grad_d(const ref_problem *p, const double *o, const double *lse, const double *dout, double *dsinks,
                     char *err, size_t err_len);
int ref_sinks_grad_f(const ref_problem *p, const float *o, const float *lse, const float *dout, float *dsinks,
                     char *err, size_t err_len);

/* ---- counted heap: every allocation of the reference goes through these ---- */

void *ref_alloc(size_t bytes);   /* NULL on failure or injected failure; counts bytes */
void ref_free(void *ptr);        /* NULL is a no-op */
long long ref_mem_current_bytes(void);
long long ref_mem_peak_bytes(void);
void ref_mem_reset_peak(void);   /* peak := current */
/* Test hook: after n more successful allocations, every ref_alloc fails; n < 0 turns it off. */
void ref_mem_fail_after(long long n);

#endif
