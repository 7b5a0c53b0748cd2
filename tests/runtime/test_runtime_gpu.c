/* libflashtune on the GPU (label gpu): forward and backward through the public API for every
 * dtype and head dim, compared with the library's GPU reference path; odd and unequal lengths,
 * a [B, N, H, D] layout, Dv != D, bottom-right causal and local windows (with rows that see no
 * key and keys no row sees), batches split past grid.y = 65535, non-default and default
 * streams, threads sharing one context, a thread with no CUDA context, and CUBINs reloaded
 * from a database. Without a GPU it prints why and exits 77 (ctest: skipped). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_driver_internal.h"
#include "db_internal.h"
#include "flashtune.h"

#define SKIP 77

typedef struct gpu_case {
    const char *name;
    ft_dtype dtype;
    int head_dim, head_dim_v, batch, heads, seqlen_q, seqlen_k, causal;
    int layout;                 /* 0 [B, H, N, D], 1 [B, N, H, D] */
    int default_stream;
    int align, window, left, right;   /* causal_align, window, window_left, window_right */
    int deterministic;          /* desc.deterministic: then a second backward must be bitwise the same */
    int heads_k;                /* desc.heads_k: 0, or the K/V heads of grouped-query attention */
    float softcap;              /* desc.softcap */
    const int *cu_q, *cu_k;     /* a variable-length batch's prefix sums (batch + 1 each; seqlens the
                                 * longest; the layout [total, H, D]), or NULL */
} gpu_case;

/* Variable-length batches: odd lengths, an empty sequence, one without keys, one of one row. */
static const int cu_q5[] = { 0, 300, 301, 301, 512, 600 }, cu_k5[] = { 0, 300, 420, 500, 500, 777 };
static const int cu_q3[] = { 0, 1000, 1257, 1600 }, cu_k3[] = { 0, 1000, 1257, 1600 };
static const int cu_qd[] = { 0, 1, 2, 2, 5 }, cu_kd[] = { 0, 900, 1000, 1010, 1010 };   /* decode */
#define DENSE NULL, NULL   /* a dense batch */

