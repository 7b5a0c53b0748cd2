/* CPU reference attention: counted heap, argument checks, and the double and float instances. */
#include "ref_attention.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ft_mask.h"

/* ---- counted heap ---- */

/* Each block carries its size in a header so ref_free can uncount it. */
typedef union mem_header {
    size_t bytes;
    max_align_t align;
} mem_header;

static atomic_llong mem_current;
static atomic_llong mem_peak;
static atomic_llong mem_fail_left = -1;

void *ref_alloc(size_t bytes)
{
    long long left = atomic_load(&mem_fail_left);
    if (left == 0)
        return NULL;
    if (left > 0)
        atomic_fetch_sub(&mem_fail_left, 1);
    if (bytes > SIZE_MAX - sizeof(mem_header))
        return NULL;
    mem_header *h = malloc(sizeof(mem_header) + bytes);
    if (!h)
        return NULL;
    h->bytes = bytes;
    long long now = atomic_fetch_add(&mem_current, (long long)bytes) + (long long)bytes;
    long long peak = atomic_load(&mem_peak);
    while (now > peak && !atomic_compare_exchange_weak(&mem_peak, &peak, now))
        ;
    return h + 1;
}

void ref_free(void *ptr)
{
    if (!ptr)
        return;
    mem_header *h = (mem_header *)ptr - 1;
    atomic_fetch_sub(&mem_current, (long long)h->bytes);
    free(h);
}

long long ref_mem_current_bytes(void) { return atomic_load(&mem_current); }
long long ref_mem_peak_bytes(void) { return atomic_load(&mem_peak); }
void ref_mem_reset_peak(void) { atomic_store(&mem_peak, atomic_load(&mem_current)); }
void ref_mem_fail_after(long long n) { atomic_store(&mem_fail_left, n < 0 ? -1 : n); }

/* n elements of elem bytes, or NULL when the product does not fit. */
static void *alloc_array(long long n, size_t elem)
{
    if (n < 0 || (unsigned long long)n > SIZE_MAX / elem)
        return NULL;
    return ref_alloc((size_t)n * elem);
}

/* ---- problem helpers ---- */

void ref_strides_contiguous(long long stride[3], int heads, int seqlen, int dim)
{
    stride[2] = dim;
    stride[1] = (long long)seqlen * dim;
    stride[0] = (long long)heads * seqlen * dim;
}

void ref_problem_init(ref_problem *p, int batch, int heads, int seqlen_q, int seqlen_k,
                      int head_dim, int head_dim_v, int causal, double softmax_scale)
{
    memset(p, 0, sizeof *p);
    p->batch = batch;
    p->heads = heads;
    p->seqlen_q = seqlen_q;
    p->seqlen_k = seqlen_k;
    p->head_dim = head_dim;
    p->head_dim_v = head_dim_v;
    p->causal = causal;
    p->softmax_scale = softmax_scale;
    ref_strides_contiguous(p->q_stride, heads, seqlen_q, head_dim);
    ref_strides_contiguous(p->k_stride, heads, seqlen_k, head_dim);
    ref_strides_contiguous(p->v_stride, heads, seqlen_k, head_dim_v);
    ref_strides_contiguous(p->o_stride, heads, seqlen_q, head_dim_v);
}

double ref_problem_scale(const ref_problem *p)
{
    return p->softmax_scale != 0.0 ? p->softmax_scale : 1.0 / sqrt((double)p->head_dim);
}

int ref_problem_heads_k(const ref_problem *p)
{
    return p->heads_k != 0 ? p->heads_k : p->heads;
}

long long ref_tensor_extent(const long long stride[3], int batch, int heads, int seqlen, int dim)
{
    return 1 + (long long)(batch - 1) * stride[0] + (long long)(heads - 1) * stride[1] +
           (long long)(seqlen - 1) * stride[2] + (dim - 1);
}

int ref_problem_varlen(const ref_problem *p)
{
    return p->cu_seqlens_q != NULL;
}

int ref_problem_total_q(const ref_problem *p)
{
    return p->cu_seqlens_q ? p->cu_seqlens_q[p->batch] : 0;
}

int ref_problem_total_k(const ref_problem *p)
{
    return p->cu_seqlens_k ? p->cu_seqlens_k[p->batch] : 0;
}

