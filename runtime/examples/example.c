/* libflashtune example: forward and backward attention on random data through the library,
 * checked against flashtune's GPU reference kernels, with the chosen kernels and their times.
 *
 *   ft_example [database.db]        (no argument: no database, shipped winners and defaults)
 *
 * Exits 0 when every check passes, 1 on a failure, 77 when there is no GPU. The CUDA driver
 * is opened with dlopen here too, so the example needs no CUDA headers or libraries. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flashtune.h>

/* The few driver calls the example makes (types as in cuda.h). */
typedef unsigned long long devptr;
static struct {
    int (*Init)(unsigned);
    int (*DeviceGet)(int *, int);
    int (*PrimaryCtxRetain)(void **, int);
    int (*CtxSetCurrent)(void *);
    int (*MemAlloc)(devptr *, size_t);
    int (*MemFree)(devptr);
    int (*MemcpyHtoD)(devptr, const void *, size_t);
    int (*MemcpyDtoH)(void *, devptr, size_t);
    int (*CtxSynchronize)(void);
    int (*EventCreate)(void **, unsigned);
    int (*EventRecord)(void *, void *);
    int (*EventSynchronize)(void *);
    int (*EventElapsedTime)(float *, void *, void *);
} cu;

static int open_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        printf("no GPU: cannot open libcuda.so.1 (%s)\n", dlerror());
        return -1;
    }
    const struct { void **fn; const char *name; } syms[] = {
        { (void **)&cu.Init, "cuInit" },
        { (void **)&cu.DeviceGet, "cuDeviceGet" },
        { (void **)&cu.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain" },
        { (void **)&cu.CtxSetCurrent, "cuCtxSetCurrent" },
        { (void **)&cu.MemAlloc, "cuMemAlloc_v2" },
        { (void **)&cu.MemFree, "cuMemFree_v2" },
        { (void **)&cu.MemcpyHtoD, "cuMemcpyHtoD_v2" },
        { (void **)&cu.MemcpyDtoH, "cuMemcpyDtoH_v2" },
        { (void **)&cu.CtxSynchronize, "cuCtxSynchronize" },
        { (void **)&cu.EventCreate, "cuEventCreate" },
        { (void **)&cu.EventRecord, "cuEventRecord" },
        { (void **)&cu.EventSynchronize, "cuEventSynchronize" },
        { (void **)&cu.EventElapsedTime, "cuEventElapsedTime" },
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].fn = dlsym(lib, syms[i].name))) {
            printf("no GPU: libcuda.so.1 lacks %s\n", syms[i].name);
            return -1;
        }
    int dev;
    void *ctx;
    if (cu.Init(0) || cu.DeviceGet(&dev, 0) || cu.PrimaryCtxRetain(&ctx, dev) || cu.CtxSetCurrent(ctx)) {
        printf("no GPU: the CUDA driver found no usable device\n");
        return -1;
    }
    return 0;
}

/* bf16 <-> float, round to nearest even. */
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static size_t esize(ft_dtype t)
{
    return t == FT_F32 ? 4 : t == FT_F64 ? 8 : 2;
}

static double get(const void *buf, ft_dtype t, size_t i)
{
    switch (t) {
    case FT_F32: return ((const float *)buf)[i];
    case FT_F64: return ((const double *)buf)[i];
    default: return from_bf16(((const uint16_t *)buf)[i]);
    }
}

/* A device tensor of n elements of uniform values in [-1, 1). */
static devptr random_tensor(ft_dtype t, size_t n, unsigned *seed)
{
    unsigned char *host = malloc(n * esize(t));
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        float x = (float)((*seed >> 8) / 8388608.0 - 1.0);
        if (t == FT_F32)
            ((float *)host)[i] = x;
        else if (t == FT_F64)
            ((double *)host)[i] = x;
        else
            ((uint16_t *)host)[i] = to_bf16(x);
    }
    devptr d = 0;
    cu.MemAlloc(&d, n * esize(t));
    cu.MemcpyHtoD(d, host, n * esize(t));
    free(host);
    return d;
}

