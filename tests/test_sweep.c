/* The sweep's CPU-checkable parts: timing statistics, the FLOP count, the worker's result
 * lines, error comparison, the prune count, the default-configuration test, the resume filter
 * against a database holding some results, the stored winners a space lacks added to its
 * candidates (and the plan's resume with them), and `flashtune tune` without a GPU (compile only,
 * exit 0, nothing stored). The GPU path itself runs on the GPU machine. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_internal.h"
#include "rt_internal.h"
#include "tune_sweep.h"
#include "tune_sweep_internal.h"
#include "tune_worker.h"

int cmd_tune(int argc, char **argv);   /* tuner/cmd_tune.c */

typedef struct stats_case {
    const char *name;
    float ms[8];
    int n;
    double median, min, spread;
} stats_case;

static const stats_case stats_cases[] = {
    { "one value", { 2 }, 1, 2, 2, 0 },
    { "constant", { 5, 5, 5, 5 }, 4, 5, 5, 0 },
    { "odd, sorted", { 1, 2, 3, 4, 5 }, 5, 3, 1, (4.6 - 1.4) / 3 },
    { "even, shuffled", { 4, 1, 3, 2 }, 4, 2.5, 1, (3.7 - 1.3) / 2.5 },
    { "outlier", { 1, 1, 1, 1, 1, 1, 1, 100 }, 8, 1, 1, (1 + 0.3 * 99 - 1) / 1 },
};

static void test_stats(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof stats_cases / sizeof stats_cases[0]; i++) {
        const stats_case *c = &stats_cases[i];
        float ms[8];
        memcpy(ms, c->ms, sizeof ms);
        double median, min, spread;
        assert_int_equal(tune_stats(ms, c->n, &median, &min, &spread), 0);
        if (fabs(median - c->median) > 1e-6 || fabs(min - c->min) > 1e-6 || fabs(spread - c->spread) > 1e-6) {
            printf("  %s: expected median %g min %g spread %g, got %g %g %g\n", c->name, c->median, c->min, c->spread,
                   median, min, spread);
            fail();
        }
    }
    double m, n, s;
    float none[1];
    assert_int_equal(tune_stats(none, 0, &m, &n, &s), -1);
}

/* The warm-up after pauses (tune_warmup_ms): a worker's timings one after another, each starting
 * `gap` seconds after the last ended and lasting `lasts` seconds from its start; the warm-up in ms
 * each must get with the bench's 10 ms. */
typedef struct warmup_case {
    const char *name;
    double gap, lasts, want;
} warmup_case;

static void test_warmup_after_pauses(void **state)
{
    (void)state;
    const warmup_case steps[] = {
        { "the first timing: a whole pre-heat", 5.0, 0.26, 200 },
        { "a short gap after 260 ms of load", 0.005, 0.07, 10 },
        { "a gap of 50 ms: 50 ms of the pre-heat again", 0.05, 0.11, 50 },
        { "the compiler's pause of 3 s: all of it", 3.0, 0.26, 200 },
        { "a gap of 150 ms after the cap (not the 260 ms before it)", 0.15, 0.2, 150 },
        { "one of 199 ms after 200 of load: 199", 0.199, 0.25, 199 },
        { "none: the bench's own", 0.0, 0.06, 10 },
    };
    tune_load l = { 0, 0 };
    double now = 100.0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        now += steps[i].gap;
        const double got = tune_warmup_ms(&l, 10, now);
        if (fabs(got - steps[i].want) > 1e-6) {
            printf("  %s: expected %g ms, got %g\n", steps[i].name, steps[i].want, got);
            fail();
        }
        now += steps[i].lasts;
        l.idle_since = now;
    }
}

typedef struct flops_case {
    const char *name;
    db_workload w;
    int backward;
    double flops;
} flops_case;

/* A workload of dtype, head dims, causal, batch, heads and lengths; the rest set by the case. */
#define FW(dt, d, dv, c, b, h, sq, sk, ...)                                                                      \
    { .dtype = dt, .head_dim = d, .head_dim_v = dv, .causal = c, .batch = b, .heads = h, .seqlen_q = sq,         \
      .seqlen_k = sk, __VA_ARGS__ }

static const flops_case flops_cases[] = {
    { "fwd 4x16x4096 d128", FW(2, 128, 128, 0, 4, 16, 4096, 4096), 0, 4.0 * 4 * 16 * 4096 * 4096 * 128 },
    { "fwd causal halves", FW(2, 128, 128, 1, 4, 16, 4096, 4096), 0, 2.0 * 4 * 16 * 4096 * 4096 * 128 },
    { "bwd is 2.5x", FW(2, 128, 128, 0, 4, 16, 4096, 4096), 1, 2.5 * 4.0 * 4 * 16 * 4096 * 4096 * 128 },
    { "bwd causal", FW(1, 64, 64, 1, 1, 2, 100, 300), 1, 2.5 * 2.0 * 2 * 100 * 300 * 64 },
    { "Dv differs", FW(2, 64, 128, 0, 1, 1, 10, 20), 0, 2.0 * 10 * 20 * (64 + 128) },
    { "grouped heads and a softcap do not change the FLOPs", FW(2, 128, 128, 0, 4, 16, 4096, 4096, .heads_k = 2,
      .softcap = 1), 0, 4.0 * 4 * 16 * 4096 * 4096 * 128 },
    /* A window counts the pairs it shows: 10 queries and keys, 2 left and 1 right of the diagonal:
     * rows 0, 1 and 9 see 2, 3 and 3 keys, rows 2 to 8 four each: 36. */
    { "a window counts its band", FW(2, 64, 64, 0, 1, 1, 10, 10, .window = 1, .window_left = 2, .window_right = 1), 0,
      4.0 * 36 * 64 },
    /* Bottom-right causal, 4 queries over 6 keys: query i sees keys 0..i+2, 3+4+5+6 = 18 pairs. */
    { "a bottom-right diagonal counts its pairs", FW(2, 64, 64, 1, 1, 1, 4, 6, .bottom_right = 1), 0, 4.0 * 18 * 64 },
    /* One sequence is always full: bucket 8, the dense count. */
    { "a varlen batch of one", FW(2, 64, 64, 0, 1, 2, 100, 100, .varlen = 8), 0, 4.0 * 2 * 100 * 100 * 64 },
};

