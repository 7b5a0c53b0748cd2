/* GPU test support: context, parallel compilation, buffers in any dtype/layout, launches. */
#include "gpu_harness.h"
#include "ft_mask.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU_CHECK(s, call, why, len)                                                   \
    do {                                                                              \
        CUresult rc_ = (call);                                                        \
        if (rc_ != CUDA_SUCCESS) {                                                    \
            char buf_[256];                                                           \
            snprintf(why, len, "%s failed: %s", #call, cu_result_str(rc_, buf_, sizeof buf_)); \
            return -1;                                                                \
        }                                                                             \
    } while (0)

int gpu_open(gpu_session *s, char *why, size_t len)
{
    memset(s, 0, sizeof *s);
    if (cu_driver_open(&s->cu, why, len) != 0)
        return -1;
    const cu_driver *cu = s->cu;
    CU_CHECK(s, cu->DeviceGet(&s->device, 0), why, len);
    CU_CHECK(s, cu->DevicePrimaryCtxRetain(&s->context, s->device), why, len);
    CU_CHECK(s, cu->CtxSetCurrent(s->context), why, len);
    int major = 0, minor = 0;
    cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s->device);
    cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s->device);
    cu->DeviceGetAttribute(&s->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s->device);
    cu->DeviceGetAttribute(&s->smem_limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, s->device);
    cu->DeviceGetName(s->name, sizeof s->name, s->device);
    snprintf(s->arch, sizeof s->arch, "sm_%d%d", major, minor);
    if (!gen_arch_supported(s->arch)) {
        snprintf(why, len, "device %s is %s, which the generator does not target", s->name, s->arch);
        return -1;
    }
    return 0;
}

/* Every kernel built in this process, so identical sources compile once. */
typedef struct built {
    char hash[GEN_HASH_LEN];
    gpu_kernel *kernel;
} built;
static built *cache;
static int cache_count;

void gpu_release_all(gpu_session *s)
{
    for (int i = 0; i < cache_count; i++) {
        if (cache[i].kernel->module)
            s->cu->ModuleUnload(cache[i].kernel->module);
        gen_binary_free(&cache[i].kernel->binary);
        free(cache[i].kernel);
    }
    free(cache);
    cache = NULL;
    cache_count = 0;
}

void gpu_close(gpu_session *s)
{
    if (!s->cu)
        return;
    gpu_release_all(s);
    s->cu->DevicePrimaryCtxRelease(s->device);
    memset(s, 0, sizeof *s);
}

typedef struct compile_job {
    gpu_kernel **todo;
    int count;
    int next;
    const char *arch;
    pthread_mutex_t lock;
} compile_job;

static void *compile_worker(void *arg)
{
    compile_job *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next++;
        pthread_mutex_unlock(&job->lock);
        if (i >= job->count)
            return NULL;
        gpu_kernel *k = job->todo[i];
        char *src = gen_expand(&k->config);
        if (!src) {
            snprintf(k->error, sizeof k->error, "gen_expand failed for family %s", k->config.family->name);
            continue;
        }
        gen_compile(src, gen_target_arch(k->config.family, job->arch), &k->binary, k->error, sizeof k->error);
        free(src);
    }
}

