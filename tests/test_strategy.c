/* The tuner's strategies (tune_strategy.h) against oracles of known answers, and their replay
 * against the stored ground truth of an H200 (tune_replay.h, bench/results/truth-*.csv): what
 * each strategy times and stores, that a budget holds, and that the guided search keeps its
 * measured quality, so that a change of strategy cannot silently get worse. No GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "source_path.h"
#include "tune_replay.h"

/* ---- an oracle over a synthetic landscape ----------------------------------------------------- */

/* 8 x 8 configurations of fwd_mma's BLOCK_M and BLOCK_N (the strategies never check legality),
 * timed as a bowl whose floor is at (5, 2): 1 ms there, more with each step away. */
#define SIDE 8
#define N (SIDE * SIDE)

typedef struct bowl {
    gen_config configs[N];
    tune_strategy_cand cands[N];
    tune_record stored[N];
    int stores[N];              /* how often each was stored */
    int timed[N];               /* how often each was timed */
    int timings;
    double spent;
    double overhead_s;          /* what a timing costs beyond its windows (default 5 ms) */
    double build_s;             /* what a kernel's first timing costs to compile it (default none) */
    double built;
    int width;                  /* kernels a call compiles side by side for the cost of one (0: 1) */
    double start_s;             /* what the first call costs before its timings (a worker's start) */
    int calls;
    int slow_once;              /* this candidate's first full-bench timing reads slow_factor times its
                                 * time (a reading under a clock step); -1 none */
    double slow_factor;
    long planned;               /* timings the strategy told the plan of (bowl_plan) */
} bowl;

static double bowl_ms(int c)
{
    const int m = c / SIDE, n = c % SIDE;
    return 1.0 + 0.05 * ((m - 5) * (m - 5) + (n - 2) * (n - 2));
}

static void bowl_init(bowl *b)
{
    memset(b, 0, sizeof *b);
    b->overhead_s = 0.005;
    b->slow_once = -1;
    const gen_family *f = gen_family_find("fwd_mma");
    assert_non_null(f);
    for (int c = 0; c < N; c++) {
        gen_config_init(&b->configs[c], f);
        b->configs[c].p[GEN_BLOCK_M] = 16 * (1 + c / SIDE);
        b->configs[c].p[GEN_BLOCK_N] = 16 * (1 + c % SIDE);
        b->cands[c].config = &b->configs[c];
    }
}

static int bowl_store(void *ctx, int c, const tune_record *r)
{
    bowl *b = ctx;
    b->stored[c] = *r;
    b->stores[c]++;
    return TUNE_PHASE_OK;
}

static const tune_bench full = { .warmup_ms = 10, .rep_ms = 50, .timeout_s = 10 };

static int bowl_time(void *ctx, const int *cands, int n, const tune_bench *bench, int store_ok, tune_record *out,
                     const char *pass)
{
    bowl *b = ctx;
    (void)pass;
    if (!b->calls++)
        b->spent += b->start_s;
    int fresh = 0;   /* kernels this call compiles: side by side, `width` for the cost of one */
    for (int i = 0; i < n; i++)
        fresh += !b->timed[cands[i]];
    const int width = b->width > 1 ? b->width : 1;
    b->spent += b->build_s * ((fresh + width - 1) / width);
    b->built += b->build_s * ((fresh + width - 1) / width);
    for (int i = 0; i < n; i++) {
        tune_record_init(&out[i], i);
        out[i].median_ms = out[i].min_ms = bowl_ms(cands[i]);
        if (cands[i] == b->slow_once && bench->rep_ms == full.rep_ms) {
            out[i].median_ms = out[i].min_ms = bowl_ms(cands[i]) * b->slow_factor;
            b->slow_once = -1;
        }
        out[i].spread = 0;
        b->timed[cands[i]]++;
        b->timings++;
        b->spent += (bench->warmup_ms + bench->rep_ms) / 1000 + b->overhead_s;
        if (store_ok)
            bowl_store(ctx, cands[i], &out[i]);
    }
    return TUNE_PHASE_OK;
}

