/* The float reference's product models against the double reference, on the CPU (no GPU): the
 * relative L2 error of O, dQ, dK and dV of the tiled float reference (ref_forward_tiled_f,
 * ref_backward_tiled_f, 64 x 64 tiles) with plain float products, three TF32 products
 * (tf32_splits 3), six and three bfloat16 part products (bf16_products), each against the tiled
 * double reference; B 1, H 1, inputs uniform in [-1, 1) (seeded, the same for every model). What a
 * tensor-core float32 kernel's error should be, before it exists (notes/fp32.md). N 4096 at head
 * dim 128 takes minutes on one core; each model's figures print as they finish.
 * Build: cc -O2 -I tests -I templates/common -o /tmp/ref-accuracy dev/ref-accuracy.c tests/ref_attention.c -lm
 * Usage: /tmp/ref-accuracy N D CAUSAL        e.g. /tmp/ref-accuracy 4096 128 1 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref_attention.h"

static double rel_error(const float *got, const double *want, long long n)
{
    double e = 0, s = 0;
    for (long long i = 0; i < n; i++) {
        e += (got[i] - want[i]) * (got[i] - want[i]);
        s += want[i] * want[i];
    }
    return sqrt(e / s);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s N D CAUSAL (e.g. 4096 128 1)\n", argv[0]);
        return 2;
    }
    const int n = atoi(argv[1]), d = atoi(argv[2]), causal = atoi(argv[3]);
    if (n < 1 || d < 1 || (causal != 0 && causal != 1)) {
        fprintf(stderr, "%s: N=%s and D=%s must be positive, CAUSAL=%s 0 or 1\n", argv[0], argv[1], argv[2], argv[3]);
        return 2;
    }
    ref_problem p;
    ref_problem_init(&p, 1, 1, n, n, d, d, causal, 0);
    const long long e = (long long)n * d;
    double *in_d = malloc(4 * e * sizeof(double)), *out_d = malloc((4 * e + n) * sizeof(double));
    float *in_f = malloc(4 * e * sizeof(float)), *out_f = malloc((4 * e + n) * sizeof(float));
    if (!in_d || !out_d || !in_f || !out_f) {
        fprintf(stderr, "%s: out of memory for N=%d D=%d\n", argv[0], n, d);
        return 1;
    }
    srand(7);
    for (long long i = 0; i < 4 * e; i++)
        in_d[i] = in_f[i] = (float)(2.0 * rand() / RAND_MAX - 1);
    /* q, k, v, dO; o, dq, dk, dv, then lse */
    char err[256];
    if (ref_forward_tiled_d(&p, 64, 64, in_d, in_d + e, in_d + 2 * e, out_d, out_d + 4 * e, NULL, err, sizeof err) ||
        ref_backward_tiled_d(&p, 64, 64, in_d, in_d + e, in_d + 2 * e, out_d, out_d + 4 * e, in_d + 3 * e, out_d + e,
                             out_d + 2 * e, out_d + 3 * e, NULL, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 1;
    }
    static const struct {
        int tf32_splits, bf16_products;
        const char *name;
    } models[] = { { 0, 0, "plain float" }, { 3, 0, "3xTF32" }, { 0, 6, "6 bf16 products" }, { 0, 3, "3 bf16 products" } };
    printf("N %d D %d%s (O, dQ, dK, dV):\n", n, d, causal ? " causal" : "");
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        ref_problem q = p;
        q.tf32_splits = models[m].tf32_splits;
        q.bf16_products = models[m].bf16_products;
        if (ref_forward_tiled_f(&q, 64, 64, in_f, in_f + e, in_f + 2 * e, out_f, out_f + 4 * e, NULL, err, sizeof err) ||
            ref_backward_tiled_f(&q, 64, 64, in_f, in_f + e, in_f + 2 * e, out_f, out_f + 4 * e, in_f + 3 * e,
                                 out_f + e, out_f + 2 * e, out_f + 3 * e, NULL, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", argv[0], err);
            return 1;
        }
        printf("  %-16s %.2e %.2e %.2e %.2e\n", models[m].name, rel_error(out_f, out_d, e),
               rel_error(out_f + e, out_d + e, e), rel_error(out_f + 2 * e, out_d + 2 * e, e),
               rel_error(out_f + 3 * e, out_d + 3 * e, e));
        fflush(stdout);
    }
    free(in_d), free(out_d), free(in_f), free(out_f);
    return 0;
}