static const gpu_case cases[] = {
    { "f32 D=32", FT_F32, 32, 32, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f32 D=64 causal", FT_F32, 64, 64, 2, 3, 129, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f32 D=96", FT_F32, 96, 96, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f32 D=128", FT_F32, 128, 128, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f32 D=256 causal", FT_F32, 256, 256, 1, 2, 129, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 D=32", FT_F16, 32, 32, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 D=64 causal", FT_F16, 64, 64, 2, 3, 129, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 D=96", FT_F16, 96, 96, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 D=128", FT_F16, 128, 128, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 D=256 causal", FT_F16, 256, 256, 1, 2, 129, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 D=32", FT_BF16, 32, 32, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 D=64 causal", FT_BF16, 64, 64, 2, 3, 129, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 D=96", FT_BF16, 96, 96, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 D=128", FT_BF16, 128, 128, 2, 3, 129, 129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 D=256 causal", FT_BF16, 256, 256, 1, 2, 129, 129, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f64 D=32", FT_F64, 32, 32, 1, 2, 65, 65, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f64 D=64 causal", FT_F64, 64, 64, 1, 2, 65, 65, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f64 D=96", FT_F64, 96, 96, 1, 2, 65, 65, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f64 D=128", FT_F64, 128, 128, 1, 2, 65, 65, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f64 D=256 causal", FT_F64, 256, 256, 1, 1, 65, 65, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 Nq<Nk causal", FT_BF16, 64, 64, 2, 2, 100, 300, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f32 Nq>Nk causal", FT_F32, 128, 128, 1, 2, 300, 77, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 [B,N,H,D]", FT_BF16, 128, 128, 2, 4, 200, 200, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f64 [B,N,H,D] causal", FT_F64, 64, 64, 2, 3, 50, 70, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 Dv<D default stream", FT_F16, 128, 64, 2, 2, 90, 200, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f32 Dv>D [B,N,H,D]", FT_F32, 64, 128, 1, 2, 77, 99, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "bf16 N=1", FT_BF16, 64, 64, 2, 3, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 N=4096 causal", FT_F16, 128, 128, 1, 2, 4096, 4096, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    /* Masks beyond top-left causal (FT_ALIGN_BOTTOM_RIGHT, windows): Nq > Nk bottom-right and
     * narrow windows leave rows that see no key (O 0, lse +inf, dQ 0) and keys no row sees. */
    { "bf16 Nq<Nk bottom-right", FT_BF16, 64, 64, 2, 2, 100, 300, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, DENSE },
    { "f32 Nq>Nk bottom-right", FT_F32, 64, 64, 1, 2, 300, 77, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 window (64, 0) bottom-right", FT_F16, 128, 128, 1, 2, 257, 300, 0, 0, 0, 1, 1, 64, 0, 0, 0, 0, DENSE },
    { "f64 window (17, 9) [B,N,H,D]", FT_F64, 64, 64, 1, 2, 70, 65, 0, 1, 0, 0, 1, 17, 9, 0, 0, 0, DENSE },
    { "bf16 window left only", FT_BF16, 128, 128, 1, 3, 333, 333, 0, 0, 0, 0, 1, 100, -1, 0, 0, 0, DENSE },
    { "f32 window right only", FT_F32, 32, 32, 2, 2, 129, 129, 0, 0, 0, 0, 1, -1, 20, 0, 0, 0, DENSE },
    { "f16 causal window (0, 0)", FT_F16, 64, 64, 1, 2, 150, 90, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, DENSE },
    { "bf16 window Nq>Nk empty rows", FT_BF16, 96, 96, 1, 2, 400, 50, 0, 0, 0, 1, 1, 3, 2, 0, 0, 0, DENSE },
    { "bf16 window Nq<Nk unseen keys", FT_BF16, 96, 96, 1, 2, 50, 400, 0, 0, 0, 0, 1, 3, 2, 0, 0, 0, DENSE },
    /* deterministic = 1 in every family the runtime picks (bwd_wgmma ordered on sm_90, bwd_mma
     * and bwd_exact separate), long enough that many key tiles add into each query tile. */
    { "bf16 D=128 causal deterministic", FT_BF16, 128, 128, 2, 4, 1500, 1500, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, DENSE },
    { "f16 D=64 Nq>Nk deterministic", FT_F16, 64, 64, 1, 4, 1300, 900, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, DENSE },
    /* Grouped K/V heads (heads_k): every family the runtime picks, both layouts, a mask, and the
     * deterministic backward, whose key tiles walk the group's query heads. */
    { "bf16 D=128 gqa 8/2 causal", FT_BF16, 128, 128, 2, 8, 500, 500, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, DENSE },
    { "f16 D=64 mqa 6/1 [B,N,H,D]", FT_F16, 64, 64, 2, 6, 200, 333, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, DENSE },
    { "f32 D=64 gqa 4/2 window", FT_F32, 64, 64, 1, 4, 150, 150, 0, 0, 0, 0, 1, 30, 10, 0, 2, 0, DENSE },
    { "f64 D=32 gqa 4/2 causal", FT_F64, 32, 32, 1, 4, 65, 65, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, DENSE },
    { "bf16 D=256 gqa 4/2 causal", FT_BF16, 256, 256, 1, 4, 300, 300, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, DENSE },
    { "bf16 D=128 gqa 8/2 causal deterministic", FT_BF16, 128, 128, 2, 8, 1500, 1500, 1, 0, 0, 0, 0, 0, 0, 1, 2, 0, DENSE },
    /* The softcap (desc.softcap): the runtime compiles its choice with SOFTCAP 1, every dtype. */
    { "bf16 D=128 softcap 30 causal", FT_BF16, 128, 128, 2, 4, 400, 400, 1, 0, 0, 0, 0, 0, 0, 0, 0, 30, DENSE },
    { "f16 D=64 gqa 4/2 softcap 5 [B,N,H,D]", FT_F16, 64, 64, 2, 4, 150, 211, 0, 1, 0, 0, 0, 0, 0, 0, 2, 5, DENSE },
    { "f32 D=64 softcap 1 window", FT_F32, 64, 64, 1, 2, 100, 100, 0, 0, 0, 0, 1, 20, 20, 0, 0, 1, DENSE },
    { "f64 D=32 softcap 0.5 causal", FT_F64, 32, 32, 1, 2, 65, 65, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0.5f, DENSE },
    { "bf16 D=128 softcap 20 deterministic", FT_BF16, 128, 128, 1, 4, 1200, 1200, 1, 0, 0, 0, 0, 0, 0, 1, 0, 20, DENSE },
    { "bf16 D=96 deterministic", FT_BF16, 96, 96, 1, 3, 800, 800, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, DENSE },
    { "f32 D=64 window deterministic", FT_F32, 64, 64, 1, 2, 600, 600, 0, 0, 0, 1, 1, 200, 50, 1, 0, 0, DENSE },
    /* Head dims no kernel compiles: the runtime runs them padded to the next compiled one. */
    { "bf16 D=40 causal (padded to 64)", FT_BF16, 40, 40, 2, 4, 700, 700, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    { "f16 D=80 gqa 6/2 [B,N,H,D] (to 96)", FT_F16, 80, 80, 2, 6, 300, 450, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0, DENSE },
    { "bf16 D=16/24 softcap 10 (to 32)", FT_BF16, 16, 24, 2, 3, 257, 257, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10, DENSE },
    { "bf16 D=80 deterministic (to 96)", FT_BF16, 80, 80, 1, 4, 900, 900, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, DENSE },
    { "f32 D=13/200 window (to 32/256)", FT_F32, 13, 200, 1, 2, 99, 150, 0, 0, 0, 1, 1, 20, 5, 0, 0, 0, DENSE },
    { "f64 D=1 causal (to 32)", FT_F64, 1, 1, 2, 2, 70, 70, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, DENSE },
    /* Variable-length batches (cu_seqlens_q, cu_seqlens_k): every dtype, masks placed by each
     * sequence's own lengths, grouped heads, the softcap and the deterministic backward. */
    { "varlen bf16 D=128 causal", FT_BF16, 128, 128, 5, 4, 300, 300, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, cu_q5, cu_k5 },
    { "varlen f16 D=64 gqa 8/2 bottom-right", FT_F16, 64, 64, 5, 8, 300, 300, 1, 1, 0, 1, 0, 0, 0, 0, 2, 0, cu_q5, cu_k5 },
    { "varlen bf16 D=128 window det.", FT_BF16, 128, 128, 3, 4, 1000, 1000, 0, 1, 0, 1, 1, 100, 20, 1, 0, 0, cu_q3, cu_k3 },
    { "varlen f32 D=64 softcap 3", FT_F32, 64, 64, 5, 2, 300, 300, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, cu_q5, cu_k5 },
    { "varlen f64 D=32 causal", FT_F64, 32, 32, 5, 2, 300, 300, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, cu_q5, cu_k5 },
    { "varlen bf16 D=40 causal (to 64)", FT_BF16, 40, 40, 3, 4, 1000, 1000, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, cu_q3, cu_k3 },
    /* Few K/V heads: the backward shares each group's query heads over blocks (rt_group_splits). */
    { "bf16 D=128 mqa 8/1 causal (split backward)", FT_BF16, 128, 128, 2, 8, 500, 500, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, DENSE },
    { "f16 D=64 gqa 16/2 [B,N,H,D] (split backward)", FT_F16, 64, 64, 1, 16, 333, 1000, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0, DENSE },
    { "bf16 D=128 mqa 8/1 deterministic", FT_BF16, 128, 128, 2, 8, 500, 500, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, DENSE },
    /* Decode shapes: the forward splits the keys and packs the group (rt_decode_config). */
    { "decode bf16 D=128 gqa 32/8 Nq=1", FT_BF16, 128, 128, 2, 32, 1, 3000, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, DENSE },
    { "decode f16 D=64 gqa 8/2 Nq=7 bottom-right", FT_F16, 64, 64, 3, 8, 7, 1111, 1, 1, 0, 1, 0, 0, 0, 0, 2, 0, DENSE },
    /* Causal bottom-right drafts at head dim 128, 32 over 8 heads: served the shipped one-row
     * decode winners, tuned without a mask, compiled causal (db_workload_decode_any_mask). */
    { "decode bf16 D=128 gqa 32/8 Nq=4 bottom-right", FT_BF16, 128, 128, 3, 32, 4, 3000, 1, 0, 0, 1, 0, 0, 0, 0, 8, 0, DENSE },
    { "decode f16 D=128 gqa 32/8 Nq=1 bottom-right", FT_F16, 128, 128, 2, 32, 1, 2500, 1, 1, 0, 1, 0, 0, 0, 0, 8, 0, DENSE },
    { "decode varlen bf16 D=128 gqa 8/2", FT_BF16, 128, 128, 4, 8, 3, 900, 1, 1, 0, 1, 0, 0, 0, 0, 2, 0, cu_qd, cu_kd },
};
#define CASE_COUNT ((int)(sizeof cases / sizeof cases[0]))

static const cu_driver *cu;
static CUcontext primary;
static ft_context *shared_ft;

static double limit(ft_dtype t)
{
    return t == FT_F32 ? 1e-5 : t == FT_F16 ? 3e-3 : t == FT_BF16 ? 1e-2 : 1e-12;
}

static size_t esize(ft_dtype t)
{
    return t == FT_F32 ? 4 : t == FT_F64 ? 8 : 2;
}

/* ---- dtype conversions on the host (round to nearest even) ----------------------------- */

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint16_t to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const float a = fabsf(f);
    if (a < 6.103515625e-05f)   /* subnormal halves: multiples of 2^-24 */
        return (uint16_t)(sign | (uint32_t)nearbyintf(a * 16777216.0f));
    const uint32_t m = u & 0x7fffffffu, mant = m & 0x7fffffu;
    uint32_t h = (((m >> 23) - 112) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    h += rest > 0x1000u || (rest == 0x1000u && (h & 1u));
    return (uint16_t)(sign | h);
}

static double from_elem(const unsigned char *buf, ft_dtype t, size_t i)
{
    uint16_t h;
    uint32_t u;
    float f;
    switch (t) {
    case FT_F32: memcpy(&f, buf + 4 * i, 4); return f;
    case FT_F64: { double d; memcpy(&d, buf + 8 * i, 8); return d; }
    case FT_BF16: memcpy(&h, buf + 2 * i, 2); u = (uint32_t)h << 16; memcpy(&f, &u, 4); return f;
    default: {
        memcpy(&h, buf + 2 * i, 2);
        const int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
        double v = e == 0 ? ldexp(mant, -24) : e == 31 ? (mant ? NAN : INFINITY) : ldexp(mant | 0x400, e - 25);
        return (h & 0x8000) ? -v : v;
    }
    }
}

/* ---- buffers ------------------------------------------------------------------------------ */

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* n random normal-ish values (sum of uniforms) in dtype t, uploaded. */
static CUdeviceptr upload_random(ft_dtype t, size_t n, uint64_t *seed)
{
    unsigned char *h = malloc(n * esize(t));
    for (size_t i = 0; i < n; i++) {
        double x = 0;
        for (int j = 0; j < 4; j++)
            x += (double)(rng(seed) >> 11) / 9007199254740992.0 - 0.5;
        x *= 1.7;
        if (t == FT_F32) { float f = (float)x; memcpy(h + 4 * i, &f, 4); }
        else if (t == FT_F64) memcpy(h + 8 * i, &x, 8);
        else { uint16_t v = t == FT_BF16 ? to_bf16((float)x) : to_half((float)x); memcpy(h + 2 * i, &v, 2); }
    }
    CUdeviceptr d = 0;
    if (cu->MemAlloc(&d, n * esize(t)) != CUDA_SUCCESS || cu->MemcpyHtoD(d, h, n * esize(t)) != CUDA_SUCCESS)
        d = 0;
    free(h);
    return d;
}

/* Bytes filled with 0xFF: NaN in every dtype, so an element never written is caught. */
static CUdeviceptr alloc_poisoned(size_t bytes)
{
    CUdeviceptr d = 0;
    if (cu->MemAlloc(&d, bytes) != CUDA_SUCCESS)
        return 0;
    cu->MemsetD8(d, 0xff, bytes);
    return d;
}

/* ||got - want|| / ||want||; NaN anywhere is infinite error. Prints the first mismatch. */
static double compare(const char *what, CUdeviceptr got, CUdeviceptr want, ft_dtype t, size_t n, char *log,
                      size_t len)
{
    unsigned char *g = malloc(n * esize(t)), *w = malloc(n * esize(t));
    cu->MemcpyDtoH(g, got, n * esize(t));
    cu->MemcpyDtoH(w, want, n * esize(t));
    double num = 0, den = 0;
    long bad = -1;
    for (size_t i = 0; i < n; i++) {
        const double a = from_elem(g, t, i), b = from_elem(w, t, i);
        if (isinf(a) && a == b)
            continue;   /* lse +inf of a row that sees no key, on both sides */
        if (!isfinite(a) && bad < 0)
            bad = (long)i;
        num += (a - b) * (a - b);
        den += b * b;
    }
    double rel = bad >= 0 ? INFINITY : sqrt(num) / (den > 0 ? sqrt(den) : 1);
    size_t used = strlen(log);
    snprintf(log + used, len - used, " %s %.2e", what, rel);
    if (bad >= 0) {
        used = strlen(log);
        snprintf(log + used, len - used, " (element %ld: got %g, expected %g)", bad, from_elem(g, t, (size_t)bad),
                 from_elem(w, t, (size_t)bad));
    }
    free(g);
    free(w);
    return rel;
}

static void strides(const gpu_case *c, int heads, int seqlen, int dim, int64_t st[3])
{
    if (c->layout == 1) {
        st[0] = (int64_t)seqlen * heads * dim;
        st[1] = dim;
        st[2] = (int64_t)heads * dim;
    } else {
        st[0] = (int64_t)heads * seqlen * dim;
        st[1] = (int64_t)seqlen * dim;
        st[2] = dim;
    }
}

/* One case through the library and the reference: 0 pass, 1 fail (log says why). */
static int run_case(ft_context *ft, const gpu_case *c, uint64_t seed, char *log, size_t len)
{
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = c->batch, .heads = c->heads,
                            .seqlen_q = c->seqlen_q, .seqlen_k = c->seqlen_k, .head_dim = c->head_dim,
                            .head_dim_v = c->head_dim_v, .dtype = c->dtype, .causal = c->causal,
                            .causal_align = c->align, .window = c->window, .window_left = c->left,
                            .window_right = c->right, .deterministic = c->deterministic, .heads_k = c->heads_k,
                            .softcap = c->softcap };
    const int heads_k = c->heads_k ? c->heads_k : c->heads;
    /* A variable-length batch: one packed sequence of all the rows, its sums on the device. */
    const int batch = c->cu_q ? 1 : c->batch;
    const int rows_q = c->cu_q ? c->cu_q[c->batch] : c->seqlen_q, rows_k = c->cu_q ? c->cu_k[c->batch] : c->seqlen_k;
    CUdeviceptr sums[2] = { 0, 0 };
    if (c->cu_q) {
        const size_t bytes = ((size_t)c->batch + 1) * sizeof(int);
        const int *host[2] = { c->cu_q, c->cu_k };
        for (int i = 0; i < 2; i++)
            if (cu->MemAlloc(&sums[i], bytes) != CUDA_SUCCESS || cu->MemcpyHtoD(sums[i], host[i], bytes) != CUDA_SUCCESS) {
                snprintf(log, len, "prefix sums to the device failed");
                return 1;
            }
        d.cu_seqlens_q = (const int32_t *)(uintptr_t)sums[0];
        d.cu_seqlens_k = (const int32_t *)(uintptr_t)sums[1];
        d.total_q = rows_q;
        d.total_k = rows_k;
    }
    strides(c, c->heads, rows_q, c->head_dim, d.q_stride);
    strides(c, heads_k, rows_k, c->head_dim, d.k_stride);
    strides(c, heads_k, rows_k, c->head_dim_v, d.v_stride);
    strides(c, c->heads, rows_q, c->head_dim_v, d.o_stride);
    const size_t bh = (size_t)batch * c->heads, bhk = (size_t)batch * heads_k, acc = c->dtype == FT_F64 ? 8 : 4;
    const size_t nq = bh * rows_q * c->head_dim, nk = bhk * rows_k * c->head_dim;
    const size_t nv = bhk * rows_k * c->head_dim_v, no = bh * rows_q * c->head_dim_v;
    const size_t e = esize(c->dtype);
    CUstream stream = NULL;
    if (!c->default_stream && cu->StreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        snprintf(log, len, "cuStreamCreate failed");
        return 1;
    }
    CUdeviceptr q = upload_random(c->dtype, nq, &seed), k = upload_random(c->dtype, nk, &seed);
    CUdeviceptr v = upload_random(c->dtype, nv, &seed), dout = upload_random(c->dtype, no, &seed);
    CUdeviceptr o = alloc_poisoned(no * e), o_ref = alloc_poisoned(no * e);
    CUdeviceptr lse = alloc_poisoned(bh * rows_q * acc), lse_ref = alloc_poisoned(bh * rows_q * acc);
    CUdeviceptr dq = alloc_poisoned(nq * e), dk = alloc_poisoned(nk * e), dv = alloc_poisoned(nv * e);
    CUdeviceptr dq_ref = alloc_poisoned(nq * e), dk_ref = alloc_poisoned(nk * e), dv_ref = alloc_poisoned(nv * e);
#define P(x) ((void *)(uintptr_t)(x))
    ft_status s = ft_attention_forward(ft, &d, P(q), P(k), P(v), P(o), P(lse), stream);
    if (s == FT_OK)
        s = ft_attention_backward(ft, &d, P(q), P(k), P(v), P(o), P(lse), P(dout), P(dq), P(dk), P(dv), stream);
    /* deterministic: the backward again, into fresh poisoned buffers. */
    CUdeviceptr again[3] = { 0, 0, 0 };
    if (s == FT_OK && c->deterministic) {
        again[0] = alloc_poisoned(nq * e), again[1] = alloc_poisoned(nk * e), again[2] = alloc_poisoned(nv * e);
        s = ft_attention_backward(ft, &d, P(q), P(k), P(v), P(o), P(lse), P(dout), P(again[0]), P(again[1]),
                                  P(again[2]), stream);
    }
    /* The forward again with the caller's workspace (ft_attention_forward_ws): the same bits. A
     * decode shape's split forward keeps its partial sums there, so it needs one. */
    size_t ws_bytes = 0;
    CUdeviceptr o_ws = alloc_poisoned(no * e), lse_ws = alloc_poisoned(bh * rows_q * acc), ws = 0;
    if (s == FT_OK)
        s = ft_attention_forward_workspace_size(ft, &d, &ws_bytes);
    if (s == FT_OK && ws_bytes && cu->MemAlloc(&ws, ws_bytes) != CUDA_SUCCESS) {
        snprintf(log, len, "cuMemAlloc of %zu bytes of workspace failed", ws_bytes);
        return 1;
    }
    if (s == FT_OK)
        s = ft_attention_forward_ws(ft, &d, P(q), P(k), P(v), P(o_ws), P(lse_ws), P(ws), ws_bytes, stream);
    if (s == FT_OK)
        s = ft_attention_forward_reference(ft, &d, P(q), P(k), P(v), P(o_ref), P(lse_ref), stream);
    if (s == FT_OK)
        s = ft_attention_backward_reference(ft, &d, P(q), P(k), P(v), P(o_ref), P(lse_ref), P(dout), P(dq_ref),
                                            P(dk_ref), P(dv_ref), stream);
    int failed = 1;
    log[0] = '\0';
    if (s != FT_OK) {
        snprintf(log, len, "%s: %s", ft_status_str(s), ft_last_error(ft));
    } else if (cu->StreamSynchronize(stream) != CUDA_SUCCESS) {
        snprintf(log, len, "the kernels failed on the GPU");
    } else {
        /* Dense buffers (both layouts fill them), so a flat comparison covers every element. */
        const double lim = limit(c->dtype);
        failed = !(compare("O", o, o_ref, c->dtype, no, log, len) < lim);
        failed |= !(compare("lse", lse, lse_ref, c->dtype == FT_F64 ? FT_F64 : FT_F32, bh * rows_q, log, len)
                    < (c->dtype == FT_F64 ? 1e-12 : c->dtype == FT_F32 ? 1e-5 : 1e-4));
        failed |= !(compare("dQ", dq, dq_ref, c->dtype, nq, log, len) < lim);
        failed |= !(compare("dK", dk, dk_ref, c->dtype, nk, log, len) < lim);
        failed |= !(compare("dV", dv, dv_ref, c->dtype, nv, log, len) < lim);
        const CUdeviceptr fwd[2][2] = { { o, o_ws }, { lse, lse_ws } };
        const size_t fwd_bytes[2] = { no * e, bh * rows_q * acc };
        for (int i = 0; i < 2; i++) {
            unsigned char *a = malloc(fwd_bytes[i]), *b = malloc(fwd_bytes[i]);
            cu->MemcpyDtoH(a, fwd[i][0], fwd_bytes[i]);
            cu->MemcpyDtoH(b, fwd[i][1], fwd_bytes[i]);
            if (memcmp(a, b, fwd_bytes[i]) != 0) {
                const size_t used = strlen(log);
                snprintf(log + used, len - used, " %s differs with the caller's workspace", i ? "lse" : "O");
                failed = 1;
            }
            free(a);
            free(b);
        }
        if (!strncmp(c->name, "decode", 6) && ws_bytes == 0) {
            const size_t used = strlen(log);
            snprintf(log + used, len - used, " a decode forward asked for no workspace (not split?)");
            failed = 1;
        }
        if (c->deterministic) {
            const CUdeviceptr first[3] = { dq, dk, dv };
            const size_t n[3] = { nq, nk, nv };
            const char *names[3] = { "dQ", "dK", "dV" };
            for (int i = 0; i < 3; i++) {
                unsigned char *a = malloc(n[i] * e), *b = malloc(n[i] * e);
                cu->MemcpyDtoH(a, first[i], n[i] * e);
                cu->MemcpyDtoH(b, again[i], n[i] * e);
                if (memcmp(a, b, n[i] * e) != 0) {
                    const size_t used = strlen(log);
                    snprintf(log + used, len - used, " %s differs between two deterministic runs", names[i]);
                    failed = 1;
                }
                free(a);
                free(b);
            }
        }
    }
    for (int i = 0; i < 3; i++)
        if (again[i])
            cu->MemFree(again[i]);
    CUdeviceptr all[] = { q, k, v, dout, o, o_ref, lse, lse_ref, dq, dk, dv, dq_ref, dk_ref, dv_ref, sums[0], sums[1],
                          o_ws, lse_ws, ws };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i])
            cu->MemFree(all[i]);
    if (stream)
        cu->StreamDestroy(stream);
    return failed;
}