static void test_flops(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof flops_cases / sizeof flops_cases[0]; i++) {
        const flops_case *c = &flops_cases[i];
        double got = tune_flops(&c->w, c->backward);
        if (fabs(got - c->flops) > 1e-9 * c->flops) {
            printf("  %s: expected %.6g, got %.6g\n", c->name, c->flops, got);
            fail();
        }
    }
    /* TFLOP/s as the sweep computes it: 549.76 GFLOP in 1 ms is 549.76 TFLOP/s. */
    double tf = tune_flops(&flops_cases[0].w, 0) / (1.0 * 1e-3) / 1e12;
    assert_true(fabs(tf - 549.755813888) < 1e-6);
}

static void test_record_lines(void **state)
{
    (void)state;
    tune_record r, back;
    char line[1024];
    tune_record_init(&r, 7);
    r.median_ms = 1.25, r.min_ms = 1.125, r.spread = 0.03125, r.tflops = 439.8, r.rel_error = 2e-3, r.max_abs_error = 0.0625;
    tune_record_format(&r, line, sizeof line);
    assert_int_equal(tune_record_parse(line, &back), 0);
    assert_int_equal(back.id, 7);
    assert_int_equal(back.status, DB_STATUS_OK);
    assert_true(back.median_ms == 1.25 && back.min_ms == 1.125 && back.spread == 0.03125);
    assert_true(fabs(back.tflops - 439.8) < 1e-9 && fabs(back.rel_error - 2e-3) < 1e-15);
    assert_true(isnan(back.sm_mhz) && back.clock_events == -1);   /* not sampled */
    assert_string_equal(back.message, "");
    r.sm_mhz = 1755, r.clock_events = 0x24;   /* sampled: power cap and thermal slowdown */
    tune_record_format(&r, line, sizeof line);
    assert_int_equal(tune_record_parse(line, &back), 0);
    assert_true(back.sm_mhz == 1755 && back.clock_events == 0x24);

    tune_record_init(&r, 3);
    r.status = DB_STATUS_CRASHED;
    snprintf(r.message, sizeof r.message, "kernel: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal\nmemory access");
    tune_record_format(&r, line, sizeof line);
    assert_non_null(strchr(line, '\n'));
    assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);   /* one line */
    assert_int_equal(tune_record_parse(line, &back), 0);
    assert_int_equal(back.status, DB_STATUS_CRASHED);
    assert_true(isnan(back.median_ms) && isnan(back.tflops));
    assert_string_equal(back.message, "kernel: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access");

    assert_int_equal(tune_record_parse("R 1 exploded 1 1 1 1 1 1 1 0 -", &back), -1);
    assert_int_equal(tune_record_parse("R 1 ok 1 1 1 1 1 1 -", &back), -1);   /* the clocks missing */
    assert_int_equal(tune_record_parse("B 1", &back), -1);
    assert_int_equal(tune_record_parse("R 1 ok 1 2", &back), -1);
}

/* A worker's READY line carries its set-up's phases; anything else is not one. */
static void test_ready_lines(void **state)
{
    (void)state;
    char line[256];
    const tune_setup_times t = { 0.3125, 0.0625, 0.125, 1.5 };
    tune_setup_times back;
    tune_ready_format(&t, line, sizeof line);
    assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);   /* one line */
    assert_int_equal(tune_ready_parse(line, &back), 0);
    assert_true(back.open_s == 0.3125 && back.clocks_s == 0.0625 && back.inputs_s == 0.125 && back.reference_s == 1.5);
    const char *bad[] = {
        "READY", "READY 1 2 3", "READY 1 2 3 4 5", "READY 1 2 -3 4", "READY 1 nan 3 4", "READY 1 inf 3 4",
        "R 1 2 3 4", "READY 1 2 3 x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tune_ready_parse(bad[i], &back) != -1)
            fail_msg("'%s' parsed as a READY line", bad[i]);
}

static void test_compare(void **state)
{
    (void)state;
    const double want[4] = { 1, -2, 3, 4 };
    double got[4] = { 1, -2, 3, 4 }, rel, mx;
    assert_int_equal(tune_compare(got, want, 4, &rel, &mx), 0);
    assert_true(rel == 0 && mx == 0);
    got[3] = 5;   /* |diff| 1 over ||want|| sqrt(30) */
    assert_int_equal(tune_compare(got, want, 4, &rel, &mx), 0);
    assert_true(fabs(rel - 1 / sqrt(30.0)) < 1e-12 && mx == 1);
    got[1] = NAN;
    got[2] = INFINITY;
    assert_int_equal(tune_compare(got, want, 4, &rel, &mx), 2);
    assert_true(isinf(rel));
    assert_true(tune_threshold(0, 0) == 1e-5 && tune_threshold(0, 1) == 2e-3 && tune_threshold(1, 0) == 3e-3 &&
                tune_threshold(2, 0) == 1e-2 &&
                tune_threshold(3, 0) == 1e-12);
}