int gpu_build(gpu_session *s, const gen_config *configs, gpu_kernel **kernels, int count, int threads)
{
    gpu_kernel **todo = calloc((size_t)count, sizeof *todo);
    int todo_count = 0;
    for (int i = 0; i < count; i++) {
        char why[512];
        char *src = gen_expand(&configs[i]);
        char hash[GEN_HASH_LEN] = "";
        if (src)
            gen_source_hash(src, hash);
        free(src);
        kernels[i] = NULL;
        for (int j = 0; j < cache_count && !kernels[i]; j++)
            if (!strcmp(cache[j].hash, hash))
                kernels[i] = cache[j].kernel;
        if (kernels[i])
            continue;
        gpu_kernel *k = calloc(1, sizeof *k);
        k->config = configs[i];
        if (gen_validate(&configs[i], s->smem_limit, why, sizeof why) != 0 ||
            gen_check_arch(configs[i].family, s->arch, why, sizeof why) != 0)
            snprintf(k->error, sizeof k->error, "invalid: %s", why);
        else
            todo[todo_count++] = k;
        cache = realloc(cache, (size_t)(cache_count + 1) * sizeof *cache);
        memcpy(cache[cache_count].hash, hash, sizeof hash);
        cache[cache_count++].kernel = k;
        kernels[i] = k;
    }
    compile_job job = { todo, todo_count, 0, s->arch, PTHREAD_MUTEX_INITIALIZER };
    if (threads < 1)
        threads = 1;
    pthread_t tid[64];
    int started = 0;
    for (; started < threads && started < 64 && started < todo_count; started++)
        pthread_create(&tid[started], NULL, compile_worker, &job);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < todo_count; i++) {
        gpu_kernel *k = todo[i];
        if (k->error[0])
            continue;
        char buf[256];
        CUresult rc = s->cu->ModuleLoadData(&k->module, k->binary.cubin);
        if (rc != CUDA_SUCCESS)
            snprintf(k->error, sizeof k->error, "cuModuleLoadData: %s", cu_result_str(rc, buf, sizeof buf));
    }
    free(todo);
    int failed = 0;
    for (int i = 0; i < count; i++)
        failed += kernels[i]->error[0] != 0;
    return failed;
}

size_t gpu_dtype_bytes(int dtype)
{
    return dtype == 0 ? 4 : dtype == 3 ? 8 : 2;
}

size_t gpu_acc_bytes(int dtype)
{
    return dtype == 3 ? 8 : 4;
}

/* Strides for one tensor of head dim `dim` in the problem's layout. */
static void layout_strides(const gpu_problem *p, int seqlen, int dim, long long st[3])
{
    switch (p->layout) {
    case 1: /* [B, N, H, D] */
        st[2] = (long long)p->heads * dim;
        st[1] = dim;
        st[0] = (long long)seqlen * p->heads * dim;
        break;
    case 2: /* rows padded by 8 elements: the seq stride is not the head dim */
        st[2] = dim + 8;
        st[1] = (long long)seqlen * (dim + 8);
        st[0] = st[1] * p->heads;
        break;
    default:
        st[2] = dim;
        st[1] = (long long)seqlen * dim;
        st[0] = st[1] * p->heads;
    }
}

static size_t extent(const long long st[3], int b, int h, int n, int d)
{
    return (size_t)((b - 1) * st[0] + (h - 1) * st[1] + (n - 1) * st[2] + d);
}

int gpu_problem_alloc(gpu_session *s, gpu_problem *p, char *why, size_t len)
{
    const cu_driver *cu = s->cu;
    layout_strides(p, p->seqlen_q, p->head_dim, p->q_stride);
    layout_strides(p, p->seqlen_k, p->head_dim, p->k_stride);
    layout_strides(p, p->seqlen_k, p->head_dim_v, p->v_stride);
    layout_strides(p, p->seqlen_q, p->head_dim_v, p->o_stride);
    p->q_elems = extent(p->q_stride, p->batch, p->heads, p->seqlen_q, p->head_dim);
    p->k_elems = extent(p->k_stride, p->batch, p->heads, p->seqlen_k, p->head_dim);
    p->v_elems = extent(p->v_stride, p->batch, p->heads, p->seqlen_k, p->head_dim_v);
    p->o_elems = extent(p->o_stride, p->batch, p->heads, p->seqlen_q, p->head_dim_v);
    size_t e = gpu_dtype_bytes(p->dtype), a = gpu_acc_bytes(p->dtype);
    size_t rows = (size_t)p->batch * p->heads * p->seqlen_q;
    struct { CUdeviceptr *ptr; size_t bytes; } bufs[] = {
        { &p->q, p->q_elems * e },  { &p->k, p->k_elems * e },   { &p->v, p->v_elems * e },
        { &p->o, p->o_elems * e },  { &p->dout, p->o_elems * e }, { &p->dq, p->q_elems * e },
        { &p->dk, p->k_elems * e }, { &p->dv, p->v_elems * e },  { &p->lse, rows * a },
        { &p->delta, rows * a },    { &p->dq_accum, rows * p->head_dim * a },
    };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        CU_CHECK(s, cu->MemAlloc(bufs[i].ptr, bufs[i].bytes), why, len);
    return 0;
}

