/* Argument checks of every call, done before anything is launched: each failure names the
 * function, the argument and its value. */
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ft_mask.h"
#include "rt_internal.h"

/* The head dims every family supports (templates/README.md); others are refused even where
 * one family would take them, so that every dtype behaves the same. */

size_t rt_elem_bytes(int dtype)
{
    return dtype == FT_F32 ? 4 : dtype == FT_F64 ? 8 : 2;
}

size_t rt_acc_bytes(int dtype)
{
    return dtype == FT_F64 ? 8 : 4;
}

static ft_status fail(ft_status s, char *err, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static ft_status fail(ft_status s, char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return s;
}

/* The last field this library knows ends here; appending a field means updating this. */
#define DESC_KNOWN_END (offsetof(ft_attention_desc, prefix_sums_checked) + sizeof(int))
_Static_assert(DESC_KNOWN_END == sizeof(ft_attention_desc), "DESC_KNOWN_END: a field was appended to ft_attention_desc");

ft_status rt_desc_copy(const char *func, const ft_attention_desc *user, ft_attention_desc *d, char *err, size_t len)
{
    if (!user)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: desc is NULL", func);
    const size_t size = user->struct_size;
    if (size < FT_ATTENTION_DESC_SIZE_V1 || size > FT_ATTENTION_DESC_SIZE_MAX)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: struct_size=%zu is not the size of an ft_attention_desc (%zu to %zu; this library's is "
                    "%zu): set it to sizeof(ft_attention_desc) (FT_ATTENTION_DESC_INIT); a program built "
                    "against flashtune 0.1, whose desc had no struct_size, must be rebuilt", func, size,
                    (size_t)FT_ATTENTION_DESC_SIZE_V1, FT_ATTENTION_DESC_SIZE_MAX, sizeof *d);
    const unsigned char *bytes = (const unsigned char *)user;
    for (size_t i = DESC_KNOWN_END; i < size; i++)
        if (bytes[i])
            return fail(FT_ERR_UNSUPPORTED, err, len,
                        "%s: struct_size=%zu is larger than this library's ft_attention_desc (%zu bytes, "
                        "flashtune %s) and byte %zu past its fields is set: the caller asks for a field this "
                        "version does not know", func, size, sizeof *d, ft_version(), i);
    memset(d, 0, sizeof *d);
    memcpy(d, user, size < sizeof *d ? size : sizeof *d);
    d->struct_size = sizeof *d;
    return FT_OK;
}

/* causal_align, window, window_left, window_right (and deterministic, the other flag). */
static ft_status check_mask(const char *func, const ft_attention_desc *d, char *err, size_t len)
{
    if (d->causal != 0 && d->causal != 1)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: causal=%d must be 0 (none) or 1 (causal)", func,
                    d->causal);
    if (d->causal_align != FT_ALIGN_TOP_LEFT && d->causal_align != FT_ALIGN_BOTTOM_RIGHT)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: causal_align=%d must be 0 (FT_ALIGN_TOP_LEFT) or 1 (FT_ALIGN_BOTTOM_RIGHT)", func,
                    d->causal_align);
    if (d->window != 0 && d->window != 1)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: window=%d must be 0 (none) or 1 (window_left and window_right apply)", func, d->window);
    if (d->deterministic != 0 && d->deterministic != 1)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: deterministic=%d must be 0 (fastest) or 1 (bitwise repeatable backward)", func,
                    d->deterministic);
    const struct { const char *name; int value; } sides[] = {
        { "window_left", d->window_left }, { "window_right", d->window_right },
    };
    for (int i = 0; i < 2; i++) {
        if (!d->window && sides[i].value != 0)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                        "%s: %s=%d with window=0: set window=1 for a local window (or leave %s 0)", func,
                        sides[i].name, sides[i].value, sides[i].name);
        if (sides[i].value < -1)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s=%d must be >= 0, or -1 for no limit", func,
                        sides[i].name, sides[i].value);
    }
    if (d->causal && d->window && d->window_right != 0 && d->window_right != -1)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: window_right=%d with causal=1: a causal mask has window_right 0 or -1", func,
                    d->window_right);
    /* The kernels form i + lo and i + hi in int (ft_mask.h). */
    if (rt_mask_active(d) && (long long)d->seqlen_q + d->seqlen_k >= 0x80000000LL)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: seqlen_q=%d + seqlen_k=%d must be below 2^31 with a mask", func, d->seqlen_q,
                    d->seqlen_k);
    return FT_OK;
}