static void test_keep_and_default(void **state)
{
    (void)state;
    static const struct { int timed; double keep; int expected; } keeps[] = {
        { 0, 0.25, 0 }, { 1, 0.25, 1 }, { 4, 0.25, 1 }, { 5, 0.25, 2 }, { 16, 0.25, 4 }, { 10, 1.0, 10 }, { 3, 0.01, 1 },
    };
    for (size_t i = 0; i < sizeof keeps / sizeof keeps[0]; i++)
        if (tune_sweep_keep_count(keeps[i].timed, keeps[i].keep) != keeps[i].expected) {
            printf("  keep(%d, %g): expected %d, got %d\n", keeps[i].timed, keeps[i].keep, keeps[i].expected,
                   tune_sweep_keep_count(keeps[i].timed, keeps[i].keep));
            fail();
        }
    gen_config c;
    gen_config_init(&c, gen_family_find("fwd_mma"));
    c.p[GEN_DTYPE] = 1, c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 64, c.p[GEN_CAUSAL] = 1, c.p[GEN_EVEN_M] = 1;
    assert_int_equal(tune_sweep_is_default(&c), 1);   /* the workload's parameters do not count */
    c.p[GEN_BLOCK_M] *= 2;
    assert_int_equal(tune_sweep_is_default(&c), 0);
}

/* The confirm step's choice of finalists and its combined record. */
static void test_confirm(void **state)
{
    (void)state;
    /* medians (ms); -1: failed; 0: never timed (id -1) */
    static const double med[] = { 1.30, 1.00, -1, 1.04, 0, 1.02, 1.20, 1.049, 1.03 };
    enum { N = sizeof med / sizeof med[0] };
    tune_record t[N];
    for (int i = 0; i < N; i++) {
        tune_record_init(&t[i], med[i] == 0 ? -1 : i);
        t[i].status = med[i] < 0 ? DB_STATUS_INVALID : DB_STATUS_OK;
        t[i].median_ms = med[i] > 0 ? med[i] : NAN;
    }
    int fin[16];
    tune_confirm cf = { .top = 4, .within = 0.05, .rounds = 3 };
    assert_int_equal(tune_confirm_finalists(t, N, &cf, -1, fin), 4);   /* 1.00 1.02 1.03 1.04; 1.049 is fifth */
    assert_int_equal(fin[0], 1);
    assert_int_equal(fin[1], 5);
    assert_int_equal(fin[2], 8);
    assert_int_equal(fin[3], 3);
    cf.top = 8;
    assert_int_equal(tune_confirm_finalists(t, N, &cf, -1, fin), 5);   /* within 5 %: up to 1.05 */
    assert_int_equal(fin[4], 7);
    cf.within = 0.01;
    assert_int_equal(tune_confirm_finalists(t, N, &cf, -1, fin), 0);   /* the best alone: nothing to confirm */
    cf.within = 0.025;
    assert_int_equal(tune_confirm_finalists(t, N, &cf, -1, fin), 2);
    /* The incumbent (must) joins however slow, in the slowest finalist's place where they are
     * full; not where it failed or was never timed; once where it is a finalist already. */
    cf.top = 4, cf.within = 0.05;
    assert_int_equal(tune_confirm_finalists(t, N, &cf, 6, fin), 4);   /* 1.20 for 1.04 */
    assert_int_equal(fin[3], 6);
    cf.within = 0.01;
    assert_int_equal(tune_confirm_finalists(t, N, &cf, 0, fin), 2);   /* the best and 1.30 */
    assert_int_equal(fin[0], 1);
    assert_int_equal(fin[1], 0);
    assert_int_equal(tune_confirm_finalists(t, N, &cf, 2, fin), 0);   /* failed */
    assert_int_equal(tune_confirm_finalists(t, N, &cf, 4, fin), 0);   /* never timed */
    assert_int_equal(tune_confirm_finalists(t, N, &cf, 1, fin), 0);   /* the best alone still */
    cf.within = 0.05;
    assert_int_equal(tune_confirm_finalists(t, N, &cf, 5, fin), 4);
    assert_int_equal(fin[3], 3);
    cf.rounds = 0;
    assert_int_equal(tune_confirm_finalists(t, N, &cf, 0, fin), 0);

    tune_record r[4];
    const double rm[] = { 2.0, 2.6, 2.2, 2.4 }, rmin[] = { 1.9, 2.5, 1.8, 2.3 };
    for (int i = 0; i < 4; i++) {
        tune_record_init(&r[i], i);
        r[i].median_ms = rm[i], r[i].min_ms = rmin[i], r[i].rel_error = 0.001 * (i + 1), r[i].tflops = 500;
    }
    const tune_record *p[4] = { &r[0], &r[1], &r[2], &r[3] };
    tune_record out;
    tune_confirm_combine(p, 3, &out);   /* 2.0 2.6 2.2: median 2.2 */
    assert_true(fabs(out.median_ms - 2.2) < 1e-12 && out.min_ms == 1.8);
    assert_true(fabs(out.spread - 0.6 / 2.2) < 1e-12 && out.rel_error == 0.003);
    assert_true(fabs(out.tflops - 500 * 2.0 / 2.2) < 1e-9);
    tune_confirm_combine(p, 4, &out);   /* even count: the mean of 2.2 and 2.4 */
    assert_true(fabs(out.median_ms - 2.3) < 1e-12 && out.rel_error == 0.004);
    assert_true(isnan(out.sm_mhz) && out.clock_events == -1);   /* no round sampled the clocks */
    /* The clocks over every round: the least, and every reason (a later round's power cap too). */
    r[0].sm_mhz = 1980, r[0].clock_events = 0;
    r[1].sm_mhz = 1755, r[1].clock_events = 0x4;
    r[2].sm_mhz = 1830, r[2].clock_events = -1;   /* the clock without the reasons */
    r[3].sm_mhz = NAN, r[3].clock_events = -1;
    tune_confirm_combine(p, 4, &out);
    assert_true(out.sm_mhz == 1755 && out.clock_events == 0x4);
    const tune_record *q[2] = { &r[3], &r[2] };
    tune_confirm_combine(q, 2, &out);
    assert_true(out.sm_mhz == 1830 && out.clock_events == -1);
}

