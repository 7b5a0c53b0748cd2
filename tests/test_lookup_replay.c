/* The runtime's nearest-winner lookup (rt_choose over the shipped tables) replayed over workloads
 * whose every candidate an H200 timed (bench/results/lookup-replay-h200-04f31ee.csv, written by
 * dev/lookup-replay.py --csv from two exhaustive sweeps of default.lua's spaces: 72 forwards and 36
 * backwards at batches 1-8, lengths 256-3072, most of them not in the table). For each, the kernel
 * the lookup serves is found among the timed ones and its median divided by the fastest's there:
 * a change to the lookup or to the table that serves these problems worse fails here, without a
 * GPU. notes/tuning.md, section 14: through this test the rule before the grid's fill was counted
 * served them 1.046x the fastest (geometric mean, 25 beyond 5 %), the fill's 1.026x (15). */
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

static const char *const data_file = "bench/results/lookup-replay-h200-04f31ee.csv";
static const rt_device h200 = { "NVIDIA H200", "sm_90", 232448, 132 };

/* Bounds the replay must stay within, between the fill's rule (1.026, 15 of 108 beyond 5 %) and
 * batch x heads' (1.046, 25): a table re-swept moves these by its own noise, about a percent. */
#define REPLAY_MAX_GEOMEAN 1.038
#define REPLAY_MAX_BEYOND_5 20   /* workloads served more than 5 % behind the fastest */
#define REPLAY_MIN_MATCHED 0.9   /* of the workloads, the served kernel found among the timed */

enum { MAX_TIMED = 64, LINE_LEN = 1024 };

typedef struct timed_kernel {
    char text[GEN_CONFIG_TEXT];   /* "fwd_wgmma BLOCK_M=128 ..." as gen_config_format writes it */
    double median_ms;
} timed_kernel;

typedef struct replay {
    db *shipped;
    int workloads, matched, beyond_5;
    double log_sum, worst;
} replay;

/* "fwd_wgmma" and its tunables as the log printed them, in gen_config_format's one text form (a
 * tunable added since the log was written takes its default, as the kernel then did). */
static void canonical(const char *family, const char *tunables, char *out, size_t len)
{
    const gen_family *f = gen_family_find(family);
    if (!f)
        fail_msg("%s: unknown family '%s'", data_file, family);
    gen_config c;
    gen_config_init(&c, f);
    char why[256];
    if (gen_config_parse(&c, tunables, why, sizeof why) != 0)
        fail_msg("%s: %s", data_file, why);
    gen_config_format(&c, GEN_FORMAT_FAMILY | GEN_FORMAT_TUNABLES, out, len);
}

/* One workload's timings against what the lookup serves it. */
static void judge(replay *r, const db_workload *w, const timed_kernel *timed, int count)
{
    rt_choice choice;
    int db_error;
    char err[512];
    assert_int_equal(rt_choose(NULL, r->shipped, &h200, w, 0, &choice, &db_error, err, sizeof err), 0);
    char served[GEN_CONFIG_TEXT];
    gen_config_format(&choice.config, GEN_FORMAT_FAMILY | GEN_FORMAT_TUNABLES, served, sizeof served);
    double best = INFINITY, got = 0;
    for (int i = 0; i < count; i++) {
        best = fmin(best, timed[i].median_ms);
        if (!strcmp(timed[i].text, served))
            got = timed[i].median_ms;
    }
    r->workloads++;
    if (getenv("FT_TEST_VERBOSE"))
        printf("  %s %s d%d c%d B%d H%d N%d: %s\n", w->op ? "bwd" : "fwd", w->dtype == 2 ? "bf16" : "f16", w->head_dim,
               w->causal, w->batch, w->heads, w->seqlen_q, got > 0 ? "" : "served kernel not timed");
    if (got <= 0)
        return;
    const double ratio = got / best;
    r->matched++;
    r->log_sum += log(ratio);
    r->worst = fmax(r->worst, ratio);
    r->beyond_5 += ratio > 1.05;
}

