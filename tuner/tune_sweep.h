/* The tuning sweep (prefix tune_sweep_): compile a loaded space's distinct kernels on a thread
 * pool (CUBINs cached in the database), then per workload skip what the database already holds
 * (resume), validate and time the rest in worker processes (tune_worker.h) under a watchdog,
 * store each result the moment it arrives, show progress and print a report of the winners. */
#ifndef FT_TUNE_SWEEP_H
#define FT_TUNE_SWEEP_H

#include <signal.h>
#include <stdint.h>

#include "db_internal.h"
#include "tune_space.h"
#include "tune_strategy.h"
#include "tune_worker.h"

/* Set by SIGINT/SIGTERM during a sweep (and by tests): the sweep stops the worker, closes
 * its sweep row and returns TUNE_SWEEP_INTERRUPTED. Also set when a --budget's alarm rings. */
extern volatile sig_atomic_t tune_sweep_interrupted;

/* The handlers a run installs for SIGINT, SIGTERM and SIGALRM, and SIGPIPE ignored (tune_stop.c): arm clears
 * tune_sweep_interrupted and, with budget_s > 0, sets an alarm that far ahead; disarm cancels the
 * alarm and puts the old handlers back. tune_stop_budget_spent: 1 once the alarm rang. */
typedef struct tune_stop {
    struct sigaction old_int, old_term, old_alrm, old_pipe;
} tune_stop;
void tune_stop_arm(tune_stop *s, long budget_s);
void tune_stop_disarm(tune_stop *s);
int tune_stop_budget_spent(void);

#define TUNE_SWEEP_INTERRUPTED 130   /* exit status after Ctrl-C, as shells report SIGINT */

/* Compiles every distinct kernel of the set for arch with `threads` threads and prints each
 * one's registers, spills and compile time: what `flashtune tune` does without a GPU.
 * budget_s > 0: compiling stops when that many seconds have passed (the kernels compiled by then
 * are reported, the rest counted as not reached), as Ctrl-C stops it. Returns 0 (compile
 * failures are reported, not fatal; a spent budget too), 1 when memory ran out,
 * TUNE_SWEEP_INTERRUPTED after Ctrl-C. */
int tune_sweep_compile_only(const tune_space_set *set, const char *arch, int threads, long budget_s);

/* The full sweep on the GPU the probe described: results go to the database at db_path
 * (created when missing). budget_s > 0: the sweep stops as Ctrl-C stops it once that many
 * seconds have passed (the candidate in flight is abandoned, everything measured is stored, the
 * workloads in their order: a rerun resumes), and returns 0. Returns 0 when every workload was
 * handled (failed candidates are results too), 1 on a database error or when a workload could not
 * be set up (no reference, no memory), TUNE_SWEEP_INTERRUPTED after Ctrl-C. seeded: each
 * workload's search also starts from the shipped tables' winner for it (tune_sweep_seed). That
 * one and the workload's own winner in the database are candidates where the space lacks them
 * (tune_sweep_winners_to_add). Never touches CUDA in this process. */
int tune_sweep_run(const tune_space_set *set, const tune_gpu_info *gpu, const char *db_path, int threads,
                   long budget_s, int seeded);

/* Resume filter: which of the count kernels have no stored result for (device, workload).
 * OUT: pending[] (indices into kernel_ids, in order; room for count), *pending_count, and
 * *pruned (may be NULL), how many stored results are 'skipped' (a prune already decided).
 * Returns 0 or -1 (err). */
int tune_sweep_pending(db *d, int64_t device_id, int64_t workload_id, const int64_t *kernel_ids, int count,
                       int *pending, int *pending_count, int *pruned, char *err, size_t len);

/* Puts first, keeping the order otherwise, the pending candidates (indices into configs, n of
 * them, reordered in place) whose tunable parameters are those of a kernel in known[0..known_n)
 * of the same family: the winners this GPU already has for other workloads, the likeliest to win
 * this one too, so that a sweep cut short by its budget has timed them (and the guided strategy
 * starts from them). Returns how many were put first. */
int tune_sweep_known_first(const gen_config *configs, int *pending, int n, const db_kernel *known, int known_n);

/* The configurations a workload's candidates (configs[0..n), the space's for workload w) lack
 * of its stored winners winners[0..winners_n) (this GPU's winner of w in the sweep's database,
 * which a winners file's import or an earlier sweep put there, and the shipped tables' seed), so
 * that the sweep times them beside the candidates rather than the declaration trusting a figure
 * of another run: each winner of the candidates' family whose tunables no candidate has, with the
 * candidates' problem parameters and EVEN_M, EVEN_N fitted to w's lengths, that the family's
 * checks take for w (gen_validate under smem_limit, gen_check_arch for arch,
 * gen_check_problem_heads; a space's where() is not asked), once each. Another family's kernel,
 * or one the checks refuse, is left out. OUT: out[] (room for winners_n), in winners' order.
 * Returns how many. */
int tune_sweep_winners_to_add(const gen_config *configs, int n, const db_workload *w, const db_kernel *winners,
                              int winners_n, int smem_limit, const char *arch, gen_config *out);

/* 1 when c holds its family's default for every parameter the space may choose (all but
 * DTYPE, HEAD_DIM, HEAD_DIM_V, CAUSAL, EVEN_M, EVEN_N, which the workload sets). */
int tune_sweep_is_default(const gen_config *c);

#endif