/* A database with 3 kernels of one workload: kernel 0 ok, kernel 2 pruned, kernel 1 missing. */
/* The plan's order: the candidates whose tunables a stored winner of this GPU has (any workload's:
 * dtype, head dims and mask differ) first, the order kept otherwise; another family's kernel with
 * the same numbers is no match. */
static void test_known_first(void **state)
{
    (void)state;
    const gen_family *f = gen_family_find("fwd_mma");
    gen_config configs[5];
    static const int tiles[5][2] = { { 64, 32 }, { 64, 64 }, { 128, 32 }, { 128, 64 }, { 128, 128 } };
    for (int i = 0; i < 5; i++) {
        gen_config_init(&configs[i], f);
        configs[i].p[GEN_BLOCK_M] = tiles[i][0];
        configs[i].p[GEN_BLOCK_N] = tiles[i][1];
    }
    db_kernel known[3];
    memset(known, 0, sizeof known);
    for (int k = 0; k < 3; k++) {
        const gen_config *c = &configs[k == 0 ? 3 : k == 1 ? 1 : 4];
        snprintf(known[k].family, sizeof known[k].family, "%s", k == 2 ? "fwd_exact" : "fwd_mma");
        memcpy(known[k].p, c->p, sizeof known[k].p);
        known[k].p[GEN_DTYPE] = 1;   /* tuned on another workload */
        known[k].p[GEN_HEAD_DIM] = known[k].p[GEN_HEAD_DIM_V] = 64;
        known[k].p[GEN_CAUSAL] = 1;
    }
    int pending[5] = { 0, 1, 2, 3, 4 };
    tune_sweep_known_first(configs, pending, 5, known, 3);
    const int want[5] = { 1, 3, 0, 2, 4 };
    assert_memory_equal(pending, want, sizeof want);
    int some[3] = { 4, 2, 3 };
    tune_sweep_known_first(configs, some, 3, known, 3);
    const int want_some[3] = { 3, 4, 2 };
    assert_memory_equal(some, want_some, sizeof want_some);
    int none[2] = { 2, 0 };
    tune_sweep_known_first(configs, none, 2, known, 0);
    assert_int_equal(none[0], 2);
    known[0].p[GEN_NUM_WARPS] = 2;   /* a tunable differs: no longer a match for configs[3] */
    int again[5] = { 0, 1, 2, 3, 4 };
    tune_sweep_known_first(configs, again, 5, known, 2);
    const int want_again[5] = { 1, 0, 2, 3, 4 };
    assert_memory_equal(again, want_again, sizeof want_again);
}

static void test_resume_filter(void **state)
{
    (void)state;
    char path[] = "/tmp/test_sweep_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[1024];
    db *d;
    assert_int_equal(db_open(path, DB_OPEN_CREATE, &d, err, sizeof err), 0);
    db_device dev = { "Test GPU", "sm_90", 9, 0, 132, "13.0", "13.0" };
    db_workload w = { .op = DB_OP_FWD, .dtype = 2, .head_dim = 128, .head_dim_v = 128, .batch = 4, .heads = 16,
                      .seqlen_q = 4096, .seqlen_k = 4096 };
    int64_t dev_id, w_id, sweep_id, ids[3];
    assert_int_equal(db_device_upsert(d, &dev, &dev_id, err, sizeof err), 0);
    assert_int_equal(db_workload_upsert(d, &w, &w_id, err, sizeof err), 0);
    assert_int_equal(db_sweep_begin(d, "test.lua", "0123456789abcdef", "host", &sweep_id, err, sizeof err), 0);
    for (int i = 0; i < 3; i++) {
        db_kernel k = { "fwd_mma", "", { 2, 128, 128, 64 << i, 64, 4, 2, 0, 1, 1, 1, 0 } };
        snprintf(k.source_hash, sizeof k.source_hash, "00000000000000%02d", i);
        assert_int_equal(db_kernel_upsert(d, &k, &ids[i], err, sizeof err), 0);
    }
    int pending[3], count = -1, pruned = -1;
    assert_int_equal(tune_sweep_pending(d, dev_id, w_id, ids, 3, pending, &count, &pruned, err, sizeof err), 0);
    assert_int_equal(count, 3);
    assert_int_equal(pruned, 0);
    db_result ok = { .sweep_id = sweep_id, .device_id = dev_id, .workload_id = w_id, .kernel_id = ids[0],
                     .status = DB_STATUS_OK, .median_ms = 1.5, .min_ms = 1.4, .spread = 0.01, .tflops = 366,
                     .rel_error = 1e-3, .max_abs_error = 1e-2 };
    assert_int_equal(db_result_put(d, &ok, err, sizeof err), 0);
    db_result skipped = ok;
    skipped.kernel_id = ids[2];
    skipped.status = DB_STATUS_SKIPPED;
    skipped.message = "pruned";
    assert_int_equal(db_result_put(d, &skipped, err, sizeof err), 0);
    assert_int_equal(tune_sweep_pending(d, dev_id, w_id, ids, 3, pending, &count, &pruned, err, sizeof err), 0);
    assert_int_equal(count, 1);
    assert_int_equal(pending[0], 1);
    assert_int_equal(pruned, 1);
    /* Another device has nothing stored. */
    db_device other = { "Other GPU", "sm_80", 8, 0, 108, "13.0", "13.0" };
    int64_t other_id;
    assert_int_equal(db_device_upsert(d, &other, &other_id, err, sizeof err), 0);
    assert_int_equal(tune_sweep_pending(d, other_id, w_id, ids, 3, pending, &count, NULL, err, sizeof err), 0);
    assert_int_equal(count, 3);
    db_close(d);
    char side[sizeof path + 8];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    unlink(path);
}

/* The command pipe of a running worker (tune_worker_send, tune_worker_read_batch): a batch goes
 * through whole, CUBINs larger than a pipe's buffer included (a writer process beside the
 * reader); a closed pipe reads as the end; a cut or foreign message is refused; writing to a
 * worker that is gone fails with a reason instead of ending the sweep (SIGPIPE ignored, as
 * tune_stop_arm does). */