/* ||a - b|| / ||b|| of two device tensors of n elements. */
static double rel_error(devptr a, devptr b, ft_dtype t, size_t n)
{
    void *ha = malloc(n * esize(t)), *hb = malloc(n * esize(t));
    cu.MemcpyDtoH(ha, a, n * esize(t));
    cu.MemcpyDtoH(hb, b, n * esize(t));
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double x = get(ha, t, i), y = get(hb, t, i);
        num += (x - y) * (x - y);
        den += y * y;
    }
    free(ha);
    free(hb);
    return isfinite(num) ? sqrt(num) / (den > 0 ? sqrt(den) : 1) : INFINITY;
}

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        ft_status s_ = (call);                                                                        \
        if (s_ != FT_OK) {                                                                            \
            printf("%s failed: %s\n  %s\n", #call, ft_status_str(s_), ft_last_error(ft));             \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

/* One problem: forward and backward through the library and the reference, compared. */
static int run(ft_context *ft, ft_dtype t, int batch, int heads, int n, int dim, int causal, double limit)
{
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = batch, .heads = heads,
                            .seqlen_q = n, .seqlen_k = n, .head_dim = dim, .head_dim_v = dim, .dtype = t,
                            .causal = causal };
    const int64_t st[3] = { (int64_t)heads * n * dim, (int64_t)n * dim, dim };   /* [B, H, N, D] */
    memcpy(d.q_stride, st, sizeof st);
    memcpy(d.k_stride, st, sizeof st);
    memcpy(d.v_stride, st, sizeof st);
    memcpy(d.o_stride, st, sizeof st);
    const size_t elems = (size_t)batch * heads * n * dim, rows = (size_t)batch * heads * n;
    const size_t acc = t == FT_F64 ? 8 : 4;
    unsigned seed = 12345;
    devptr q = random_tensor(t, elems, &seed), k = random_tensor(t, elems, &seed), v = random_tensor(t, elems, &seed);
    devptr dout = random_tensor(t, elems, &seed);
    devptr o, o_ref, lse, lse_ref, dq, dk, dv, dq_ref, dk_ref, dv_ref;
    devptr *outs[] = { &o, &o_ref, &dq, &dk, &dv, &dq_ref, &dk_ref, &dv_ref };
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        cu.MemAlloc(outs[i], elems * esize(t));
    cu.MemAlloc(&lse, rows * acc);
    cu.MemAlloc(&lse_ref, rows * acc);
#define P(x) ((void *)(uintptr_t)(x))

    char choice[1024];
    CHECK(ft_describe_choice(ft, &d, 0, choice, sizeof choice));
    printf("%s B=%d H=%d N=%d D=%d causal=%d\n  forward:  %s\n", t == FT_F32 ? "f32" : "bf16", batch, heads, n, dim,
           causal, choice);
    CHECK(ft_describe_choice(ft, &d, 1, choice, sizeof choice));
    printf("  backward: %s\n", choice);

    /* The first calls load (or compile) the kernels; the timed ones are the next. */
    CHECK(ft_attention_forward(ft, &d, P(q), P(k), P(v), P(o), P(lse), NULL));
    CHECK(ft_attention_backward(ft, &d, P(q), P(k), P(v), P(o), P(lse), P(dout), P(dq), P(dk), P(dv), NULL));
    void *e0, *e1, *e2;
    cu.EventCreate(&e0, 0);
    cu.EventCreate(&e1, 0);
    cu.EventCreate(&e2, 0);
    cu.EventRecord(e0, NULL);
    CHECK(ft_attention_forward(ft, &d, P(q), P(k), P(v), P(o), P(lse), NULL));
    cu.EventRecord(e1, NULL);
    CHECK(ft_attention_backward(ft, &d, P(q), P(k), P(v), P(o), P(lse), P(dout), P(dq), P(dk), P(dv), NULL));
    cu.EventRecord(e2, NULL);
    cu.EventSynchronize(e2);
    float fwd_ms = 0, bwd_ms = 0;
    cu.EventElapsedTime(&fwd_ms, e0, e1);
    cu.EventElapsedTime(&bwd_ms, e1, e2);

    CHECK(ft_attention_forward_reference(ft, &d, P(q), P(k), P(v), P(o_ref), P(lse_ref), NULL));
    CHECK(ft_attention_backward_reference(ft, &d, P(q), P(k), P(v), P(o_ref), P(lse_ref), P(dout), P(dq_ref),
                                          P(dk_ref), P(dv_ref), NULL));
    cu.CtxSynchronize();
    const struct { const char *name; devptr got, want; } cmp[] = {
        { "O", o, o_ref }, { "dQ", dq, dq_ref }, { "dK", dk, dk_ref }, { "dV", dv, dv_ref },
    };
    int failed = 0;
    printf("  times: forward %.3f ms, backward %.3f ms; error vs the GPU reference:", fwd_ms, bwd_ms);
    for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++) {
        double e = rel_error(cmp[i].got, cmp[i].want, t, elems);
        printf(" %s %.2e", cmp[i].name, e);
        failed |= !(e < limit);
    }
    printf(" -> %s\n", failed ? "FAIL" : "ok");
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        cu.MemFree(*outs[i]);
    cu.MemFree(q), cu.MemFree(k), cu.MemFree(v), cu.MemFree(dout), cu.MemFree(lse), cu.MemFree(lse_ref);
    return failed;
}

int main(int argc, char **argv)
{
    printf("libflashtune %s\n", ft_version());
    ft_context *ft = NULL;
    if (ft_open(argc > 1 ? argv[1] : NULL, &ft) != FT_OK) {
        printf("%s\n", ft_last_error(NULL));
        return 1;
    }
    if (open_driver() != 0) {
        ft_close(ft);
        return 77;
    }
    int failed = run(ft, FT_BF16, 2, 8, 1024, 128, 1, 2e-2);
    failed |= run(ft, FT_F32, 1, 4, 300, 64, 0, 1e-5);
    ft_close(ft);
    return failed;
}