void gpu_problem_free(gpu_session *s, gpu_problem *p)
{
    CUdeviceptr *all[] = { &p->q, &p->k, &p->v, &p->o, &p->dout, &p->dq, &p->dk, &p->dv, &p->lse, &p->delta, &p->dq_accum };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i])
            s->cu->MemFree(*all[i]);
}

/* IEEE half and bfloat16 from float, round to nearest even, as cvt.rn does. */
static uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    float a = fabsf(f);
    if (isnan(f))
        return 0x7e00;
    if (a >= 65520.0f)
        return (uint16_t)(sign | 0x7c00u);
    if (a < 6.103515625e-05f) {   /* subnormal: multiples of 2^-24 */
        float q = nearbyintf(a * 16777216.0f);   /* default rounding mode: to nearest even */
        return (uint16_t)(sign | (uint32_t)q);
    }
    uint32_t m = u & 0x7fffffffu;
    uint32_t exp = (m >> 23) - 127 + 15;
    uint32_t mant = m & 0x7fffffu;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (h & 0x8000u) ? 1 : 0;
    int exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    float v;
    if (exp == 0)
        v = ldexpf((float)mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexpf((float)(mant | 0x400u), exp - 25);
    return sign ? -v : v;
}

double gpu_round_to_dtype(int dtype, double x)
{
    switch (dtype) {
    case 0: return (float)x;
    case 1: return half_to_float(float_to_half((float)x));
    case 2: return bf16_to_float(float_to_bf16((float)x));
    default: return x;
    }
}

int gpu_upload(gpu_session *s, const gpu_problem *p, CUdeviceptr dst, const double *host, size_t elems,
               double *rounded)
{
    size_t e = gpu_dtype_bytes(p->dtype);
    unsigned char *buf = malloc(elems * e);
    if (!buf)
        return -1;
    for (size_t i = 0; i < elems; i++) {
        double x = host[i];
        switch (p->dtype) {
        case 0: { float f = (float)x; memcpy(buf + i * 4, &f, 4); x = f; break; }
        case 1: { uint16_t h = float_to_half((float)x); memcpy(buf + i * 2, &h, 2); x = half_to_float(h); break; }
        case 2: { uint16_t h = float_to_bf16((float)x); memcpy(buf + i * 2, &h, 2); x = bf16_to_float(h); break; }
        default: memcpy(buf + i * 8, &x, 8);
        }
        if (rounded)
            rounded[i] = x;
    }
    CUresult rc = s->cu->MemcpyHtoD(dst, buf, elems * e);
    free(buf);
    return rc == CUDA_SUCCESS ? 0 : -1;
}

int gpu_download(gpu_session *s, const gpu_problem *p, CUdeviceptr src, double *host, size_t elems, int acc)
{
    size_t e = acc ? gpu_acc_bytes(p->dtype) : gpu_dtype_bytes(p->dtype);
    int kind = acc ? (p->dtype == 3 ? 3 : 0) : p->dtype;
    unsigned char *buf = malloc(elems * e);
    if (!buf)
        return -1;
    CUresult rc = s->cu->MemcpyDtoH(buf, src, elems * e);
    for (size_t i = 0; rc == CUDA_SUCCESS && i < elems; i++) {
        switch (kind) {
        case 0: { float f; memcpy(&f, buf + i * 4, 4); host[i] = f; break; }
        case 1: { uint16_t h; memcpy(&h, buf + i * 2, 2); host[i] = half_to_float(h); break; }
        case 2: { uint16_t h; memcpy(&h, buf + i * 2, 2); host[i] = bf16_to_float(h); break; }
        default: memcpy(&host[i], buf + i * 8, 8);
        }
    }
    free(buf);
    return rc == CUDA_SUCCESS ? 0 : -1;
}