/* Which tensor shape a buffer has; dq/dk/dv/dout borrow the shapes of q/k/v/o. */
enum arg_shape { SHAPE_Q, SHAPE_K, SHAPE_V, SHAPE_O, SHAPE_LSE, SHAPE_HEADS };

/* A variable-length batch's tensors are one batch of total rows; an empty one spans nothing. */
static long long shape_extent(const ref_problem *p, int shape)
{
    const int varlen = ref_problem_varlen(p);
    if (shape == SHAPE_HEADS)   /* one value a query head: the sinks' gradient */
        return p->heads;
    if (shape == SHAPE_LSE)
        return varlen ? (long long)p->heads * ref_problem_total_q(p) : (long long)p->batch * p->heads * p->seqlen_q;
    int seq = shape == SHAPE_Q || shape == SHAPE_O ? (varlen ? ref_problem_total_q(p) : p->seqlen_q)
                                                   : (varlen ? ref_problem_total_k(p) : p->seqlen_k);
    if (seq == 0)
        return 0;
    int dim = shape == SHAPE_Q || shape == SHAPE_K ? p->head_dim : p->head_dim_v;
    const long long *stride = shape == SHAPE_Q ? p->q_stride
                              : shape == SHAPE_K ? p->k_stride
                              : shape == SHAPE_V ? p->v_stride : p->o_stride;
    int heads = shape == SHAPE_K || shape == SHAPE_V ? ref_problem_heads_k(p) : p->heads;
    return ref_tensor_extent(stride, varlen ? 1 : p->batch, heads, seq, dim);
}

long long ref_extent_q(const ref_problem *p) { return shape_extent(p, SHAPE_Q); }
long long ref_extent_k(const ref_problem *p) { return shape_extent(p, SHAPE_K); }
long long ref_extent_v(const ref_problem *p) { return shape_extent(p, SHAPE_V); }
long long ref_extent_o(const ref_problem *p) { return shape_extent(p, SHAPE_O); }
long long ref_extent_lse(const ref_problem *p) { return shape_extent(p, SHAPE_LSE); }

/* ---- argument checks ---- */

static int max_int(int a, int b) { return a > b ? a : b; }

static int fail(int code, char *err, size_t err_len, const char *fn, const char *fmt, ...)
{
    if (err && err_len > 0) {
        int used = snprintf(err, err_len, "%s: ", fn);
        if (used >= 0 && (size_t)used < err_len) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + used, err_len - (size_t)used, fmt, ap);
            va_end(ap);
        }
    }
    return code;
}

typedef struct ref_arg {
    const char *name;
    const void *ptr;
    int shape;
    int output;
} ref_arg;

/* Strides must give every element of the [b, h, n, d] tensor its own address. Sorting the dims by
 * stride, each one must step past the whole span of the smaller ones. */
static int check_strides(const char *fn, const char *name, const long long s[3], int b, int h,
                         int n, int d, char *err, size_t err_len)
{
    static const char *const dim_names[3] = {"batch", "heads", "seqlen"};
    const long long ext[4] = {b, h, n, d};
    const long long st[4] = {s[0], s[1], s[2], 1};
    for (int a = 0; a < 3; a++) {
        long long need = ext[a] > 1 ? 1 : 0;
        if (s[a] < need)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s[%d]=%lld must be >= %lld (%s=%lld)",
                        name, a, s[a], need, dim_names[a], ext[a]);
    }
    /* The head dim first among equal strides, so the stride blamed is a caller's. */
    int order[4] = {3, 0, 1, 2};
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && st[order[j]] < st[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    long long span = 0;
    for (int i = 0; i < 4; i++) {
        int a = order[i];
        if (ext[a] == 1)
            continue;
        if (st[a] <= span)
            return fail(REF_ERR_INVALID, err, err_len, fn,
                        "%s[%d]=%lld overlaps other elements: must be >= %lld", name, a, st[a],
                        span + 1);
        if (st[a] > (LLONG_MAX / 16 - span) / (ext[a] - 1))
            return fail(REF_ERR_INVALID, err, err_len, fn,
                        "%s[%d]=%lld is too large: the tensor's extent overflows", name, a, st[a]);
        span += st[a] * (ext[a] - 1);
    }
    return REF_OK;
}

static int ranges_overlap(const ref_arg *a, long long ea, const ref_arg *b, long long eb,
                          size_t elem)
{
    uintptr_t alo = (uintptr_t)a->ptr, blo = (uintptr_t)b->ptr;
    uintptr_t ahi = alo + (uintptr_t)ea * elem, bhi = blo + (uintptr_t)eb * elem;
    return alo < bhi && blo < ahi;
}