/* ---- the cases, several threads sharing one ft_context ------------------------------------- */

static atomic_int next_case;
static int results[CASE_COUNT];
static char logs[CASE_COUNT][1024];

/* A thread with no CUDA context: the library's first call must make the primary one current
 * (the test's own uploads need it, so this comes first). 0, or 1 with the reason. */
static int library_sets_context(char *log, size_t len)
{
    char buf[512];
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = 1, .heads = 1, .seqlen_q = 1,
                            .seqlen_k = 1, .head_dim = 32, .head_dim_v = 32, .dtype = FT_F32, .q_stride = { 32, 32, 32 }, .k_stride = { 32, 32, 32 },
                            .v_stride = { 32, 32, 32 }, .o_stride = { 32, 32, 32 } };
    CUcontext cur = NULL;
    cu->CtxSetCurrent(NULL);
    ft_status s = ft_describe_choice(shared_ft, &d, 0, buf, sizeof buf);
    cu->CtxGetCurrent(&cur);
    if (s == FT_OK && cur == primary)
        return 0;
    snprintf(log, len, "thread without a context: %s, current %p, expected the primary context %p",
             s == FT_OK ? "ok" : ft_last_error(shared_ft), (void *)cur, (void *)primary);
    return 1;
}

static void *case_worker(void *arg)
{
    const int id = (int)(intptr_t)arg;
    if (id % 2 == 0)
        cu->CtxSetCurrent(primary);
    int i;
    while ((i = atomic_fetch_add(&next_case, 1)) < CASE_COUNT) {
        /* Odd workers start every case without a context. */
        if (id % 2 == 1 && library_sets_context(logs[i], sizeof logs[i])) {
            results[i] = 1;
            continue;
        }
        results[i] = run_case(shared_ft, &cases[i], 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), logs[i],
                              sizeof logs[i]);
    }
    return NULL;
}

