/* The tuner's strategies replayed against a stored ground truth (tune_replay.h), no GPU needed:
 * for each strategy and budget, over every workload of the truth files and many seeds, what it
 * picked against the best of all (quality, 1 the optimum) and what its timings cost against the
 * exhaustive search's. The table in bench/RESULTS.md comes from here.
 *
 * Usage: strategy_replay [--seeds N] [--confirm TOP,WITHIN,ROUNDS] [--by-workload] [--start S]
 *                        [--step S] [--budget-s S] [--width N] TRUTH.csv...
 * --confirm: the confirm step of every strategy (default default.lua's Hopper spaces').
 * --by-workload: each workload's mean quality and cost under each strategy as well.
 * --start, --step: seconds a search's first step, and each later one, cost before their first
 *   timing (a worker's start; default 0): a sweep that starts a worker each step pays both.
 * --budget-s: rows for halving and guided, seeded, within that many seconds a workload.
 * --width: candidates a budgeted first pass commits before it has measured one (the sweep's
 *   compile threads; default 1).
 * The model of a timing's noise and cost is the one measured on an H200 (tune_replay_h200), the
 * benches and the confirm step are default.lua's; the budgets are fractions of each workload's
 * exhaustive cost. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_replay.h"

/* default.lua's timing and confirm step. */
static const tune_bench full = { .warmup_ms = 10, .rep_ms = 50, .timeout_s = 10 };
static tune_confirm confirm = { .top = 8, .within = 0.10, .rounds = 4 };

typedef struct row {
    const char *name;
    tune_strategy st;
    double budget;              /* fraction of the exhaustive cost; 0: none */
    int seeded;                 /* known winners: the other workloads' best */
} row;