int gpu_poison(gpu_session *s, CUdeviceptr dst, size_t bytes)
{
    return s->cu->MemsetD8(dst, 0xff, bytes) == CUDA_SUCCESS ? 0 : -1;
}

static const gen_entry *find_entry(const gen_family *f, const char *name)
{
    for (int i = 0; i < f->entry_count; i++)
        if (!strcmp(f->entries[i].name, name))
            return &f->entries[i];
    return NULL;
}

/* Launches one entry by name with the argument block args. */
static CUresult launch(gpu_session *s, const gpu_kernel *k, const gpu_problem *p, const char *entry,
                       void *args, CUstream stream)
{
    const gen_entry *e = find_entry(k->config.family, entry);
    if (!e)
        return CUDA_ERROR_NOT_FOUND;
    CUfunction fn;
    CUresult rc = s->cu->ModuleGetFunction(&fn, k->module, entry);
    if (rc != CUDA_SUCCESS)
        return rc;
    unsigned grid[3], block[3];
    size_t smem = 0;
    if (gen_launch_dims(&k->config, e, p->batch, p->heads, p->seqlen_q, p->seqlen_k, grid, block, &smem) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (smem > 48 * 1024) {
        rc = s->cu->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
        if (rc != CUDA_SUCCESS)
            return rc;
    }
    void *params[] = { args };
    return s->cu->LaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], (unsigned)smem,
                               stream, params, NULL);
}

static double resolved_scale(const gpu_problem *p)
{
    return p->softmax_scale != 0 ? p->softmax_scale : 1.0 / sqrt((double)p->head_dim);
}

static void fill_fwd_args(const gpu_problem *p, ft_fwd_args *a)
{
    memset(a, 0, sizeof *a);
    a->q = (const void *)(uintptr_t)p->q;
    a->k = (const void *)(uintptr_t)p->k;
    a->v = (const void *)(uintptr_t)p->v;
    a->o = (void *)(uintptr_t)p->o;
    a->lse = (void *)(uintptr_t)p->lse;
    memcpy(a->q_stride, p->q_stride, sizeof a->q_stride);
    memcpy(a->k_stride, p->k_stride, sizeof a->k_stride);
    memcpy(a->v_stride, p->v_stride, sizeof a->v_stride);
    memcpy(a->o_stride, p->o_stride, sizeof a->o_stride);
    a->batch = p->batch;
    a->heads = p->heads;
    a->seqlen_q = p->seqlen_q;
    a->seqlen_k = p->seqlen_k;
    a->softmax_scale = resolved_scale(p);
    ft_mask_band(p->causal, 0, -1, -1, p->seqlen_q, p->seqlen_k, &a->mask_lo, &a->mask_hi);
}