/* Two threads run the same problem at once on their own streams, many times. */
typedef struct same_arg {
    int failed;
    char log[1024];
} same_arg;

static void *same_problem_worker(void *arg)
{
    same_arg *a = arg;
    cu->CtxSetCurrent(primary);
    for (int rep = 0; rep < 5 && !a->failed; rep++)
        a->failed = run_case(shared_ft, &cases[13], 42 + (uint64_t)rep, a->log, sizeof a->log);
    return NULL;
}

/* batch*heads past 65535: the library splits; compared slice by slice with unsplit runs. */
static int split_batches(char *log, size_t len)
{
    const int batch = 33000, heads = 2, n = 16, dim = 32;
    const ft_dtype t = FT_BF16;
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = batch, .heads = heads,
                            .seqlen_q = n, .seqlen_k = n, .head_dim = dim, .head_dim_v = dim, .dtype = t };
    const int64_t st[3] = { (int64_t)heads * n * dim, (int64_t)n * dim, dim };
    memcpy(d.q_stride, st, sizeof st), memcpy(d.k_stride, st, sizeof st);
    memcpy(d.v_stride, st, sizeof st), memcpy(d.o_stride, st, sizeof st);
    const size_t elems = (size_t)batch * heads * n * dim;
    uint64_t seed = 7;
    CUdeviceptr q = upload_random(t, elems, &seed), k = upload_random(t, elems, &seed), v = upload_random(t, elems, &seed);
    CUdeviceptr o = alloc_poisoned(elems * 2), lse = alloc_poisoned((size_t)batch * heads * n * 4);
    CUdeviceptr o_ref = alloc_poisoned(elems * 2), lse_ref = alloc_poisoned((size_t)batch * heads * n * 4);
    ft_status s = ft_attention_forward(shared_ft, &d, P(q), P(k), P(v), P(o), P(lse), NULL);
    /* The reference in slices of 1000 batches (each one launch), around the split at 32767. */
    ft_attention_desc part = d;
    for (int b0 = 0; s == FT_OK && b0 < batch; b0 += 1000) {
        part.batch = batch - b0 < 1000 ? batch - b0 : 1000;
        const size_t off = (size_t)b0 * st[0] * 2, loff = (size_t)b0 * heads * n * 4;
        s = ft_attention_forward_reference(shared_ft, &part, P(q + off), P(k + off), P(v + off), P(o_ref + off),
                                           P(lse_ref + loff), NULL);
    }
    int failed = 1;
    log[0] = '\0';
    if (s != FT_OK)
        snprintf(log, len, "%s: %s", ft_status_str(s), ft_last_error(shared_ft));
    else if (cu->CtxSynchronize() != CUDA_SUCCESS)
        snprintf(log, len, "the kernels failed on the GPU");
    else
        failed = !(compare("O", o, o_ref, t, elems, log, len) < limit(t)) |
                 !(compare("lse", lse, lse_ref, FT_F32, (size_t)batch * heads * n, log, len) < 1e-4);
    CUdeviceptr all[] = { q, k, v, o, lse, o_ref, lse_ref };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cu->MemFree(all[i]);
    return failed;
}

