/* bench_kernels: times hand-picked configurations of the generated kernels on the GPU.
 * CUDA events around each launch, warm-up first, median of the repetitions (min kept too),
 * random inputs; FLOPs by the FlashAttention convention: forward 4*B*H*Nq*Nk*D (halved when
 * causal), backward 2.5x forward. Usage: bench_kernels [reps]. Prints one line per row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_harness.h"

typedef struct bench_row {
    const char *family;
    int dtype, head_dim, batch, heads, seqlen, causal;
    int block_m, block_n, warps, stages, dq_mode;
} bench_row;

static const bench_row rows[] = {
    /* The issue-3 floor: bf16, D=128, N=4096, B*H=64, non-causal. */
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 128, 64, 8, 2, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 128, 32, 4, 2, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 64, 64, 4, 2, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 128, 64, 8, 3, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 1, 128, 64, 8, 2, 0 },
    { "fwd_mma", 2, 64, 4, 32, 4096, 0, 128, 64, 8, 2, 0 },
    { "fwd_mma", 2, 64, 4, 32, 4096, 0, 128, 128, 8, 2, 0 },
    { "fwd_mma", 2, 64, 4, 32, 4096, 0, 64, 64, 4, 3, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 8, 2, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 8, 3, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 64, 8, 2, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 4, 2, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 8, 2, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 8, 2, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 192, 128, 12, 2, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 128, 128, 8, 2, 0 },
    { "fwd_exact", 0, 128, 4, 16, 4096, 1, 0, 0, 0, 0, 0 },
    { "bwd_mma", 2, 128, 4, 16, 4096, 0, 0, 0, 0, 0, 0 },
    { "bwd_mma", 2, 128, 4, 16, 4096, 0, 0, 0, 0, 0, 1 },
    { "bwd_mma", 2, 64, 4, 32, 4096, 0, 0, 0, 0, 0, 0 },
    { "bwd_exact", 0, 128, 4, 16, 4096, 1, 0, 0, 0, 0, 0 },
};
#define ROW_COUNT ((int)(sizeof rows / sizeof rows[0]))

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    gpu_session s;
    char why[1024];
    if (gpu_open(&s, why, sizeof why) != 0) {
        printf("bench_kernels: no GPU: %s\n", why);
        return GPU_SKIP_CODE;
    }
    gen_config configs[ROW_COUNT];
    for (int i = 0; i < ROW_COUNT; i++) {
        const bench_row *r = &rows[i];
        gen_config_init(&configs[i], gen_family_find(r->family));
        int *p = configs[i].p;
        p[GEN_DTYPE] = r->dtype;
        p[GEN_HEAD_DIM] = p[GEN_HEAD_DIM_V] = r->head_dim;
        p[GEN_CAUSAL] = r->causal;
        p[GEN_CAUSAL_SKIP] = 1;
        if (r->block_m) {
            p[GEN_BLOCK_M] = r->block_m;
            p[GEN_BLOCK_N] = r->block_n;
            p[GEN_NUM_WARPS] = r->warps;
            p[GEN_NUM_STAGES] = r->stages;
        }
        if (configs[i].family->params & GEN_BIT(GEN_DQ_MODE))
            p[GEN_DQ_MODE] = r->dq_mode;
        if (configs[i].family->params & GEN_BIT(GEN_EVEN_M)) {
            p[GEN_EVEN_M] = r->seqlen % p[GEN_BLOCK_M] == 0;
            p[GEN_EVEN_N] = r->seqlen % p[GEN_BLOCK_N] == 0;
        }
    }
    gpu_kernel *kernels[ROW_COUNT];
    gpu_build(&s, configs, kernels, ROW_COUNT, 16);
    printf("bench_kernels: %s (%s, %d SMs), median of %d reps after warm-up\n", s.name, s.arch, s.sm_count, reps);
    printf("%-10s %-5s %4s %3s %3s %6s %6s %4s %4s %3s %3s %3s %5s %9s %9s %9s\n", "family", "dtype", "D", "B",
           "H", "N", "causal", "BM", "BN", "W", "S", "DQ", "regs", "med_ms", "min_ms", "TFLOP/s");
    CUevent start, stop;
    s.cu->EventCreate(&start, 0);
    s.cu->EventCreate(&stop, 0);
    for (int i = 0; i < ROW_COUNT; i++) {
        const bench_row *r = &rows[i];
        const gpu_kernel *k = kernels[i];
        const int *p = k->config.p;
        if (k->error[0]) {
            printf("%-10s skipped: %s\n", r->family, k->error);
            continue;
        }
        gpu_problem pr = { .dtype = r->dtype, .batch = r->batch, .heads = r->heads, .seqlen_q = r->seqlen,
                           .seqlen_k = r->seqlen, .head_dim = r->head_dim, .head_dim_v = r->head_dim,
                           .causal = r->causal };
        if (gpu_problem_alloc(&s, &pr, why, sizeof why) != 0) {
            printf("alloc failed: %s\n", why);
            return 1;
        }
        size_t n = pr.q_elems > pr.o_elems ? pr.q_elems : pr.o_elems;
        n = n > pr.k_elems ? n : pr.k_elems;
        double *host = malloc(n * sizeof *host);
        unsigned long long st = 0x1234567ULL + (unsigned long long)i;
        for (size_t j = 0; j < n; j++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            host[j] = ((double)(st >> 11) / 9007199254740992.0) * 2 - 1;
        }
        gpu_upload(&s, &pr, pr.q, host, pr.q_elems, NULL);
        gpu_upload(&s, &pr, pr.k, host, pr.k_elems, NULL);
        gpu_upload(&s, &pr, pr.v, host, pr.v_elems, NULL);
        gpu_upload(&s, &pr, pr.dout, host, pr.o_elems, NULL);
        free(host);
        const int backward = k->config.family->backward;
        /* The backward needs a real O and L: one forward of the matching exact/mma family is not
         * at hand here, so lse is filled by a forward-shaped guess of 0 (timing only). */
        if (backward)
            s.cu->MemsetD8(pr.lse, 0, (size_t)pr.batch * pr.heads * pr.seqlen_q * gpu_acc_bytes(pr.dtype));
        float *ms = malloc((size_t)reps * sizeof *ms);
        int bad = 0;
        for (int w = 0; w < 3 && !bad; w++)
            bad = backward ? gpu_backward(&s, k, &pr, NULL, why, sizeof why) : gpu_forward(&s, k, &pr, NULL, why, sizeof why);
        for (int rep = 0; rep < reps && !bad; rep++) {
            s.cu->EventRecord(start, NULL);
            bad = backward ? gpu_backward_async(&s, k, &pr, NULL) : gpu_forward_async(&s, k, &pr, NULL);
            s.cu->EventRecord(stop, NULL);
            s.cu->EventSynchronize(stop);
            s.cu->EventElapsedTime(&ms[rep], start, stop);
        }
        if (bad) {
            printf("%-10s failed: %s\n", r->family, why);
            free(ms);
            gpu_problem_free(&s, &pr);
            continue;
        }
        qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
        double flops = 4.0 * r->batch * r->heads * (double)r->seqlen * r->seqlen * r->head_dim;
        if (r->causal)
            flops /= 2;
        if (backward)
            flops *= 2.5;
        double med = ms[reps / 2];
        printf("%-10s %-5s %4d %3d %3d %6d %6d %4d %4d %3d %3d %3d %5d %9.4f %9.4f %9.1f\n", r->family,
               gen_dtype_name(r->dtype), r->head_dim, r->batch, r->heads, r->seqlen, r->causal, p[GEN_BLOCK_M],
               p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_NUM_STAGES], p[GEN_DQ_MODE], k->binary.registers, med,
               ms[0], flops / (med * 1e-3) / 1e12);
        free(ms);
        gpu_problem_free(&s, &pr);
    }
    gpu_close(&s);
    return 0;
}