static void test_worker_batches(void **state)
{
    (void)state;
    const gen_family *f = gen_family_find("fwd_wgmma");
    assert_non_null(f);
    enum { N = 3 };
    gen_config configs[N];
    unsigned char *cubins[N];
    const size_t sizes[N] = { 100, 300000, 7 };   /* the second fills the pipe four times over */
    tune_worker_item items[N];
    for (int i = 0; i < N; i++) {
        gen_config_init(&configs[i], f);
        configs[i].p[GEN_BLOCK_N] = 64 + 16 * i;
        cubins[i] = malloc(sizes[i]);
        assert_non_null(cubins[i]);
        for (size_t k = 0; k < sizes[i]; k++)
            cubins[i][k] = (unsigned char)(k * 7 + i);
        items[i] = (tune_worker_item){ &configs[i], cubins[i], sizes[i], 10 + i };
    }
    const tune_worker_task task = { .bench = { .warmup_ms = 5, .rep_ms = 20, .timeout_s = 3 }, .items = items,
                                    .count = N };
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        close(fds[0]);
        fcntl(fds[1], F_SETFL, O_NONBLOCK);   /* as tune_worker_start leaves it: the full pipe waited on */
        tune_worker_proc w = { .pid = -1, .fd = -1, .cmd_fd = fds[1] };
        char why[256];
        _exit(tune_worker_send(&w, &task, why, sizeof why) == 0 ? 0 : 1);
    }
    close(fds[1]);
    tune_worker_batch b;
    assert_int_equal(tune_worker_read_batch(fds[0], &b), 1);
    assert_int_equal(b.count, N);
    assert_true(b.bench.warmup_ms == 5 && b.bench.rep_ms == 20 && b.bench.timeout_s == 3);
    for (int i = 0; i < N; i++) {
        assert_int_equal(b.items[i].id, 10 + i);
        assert_ptr_equal(b.items[i].config->family, f);
        assert_int_equal(b.items[i].config->p[GEN_BLOCK_N], 64 + 16 * i);
        assert_int_equal(b.items[i].cubin_size, sizes[i]);
        assert_memory_equal(b.items[i].cubin, cubins[i], sizes[i]);
    }
    tune_worker_batch_free(&b);
    int status;
    assert_int_equal(waitpid(writer, &status, 0), writer);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(tune_worker_read_batch(fds[0], &b), 0);   /* the writer is gone: the end */
    close(fds[0]);

    /* A batch cut short, and bytes that are no batch. */
    assert_int_equal(pipe(fds), 0);
    const unsigned char junk[16] = { 1, 2, 3 };
    assert_int_equal(write(fds[1], junk, sizeof junk), (ssize_t)sizeof junk);
    close(fds[1]);
    assert_int_equal(tune_worker_read_batch(fds[0], &b), -1);
    close(fds[0]);
    const tune_worker_task one = { .bench = task.bench, .items = items, .count = 1 };
    assert_int_equal(pipe(fds), 0);
    tune_worker_proc w = { .pid = -1, .fd = -1, .cmd_fd = fds[1] };
    char why[256];
    assert_int_equal(tune_worker_send(&w, &one, why, sizeof why), 0);   /* 100 bytes: fits the pipe */
    close(fds[1]);
    unsigned char head[64];
    assert_int_equal(read(fds[0], head, sizeof head), (ssize_t)sizeof head);   /* drop its start */
    assert_int_equal(tune_worker_read_batch(fds[0], &b), -1);
    close(fds[0]);
    /* Cut inside the CUBIN: everything but its last 10 bytes arrives, then the writer is gone. */
    assert_int_equal(pipe(fds), 0);
    w.cmd_fd = fds[1];
    assert_int_equal(tune_worker_send(&w, &one, why, sizeof why), 0);
    close(fds[1]);
    unsigned char whole[4096];
    const ssize_t sent = read(fds[0], whole, sizeof whole);
    assert_true(sent > 10 && sent < (ssize_t)sizeof whole);
    close(fds[0]);
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], whole, (size_t)sent - 10), sent - 10);
    close(fds[1]);
    assert_int_equal(tune_worker_read_batch(fds[0], &b), -1);
    close(fds[0]);
    assert_int_equal(pipe(fds), 0);   /* and whole, the same bytes read back as the batch */
    assert_int_equal(write(fds[1], whole, (size_t)sent), sent);
    close(fds[1]);
    assert_int_equal(tune_worker_read_batch(fds[0], &b), 1);
    assert_int_equal(b.count, 1);
    assert_memory_equal(b.items[0].cubin, cubins[0], sizes[0]);
    tune_worker_batch_free(&b);
    close(fds[0]);

    /* The reader gone: the send fails and says so. */
    tune_stop stop;
    tune_stop_arm(&stop, 0);
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    w.cmd_fd = fds[1];
    assert_int_equal(tune_worker_send(&w, &task, why, sizeof why), -1);
    assert_non_null(strstr(why, "handing the worker 3 candidates"));
    close(fds[1]);
    w.cmd_fd = -1;
    assert_int_equal(tune_worker_send(&w, &task, why, sizeof why), -1);
    assert_non_null(strstr(why, "command pipe is closed"));
    tune_stop_disarm(&stop);
    for (int i = 0; i < N; i++)
        free(cubins[i]);
}

/* The seed a search takes from the shipped tables (tune_sweep_seed): the winner the runtime would
 * serve the workload with, this GPU model's, else its arch's; a decode shape's only for decode
 * shapes; nothing for an arch no table holds, or without tables. */