static double bowl_spent(void *ctx)
{
    return ((bowl *)ctx)->spent;
}

static double bowl_built(void *ctx)
{
    return ((bowl *)ctx)->built;
}

static const tune_confirm no_confirm = { .top = 3, .within = 0.05, .rounds = 0 };

static int run(bowl *b, const tune_strategy *st, const tune_confirm *cf)
{
    int pending[N];
    for (int c = 0; c < N; c++)
        pending[c] = c;
    const tune_strategy_task t = { .strategy = st, .bench = &full, .confirm = cf, .cands = b->cands,
                                   .pending = pending, .pending_count = N, .budget_s = st->budget_s };
    const tune_oracle o = { .time = bowl_time, .store = bowl_store, .spent = bowl_spent, .built = bowl_built,
                            .width = b->width, .ctx = b };
    return tune_strategy_measure(&t, &o);
}

/* The stored ok result the sweep would ship. */
static int shipped(const bowl *b)
{
    int pick = -1;
    for (int c = 0; c < N; c++)
        if (b->stores[c] && b->stored[c].status == DB_STATUS_OK &&
            (pick < 0 || b->stored[c].median_ms < b->stored[pick].median_ms))
            pick = c;
    return pick;
}

static const int floor_cand = 5 * SIDE + 2;

static void exhaustive_times_and_stores_each_once(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    const tune_strategy st = { .kind = TUNE_EXHAUSTIVE };
    assert_int_equal(run(&b, &st, &no_confirm), TUNE_PHASE_OK);
    for (int c = 0; c < N; c++) {
        assert_int_equal(b.timed[c], 1);
        assert_int_equal(b.stores[c], 1);
    }
    assert_int_equal(shipped(&b), floor_cand);
}

static void confirm_retimes_the_finalists_in_rotation(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    const tune_strategy st = { .kind = TUNE_EXHAUSTIVE };
    const tune_confirm cf = { .top = 3, .within = 0.10, .rounds = 2 };
    assert_int_equal(run(&b, &st, &cf), TUNE_PHASE_OK);
    /* Within 10 % of 1 ms: the floor and its four neighbours at 1.05; the best three confirmed. */
    assert_int_equal(b.timings, N + 3 * 2);
    assert_int_equal(b.timed[floor_cand], 3);
    assert_non_null(strstr(b.stored[floor_cand].message, "confirmed: the median of 3 timings"));
}

/* The workload's stored winner (the incumbent the guard weighs the rest against) stays in the
 * running after one slow reading: the confirm step rotates it with the finalists however far
 * behind that reading put it, and a cut keeps it wherever its first pass ranked. */
static void the_incumbent_is_always_confirmed(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    b.cands[floor_cand].incumbent = 1;
    b.slow_once = floor_cand, b.slow_factor = 1.5;   /* 1.5 ms once: beyond the 10 % of 1.05 */
    const tune_strategy st = { .kind = TUNE_EXHAUSTIVE };
    const tune_confirm cf = { .top = 3, .within = 0.10, .rounds = 2 };
    assert_int_equal(run(&b, &st, &cf), TUNE_PHASE_OK);
    assert_int_equal(b.timed[floor_cand], 3);   /* in the rotation: 1.5, 1.0, 1.0 */
    assert_non_null(strstr(b.stored[floor_cand].message, "confirmed: the median of 3 timings"));
    assert_true(fabs(b.stored[floor_cand].median_ms - 1.0) < 1e-9);
    assert_int_equal(shipped(&b), floor_cand);
    assert_int_equal(b.timings, N + 3 * 2);      /* it took the slowest finalist's place */

    /* A prune keeping 4 of 64: the far corner, ranked out by its first pass, is timed again. */
    bowl_init(&b);
    b.cands[0].incumbent = 1;
    const tune_strategy prune = { .kind = TUNE_PRUNE, .keep = 4.0 / N, .first = { 5, 20, 10 } };
    assert_int_equal(run(&b, &prune, &no_confirm), TUNE_PHASE_OK);
    assert_int_equal(b.timed[0], 2);
    assert_int_equal(b.stored[0].status, DB_STATUS_OK);
    int retimed = 0;
    for (int c = 0; c < N; c++)
        retimed += b.timed[c] == 2;
    assert_int_equal(retimed, 4 + 1);
}

