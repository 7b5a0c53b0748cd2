/* The CPU reference attention: tiled against naive, gradients against finite differences, memory,
 * float against double, causal edge cases, block skipping, and argument checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ref_attention.h"

/* ---- inputs ---- */

static uint64_t rng_state;

static void rng_seed(uint64_t seed) { rng_state = seed; }

/* splitmix64, mapped to [-1, 1) with 0 replaced: inputs are never zero. */
static double rng_uniform(void)
{
    uint64_t x = (rng_state += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    double u = 2.0 * (double)(x >> 11) * 0x1.0p-53 - 1.0;
    return u != 0.0 ? u : 0.5;
}

enum layout { BHND, BNHD, PADDED };

static void layout_strides(int layout, long long s[3], int heads, int seqlen, int dim)
{
    if (layout == BNHD) {   /* [B, N, H, D]: heads interleaved within each row */
        s[1] = dim;
        s[2] = (long long)heads * dim;
        s[0] = (long long)seqlen * heads * dim;
    } else if (layout == PADDED) {   /* gaps after every row, head and batch */
        s[2] = dim + 3;
        s[1] = (long long)seqlen * (dim + 3) + 5;
        s[0] = (long long)heads * s[1] + 7;
    } else {
        ref_strides_contiguous(s, heads, seqlen, dim);
    }
}

/* A strided [batch, heads, seq, dim] tensor in plain malloc memory (not counted by ref_alloc).
 * Gaps hold NaN, so a write outside the layout is caught; f mirrors d for float runs. */
typedef struct tensor {
    double *d;
    float *f;
    long long n;
    long long stride[3];
    int batch, heads, seq, dim;
} tensor;

static tensor tensor_new(const long long stride[3], int batch, int heads, int seq, int dim,
                         int random)
{
    tensor t = {NULL, NULL, 0, {stride[0], stride[1], stride[2]}, batch, heads, seq, dim};
    t.n = ref_tensor_extent(stride, batch, heads, seq, dim);
    t.d = malloc(sizeof(double) * (size_t)t.n);
    assert_non_null(t.d);
    for (long long i = 0; i < t.n; i++)
        t.d[i] = NAN;
    if (random) {
        long long count = (long long)batch * heads * seq * dim;
        for (long long i = 0; i < count; i++) {
            long long r = i / dim, c = i % dim;
            long long off = (r / seq / heads) * stride[0] + (r / seq % heads) * stride[1] +
                            (r % seq) * stride[2] + c;
            t.d[off] = rng_uniform();
        }
    }
    return t;
}

static void tensor_free(tensor *t)
{
    free(t->d);
    free(t->f);
    t->d = NULL;
    t->f = NULL;
}

static long long tensor_count(const tensor *t)
{
    return (long long)t->batch * t->heads * t->seq * t->dim;
}

/* Offset of logical element idx (row-major over [batch, heads, seq, dim]). */
static long long tensor_offset(const tensor *t, long long idx)
{
    long long r = idx / t->dim, c = idx % t->dim;
    return (r / t->seq / t->heads) * t->stride[0] + (r / t->seq % t->heads) * t->stride[1] +
           (r % t->seq) * t->stride[2] + c;
}

static double *tensor_at(const tensor *t, int b, int h, int i, int c)
{
    return t->d + b * t->stride[0] + h * t->stride[1] + i * t->stride[2] + c;
}

/* Float copies for the float path, and back. */
static void tensor_to_float(tensor *t)
{
    if (!t->f)
        t->f = malloc(sizeof(float) * (size_t)t->n);
    assert_non_null(t->f);
    for (long long i = 0; i < t->n; i++)
        t->f[i] = (float)t->d[i];
}

static void tensor_from_float(tensor *t)
{
    for (long long i = 0; i < t->n; i++)
        t->d[i] = t->f[i];
}

/* ---- checks ---- */

/* Every element of the layout was written (finite) and no gap was (still NaN). */
static void expect_written(const char *what, const tensor *t)
{
    char *in_layout = calloc((size_t)t->n, 1);
    assert_non_null(in_layout);
    long long count = tensor_count(t);
    for (long long i = 0; i < count; i++) {
        long long off = tensor_offset(t, i);
        in_layout[off] = 1;
        if (!isfinite(t->d[off]))
            fail_msg("%s: element %lld (offset %lld) not written or not finite: %g", what, i, off,
                     t->d[off]);
    }
    for (long long off = 0; off < t->n; off++)
        if (!in_layout[off] && !isnan(t->d[off]))
            fail_msg("%s: gap at offset %lld was written: %g", what, off, t->d[off]);
    free(in_layout);
}

/* Relative error ||got - ref|| / ||ref|| over the layout's elements. */
static double rel_error(const tensor *got, const tensor *ref)
{
    double num = 0, den = 0;
    long long count = tensor_count(ref);
    for (long long i = 0; i < count; i++) {
        double r = ref->d[tensor_offset(ref, i)], g = got->d[tensor_offset(got, i)];
        num += (g - r) * (g - r);
        den += r * r;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Prints up to five elements whose error exceeds tol times the rms of ref. */
static void print_mismatches(const double *got, const double *ref, long long count, double tol)
{
    double rms = 0;
    for (long long i = 0; i < count; i++)
        rms += ref[i] * ref[i];
    rms = sqrt(rms / (double)count);
    int shown = 0;
    for (long long i = 0; i < count && shown < 5; i++)
        if (!(fabs(got[i] - ref[i]) <= tol * (rms > 0 ? rms : 1.0))) {
            print_error("  index %lld: expected %.17g got %.17g\n", i, ref[i], got[i]);
            shown++;
        }
}

static void expect_close(const char *what, const tensor *got, const tensor *ref, double tol)
{
    double err = rel_error(got, ref);
    if (err < tol)
        return;
    long long count = tensor_count(ref);
    double *g = malloc(sizeof(double) * (size_t)count), *r = malloc(sizeof(double) * (size_t)count);
    assert_true(g && r);
    for (long long i = 0; i < count; i++) {
        g[i] = got->d[tensor_offset(got, i)];
        r[i] = ref->d[tensor_offset(ref, i)];
    }
    print_error("%s: relative error %.3g >= %.3g; first mismatches:\n", what, err, tol);
    print_mismatches(g, r, count, tol);
    free(g);
    free(r);
    fail_msg("%s: relative error %.3g >= %.3g", what, err, tol);
}

static void expect_ok(int rc, const char *err)
{
    if (rc != REF_OK)
        fail_msg("unexpected error %d: %s", rc, err);
}

/* ---- problems and their tensors ---- */

typedef struct attn_case {
    const char *name;
    int batch, heads, seqlen_q, seqlen_k, head_dim, head_dim_v, causal;
    double scale;   /* 0: 1/sqrt(head_dim) */
    int block_m, block_n;
    int layout;
} attn_case;

static ref_problem problem_for(const attn_case *c)
{
    ref_problem p;
    ref_problem_init(&p, c->batch, c->heads, c->seqlen_q, c->seqlen_k, c->head_dim, c->head_dim_v,
                     c->causal, c->scale);
    layout_strides(c->layout, p.q_stride, c->heads, c->seqlen_q, c->head_dim);
    layout_strides(c->layout, p.k_stride, c->heads, c->seqlen_k, c->head_dim);
    layout_strides(c->layout, p.v_stride, c->heads, c->seqlen_k, c->head_dim_v);
    layout_strides(c->layout, p.o_stride, c->heads, c->seqlen_q, c->head_dim_v);
    return p;
}

typedef struct inputs { tensor q, k, v, dout; } inputs;
typedef struct outputs { tensor o, lse, dq, dk, dv; } outputs;

static inputs inputs_new(const ref_problem *p, uint64_t seed)
{
    rng_seed(seed);
    inputs in;
    in.q = tensor_new(p->q_stride, p->batch, p->heads, p->seqlen_q, p->head_dim, 1);
    in.k = tensor_new(p->k_stride, p->batch, ref_problem_heads_k(p), p->seqlen_k, p->head_dim, 1);
    in.v = tensor_new(p->v_stride, p->batch, ref_problem_heads_k(p), p->seqlen_k, p->head_dim_v, 1);
    in.dout = tensor_new(p->o_stride, p->batch, p->heads, p->seqlen_q, p->head_dim_v, 1);
    return in;
}

static outputs outputs_new(const ref_problem *p)
{
    long long lse_stride[3];
    ref_strides_contiguous(lse_stride, p->heads, p->seqlen_q, 1);
    outputs out;
    out.o = tensor_new(p->o_stride, p->batch, p->heads, p->seqlen_q, p->head_dim_v, 0);
    out.lse = tensor_new(lse_stride, p->batch, p->heads, p->seqlen_q, 1, 0);
    out.dq = tensor_new(p->q_stride, p->batch, p->heads, p->seqlen_q, p->head_dim, 0);
    out.dk = tensor_new(p->k_stride, p->batch, ref_problem_heads_k(p), p->seqlen_k, p->head_dim, 0);
    out.dv = tensor_new(p->v_stride, p->batch, ref_problem_heads_k(p), p->seqlen_k, p->head_dim_v, 0);
    return out;
}

static void inputs_free(inputs *in)
{
    tensor_free(&in->q);
    tensor_free(&in->k);
    tensor_free(&in->v);
    tensor_free(&in->dout);
}

static void outputs_free(outputs *out)
{
    tensor_free(&out->o);
    tensor_free(&out->lse);
    tensor_free(&out->dq);
    tensor_free(&out->dk);
    tensor_free(&out->dv);
}

static void run_naive_d(const ref_problem *p, const inputs *in, outputs *out)
{
    char err[256] = "";
    expect_ok(ref_forward_naive_d(p, in->q.d, in->k.d, in->v.d, out->o.d, out->lse.d, err,
                                  sizeof err), err);
    expect_ok(ref_backward_naive_d(p, in->q.d, in->k.d, in->v.d, in->dout.d, out->dq.d, out->dk.d,
                                   out->dv.d, err, sizeof err), err);
}

static void run_tiled_d(const ref_problem *p, int bm, int bn, const inputs *in, outputs *out,
                        ref_stats *fwd, ref_stats *bwd)
{
    char err[256] = "";
    expect_ok(ref_forward_tiled_d(p, bm, bn, in->q.d, in->k.d, in->v.d, out->o.d, out->lse.d, fwd,
                                  err, sizeof err), err);
    expect_ok(ref_backward_tiled_d(p, bm, bn, in->q.d, in->k.d, in->v.d, out->o.d, out->lse.d,
                                   in->dout.d, out->dq.d, out->dk.d, out->dv.d, bwd, err,
                                   sizeof err), err);
}

/* Tiled against naive on all five outputs, and every output fully written, gaps untouched. */
static void expect_outputs_close(const char *name, const outputs *got, const outputs *ref,
                                 double tol)
{
    const char *names[5] = {"o", "lse", "dq", "dk", "dv"};
    const tensor *g[5] = {&got->o, &got->lse, &got->dq, &got->dk, &got->dv};
    const tensor *r[5] = {&ref->o, &ref->lse, &ref->dq, &ref->dk, &ref->dv};
    char what[128];
    for (int i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "%s: %s", name, names[i]);
        expect_written(what, g[i]);
        expect_written(what, r[i]);
        expect_close(what, g[i], r[i], tol);
    }
}

/* Runs every case of a table: random inputs (then prepare, may be NULL, edits them), the naive
 * double reference, then check. */
typedef void (*case_prepare)(const ref_problem *p, inputs *in);
typedef void (*case_check)(const attn_case *c, const ref_problem *p, const inputs *in,
                           const outputs *naive);

static void for_each_case(const attn_case *cases, size_t count, uint64_t seed,
                          case_prepare prepare, case_check check)
{
    for (size_t i = 0; i < count; i++) {
        ref_problem p = problem_for(&cases[i]);
        inputs in = inputs_new(&p, seed + i);
        if (prepare)
            prepare(&p, &in);
        outputs naive = outputs_new(&p);
        run_naive_d(&p, &in, &naive);
        check(&cases[i], &p, &in, &naive);
        inputs_free(&in);
        outputs_free(&naive);
    }
}

/* The double tiled outputs of case c, checked against naive; the caller frees them. */
static outputs tiled_checked(const attn_case *c, const ref_problem *p, const inputs *in,
                             const outputs *naive)
{
    outputs tiled = outputs_new(p);
    run_tiled_d(p, c->block_m, c->block_n, in, &tiled, NULL, NULL);
    expect_outputs_close(c->name, &tiled, naive, 1e-10);
    return tiled;
}

/* ---- tiled against naive ---- */

static const attn_case tiled_cases[] = {
    /* name                     B  H   Nq   Nk    D   Dv  causal scale  bm   bn  layout */
    {"n1",                      1, 1,   1,   1,  16,  16, 0, 0.0,   16,  16, BHND},
    {"n1_causal_tile1",         2, 1,   1,   1,  32,  32, 1, 0.0,    1,   1, BHND},
    {"n7_tile1_dv32",           2, 2,   7,   7,  16,  32, 1, 0.0,    1,   1, BHND},
    {"n16_bnhd",                1, 2,  16,  16,  32,  32, 0, 0.0,   16,  16, BNHD},
    {"n17_causal_padded",       1, 1,  17,  17,  64,  64, 1, 0.0,   16,  16, PADDED},
    {"n64_b2h3_rect_tiles",     2, 3,  64,  64,  64,  64, 1, 0.0,   64,  16, BHND},
    {"n64_bm16_bn64",           1, 1,  64,  64,  32,  48, 1, 0.0,   16,  64, BNHD},
    {"n100_d72_bnhd",           1, 2, 100, 100,  72,  72, 0, 0.0,   16,  64, BNHD},
    {"n100_causal_tile_gt_n",   1, 1, 100, 100,  72,  64, 1, 0.0,  128, 128, BHND},
    {"n256_d128_causal",        1, 1, 256, 256, 128, 128, 1, 0.0,   64,  64, BHND},
    {"n256_d128_dv64_bnhd",     1, 1, 256, 256, 128,  64, 0, 0.0,   16,  64, BNHD},
    {"n256_scale_0.3_tile1",    1, 1, 256, 256,  16,  16, 1, 0.3,    1,   1, PADDED},
    {"q100_k17_causal",         1, 2, 100,  17,  32,  48, 1, 0.0,   16,  16, BHND},
    {"q17_k100_causal_padded",  1, 1,  17, 100,  64,  64, 1, 0.0,   64,  16, PADDED},
    {"q256_k7_noncausal",       1, 1, 256,   7,  32,  16, 0, 0.0,   64,   1, BHND},
    {"q7_k256_causal",          1, 1,   7, 256,  16,  32, 1, 0.0,    1,  64, BNHD},
    {"q256_k16_causal",         1, 2, 256,  16,  64,  64, 1, 0.0,   64,  16, BHND},
    {"q64_k100_neg_scale",      2, 1,  64, 100,  72,  16, 0, -0.2, 16, 300, BHND},
};

static void check_tiled(const attn_case *c, const ref_problem *p, const inputs *in,
                        const outputs *naive)
{
    outputs tiled = tiled_checked(c, p, in, naive);
    outputs_free(&tiled);
}

static void tiled_matches_naive(void **state)
{
    (void)state;
    for_each_case(tiled_cases, sizeof tiled_cases / sizeof tiled_cases[0], 1000, NULL,
                  check_tiled);
}

/* ---- naive against values computed by hand (Python, double) ---- */

static void naive_matches_hand_values(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int causal;
        double o[2], lse[2];
    } cases[] = {
        {"full", 0, {0.27298325153580216, 1.1381390682089205},
         {1.5607855196221858, 2.1003059244055553}},
        {"causal", 1, {2.0, 1.7853783094212379}, {0.5303300858899106, 1.4000538010265198}},
    };
    const double q[] = {1.0, 0.5, -0.5, 2.0};
    const double k[] = {0.25, 1.0, 1.5, -0.5, -1.0, 0.75};
    const double v[] = {2.0, -1.0, 0.5};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ref_problem p;
        ref_problem_init(&p, 1, 1, 2, 3, 2, 1, cases[c].causal, 0.0);   /* scale 1/sqrt(2) */
        double o[2], lse[2];
        char err[256] = "";
        expect_ok(ref_forward_naive_d(&p, q, k, v, o, lse, err, sizeof err), err);
        for (int i = 0; i < 2; i++) {
            if (fabs(o[i] - cases[c].o[i]) > 1e-14 || fabs(lse[i] - cases[c].lse[i]) > 1e-14)
                fail_msg("%s: row %d: expected o %.17g lse %.17g, got o %.17g lse %.17g",
                         cases[c].name, i, cases[c].o[i], cases[c].lse[i], o[i], lse[i]);
        }
    }
}