/* A database file: the first context compiles and stores, a second one loads the CUBIN. */
static int database_reuse(char *log, size_t len)
{
    char folder[] = "/tmp/ft_runtime_gpu_XXXXXX", path[64];
    if (!mkdtemp(folder))
        return snprintf(log, len, "mkdtemp failed"), 1;
    snprintf(path, sizeof path, "%s/t.db", folder);
    db *d;
    char err[512];
    if (db_open(path, DB_OPEN_CREATE, &d, err, sizeof err) != 0)
        return snprintf(log, len, "%s", err), 1;
    db_close(d);
    int failed = 1;
    char desc[1024] = "";
    ft_context *ft;
    for (int round = 0; round < 2; round++) {
        if (ft_open(path, &ft) != FT_OK)
            return snprintf(log, len, "ft_open: %s", ft_last_error(NULL)), 1;
        failed = run_case(ft, &cases[8], 5, log, len);
        const gpu_case *c = &cases[8];
        ft_attention_desc dd = { .struct_size = sizeof(ft_attention_desc), .batch = c->batch, .heads = c->heads,
                                 .seqlen_q = c->seqlen_q, .seqlen_k = c->seqlen_k, .head_dim = c->head_dim,
                                 .head_dim_v = c->head_dim_v, .dtype = c->dtype };
        strides(c, c->heads, c->seqlen_q, c->head_dim, dd.q_stride);
        strides(c, c->heads, c->seqlen_k, c->head_dim, dd.k_stride);
        strides(c, c->heads, c->seqlen_k, c->head_dim_v, dd.v_stride);
        strides(c, c->heads, c->seqlen_q, c->head_dim_v, dd.o_stride);
        ft_describe_choice(ft, &dd, 1, desc, sizeof desc);
        ft_close(ft);
        if (failed)
            break;
    }
    if (!failed && !strstr(desc, "CUBIN from the database")) {
        snprintf(log, len, "the second context did not load the stored CUBIN: %s", desc);
        failed = 1;
    } else if (!failed) {
        snprintf(log, len, "%s", desc);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", folder);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", folder);
    return failed;
}