int rt_mask_active(const ft_attention_desc *d)
{
    return ft_mask_active(d->causal, d->window ? d->window_left : -1, d->window ? d->window_right : -1);
}

void rt_problem_mask(const ft_attention_desc *d, ln_problem *p)
{
    ln_problem_mask(p, d->causal, d->causal_align == FT_ALIGN_BOTTOM_RIGHT, d->window ? d->window_left : -1,
                    d->window ? d->window_right : -1);
}

/* The variable-length fields as far as the host sees them (the sums are checked at the call,
 * rt_check_prefix_sums): both pointers or neither, totals >= 1 with them and 0 without. */
static ft_status check_varlen_fields(const char *func, const ft_attention_desc *d, char *err, size_t len)
{
    if (!d->cu_seqlens_q != !d->cu_seqlens_k)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: cu_seqlens_q=%p and cu_seqlens_k=%p: a variable-length batch sets both, a dense one neither",
                    func, (const void *)d->cu_seqlens_q, (const void *)d->cu_seqlens_k);
    const struct { const char *name; int value; } totals[] = { { "total_q", d->total_q }, { "total_k", d->total_k } };
    for (int i = 0; i < 2; i++) {
        if (d->cu_seqlens_q && totals[i].value < 1)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                        "%s: %s=%d must be at least 1 in a variable-length batch (the packed rows)", func,
                        totals[i].name, totals[i].value);
        if (!d->cu_seqlens_q && totals[i].value != 0)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                        "%s: %s=%d without cu_seqlens_q: a dense batch leaves it 0", func, totals[i].name,
                        totals[i].value);
    }
    return FT_OK;
}

