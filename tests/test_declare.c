/* Declared winners (db/db_declare.c): the stored winner kept while it ties with the fastest, a
 * tie settled by the kernel that ties at the neighbouring shapes of the same kind, spreads that
 * widen a tie up to the cap, imported lines declared as such and never kept on their figure
 * where no sweep timed them, an import that leaves a sweep's timing alone, a row's own
 * declaration first, a tied kernel without register spills preferred, the winners view and the
 * lookup serving what was declared, a version-7
 * file serving the same winners once migrated, and the bad arguments named. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "db_core_internal.h"
#include "db_fixture.h"
#include "db_internal.h"

/* One database with a device row and a sweep, and a way to store timings. */
typedef struct bench {
    db *d;
    int64_t device, sweep;
    db_device dev;
} bench;

/* The device row (GPU A, sm_90, driver) and a sweep in the open database b->d. */
static void bench_rows(bench *b, const char *driver)
{
    char err[512] = "";
    snprintf(b->dev.name, sizeof b->dev.name, "GPU A");
    snprintf(b->dev.arch, sizeof b->dev.arch, "sm_90");
    b->dev.cc_major = 9;
    b->dev.sm_count = 132;
    snprintf(b->dev.driver_version, sizeof b->dev.driver_version, "%s", driver);
    snprintf(b->dev.nvrtc_version, sizeof b->dev.nvrtc_version, "13.0");
    assert_int_equal(db_device_upsert(b->d, &b->dev, &b->device, err, sizeof err), 0);
    assert_int_equal(db_sweep_begin(b->d, "spaces/test.lua", "0123456789abcdef", "host", &b->sweep, err, sizeof err), 0);
}

static bench open_bench(const fixture *f, const char *driver)
{
    bench b = { 0 };
    char err[512] = "";
    if (db_open(f->path, DB_OPEN_CREATE, &b.d, err, sizeof err) != 0)
        fail_msg("%s", err);
    bench_rows(&b, driver);
    return b;
}

/* A forward workload of dtype (1 f16, 2 bf16) and length n, head dim 64. */
static int64_t workload(bench *b, int dtype, int n, db_workload *out)
{
    db_workload w = { .op = DB_OP_FWD, .dtype = dtype, .head_dim = 64, .head_dim_v = 64, .batch = 4, .heads = 16,
                      .seqlen_q = n, .seqlen_k = n };
    int64_t id = 0;
    char err[512] = "";
    assert_int_equal(db_workload_upsert(b->d, &w, &id, err, sizeof err), 0);
    if (out)
        *out = w;
    return id;
}

/* The kernel of tiles block_m x 64 for workload w (its dtype), EVEN_M as given: the tunables are
 * block_m's alone, so two workloads' kernels of one block_m are one kernel for the search. */
/* A kernel like kernel()'s with one more parameter set (extra = value). */
static int64_t kernel_of(bench *b, const char *family, const db_workload *w, int block_m, int even_m, gen_param extra,
                         int value)
{
    db_kernel k = { 0 };
    snprintf(k.family, sizeof k.family, "%s", family);
    snprintf(k.source_hash, sizeof k.source_hash, "%04x%04x%04x%02x%02x", w->dtype, block_m, even_m, (int)extra, value);
    for (int p = 0; p < GEN_PARAM_COUNT; p++)
        k.p[p] = gen_param_get((gen_param)p)->def;
    k.p[extra] = value;
    k.p[GEN_DTYPE] = w->dtype;
    k.p[GEN_HEAD_DIM] = k.p[GEN_HEAD_DIM_V] = w->head_dim;
    k.p[GEN_BLOCK_M] = block_m;
    k.p[GEN_EVEN_M] = even_m;
    k.p[GEN_EVEN_N] = 1;
    if (extra == GEN_EVEN_N)
        k.p[GEN_EVEN_N] = value;
    int64_t id = 0;
    char err[512] = "";
    if (db_kernel_upsert(b->d, &k, &id, err, sizeof err) != 0)
        fail_msg("%s", err);
    return id;
}

static int64_t kernel_with(bench *b, const db_workload *w, int block_m, int even_m, gen_param extra, int value)
{
    return kernel_of(b, "fwd_mma", w, block_m, even_m, extra, value);
}

static int64_t kernel(bench *b, const db_workload *w, int block_m, int even_m)
{
    return kernel_with(b, w, block_m, even_m, GEN_EVEN_N, 1);
}