/* allow_tf32 through the public API: an f32 forward keeps float32's accuracy without it (three
 * TF32 products, within f32's threshold of the reference) and rounds its products to TF32 with
 * it: an error past f32's threshold (the flag reached the kernel) and within TF32's, and
 * ft_describe_choice names ALLOW_TF32=1. */
static int allow_tf32_rounds(char *log, size_t len)
{
    const gpu_case c = { .name = "f32 allow_tf32", .dtype = FT_F32, .head_dim = 64, .head_dim_v = 64, .batch = 2,
                         .heads = 3, .seqlen_q = 333, .seqlen_k = 333, .causal = 1 };
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = c.batch, .heads = c.heads,
                            .seqlen_q = c.seqlen_q, .seqlen_k = c.seqlen_k, .head_dim = c.head_dim,
                            .head_dim_v = c.head_dim_v, .dtype = c.dtype, .causal = c.causal };
    strides(&c, c.heads, c.seqlen_q, c.head_dim, d.q_stride);
    strides(&c, c.heads, c.seqlen_k, c.head_dim, d.k_stride);
    strides(&c, c.heads, c.seqlen_k, c.head_dim_v, d.v_stride);
    strides(&c, c.heads, c.seqlen_q, c.head_dim_v, d.o_stride);
    const size_t rows = (size_t)c.batch * c.heads * c.seqlen_q, n = rows * c.head_dim;
    uint64_t seed = 11;
    CUdeviceptr q = upload_random(c.dtype, n, &seed), k = upload_random(c.dtype, n, &seed);
    CUdeviceptr v = upload_random(c.dtype, n, &seed);
    CUdeviceptr o[2] = { alloc_poisoned(n * 4), alloc_poisoned(n * 4) }, o_ref = alloc_poisoned(n * 4);
    CUdeviceptr lse = alloc_poisoned(rows * 4), lse_ref = alloc_poisoned(rows * 4);
    ft_status s = ft_attention_forward_reference(shared_ft, &d, P(q), P(k), P(v), P(o_ref), P(lse_ref), NULL);
    for (int allow = 0; allow < 2 && s == FT_OK; allow++) {
        d.allow_tf32 = allow;
        s = ft_attention_forward(shared_ft, &d, P(q), P(k), P(v), P(o[allow]), P(lse), NULL);
    }
    char desc[1024] = "";
    if (s == FT_OK)
        s = ft_describe_choice(shared_ft, &d, 0, desc, sizeof desc);
    log[0] = '\0';
    if (s != FT_OK || cu->CtxSynchronize() != CUDA_SUCCESS)
        return snprintf(log, len, "%s: %s", ft_status_str(s), ft_last_error(shared_ft)), 1;
    const double strict = compare("O", o[0], o_ref, c.dtype, n, log, len);
    const double rounded = compare("O with allow_tf32", o[1], o_ref, c.dtype, n, log, len);
    int failed = !(strict < limit(c.dtype)) || !(rounded > limit(c.dtype) && rounded < 2e-3);
    if (!strstr(desc, "ALLOW_TF32=1")) {
        const size_t used = strlen(log);
        snprintf(log + used, len - used, "; the choice does not name ALLOW_TF32=1: %s", desc);
        failed = 1;
    }
    return failed;
}

