/* The runtime's nearest-winner lookup (rt_choose over the shipped tables) replayed over workloads
 * whose every candidate an H200 timed (bench/results/lookup-replay-h200-04f31ee.csv: written by
 * dev/lookup-replay.py --csv in the ground truth's columns, read by tune_truth_load, from two
 * exhaustive sweeps of default.lua's spaces: 72 forwards and 36 backwards at batches 1-8, lengths
 * 256-3072, most of them not in the table). For each, the kernel the lookup serves is found among
 * the timed ones and its median divided by the fastest's there: a change to the lookup or to the
 * tables that serves these problems worse fails here, without a GPU. notes/tuning.md, section 14:
 * through this test the rule before the grid's fill was counted served them 1.046x the fastest
 * (geometric mean, 25 beyond 5 %), the fill's 1.026x (15); with the batch of one at 256 tokens in
 * the H200's table (section 15), which serves 4 of these workloads exactly, 1.024x (13). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen_internal.h"
#include "rt_internal.h"
#include "source_path.h"
#include "tune_replay.h"

static const char *const data_file = "bench/results/lookup-replay-h200-04f31ee.csv";
static const rt_device h200 = { "NVIDIA H200", "sm_90", 232448, 132 };

/* Bounds the replay must stay within, between the fill's rule (1.026, 15 of 108 beyond 5 %) and
 * batch x heads' (1.046, 25): a table re-swept moves these by its own noise, about a percent. */
#define REPLAY_MAX_GEOMEAN 1.038
#define REPLAY_MAX_BEYOND_5 20   /* workloads served more than 5 % behind the fastest */
#define REPLAY_MAX_UNTIMED 2     /* workloads whose served kernel the data never timed */

/* The workload of a truth's key ("fwd bf16 d=64 causal=0 b=16 h=32 s=1024"). */
static db_workload workload_of_key(const char *key)
{
    char op[8], dtype[8];
    db_workload w = { 0 };
    if (sscanf(key, "%7s %7s d=%d causal=%d b=%d h=%d s=%d", op, dtype, &w.head_dim, &w.causal, &w.batch, &w.heads,
               &w.seqlen_q) != 7 || (strcmp(op, "fwd") && strcmp(op, "bwd")) || (strcmp(dtype, "bf16") &&
                                                                                 strcmp(dtype, "f16")))
        fail_msg("%s: a workload this test does not read: '%s'", data_file, key);
    w.op = strcmp(op, "bwd") ? DB_OP_FWD : DB_OP_BWD;
    w.dtype = strcmp(dtype, "bf16") ? 1 : 2;
    w.head_dim_v = w.head_dim;
    w.seqlen_k = w.seqlen_q;
    return w;
}

static void served_kernels_stay_near_the_fastest(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512], path[4096];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    assert_non_null(shipped);
    test_source_path(path, sizeof path, data_file);
    tune_truth *truth = NULL;
    if (tune_truth_load(path, &truth, err, sizeof err) != 0)
        fail_msg("%s", err);
    int matched = 0, untimed = 0, beyond_5 = 0;
    double log_sum = 0, worst = 1;
    for (int i = 0; i < truth->count; i++) {
        const tune_truth_workload *tw = &truth->workloads[i];
        const db_workload w = workload_of_key(tw->key);
        rt_choice choice;
        int db_error;
        assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &choice, &db_error, err, sizeof err), 0);
        char served[GEN_CONFIG_TEXT], cand[GEN_CONFIG_TEXT];
        gen_config_format(&choice.config, GEN_FORMAT_FAMILY | GEN_FORMAT_TUNABLES, served, sizeof served);
        double got = 0;
        for (int c = 0; c < tw->count && !got; c++) {
            gen_config_format(&tw->cands[c].config, GEN_FORMAT_FAMILY | GEN_FORMAT_TUNABLES, cand, sizeof cand);
            if (!strcmp(cand, served))
                got = tw->cands[c].median_ms;
        }
        if (getenv("FT_TEST_VERBOSE"))
            printf("  %s: %s\n", tw->key, got > 0 ? "" : "served kernel not timed");
        if (!(got > 0)) {
            untimed++;
            continue;
        }
        const double ratio = got / tw->best_ms;
        matched++;
        log_sum += log(ratio);
        worst = fmax(worst, ratio);
        beyond_5 += ratio > 1.05;
    }
    const int workloads = truth->count;
    tune_truth_free(truth);
    db_close(shipped);
    const double geomean = matched ? exp(log_sum / matched) : INFINITY;
    printf("  %d workloads, the served kernel timed at %d: %.3fx the fastest (geometric mean), worst %.3f, "
           "%d beyond 5 %%\n", workloads, matched, geomean, worst, beyond_5);
    assert_true(workloads >= 100);
    if (untimed > REPLAY_MAX_UNTIMED)
        fail_msg("the served kernel was not timed at %d of %d workloads: the tables serve kernels the data "
                 "never timed (new tunables, a re-sweep); rewrite %s from a new exhaustive sweep "
                 "(dev/lookup-replay.py --csv)", untimed, workloads, data_file);
    if (geomean > REPLAY_MAX_GEOMEAN || beyond_5 > REPLAY_MAX_BEYOND_5)
        fail_msg("the lookup serves these workloads %.3fx the fastest (bound %.3f), %d of them more than 5 %% "
                 "behind (bound %d): the lookup or the shipped tables serve them worse", geomean,
                 REPLAY_MAX_GEOMEAN, beyond_5, REPLAY_MAX_BEYOND_5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(served_kernels_stay_near_the_fastest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