/* ---- finite differences ---- */

/* loss = sum(O * W) through the tiled forward. */
static double fd_loss(const ref_problem *p, const inputs *in, const tensor *w, outputs *out)
{
    char err[256] = "";
    expect_ok(ref_forward_tiled_d(p, 16, 16, in->q.d, in->k.d, in->v.d, out->o.d, out->lse.d, NULL,
                                  err, sizeof err), err);
    double loss = 0;
    for (long long i = 0; i < tensor_count(w); i++)
        loss += out->o.d[tensor_offset(&out->o, i)] * w->d[tensor_offset(w, i)];
    return loss;
}

/* Central differences of the loss for the listed elements of x against grad. */
static void expect_fd_matches(const char *what, const ref_problem *p, inputs *in, tensor *x,
                              const tensor *grad, const long long *idx, long long count,
                              outputs *scratch)
{
    const double eps = 1e-5;
    double *fd = malloc(sizeof(double) * (size_t)count);
    double *an = malloc(sizeof(double) * (size_t)count);
    assert_true(fd && an);
    double num = 0, den = 0;
    for (long long n = 0; n < count; n++) {
        double *e = x->d + tensor_offset(x, idx[n]);
        double keep = *e;
        *e = keep + eps;
        double up = fd_loss(p, in, &in->dout, scratch);
        *e = keep - eps;
        double down = fd_loss(p, in, &in->dout, scratch);
        *e = keep;
        fd[n] = (up - down) / (2 * eps);
        an[n] = grad->d[tensor_offset(grad, idx[n])];
        num += (fd[n] - an[n]) * (fd[n] - an[n]);
        den += an[n] * an[n];
    }
    double rel = sqrt(num / den);
    print_message("finite differences %s: %lld elements, relative error %.3g\n", what, count, rel);
    if (!(rel < 1e-5)) {
        print_error("%s: first mismatches (expected = finite difference, got = analytic):\n", what);
        print_mismatches(an, fd, count, 1e-5);
        fail_msg("%s: relative error %.3g >= 1e-5", what, rel);
    }
    free(fd);
    free(an);
}

/* dV in full, 64 elements each of dQ and dK, of problem p against finite differences. */
static void expect_gradients_match_fd(const char *name, const ref_problem *p)
{
    print_message("%s:\n", name);
    inputs in = inputs_new(p, 77);   /* in.dout doubles as W: dO = W for loss = sum(O * W) */
    outputs grads = outputs_new(p), scratch = outputs_new(p);
    run_tiled_d(p, 16, 16, &in, &grads, NULL, NULL);

    long long all = tensor_count(&in.v);
    long long *idx = malloc(sizeof(long long) * (size_t)all);
    assert_non_null(idx);
    for (long long i = 0; i < all; i++)
        idx[i] = i;
    expect_fd_matches("dv (every element)", p, &in, &in.v, &grads.dv, idx, all, &scratch);
    rng_seed(78);
    for (int i = 0; i < 64; i++)
        idx[i] = (long long)((rng_uniform() + 1.0) / 2.0 * (double)tensor_count(&in.q));
    expect_fd_matches("dq (64 elements)", p, &in, &in.q, &grads.dq, idx, 64, &scratch);
    for (int i = 0; i < 64; i++)
        idx[i] = (long long)((rng_uniform() + 1.0) / 2.0 * (double)tensor_count(&in.k));
    expect_fd_matches("dk (64 elements)", p, &in, &in.k, &grads.dk, idx, 64, &scratch);
    free(idx);
    inputs_free(&in);
    outputs_free(&grads);
    outputs_free(&scratch);
}

static void gradients_match_finite_differences(void **state)
{
    (void)state;
    const attn_case c = {"fd", 1, 1, 64, 64, 32, 32, 1, 0.0, 16, 16, BHND};
    ref_problem p = problem_for(&c);
    expect_gradients_match_fd("causal top-left 64 x 64", &p);
    /* A window crossing tiles on both sides. */
    p.causal = 0;
    p.window = 1;
    p.window_left = 10;
    p.window_right = 3;
    expect_gradients_match_fd("window (10, 3) 64 x 64", &p);
    /* Bottom-right with seqlen_q > seqlen_k: rows 0..23 see no key, their dQ is 0. */
    const attn_case br = {"fd_br", 1, 1, 64, 40, 32, 32, 1, 0.0, 16, 16, BHND};
    p = problem_for(&br);
    p.causal_align = 1;
    expect_gradients_match_fd("causal bottom-right 64 x 40", &p);
}

/* ---- memory ---- */

static void tiled_scratch_is_o_tile(void **state)
{
    (void)state;
    const int n = 4096;
    const attn_case c = {"mem", 1, 1, n, n, 64, 64, 1, 0.0, 128, 128, BHND};
    ref_problem p = problem_for(&c);
    inputs in = inputs_new(&p, 5);
    outputs out = outputs_new(&p);
    long long base = ref_mem_current_bytes();
    ref_mem_reset_peak();
    run_tiled_d(&p, 128, 128, &in, &out, NULL, NULL);
    long long peak = ref_mem_peak_bytes() - base;
    double nn = (double)n * n * sizeof(double);
    print_message("tiled N=%d D=64 tile 128 causal: peak scratch %lld bytes = %.3f%% of one "
                  "N x N double matrix (%.0f bytes)\n", n, peak, 100.0 * peak / nn, nn);
    assert_true(peak > 0);   /* the counter saw the scratch */
    assert_true(peak < 0.2 * nn);
    assert_int_equal(ref_mem_current_bytes(), base);   /* nothing leaked */
    expect_written("mem: dq", &out.dq);
    inputs_free(&in);
    outputs_free(&out);
}

static void naive_peak_counts_the_score_matrix(void **state)
{
    (void)state;
    const attn_case c = {"naive_mem", 1, 2, 64, 64, 32, 32, 0, 0.0, 16, 16, BHND};
    ref_problem p = problem_for(&c);
    inputs in = inputs_new(&p, 6);
    outputs out = outputs_new(&p);
    char err[256] = "";
    long long base = ref_mem_current_bytes(), nn = 64LL * 64 * (long long)sizeof(double);
    ref_mem_reset_peak();
    expect_ok(ref_forward_naive_d(&p, in.q.d, in.k.d, in.v.d, out.o.d, out.lse.d, err, sizeof err),
              err);
    long long fwd_peak = ref_mem_peak_bytes() - base;
    ref_mem_reset_peak();
    expect_ok(ref_backward_naive_d(&p, in.q.d, in.k.d, in.v.d, in.dout.d, out.dq.d, out.dk.d,
                                   out.dv.d, err, sizeof err), err);
    long long bwd_peak = ref_mem_peak_bytes() - base;
    print_message("naive N=64: forward peak %lld bytes, backward %lld (N x N = %lld)\n", fwd_peak,
                  bwd_peak, nn);
    assert_true(fwd_peak >= nn);
    assert_true(bwd_peak >= 2 * nn);
    assert_int_equal(ref_mem_current_bytes(), base);
    inputs_free(&in);
    outputs_free(&out);
}

/* ---- float against double ---- */

static const attn_case float_cases[] = {
    {"float_n256_causal", 1, 2, 256, 256, 64, 64, 1, 0.0, 64, 32, BHND},
    {"float_n256_full_bnhd", 1, 2, 256, 256, 64, 64, 0, 0.0, 64, 32, BNHD},
};

/* Both sides see the same float-representable inputs, so only arithmetic differs. */
static void round_inputs_to_float(const ref_problem *p, inputs *in)
{
    (void)p;
    tensor *ins[4] = {&in->q, &in->k, &in->v, &in->dout};
    for (int t = 0; t < 4; t++) {
        tensor_to_float(ins[t]);
        tensor_from_float(ins[t]);
    }
}

/* The float path (tiled with c's tiles, or naive) on in's float copies; the caller frees. */
static outputs float_outputs(const attn_case *c, const ref_problem *p, const inputs *in, int tiled)
{
    outputs got = outputs_new(p);
    tensor *outs[5] = {&got.o, &got.lse, &got.dq, &got.dk, &got.dv};
    for (int t = 0; t < 5; t++)
        tensor_to_float(outs[t]);
    char err[256] = "";
    if (tiled) {
        expect_ok(ref_forward_tiled_f(p, c->block_m, c->block_n, in->q.f, in->k.f, in->v.f,
                                      got.o.f, got.lse.f, NULL, err, sizeof err), err);
        expect_ok(ref_backward_tiled_f(p, c->block_m, c->block_n, in->q.f, in->k.f, in->v.f,
                                       got.o.f, got.lse.f, in->dout.f, got.dq.f, got.dk.f,
                                       got.dv.f, NULL, err, sizeof err), err);
    } else {
        expect_ok(ref_forward_naive_f(p, in->q.f, in->k.f, in->v.f, got.o.f, got.lse.f, err,
                                      sizeof err), err);
        expect_ok(ref_backward_naive_f(p, in->q.f, in->k.f, in->v.f, in->dout.f, got.dq.f,
                                       got.dk.f, got.dv.f, err, sizeof err), err);
    }
    for (int t = 0; t < 5; t++)
        tensor_from_float(outs[t]);
    return got;
}