static void fill_bwd_args(const gpu_problem *p, ft_bwd_args *a)
{
    memset(a, 0, sizeof *a);
    a->q = (const void *)(uintptr_t)p->q;
    a->k = (const void *)(uintptr_t)p->k;
    a->v = (const void *)(uintptr_t)p->v;
    a->o = (const void *)(uintptr_t)p->o;
    a->dout = (const void *)(uintptr_t)p->dout;
    a->lse = (const void *)(uintptr_t)p->lse;
    a->dq = (void *)(uintptr_t)p->dq;
    a->dk = (void *)(uintptr_t)p->dk;
    a->dv = (void *)(uintptr_t)p->dv;
    a->delta = (void *)(uintptr_t)p->delta;
    a->dq_accum = (void *)(uintptr_t)p->dq_accum;
    memcpy(a->q_stride, p->q_stride, sizeof a->q_stride);
    memcpy(a->k_stride, p->k_stride, sizeof a->k_stride);
    memcpy(a->v_stride, p->v_stride, sizeof a->v_stride);
    memcpy(a->o_stride, p->o_stride, sizeof a->o_stride);
    memcpy(a->do_stride, p->o_stride, sizeof a->do_stride);
    memcpy(a->dq_stride, p->q_stride, sizeof a->dq_stride);
    memcpy(a->dk_stride, p->k_stride, sizeof a->dk_stride);
    memcpy(a->dv_stride, p->v_stride, sizeof a->dv_stride);
    a->batch = p->batch;
    a->heads = p->heads;
    a->seqlen_q = p->seqlen_q;
    a->seqlen_k = p->seqlen_k;
    a->softmax_scale = resolved_scale(p);
    ft_mask_band(p->causal, 0, -1, -1, p->seqlen_q, p->seqlen_k, &a->mask_lo, &a->mask_hi);
}

static int is_ref(const gpu_kernel *k)
{
    return !strcmp(k->config.family->name, "ref");
}

int gpu_forward_async(gpu_session *s, const gpu_kernel *k, const gpu_problem *p, CUstream stream)
{
    ft_fwd_args a;
    fill_fwd_args(p, &a);
    return launch(s, k, p, is_ref(k) ? "ft_ref_fwd" : "ft_fwd", &a, stream);
}

int gpu_backward_async(gpu_session *s, const gpu_kernel *k, const gpu_problem *p, CUstream stream)
{
    ft_bwd_args a;
    fill_bwd_args(p, &a);
    CUresult rc;
    if (is_ref(k)) {
        if ((rc = launch(s, k, p, "ft_ref_bwd_preprocess", &a, stream)) != CUDA_SUCCESS)
            return rc;
        if ((rc = launch(s, k, p, "ft_ref_bwd_dq", &a, stream)) != CUDA_SUCCESS)
            return rc;
        return launch(s, k, p, "ft_ref_bwd_dkdv", &a, stream);
    }
    if ((rc = launch(s, k, p, "ft_bwd_preprocess", &a, stream)) != CUDA_SUCCESS)
        return rc;
    if (k->config.p[GEN_DQ_MODE] == 0) {
        size_t bytes = (size_t)p->batch * p->heads * p->seqlen_q * p->head_dim * gpu_acc_bytes(p->dtype);
        if ((rc = s->cu->MemsetD8Async(p->dq_accum, 0, bytes, stream)) != CUDA_SUCCESS)
            return rc;
        if ((rc = launch(s, k, p, "ft_bwd_dkdv", &a, stream)) != CUDA_SUCCESS)
            return rc;
        return launch(s, k, p, "ft_bwd_dq_convert", &a, stream);
    }
    if ((rc = launch(s, k, p, "ft_bwd_dkdv", &a, stream)) != CUDA_SUCCESS)
        return rc;
    return launch(s, k, p, "ft_bwd_dq", &a, stream);
}

static int finish(gpu_session *s, CUresult rc, CUstream stream, char *why, size_t len)
{
    char buf[256];
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "launch failed: %s", cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    rc = s->cu->StreamSynchronize(stream);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "kernel failed: %s", cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    return 0;
}

int gpu_forward(gpu_session *s, const gpu_kernel *k, const gpu_problem *p, CUstream stream, char *why, size_t len)
{
    return finish(s, (CUresult)gpu_forward_async(s, k, p, stream), stream, why, len);
}

int gpu_backward(gpu_session *s, const gpu_kernel *k, const gpu_problem *p, CUstream stream, char *why, size_t len)
{
    return finish(s, (CUresult)gpu_backward_async(s, k, p, stream), stream, why, len);
}