static void bowl_plan(void *ctx, long more)
{
    ((bowl *)ctx)->planned += more;
}

/* With an incumbent among the candidates a budget still holds (the cut's extra timing and the
 * confirm step's extra finalist are foreseen), a tight budget reaches the incumbent first, and
 * the progress plan counts every timing. */
static void budgets_hold_with_an_incumbent(void **state)
{
    (void)state;
    const tune_confirm cf = { .top = 8, .within = 0.10, .rounds = 4 };
    static const double keeps[] = { 0.25, 0.10, 0.02 };
    for (int kind = 0; kind < 2; kind++)
        for (int i = 0; i < 3; i++) {
            bowl b;
            bowl_init(&b);
            b.overhead_s = 0.2;
            b.cands[0].known = b.cands[0].incumbent = 1;   /* the far corner: ranked out by any cut */
            const tune_strategy st = { .kind = kind ? TUNE_GUIDED : TUNE_HALVING, .keep = keeps[i],
                                       .first = { 5, 20, 10 }, .budget_s = 3, .seed = 1 };
            assert_int_equal(run(&b, &st, &cf), TUNE_PHASE_OK);
            print_message("%s keep %.2f with an incumbent: %.2f s of 3 s\n", tune_strategy_name(st.kind), keeps[i],
                          b.spent);
            /* Within the budget but for the probe after the first call, which may overrun it by
             * about a timing (affords_one_more): 0.06 s of windows and 0.2 s beside. Before the
             * cut and the confirm step counted the incumbent, these ran to 3.5-5.3 s. */
            assert_true(b.spent <= 3 + 0.26 + 1e-9);
            assert_true(b.timed[0] >= 2);   /* its first pass, then the cut's full timing */
        }
    /* The least budget: one first-pass timing, and it is the incumbent's, though known winners
     * come before it in the plan's order. */
    bowl b;
    bowl_init(&b);
    b.cands[0].incumbent = 1;
    b.cands[floor_cand].known = 1;
    int pending[N], k = 0;
    pending[k++] = floor_cand;
    for (int c = 0; c < N; c++)
        if (c != floor_cand)
            pending[k++] = c;
    const tune_strategy tight = { .kind = TUNE_HALVING, .keep = 0.5, .first = { 5, 20, 10 }, .budget_s = 0.01 };
    const tune_strategy_task t = { .strategy = &tight, .bench = &full, .confirm = &no_confirm, .cands = b.cands,
                                   .pending = pending, .pending_count = N, .budget_s = tight.budget_s };
    const tune_oracle o = { .time = bowl_time, .store = bowl_store, .spent = bowl_spent, .ctx = &b };
    assert_int_equal(tune_strategy_measure(&t, &o), TUNE_PHASE_OK);
    assert_true(b.timed[0] >= 1);
    /* Progress: what the plan foresaw (tune_strategy_planned) and what it was told after equal
     * the timings made, the incumbent's included. */
    bowl_init(&b);
    b.cands[0].incumbent = 1;
    const tune_strategy prune = { .kind = TUNE_PRUNE, .keep = 0.25, .first = { 5, 20, 10 } };
    for (int c = 0; c < N; c++)
        pending[c] = c;
    const tune_strategy_task tp = { .strategy = &prune, .bench = &full, .confirm = &no_confirm, .cands = b.cands,
                                    .pending = pending, .pending_count = N };
    const tune_oracle op = { .time = bowl_time, .store = bowl_store, .spent = bowl_spent, .plan = bowl_plan,
                             .ctx = &b };
    assert_int_equal(tune_strategy_measure(&tp, &op), TUNE_PHASE_OK);
    assert_int_equal(b.timings, N + N / 4 + 1);
    assert_int_equal(tune_strategy_planned(&prune, N, 0) + b.planned, b.timings);
}