static void check_float_tiled(const attn_case *c, const ref_problem *p, const inputs *in,
                              const outputs *naive)
{
    outputs got = float_outputs(c, p, in, 1);
    print_message("%s: rel err o %.2g lse %.2g dq %.2g dk %.2g dv %.2g\n", c->name,
                  rel_error(&got.o, &naive->o), rel_error(&got.lse, &naive->lse),
                  rel_error(&got.dq, &naive->dq), rel_error(&got.dk, &naive->dk),
                  rel_error(&got.dv, &naive->dv));
    expect_outputs_close(c->name, &got, naive, 1e-5);
    outputs_free(&got);
}

static void float_tiled_matches_double_naive(void **state)
{
    (void)state;
    for_each_case(float_cases, sizeof float_cases / sizeof float_cases[0], 300,
                  round_inputs_to_float, check_float_tiled);
}

/* ---- float products from TF32 parts (tensor cores' float32) ---- */

/* The float path with tf32_splits or bf16_products (tiled, c's tiles) against the double one: each
 * output's relative error, in outputs' order (o, lse, dq, dk, dv). */
static void split_errors(const attn_case *c, const ref_problem *p, const inputs *in, const outputs *naive,
                         int splits, int bf16_products, double err[5])
{
    ref_problem q = *p;
    q.tf32_splits = splits;
    q.bf16_products = bf16_products;
    outputs got = float_outputs(c, &q, in, 1);
    const tensor *g[5] = {&got.o, &got.lse, &got.dq, &got.dk, &got.dv};
    const tensor *r[5] = {&naive->o, &naive->lse, &naive->dq, &naive->dk, &naive->dv};
    for (int i = 0; i < 5; i++)
        err[i] = rel_error(g[i], r[i]);
    outputs_free(&got);
}

/* What three TF32 products cost against plain float products, and what one costs: the bars the
 * tensor-core float32 kernels are held to. Measured here (2026-11-29, N 256, D 64): three splits
 * 0.98-1.08x the plain float error; one split 30-90x in L, 700-1400x in O and the gradients
 * (TF32's 2^-11 rounding, averaged over the products). */
static void check_tf32_splits(const attn_case *c, const ref_problem *p, const inputs *in, const outputs *naive)
{
    static const char *const names[5] = {"o", "lse", "dq", "dk", "dv"};
    double plain[5], three[5], one[5];
    split_errors(c, p, in, naive, 0, 0, plain);
    split_errors(c, p, in, naive, 3, 0, three);
    split_errors(c, p, in, naive, 1, 0, one);
    for (int i = 0; i < 5; i++) {
        print_message("%s %s: rel err plain float %.2g, 3xTF32 %.2g (%.2fx), TF32 %.2g\n", c->name, names[i],
                      plain[i], three[i], three[i] / plain[i], one[i]);
        if (!(three[i] <= 2 * plain[i]))
            fail_msg("%s %s: 3xTF32's error %.3g is over twice plain float's %.3g", c->name, names[i], three[i],
                     plain[i]);
        if (!(one[i] > 10 * plain[i] && one[i] < 5e-3))
            fail_msg("%s %s: TF32's error %.3g is not a TF32 error (plain float %.3g)", c->name, names[i], one[i],
                     plain[i]);
    }
}

static void tf32_splits_keep_float_accuracy(void **state)
{
    (void)state;
    for_each_case(float_cases, sizeof float_cases / sizeof float_cases[0], 700, round_inputs_to_float,
                  check_tf32_splits);
}

/* Float32 from bfloat16 operands, each split into three parts (the tensor cores' 16-bit forms,
 * twice TF32's rate a product and able to read an operand transposed, which TF32's cannot; a plan
 * in notes/fp32.md): six part products keep float's accuracy as three TF32 products do, within 2x
 * of plain float; the three largest alone leave about 2^-16 of each product out, and at least 4x
 * float's error in O and the gradients (L, a log of sums the largest score dominates, moves less).
 * Measured here (2026-12-02, N 256): six products 0.99-1.02x plain float's error; three 1.1-1.6x
 * in L, about 10-26x in O and the gradients. The three largest are the parts' form where the caller
 * allows TF32 (bwd_wgmma_f32's two parts, hi hi, hi mid, mid hi): it must stay well inside what
 * one TF32 product costs, a tenth of its error at most. */
static void check_bf16_products(const attn_case *c, const ref_problem *p, const inputs *in, const outputs *naive)
{
    static const char *const names[5] = {"o", "lse", "dq", "dk", "dv"};
    double plain[5], six[5], three[5], tf32[5];
    split_errors(c, p, in, naive, 0, 0, plain);
    split_errors(c, p, in, naive, 0, 6, six);
    split_errors(c, p, in, naive, 0, 3, three);
    split_errors(c, p, in, naive, 1, 0, tf32);
    for (int i = 0; i < 5; i++) {
        print_message("%s %s: rel err plain float %.2g, 6 bf16 products %.2g (%.2fx), 3 %.2g (%.1fx), TF32 %.2g\n",
                      c->name, names[i], plain[i], six[i], six[i] / plain[i], three[i], three[i] / plain[i], tf32[i]);
        if (!(six[i] <= 2 * plain[i]))
            fail_msg("%s %s: six bf16 products' error %.3g is over twice plain float's %.3g", c->name, names[i],
                     six[i], plain[i]);
        if (i != 1 && !(three[i] > 4 * plain[i] && three[i] < 1e-3))
            fail_msg("%s %s: three bf16 products' error %.3g is not 2^-16's (plain float %.3g)", c->name, names[i],
                     three[i], plain[i]);
        if (!(10 * three[i] <= tf32[i]))
            fail_msg("%s %s: three bf16 products' error %.3g is not a tenth of one TF32 product's %.3g", c->name,
                     names[i], three[i], tf32[i]);
    }
}

static void bf16_products_keep_float_accuracy(void **state)
{
    (void)state;
    for_each_case(float_cases, sizeof float_cases / sizeof float_cases[0], 700, round_inputs_to_float,
                  check_bf16_products);
}

/* bfloat16's rounding, as the tensor cores' conversion does it: to nearest, ties to even (a
 * truncation or ties away would still split a float exactly, so the accuracy test cannot see it). */
static void bf16_rounds_to_nearest_even(void **state)
{
    (void)state;
    static const struct {
        float x, rounded;
    } cases[] = {
        {1.0f + 0x1p-8f, 1.0f},                     /* a tie: to the even mantissa, down */
        {1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-6f},       /* a tie: to the even mantissa, up */
        {-(1.0f + 3 * 0x1p-8f), -(1.0f + 0x1p-6f)}, /* the magnitude rounds, the sign stays */
        {1.0f + 0x1p-8f + 0x1p-20f, 1.0f + 0x1p-7f}, /* past the tie: up */
        {0x1p-133f, 0x1p-133f},                     /* bfloat16's smallest subnormal, kept */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (ref_bf16_round(cases[i].x) != cases[i].rounded)
            fail_msg("bf16 of %a: %a, not %a", (double)cases[i].x, (double)ref_bf16_round(cases[i].x),
                     (double)cases[i].rounded);
    assert_true(isinf(ref_bf16_round(FLT_MAX)));   /* 0x7f7fffff is past bfloat16's largest: infinity */
    assert_true(isinf(ref_bf16_round(INFINITY)) && ref_bf16_round(INFINITY) > 0);
}

/* The premise of float32 from bfloat16 parts (the reference's bf16_products, fwd_wgmma's
 * BF16_PARTS: bf16_parts2 splits as this does): a float is exactly the sum of its three parts, the
 * bfloat16 rounding of it, of the remainder and of the remainder of that, each remainder exact in
 * float. Checked over floats of every magnitude a score or a value takes (2^-100 to 2^100), both
 * signs, with all 24 bits of mantissa random, and at ties and carries. Below about 2^-110 the
 * smallest part would fall under bfloat16's subnormals; no attention operand lives there. */
static void expect_three_parts_sum_to(float x)
{
    const float hi = ref_bf16_round(x), mid = ref_bf16_round(x - hi), lo = ref_bf16_round(x - hi - mid);
    if ((double)hi + (double)mid + (double)lo != (double)x || ref_bf16_round(lo) != lo)
        fail_msg("%a: parts %a + %a + %a sum to %a", (double)x, (double)hi, (double)mid, (double)lo,
                 (double)hi + (double)mid + (double)lo);
}
static void bf16_parts_sum_exactly(void **state)
{
    (void)state;
    static const float edges[] = { 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-23f,
                                   2.0f - 0x1p-23f, -(1.0f + 0x1p-16f + 0x1p-23f), 0x1p-100f * 1.5f };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        expect_three_parts_sum_to(edges[i]);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        const int exponent = (int)(rng % 201) - 100;
        const float mantissa = 1.0f + (float)((rng >> 16) & 0x7fffff) * 0x1p-23f;   /* all 24 bits */
        expect_three_parts_sum_to(ldexpf(mantissa, exponent) * ((rng >> 40) & 1 ? -1 : 1));
    }
}

/* How the float reference makes its products is checked before anything runs: each value names
 * its argument, and the double reference takes none. */
static void product_models_are_checked(void **state)
{
    (void)state;
    static const struct {
        int tf32_splits, bf16_products, as_float;
        const char *why;
    } bad[] = {
        {2, 0, 1, "tf32_splits=2 must be 0, 1 or 3"},
        {3, 0, 0, "tf32_splits=3: the float reference's only"},
        {0, 4, 1, "bf16_products=4 must be 0, 3 or 6"},
        {0, 6, 0, "bf16_products=6: the float reference's only, without tf32_splits (this one is double, "
                  "tf32_splits=0)"},
        {3, 6, 1, "bf16_products=6: the float reference's only, without tf32_splits (this one is float, "
                  "tf32_splits=3)"},
    };
    ref_problem p;
    ref_problem_init(&p, 1, 1, 4, 4, 8, 8, 0, 0);
    inputs in = inputs_new(&p, 5);
    outputs out = outputs_new(&p);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        p.tf32_splits = bad[i].tf32_splits;
        p.bf16_products = bad[i].bf16_products;
        const int rc = bad[i].as_float
                           ? ref_forward_naive_f(&p, in.q.f, in.k.f, in.v.f, out.o.f, out.lse.f, err, sizeof err)
                           : ref_forward_naive_d(&p, in.q.d, in.k.d, in.v.d, out.o.d, out.lse.d, err, sizeof err);
        assert_int_equal(rc, REF_ERR_INVALID);
        if (!strstr(err, bad[i].why))
            fail_msg("tf32_splits=%d bf16_products=%d: '%s' lacks '%s'", bad[i].tf32_splits, bad[i].bf16_products,
                     err, bad[i].why);
    }
    inputs_free(&in);
    outputs_free(&out);
}

/* ---- causal with seqlen_q != seqlen_k ---- */

static const attn_case cross_cases[] = {
    {"cross_q100_k17", 1, 2, 100, 17, 64, 32, 1, 0.0, 16, 16, BHND},
    {"cross_q17_k100", 1, 2, 17, 100, 64, 32, 1, 0.0, 16, 16, BNHD},
    {"cross_q64_k2", 2, 1, 64, 2, 32, 8, 1, 0.0, 16, 1, PADDED},
};

/* V[key][col] = 1e6 while |V| < 1 elsewhere, so O[i][col] = 1e6 P[i][key] + (at most 1): a row
 * that sees key must move by 1e6 P, one that does not stays within 1. */
static void expect_spike_seen(const char *name, const ref_problem *p, const inputs *in,
                              const outputs *out, const outputs *naive, int key, int col)
{
    double scale = ref_problem_scale(p);
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->heads; h++)
            for (int i = 0; i < p->seqlen_q; i++) {
                double o = *tensor_at(&out->o, b, h, i, col);
                int sees = key <= i;   /* top-left: row i sees keys 0..min(i, Nk-1) */
                double expect = 0;
                if (sees) {
                    double s = 0;
                    for (int c = 0; c < p->head_dim; c++)
                        s += *tensor_at(&in->q, b, h, i, c) * *tensor_at(&in->k, b, h, key, c);
                    double lse = *tensor_at(&naive->lse, b, h, i, 0);
                    expect = 1e6 * exp(scale * s - lse);
                    if (!(expect > 10))
                        fail_msg("%s: row %d: P[key %d] = %g too small to show", name, i, key,
                                 expect / 1e6);
                }
                if (!(fabs(o - expect) <= 1.0 + 1e-9 * fabs(expect)))
                    fail_msg("%s: b %d h %d row %d col %d (key %d %s): expected %.6g +- 1, "
                             "got %.6g", name, b, h, i, col, key, sees ? "visible" : "masked",
                             expect, o);
            }
}