/* The band of p: key j visible to query i iff i + *lo <= j <= i + *hi; returns 1 when any mask
 * applies (the kernels' CAUSAL). */
static int problem_band(const ref_problem *p, int *lo, int *hi)
{
    const int left = p->window ? p->window_left : -1, right = p->window ? p->window_right : -1;
    ft_mask_band(p->causal, p->causal_align, left, right, p->seqlen_q, p->seqlen_k, lo, hi);
    return ft_mask_active(p->causal, left, right);
}

/* causal, causal_align, window, window_left, window_right: the rules of flashtune.h. */
static int check_mask(const char *fn, const ref_problem *p, char *err, size_t err_len)
{
    const struct { const char *name; int value; } flags[] = {
        {"causal", p->causal}, {"causal_align", p->causal_align}, {"window", p->window},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].value != 0 && flags[i].value != 1)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s=%d must be 0 or 1", flags[i].name,
                        flags[i].value);
    const struct { const char *name; int value; } sides[] = {
        {"window_left", p->window_left}, {"window_right", p->window_right},
    };
    for (size_t i = 0; i < 2; i++) {
        if (!p->window && sides[i].value != 0)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s=%d with window=0 must be 0",
                        sides[i].name, sides[i].value);
        if (sides[i].value < -1)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s=%d must be >= -1 (-1: unlimited)",
                        sides[i].name, sides[i].value);
    }
    if (p->causal && p->window && p->window_right != 0 && p->window_right != -1)
        return fail(REF_ERR_INVALID, err, err_len, fn,
                    "window_right=%d with causal=1 must be 0 or -1", p->window_right);
    int lo, hi;
    if (problem_band(p, &lo, &hi) && (long long)p->seqlen_q + p->seqlen_k >= 0x80000000LL)
        return fail(REF_ERR_INVALID, err, err_len, fn,
                    "seqlen_q=%d + seqlen_k=%d must be < 2^31 with a mask", p->seqlen_q,
                    p->seqlen_k);
    return REF_OK;
}

/* cu_seqlens_q and cu_seqlens_k: both or neither; from 0, never decreasing, no sequence longer
 * than seqlen_q (seqlen_k). */
static int check_varlen(const char *fn, const ref_problem *p, char *err, size_t err_len)
{
    if (!p->cu_seqlens_q != !p->cu_seqlens_k)
        return fail(REF_ERR_INVALID, err, err_len, fn, "%s is NULL while %s is not (give both or neither)",
                    p->cu_seqlens_q ? "cu_seqlens_k" : "cu_seqlens_q", p->cu_seqlens_q ? "cu_seqlens_q" : "cu_seqlens_k");
    if (!p->cu_seqlens_q)
        return REF_OK;
    const struct { const char *name, *longest_name; const int *cu; int longest; } sides[2] = {
        {"cu_seqlens_q", "seqlen_q", p->cu_seqlens_q, p->seqlen_q},
        {"cu_seqlens_k", "seqlen_k", p->cu_seqlens_k, p->seqlen_k},
    };
    for (int i = 0; i < 2; i++) {
        const int *cu = sides[i].cu;
        if (cu[0] != 0)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s[0]=%d must be 0", sides[i].name, cu[0]);
        for (int b = 0; b < p->batch; b++) {
            if (cu[b + 1] < cu[b])
                return fail(REF_ERR_INVALID, err, err_len, fn,
                            "%s[%d]=%d is less than %s[%d]=%d (prefix sums never decrease)", sides[i].name, b + 1,
                            cu[b + 1], sides[i].name, b, cu[b]);
            if (cu[b + 1] - cu[b] > sides[i].longest)
                return fail(REF_ERR_INVALID, err, err_len, fn, "sequence %d has %d rows (%s), more than %s=%d",
                            b, cu[b + 1] - cu[b], sides[i].name, sides[i].longest_name, sides[i].longest);
        }
    }
    return REF_OK;
}