static void prune_keeps_its_fraction_and_ranks_the_rest(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    const tune_strategy st = { .kind = TUNE_PRUNE, .keep = 0.25, .first = { 5, 20, 10 } };
    assert_int_equal(run(&b, &st, &no_confirm), TUNE_PHASE_OK);
    int skipped = 0, retimed = 0;
    for (int c = 0; c < N; c++) {
        assert_int_equal(b.stores[c], 1);
        skipped += b.stored[c].status == DB_STATUS_SKIPPED;
        retimed += b.timed[c] == 2;
        if (b.stored[c].status == DB_STATUS_SKIPPED)
            assert_non_null(strstr(b.stored[c].message, "pruned: first-pass median"));
    }
    assert_int_equal(retimed, N / 4);
    assert_int_equal(skipped, N - N / 4);
    assert_int_equal(shipped(&b), floor_cand);
    assert_int_equal(tune_strategy_planned(&st, N, 0), N + N / 4);
}

static void halving_holds_its_budget_and_stores_what_it_did_not_reach(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    /* A first-pass timing costs 30 ms, a full one 65 ms: 1 s affords about a third of 64. */
    const tune_strategy st = { .kind = TUNE_HALVING, .keep = 0.25, .first = { 5, 20, 10 }, .budget_s = 1.0, .seed = 7 };
    assert_int_equal(run(&b, &st, &no_confirm), TUNE_PHASE_OK);
    assert_true(b.spent <= 1.0 + 1e-9);
    int first = 0, unreached = 0;
    for (int c = 0; c < N; c++) {
        assert_int_equal(b.stores[c], 1);   /* every candidate ends up with one result */
        first += b.timed[c] > 0;
        if (!b.timed[c]) {
            unreached++;
            assert_int_equal(b.stored[c].status, DB_STATUS_SKIPPED);
            assert_non_null(strstr(b.stored[c].message, "not timed: the workload's budget was spent"));
        }
    }
    assert_true(first >= 10 && first < N);
    assert_int_equal(first + unreached, N);
    assert_int_equal(tune_strategy_planned(&st, N, 0), 0);   /* it plans as it goes */
    const tune_strategy unbudgeted = { .kind = TUNE_HALVING, .keep = 0.25 };
    assert_int_equal(tune_strategy_planned(&unbudgeted, N, 0), N + N / 4);
    assert_int_equal(tune_strategy_planned(&unbudgeted, N, 1), 0);   /* a share of --budget comes */
}

/* Timings that cost far more than their windows (a worker's start, validation): the first one
 * is measured before more are committed, so the budget holds; kernels compiled as the search
 * reaches them are charged to the new candidates only, so the budget is used, not left. */
static void budgets_hold_whatever_a_timing_costs(void **state)
{
    (void)state;
    const tune_confirm cf = { .top = 8, .within = 0.10, .rounds = 4 };
    for (int kind = 0; kind < 2; kind++) {
        bowl b;
        bowl_init(&b);
        b.overhead_s = 0.2;
        tune_strategy st = { .kind = kind ? TUNE_GUIDED : TUNE_HALVING, .keep = 0.25, .first = { 5, 20, 10 },
                             .budget_s = 3 };
        assert_int_equal(run(&b, &st, &cf), TUNE_PHASE_OK);
        print_message("%s, 0.2 s a timing: %.2f s of 3 s, %d timings\n", tune_strategy_name(st.kind), b.spent,
                      b.timings);
        assert_true(b.spent <= 3 + 1e-9);
        bowl_init(&b);
        b.build_s = 0.3;
        st.budget_s = 4;
        assert_int_equal(run(&b, &st, &cf), TUNE_PHASE_OK);
        print_message("%s, 0.3 s a kernel's compile: %.2f s of 4 s, %d timings\n", tune_strategy_name(st.kind),
                      b.spent, b.timings);
        assert_true(b.spent <= 4 + 1e-9);
        assert_true(b.spent >= 3);   /* compiling is not charged again to the kept ones' timings */
    }
}

/* Kernels compiled side by side (the sweep compiles a call's kernels on all its threads): the
 * first piece of a budgeted first pass is the oracle's width, so the cost of a compile is shared
 * by the candidates compiled with it and the projection sees what a timing costs. One at a time,
 * each timing was charged a whole compile, and a sweep on an H200 compiled one to a few kernels a
 * step on 16 cores (bench/RESULTS.md, 2026-11-30). */