static void spike_v(const ref_problem *p, inputs *in)
{
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->heads; h++) {
            *tensor_at(&in->v, b, h, 0, 0) = 1e6;
            *tensor_at(&in->v, b, h, p->seqlen_k - 1, 1) = 1e6;
        }
}

static void check_cross(const attn_case *c, const ref_problem *p, const inputs *in,
                        const outputs *naive)
{
    outputs tiled = tiled_checked(c, p, in, naive);
    const outputs *both[2] = {naive, &tiled};
    for (int w = 0; w < 2; w++) {
        expect_spike_seen(c->name, p, in, both[w], naive, 0, 0);
        expect_spike_seen(c->name, p, in, both[w], naive, p->seqlen_k - 1, 1);
    }
    outputs_free(&tiled);
}

static void causal_cross_lengths(void **state)
{
    (void)state;
    for_each_case(cross_cases, sizeof cross_cases / sizeof cross_cases[0], 500, spike_v,
                  check_cross);
}

/* ---- causal block skipping ---- */

static const struct {
    const char *name;
    int batch, heads, seqlen_q, seqlen_k, causal, block_m, block_n;
    long long visited;   /* worked out by hand */
    int align, window, left, right;
} skip_cases[] = {
    {"n256_64x64_causal", 1, 1, 256, 256, 1, 64, 64, 10, 0, 0, 0, 0},   /* 1+2+3+4 of 16 */
    {"n256_64x64_full", 1, 1, 256, 256, 0, 64, 64, 16, 0, 0, 0, 0},
    {"n256_64x64_causal_b2h3", 2, 3, 256, 256, 1, 64, 64, 60, 0, 0, 0, 0},
    /* 7 query tiles + 3 past key 64 */
    {"n100_16x64_causal", 1, 1, 100, 100, 1, 16, 64, 10, 0, 0, 0, 0},
    {"n100_48x16_causal", 1, 1, 100, 100, 1, 48, 16, 16, 0, 0, 0, 0},   /* 3 + 6 + 7: misaligned */
    {"q100_k17_16x16_causal", 1, 1, 100, 17, 1, 16, 16, 13, 0, 0, 0, 0},
    {"q17_k100_16x16_causal", 1, 1, 17, 100, 1, 16, 16, 3, 0, 0, 0, 0},   /* of 14 */
    {"n7_1x1_causal", 1, 1, 7, 7, 1, 1, 1, 28, 0, 0, 0, 0},
    /* Windows and bottom-right: the band's tiles only. Query tile t of 64 sees keys
     * [64t - 64, 64t + 63]: tiles t-1 and t. */
    {"n256_64x64_window_64_0", 1, 1, 256, 256, 0, 64, 64, 7, 0, 1, 64, 0},
    /* rows see keys [i + 160, i + 192]: key tiles 2 and 3 of 4 */
    {"q64_k256_64x64_br_window_32", 1, 1, 64, 256, 1, 64, 64, 2, 1, 1, 32, 0},
    /* rows 0..191 see nothing: only query tile 3, with its 4 key tiles */
    {"q256_k64_64x16_br_causal", 1, 1, 256, 64, 1, 64, 16, 4, 1, 0, 0, 0},
    {"n100_16x16_window_0_0", 1, 1, 100, 100, 0, 16, 16, 7, 0, 1, 0, 0},   /* the diagonal */
    /* tile 0 sees all 7 key tiles, tile t >= 1 tiles t-1..6 */
    {"n100_16x16_window_left_10", 1, 1, 100, 100, 0, 16, 16, 34, 0, 1, 10, -1},
};

/* Key j visible to query i, written from the conventions of flashtune.h (diagonal, causal,
 * window sides) rather than through ft_mask.h's band, so that each checks the other. */
static int visible(const ref_problem *p, int i, int j)
{
    long long diag = i + (p->causal_align ? (long long)p->seqlen_k - p->seqlen_q : 0);
    if (p->causal && j > diag)
        return 0;
    if (p->window && p->window_left >= 0 && j < diag - p->window_left)
        return 0;
    if (p->window && p->window_right >= 0 && j > diag + p->window_right)
        return 0;
    return 1;
}

/* Tiles with at least one unmasked (i, j), and those of them holding a masked one, by brute
 * force over every element. */
static void count_tiles(const ref_problem *p, int bm, int bn, long long *live, long long *crossing)
{
    *live = *crossing = 0;
    for (int m0 = 0; m0 < p->seqlen_q; m0 += bm)
        for (int n0 = 0; n0 < p->seqlen_k; n0 += bn) {
            int seen = 0, masked = 0;
            for (int i = m0; i < m0 + bm && i < p->seqlen_q; i++)
                for (int j = n0; j < n0 + bn && j < p->seqlen_k; j++) {
                    if (visible(p, i, j))
                        seen = 1;
                    else
                        masked = 1;
                }
            *live += seen;
            *crossing += seen && masked;
        }
}

static void causal_tiles_are_skipped(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof skip_cases / sizeof skip_cases[0]; c++) {
        const attn_case ac = {skip_cases[c].name, skip_cases[c].batch, skip_cases[c].heads,
                              skip_cases[c].seqlen_q, skip_cases[c].seqlen_k, 32, 32,
                              skip_cases[c].causal, 0.0, skip_cases[c].block_m,
                              skip_cases[c].block_n, BHND};
        ref_problem p = problem_for(&ac);
        p.causal_align = skip_cases[c].align;
        p.window = skip_cases[c].window;
        p.window_left = skip_cases[c].left;
        p.window_right = skip_cases[c].right;
        long long live, crossing;
        count_tiles(&p, ac.block_m, ac.block_n, &live, &crossing);
        long long heads = (long long)p.batch * p.heads;
        assert_int_equal(live * heads, skip_cases[c].visited);
        inputs in = inputs_new(&p, 900 + c);
        outputs out = outputs_new(&p);
        ref_stats fwd = {-1, -1}, bwd = {-1, -1};
        run_tiled_d(&p, ac.block_m, ac.block_n, &in, &out, &fwd, &bwd);
        const ref_stats *st[2] = {&fwd, &bwd};
        for (int w = 0; w < 2; w++)
            if (st[w]->tiles_visited != skip_cases[c].visited ||
                st[w]->tiles_masked != crossing * heads)
                fail_msg("%s %s: visited %lld masked %lld, expected %lld and %lld", ac.name,
                         w ? "backward" : "forward", st[w]->tiles_visited, st[w]->tiles_masked,
                         skip_cases[c].visited, crossing * heads);
        inputs_free(&in);
        outputs_free(&out);
    }
}

/* ---- bottom-right causal and local windows ---- */

typedef struct mask_case {
    attn_case c;
    int align, window, left, right;   /* causal_align, window, window_left, window_right */
    int empty_rows, unseen_keys;      /* per (batch, head), worked out by hand */
} mask_case;

static const mask_case mask_cases[] = {
    /* {name, B, H, Nq, Nk, D, Dv, causal, scale, bm, bn, layout},
     *  align, window, left, right, empty rows, unseen keys */
    {{"br_causal_q17_k100", 1, 2, 17, 100, 32, 32, 1, 0.0, 16, 16, BHND}, 1, 0, 0, 0, 0, 0},
    /* row i sees keys 0..i - 83 */
    {{"br_causal_q100_k17", 1, 2, 100, 17, 32, 48, 1, 0.0, 16, 16, BHND}, 1, 0, 0, 0, 83, 0},
    {{"window_left_10_n100", 1, 1, 100, 100, 32, 32, 0, 0.0, 16, 16, BHND}, 0, 1, 10, -1, 0, 0},
    /* row i sees keys 0..i + 7: keys 57..76 by no row */
    {{"window_right_7_q50_k77", 1, 1, 50, 77, 32, 16, 0, 0.0, 16, 8, BNHD}, 0, 1, -1, 7, 0, 20},
    {{"window_20_5_n129_bnhd", 2, 2, 129, 129, 64, 64, 0, 0.0, 32, 16, BNHD}, 0, 1, 20, 5, 0, 0},
    {{"window_0_0_n40", 1, 2, 40, 40, 16, 16, 0, 0.0, 8, 8, BHND}, 0, 1, 0, 0, 0, 0},
    /* row i sees keys i + 150..i + 200 */
    {{"br_causal_window_50_q100_k300", 1, 1, 100, 300, 32, 32, 1, 0.0, 16, 32, PADDED},
     1, 1, 50, 0, 0, 150},
    /* row i sees keys i - 253..i - 248: rows 0..247 none */
    {{"br_window_3_2_q300_k50", 1, 1, 300, 50, 16, 16, 0, 0.0, 32, 16, BHND}, 1, 1, 3, 2, 248, 0},
    {{"window_4_4_q50_k300", 1, 1, 50, 300, 16, 16, 0, 0.3, 16, 64, BHND}, 0, 1, 4, 4, 0, 246},
    /* row i sees keys i + 4..i + 6 */
    {{"br_causal_window_2_q7_k13_tile1", 2, 1, 7, 13, 16, 16, 1, 0.0, 1, 1, BHND},
     1, 1, 2, -1, 0, 4},
    {{"window_right_0_tile_gt_n", 1, 1, 33, 65, 32, 32, 0, 0.0, 128, 128, BHND},
     0, 1, -1, 0, 0, 32},
    /* row i sees keys i..29: rows 30..39 none, and their tile's keys start in a live key tile */
    {{"window_left_0_q40_k30", 1, 1, 40, 30, 32, 32, 0, 0.0, 10, 16, PADDED}, 0, 1, 0, -1, 10, 0},
};

static ref_problem mask_problem(const mask_case *m)
{
    ref_problem p = problem_for(&m->c);
    p.causal_align = m->align;
    p.window = m->window;
    p.window_left = m->left;
    p.window_right = m->right;
    return p;
}

/* 1 when row (query i, or key j with is_key) sees some key (is seen by some query). */
static int in_band(const ref_problem *p, int row, int is_key)
{
    const int n = is_key ? p->seqlen_q : p->seqlen_k;
    for (int x = 0; x < n; x++)
        if (is_key ? visible(p, x, row) : visible(p, row, x))
            return 1;
    return 0;
}

/* Row r of t in slice (b, h) is all exact zeros. */
static void expect_zero_row(const char *name, const char *what, const tensor *t, int b, int h,
                            int r)
{
    for (int c = 0; c < t->dim; c++)
        if (*tensor_at(t, b, h, r, c) != 0)
            fail_msg("%s: %s %d: %g at column %d, expected 0", name, what, r,
                     *tensor_at(t, b, h, r, c), c);
}

/* Rows that see no key have O = 0, L = +inf and dQ = 0; keys no row sees have dK = dV = 0, all
 * exactly. Checks the counts against the case's (per batch and head). */
static void expect_empty_rows_and_keys(const char *name, const mask_case *m, const ref_problem *p,
                                       const outputs *out)
{
    long long empty = 0, unseen = 0;
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->heads; h++) {
            for (int i = 0; i < p->seqlen_q; i++) {
                if (in_band(p, i, 0))
                    continue;
                empty++;
                if (!(*tensor_at(&out->lse, b, h, i, 0) == INFINITY))
                    fail_msg("%s: row %d sees no key: lse %g, expected +inf", name, i,
                             *tensor_at(&out->lse, b, h, i, 0));
                expect_zero_row(name, "o of empty row", &out->o, b, h, i);
                expect_zero_row(name, "dq of empty row", &out->dq, b, h, i);
            }
            for (int j = 0; j < p->seqlen_k; j++) {
                if (in_band(p, j, 1))
                    continue;
                unseen++;
                expect_zero_row(name, "dk of unseen key", &out->dk, b, h, j);
                expect_zero_row(name, "dv of unseen key", &out->dv, b, h, j);
            }
        }
    const long long heads = (long long)p->batch * p->heads;
    if (empty != m->empty_rows * heads || unseen != m->unseen_keys * heads)
        fail_msg("%s: %lld empty rows and %lld unseen keys, expected %lld and %lld", name, empty,
                 unseen, m->empty_rows * heads, m->unseen_keys * heads);
}