/* Which family serves an f32 backward (ft_describe_choice, no launch): a tensor-core one where every
 * row is 16-byte aligned (bwd_mma, or on Hopper the tuned tables' bwd_wgmma_f32 at head dim 64;
 * deterministic, bwd_mma with DQ_MODE separate), bwd_exact where the rows are 66 floats apart,
 * deterministic or not; neither of those may reach the 16-byte copies. */
static int f32_backward_rows(char *log, size_t len)
{
    static const struct { int row, deterministic; const char *family, *dq, *hopper; } want[] = {
        { 64, 0, "bwd_mma", NULL, "bwd_wgmma_f32" }, { 64, 1, "bwd_mma", "DQ_MODE=separate", NULL },
        { 66, 0, "bwd_exact", NULL, NULL }, { 66, 1, "bwd_exact", "DQ_MODE=separate", NULL },
    };
    log[0] = '\0';
    for (int i = 0; i < 4; i++) {
        const long long r = want[i].row, n = 200;
        ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = 2, .heads = 3, .seqlen_q = (int)n,
                                .seqlen_k = (int)n, .head_dim = 64, .head_dim_v = 64, .dtype = FT_F32, .causal = 1,
                                .deterministic = want[i].deterministic };
        const int64_t st[3] = { 3 * n * r, n * r, r };
        memcpy(d.q_stride, st, sizeof st), memcpy(d.k_stride, st, sizeof st);
        memcpy(d.v_stride, st, sizeof st), memcpy(d.o_stride, st, sizeof st);
        char desc[1024] = "";
        const ft_status s = ft_describe_choice(shared_ft, &d, 1, desc, sizeof desc);
        if (s != FT_OK)
            return snprintf(log, len, "rows of %d: %s: %s", want[i].row, ft_status_str(s), ft_last_error(shared_ft)), 1;
        const int family_ok = strncmp(desc, want[i].family, strlen(want[i].family)) == 0 ||
                              (want[i].hopper && strncmp(desc, want[i].hopper, strlen(want[i].hopper)) == 0);
        if (!family_ok || (want[i].dq && !strstr(desc, want[i].dq)))
            return snprintf(log, len, "rows of %d floats, deterministic=%d: expected %s%s%s, got %s", want[i].row,
                            want[i].deterministic, want[i].family, want[i].dq ? " " : "", want[i].dq ? want[i].dq : "",
                            desc), 1;
    }
    return 0;
}

/* Prefix sums the library must refuse before launching anything: each call returns
 * FT_ERR_INVALID_ARGUMENT naming the sum, and O stays as poisoned as it was. */
static int bad_prefix_sums(char *log, size_t len)
{
    static const struct { int q[4], k[4]; const char *message; } bad[] = {
        { { 0, 50, 40, 90 }, { 0, 30, 60, 90 }, "cu_seqlens_q[2]=40 is less than cu_seqlens_q[1]=50" },
        { { 0, 30, 60, 90 }, { 0, 70, 80, 90 }, "sequence 0 is 70 rows long (cu_seqlens_k[1] - cu_seqlens_k[0]), more "
                                                "than seqlen_k=64" },
        { { 1, 30, 60, 90 }, { 0, 30, 60, 90 }, "cu_seqlens_q[0]=1 must be 0" },
        { { 0, 30, 60, 80 }, { 0, 30, 60, 90 }, "cu_seqlens_q[batch=3]=80 must equal total_q=90" },
    };
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = 3, .heads = 2, .seqlen_q = 64,
                            .seqlen_k = 64, .head_dim = 64, .dtype = FT_BF16, .total_q = 90, .total_k = 90 };
    const int64_t st[3] = { 0, 64, 128 };
    memcpy(d.q_stride, st, sizeof st), memcpy(d.k_stride, st, sizeof st);
    memcpy(d.v_stride, st, sizeof st), memcpy(d.o_stride, st, sizeof st);
    const size_t n = 90 * 2 * 64;
    uint64_t seed = 7;
    CUdeviceptr q = upload_random(FT_BF16, n, &seed), k = upload_random(FT_BF16, n, &seed);
    CUdeviceptr v = upload_random(FT_BF16, n, &seed), o = alloc_poisoned(n * 2), lse = alloc_poisoned(2 * 90 * 4);
    CUdeviceptr sums[2];
    cu->MemAlloc(&sums[0], sizeof bad[0].q);
    cu->MemAlloc(&sums[1], sizeof bad[0].k);
    d.cu_seqlens_q = (const int32_t *)(uintptr_t)sums[0];
    d.cu_seqlens_k = (const int32_t *)(uintptr_t)sums[1];
    int failed = 0;
    log[0] = '\0';
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cu->MemcpyHtoD(sums[0], bad[i].q, sizeof bad[i].q);
        cu->MemcpyHtoD(sums[1], bad[i].k, sizeof bad[i].k);
        const ft_status s = ft_attention_forward(shared_ft, &d, P(q), P(k), P(v), P(o), P(lse), NULL);
        unsigned char first[16];
        cu->MemcpyDtoH(first, o, sizeof first);
        const int poisoned = first[0] == 0xff && first[15] == 0xff;
        if (s != FT_ERR_INVALID_ARGUMENT || !strstr(ft_last_error(shared_ft), bad[i].message) || !poisoned) {
            const size_t used = strlen(log);
            snprintf(log + used, len - used, " case %zu: %s '%s'%s", i, ft_status_str(s), ft_last_error(shared_ft),
                     poisoned ? "" : ", O was written");
            failed = 1;
        }
    }
    CUdeviceptr all[] = { q, k, v, o, lse, sums[0], sums[1] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cu->MemFree(all[i]);
    if (!failed)
        snprintf(log, len, " %zu kinds refused before any launch", sizeof bad / sizeof bad[0]);
    return failed;
}