static void timed(bench *b, int64_t wl, int64_t k, double ms, double spread)
{
    db_result r = { b->sweep, b->device, wl, k, 0, DB_STATUS_OK, ms, ms, spread, 100 / ms, 0, 0, NULL, NAN, -1 };
    char err[512] = "";
    if (db_result_put(b->d, &r, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* timed, with the kernel's binary stored first: spills bytes of register spill (stores). */
static void timed_spilling(bench *b, int64_t wl, int64_t k, double ms, int spills)
{
    char key[17], err[512] = "";
    snprintf(key, sizeof key, "%016llx", (unsigned long long)k * 7919u + (unsigned long long)spills);
    db_binary bin;
    db_binary_init(&bin, key, "sm_90a", "13.0", "-arch=sm_90a", "source");
    static const unsigned char cubin[] = { 1, 2, 3 };
    bin.cubin = (void *)cubin;
    bin.cubin_size = sizeof cubin;
    bin.spill_store_bytes = spills;
    int64_t binary = 0;
    if (db_binary_put(b->d, k, &bin, &binary, err, sizeof err) != 0)
        fail_msg("%s", err);
    db_result r = { b->sweep, b->device, wl, k, binary, DB_STATUS_OK, ms, ms, 0, 100 / ms, 0, 0, NULL, NAN, -1 };
    if (db_result_put(b->d, &r, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static db_declared declared(bench *b, int64_t wl)
{
    db_declared c = { 0 };
    char err[512] = "";
    assert_int_equal(db_declared_get(b->d, b->device, wl, &c, err, sizeof err), 1);
    return c;
}

static void declare(bench *b, const int64_t *ids, int n, double margin, db_declare_counts *counts)
{
    char err[512] = "";
    if (db_declare_winners(b->d, b->device, ids, n, margin, counts, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* The kernel the lookup serves for w on GPU A. */
static int64_t served(bench *b, const db_workload *w)
{
    db_winner win;
    char err[512] = "";
    assert_int_equal(db_winner_find(b->d, "GPU A", "sm_90", w, &win, err, sizeof err), 1);
    return win.kernel_id;
}

static void fastest_alone_and_the_stored_winner_kept(void **state)
{
    bench b = open_bench(*state, "13.0");
    db_workload w;
    const int64_t wl = workload(&b, 1, 4096, &w), x = kernel(&b, &w, 64, 1), y = kernel(&b, &w, 128, 1),
                  z = kernel(&b, &w, 32, 1);
    timed(&b, wl, x, 1.00, 0.01);
    timed(&b, wl, y, 1.05, 0.01);
    timed(&b, wl, z, 1.30, 0.01);
    db_declare_counts n;
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, &n);
    assert_int_equal(n.workloads, 1);
    assert_int_equal(n.by_reason[DB_DECLARED_FASTEST], 1);
    db_declared c = declared(&b, wl);
    assert_int_equal(c.kernel_id, x);
    assert_int_equal(c.reason, DB_DECLARED_FASTEST);
    assert_true(c.behind == 0);
    assert_int_equal(c.neighbours, 0);
    assert_int_equal(served(&b, &w), x);

    /* Re-timed: y now leads by 1.5 %, inside the 2 % margin: x stays, and the lookup serves it
     * although y's median is the least. */
    timed(&b, wl, x, 1.015, 0.01);
    timed(&b, wl, y, 1.000, 0.01);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, &n);
    assert_int_equal(n.by_reason[DB_DECLARED_KEPT], 1);
    c = declared(&b, wl);
    assert_int_equal(c.kernel_id, x);
    assert_int_equal(c.reason, DB_DECLARED_KEPT);
    assert_true(fabs(c.behind - 0.015) < 1e-9);
    assert_int_equal(served(&b, &w), x);
    /* Declaring again changes nothing (the rule is stable on its own output). */
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, &n);
    assert_int_equal(declared(&b, wl).kernel_id, x);

    /* y leads by 3 %: beyond the margin, it takes over as the fastest. */
    timed(&b, wl, y, 0.97, 0.01);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, &n);
    c = declared(&b, wl);
    assert_int_equal(c.kernel_id, y);
    assert_int_equal(c.reason, DB_DECLARED_FASTEST);
    assert_int_equal(served(&b, &w), y);

    /* Margin 0: the least median, whatever was stored (the rule before declarations). */
    timed(&b, wl, x, 0.969, 0.0);
    timed(&b, wl, y, 0.970, 0.0);
    declare(&b, &wl, 1, 0, &n);
    assert_int_equal(declared(&b, wl).kernel_id, x);

    /* The declared kernel's result turns invalid: the view falls back to the fastest valid one. */
    db_result bad = { b.sweep, b.device, wl, x, 0, DB_STATUS_INVALID, 0.5, 0.5, 0, NAN, 0.3, 0.3, "wrong", NAN, -1 };
    char err[512] = "";
    assert_int_equal(db_result_put(b.d, &bad, err, sizeof err), 0);
    assert_int_equal(served(&b, &w), y);
    db_close(b.d);
}

/* Two timings whose spreads are wide tie farther apart than the margin, but never past the cap. */
static void spreads_widen_a_tie_up_to_the_cap(void **state)
{
    bench b = open_bench(*state, "13.0");
    db_workload w;
    const int64_t wl = workload(&b, 1, 2048, &w), x = kernel(&b, &w, 64, 1), y = kernel(&b, &w, 128, 1);
    timed(&b, wl, x, 1.00, 0.01);
    timed(&b, wl, y, 1.10, 0.01);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
    assert_int_equal(declared(&b, wl).kernel_id, x);
    static const struct {
        double x_ms, spread;
        int kept;
    } steps[] = {
        { 1.035, 0.08, 1 },   /* (0.08 + 0.08) / 2 = 8 %, capped at 5 %: 3.5 % behind ties */
        { 1.045, 0.08, 1 },   /* 4.5 % */
        { 1.060, 0.08, 0 },   /* 6 %: past the cap */
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        timed(&b, wl, x, 1.00, 0.01);   /* x the stored winner again */
        timed(&b, wl, y, 1.10, 0.01);
        declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
        timed(&b, wl, x, steps[i].x_ms, steps[i].spread);
        timed(&b, wl, y, 1.00, steps[i].spread);
        declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
        if ((declared(&b, wl).kernel_id == x) != steps[i].kept)
            fail_msg("step %zu: x at %.3f ms with spreads %.2f: expected %s", i, steps[i].x_ms, steps[i].spread,
                     steps[i].kept ? "kept" : "replaced");
    }
    db_close(b.d);
}

/* Without a stored winner, a tie goes to the kernel that ties at the most other workloads of the
 * same kind: kernels of other kinds do not count, EVEN_M does not split a kernel. */
static void a_tie_goes_to_the_kernel_that_holds_at_neighbours(void **state)
{
    bench b = open_bench(*state, "13.0");
    db_workload w1, w2, w3, o1, o2;
    const int64_t a = workload(&b, 1, 4096, &w1), n2 = workload(&b, 1, 1000, &w2), n3 = workload(&b, 1, 16384, &w3);
    const int64_t other1 = workload(&b, 2, 4096, &o1), other2 = workload(&b, 2, 8192, &o2);
    /* At a: y fastest, x within 1 %. */
    timed(&b, a, kernel(&b, &w1, 128, 1), 1.00, 0.01);
    const int64_t x = kernel(&b, &w1, 64, 1);
    timed(&b, a, x, 1.01, 0.01);
    /* Its f16 neighbours: x ties at both (at 1000 rows as an EVEN_M 0 kernel), y at neither. */
    timed(&b, n2, kernel(&b, &w2, 64, 0), 1.00, 0.01);
    timed(&b, n2, kernel(&b, &w2, 128, 0), 1.20, 0.01);
    timed(&b, n3, kernel(&b, &w3, 64, 1), 1.00, 0.01);
    timed(&b, n3, kernel(&b, &w3, 32, 1), 1.01, 0.01);
    timed(&b, n3, kernel(&b, &w3, 128, 1), 1.50, 0.01);
    /* bf16, another kind: y alone at both, which would outvote x if kinds mixed. */
    timed(&b, other1, kernel(&b, &o1, 128, 1), 1.00, 0.01);
    timed(&b, other2, kernel(&b, &o2, 128, 1), 1.00, 0.01);
    timed(&b, other2, kernel(&b, &o2, 64, 1), 1.30, 0.01);

    db_declare_counts n;
    declare(&b, NULL, 0, DB_DECLARE_MARGIN, &n);
    assert_int_equal(n.workloads, 5);
    assert_int_equal(n.by_reason[DB_DECLARED_HOLDS], 1);
    assert_int_equal(n.by_reason[DB_DECLARED_FASTEST], 4);
    db_declared c = declared(&b, a);
    assert_int_equal(c.kernel_id, x);
    assert_int_equal(c.reason, DB_DECLARED_HOLDS);
    assert_int_equal(c.neighbours, 2);
    assert_true(fabs(c.behind - 0.01) < 1e-9);
    assert_int_equal(served(&b, &w1), x);
    /* At 16384 the 32-row kernel ties too, but holds nowhere else: the fastest stays. */
    c = declared(&b, n3);
    assert_int_equal(c.reason, DB_DECLARED_FASTEST);
    assert_int_equal(c.neighbours, 2);
    db_close(b.d);
}

/* Kernels that differ only in a tunable past the table's 32nd row (P_SMEM) are not the same
 * kernel at the neighbours: the comparison takes every row's bit (it once shifted a 32-bit one). */
static void a_tunable_past_the_32nd_row_splits_kernels(void **state)
{
    bench b = open_bench(*state, "13.0");
    db_workload w1, w2, w3;
    const int64_t a = workload(&b, 1, 4096, &w1), n2 = workload(&b, 1, 2048, &w2), n3 = workload(&b, 1, 16384, &w3);
    assert_true(GEN_P_SMEM >= 32);
    timed(&b, a, kernel(&b, &w1, 128, 1), 1.00, 0.01);
    const int64_t x = kernel(&b, &w1, 64, 1);
    timed(&b, a, x, 1.01, 0.01);
    /* At both neighbours the fastest is x's tiles with P_SMEM=1: another kernel. */
    timed(&b, n2, kernel_with(&b, &w2, 64, 1, GEN_P_SMEM, 1), 1.00, 0.01);
    timed(&b, n2, kernel(&b, &w2, 128, 1), 1.20, 0.01);
    timed(&b, n3, kernel_with(&b, &w3, 64, 1, GEN_P_SMEM, 1), 1.00, 0.01);
    timed(&b, n3, kernel(&b, &w3, 128, 1), 1.30, 0.01);
    declare(&b, &a, 1, DB_DECLARE_MARGIN, NULL);
    const db_declared c = declared(&b, a);
    assert_int_equal(c.reason, DB_DECLARED_FASTEST);
    assert_int_equal(c.neighbours, 0);
    assert_true(c.kernel_id != x);
    db_close(b.d);
}

/* Only the workloads asked for are declared; the others keep the least median. */
static void only_the_workloads_asked(void **state)
{
    bench b = open_bench(*state, "13.0");
    db_workload w1, w2;
    const int64_t a = workload(&b, 1, 4096, &w1), c2 = workload(&b, 1, 2048, &w2);
    timed(&b, a, kernel(&b, &w1, 64, 1), 1.0, 0.01);
    timed(&b, c2, kernel(&b, &w2, 64, 1), 1.0, 0.01);
    db_declare_counts n;
    declare(&b, &a, 1, DB_DECLARE_MARGIN, &n);
    assert_int_equal(n.workloads, 1);
    db_declared c;
    char err[512] = "";
    assert_int_equal(db_declared_get(b.d, b.device, c2, &c, err, sizeof err), 0);
    assert_int_equal(db_declared_get(b.d, b.device, a, &c, err, sizeof err), 1);
    db_close(b.d);
}

/* A winners file's line is declared as imported; its time is not a timing of this machine, so
 * it never enters a tie. A sweep on another row of the same GPU (a newer driver) keeps it while
 * it ties there. */
static void imported_lines_are_declared_and_guard_the_next_sweep(void **state)
{
    fixture *f = *state;
    bench b = open_bench(f, "13.0");
    db_workload w;
    const int64_t wl = workload(&b, 1, 4096, &w), x = kernel(&b, &w, 64, 1);
    timed(&b, wl, x, 1.00, 0.01);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
    char *text = fixture_export(b.d);
    db_close(b.d);
    remove(f->path);

    bench c = open_bench(f, "13.1");   /* another driver: another device row */
    char err[512] = "";
    db_import_counts counts;
    assert_int_equal(db_import_text(c.d, "winners.txt", text, NULL, &counts, err, sizeof err), 0);
    free(text);
    assert_int_equal(counts.added, 1);
    int64_t old_row = 0;
    db_device old = c.dev;
    snprintf(old.driver_version, sizeof old.driver_version, "13.0");
    assert_int_equal(db_device_upsert(c.d, &old, &old_row, err, sizeof err), 0);
    db_declared d;
    int64_t imported_wl = 0;
    assert_int_equal(db_workload_find(c.d, &w, &imported_wl, err, sizeof err), 1);
    assert_int_equal(db_declared_get(c.d, old_row, imported_wl, &d, err, sizeof err), 1);
    assert_int_equal(d.kernel_id, kernel(&c, &w, 64, 1));
    assert_int_equal(d.reason, DB_DECLARED_IMPORTED);
    assert_true(isnan(d.behind));
    assert_int_equal(d.neighbours, -1);
    assert_int_equal(d.spills, -1);   /* an imported line has no binary */

    /* The new row's sweep: y leads x by 1 %. The imported declaration guards x. */
    const int64_t wl2 = workload(&c, 1, 4096, NULL), x2 = kernel(&c, &w, 64, 1), y2 = kernel(&c, &w, 128, 1);
    timed(&c, wl2, x2, 1.01, 0.01);
    timed(&c, wl2, y2, 1.00, 0.01);
    declare(&c, &wl2, 1, DB_DECLARE_MARGIN, NULL);
    d = declared(&c, wl2);
    assert_int_equal(d.kernel_id, x2);
    assert_int_equal(d.reason, DB_DECLARED_KEPT);

    /* An imported time alone is no timing: a workload with nothing a sweep timed is not declared. */
    db_declare_counts n;
    declare(&c, NULL, 0, DB_DECLARE_MARGIN, &n);
    assert_int_equal(n.workloads, 1);
    assert_int_equal(db_declare_winners(c.d, old_row, NULL, 0, DB_DECLARE_MARGIN, &n, err, sizeof err), 0);
    assert_int_equal(n.workloads, 0);
    db_close(c.d);
}

/* A winners text whose one line is the 64-row kernel of the 4096-token workload at ms, made in a
 * database of its own (at f->path, removed after). */
static char *winners_text(fixture *f, double ms)
{
    bench b = open_bench(f, "13.0");
    db_workload w;
    const int64_t wl = workload(&b, 1, 4096, &w);
    timed(&b, wl, kernel(&b, &w, 64, 1), ms, 0.0);
    char *text = fixture_export(b.d);
    db_close(b.d);
    remove(f->path);
    return text;
}

static void import_text(bench *b, const char *text, db_import_counts *counts)
{
    char err[512] = "";
    if (db_import_text(b->d, "winners.txt", text, NULL, counts, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* A stored winner no sweep timed here (an imported kernel the sweep did not re-time) is not kept
 * on its imported figure, however it compares: that figure is another run's (the guard kept two
 * such winners on medians below every re-timed one). The workload's timing decides, and the
 * counts and db_declared_untimed say so; re-timed, the same winner is kept while it ties. */
static void an_untimed_stored_winner_is_not_kept(void **state)
{
    fixture *f = *state;
    static const double imported_ms[] = { 0.80, 1.015, 1.05 };   /* faster, tied, beyond */
    for (size_t i = 0; i < sizeof imported_ms / sizeof imported_ms[0]; i++) {
        char *text = winners_text(f, imported_ms[i]);
        bench b = open_bench(f, "13.0");
        import_text(&b, text, NULL);
        free(text);
        db_workload w;
        const int64_t wl = workload(&b, 1, 4096, &w), k = kernel(&b, &w, 64, 1), other = kernel(&b, &w, 128, 1);
        timed(&b, wl, other, 1.00, 0.0);
        char err[512] = "";
        int64_t untimed = 0;
        assert_int_equal(db_declared_untimed(b.d, b.device, wl, &untimed, err, sizeof err), 1);
        assert_int_equal(untimed, k);
        db_declare_counts n;
        declare(&b, NULL, 0, DB_DECLARE_MARGIN, &n);
        const db_declared c = declared(&b, wl);
        if (c.kernel_id != other || served(&b, &w) != other)
            fail_msg("imported at %.3f ms beside a timing of 1.00: declared kernel %lld (%s), expected the timed one",
                     imported_ms[i], (long long)c.kernel_id, db_declared_name(c.reason));
        assert_int_equal(c.reason, DB_DECLARED_FASTEST);
        assert_int_equal(n.workloads, 1);
        assert_int_equal(n.untimed, 1);
        assert_int_equal(db_declared_untimed(b.d, b.device, wl, &untimed, err, sizeof err), 0);   /* timed now */
        db_close(b.d);
        remove(f->path);
    }
    /* Re-timed by a sweep, the same winner is judged by that timing: kept while it ties. */
    char *text = winners_text(f, 0.80);
    bench b = open_bench(f, "13.0");
    import_text(&b, text, NULL);
    free(text);
    db_workload w;
    const int64_t wl = workload(&b, 1, 4096, &w), k = kernel(&b, &w, 64, 1), other = kernel(&b, &w, 128, 1);
    timed(&b, wl, other, 1.00, 0.0);
    timed(&b, wl, k, 1.015, 0.0);   /* the sweep's timing in place of the imported 0.80 */
    char err[512] = "";
    int64_t untimed = -1;
    assert_int_equal(db_declared_untimed(b.d, b.device, wl, &untimed, err, sizeof err), 0);
    assert_int_equal(untimed, -1);
    db_declare_counts n;
    declare(&b, NULL, 0, DB_DECLARE_MARGIN, &n);
    const db_declared c = declared(&b, wl);
    assert_int_equal(c.kernel_id, k);
    assert_int_equal(c.reason, DB_DECLARED_KEPT);
    assert_int_equal(n.untimed, 0);
    db_close(b.d);
}

/* ... but where no sweep timed a kernel of the stored winner's family (a sweep of another
 * family's space alone: bwd_f32 beside bwd_f32_hopper share their workloads), it could not have
 * been re-timed: it stays while its stored figure ties with the fastest, and is replaced beyond. */
static void a_winner_of_a_family_not_swept_keeps_its_figure(void **state)
{
    fixture *f = *state;
    static const struct {
        double ms;
        int kept;
    } steps[] = { { 1.015, 1 }, { 1.05, 0 } };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        char *text = winners_text(f, steps[i].ms);   /* an fwd_mma kernel */
        bench b = open_bench(f, "13.0");
        import_text(&b, text, NULL);
        free(text);
        db_workload w;
        const int64_t wl = workload(&b, 1, 4096, &w), k = kernel(&b, &w, 64, 1);
        const int64_t other = kernel_of(&b, "fwd_exact", &w, 128, 1, GEN_EVEN_N, 1);
        timed(&b, wl, other, 1.00, 0.0);
        char err[512] = "";
        int64_t untimed = -1;
        assert_int_equal(db_declared_untimed(b.d, b.device, wl, &untimed, err, sizeof err), 0);
        db_declare_counts n;
        declare(&b, NULL, 0, DB_DECLARE_MARGIN, &n);
        const db_declared c = declared(&b, wl);
        if ((c.kernel_id == k) != steps[i].kept)
            fail_msg("stored at %.3f ms beside another family's 1.00: declared kernel %lld (%s)", steps[i].ms,
                     (long long)c.kernel_id, db_declared_name(c.reason));
        assert_int_equal(c.reason, steps[i].kept ? DB_DECLARED_KEPT : DB_DECLARED_FASTEST);
        assert_int_equal(n.untimed, 0);
        db_close(b.d);
        remove(f->path);
    }
}

/* A line for a kernel a sweep timed here declares it and leaves its timing alone. */
static void an_import_keeps_a_sweeps_timing(void **state)
{
    fixture *f = *state;
    char *text = winners_text(f, 1.01);
    bench b = open_bench(f, "13.0");
    db_workload w;
    const int64_t wl = workload(&b, 1, 4096, &w), a = kernel(&b, &w, 64, 1), c128 = kernel(&b, &w, 128, 1);
    timed(&b, wl, c128, 1.00, 0.0);
    timed(&b, wl, a, 1.10, 0.0);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
    timed(&b, wl, a, 1.00, 0.0);
    timed(&b, wl, c128, 1.015, 0.0);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
    assert_int_equal(served(&b, &w), c128);   /* kept within the margin */
    db_import_counts n;
    import_text(&b, text, &n);
    free(text);
    assert_int_equal(n.replaced, 1);
    assert_int_equal(served(&b, &w), a);
    db_declared c = declared(&b, wl);
    assert_int_equal(c.reason, DB_DECLARED_IMPORTED);
    db_winner win;
    char err[512] = "";
    assert_int_equal(db_winner_find(b.d, "GPU A", "sm_90", &w, &win, err, sizeof err), 1);
    assert_true(win.median_ms == 1.00);   /* the sweep's timing, not the line's 1.01 */
    assert_int_equal(db_result_get(b.d, b.device, wl, a, NULL, err, sizeof err), 1);   /* still a sweep's */
    db_close(b.d);
}

/* Of two rows of one GPU (two drivers), a row's own declaration is its incumbent. */
static void a_rows_own_declaration_comes_first(void **state)
{
    fixture *f = *state;
    bench b = open_bench(f, "13.0");
    db_workload w;
    const int64_t wl = workload(&b, 1, 4096, &w), x = kernel(&b, &w, 64, 1), y = kernel(&b, &w, 128, 1);
    timed(&b, wl, x, 1.00, 0.0);   /* row 13.0 declares x */
    timed(&b, wl, y, 1.10, 0.0);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
    bench c = b;   /* row 13.1 of the same GPU, in the same database */
    snprintf(c.dev.driver_version, sizeof c.dev.driver_version, "13.1");
    char err[512] = "";
    assert_int_equal(db_device_upsert(c.d, &c.dev, &c.device, err, sizeof err), 0);
    timed(&c, wl, y, 1.00, 0.0);   /* row 13.1 declares y */
    timed(&c, wl, x, 1.10, 0.0);
    declare(&c, &wl, 1, DB_DECLARE_MARGIN, NULL);
    assert_int_equal(declared(&c, wl).kernel_id, y);
    /* Both tie on row 13.1 now: its own y stays, not row 13.0's x. */
    timed(&c, wl, x, 0.99, 0.0);
    declare(&c, &wl, 1, DB_DECLARE_MARGIN, NULL);
    assert_int_equal(declared(&c, wl).kernel_id, y);
    assert_int_equal(declared(&c, wl).reason, DB_DECLARED_KEPT);
    /* The incumbent a sweep's search protects is the one the declaration weighs: each row its
     * own; a third row of the GPU without a declaration, the newest row's (13.1's y), not the
     * oldest's; another GPU's row, none. */
    int64_t inc = 0;
    assert_int_equal(db_declared_incumbent(b.d, b.device, wl, &inc, err, sizeof err), 1);
    assert_int_equal(inc, x);
    assert_int_equal(db_declared_incumbent(c.d, c.device, wl, &inc, err, sizeof err), 1);
    assert_int_equal(inc, y);
    bench e = b;
    snprintf(e.dev.driver_version, sizeof e.dev.driver_version, "13.2");
    assert_int_equal(db_device_upsert(e.d, &e.dev, &e.device, err, sizeof err), 0);
    inc = 0;
    assert_int_equal(db_declared_incumbent(e.d, e.device, wl, &inc, err, sizeof err), 1);
    assert_int_equal(inc, y);
    bench g = b;
    snprintf(g.dev.name, sizeof g.dev.name, "GPU B");
    assert_int_equal(db_device_upsert(g.d, &g.dev, &g.device, err, sizeof err), 0);
    assert_int_equal(db_declared_incumbent(g.d, g.device, wl, &inc, err, sizeof err), 0);
    assert_int_equal(db_declared_incumbent(b.d, b.device, wl, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "kernel_id is NULL"));
    db_close(b.d);
}

/* Of tied kernels, one that spills no registers goes first, the stored winner's guard included;
 * beyond the interval spills change nothing. */
static void a_tie_prefers_a_kernel_without_spills(void **state)
{
    static const struct {
        const char *name;
        double x_ms, y_ms;
        int x_spills, y_spills;
        int x_declared_first;   /* round 1 (x alone fast) declares x; round 2 the times above */
        int want_y, reason;
    } cases[] = {
        { "the fastest spills, a tied one not", 1.00, 1.01, 8, 0, 0, 1, DB_DECLARED_SPILL_FREE },
        { "the stored winner spills, a tied one not", 1.00, 1.015, 8, 0, 1, 1, DB_DECLARED_SPILL_FREE },
        { "both spill: the stored winner stays", 1.00, 0.99, 8, 4, 1, 0, DB_DECLARED_KEPT },
        { "clean beyond the interval: the fastest", 1.00, 1.05, 8, 0, 0, 0, DB_DECLARED_FASTEST },
        { "the fastest clean: spills change nothing", 1.00, 1.01, 0, 8, 0, 0, DB_DECLARED_FASTEST },
    };

    fixture *f = *state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench b = open_bench(f, "13.0");
        db_workload w;
        const int64_t wl = workload(&b, 1, 4096, &w), x = kernel(&b, &w, 64, 1), y = kernel(&b, &w, 128, 1);
        if (cases[i].x_declared_first) {
            timed_spilling(&b, wl, x, 1.00, cases[i].x_spills);
            timed_spilling(&b, wl, y, 1.20, cases[i].y_spills);
            declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
            assert_int_equal(declared(&b, wl).kernel_id, x);
        }
        timed_spilling(&b, wl, x, cases[i].x_ms, cases[i].x_spills);
        timed_spilling(&b, wl, y, cases[i].y_ms, cases[i].y_spills);
        db_declare_counts n;
        declare(&b, &wl, 1, DB_DECLARE_MARGIN, &n);
        const db_declared c = declared(&b, wl);
        if (c.kernel_id != (cases[i].want_y ? y : x) || c.reason != cases[i].reason)
            fail_msg("%s: declared %s (%s), expected %s (%s)", cases[i].name, c.kernel_id == y ? "y" : "x",
                     db_declared_name(c.reason), cases[i].want_y ? "y" : "x", db_declared_name(cases[i].reason));
        assert_int_equal(n.by_reason[cases[i].reason], 1);
        assert_int_equal(served(&b, &w), c.kernel_id);
        assert_int_equal(c.spills, c.kernel_id == x ? cases[i].x_spills : cases[i].y_spills);
        db_close(b.d);
        remove(f->path);
    }
}

/* x spills, y and z are clean and tied, y the faster; z also ties at a neighbouring shape: z is
 * declared 'holds' (chosen past a faster clean kernel), and without the neighbour y 'spill_free'. */
static void spill_free_names_only_the_fastest_clean_kernel(void **state)
{
    bench b = open_bench(*state, "13.0");
    db_workload w, n;
    const int64_t wl = workload(&b, 1, 4096, &w), other = workload(&b, 1, 2048, &n);
    const int64_t x = kernel(&b, &w, 64, 1), y = kernel(&b, &w, 128, 1), z = kernel(&b, &w, 32, 1);
    timed_spilling(&b, wl, x, 1.000, 8);
    timed_spilling(&b, wl, y, 1.005, 0);
    timed_spilling(&b, wl, z, 1.010, 0);
    timed_spilling(&b, other, kernel(&b, &n, 32, 1), 1.0, 0);   /* z's tunables hold there */
    timed_spilling(&b, other, kernel(&b, &n, 64, 1), 1.5, 8);
    declare(&b, &wl, 1, DB_DECLARE_MARGIN, NULL);
    db_declared c = declared(&b, wl);
    assert_int_equal(c.kernel_id, z);
    assert_int_equal(c.reason, DB_DECLARED_HOLDS);
    assert_int_equal(c.neighbours, 1);
    /* Without the neighbour, y: the fastest clean one, spill_free. */
    db_close(b.d);
    remove(((fixture *)*state)->path);
    b = open_bench(*state, "13.0");
    const int64_t wl2 = workload(&b, 1, 4096, &w);
    const int64_t x2 = kernel(&b, &w, 64, 1), y2 = kernel(&b, &w, 128, 1), z2 = kernel(&b, &w, 32, 1);
    timed_spilling(&b, wl2, x2, 1.000, 8);
    timed_spilling(&b, wl2, y2, 1.005, 0);
    timed_spilling(&b, wl2, z2, 1.010, 0);
    declare(&b, &wl2, 1, DB_DECLARE_MARGIN, NULL);
    c = declared(&b, wl2);
    assert_int_equal(c.kernel_id, y2);
    assert_int_equal(c.reason, DB_DECLARED_SPILL_FREE);
    /* A timing without its binary (spills not known) is no clean kernel: the fastest, which
     * spills, is declared as such (a workload of its own: nothing declared before). */
    db_workload w3;
    const int64_t wl3 = workload(&b, 1, 1024, &w3), x3 = kernel(&b, &w3, 64, 1), y3 = kernel(&b, &w3, 128, 1);
    timed_spilling(&b, wl3, x3, 1.000, 8);
    db_result r = { b.sweep, b.device, wl3, y3, 0, DB_STATUS_OK, 1.005, 1.005, 0, 1, 0, 0, NULL, NAN, -1 };
    char err[512] = "";
    assert_int_equal(db_result_put(b.d, &r, err, sizeof err), 0);
    declare(&b, &wl3, 1, DB_DECLARE_MARGIN, NULL);
    c = declared(&b, wl3);
    assert_int_equal(c.kernel_id, x3);
    assert_int_equal(c.reason, DB_DECLARED_FASTEST);
    assert_int_equal(c.spills, 8);
    db_close(b.d);
}

/* A version-7 file (winners the least median, ties to the lower kernel id) migrates on open:
 * nothing declared, the same winners served. */
static void migration_8_serves_the_same_winners(void **state)
{
    fixture *f = *state;
    int count;
    const db_migration *list = db_migrations(&count);
    assert_true(count >= 8 && list[6].version == 7 && list[7].version == 8);
    bench b = { 0 };
    char err[512] = "";
    assert_int_equal(db_open_with(f->path, DB_OPEN_CREATE, list, 7, &b.d, err, sizeof err), 0);
    bench_rows(&b, "13.0");
    db_workload w1, w2, w3;
    const int64_t a = workload(&b, 1, 4096, &w1), c = workload(&b, 1, 2048, &w2), e = workload(&b, 1, 1024, &w3);
    const int64_t x1 = kernel(&b, &w1, 64, 1), y1 = kernel(&b, &w1, 128, 1);
    timed(&b, a, x1, 1.00, 0.01);
    timed(&b, a, y1, 1.01, 0.01);
    timed(&b, c, kernel(&b, &w2, 64, 1), 1.20, 0.01);
    const int64_t y2 = kernel(&b, &w2, 128, 1);
    timed(&b, c, y2, 1.00, 0.01);
    const int64_t x3 = kernel(&b, &w3, 64, 1), y3 = kernel(&b, &w3, 128, 1);
    timed(&b, e, y3, 1.00, 0.01);
    timed(&b, e, x3, 1.00, 0.01);
    const int64_t lower = x3 < y3 ? x3 : y3;
    db_close(b.d);
    assert_int_equal(db_open(f->path, 0, &b.d, err, sizeof err), 0);
    assert_int_equal(db_schema_version(), 8);
    db_declared d;
    for (int64_t wl = a; wl <= e; wl++)
        assert_int_equal(db_declared_get(b.d, b.device, wl, &d, err, sizeof err), 0);
    assert_int_equal(served(&b, &w1), x1);
    assert_int_equal(served(&b, &w2), y2);
    assert_int_equal(served(&b, &w3), lower);
    db_close(b.d);
}

static void bad_arguments_are_named(void **state)
{
    bench b = open_bench(*state, "13.0");
    char err[512] = "";
    static const double margins[] = { -0.01, 1.5, NAN };
    for (size_t i = 0; i < sizeof margins / sizeof margins[0]; i++) {
        assert_int_equal(db_declare_winners(b.d, b.device, NULL, 0, margins[i], NULL, err, sizeof err), -1);
        assert_non_null(strstr(err, "db_declare_winners: margin"));
    }
    assert_int_equal(db_declare_winners(b.d, b.device, NULL, -1, 0.02, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "n -1 is negative"));
    assert_int_equal(db_declare_winners(b.d, b.device, NULL, 2, 0.02, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "workload_ids is NULL with n 2"));
    assert_int_equal(db_declare_winners(NULL, 1, NULL, 0, 0.02, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_declare_winners: db is NULL"));
    db_declared c;
    assert_int_equal(db_declared_get(NULL, 1, 1, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_declared_get: db is NULL"));
    assert_int_equal(db_declared_get(b.d, 1, 1, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_declared_get: out is NULL"));
    int64_t k = 0;
    assert_int_equal(db_declared_untimed(NULL, 1, 1, &k, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_declared_untimed: db is NULL"));
    assert_int_equal(db_declared_untimed(b.d, 1, 1, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_declared_untimed: kernel_id is NULL"));
    assert_int_equal(db_declared_untimed(b.d, 1, 1, &k, err, sizeof err), 0);   /* none declared */
    assert_string_equal(db_declared_name(DB_DECLARED_HOLDS), "holds");
    assert_string_equal(db_declared_name(DB_DECLARED_COUNT), "?");
    db_close(b.d);
}

int main(void)
{
#define CASE(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        CASE(fastest_alone_and_the_stored_winner_kept),
        CASE(spreads_widen_a_tie_up_to_the_cap),
        CASE(a_tie_goes_to_the_kernel_that_holds_at_neighbours),
        CASE(a_tunable_past_the_32nd_row_splits_kernels),
        CASE(only_the_workloads_asked),
        CASE(imported_lines_are_declared_and_guard_the_next_sweep),
        CASE(an_untimed_stored_winner_is_not_kept),
        CASE(a_winner_of_a_family_not_swept_keeps_its_figure),
        CASE(an_import_keeps_a_sweeps_timing),
        CASE(a_rows_own_declaration_comes_first),
        CASE(a_tie_prefers_a_kernel_without_spills),
        CASE(spill_free_names_only_the_fastest_clean_kernel),
        CASE(migration_8_serves_the_same_winners),
        CASE(bad_arguments_are_named),
    };
#undef CASE
    return cmocka_run_group_tests(tests, NULL, NULL);
}