/* The forward from first principles: the full score matrix (capped by tanh with a softcap, K
 * and V of query head h from head h / (heads / heads_k)) with -inf where !visible, a row
 * softmax (an all -inf row: P = 0, L = +inf), O = P V; against the naive reference. */
static void expect_brute_force(const char *name, const ref_problem *p, const inputs *in,
                               const outputs *naive)
{
    const double scale = ref_problem_scale(p);
    const int group = p->heads / ref_problem_heads_k(p);
    double *s = malloc(sizeof(double) * (size_t)p->seqlen_k);
    assert_non_null(s);
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->heads; h++)
            for (int i = 0; i < p->seqlen_q; i++) {
                double mx = -INFINITY;
                for (int j = 0; j < p->seqlen_k; j++) {
                    double dot = 0;
                    for (int c = 0; c < p->head_dim; c++)
                        dot += *tensor_at(&in->q, b, h, i, c) * *tensor_at(&in->k, b, h / group, j, c);
                    const double capped = p->softcap > 0 ? p->softcap * tanh(scale * dot / p->softcap)
                                                         : scale * dot;
                    s[j] = visible(p, i, j) ? capped : -INFINITY;
                    mx = s[j] > mx ? s[j] : mx;
                }
                double sum = 0;
                for (int j = 0; j < p->seqlen_k; j++)
                    sum += mx == -INFINITY ? 0 : exp(s[j] - mx);
                const double lse = mx == -INFINITY ? INFINITY : mx + log(sum);
                const double got_lse = *tensor_at(&naive->lse, b, h, i, 0);
                if (!(got_lse == lse || fabs(got_lse - lse) <= 1e-12 * (1 + fabs(lse))))
                    fail_msg("%s: b %d h %d row %d: lse expected %.17g got %.17g", name, b, h, i,
                             lse, got_lse);
                for (int c = 0; c < p->head_dim_v; c++) {
                    double o = 0;
                    for (int j = 0; j < p->seqlen_k && mx != -INFINITY; j++)
                        o += exp(s[j] - mx) / sum * *tensor_at(&in->v, b, h / group, j, c);
                    const double got = *tensor_at(&naive->o, b, h, i, c);
                    if (!(fabs(got - o) <= 1e-12 * (1 + fabs(o))))
                        fail_msg("%s: b %d h %d row %d o[%d]: expected %.17g got %.17g", name, b,
                                 h, i, c, o, got);
                }
            }
    free(s);
}

/* got against ref as expect_outputs_close does, rows that see no key included: their lse is
 * +inf in both (else a failure), compared as equal. */
static void expect_masked_outputs_close(const char *name, outputs *got, outputs *ref, double tol)
{
    const long long count = tensor_count(&ref->lse);   /* lse is contiguous: index = offset */
    char *inf = calloc((size_t)count, 1);
    assert_non_null(inf);
    for (long long i = 0; i < count; i++) {
        if (!isinf(got->lse.d[i]) && !isinf(ref->lse.d[i]))
            continue;
        if (!(got->lse.d[i] == INFINITY && ref->lse.d[i] == INFINITY))
            fail_msg("%s: lse[%lld]: expected %g got %g", name, i, ref->lse.d[i], got->lse.d[i]);
        inf[i] = 1;
        got->lse.d[i] = ref->lse.d[i] = 0;   /* until the comparison is done */
    }
    expect_outputs_close(name, got, ref, tol);
    for (long long i = 0; i < count; i++)
        if (inf[i])
            got->lse.d[i] = ref->lse.d[i] = INFINITY;
    free(inf);
}

/* Per case: naive against the brute force and the empty-row rules, then tiled (double) and both
 * float paths against naive. Inputs are float-representable so the float paths differ only in
 * arithmetic. */
static void masks_bottom_right_and_windows(void **state)
{
    (void)state;
    for (size_t n = 0; n < sizeof mask_cases / sizeof mask_cases[0]; n++) {
        const mask_case *m = &mask_cases[n];
        const char *name = m->c.name;
        ref_problem p = mask_problem(m);
        inputs in = inputs_new(&p, 4000 + n);
        round_inputs_to_float(&p, &in);
        outputs naive = outputs_new(&p);
        run_naive_d(&p, &in, &naive);
        expect_brute_force(name, &p, &in, &naive);
        expect_empty_rows_and_keys(name, m, &p, &naive);

        outputs tiled = outputs_new(&p);
        ref_stats fwd, bwd;
        run_tiled_d(&p, m->c.block_m, m->c.block_n, &in, &tiled, &fwd, &bwd);
        expect_empty_rows_and_keys(name, m, &p, &tiled);
        expect_masked_outputs_close(name, &tiled, &naive, 1e-10);
        for (int tiled_f = 0; tiled_f < 2; tiled_f++) {
            outputs f = float_outputs(&m->c, &p, &in, tiled_f);
            expect_empty_rows_and_keys(name, m, &p, &f);
            expect_masked_outputs_close(name, &f, &naive, 1e-5);
            outputs_free(&f);
        }
        long long live, crossing;
        count_tiles(&p, m->c.block_m, m->c.block_n, &live, &crossing);
        const long long heads = (long long)p.batch * p.heads;
        print_message("%-32s tiles visited %lld (%lld masked), %d empty rows, %d unseen keys\n",
                      name, fwd.tiles_visited, fwd.tiles_masked, m->empty_rows, m->unseen_keys);
        assert_int_equal(fwd.tiles_visited, live * heads);
        assert_int_equal(bwd.tiles_visited, live * heads);
        assert_int_equal(fwd.tiles_masked, crossing * heads);
        assert_int_equal(bwd.tiles_masked, crossing * heads);
        inputs_free(&in);
        outputs_free(&naive);
        outputs_free(&tiled);
    }
}

/* ---- grouped-query heads and the softcap ---- */

typedef struct gqa_case {
    attn_case c;   /* c.heads: query heads */
    int heads_k;
    double softcap;
    int causal_align, window, window_left, window_right;
} gqa_case;

static const gqa_case gqa_cases[] = {
    {{"gqa 6/3", 2, 6, 37, 29, 16, 8, 0, 0.0, 8, 16, BHND}, 3, 0.0, 0, 0, 0, 0},
    {{"gqa 6/2 causal", 1, 6, 33, 33, 16, 16, 1, 0.0, 16, 8, BNHD}, 2, 0.0, 0, 0, 0, 0},
    {{"mqa 4/1 bottom-right", 2, 4, 19, 45, 8, 16, 1, 0.0, 8, 8, PADDED}, 1, 0.0, 1, 0, 0, 0},
    {{"softcap 0.5", 2, 2, 31, 40, 32, 16, 0, 0.0, 16, 16, BHND}, 0, 0.5, 0, 0, 0, 0},
    {{"softcap 0.3 causal", 1, 3, 40, 40, 16, 16, 1, 0.7, 8, 16, BNHD}, 0, 0.3, 0, 0, 0, 0},
    {{"softcap 2 window", 1, 2, 45, 30, 16, 8, 0, 0.0, 16, 8, PADDED}, 0, 2.0, 1, 1, 7, 2},
    {{"gqa 4/2 softcap 0.4 causal", 2, 4, 26, 34, 16, 16, 1, 0.0, 8, 16, BHND}, 2, 0.4, 1, 0, 0, 0},
};

static ref_problem gqa_problem(const gqa_case *g)
{
    ref_problem p = problem_for(&g->c);
    const int heads_k = g->heads_k ? g->heads_k : g->c.heads;
    layout_strides(g->c.layout, p.k_stride, heads_k, g->c.seqlen_k, g->c.head_dim);
    layout_strides(g->c.layout, p.v_stride, heads_k, g->c.seqlen_k, g->c.head_dim_v);
    p.heads_k = g->heads_k;
    p.softcap = g->softcap;
    p.causal_align = g->causal_align;
    p.window = g->window;
    p.window_left = g->window_left;
    p.window_right = g->window_right;
    return p;
}

/* A grouped problem against the same problem with every query head given its own copy of its
 * K/V head: O, L and dQ equal, dK and dV of a K/V head the sums over its group's copies. */
static void expect_same_as_repeated_heads(const char *name, const ref_problem *p, const inputs *in,
                                          const outputs *got)
{
    ref_problem r = *p;
    r.heads_k = 0;
    ref_strides_contiguous(r.k_stride, r.heads, r.seqlen_k, r.head_dim);
    ref_strides_contiguous(r.v_stride, r.heads, r.seqlen_k, r.head_dim_v);
    inputs rin = inputs_new(&r, 1);
    const int group = p->heads / ref_problem_heads_k(p);
    for (int b = 0; b < r.batch; b++)
        for (int h = 0; h < r.heads; h++)
            for (int j = 0; j < r.seqlen_k; j++) {
                for (int c = 0; c < r.head_dim; c++)
                    *tensor_at(&rin.k, b, h, j, c) = *tensor_at(&in->k, b, h / group, j, c);
                for (int c = 0; c < r.head_dim_v; c++)
                    *tensor_at(&rin.v, b, h, j, c) = *tensor_at(&in->v, b, h / group, j, c);
            }
    tensor_free(&rin.q);
    tensor_free(&rin.dout);
    rin.q = in->q;        /* the same layouts as p's: borrowed, not freed here */
    rin.dout = in->dout;
    outputs want = outputs_new(&r);
    run_naive_d(&r, &rin, &want);
    char what[128];
    const tensor *g3[3] = {&got->o, &got->lse, &got->dq}, *w3[3] = {&want.o, &want.lse, &want.dq};
    const char *n3[3] = {"o", "lse", "dq"};
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof what, "%s: %s against repeated heads", name, n3[i]);
        for (long long e = 0; e < tensor_count(w3[i]); e++) {
            double a = g3[i]->d[tensor_offset(g3[i], e)], w = w3[i]->d[tensor_offset(w3[i], e)];
            if (!(a == w || fabs(a - w) <= 1e-12 * (1 + fabs(w))))
                fail_msg("%s: element %lld expected %.17g got %.17g", what, e, w, a);
        }
    }
    const tensor *gk[2] = {&got->dk, &got->dv}, *wk[2] = {&want.dk, &want.dv};
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < p->batch; b++)
            for (int hk = 0; hk < ref_problem_heads_k(p); hk++)
                for (int j = 0; j < p->seqlen_k; j++)
                    for (int c = 0; c < gk[t]->dim; c++) {
                        double sum = 0;
                        for (int h = hk * group; h < (hk + 1) * group; h++)
                            sum += *tensor_at(wk[t], b, h, j, c);
                        const double a = *tensor_at(gk[t], b, hk, j, c);
                        if (!(fabs(a - sum) <= 1e-12 * (1 + fabs(sum))))
                            fail_msg("%s: %s[%d, %d, %d, %d] expected the group's sum %.17g got %.17g",
                                     name, t ? "dv" : "dk", b, hk, j, c, sum, a);
                    }
    rin.q.d = rin.dout.d = NULL;
    rin.q.f = rin.dout.f = NULL;
    inputs_free(&rin);
    outputs_free(&want);
}

/* Per case: naive against the brute force, against the same problem with repeated K/V heads
 * where heads are grouped, tiled (double) and both float paths against naive; then the
 * gradients of a grouped, capped, causal problem against finite differences. */
static void grouped_heads_and_softcap(void **state)
{
    (void)state;
    for (size_t n = 0; n < sizeof gqa_cases / sizeof gqa_cases[0]; n++) {
        const gqa_case *g = &gqa_cases[n];
        const char *name = g->c.name;
        ref_problem p = gqa_problem(g);
        inputs in = inputs_new(&p, 5000 + n);
        round_inputs_to_float(&p, &in);
        outputs naive = outputs_new(&p);
        run_naive_d(&p, &in, &naive);
        expect_brute_force(name, &p, &in, &naive);
        if (ref_problem_heads_k(&p) != p.heads)
            expect_same_as_repeated_heads(name, &p, &in, &naive);
        outputs tiled = outputs_new(&p);
        run_tiled_d(&p, g->c.block_m, g->c.block_n, &in, &tiled, NULL, NULL);
        expect_masked_outputs_close(name, &tiled, &naive, 1e-10);
        for (int tiled_f = 0; tiled_f < 2; tiled_f++) {
            outputs f = float_outputs(&g->c, &p, &in, tiled_f);
            expect_masked_outputs_close(name, &f, &naive, 1e-5);
            outputs_free(&f);
        }
        print_message("%-32s naive, tiled and float agree\n", name);
        inputs_free(&in);
        outputs_free(&naive);
        outputs_free(&tiled);
    }
    const gqa_case fd = {{"fd", 1, 4, 48, 40, 16, 16, 1, 0.0, 16, 16, BHND}, 2, 0.4, 1, 0, 0, 0};
    ref_problem p = gqa_problem(&fd);
    expect_gradients_match_fd("heads 4 over 2, softcap 0.4, causal bottom-right 48 x 40", &p);
}

