/* A strategy's quality without a GPU (prefix tune_truth_, tune_replay_): a ground truth (every
 * candidate of some workloads timed once, bench/truth/truth.lua, exported by dev/gpu/truth.sh
 * as CSV) is read back, and a strategy (tune_strategy.h) is run against an oracle that answers
 * each timing with the truth's median times a seeded noise and charges the seconds the timing
 * would have cost. What it picked is judged by the truth: its true time against the best's. */
#ifndef FT_TUNE_REPLAY_H
#define FT_TUNE_REPLAY_H

#include "tune_strategy.h"

/* One candidate of the truth. */
typedef struct tune_truth_cand {
    gen_config config;
    double median_ms;           /* the truth; NAN when it failed */
} tune_truth_cand;

/* One workload of the truth: its key as written ("fwd bf16 d=64 causal=0 b=16 h=32 s=1024", then
 * " sk=K hk=H br=B" where the file has the columns seqlen_k, heads_k and bottom_right) and its
 * candidates in file order. */
typedef struct tune_truth_workload {
    char key[96];
    tune_truth_cand *cands;
    int count;
    double best_ms;             /* the least true median */
} tune_truth_workload;

typedef struct tune_truth {
    tune_truth_workload *workloads;
    int count;
} tune_truth;

/* Reads a truth CSV (dev/gpu/truth.sh's columns: op, dtype, head_dim, causal, batch, heads,
 * seqlen, then `flashtune results --format csv`'s; seqlen_k, heads_k and bottom_right optional:
 * dev/lookup-replay.py --csv writes them for decode shapes). OUT: *out (tune_truth_free).
 * Returns 0, or -1 with "path:line: why" in err. */
int tune_truth_load(const char *path, tune_truth **out, char *err, size_t len);
void tune_truth_free(tune_truth *t);

/* How a replay times: the noise of a timing and what it costs. */
typedef struct tune_replay_model {
    double noise_full;          /* relative standard deviation of a full-bench timing (e.g. 0.01) */
    double noise_first;         /* and of a first-pass one (shorter windows: noisier) */
    double overhead_s;          /* seconds a timing costs beyond its warm-up and timed windows */
    double start_s;             /* seconds a search's first step costs before its first timing (a
                                 * worker's start: its context, inputs and reference) */
    double step_s;              /* and each later step (0 where one worker serves the search) */
    int width;                  /* the oracle's width (tune_oracle.width: the sweep's compile threads) */
} tune_replay_model;

/* The model measured on an H200 (2026-11-29): the same candidates timed in two sweeps
 * (bench/results/truth-*-h200-f6afef6.csv and guided-*-h200-97cdbea.csv) differed by 3.5 % (the
 * standard deviation of their log ratio, first passes included), so about 2.5 % a timing; a
 * timing cost its windows and about 5 ms more. A step's start is not charged (strategy_replay
 * --start and --step charge it). */
extern const tune_replay_model tune_replay_h200;

/* The outcome of one replayed search. */
typedef struct tune_replay_outcome {
    double picked_ms;           /* the true median of what the search would ship (its fastest
                                 * stored ok result) */
    double quality;             /* best_ms / picked_ms: 1 is the optimum */
    double cost_s;              /* seconds charged */
    int timings;
} tune_replay_outcome;

/* Replays one search of workload w with strategy st (its budget_s as given), full bench `bench`
 * and confirm step cf, noise seeded by seed. known[i] marks candidate i as a known winner
 * (NULL: none). Returns 0, or -1 when memory ran out or nothing was picked. */
int tune_replay_run(const tune_truth_workload *w, const tune_strategy *st, const tune_bench *bench,
                    const tune_confirm *cf, const tune_replay_model *m, const unsigned char *known,
                    unsigned long long seed, tune_replay_outcome *out);

/* A strategy scored over searches: what strategy_replay prints and test_strategy holds. */
typedef struct tune_replay_setup {
    const tune_strategy *strategy;
    double budget;              /* a fraction of each search's exhaustive cost (0: the strategy's
                                 * own budget_s, seconds, or none) */
    int seeded;                 /* the other workloads' best as known winners */
    int seeds;                  /* searches a workload: noise seeds 1..seeds */
    const tune_bench *bench;    /* the full timing */
    const tune_confirm *confirm;
    const tune_replay_model *model;
} tune_replay_setup;

typedef struct tune_replay_score {
    long runs;                  /* searches that picked something */
    long failed;                /* searches that picked nothing */
    long within_2pc;            /* of the runs, those within 2 % of the optimum */
    double quality_sum, worst, cost_sum;   /* cost: over the exhaustive search's */
    double timings_sum;
} tune_replay_score;

/* An empty score (worst 1). */
void tune_replay_score_init(tune_replay_score *score);
/* Adds to *score the searches of workload w of t under setup, each against an exhaustive search of
 * the same seed (its cost the reference). A workload where nothing ran adds nothing. 0, or -1 when
 * memory ran out. */
int tune_replay_score_workload(const tune_truth *t, int w, const tune_replay_setup *setup,
                               tune_replay_score *score);

/* The leave-one-out seeds of w: known[i] = 1 where candidate i of w has the tunable parameters
 * of another workload's best in the same truth (a database that holds the other workloads'
 * winners). known has room for w->count. */
void tune_replay_known_from_others(const tune_truth *t, int w, unsigned char *known);

#endif