static int parse_op(const char *s) { return !strcmp(s, "bwd") ? DB_OP_BWD : DB_OP_FWD; }
static int parse_dtype(const char *s) { return !strcmp(s, "bf16") ? 2 : !strcmp(s, "f16") ? 1 : 0; }

static void served_kernels_stay_near_the_fastest(void **state)
{
    (void)state;
    replay r = { 0 };
    char err[512];
    assert_int_equal(rt_shipped_open(&r.shipped, err, sizeof err), 0);
    assert_non_null(r.shipped);
    char path[4096];
    test_source_path(path, sizeof path, data_file);
    FILE *in = fopen(path, "r");
    if (!in)
        fail_msg("cannot open %s", path);
    char line[LINE_LEN], key[LINE_LEN] = "";
    db_workload w = { 0 };
    timed_kernel *timed = calloc(MAX_TIMED, sizeof *timed);
    int count = 0, line_no = 0;
    while (fgets(line, sizeof line, in)) {
        if (++line_no == 1)
            continue;   /* the header */
        line[strcspn(line, "\r\n")] = 0;
        char *field[13], *save = NULL, *p = line;
        int n = 0;
        for (char *tok; n < 13 && (tok = strtok_r(p, ",", &save)); p = NULL)
            field[n++] = tok;
        if (n != 13)
            fail_msg("%s:%d: %d fields, 13 expected", data_file, line_no, n);
        /* The workload is the first ten fields: a new one ends the last. */
        char this_key[LINE_LEN];
        snprintf(this_key, sizeof this_key, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s", field[0], field[1], field[2], field[3],
                 field[4], field[5], field[6], field[7], field[8], field[9]);
        if (strcmp(this_key, key)) {
            if (count)
                judge(&r, &w, timed, count);
            snprintf(key, sizeof key, "%s", this_key);
            w = (db_workload){ .op = parse_op(field[0]), .dtype = parse_dtype(field[1]), .head_dim = atoi(field[2]),
                               .head_dim_v = atoi(field[3]), .causal = atoi(field[4]), .batch = atoi(field[5]),
                               .heads = atoi(field[6]), .heads_k = atoi(field[7]), .seqlen_q = atoi(field[8]),
                               .seqlen_k = atoi(field[9]) };
            count = 0;
        }
        if (count == MAX_TIMED)
            fail_msg("%s:%d: more than %d kernels at one workload", data_file, line_no, MAX_TIMED);
        canonical(field[10], field[11], timed[count].text, sizeof timed[count].text);
        timed[count++].median_ms = atof(field[12]);
    }
    if (count)
        judge(&r, &w, timed, count);
    fclose(in);
    free(timed);
    db_close(r.shipped);
    const double geomean = r.matched ? exp(r.log_sum / r.matched) : INFINITY;
    printf("  %d workloads, the served kernel timed at %d: %.3fx the fastest (geometric mean), worst %.3f, "
           "%d beyond 5 %%\n", r.workloads, r.matched, geomean, r.worst, r.beyond_5);
    assert_true(r.workloads >= 100);
    if (r.matched < REPLAY_MIN_MATCHED * r.workloads)
        fail_msg("the served kernel was timed at %d of %d workloads only: the table's kernels are no longer "
                 "those the data timed (a sweep of new tunables?); rewrite %s from a new exhaustive sweep "
                 "(dev/lookup-replay.py --csv)", r.matched, r.workloads, data_file);
    if (geomean > REPLAY_MAX_GEOMEAN)
        fail_msg("the lookup serves these workloads %.3fx the fastest, more than %.3f", geomean, REPLAY_MAX_GEOMEAN);
    if (r.beyond_5 > REPLAY_MAX_BEYOND_5)
        fail_msg("the lookup serves %d workloads more than 5 %% behind the fastest, more than %d", r.beyond_5,
                 REPLAY_MAX_BEYOND_5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(served_kernels_stay_near_the_fastest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