/* ---- bad input ---- */

/* One call's arguments, untyped so the same case drives the double and float functions. */
typedef struct call {
    ref_problem p;
    const ref_problem *pp;
    int bm, bn;
    const void *q, *k, *v, *o_in, *lse_in, *dout;
    void *o, *lse, *dq, *dk, *dv;
} call;

#define CALL_ADAPTERS(S)                                                                          \
    static int fwd_naive_##S(const call *c, char *e, size_t n)                                    \
    {                                                                                             \
        return ref_forward_naive_##S(c->pp, c->q, c->k, c->v, c->o, c->lse, e, n);                \
    }                                                                                             \
    static int bwd_naive_##S(const call *c, char *e, size_t n)                                    \
    {                                                                                             \
        return ref_backward_naive_##S(c->pp, c->q, c->k, c->v, c->dout, c->dq, c->dk, c->dv, e,  \
                                      n);                                                         \
    }                                                                                             \
    static int fwd_tiled_##S(const call *c, char *e, size_t n)                                    \
    {                                                                                             \
        return ref_forward_tiled_##S(c->pp, c->bm, c->bn, c->q, c->k, c->v, c->o, c->lse, NULL,   \
                                     e, n);                                                       \
    }                                                                                             \
    static int bwd_tiled_##S(const call *c, char *e, size_t n)                                    \
    {                                                                                             \
        return ref_backward_tiled_##S(c->pp, c->bm, c->bn, c->q, c->k, c->v, c->o_in, c->lse_in,  \
                                      c->dout, c->dq, c->dk, c->dv, NULL, e, n);                  \
    }
CALL_ADAPTERS(d)
CALL_ADAPTERS(f)

enum { FWD_NAIVE = 1, BWD_NAIVE = 2, FWD_TILED = 4, BWD_TILED = 8, ALL = 15 };

static const struct {
    const char *name;
    int (*fn)(const call *c, char *e, size_t n);
    int kind;
    int is_float;
} functions[] = {
    {"ref_forward_naive_d", fwd_naive_d, FWD_NAIVE, 0},
    {"ref_backward_naive_d", bwd_naive_d, BWD_NAIVE, 0},
    {"ref_forward_tiled_d", fwd_tiled_d, FWD_TILED, 0},
    {"ref_backward_tiled_d", bwd_tiled_d, BWD_TILED, 0},
    {"ref_forward_naive_f", fwd_naive_f, FWD_NAIVE, 1},
    {"ref_backward_naive_f", bwd_naive_f, BWD_NAIVE, 1},
    {"ref_forward_tiled_f", fwd_tiled_f, FWD_TILED, 1},
    {"ref_backward_tiled_f", bwd_tiled_f, BWD_TILED, 1},
};
enum { N_FUNCTIONS = sizeof functions / sizeof functions[0] };

/* Valid buffers for B=2 H=2 N=8 D=16 Dv=8, sized for double so float calls fit too. */
typedef struct call_buffers { double *t[11]; } call_buffers;

static call make_call(call_buffers *bufs)
{
    call c;
    memset(&c, 0, sizeof c);
    ref_problem_init(&c.p, 2, 2, 8, 8, 16, 8, 1, 0.0);
    c.pp = &c.p;
    c.bm = 4;
    c.bn = 3;
    const long long sizes[11] = {
        ref_extent_q(&c.p), ref_extent_k(&c.p), ref_extent_v(&c.p), ref_extent_o(&c.p),
        ref_extent_lse(&c.p), ref_extent_o(&c.p), ref_extent_o(&c.p), ref_extent_lse(&c.p),
        ref_extent_q(&c.p), ref_extent_k(&c.p), ref_extent_v(&c.p),
    };
    for (int i = 0; i < 11; i++) {
        bufs->t[i] = malloc(sizeof(double) * (size_t)sizes[i]);
        assert_non_null(bufs->t[i]);
        for (long long e = 0; e < sizes[i]; e++)
            bufs->t[i][e] = 0.25;   /* finite read as double or as float */
    }
    c.q = bufs->t[0];
    c.k = bufs->t[1];
    c.v = bufs->t[2];
    c.o_in = bufs->t[3];
    c.lse_in = bufs->t[4];
    c.dout = bufs->t[5];
    c.o = bufs->t[6];
    c.lse = bufs->t[7];
    c.dq = bufs->t[8];
    c.dk = bufs->t[9];
    c.dv = bufs->t[10];
    return c;
}

static void free_call(call_buffers *bufs)
{
    for (int i = 0; i < 11; i++)
        free(bufs->t[i]);
}

static void no_problem(call *c) { c->pp = NULL; }
static void zero_batch(call *c) { c->p.batch = 0; }
static void negative_heads(call *c) { c->p.heads = -2; }
static void zero_seqlen_q(call *c) { c->p.seqlen_q = 0; }
static void zero_seqlen_k(call *c) { c->p.seqlen_k = 0; }
static void zero_head_dim(call *c) { c->p.head_dim = 0; }
static void negative_head_dim_v(call *c) { c->p.head_dim_v = -1; }
static void causal_two(call *c) { c->p.causal = 2; }
static void infinite_scale(call *c) { c->p.softmax_scale = INFINITY; }
static void zero_block_m(call *c) { c->bm = 0; }
static void negative_block_n(call *c) { c->bn = -3; }
static void null_q(call *c) { c->q = NULL; }
static void null_k(call *c) { c->k = NULL; }
static void null_v(call *c) { c->v = NULL; }
static void null_o(call *c) { c->o = NULL; c->o_in = NULL; }
static void null_lse(call *c) { c->lse = NULL; c->lse_in = NULL; }
static void null_dout(call *c) { c->dout = NULL; }
static void null_dq(call *c) { c->dq = NULL; }
static void null_dk(call *c) { c->dk = NULL; }
static void null_dv(call *c) { c->dv = NULL; }
static void seq_stride_below_head_dim(call *c) { c->p.q_stride[2] = 15; }
static void head_stride_overlaps_rows(call *c) { c->p.k_stride[1] = 100; }
static void negative_batch_stride(call *c) { c->p.v_stride[0] = -1; }
static void zero_seq_stride(call *c) { c->p.o_stride[2] = 0; }
static void huge_batch_stride(call *c) { c->p.q_stride[0] = LLONG_MAX / 4; }
static void o_is_q(call *c) { c->o = (void *)c->q; }
static void dk_is_dq(call *c) { c->dk = c->dq; }
static void dv_is_dout(call *c) { c->dv = (void *)c->dout; }
static void align_two(call *c) { c->p.causal_align = 2; }
static void window_minus1(call *c) { c->p.window = -1; }
static void left_minus3(call *c) { c->p.window = 1, c->p.window_left = -3; }
static void right_without_window(call *c) { c->p.window_right = 4; }
static void causal_right_two(call *c)
{
    c->p.window = 1, c->p.window_left = -1, c->p.window_right = 2;
}
static void masked_lengths_2_31(call *c) { c->p.seqlen_q = INT_MAX; }
static void heads_k_three(call *c) { c->p.heads_k = 3; }
static void heads_k_negative(call *c) { c->p.heads_k = -1; }
static void softcap_negative(call *c) { c->p.softcap = -1; }
static void softcap_nan(call *c) { c->p.softcap = NAN; }

static const struct {
    const char *name;
    void (*mutate)(call *c);
    int applies;           /* FWD_NAIVE | ... */
    const char *expect;    /* in the message, besides the function name */
} bad_cases[] = {
    {"problem NULL", no_problem, ALL, "problem is NULL"},
    {"batch 0", zero_batch, ALL, "batch=0 must be >= 1"},
    {"heads -2", negative_heads, ALL, "heads=-2"},
    {"seqlen_q 0", zero_seqlen_q, ALL, "seqlen_q=0"},
    {"seqlen_k 0", zero_seqlen_k, ALL, "seqlen_k=0 must be >= 1"},
    {"head_dim 0", zero_head_dim, ALL, "head_dim=0"},
    {"head_dim_v -1", negative_head_dim_v, ALL, "head_dim_v=-1"},
    {"causal 2", causal_two, ALL, "causal=2"},
    {"scale inf", infinite_scale, ALL, "softmax_scale=inf"},
    {"block_m 0", zero_block_m, FWD_TILED | BWD_TILED, "block_m=0"},
    {"block_n -3", negative_block_n, FWD_TILED | BWD_TILED, "block_n=-3"},
    {"q NULL", null_q, ALL, "q is NULL"},
    {"k NULL", null_k, ALL, "k is NULL"},
    {"v NULL", null_v, ALL, "v is NULL"},
    {"o NULL", null_o, FWD_NAIVE | FWD_TILED | BWD_TILED, "o is NULL"},
    {"lse NULL", null_lse, FWD_NAIVE | FWD_TILED | BWD_TILED, "lse is NULL"},
    {"dout NULL", null_dout, BWD_NAIVE | BWD_TILED, "dout is NULL"},
    {"dq NULL", null_dq, BWD_NAIVE | BWD_TILED, "dq is NULL"},
    {"dk NULL", null_dk, BWD_NAIVE | BWD_TILED, "dk is NULL"},
    {"dv NULL", null_dv, BWD_NAIVE | BWD_TILED, "dv is NULL"},
    {"seq stride < head_dim", seq_stride_below_head_dim, ALL, "q_stride[2]=15"},
    {"head stride overlaps rows", head_stride_overlaps_rows, ALL, "k_stride[1]=100"},
    {"negative stride", negative_batch_stride, ALL, "v_stride[0]=-1"},
    {"zero seq stride", zero_seq_stride, ALL, "o_stride[2]=0"},
    {"stride overflows", huge_batch_stride, ALL, "q_stride[0]="},
    {"o aliases q", o_is_q, FWD_NAIVE | FWD_TILED, "o overlaps input q"},
    {"dk aliases dq", dk_is_dq, BWD_NAIVE | BWD_TILED, "dk is the same buffer as dq"},
    {"dv aliases dout", dv_is_dout, BWD_NAIVE | BWD_TILED, "dv overlaps input dout"},
    {"causal_align 2", align_two, ALL, "causal_align=2 must be 0 or 1"},
    {"window -1", window_minus1, ALL, "window=-1 must be 0 or 1"},
    {"window_left -3", left_minus3, ALL, "window_left=-3 must be >= -1"},
    {"window_right without window", right_without_window, ALL, "window_right=4 with window=0"},
    {"causal window_right 2", causal_right_two, ALL, "window_right=2 with causal=1 must be 0"},
    {"masked lengths 2^31", masked_lengths_2_31, ALL, "seqlen_q=2147483647 + seqlen_k=8 must be <"},
    {"heads_k 3 of 2", heads_k_three, ALL, "heads_k=3 must divide heads=2"},
    {"heads_k -1", heads_k_negative, ALL, "heads_k=-1 must divide heads=2"},
    {"softcap -1", softcap_negative, ALL, "softcap=-1 must be finite and >= 0"},
    {"softcap nan", softcap_nan, ALL, "softcap=nan must be finite"},
};

static void bad_input_is_reported(void **state)
{
    (void)state;
    call_buffers bufs;
    const call good = make_call(&bufs);
    char err[256];
    for (int f = 0; f < N_FUNCTIONS; f++) {   /* the baseline is valid for every function */
        call c = good;
        c.pp = &c.p;
        err[0] = '\0';
        expect_ok(functions[f].fn(&c, err, sizeof err), err);
        assert_string_equal(err, "");
    }
    for (size_t b = 0; b < sizeof bad_cases / sizeof bad_cases[0]; b++)
        for (int f = 0; f < N_FUNCTIONS; f++) {
            if (!(bad_cases[b].applies & functions[f].kind))
                continue;
            call c = good;
            c.pp = &c.p;
            bad_cases[b].mutate(&c);
            strcpy(err, "untouched");
            int rc = functions[f].fn(&c, err, sizeof err);
            if (rc != REF_ERR_INVALID || !strstr(err, functions[f].name) ||
                !strstr(err, bad_cases[b].expect))
                fail_msg("%s via %s: rc %d, message \"%s\"; expected %d and \"%s\"",
                         bad_cases[b].name, functions[f].name, rc, err, REF_ERR_INVALID,
                         bad_cases[b].expect);
        }
    /* No buffer, or a short one: still an error code, never an overrun. */
    call c = good;
    c.pp = &c.p;
    c.p.seqlen_k = 0;
    assert_int_equal(fwd_tiled_d(&c, NULL, 0), REF_ERR_INVALID);
    memset(err, 'x', sizeof err);
    assert_int_equal(fwd_tiled_d(&c, err, 8), REF_ERR_INVALID);
    assert_string_equal(err, "ref_for");
    assert_int_equal(err[8], 'x');
    free_call(&bufs);
}