/* Capture through real calls: three forwards of one problem in a context capturing to a file
 * (ft_capture_to), one line at ft_close with calls=3. */
static int capture_round_trip(char *log, size_t len)
{
    char folder[] = "/tmp/ft_runtime_gpu_XXXXXX", path[64], err[512];
    if (!mkdtemp(folder))
        return snprintf(log, len, "mkdtemp failed"), 1;
    snprintf(path, sizeof path, "%s/capture.txt", folder);
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = 2, .heads = 2, .seqlen_q = 100,
                            .seqlen_k = 100, .head_dim = 64, .dtype = FT_BF16, .causal = 1 };
    const int64_t st[3] = { 100 * 2 * 64, 64, 128 };
    memcpy(d.q_stride, st, sizeof st), memcpy(d.k_stride, st, sizeof st);
    memcpy(d.v_stride, st, sizeof st), memcpy(d.o_stride, st, sizeof st);
    const size_t n = 2 * 100 * 2 * 64;
    uint64_t seed = 11;
    CUdeviceptr q = upload_random(FT_BF16, n, &seed), k = upload_random(FT_BF16, n, &seed);
    CUdeviceptr v = upload_random(FT_BF16, n, &seed), o = alloc_poisoned(n * 2), lse = alloc_poisoned(2 * 2 * 100 * 4);
    ft_context *ft;
    int failed = ft_open(NULL, &ft) != FT_OK || ft_capture_to(ft, path) != FT_OK;
    for (int i = 0; i < 3 && !failed; i++)
        if (ft_attention_forward(ft, &d, P(q), P(k), P(v), P(o), P(lse), NULL) != FT_OK) {
            snprintf(log, len, "forward: %s", ft_last_error(ft));
            failed = 1;
        }
    ft_close(ft);
    CUdeviceptr all[] = { q, k, v, o, lse };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cu->MemFree(all[i]);
    db_capture_row *rows = NULL;
    int count = 0;
    if (!failed && db_capture_read(path, &rows, &count, err, sizeof err) != 0) {
        snprintf(log, len, "%s", err);
        failed = 1;
    } else if (!failed && (count != 1 || rows[0].calls != 3 || rows[0].workload.op != DB_OP_FWD ||
                           rows[0].workload.seqlen_q != 100 || !rows[0].workload.causal)) {
        snprintf(log, len, "%d rows, the first with %llu calls", count, count ? rows[0].calls : 0);
        failed = 1;
    } else if (!failed)
        snprintf(log, len, " 3 calls in one line, served=%s", db_served_name(rows[0].served));
    free(rows);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", folder);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", folder);
    return failed;
}

int main(int argc, char **argv)
{
    (void)argv;
    /* The CUBINs come from NVRTC or the test's database, never from an earlier run's cache on disk
     * (test_cubin_cache covers that cache; "CUBIN reused from database" checks the database's). */
    setenv("FLASHTUNE_CACHE_DIR", "", 1);
    char why[512];
    if (cu_driver_open(&cu, why, sizeof why) != 0) {
        printf("no GPU: %s\n", why);
        return SKIP;
    }
    CUdevice dev;
    if (cu->DeviceGet(&dev, 0) != CUDA_SUCCESS || cu->DevicePrimaryCtxRetain(&primary, dev) != CUDA_SUCCESS) {
        printf("no GPU: device 0 has no usable context\n");
        return SKIP;
    }
    if (ft_open(NULL, &shared_ft) != FT_OK) {
        printf("ft_open: %s\n", ft_last_error(NULL));
        return 1;
    }
    int threads = argc > 1 ? atoi(argv[1]) : 8, failed = 0;
    pthread_t tid[64];
    if (threads < 1 || threads > 64)
        threads = 8;
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, case_worker, (void *)(intptr_t)i);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < CASE_COUNT; i++) {
        printf("%-4s %-26s%s\n", results[i] ? "FAIL" : "ok", cases[i].name, logs[i]);
        failed += results[i];
    }
    cu->CtxSetCurrent(primary);
    same_arg a[2] = { { 0, "" }, { 0, "" } };
    pthread_create(&tid[0], NULL, same_problem_worker, &a[0]);
    pthread_create(&tid[1], NULL, same_problem_worker, &a[1]);
    pthread_join(tid[0], NULL);
    pthread_join(tid[1], NULL);
    for (int i = 0; i < 2; i++)
        printf("%-4s %-26s%s\n", a[i].failed ? "FAIL" : "ok", i ? "two threads, thread 2" : "two threads, thread 1",
               a[i].log);
    failed += a[0].failed + a[1].failed;
    char log[1024];
    int f = split_batches(log, sizeof log);
    printf("%-4s %-26s%s\n", f ? "FAIL" : "ok", "batch*heads 66000 (split)", log);
    failed += f;
    f = bad_prefix_sums(log, sizeof log);
    printf("%-4s %-26s%s\n", f ? "FAIL" : "ok", "bad prefix sums refused", log);
    failed += f;
    f = database_reuse(log, sizeof log);
    printf("%-4s %-26s %s\n", f ? "FAIL" : "ok", "CUBIN reused from database", log);
    failed += f;
    f = allow_tf32_rounds(log, sizeof log);
    printf("%-4s %-26s%s\n", f ? "FAIL" : "ok", "f32 allow_tf32", log);
    failed += f;
    f = f32_backward_rows(log, sizeof log);
    printf("%-4s %-26s%s\n", f ? "FAIL" : "ok", "f32 backward: rows decide", log);
    failed += f;
    f = capture_round_trip(log, sizeof log);
    printf("%-4s %-26s%s\n", f ? "FAIL" : "ok", "capture at ft_close", log);
    failed += f;
    ft_close(shared_ft);
    cu->DevicePrimaryCtxRelease(dev);
    printf("%s: %d failed\n", failed ? "FAILED" : "PASSED", failed);
    return failed ? 1 : 0;
}