/* All checks of one call; tiled says whether block_m and block_n are arguments. */
static int check_call(const char *fn, const ref_problem *p, int tiled, int block_m, int block_n,
                      const ref_arg *args, int nargs, size_t elem, char *err, size_t err_len)
{
    if (!p)
        return fail(REF_ERR_INVALID, err, err_len, fn, "problem is NULL");
    const struct { const char *name; int value; } sizes[] = {
        {"batch", p->batch},       {"heads", p->heads},       {"seqlen_q", p->seqlen_q},
        {"seqlen_k", p->seqlen_k}, {"head_dim", p->head_dim}, {"head_dim_v", p->head_dim_v},
        {"block_m", tiled ? block_m : 1}, {"block_n", tiled ? block_n : 1},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s=%d must be >= 1", sizes[i].name,
                        sizes[i].value);
    int rc = check_mask(fn, p, err, err_len);
    if (rc)
        return rc;
    if (!isfinite(p->softmax_scale))
        return fail(REF_ERR_INVALID, err, err_len, fn, "softmax_scale=%g must be finite",
                    p->softmax_scale);
    if (!(isfinite(p->softcap) && p->softcap >= 0))
        return fail(REF_ERR_INVALID, err, err_len, fn, "softcap=%g must be finite and >= 0 (0: none)",
                    p->softcap);
    if (p->heads_k < 0 || (p->heads_k > 0 && p->heads % p->heads_k != 0))
        return fail(REF_ERR_INVALID, err, err_len, fn,
                    "heads_k=%d must divide heads=%d (0: heads_k = heads)", p->heads_k, p->heads);
    if (p->tf32_splits != 0 && p->tf32_splits != 1 && p->tf32_splits != 3)
        return fail(REF_ERR_INVALID, err, err_len, fn, "tf32_splits=%d must be 0, 1 or 3", p->tf32_splits);
    if (p->tf32_splits && elem != sizeof(float))
        return fail(REF_ERR_INVALID, err, err_len, fn, "tf32_splits=%d: the float reference's only (this one is "
                    "double)", p->tf32_splits);
    if (p->bf16_products != 0 && p->bf16_products != 3 && p->bf16_products != 6)
        return fail(REF_ERR_INVALID, err, err_len, fn, "bf16_products=%d must be 0, 3 or 6", p->bf16_products);
    if (p->bf16_products && (elem != sizeof(float) || p->tf32_splits))
        return fail(REF_ERR_INVALID, err, err_len, fn, "bf16_products=%d: the float reference's only, without "
                    "tf32_splits (this one is %s, tf32_splits=%d)", p->bf16_products,
                    elem == sizeof(float) ? "float" : "double", p->tf32_splits);
    for (int h = 0; p->sinks && h < p->heads; h++)
        if (!isfinite(p->sinks[h]))
            return fail(REF_ERR_INVALID, err, err_len, fn, "sinks[%d]=%g must be finite", h, p->sinks[h]);
    for (int i = 0; i < nargs; i++)
        if (!args[i].ptr)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s is NULL", args[i].name);
    if ((rc = check_varlen(fn, p, err, err_len)))
        return rc;
    /* A variable-length batch's tensors: one batch of its total rows (at least one, to check). */
    const int varlen = ref_problem_varlen(p), batch = varlen ? 1 : p->batch;
    const int nq = varlen ? max_int(ref_problem_total_q(p), 1) : p->seqlen_q;
    const int nk = varlen ? max_int(ref_problem_total_k(p), 1) : p->seqlen_k;
    if ((rc = check_strides(fn, "q_stride", p->q_stride, batch, p->heads, nq, p->head_dim, err, err_len)) ||
        (rc = check_strides(fn, "k_stride", p->k_stride, batch, ref_problem_heads_k(p), nk, p->head_dim, err,
                            err_len)) ||
        (rc = check_strides(fn, "v_stride", p->v_stride, batch, ref_problem_heads_k(p), nk, p->head_dim_v, err,
                            err_len)) ||
        (rc = check_strides(fn, "o_stride", p->o_stride, batch, p->heads, nq, p->head_dim_v, err, err_len)))
        return rc;
    long long ext[16];
    for (int i = 0; i < nargs; i++) {
        ext[i] = shape_extent(p, args[i].shape);
        if ((unsigned long long)ext[i] > SIZE_MAX / elem / 2)
            return fail(REF_ERR_INVALID, err, err_len, fn, "%s spans %lld elements: too large",
                        args[i].name, ext[i]);
    }
    /* An output over an input would corrupt what is still to be read. Outputs may interleave
     * (packed dqkv), so among them only a shared start is caught. */
    for (int i = 0; i < nargs; i++) {
        if (!args[i].output)
            continue;
        for (int j = 0; j < nargs; j++) {
            if (j == i)
                continue;
            if (!args[j].output && ranges_overlap(&args[i], ext[i], &args[j], ext[j], elem))
                return fail(REF_ERR_INVALID, err, err_len, fn, "%s overlaps input %s",
                            args[i].name, args[j].name);
            if (args[j].output && j < i && args[j].ptr == args[i].ptr)
                return fail(REF_ERR_INVALID, err, err_len, fn, "%s is the same buffer as %s",
                            args[i].name, args[j].name);
        }
    }
    return REF_OK;
}