static void test_shipped_seeds(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    assert_non_null(shipped);
    const db_workload grid = { .op = DB_OP_BWD, .dtype = 2, .head_dim = 128, .head_dim_v = 128, .causal = 1,
                               .batch = 4, .heads = 16, .seqlen_q = 4096, .seqlen_k = 4096 };
    db_kernel k;
    assert_int_equal(tune_sweep_seed(shipped, "NVIDIA H200", "sm_90", 132, &grid, &k, err, sizeof err), 1);
    assert_string_equal(k.family, "bwd_wgmma");
    db_winner h200;   /* the H200 table's own winner of that workload */
    assert_int_equal(db_winner_find(shipped, "NVIDIA H200", "sm_90", &grid, &h200, err, sizeof err), 1);
    assert_string_equal(h200.device.name, "NVIDIA H200");
    assert_memory_equal(k.p, h200.kernel.p, sizeof k.p);
    /* A board with no table of its own: its arch's, the nearest model first. */
    assert_int_equal(tune_sweep_seed(shipped, "NVIDIA H100 PCIe", "sm_90", 114, &grid, &k, err, sizeof err), 1);
    assert_string_equal(k.family, "bwd_wgmma");
    assert_int_equal(tune_sweep_seed(shipped, "NVIDIA A100-SXM4-80GB", "sm_80", 108, &grid, &k, err, sizeof err), 0);
    /* A decode shape takes a decode winner (split keys), a dense one never does. */
    const db_workload decode = { .op = DB_OP_FWD, .dtype = 2, .head_dim = 128, .head_dim_v = 128, .batch = 2,
                                 .heads = 32, .heads_k = 8, .seqlen_q = 1, .seqlen_k = 32768 };
    assert_int_equal(tune_sweep_seed(shipped, "NVIDIA H200", "sm_90", 132, &decode, &k, err, sizeof err), 1);
    assert_string_equal(k.family, "fwd_mma");
    assert_true(k.p[GEN_SPLITS] > 1);
    const db_workload dense = { .op = DB_OP_FWD, .dtype = 2, .head_dim = 128, .head_dim_v = 128, .batch = 2,
                                .heads = 32, .heads_k = 8, .seqlen_q = 2048, .seqlen_k = 2048 };
    assert_int_equal(tune_sweep_seed(shipped, "NVIDIA H200", "sm_90", 132, &dense, &k, err, sizeof err), 1);
    assert_string_equal(k.family, "fwd_wgmma");
    /* A head dim no kernel compiles is looked up at the one it runs at, as the runtime does. */
    db_workload padded = grid;
    padded.head_dim = padded.head_dim_v = 80;
    assert_int_equal(tune_sweep_seed(shipped, "NVIDIA H200", "sm_90", 132, &padded, &k, err, sizeof err), 1);
    assert_int_equal(k.p[GEN_HEAD_DIM], 96);
    assert_int_equal(tune_sweep_seed(NULL, "NVIDIA H200", "sm_90", 132, &grid, &k, err, sizeof err), 0);
    db_close(shipped);
}

/* A forward d256 causal workload's fwd_wgmma candidate as a space makes it: the problem's
 * parameters, 128 rows beside a producer, OVERLAP, two stages, block_n keys, persistent or not. */
static gen_config wgmma_d256(const db_workload *w, int block_n, int persistent)
{
    gen_config c;
    gen_config_init(&c, gen_family_find("fwd_wgmma"));
    c.p[GEN_DTYPE] = w->dtype;
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = w->head_dim;
    c.p[GEN_CAUSAL] = w->causal;
    c.p[GEN_BLOCK_M] = 128;
    c.p[GEN_NUM_WARPS] = 12;
    c.p[GEN_NUM_STAGES] = 2;
    c.p[GEN_OVERLAP] = 1;
    c.p[GEN_BLOCK_N] = block_n;
    c.p[GEN_PERSISTENT] = persistent;
    gen_config_fit_lengths(&c, w->seqlen_q, w->seqlen_k);
    return c;
}

static db_kernel kernel_of(const gen_config *c)
{
    db_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.family, sizeof k.family, "%s", c->family->name);
    memcpy(k.p, c->p, sizeof k.p);
    return k;
}

/* The stored winners a unit lacks (tune_sweep_winners_to_add), on the guard's case: at fwd d256
 * causal B 16 N 1024 the stored winner is one stage without OVERLAP, persistent, which the space's
 * where() leaves out. It is added with the workload's parameters (EVEN_M, EVEN_N fitted) and put
 * first by the known-first order; the same winner twice (the database's and the seed) once; a
 * winner the candidates have, another family's, or one the family's checks refuse (shared
 * memory), not at all. */
