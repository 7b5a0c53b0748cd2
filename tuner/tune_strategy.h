/* A workload's search (prefix tune_strategy_): which of its candidates to time, with which
 * bench, and which results to store, decided from what the timings so far returned. Written
 * against an oracle, so that one code serves the sweep (tune_sweep_strategy.c: the oracle times
 * on the GPU and stores in the database) and the replay (tune_replay.h: the oracle reads a stored
 * ground truth, adds noise and charges the time a timing would take), where a strategy's quality
 * is measured without a GPU. */
#ifndef FT_TUNE_STRATEGY_H
#define FT_TUNE_STRATEGY_H

#include "tune_space.h"
#include "tune_worker.h"

/* What a measurement step returns. */
enum { TUNE_PHASE_OK = 0, TUNE_PHASE_SETUP_FAILED = -1, TUNE_PHASE_DB_ERROR = -2, TUNE_PHASE_INTERRUPTED = 1 };

/* What a strategy knows of a candidate before it is timed. */
typedef struct tune_strategy_cand {
    const gen_config *config;
    int known;                  /* 1: a winner this GPU already has for another workload runs it */
    int incumbent;              /* 1: the workload's own stored winner on this GPU, which the guard
                                 * weighs the others against: a cut keeps it and the confirm step
                                 * rotates it with the finalists, so that one slow reading of it
                                 * cannot put it out of the running */
} tune_strategy_cand;

/* The strategy's hands: time candidates, store results, say what the timing has cost. */
typedef struct tune_oracle {
    /* Times cands[0..n) (indices into the strategy's candidate array) with bench, in that order;
     * out[i] gets candidate cands[i]'s result (tune_record_init'ed with id -1 when it was not
     * reached). store_ok 0: only the failures are stored at once, the ok results are the
     * strategy's to store. pass labels the progress (" (first pass)"). Returns TUNE_PHASE_*. */
    int (*time)(void *ctx, const int *cands, int n, const tune_bench *bench, int store_ok, tune_record *out,
                const char *pass);
    /* Stores r as candidate c's result: 0, or TUNE_PHASE_DB_ERROR. */
    int (*store)(void *ctx, int c, const tune_record *r);
    /* Seconds the timings of this workload have cost so far. */
    double (*spent)(void *ctx);
    /* Timings planned, for progress (may be NULL). */
    void (*plan)(void *ctx, long more);
    /* Of spent(), the seconds that went to compiling kernels (may be NULL: none). */
    double (*built)(void *ctx);
    /* How many candidates one call times for about the cost of one, their kernels compiled side by
     * side (the sweep: its compile threads); 0 or 1: one. A budgeted first pass commits that many
     * before it has measured what a timing costs, so a budget below one such piece's cost is
     * overrun by it. */
    int width;
    void *ctx;
} tune_oracle;

/* One workload's search. */
typedef struct tune_strategy_task {
    const tune_strategy *strategy;
    const tune_bench *bench;    /* the full timing */
    const tune_confirm *confirm;
    const tune_strategy_cand *cands;
    const int *pending;         /* the candidates without a stored result, in the order to try */
    int pending_count;
    int decided_before;         /* 1: an earlier run stored 'skipped' results (a cut was decided):
                                 * the pending ones are timed with the full bench, no new cut */
    double budget_s;            /* what the timings may cost (halving, guided; at least one
                                 * first-pass timing and its re-timing are made); <= 0: no bound */
} tune_strategy_task;

/* Measures the task's pending candidates with its strategy, through o. Every candidate ends up
 * stored: timed (ok or a failure), or 'skipped' with the reason (a first pass that ranked it out,
 * or a budget that did not reach it). Returns TUNE_PHASE_*; failure reasons are the oracle's. */
int tune_strategy_measure(const tune_strategy_task *t, const tune_oracle *o);

/* Timings tune_strategy_measure plans for n pending candidates before any runs (for progress):
 * exhaustive and random n, prune and halving without a budget n + the kept ones, none for the
 * searches that say as they go (guided; halving with a budget of its own or, budgeted, one
 * given). */
long tune_strategy_planned(const tune_strategy *st, int n, int budgeted);

/* How many of `timed` first-pass candidates a cut keeps: ceil(keep * timed), at least 1 when
 * timed > 0. */
int tune_sweep_keep_count(int timed, double keep);

/* The most timings tune_confirm_combine takes: the first and up to 16 rounds. */
#define TUNE_CONFIRM_MAX_TIMINGS 17

/* The confirm step's finalists among timed[0..n-1] (tune_space.h, tune_confirm): the indices of
 * the ok results, fastest first, at most cf->top of them, whose medians are within cf->within of
 * the fastest; and timed[must] (-1: none), where ok, however slow: in the last place, for the
 * slowest where cf->top were found. Returns their count (finalists needs room for cf->top), or 0
 * when fewer than two qualify or cf->rounds is 0. */
int tune_confirm_finalists(const tune_record *timed, int n, const tune_confirm *cf, int must, int *finalists);

/* A finalist's record from its m ok timings (timings[0] the first): the median of their medians,
 * the least minimum, the worst errors, spread = (slowest - fastest median) / median, TFLOP/s
 * scaled to the median. */
void tune_confirm_combine(const tune_record *const *timings, int m, tune_record *out);

/* The first pass of the guided strategy: the candidates one searched parameter away from
 * `from` (the same family, every other parameter equal) among cands[0..n) whose tried[] is 0,
 * written to out (room for n); returns how many. */
int tune_strategy_neighbours(const tune_strategy_cand *cands, int n, const unsigned char *tried, int from,
                             int *out);

#endif