static void budgets_use_kernels_compiled_side_by_side(void **state)
{
    (void)state;
    const tune_confirm cf = { .top = 8, .within = 0.10, .rounds = 4 };
    for (int kind = 0; kind < 2; kind++) {
        int timings[2];
        for (int wide = 0; wide < 2; wide++) {
            bowl b;
            bowl_init(&b);
            b.overhead_s = 0.05;
            b.build_s = 1.0;
            b.width = wide ? 16 : 1;
            const tune_strategy st = { .kind = kind ? TUNE_GUIDED : TUNE_HALVING, .keep = 0.25, .first = { 5, 20, 10 },
                                       .budget_s = 4 };
            assert_int_equal(run(&b, &st, &cf), TUNE_PHASE_OK);
            print_message("%s, 1 s a compile, width %d: %.2f s of 4 s, %d timings\n", tune_strategy_name(st.kind),
                          b.width, b.spent, b.timings);
            assert_true(b.spent <= 4 + 1e-9);
            timings[wide] = b.timings;
        }
        assert_true(timings[0] <= 4);    /* one kernel's compile charged to each timing */
        assert_true(timings[1] >= 16);   /* the first piece whole, its compile shared */
    }
}

/* One worker a workload: the first call pays its start, the later ones only their timings. Once a
 * second call is measured, the rest are projected at its cost, not at the first's: the budget
 * buys what it can (a first call's start spread over every timing bought a third as many). */
static void budgets_pay_a_start_once(void **state)
{
    (void)state;
    const tune_confirm cf = { .top = 8, .within = 0.10, .rounds = 4 };
    for (int kind = 0; kind < 2; kind++) {
        bowl b;
        bowl_init(&b);
        b.start_s = 1.5;
        b.width = 4;
        const tune_strategy st = { .kind = kind ? TUNE_GUIDED : TUNE_HALVING, .keep = 0.25, .first = { 5, 20, 10 },
                                   .budget_s = 4 };
        assert_int_equal(run(&b, &st, &cf), TUNE_PHASE_OK);
        print_message("%s, a 1.5 s start: %.2f s of 4 s, %d timings in %d calls\n", tune_strategy_name(st.kind),
                      b.spent, b.timings, b.calls);
        assert_true(b.spent <= 4 + 1e-9);
        assert_true(b.timings >= 30);
    }
}

static void halving_tries_known_winners_first(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    b.cands[floor_cand].known = 1;
    int pending[N], k = 0;
    pending[k++] = floor_cand;   /* the plan puts them first */
    for (int c = 0; c < N; c++)
        if (c != floor_cand)
            pending[k++] = c;
    /* A budget for a handful: the known one is among them, so it ships. */
    const tune_strategy st = { .kind = TUNE_HALVING, .keep = 0.5, .first = { 5, 20, 10 }, .budget_s = 0.4 };
    const tune_strategy_task t = { .strategy = &st, .bench = &full, .confirm = &no_confirm, .cands = b.cands,
                                   .pending = pending, .pending_count = N, .budget_s = st.budget_s };
    const tune_oracle o = { .time = bowl_time, .store = bowl_store, .spent = bowl_spent, .ctx = &b };
    assert_int_equal(tune_strategy_measure(&t, &o), TUNE_PHASE_OK);
    assert_int_equal(b.timed[floor_cand], 2);
    assert_int_equal(shipped(&b), floor_cand);
}

static void guided_walks_from_a_corner_to_the_floor(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    b.cands[0].known = 1;   /* the far corner (0, 0) */
    const tune_strategy st = { .kind = TUNE_GUIDED, .keep = 0.25, .first = { 5, 20, 10 }, .seed = 3 };
    assert_int_equal(run(&b, &st, &no_confirm), TUNE_PHASE_OK);
    assert_int_equal(shipped(&b), floor_cand);
    int tried = 0;
    for (int c = 0; c < N; c++) {
        assert_int_equal(b.stores[c], 1);
        tried += b.timed[c] > 0;
        if (!b.timed[c])
            assert_non_null(strstr(b.stored[c].message, "not timed: the guided search reached its best"));
    }
    assert_true(tried < N);   /* a walk, not a sweep */
}