static void test_winners_added(void **state)
{
    (void)state;
    const db_workload w = { .op = DB_OP_FWD, .dtype = 2, .head_dim = 256, .head_dim_v = 256, .causal = 1,
                            .batch = 16, .heads = 16, .seqlen_q = 1024, .seqlen_k = 1024 };
    const int smem = gen_smem_limit_for_arch("sm_90");
    char why[256];
    gen_config all[3] = { wgmma_d256(&w, 80, 0), wgmma_d256(&w, 80, 1) };
    for (int i = 0; i < 2; i++)
        if (gen_validate(&all[i], smem, why, sizeof why) != 0)
            fail_msg("candidate %d: %s", i, why);
    gen_config stale = wgmma_d256(&w, 80, 1);   /* the stored winner */
    stale.p[GEN_NUM_STAGES] = 1;
    stale.p[GEN_OVERLAP] = 0;
    db_kernel winners[5];
    winners[0] = kernel_of(&stale);
    winners[0].p[GEN_EVEN_M] = winners[0].p[GEN_EVEN_N] = 0;   /* problem parameters come from the workload */
    gen_config refused = wgmma_d256(&w, 256, 0);   /* 256 keys of d256 in two stages: no shared memory for it */
    assert_int_not_equal(gen_validate(&refused, smem, why, sizeof why), 0);
    winners[1] = kernel_of(&refused);
    winners[2] = kernel_of(&stale);
    snprintf(winners[2].family, sizeof winners[2].family, "fwd_mma");   /* another family: an order hint only */
    winners[3] = kernel_of(&all[1]);   /* a candidate already, tuned at another dtype */
    winners[3].p[GEN_DTYPE] = 1;
    winners[4] = winners[0];   /* the seed, the same kernel */
    gen_config out[5];
    assert_int_equal(tune_sweep_winners_to_add(all, 2, &w, winners, 5, smem, "sm_90", out), 1);
    for (int p = 0; p < GEN_PARAM_COUNT; p++)
        if (out[0].p[p] != stale.p[p])
            fail_msg("the added winner's %s is %d, expected %d", gen_param_name((gen_param)p), out[0].p[p],
                     stale.p[p]);
    assert_ptr_equal(out[0].family, stale.family);
    assert_int_equal(out[0].p[GEN_EVEN_M], 1);   /* 1024 rows in 128s; keys in 80s do not divide */
    assert_int_equal(out[0].p[GEN_EVEN_N], 0);
    /* Timed first: the unit's winner is known. */
    all[2] = out[0];
    int pending[3] = { 0, 1, 2 };
    assert_int_equal(tune_sweep_known_first(all, pending, 3, winners, 1), 1);
    assert_int_equal(pending[0], 2);
    /* Not for a GPU whose arch the family does not run on, nor with no candidates. */
    assert_int_equal(tune_sweep_winners_to_add(all, 2, &w, winners, 1, smem, "sm_80", out), 0);
    assert_int_equal(tune_sweep_winners_to_add(all, 0, &w, winners, 1, smem, "sm_90", out), 0);
    /* A shared-memory limit the winner's tiles exceed refuses it too. */
    assert_int_equal(tune_sweep_winners_to_add(all, 2, &w, winners, 1, 64 * 1024, "sm_90", out), 0);
}

/* A grouped backward's candidates carry the problem's split (tune_space_enum.c); a stored winner of
 * another problem (a dense seed, SPLITS=1) is timed with it too, and where that makes it a candidate
 * already, not twice. */
static void test_winners_added_keep_the_problems_split(void **state)
{
    (void)state;
    const db_workload w = { .op = DB_OP_BWD, .dtype = 2, .head_dim = 128, .head_dim_v = 128, .causal = 1,
                            .batch = 1, .heads = 64, .heads_k = 8, .seqlen_q = 8192, .seqlen_k = 8192 };
    const int smem = gen_smem_limit_for_arch("sm_90");
    char why[256];
    gen_config cand;
    gen_config_init(&cand, gen_family_find("bwd_wgmma"));
    if (gen_config_parse(&cand, "DTYPE=bf16 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=64 BLOCK_N=128 NUM_WARPS=12 "
                         "NUM_STAGES=2 CAUSAL=1 DQ_FIRST=1 SPLITS=2", why, sizeof why))
        fail_msg("%s", why);
    gen_config_fit_lengths(&cand, w.seqlen_q, w.seqlen_k);
    gen_config dense = cand;   /* the same tiles, persistent, as the dense table stores them */
    dense.p[GEN_SPLITS] = 1;
    dense.p[GEN_PERSISTENT] = 1;
    gen_config same = cand;    /* the candidate itself, stored unsplit */
    same.p[GEN_SPLITS] = 1;
    const db_kernel winners[2] = { kernel_of(&dense), kernel_of(&same) };
    gen_config out[2];
    assert_int_equal(tune_sweep_winners_to_add(&cand, 1, &w, winners, 2, smem, "sm_90", out), 1);
    assert_int_equal(out[0].p[GEN_SPLITS], 2);
    assert_int_equal(out[0].p[GEN_PERSISTENT], 1);
}

/* Frees what tune_sweep_plan made (units, kernels), so that the test below plans again. */
static void free_plan(tune_sweep *s)
{
    for (int i = 0; i < s->unit_count; i++) {
        free(s->units[i].job);
        free(s->units[i].pending);
        free(s->units[i].grown.configs);
    }
    free(s->units);
    tune_kernels_free(&s->ks);
    s->units = NULL;
    s->unit_count = 0;
}

/* The plan of a sweep into a database holding an imported winner outside the space
 * (tune_sweep_plan): the winner is a candidate of its unit and pending (an import is no timing);
 * once a sweep timed it a rerun adds it again without timing it again; once the declared winner is
 * another, the rerun adds nothing and goes on. */