/* The four computations, and the scratch (in elements) each needs for the whole call. */
enum ref_op { OP_FWD_NAIVE, OP_BWD_NAIVE, OP_FWD_TILED, OP_BWD_TILED, OP_SINKS_GRAD };

static long long scratch_elems(int op, const ref_problem *p, int bm, int bn)
{
    switch (op) {
    case OP_FWD_NAIVE: return (long long)p->seqlen_q * p->seqlen_k;             /* P */
    case OP_BWD_NAIVE: return 2LL * p->seqlen_q * p->seqlen_k;                  /* P, dP */
    case OP_FWD_TILED: return 2LL * bm + (long long)bm * p->head_dim_v + bn;    /* m, l, acc, S */
    case OP_SINKS_GRAD: return 1;                                               /* none */
    default: return (long long)bn * (p->head_dim + p->head_dim_v);              /* tile dK, dV */
    }
}

static int fail_nomem(const char *fn, char *err, size_t err_len, long long elems, size_t elem)
{
    return fail(REF_ERR_NOMEM, err, err_len, fn,
                "out of memory for %lld scratch elements of %zu bytes", elems, elem);
}

/* Offset of one (batch, head) slice in a tensor with these strides. */
static long long slice_offset(const long long stride[3], int b, int h)
{
    return (long long)b * stride[0] + (long long)h * stride[1];
}

static int min_int(int a, int b) { return a < b ? a : b; }

/* x rounded to TF32 (8 exponent bits, 10 mantissa bits) to nearest, ties away from zero, as
 * cvt.rna.tf32.f32 rounds; infinities and NaN unchanged. */
static float tf32_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x1000u;   /* half of the 13 dropped bits: the magnitude rounds half away from zero */
        u &= 0xffffe000u;
    }
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x rounded to bfloat16 (8 exponent bits, 7 mantissa bits) to nearest, ties to even, as
 * cvt.rn.bf16.f32 rounds; infinities unchanged (no NaN reaches the reference's products). */
float ref_bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x7fffu + ((u >> 16) & 1u);
        u &= 0xffff0000u;
    }
    memcpy(&x, &u, sizeof x);
    return x;
}

/* a * b from three bfloat16 parts of each (a = high + middle + low exactly for 2^-110 <= |a| <
 * 3.396e38: below, bfloat16's subnormals lose the low bits; above, the high part rounds to
 * infinity, as the hardware's would), each part the rounded remainder of those before it, as the 3
 * or 6 largest part products (ref_problem.bf16_products) summed in float, smallest first; each
 * part product is exact in float (8 x 8 bits). */
static float bf16_product(float a, float b, int products)
{
    const float ah = ref_bf16_round(a), am = ref_bf16_round(a - ah), al = ref_bf16_round(a - ah - am);
    const float bh = ref_bf16_round(b), bm = ref_bf16_round(b - bh), bl = ref_bf16_round(b - bh - bm);
    const float middle = ah * bm + am * bh;
    if (products == 3)
        return middle + ah * bh;
    return ((ah * bl + al * bh + am * bm) + middle) + ah * bh;
}

/* ---- the two instances: one body, compiled per precision ---- */

#define REAL double
#define SFX(name) name##_d
#define RNAME "d"
#define EXP exp
#define LOG log
#define TANH tanh
#include "ref_attention_impl.h"
#undef REAL
#undef SFX
#undef RNAME
#undef EXP
#undef LOG
#undef TANH

#define REAL float
#define SFX(name) name##_f
#define RNAME "f"
#define EXP expf
#define LOG logf
#define TANH tanhf
#include "ref_attention_impl.h"
#undef REAL
#undef SFX
#undef RNAME
#undef EXP
#undef LOG
#undef TANH