ft_status rt_check_desc(const char *func, const ft_attention_desc *d, int backward, db_workload *w, char *err,
                        size_t len)
{
    if (!d)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: desc is NULL", func);
    const struct { const char *name; int value; } sizes[] = {
        { "batch", d->batch }, { "heads", d->heads }, { "seqlen_q", d->seqlen_q }, { "seqlen_k", d->seqlen_k },
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s=%d must be at least 1", func, sizes[i].name,
                        sizes[i].value);
    if ((int)d->dtype < 0 || (int)d->dtype > 3)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: dtype=%d is not an ft_dtype (0 FT_F32, 1 FT_F16, 2 FT_BF16, 3 FT_F64)", func, (int)d->dtype);
    const int dv = d->head_dim_v ? d->head_dim_v : d->head_dim;
    if (d->head_dim < 1 || d->head_dim_v < 0)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s=%d must be at least 1", func,
                    d->head_dim < 1 ? "head_dim" : "head_dim_v", d->head_dim < 1 ? d->head_dim : d->head_dim_v);
    const char *const dim_names[2] = { "head_dim", "head_dim_v" };
    const int dims[2] = { d->head_dim, dv };
    for (int i = 0; i < 2; i++) {
        if (dims[i] > RT_HEAD_DIM_MAX)
            return fail(FT_ERR_UNSUPPORTED, err, len, "%s: %s=%d is not supported (1 to %d)", func, dim_names[i],
                        dims[i], RT_HEAD_DIM_MAX);
        /* The tensor-core kernels copy rows in 16-byte pieces; the padding to the compiled head
         * dim is theirs, but a row's last piece must be whole. */
        if ((d->dtype == FT_F16 || d->dtype == FT_BF16) && dims[i] % 8 != 0)
            return fail(FT_ERR_UNSUPPORTED, err, len,
                        "%s: %s=%d is not supported in %s, which takes multiples of 8 (pad the tensors with zeros to "
                        "%d and pass softmax_scale)", func, dim_names[i], dims[i], d->dtype == FT_F16 ? "f16" : "bf16",
                        (dims[i] + 7) / 8 * 8);
    }
    const ft_status s = check_mask(func, d, err, len);
    if (s != FT_OK)
        return s;
    if (!isfinite(d->softmax_scale))
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: softmax_scale=%g is not finite", func,
                    (double)d->softmax_scale);
    /* The kernels mask a score to -inf before it is scaled: a negative scale would turn it to +inf. */
    if (d->softmax_scale < 0)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: softmax_scale=%g is negative (0 means 1/sqrt(head_dim); "
                    "the kernels take a positive scale)", func, (double)d->softmax_scale);
    if (d->heads_k < 0 || d->heads_k > d->heads || (d->heads_k && d->heads % d->heads_k))
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: heads_k=%d must divide heads=%d (the K/V heads of grouped-query attention; 0 means "
                    "heads)", func, d->heads_k, d->heads);
    if (!isfinite(d->softcap) || d->softcap < 0)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: softcap=%g must be a finite number >= 0 (0: none; c > 0 caps scores to c tanh(S / c))", func,
                    (double)d->softcap);
    if (d->reserved != 0)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: reserved=%d must be 0", func, d->reserved);
    if (d->prefix_sums_checked != 0 && (d->prefix_sums_checked != 1 || !d->cu_seqlens_q))
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: prefix_sums_checked=%d must be 0, or 1 with cu_seqlens_q (the caller vouches for "
                    "the prefix sums)", func, d->prefix_sums_checked);
    if (d->allow_tf32 != 0 && d->allow_tf32 != 1)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: allow_tf32=%d must be 0 (float32's accuracy) or 1 (float32 products may round to TF32)",
                    func, d->allow_tf32);
    if (d->dsinks && !d->sinks)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: dsinks=%p without sinks: the sinks' gradient needs the sinks (or dsinks NULL)", func,
                    d->dsinks);
    const ft_status v = check_varlen_fields(func, d, err, len);
    if (v != FT_OK)
        return v;
    if (d->heads > 65535)
        return fail(FT_ERR_UNSUPPORTED, err, len,
                    "%s: heads=%d is more than 65535 (CUDA's grid.y limit; batches are split, heads are not)", func,
                    d->heads);
    /* Every buffer's element count must stay far from int64 overflow. */
    const double rows = (double)d->batch * d->heads * (d->seqlen_q > d->seqlen_k ? d->seqlen_q : d->seqlen_k);
    if (rows * 256 * 8 > 0x1p62)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                    "%s: batch=%d heads=%d seqlen_q=%d seqlen_k=%d: the tensors would exceed 2^62 bytes", func,
                    d->batch, d->heads, d->seqlen_q, d->seqlen_k);
    memset(w, 0, sizeof *w);
    w->op = backward ? DB_OP_BWD : DB_OP_FWD;
    w->dtype = (int)d->dtype;
    w->head_dim = d->head_dim;
    w->head_dim_v = dv;
    w->batch = d->batch;
    w->heads = d->heads;
    w->seqlen_q = d->seqlen_q;
    w->seqlen_k = d->seqlen_k;
    w->heads_k = d->heads_k && d->heads_k != d->heads ? d->heads_k : 0;   /* the database's key: 0 ungrouped */
    w->softcap = d->softcap != 0;
    w->sinks = d->sinks != NULL;
    /* Float32 alone has products to round (forward and backward: fwd_mma, bwd_mma). */
    w->tf32 = d->allow_tf32 && d->dtype == FT_F32;
    if (d->cu_seqlens_q)   /* the database's key: how full the batch is, from the sizes alone */
        w->varlen = db_varlen_bucket(d->batch, d->seqlen_q, d->seqlen_k, d->total_q, d->total_k);
    /* The mask's kind, in its one stored form; its kernels are the causal ones (db_workload_masked). */
    db_workload_set_mask(w, d->causal, d->causal_align == FT_ALIGN_BOTTOM_RIGHT, d->window ? d->window_left : -1,
                         d->window ? d->window_right : -1);
    return FT_OK;
}