/* Every scratch allocation that fails is reported as REF_ERR_NOMEM and frees what was taken. */
static void allocation_failure_is_reported(void **state)
{
    (void)state;
    call_buffers bufs;
    call c = make_call(&bufs);
    c.pp = &c.p;
    long long base = ref_mem_current_bytes();
    for (int f = 0; f < N_FUNCTIONS; f++) {
        int failures = 0, rc = -1;
        for (long long n = 0; n < 8 && rc != REF_OK; n++) {
            char err[256] = "";
            ref_mem_fail_after(n);
            rc = functions[f].fn(&c, err, sizeof err);
            ref_mem_fail_after(-1);
            assert_int_equal(ref_mem_current_bytes(), base);
            if (rc == REF_OK)
                break;
            failures++;
            if (rc != REF_ERR_NOMEM || !strstr(err, functions[f].name) ||
                !strstr(err, "out of memory"))
                fail_msg("%s, allocation %lld failing: rc %d, message \"%s\"", functions[f].name,
                         n, rc, err);
        }
        assert_int_equal(rc, REF_OK);
        assert_true(failures >= 1);
    }
    free_call(&bufs);
}

/* ---- variable-length batches ---- */

#define VL_B 5
#define VL_H 4
#define VL_HK 2
#define VL_D 8
#define VL_DV 6

static double *vl_random(long long n)
{
    double *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    for (long long i = 0; i < n; i++)
        x[i] = rng_uniform();
    return x;
}

static double *vl_poisoned(long long n)
{
    double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    assert_non_null(x);
    for (long long i = 0; i < n; i++)
        x[i] = NAN;
    return x;
}

/* Bitwise the same, or fail naming the element. */
static void vl_same(const char *what, int seq, const double *got, const double *want, long long n)
{
    for (long long i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)
            fail_msg("%s, sequence %d, element %lld: %.17g, alone %.17g", what, seq, i, got[i], want[i]);
}

/* A variable-length batch is its sequences run one by one: packed [total, heads, dim] tensors
 * through cu_seqlens (an empty sequence of queries, one of keys; grouped heads; masks placed by
 * each sequence's own lengths; a softcap) give, naive and tiled, forward and backward, the bits of
 * each sequence as a dense problem of its own, pointing into the same packed rows. */
static void varlen_is_each_sequence_alone(void **state)
{
    (void)state;
    static const int lq[VL_B] = { 5, 0, 17, 9, 2 }, lk[VL_B] = { 7, 3, 17, 1, 0 };
    int cuq[VL_B + 1] = { 0 }, cuk[VL_B + 1] = { 0 };
    for (int b = 0; b < VL_B; b++)
        cuq[b + 1] = cuq[b] + lq[b], cuk[b + 1] = cuk[b] + lk[b];
    const int tq = cuq[VL_B], tk = cuk[VL_B];
    static const struct { int causal, align, window, left, right; double cap; } masks[] = {
        { 0, 0, 0, 0, 0, 0 }, { 1, 1, 0, 0, 0, 1.5 }, { 1, 0, 0, 0, 0, 0 }, { 0, 1, 1, 3, 1, 0 },
    };
    rng_seed(77);
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        ref_problem p;
        ref_problem_init(&p, VL_B, VL_H, 17, 17, VL_D, VL_DV, masks[m].causal, 0);
        p.heads_k = VL_HK;
        p.causal_align = masks[m].align;
        p.window = masks[m].window;
        p.window_left = masks[m].left;
        p.window_right = masks[m].right;
        p.softcap = masks[m].cap;
        const long long qs[3] = { 0, VL_D, VL_H * VL_D }, ks[3] = { 0, VL_D, VL_HK * VL_D };
        const long long vs[3] = { 0, VL_DV, VL_HK * VL_DV }, os[3] = { 0, VL_DV, VL_H * VL_DV };
        memcpy(p.q_stride, qs, sizeof qs), memcpy(p.k_stride, ks, sizeof ks);
        memcpy(p.v_stride, vs, sizeof vs), memcpy(p.o_stride, os, sizeof os);
        p.cu_seqlens_q = cuq;
        p.cu_seqlens_k = cuk;
        const long long nq = (long long)tq * VL_H * VL_D, nk = (long long)tk * VL_HK * VL_D;
        const long long nv = (long long)tk * VL_HK * VL_DV, no = (long long)tq * VL_H * VL_DV;
        assert_int_equal(ref_extent_q(&p), nq);
        assert_int_equal(ref_extent_lse(&p), (long long)VL_H * tq);
        double *q = vl_random(nq), *k = vl_random(nk), *v = vl_random(nv), *dout = vl_random(no);
        char err[256] = "";
        for (int tiled = 0; tiled < 2; tiled++) {
            double *o = vl_poisoned(no), *lse = vl_poisoned((long long)VL_H * tq);
            double *dq = vl_poisoned(nq), *dk = vl_poisoned(nk), *dv = vl_poisoned(nv);
            if (tiled) {
                expect_ok(ref_forward_tiled_d(&p, 4, 8, q, k, v, o, lse, NULL, err, sizeof err), err);
                expect_ok(ref_backward_tiled_d(&p, 4, 8, q, k, v, o, lse, dout, dq, dk, dv, NULL, err, sizeof err),
                          err);
            } else {
                expect_ok(ref_forward_naive_d(&p, q, k, v, o, lse, err, sizeof err), err);
                expect_ok(ref_backward_naive_d(&p, q, k, v, dout, dq, dk, dv, err, sizeof err), err);
            }
            for (int b = 0; b < VL_B; b++) {
                if (lq[b] == 0) {   /* no queries: its keys get dK = dV = 0 */
                    for (long long i = 0; i < (long long)lk[b] * VL_HK * VL_D; i++)
                        assert_true(dk[(long long)cuk[b] * VL_HK * VL_D + i] == 0);
                    continue;
                }
                if (lk[b] == 0) {   /* no keys: O = 0, L = +inf, dQ = 0 */
                    for (long long i = 0; i < (long long)lq[b] * VL_H * VL_DV; i++)
                        assert_true(o[(long long)cuq[b] * VL_H * VL_DV + i] == 0);
                    for (int h = 0; h < VL_H; h++)
                        for (int i = 0; i < lq[b]; i++)
                            assert_true(isinf(lse[(long long)h * tq + cuq[b] + i]));
                    for (long long i = 0; i < (long long)lq[b] * VL_H * VL_D; i++)
                        assert_true(dq[(long long)cuq[b] * VL_H * VL_D + i] == 0);
                    continue;
                }
                ref_problem a = p;   /* the sequence alone: one batch of its lengths, the same rows */
                a.batch = 1;
                a.seqlen_q = lq[b];
                a.seqlen_k = lk[b];
                a.cu_seqlens_q = a.cu_seqlens_k = NULL;
                const long long q0 = (long long)cuq[b] * VL_H, k0 = (long long)cuk[b] * VL_HK;
                const long long aq = (long long)lq[b] * VL_H * VL_D, ak = (long long)lk[b] * VL_HK * VL_D;
                const long long av = (long long)lk[b] * VL_HK * VL_DV, ao = (long long)lq[b] * VL_H * VL_DV;
                double *o1 = vl_poisoned(ao), *l1 = vl_poisoned((long long)VL_H * lq[b]);
                double *dq1 = vl_poisoned(aq), *dk1 = vl_poisoned(ak), *dv1 = vl_poisoned(av);
                const double *qb = q + q0 * VL_D, *kb = k + k0 * VL_D, *vb = v + k0 * VL_DV, *dob = dout + q0 * VL_DV;
                if (tiled) {
                    expect_ok(ref_forward_tiled_d(&a, 4, 8, qb, kb, vb, o1, l1, NULL, err, sizeof err), err);
                    expect_ok(ref_backward_tiled_d(&a, 4, 8, qb, kb, vb, o1, l1, dob, dq1, dk1, dv1, NULL, err,
                                                   sizeof err), err);
                } else {
                    expect_ok(ref_forward_naive_d(&a, qb, kb, vb, o1, l1, err, sizeof err), err);
                    expect_ok(ref_backward_naive_d(&a, qb, kb, vb, dob, dq1, dk1, dv1, err, sizeof err), err);
                }
                vl_same("O", b, o + q0 * VL_DV, o1, ao);
                for (int h = 0; h < VL_H; h++)
                    vl_same("L", b, lse + (long long)h * tq + cuq[b], l1 + (long long)h * lq[b], lq[b]);
                vl_same("dQ", b, dq + q0 * VL_D, dq1, aq);
                vl_same("dK", b, dk + k0 * VL_D, dk1, ak);
                vl_same("dV", b, dv + k0 * VL_DV, dv1, av);
                free(o1), free(l1), free(dq1), free(dk1), free(dv1);
            }
            free(o), free(lse), free(dq), free(dk), free(dv);
        }
        free(q), free(k), free(v), free(dout);
    }
}

/* Bad prefix sums are refused, naming the array, the index and the values. */
static void varlen_bad_prefix_sums(void **state)
{
    (void)state;
    static const int good[3] = { 0, 4, 8 }, decreasing[3] = { 0, 6, 5 }, offset[3] = { 1, 4, 9 }, longer[3] = { 0, 2, 12 };
    const struct { const int *q, *k; const char *expected; } cases[] = {
        { decreasing, good, "cu_seqlens_q[2]=5 is less than cu_seqlens_q[1]=6 (prefix sums never decrease)" },
        { good, offset, "cu_seqlens_k[0]=1 must be 0" },
        { good, longer, "sequence 1 has 10 rows (cu_seqlens_k), more than seqlen_k=8" },
        { good, NULL, "cu_seqlens_k is NULL while cu_seqlens_q is not (give both or neither)" },
    };
    double buf[1024];
    for (int i = 0; i < 1024; i++)
        buf[i] = 0.25;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ref_problem p;
        ref_problem_init(&p, 2, 1, 8, 8, 4, 4, 0, 0);
        const long long st[3] = { 0, 4, 4 };
        memcpy(p.q_stride, st, sizeof st), memcpy(p.k_stride, st, sizeof st);
        memcpy(p.v_stride, st, sizeof st), memcpy(p.o_stride, st, sizeof st);
        p.cu_seqlens_q = cases[c].q;
        p.cu_seqlens_k = cases[c].k;
        double o[64], lse[16];
        char err[256] = "";
        assert_int_equal(ref_forward_naive_d(&p, buf, buf + 100, buf + 200, o, lse, err, sizeof err), REF_ERR_INVALID);
        if (!strstr(err, cases[c].expected))
            fail_msg("case %zu: '%s' does not say '%s'", c, err, cases[c].expected);
    }
}

/* ---- attention sinks ---- */

/* Sink logits of heads heads: spread over and past the scores' range (|S| < D * scale here), so
 * some rows' sinks dominate and some hardly count. */
static double *sinks_new(int heads, uint64_t seed)
{
    rng_seed(seed);
    double *s = malloc(sizeof(double) * (size_t)heads);
    assert_non_null(s);
    for (int h = 0; h < heads; h++)
        s[h] = 4.0 * rng_uniform();
    return s;
}

static void sinks_grad_d(const ref_problem *p, const outputs *out, const inputs *in, double *dsinks)
{
    char err[256] = "";
    expect_ok(ref_sinks_grad_d(p, out->o.d, out->lse.d, in->dout.d, dsinks, err, sizeof err), err);
}

/* With a sink, a row that sees no key has O = 0, dQ = 0 and L = its head's sink. */
static void expect_sink_rows(const char *name, const ref_problem *p, const outputs *out)
{
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->heads; h++)
            for (int i = 0; i < p->seqlen_q; i++) {
                if (in_band(p, i, 0))
                    continue;
                if (*tensor_at(&out->lse, b, h, i, 0) != p->sinks[h])
                    fail_msg("%s: row %d sees no key: lse %g, expected the sink %g", name, i,
                             *tensor_at(&out->lse, b, h, i, 0), p->sinks[h]);
                expect_zero_row(name, "o of a row with only the sink", &out->o, b, h, i);
                expect_zero_row(name, "dq of a row with only the sink", &out->dq, b, h, i);
            }
}

/* Tiled against naive with sinks, masks with rows that see no key among them, grouped heads, a
 * softcap (which leaves the sink uncapped) and strided layouts; the tiled float path against
 * them; the sinks' gradient in both precisions. */