static void neighbours_differ_in_one_tunable(void **state)
{
    (void)state;
    bowl b;
    bowl_init(&b);
    unsigned char tried[N] = { 0 };
    int out[N];
    /* (5, 2): four along BLOCK_M's row and column... seven others in its row, seven in its column. */
    assert_int_equal(tune_strategy_neighbours(b.cands, N, tried, floor_cand, out), 14);
    tried[5 * SIDE + 3] = 1;
    assert_int_equal(tune_strategy_neighbours(b.cands, N, tried, floor_cand, out), 13);
    for (int i = 0; i < 13; i++)
        assert_true(out[i] / SIDE == 5 || out[i] % SIDE == 2);
    /* A problem parameter that follows the tiles (EVEN_M) does not make two configurations apart. */
    b.configs[5 * SIDE + 4].p[GEN_EVEN_M] ^= 1;
    assert_int_equal(tune_strategy_neighbours(b.cands, N, tried, floor_cand, out), 13);
}

/* ---- the replay of the H200's ground truth ------------------------------------------------------ */

static const char *const truth_files[] = { "bench/results/truth-fwd-h200-c9e2ab6.csv",
                                           "bench/results/truth-bwd-h200-f6afef6.csv" };

static const tune_bench default_bench = { .warmup_ms = 10, .rep_ms = 50, .timeout_s = 10 };
static const tune_confirm default_confirm = { .top = 8, .within = 0.10, .rounds = 4 };   /* default.lua's */

/* Over every workload of both files and `seeds` seeds: the share of searches within 2 % of the
 * optimum, the mean quality and the mean cost against the exhaustive search's. */
static void replay_with(const tune_replay_model *model, const tune_strategy *st, double budget, int seeded,
                        int seeds, double *good, double *quality, double *cost)
{
    const tune_replay_setup setup = { st, budget, seeded, seeds, &default_bench, &default_confirm, model };
    tune_replay_score score;
    tune_replay_score_init(&score);
    for (size_t f = 0; f < sizeof truth_files / sizeof truth_files[0]; f++) {
        char path[4096], err[512];
        test_source_path(path, sizeof path, truth_files[f]);
        tune_truth *t;
        if (tune_truth_load(path, &t, err, sizeof err) != 0)
            fail_msg("%s", err);
        assert_int_equal(t->count, 8);
        for (int w = 0; w < t->count; w++)
            assert_int_equal(tune_replay_score_workload(t, w, &setup, &score), 0);
        tune_truth_free(t);
    }
    assert_int_equal(score.failed, 0);
    assert_int_equal(score.runs, 16L * seeds);
    *good = (double)score.within_2pc / score.runs;
    *quality = score.quality_sum / score.runs;
    *cost = score.cost_sum / score.runs;
}

static void replay(const tune_strategy *st, double budget, int seeded, int seeds, double *good, double *quality,
                   double *cost)
{
    replay_with(&tune_replay_h200, st, budget, seeded, seeds, good, quality, cost);
}

static void guided_search_keeps_its_measured_quality(void **state)
{
    (void)state;
    /* Measured 2026-11-29 (bench/RESULTS.md, at the H200's timing noise, default.lua's confirm
     * step): seeded by the other workloads' winners, 0.996 of the optimum on average and within
     * 2 % of it in 94 % of searches, at 17 % of the exhaustive cost; the exhaustive search 0.995
     * and 91 %. The bar, the issue's: within 2 % in 90 % of searches at most a fifth of the
     * exhaustive cost, and no worse on average than the exhaustive search. */
    const tune_strategy guided = { .kind = TUNE_GUIDED, .keep = 0.25, .first = { 5, 20, 10 }, .seed = 1 };
    const tune_strategy exhaustive = { .kind = TUNE_EXHAUSTIVE };
    double good, quality, cost, ex_good, ex_quality, ex_cost;
    replay(&guided, 0, 1, 10, &good, &quality, &cost);
    replay(&exhaustive, 0, 0, 10, &ex_good, &ex_quality, &ex_cost);
    printf("guided, seeded: %.3f within 2 %%, quality %.4f, cost %.3f; exhaustive: %.3f, %.4f\n", good, quality, cost,
           ex_good, ex_quality);
    assert_true(quality >= ex_quality - 0.002);
    assert_true(good >= 0.90);
    assert_true(cost <= 0.20);
}