int rt_stream_capturing(const cu_driver *cu, CUstream stream)
{
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return cu->StreamIsCapturing(stream, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
}

ft_status rt_check_prefix_sums(const char *func, const cu_driver *cu, const ft_attention_desc *d, CUstream stream,
                               char *err, size_t len)
{
    /* Nothing to check, vouched for, or a graph being captured (it cannot wait). */
    if (!d->cu_seqlens_q || d->prefix_sums_checked || rt_stream_capturing(cu, stream))
        return FT_OK;
    const size_t n = (size_t)d->batch + 1;
    int32_t *host = malloc(2 * n * sizeof *host);
    if (!host)
        return fail(FT_ERR_OUT_OF_MEMORY, err, len, "%s: out of memory", func);
    /* The sums may be written by work queued before this call on stream. */
    CUresult rc = cu->StreamSynchronize(stream);
    if (rc == CUDA_SUCCESS)
        rc = cu->MemcpyDtoH(host, (CUdeviceptr)(uintptr_t)d->cu_seqlens_q, n * sizeof *host);
    if (rc == CUDA_SUCCESS)
        rc = cu->MemcpyDtoH(host + n, (CUdeviceptr)(uintptr_t)d->cu_seqlens_k, n * sizeof *host);
    ft_status s = FT_OK;
    if (rc != CUDA_SUCCESS) {
        char buf[256];
        s = fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: cu_seqlens_q=%p, cu_seqlens_k=%p: reading them failed (%s); "
                 "they must be device memory of batch + 1 = %zu ints each", func, (const void *)d->cu_seqlens_q,
                 (const void *)d->cu_seqlens_k, cu_result_str(rc, buf, sizeof buf), n);
    }
    const char *const names[2] = { "cu_seqlens_q", "cu_seqlens_k" };
    const int totals[2] = { d->total_q, d->total_k }, longest[2] = { d->seqlen_q, d->seqlen_k };
    const char *const longest_names[2] = { "seqlen_q", "seqlen_k" }, *const total_names[2] = { "total_q", "total_k" };
    for (int t = 0; t < 2 && s == FT_OK; t++) {
        const int32_t *c = host + t * n;
        if (c[0] != 0)
            s = fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s[0]=%d must be 0 (prefix sums start at 0)", func,
                     names[t], c[0]);
        for (size_t b = 0; b + 1 < n && s == FT_OK; b++) {
            const long long length = (long long)c[b + 1] - c[b];
            if (length < 0)
                s = fail(FT_ERR_INVALID_ARGUMENT, err, len,
                         "%s: %s[%zu]=%d is less than %s[%zu]=%d (prefix sums never decrease)", func, names[t], b + 1,
                         c[b + 1], names[t], b, c[b]);
            else if (length > longest[t])
                s = fail(FT_ERR_INVALID_ARGUMENT, err, len,
                         "%s: sequence %zu is %lld rows long (%s[%zu] - %s[%zu]), more than %s=%d, the longest", func,
                         b, length, names[t], b + 1, names[t], b, longest_names[t], longest[t]);
        }
        if (s == FT_OK && c[n - 1] != totals[t])
            s = fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s[batch=%d]=%d must equal %s=%d", func, names[t],
                     d->batch, c[n - 1], total_names[t], totals[t]);
    }
    free(host);
    return s;
}

/* The largest tensor a call may describe, in bytes: far below where int64 element offsets or a
 * pointer plus an offset wrap, and beyond any GPU's memory. */
#define TENSOR_BYTES_MAX ((int64_t)1 << 62)

/* a + b * c for a, b, c >= 0, or -1 when it is not representable in int64: the only arithmetic
 * on caller-given strides, so a hostile stride cannot overflow (undefined behaviour). */
static int64_t add_mul(int64_t a, int64_t b, int64_t c)
{
    int64_t r;
    if (__builtin_mul_overflow(b, c, &r) || __builtin_add_overflow(a, r, &r))
        return -1;
    return r;
}

/* One dimension of a tensor for the overlap check. */
typedef struct dim {
    int index;
    int64_t stride, extent;
} dim;

/* Where a strided tensor's rows stop starting 16-byte aligned: -1 nowhere, 3 its base pointer, else
 * the dimension whose stride (in bytes) is not a multiple of 16; a dimension of extent 1 is never
 * stepped along. What the tensor-core kernels' 16-byte row copies need (check_one, rt_rows16). */
static int unaligned_at(const db_workload *w, const rt_tensor *t)
{
    if ((uintptr_t)t->ptr % 16)
        return 3;
    const int64_t e = (int64_t)rt_elem_bytes(w->dtype);
    const int extent[3] = { w->varlen ? 1 : w->batch, t->heads, t->seqlen };
    for (int j = 0; j < 3; j++)
        if (extent[j] > 1 && t->stride[j] * e % 16)
            return j;
    return -1;
}