static void sinks_tiled_match_naive(void **state)
{
    (void)state;
    for (size_t m = 0; m < sizeof mask_cases / sizeof mask_cases[0]; m++) {
        ref_problem p = mask_problem(&mask_cases[m]);
        double *sinks = sinks_new(p.heads, 500 + m);
        p.sinks = sinks;
        if (m % 3 == 1)
            p.softcap = 2.5;
        if (m % 4 == 2 && p.heads % 2 == 0)
            p.heads_k = p.heads / 2;
        inputs in = inputs_new(&p, 600 + m);
        outputs naive = outputs_new(&p), tiled = outputs_new(&p);
        run_naive_d(&p, &in, &naive);
        run_tiled_d(&p, mask_cases[m].c.block_m, mask_cases[m].c.block_n, &in, &tiled, NULL, NULL);
        expect_outputs_close(mask_cases[m].c.name, &tiled, &naive, 1e-10);
        expect_sink_rows(mask_cases[m].c.name, &p, &tiled);
        double *got = malloc(sizeof(double) * (size_t)p.heads * 2), *want = got + p.heads;
        assert_non_null(got);
        sinks_grad_d(&p, &tiled, &in, got);
        /* from first principles: -sum of exp(sink - L) rowsum(dO * O) over the naive outputs */
        for (int h = 0; h < p.heads; h++) {
            want[h] = 0;
            for (int b = 0; b < p.batch; b++)
                for (int i = 0; i < p.seqlen_q; i++) {
                    double delta = 0;
                    for (int c = 0; c < p.head_dim_v; c++)
                        delta += *tensor_at(&in.dout, b, h, i, c) * *tensor_at(&naive.o, b, h, i, c);
                    want[h] -= exp(sinks[h] - *tensor_at(&naive.lse, b, h, i, 0)) * delta;
                }
            if (!(fabs(got[h] - want[h]) <= 1e-10 * (1 + fabs(want[h]))))
                fail_msg("%s: dsinks[%d] %.17g, expected %.17g", mask_cases[m].c.name, h, got[h], want[h]);
        }
        /* float: the tiled forward and the sinks' gradient against the double ones */
        tensor *fl[] = {&in.q, &in.k, &in.v, &in.dout, &tiled.o, &tiled.lse};
        for (size_t t = 0; t < sizeof fl / sizeof fl[0]; t++)
            tensor_to_float(fl[t]);
        char err[256] = "";
        expect_ok(ref_forward_tiled_f(&p, 16, 16, in.q.f, in.k.f, in.v.f, tiled.o.f, tiled.lse.f, NULL, err,
                                      sizeof err), err);
        float *dsf = malloc(sizeof(float) * (size_t)p.heads);
        assert_non_null(dsf);
        expect_ok(ref_sinks_grad_f(&p, tiled.o.f, tiled.lse.f, in.dout.f, dsf, err, sizeof err), err);
        tensor_from_float(&tiled.o);
        tensor_from_float(&tiled.lse);
        expect_close("float o with sinks", &tiled.o, &naive.o, 1e-5);
        for (int h = 0; h < p.heads; h++)
            if (!(fabs(dsf[h] - want[h]) <= 1e-4 * (1 + fabs(want[h]))))
                fail_msg("%s: float dsinks[%d] %g, expected %g", mask_cases[m].c.name, h, dsf[h], want[h]);
        free(dsf);
        free(got);
        free(sinks);
        inputs_free(&in);
        outputs_free(&naive);
        outputs_free(&tiled);
    }
}

/* A sink is a key whose score is the sink for every query and whose value is zero: with one
 * more head-dim column (1 in every query, 0 in every key) and one more key in front (zeros, then
 * sink / scale in the new column; value zero), the plain problem gives the same O, L, dQ, dK, dV,
 * and its new key's gradient in the new column is scale * dsinks. Unmasked, so the key in front
 * moves no diagonal. */
static void sinks_are_a_key_without_value(void **state)
{
    (void)state;
    const attn_case c = {"sink_as_key", 2, 3, 37, 29, 16, 24, 0, 0.3, 16, 16, BHND};
    ref_problem p = problem_for(&c);
    double *sinks = sinks_new(p.heads, 41);
    p.sinks = sinks;
    inputs in = inputs_new(&p, 42);
    outputs got = outputs_new(&p);
    run_tiled_d(&p, 16, 8, &in, &got, NULL, NULL);
    double dsinks[3];
    sinks_grad_d(&p, &got, &in, dsinks);

    const attn_case xc = {"key_in_front", 2, 3, 37, 30, 17, 24, 0, 0.3, 16, 16, BHND};
    ref_problem x = problem_for(&xc);
    inputs xin = inputs_new(&x, 43);
    outputs xout = outputs_new(&x);
    for (int b = 0; b < p.batch; b++)
        for (int h = 0; h < p.heads; h++) {
            for (int i = 0; i < p.seqlen_q; i++) {
                for (int d = 0; d < p.head_dim; d++)
                    *tensor_at(&xin.q, b, h, i, d) = *tensor_at(&in.q, b, h, i, d);
                *tensor_at(&xin.q, b, h, i, p.head_dim) = 1;
                for (int d = 0; d < p.head_dim_v; d++)
                    *tensor_at(&xin.dout, b, h, i, d) = *tensor_at(&in.dout, b, h, i, d);
            }
            for (int d = 0; d < p.head_dim; d++)
                *tensor_at(&xin.k, b, h, 0, d) = 0;
            *tensor_at(&xin.k, b, h, 0, p.head_dim) = sinks[h] / 0.3;
            for (int d = 0; d < p.head_dim_v; d++)
                *tensor_at(&xin.v, b, h, 0, d) = 0;
            for (int j = 0; j < p.seqlen_k; j++) {
                for (int d = 0; d < p.head_dim; d++)
                    *tensor_at(&xin.k, b, h, j + 1, d) = *tensor_at(&in.k, b, h, j, d);
                *tensor_at(&xin.k, b, h, j + 1, p.head_dim) = 0;
                for (int d = 0; d < p.head_dim_v; d++)
                    *tensor_at(&xin.v, b, h, j + 1, d) = *tensor_at(&in.v, b, h, j, d);
            }
        }
    run_naive_d(&x, &xin, &xout);
    for (int b = 0; b < p.batch; b++)
        for (int h = 0; h < p.heads; h++) {
            for (int i = 0; i < p.seqlen_q; i++) {
                assert_true(fabs(*tensor_at(&got.lse, b, h, i, 0) - *tensor_at(&xout.lse, b, h, i, 0)) < 1e-12);
                for (int d = 0; d < p.head_dim_v; d++)
                    assert_true(fabs(*tensor_at(&got.o, b, h, i, d) - *tensor_at(&xout.o, b, h, i, d)) < 1e-12);
                for (int d = 0; d < p.head_dim; d++)
                    assert_true(fabs(*tensor_at(&got.dq, b, h, i, d) - *tensor_at(&xout.dq, b, h, i, d)) < 1e-12);
            }
            for (int j = 0; j < p.seqlen_k; j++) {
                for (int d = 0; d < p.head_dim; d++)
                    assert_true(fabs(*tensor_at(&got.dk, b, h, j, d) - *tensor_at(&xout.dk, b, h, j + 1, d)) < 1e-12);
                for (int d = 0; d < p.head_dim_v; d++)
                    assert_true(fabs(*tensor_at(&got.dv, b, h, j, d) - *tensor_at(&xout.dv, b, h, j + 1, d)) < 1e-12);
            }
        }
    /* dsinks[h] sums over the batch: the key's gradient in the new column, per batch, over scale */
    for (int h = 0; h < p.heads; h++) {
        double want = 0;
        for (int b = 0; b < p.batch; b++)
            want += *tensor_at(&xout.dk, b, h, 0, p.head_dim) / 0.3;
        if (!(fabs(dsinks[h] - want) < 1e-11))
            fail_msg("dsinks[%d] %.17g, the key in front says %.17g", h, dsinks[h], want);
    }
    free(sinks);
    inputs_free(&in);
    inputs_free(&xin);
    outputs_free(&got);
    outputs_free(&xout);
}

/* dsinks against central differences of sum(O * W), with rows that see no key (bottom-right,
 * seqlen_q > seqlen_k) among them. */
static void sinks_gradient_matches_finite_differences(void **state)
{
    (void)state;
    const attn_case c = {"fd_sinks", 2, 2, 64, 40, 32, 32, 1, 0.0, 16, 16, BHND};
    ref_problem p = problem_for(&c);
    p.causal_align = 1;
    double *sinks = sinks_new(p.heads, 91);
    p.sinks = sinks;
    inputs in = inputs_new(&p, 92);   /* in.dout doubles as W */
    outputs out = outputs_new(&p), scratch = outputs_new(&p);
    run_tiled_d(&p, 16, 16, &in, &out, NULL, NULL);
    double dsinks[2];
    sinks_grad_d(&p, &out, &in, dsinks);
    for (int h = 0; h < p.heads; h++) {
        const double eps = 1e-5, keep = sinks[h];
        sinks[h] = keep + eps;
        const double up = fd_loss(&p, &in, &in.dout, &scratch);
        sinks[h] = keep - eps;
        const double down = fd_loss(&p, &in, &in.dout, &scratch);
        sinks[h] = keep;
        const double fd = (up - down) / (2 * eps);
        print_message("finite differences dsinks[%d]: %.10g, analytic %.10g\n", h, fd, dsinks[h]);
        if (!(fabs(fd - dsinks[h]) <= 1e-6 * (1 + fabs(fd))))
            fail_msg("dsinks[%d] %.10g, finite differences %.10g", h, dsinks[h], fd);
    }
    /* and a sink makes no difference to the other gradients' agreement with finite differences */
    expect_gradients_match_fd("causal bottom-right 64 x 40 with sinks", &p);
    free(sinks);
    inputs_free(&in);
    outputs_free(&out);
    outputs_free(&scratch);
}

/* A sink that is not finite, and a sinks gradient without sinks, are refused by name. */
static void sinks_bad_input_is_reported(void **state)
{
    (void)state;
    const attn_case c = {"bad_sinks", 1, 2, 8, 8, 16, 16, 0, 0.0, 16, 16, BHND};
    ref_problem p = problem_for(&c);
    inputs in = inputs_new(&p, 7);
    outputs out = outputs_new(&p);
    char err[256] = "";
    double dsinks[2];
    assert_int_equal(ref_sinks_grad_d(&p, out.o.d, out.lse.d, in.dout.d, dsinks, err, sizeof err), REF_ERR_INVALID);
    assert_non_null(strstr(err, "ref_sinks_grad_d: sinks is NULL"));
    double sinks[2] = {0.5, NAN};
    p.sinks = sinks;
    assert_int_equal(ref_forward_tiled_d(&p, 16, 16, in.q.d, in.k.d, in.v.d, out.o.d, out.lse.d, NULL, err,
                                         sizeof err), REF_ERR_INVALID);
    assert_non_null(strstr(err, "sinks[1]=nan must be finite"));
    sinks[1] = 1.0;
    assert_int_equal(ref_sinks_grad_d(&p, out.o.d, out.lse.d, in.dout.d, NULL, err, sizeof err), REF_ERR_INVALID);
    assert_non_null(strstr(err, "dsinks is NULL"));
    inputs_free(&in);
    outputs_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(naive_matches_hand_values),
        cmocka_unit_test(tiled_matches_naive),
        cmocka_unit_test(tf32_splits_keep_float_accuracy),
        cmocka_unit_test(bf16_products_keep_float_accuracy),
        cmocka_unit_test(product_models_are_checked),
        cmocka_unit_test(bf16_rounds_to_nearest_even),
        cmocka_unit_test(bf16_parts_sum_exactly),
        cmocka_unit_test(gradients_match_finite_differences),
        cmocka_unit_test(tiled_scratch_is_o_tile),
        cmocka_unit_test(naive_peak_counts_the_score_matrix),
        cmocka_unit_test(float_tiled_matches_double_naive),
        cmocka_unit_test(causal_cross_lengths),
        cmocka_unit_test(causal_tiles_are_skipped),
        cmocka_unit_test(masks_bottom_right_and_windows),
        cmocka_unit_test(grouped_heads_and_softcap),
        cmocka_unit_test(varlen_is_each_sequence_alone),
        cmocka_unit_test(varlen_bad_prefix_sums),
        cmocka_unit_test(sinks_tiled_match_naive),
        cmocka_unit_test(sinks_are_a_key_without_value),
        cmocka_unit_test(sinks_gradient_matches_finite_differences),
        cmocka_unit_test(sinks_bad_input_is_reported),
        cmocka_unit_test(bad_input_is_reported),
        cmocka_unit_test(allocation_failure_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