static void test_plan_adds_stored_winners(void **state)
{
    (void)state;
    char space[] = "/tmp/test_sweep_space_XXXXXX";
    int fd = mkstemp(space);
    assert_true(fd >= 0);
    const char *text =
        "return { space{ template = 'fwd_mma', fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2, BLOCK_N = 64, NUM_WARPS = 4 },\n"
        "  params = { BLOCK_M = {64} },\n"
        "  workloads = { { dtype = 'bf16', head_dim = 64, causal = 0, batch = 1, heads = 2, seqlen = 256 } } } }\n";
    assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    tune_gpu_info gpu = { .dev = { .name = "Test GPU", .arch = "sm_90", .cc_major = 9, .sm_count = 132, .real = 1 } };
    tune_space_set *set = NULL;
    char err[1024];
    if (tune_space_load(space, &gpu.dev, &set, err, sizeof err) != 0)
        fail_msg("%s", err);
    unlink(space);
    char path[] = "/tmp/test_sweep_XXXXXX";
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    tune_sweep s;
    memset(&s, 0, sizeof s);
    s.gpu = &gpu;
    assert_int_equal(db_open(path, DB_OPEN_CREATE, &s.d, err, sizeof err), 0);
    db_device dev = { "Test GPU", "sm_90", 9, 0, 132, "13.0", "13.0" };
    assert_int_equal(db_device_upsert(s.d, &dev, &s.device_id, err, sizeof err), 0);
    const tune_candidates *space_cands = &set->spaces[0].workloads[0];
    db_workload w;
    tune_workload_db(&space_cands->workload, DB_OP_FWD, &w);
    int64_t w_id, imported, swept;
    assert_int_equal(db_workload_upsert(s.d, &w, &w_id, err, sizeof err), 0);
    /* The winner: 128 rows on 8 warps, its kernel row as the sweep makes it (the source's hash). */
    gen_config winner = space_cands->configs[0];
    winner.p[GEN_BLOCK_M] = 128;
    winner.p[GEN_NUM_WARPS] = 8;
    gen_config_fit_lengths(&winner, 256, 256);
    tune_kernel_set scratch = { 0 };
    const int job = tune_kernels_add(&scratch, &winner);
    assert_true(job >= 0);
    db_kernel k = kernel_of(&winner);
    memcpy(k.source_hash, scratch.jobs[job].hash, sizeof k.source_hash);
    tune_kernels_free(&scratch);
    int64_t winner_id;
    assert_int_equal(db_kernel_upsert(s.d, &k, &winner_id, err, sizeof err), 0);
    assert_int_equal(db_sweep_begin(s.d, "import:winners.txt", "0123456789abcdef", "host", &imported, err, sizeof err), 0);
    db_result r = { .sweep_id = imported, .device_id = s.device_id, .workload_id = w_id, .kernel_id = winner_id,
                    .status = DB_STATUS_OK, .median_ms = 0.5, .min_ms = 0.5, .tflops = 100 };
    assert_int_equal(db_result_put(s.d, &r, err, sizeof err), 0);

    if (tune_sweep_plan(&s, set) != 0)
        fail_msg("%s", s.err);
    assert_int_equal(s.unit_count, 1);
    tune_unit *u = &s.units[0];
    assert_int_equal(u->added, 1);
    assert_int_equal(u->cands->count, space_cands->count + 1);
    assert_int_equal(u->cands->configs[1].p[GEN_BLOCK_M], 128);
    assert_int_equal(s.ks.jobs[u->job[1]].kernel_id, winner_id);
    assert_int_equal(u->pending_count, 2);   /* the import's figure is no timing here */
    const int64_t candidate_id = s.ks.jobs[u->job[0]].kernel_id;
    free_plan(&s);

    /* A sweep timed the winner, then stopped: the rerun has it among the candidates, not pending. */
    assert_int_equal(db_sweep_begin(s.d, "test.lua", "0123456789abcdef", "host", &swept, err, sizeof err), 0);
    r.sweep_id = swept;
    r.median_ms = 0.6;
    assert_int_equal(db_result_put(s.d, &r, err, sizeof err), 0);
    if (tune_sweep_plan(&s, set) != 0)
        fail_msg("%s", s.err);
    u = &s.units[0];
    assert_int_equal(u->added, 1);
    assert_int_equal(u->pending_count, 1);
    assert_int_equal(u->pending[0], 0);
    free_plan(&s);

    /* The candidate timed faster and declared: the winner is no longer the stored one. */
    r.kernel_id = candidate_id;
    r.median_ms = 0.4;
    assert_int_equal(db_result_put(s.d, &r, err, sizeof err), 0);
    assert_int_equal(db_declare_winners(s.d, s.device_id, &w_id, 1, DB_DECLARE_MARGIN, NULL, err, sizeof err), 0);
    if (tune_sweep_plan(&s, set) != 0)
        fail_msg("%s", s.err);
    u = &s.units[0];
    assert_int_equal(u->added, 0);
    assert_ptr_equal(u->cands, space_cands);
    assert_int_equal(u->pending_count, 0);
    free_plan(&s);
    db_close(s.d);
    tune_space_set_free(set);
    char side[sizeof path + 8];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    unlink(path);
}

/* Without a driver, `flashtune tune` compiles only, exits 0 and writes no database. */
static void test_compile_only(void **state)
{
    (void)state;
    char space[] = "/tmp/test_sweep_space_XXXXXX";
    int fd = mkstemp(space);
    assert_true(fd >= 0);
    const char *text =
        "return { space{ template = 'fwd_mma', fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2, BLOCK_N = 64, NUM_WARPS = 4 },\n"
        "  params = { BLOCK_M = {64} },\n"
        "  workloads = { { dtype = 'bf16', head_dim = 64, causal = 0, batch = 1, heads = 2, seqlen = 256 } } } }\n";
    assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    char dbpath[] = "/tmp/test_sweep_db_XXXXXX";
    fd = mkstemp(dbpath);
    assert_true(fd >= 0);
    close(fd);
    unlink(dbpath);   /* only the name is wanted: the run must not create it */
    setenv("FLASHTUNE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    char *argv[] = { "tune", "--db", dbpath, "--threads", "1", space, NULL };
    assert_int_equal(cmd_tune(6, argv), 0);
    assert_int_equal(access(dbpath, F_OK), -1);
    char *bad[] = { "tune", "--no-such-option", NULL };
    assert_int_equal(cmd_tune(2, bad), 2);
    char *missing[] = { "tune", "/nonexistent/space.lua", NULL };
    assert_int_equal(cmd_tune(2, missing), 2);
    unlink(space);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_warmup_after_pauses),
        cmocka_unit_test(test_ready_lines),
        cmocka_unit_test(test_flops),
        cmocka_unit_test(test_record_lines),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_keep_and_default),
        cmocka_unit_test(test_confirm),
        cmocka_unit_test(test_known_first),
        cmocka_unit_test(test_resume_filter),
        cmocka_unit_test(test_worker_batches),
        cmocka_unit_test(test_shipped_seeds),
        cmocka_unit_test(test_winners_added),
        cmocka_unit_test(test_winners_added_keep_the_problems_split),
        cmocka_unit_test(test_plan_adds_stored_winners),
        cmocka_unit_test(test_compile_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
