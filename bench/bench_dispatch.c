/* Dispatch overhead of libflashtune: host time per ft_attention_forward call on a tiny problem
 * against a bare launch of the same function with the same argument block through the launch
 * module's lowest-level call, ln_launch_one (one driver launch; target: at most 2 us added per
 * call on the H100). Launches are enqueued in bursts short enough never to fill
 * the launch queue, so the time measured is the host's, not the kernel's.
 *
 *   bench_dispatch [bursts]     (default 200 bursts of 100 calls)
 *
 * Exits 77 without a GPU. Links the runtime's internals to reach the plan's CUfunction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_internal.h"

#define BURST 100

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const int bursts = argc > 1 ? atoi(argv[1]) : 200;
    const cu_driver *cu;
    char why[512];
    if (cu_driver_open(&cu, why, sizeof why) != 0) {
        printf("no GPU: %s\n", why);
        return 77;
    }
    ft_context *ft;
    if (ft_open(NULL, &ft) != FT_OK) {
        printf("%s\n", ft_last_error(NULL));
        return 1;
    }
    const int n = 64, dim = 64;   /* one tile: the kernel itself is a few microseconds */
    ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = 1, .heads = 1, .seqlen_q = n, .seqlen_k = n, .head_dim = dim,
                            .head_dim_v = dim, .dtype = FT_BF16 };
    const int64_t st[3] = { (int64_t)n * dim, (int64_t)n * dim, dim };
    memcpy(d.q_stride, st, sizeof st), memcpy(d.k_stride, st, sizeof st);
    memcpy(d.v_stride, st, sizeof st), memcpy(d.o_stride, st, sizeof st);
    CUdeviceptr buf;
    CUstream stream;
    CUdevice dev;
    CUcontext cuctx;
    if (cu->DeviceGet(&dev, 0) || cu->DevicePrimaryCtxRetain(&cuctx, dev) || cu->CtxSetCurrent(cuctx) ||
        cu->MemAlloc(&buf, 5 * (size_t)n * dim * 4) || cu->MemsetD8(buf, 0, 5 * (size_t)n * dim * 4) ||
        cu->StreamCreate(&stream, CU_STREAM_NON_BLOCKING)) {
        printf("CUDA set-up failed\n");
        return 1;
    }
    const size_t t = (size_t)n * dim * 2;
    void *q = (void *)(uintptr_t)buf, *k = (char *)q + t, *v = (char *)k + t, *o = (char *)v + t, *lse = (char *)o + t;
    ft_status s = ft_attention_forward(ft, &d, q, k, v, o, lse, stream);   /* compiles, builds the plan */
    if (s != FT_OK) {
        printf("%s\n", ft_last_error(ft));
        return 1;
    }
    cu->StreamSynchronize(stream);
    char choice[1024];
    ft_describe_choice(ft, &d, 0, choice, sizeof choice);

    /* The same launch, bare: the plan's function and the argument block the library builds. */
    db_workload w;
    rt_check_desc("bench", &d, 0, &w, why, sizeof why);
    const rt_plan *plan = rt_plan_find(ft, cuctx, &w, 0);
    if (!plan) {
        printf("no plan published for the problem\n");
        return 1;
    }
    const ln_step *step = &plan->launches.steps[0];
    ln_problem lp = { .dtype = d.dtype, .batch = 1, .heads = 1, .seqlen_q = n, .seqlen_k = n, .head_dim = dim,
                      .head_dim_v = dim, .softmax_scale = ln_softmax_scale(0, dim), .q = (CUdeviceptr)(uintptr_t)q,
                      .k = (CUdeviceptr)(uintptr_t)k, .v = (CUdeviceptr)(uintptr_t)v, .o = (CUdeviceptr)(uintptr_t)o,
                      .lse = (CUdeviceptr)(uintptr_t)lse };
    ln_problem_mask(&lp, 0, 0, -1, -1);
    for (int i = 0; i < 3; i++)
        lp.q_stride[i] = lp.k_stride[i] = lp.v_stride[i] = lp.o_stride[i] = st[i];
    ft_fwd_args a;
    ln_fwd_args(&lp, 1, 0, 0, 1, &a);
    void *params[] = { &a };

    double *bare = malloc(sizeof(double) * (size_t)bursts), *lib = malloc(sizeof(double) * (size_t)bursts);
    for (int r = 0; r < bursts; r++) {
        double t0 = now_us();
        for (int i = 0; i < BURST; i++)
            ln_launch_one(cu, step->fn, step->grid_x, 1, step->block_x, step->smem, stream, params);
        double t1 = now_us();
        cu->StreamSynchronize(stream);
        double t2 = now_us();
        for (int i = 0; i < BURST; i++)
            ft_attention_forward(ft, &d, q, k, v, o, lse, stream);
        double t3 = now_us();
        cu->StreamSynchronize(stream);
        bare[r] = (t1 - t0) / BURST;
        lib[r] = (t3 - t2) / BURST;
    }
    qsort(bare, (size_t)bursts, sizeof *bare, cmp_double);
    qsort(lib, (size_t)bursts, sizeof *lib, cmp_double);
    const double added = lib[bursts / 2] - bare[bursts / 2];
    printf("kernel: %s\n", choice);
    printf("per call, median of %d bursts of %d: bare launch %.3f us, ft_attention_forward %.3f us, "
           "added %.3f us (target <= 2 us): %s\n", bursts, BURST, bare[bursts / 2], lib[bursts / 2], added,
           added <= 2.0 ? "ok" : "OVER");
    free(bare);
    free(lib);
    cu->MemFree(buf);
    cu->StreamDestroy(stream);
    ft_close(ft);
    cu->DevicePrimaryCtxRelease(dev);
    return 0;
}