int main(int argc, char **argv)
{
    int seeds = 20, first = 1, by_workload = 0;
    tune_replay_model model = tune_replay_h200;
    double budget_s = 0;
    for (;;) {
        if (first + 1 < argc && !strcmp(argv[first], "--seeds")) {
            seeds = atoi(argv[first + 1]);
            first += 2;
        } else if (first + 1 < argc && !strcmp(argv[first], "--confirm")) {
            if (sscanf(argv[first + 1], "%d,%lf,%d", &confirm.top, &confirm.within, &confirm.rounds) != 3 ||
                confirm.top < 2 || confirm.top > 16 || confirm.rounds < 0 || confirm.rounds > 16) {
                fprintf(stderr, "strategy_replay: --confirm %s is not TOP,WITHIN,ROUNDS (2-16, a fraction, 0-16)\n",
                        argv[first + 1]);
                return 2;
            }
            first += 2;
        } else if (first + 1 < argc && (!strcmp(argv[first], "--start") || !strcmp(argv[first], "--step") ||
                                         !strcmp(argv[first], "--budget-s"))) {
            char *end;
            const double v = strtod(argv[first + 1], &end);
            if (*end || !(v >= 0 && v < 3600)) {
                fprintf(stderr, "strategy_replay: %s %s is not a number of seconds (0 to 3600)\n", argv[first],
                        argv[first + 1]);
                return 2;
            }
            *(!strcmp(argv[first], "--start") ? &model.start_s : !strcmp(argv[first], "--step") ? &model.step_s
                                                                                                 : &budget_s) = v;
            first += 2;
        } else if (first + 1 < argc && !strcmp(argv[first], "--width")) {
            model.width = atoi(argv[first + 1]);
            if (model.width < 1 || model.width > 1024) {
                fprintf(stderr, "strategy_replay: --width %s is not 1 to 1024\n", argv[first + 1]);
                return 2;
            }
            first += 2;
        } else if (first < argc && !strcmp(argv[first], "--by-workload")) {
            by_workload = 1;
            first++;
        } else
            break;
    }
    if (first >= argc || seeds < 1) {
        fprintf(stderr, "usage: strategy_replay [--seeds N] [--confirm TOP,WITHIN,ROUNDS] [--by-workload] [--start S] "
                        "[--step S] [--budget-s S] [--width N] TRUTH.csv...\n");
        return 2;
    }
    const tune_bench short_pass = { .warmup_ms = 5, .rep_ms = 20, .timeout_s = 10 };
    const tune_strategy exhaustive = { .kind = TUNE_EXHAUSTIVE, .seed = 1 };
    const tune_strategy prune = { .kind = TUNE_PRUNE, .seed = 1, .keep = 0.25, .first = short_pass };
    const tune_strategy halving = { .kind = TUNE_HALVING, .seed = 1, .keep = 0.25, .first = short_pass };
    const tune_strategy guided = { .kind = TUNE_GUIDED, .seed = 1, .keep = 0.25, .first = short_pass };
    tune_strategy halving_s = halving, guided_s = guided;   /* within --budget-s seconds a workload */
    halving_s.budget_s = guided_s.budget_s = budget_s;
    const row rows[] = {
        { "exhaustive", exhaustive, 0, 0 },        { "prune keep 0.25", prune, 0, 0 },
        { "halving 20%", halving, 0.20, 0 },       { "halving 20%, seeded", halving, 0.20, 1 },
        { "halving 10%, seeded", halving, 0.10, 1 }, { "guided (no budget)", guided, 0, 0 },
        { "guided, seeded", guided, 0, 1 },        { "guided 10%, seeded", guided, 0.10, 1 },
        { "guided 5%, seeded", guided, 0.05, 1 },
        { "halving --budget-s, seeded", halving_s, 0, 1 }, { "guided --budget-s, seeded", guided_s, 0, 1 },
    };
    const int nrows = (int)(sizeof rows / sizeof rows[0]) - (budget_s > 0 ? 0 : 2);
    printf("%-26s %9s %9s %9s %9s %9s\n", "strategy", "quality", "worst", ">=0.98", "cost", "timings");
    printf("%-26s %9s %9s %9s %9s %9s\n", "", "(mean)", "", "(share)", "(x exh.)", "(mean)");
    /* Every file loaded once; a workload where nothing ran is said once and left out. */
    tune_truth **truths = calloc((size_t)(argc - first), sizeof *truths);
    if (!truths)
        return 1;
    for (int a = first; a < argc; a++) {
        char err[512];
        if (tune_truth_load(argv[a], &truths[a - first], err, sizeof err) != 0) {
            fprintf(stderr, "strategy_replay: %s\n", err);
            return 1;
        }
        for (int w = 0; w < truths[a - first]->count; w++)
            if (!isfinite(truths[a - first]->workloads[w].best_ms))
                fprintf(stderr, "strategy_replay: %s: no candidate ran, left out\n", truths[a - first]->workloads[w].key);
    }
    for (int r = 0; r < nrows; r++) {
        const tune_replay_setup setup = { &rows[r].st, rows[r].budget, rows[r].seeded, seeds, &full, &confirm,
                                          &model };
        tune_replay_score total;
        tune_replay_score_init(&total);
        for (int a = 0; a < argc - first; a++)
            for (int w = 0; w < truths[a]->count; w++) {
                tune_replay_score one;
                tune_replay_score_init(&one);
                if (tune_replay_score_workload(truths[a], w, &setup, &one) != 0)
                    return 1;
                if (by_workload && one.runs)
                    printf("  %-22s %-40s quality %.4f cost %.3f\n", rows[r].name, truths[a]->workloads[w].key,
                           one.quality_sum / one.runs, one.cost_sum / one.runs);
                total.runs += one.runs, total.failed += one.failed, total.within_2pc += one.within_2pc;
                total.quality_sum += one.quality_sum, total.cost_sum += one.cost_sum;
                total.timings_sum += one.timings_sum;
                total.worst = one.worst < total.worst ? one.worst : total.worst;
            }
        if (total.runs == 0) {
            printf("%-26s  (no run picked anything)\n", rows[r].name);
            continue;
        }
        printf("%-26s %9.4f %9.4f %9.3f %9.3f %9.1f%s\n", rows[r].name, total.quality_sum / total.runs, total.worst,
               (double)total.within_2pc / total.runs, total.cost_sum / total.runs, total.timings_sum / total.runs,
               total.failed ? "  (some runs picked nothing)" : "");
    }
    for (int a = 0; a < argc - first; a++)
        tune_truth_free(truths[a]);
    free(truths);
    return 0;
}