static ft_status check_one(const char *func, const db_workload *w, const rt_tensor *t, int tensor_cores, char *err,
                           size_t len)
{
    if (!t->ptr)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s is NULL", func, t->name);
    if (!t->stride) {   /* lse: contiguous [batch, heads, seqlen_q] of the accumulator type */
        const size_t a = rt_acc_bytes(w->dtype);
        if ((uintptr_t)t->ptr % a)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s=%p is not %zu-byte aligned (it holds %s)", func,
                        t->name, t->ptr, a, a == 8 ? "double" : "float");
        return FT_OK;
    }
    const size_t e = rt_elem_bytes(w->dtype);
    if ((uintptr_t)t->ptr % e)
        return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s=%p is not %zu-byte aligned (its elements are %s)",
                    func, t->name, t->ptr, e, gen_dtype_name(w->dtype));
    /* A variable-length batch is one packed sequence: its batch stride is not read. */
    dim dims[3] = { { 0, t->stride[0], w->varlen ? 1 : w->batch }, { 1, t->stride[1], t->heads },
                    { 2, t->stride[2], t->seqlen } };
    for (int i = 0; i < 3; i++)
        if (dims[i].stride < 0)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len, "%s: %s[%d]=%lld is negative", func, t->stride_name, i,
                        (long long)dims[i].stride);
    const int at = tensor_cores ? unaligned_at(w, t) : -1;
    if (at == 3)
        return fail(FT_ERR_UNSUPPORTED, err, len,
                    "%s: %s=%p is not 16-byte aligned (the %s tensor-core kernels load 16-byte rows)", func, t->name,
                    t->ptr, gen_dtype_name(w->dtype));
    if (at >= 0)
        return fail(FT_ERR_UNSUPPORTED, err, len,
                    "%s: %s[%d]=%lld is not a multiple of 8 elements (the %s tensor-core kernels load 16-byte rows)",
                    func, t->stride_name, at, (long long)t->stride[at], gen_dtype_name(w->dtype));
    /* Sorted by stride, each dimension must step past everything the inner ones span, starting
     * with the contiguous head dim; dimensions of extent 1 have no say. */
    for (int i = 1; i < 3; i++)
        for (int j = i; j > 0 && dims[j].stride < dims[j - 1].stride; j--) {
            dim tmp = dims[j];
            dims[j] = dims[j - 1];
            dims[j - 1] = tmp;
        }
    int64_t span = t->dim;
    for (int i = 0; i < 3; i++) {
        if (dims[i].extent <= 1)
            continue;
        if (dims[i].stride < span) {
            if (span == t->dim)
                return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                            "%s: %s[%d]=%lld is less than the %d elements of a row (the head dim is contiguous, "
                            "so rows would overlap)", func, t->stride_name, dims[i].index,
                            (long long)dims[i].stride, t->dim);
            return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                        "%s: %s = { %lld, %lld, %lld } overlap: %s[%d]=%lld is less than the %lld elements the "
                        "inner dimensions span", func, t->stride_name, (long long)t->stride[0],
                        (long long)t->stride[1], (long long)t->stride[2], t->stride_name, dims[i].index,
                        (long long)dims[i].stride, (long long)span);
        }
        span = add_mul(span, dims[i].stride, dims[i].extent - 1);
        const int64_t bytes = span < 0 ? -1 : add_mul(0, span, (int64_t)e);
        if (bytes < 0 || bytes > TENSOR_BYTES_MAX)
            return fail(FT_ERR_INVALID_ARGUMENT, err, len,
                        "%s: %s = { %lld, %lld, %lld } with batch=%d heads=%d seqlen=%d spans more than 2^62 "
                        "bytes", func, t->stride_name, (long long)t->stride[0], (long long)t->stride[1],
                        (long long)t->stride[2], w->batch, t->heads, t->seqlen);
    }
    return FT_OK;
}

ft_status rt_check_tensors(const char *func, const db_workload *w, const rt_tensor *t, int n, int tensor_cores,
                           char *err, size_t len)
{
    for (int i = 0; i < n; i++) {
        ft_status s = check_one(func, w, &t[i], tensor_cores, err, len);
        if (s != FT_OK)
            return s;
    }
    return FT_OK;
}

int rt_rows16(const db_workload *w, const rt_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i].stride && unaligned_at(w, &t[i]) >= 0)
            return 0;
    return 1;
}

size_t rt_workspace_bytes(const db_workload *w, int total_q, size_t *accum_offset, size_t *split_offset)
{
    const size_t base = ln_workspace_bytes(w->dtype, w->batch, w->heads, w->seqlen_q, w->varlen ? total_q : 0,
                                           w->head_dim, accum_offset);
    const size_t offset = (base + 255) / 256 * 256;
    if (split_offset)
        *split_offset = offset;
    const int splits = db_workload_group_splits(w);
    if (splits < 2)
        return base;
    /* The widest compiled head dims any family runs these at (a Hopper family pads up to 64). */
    const size_t rows = (size_t)w->batch * (w->heads_k ? w->heads_k : w->heads) * w->seqlen_k;
    return offset + ln_bwd_split_bytes(splits, rows, ln_accum_head_dim(w->head_dim), ln_accum_head_dim(w->head_dim_v),
                                       NULL);
}