/* The same bar under a budget in seconds, with a worker's start charged once a workload (the kept
 * worker) and the first piece as wide as a sweep's 16 compile threads: replayed 2026-11-30
 * (bench/RESULTS.md), from 6 s a workload 0.996 of the optimum and 94 % within 2 % at 0.195 of
 * the exhaustive cost, about 22 minutes for default.lua's 224 workloads made wide. (At 4 s a
 * workload it falls to 68 %; that the start is projected once is budgets_pay_a_start_once's.) */
static void guided_search_under_a_budget_with_a_start(void **state)
{
    (void)state;
    tune_replay_model model = tune_replay_h200;
    model.start_s = 0.8;
    model.width = 16;
    const tune_strategy guided = { .kind = TUNE_GUIDED, .keep = 0.25, .first = { 5, 20, 10 }, .seed = 1,
                                   .budget_s = 6 };
    double good, quality, cost;
    replay_with(&model, &guided, 0, 1, 10, &good, &quality, &cost);
    printf("guided, seeded, 6 s a workload, a 0.8 s start: %.3f within 2 %%, quality %.4f, cost %.3f\n", good, quality,
           cost);
    assert_true(good >= 0.90);
    assert_true(quality >= 0.99);
    assert_true(cost <= 0.20);
}

static void prune_stays_near_the_optimum(void **state)
{
    (void)state;
    const tune_strategy prune = { .kind = TUNE_PRUNE, .keep = 0.25, .first = { 5, 20, 10 }, .seed = 1 };
    double good, quality, cost;
    replay(&prune, 0, 0, 5, &good, &quality, &cost);
    printf("prune: %.3f within 2 %%, quality %.4f, cost %.3f\n", good, quality, cost);
    assert_true(quality >= 0.985);
    assert_true(cost < 0.80);
}

/* ---- reading a truth file ------------------------------------------------------------------------ */

static void expect_load_error(const char *text, const char *what)
{
    char path[] = "/tmp/ft_truth_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    tune_truth *t = (tune_truth *)1;
    char err[512];
    assert_int_equal(tune_truth_load(path, &t, err, sizeof err), -1);
    assert_null(t);
    if (!strstr(err, what))
        fail_msg("'%s' does not say '%s'", err, what);
    unlink(path);
}

#define HEAD "op,dtype,head_dim,causal,batch,heads,seqlen,family,BLOCK_M,status,median_ms,message\n"
#define DECODE_HEAD "op,dtype,head_dim,causal,batch,heads,seqlen,seqlen_k,heads_k,bottom_right,family,BLOCK_M,status," \
                    "median_ms\n"

static void truth_loader_names_the_line_and_the_fault(void **state)
{
    (void)state;
    expect_load_error(HEAD "fwd,bf16,64,0,1,8,512,fwd_mma,64,ok,0.5,\"open quote\n", ":2: not CSV");
    expect_load_error(HEAD "fwd,bf16,64,0,1,8,512,fwd_mma,64,ok,fast,x\n", ":2: median_ms 'fast' is not a time");
    expect_load_error(HEAD "fwd,bf16,64,0,1,8,512,no_such,64,ok,0.5,x\n", "family 'no_such' is not in this build");
    expect_load_error(HEAD "fwd,bf16,64,0,1,8,512,fwd_mma,64,ok\n", "10 fields, the heading has 12");
    expect_load_error("op,dtype,family,status,median_ms\nfwd,bf16,fwd_mma,ok,1\n", "no column 'head_dim'");
    expect_load_error(HEAD, "no results");
    expect_load_error(HEAD "fwd,bf16,64,0,1,8,512,fwd_mma,sixty,ok,0.5,x\n", "BLOCK_M");
    /* the decode columns: none empty, and the key within its bytes */
    expect_load_error(DECODE_HEAD "fwd,bf16,128,0,8,32,1,,8,0,fwd_mma,16,ok,0.5\n", ":2: seqlen_k is empty");
    expect_load_error(DECODE_HEAD "fwd,bf16,128,0,8,32,1,8192,8,0000000000000000000000000000000000000000000000000000,"
                      "fwd_mma,16,ok,0.5\n", "longer than");
}

/* Decode shapes' rows carry the key length, the K/V heads and the diagonal's corner into the key. */
static void truth_loader_reads_decode_columns(void **state)
{
    (void)state;
    char path[] = "/tmp/ft_truth_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(DECODE_HEAD "fwd,bf16,128,1,8,32,4,8192,8,1,fwd_mma,16,ok,0.25\n", f);
    fclose(f);
    tune_truth *t;
    char err[512];
    assert_int_equal(tune_truth_load(path, &t, err, sizeof err), 0);
    assert_int_equal(t->count, 1);
    assert_string_equal(t->workloads[0].key, "fwd bf16 d=128 causal=1 b=8 h=32 s=4 sk=8192 hk=8 br=1");
    tune_truth_free(t);
    unlink(path);
}

static void truth_loader_reads_quotes_and_failures(void **state)
{
    (void)state;
    char path[] = "/tmp/ft_truth_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(HEAD "fwd,bf16,64,0,1,8,512,fwd_mma,128,ok,0.25,\"a, \"\"quoted\"\" message\"\n"
               "fwd,bf16,64,0,1,8,512,fwd_mma,64,crashed,,died\n"
               "fwd,bf16,64,1,1,8,512,fwd_mma,64,ok,0.5,\n"
               "\n", f);   /* a blank last line, as editors leave it */
    fclose(f);
    tune_truth *t;
    char err[512];
    assert_int_equal(tune_truth_load(path, &t, err, sizeof err), 0);
    assert_int_equal(t->count, 2);
    assert_string_equal(t->workloads[0].key, "fwd bf16 d=64 causal=0 b=1 h=8 s=512");
    assert_int_equal(t->workloads[0].count, 2);
    assert_true(t->workloads[0].best_ms == 0.25);
    /* In parameter order: BLOCK_M 64 (failed) before 128. */
    assert_true(isnan(t->workloads[0].cands[0].median_ms));
    assert_int_equal(t->workloads[0].cands[1].config.p[GEN_BLOCK_M], 128);
    assert_int_equal(t->workloads[1].cands[0].config.p[GEN_CAUSAL], 1);
    tune_truth_free(t);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exhaustive_times_and_stores_each_once),
        cmocka_unit_test(truth_loader_reads_decode_columns),
        cmocka_unit_test(confirm_retimes_the_finalists_in_rotation),
        cmocka_unit_test(the_incumbent_is_always_confirmed),
        cmocka_unit_test(budgets_hold_with_an_incumbent),
        cmocka_unit_test(prune_keeps_its_fraction_and_ranks_the_rest),
        cmocka_unit_test(halving_holds_its_budget_and_stores_what_it_did_not_reach),
        cmocka_unit_test(halving_tries_known_winners_first),
        cmocka_unit_test(budgets_hold_whatever_a_timing_costs),
        cmocka_unit_test(budgets_use_kernels_compiled_side_by_side),
        cmocka_unit_test(budgets_pay_a_start_once),
        cmocka_unit_test(guided_walks_from_a_corner_to_the_floor),
        cmocka_unit_test(neighbours_differ_in_one_tunable),
        cmocka_unit_test(guided_search_keeps_its_measured_quality),
        cmocka_unit_test(guided_search_under_a_budget_with_a_start),
        cmocka_unit_test(prune_stays_near_the_optimum),
        cmocka_unit_test(truth_loader_names_the_line_and_the_fault),
        cmocka_unit_test(truth_loader_reads_quotes_and_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
