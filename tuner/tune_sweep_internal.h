/* What the sweep's files share: the sweep's state, its units (one per space and workload), and
 * the steps the driver (tune_sweep.c) ties together: plan, measurement, strategies, progress and
 * report. Used only by tuner/tune_sweep*.c. */
#ifndef FT_TUNE_SWEEP_INTERNAL_H
#define FT_TUNE_SWEEP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tune_strategy.h"
#include "tune_sweep.h"
#include "tune_sweep_compile_internal.h"

/* One (space, workload): its candidates, their kernels and what is left to measure. */
typedef struct tune_unit {
    const tune_space *space;
    const tune_candidates *cands;   /* the space's, or `grown` where stored winners were added */
    tune_candidates grown;      /* the space's candidates and after them the stored winners it lacks
                                 * (tune_sweep_winners_to_add); configs malloc'ed, NULL when none */
    int added;                  /* how many stored winners were added so */
    db_kernel incumbent;        /* the workload's stored winner on this GPU in the sweep's database
                                 * (an import's, an earlier sweep's), which the guard weighs the
                                 * search's best against (tune_strategy_cand's incumbent) */
    int has_incumbent;          /* incumbent holds one */
    db_kernel seed;             /* the shipped tables' winner for the workload (tune_sweep_seed) */
    int seeded;                 /* seed holds one */
    int backward;
    int *job;                   /* per candidate: index into the kernel set */
    int ref_job;
    gen_config ref_config;
    int64_t workload_id;
    int *pending;               /* candidate indices without a stored result */
    int pending_count;
    int pruned_before;          /* 'skipped' results already stored: a prune was decided */
    int lazy;                   /* a search a budget bounds (halving, guided; no cut decided before):
                                 * its kernels are built as it reaches them, most never timed */
    int whole;                  /* measured to the end (this run or before): its winner is declared */
    int64_t untimed_winner;     /* the stored winner no sweep timed here, which the declaration
                                 * replaced (db_declared_untimed, before it); 0 none */
    tune_worker_proc worker;    /* the worker serving this unit's calls, kept between them */
    int worker_live;            /* worker is running (tune_sweep_end_unit stops it) */
    double best_tflops;         /* best of this run, for the progress line */
    char best[GEN_CONFIG_TEXT];
    char failure[1024];         /* why the workload could not be measured; empty when fine */
} tune_unit;

typedef struct tune_sweep {
    db *d;
    const tune_gpu_info *gpu;
    tune_kernel_set ks;
    tune_unit *units;
    int unit_count;
    int64_t device_id, sweep_id;
    int threads;                /* compile threads */
    long total, done;           /* timings planned and finished, for progress and ETA */
    double timing_start;
    int tty;
    char err[1024];
    char clocks_why[256];       /* why the timings carry no clocks (a worker's "C" line), or empty */
    int steps, steps_kept;      /* calls of run_phase, and those a unit's kept worker took */
    int workers;                /* benchmark workers started */
    int setups;                 /* of them, those that reported their set-up (READY) */
    tune_setup_times setup_sum; /* their set-up's phases, summed */
    double ready_s;             /* their seconds from the start to READY, summed (the phases and the
                                 * process's own start) */
    double step_s;              /* seconds in run_phase, compiling not included */
    db_declare_counts declared; /* how this run's winners were declared (tune_sweep_declare) */
    db *seeds;                  /* the shipped tables (rt_shipped_open), whose winner for a unit's
                                 * workload its search tries among the first; NULL: none */
    int seed_failure_said;      /* a failed seed lookup was reported */
} tune_sweep;


/* ---- the plan (tune_sweep_plan.c) ---------------------------------------------------------- */

/* Builds the units (each with the stored winners its space lacks: tune_sweep_winners_to_add),
 * stores devices, workloads and kernels, and finds what is pending. 0 or -1 (s->err). */
int tune_sweep_plan(tune_sweep *s, const tune_space_set *set);
/* The kernels of the winners the database holds for this GPU (its name): those of earlier
 * sweeps and of the workloads this one has measured so far. OUT: *known (malloc'ed), *n. 0, or
 * -1 (s->err). */
int tune_sweep_known_winners(tune_sweep *s, db_kernel **known, int *n);
/* 1 when configuration c is kernel k: the same family and tunables (the problem's parameters are
 * the workload's). */
int tune_sweep_same_kernel(const gen_config *c, const db_kernel *k);
/* The winner that seeds (a database of winners such as the shipped tables; NULL: none) hold for
 * workload w on this GPU (sm_count SMs): the nearest tuned workload of its kind, this GPU model's
 * first, else its arch's, as the runtime would serve w from them. 1 with *out, 0 none, -1 (err). */
int tune_sweep_seed(db *seeds, const char *device_name, const char *arch, int sm_count, const db_workload *w,
                    db_kernel *out, char *err, size_t len);

/* ---- measurement (tune_sweep_measure.c) ---------------------------------------------------- */

/* Stores one result of candidate c of u. 0 or -1 (s->err). */
int tune_sweep_store(tune_sweep *s, const tune_unit *u, int c, const tune_record *r);
/* Runs candidates cands[0..n-1] of u (candidate indices) in workers with bench: the unit's
 * worker, kept from its last call, or a fresh one. Each result goes to out[i] (may be NULL) and,
 * unless it is ok and defer_ok is set, to the database at once. Returns a TUNE_PHASE_* code. */
int tune_sweep_run_phase(tune_sweep *s, tune_unit *u, const int *cands, int n, const tune_bench *bench,
                         int defer_ok, tune_record *out, const char *pass);
/* Stops the unit's worker, if one is running (once its search is over). */
void tune_sweep_end_unit(tune_unit *u);
/* Records compile errors for the pending candidates whose kernel failed; drops them from
 * pending. 0 or -1 (s->err). */
int tune_sweep_record_compile_errors(tune_sweep *s, tune_unit *u);
/* For a lazy unit: builds the kernels of candidates cands[0..n) of u not built yet (the
 * database's cache first). Compile failures are left in the jobs. 0 or -1 (s->err). */
int tune_sweep_build_batch(tune_sweep *s, tune_unit *u, const int *cands, int n);

/* ---- strategies (tune_sweep_strategy.c) ---------------------------------------------------- */

/* Measures the pending candidates of u with its space's strategy (tune_strategy.h), within
 * share_s seconds when the strategy takes a budget and has none of its own (<= 0: none).
 * Returns a TUNE_PHASE_* code. */
int tune_sweep_measure_unit(tune_sweep *s, tune_unit *u, double share_s);

/* ---- progress and report (tune_sweep_report.c) --------------------------------------------- */

/* "fwd bf16 d=128 causal b=4 h=16 s=4096". */
void tune_sweep_unit_label(const tune_unit *u, char *buf, size_t len);
/* Progress after one timing: a live line on a terminal, one plain line otherwise. */
void tune_sweep_progress(tune_sweep *s, tune_unit *u, int c, const tune_record *r, const char *pass);
/* Counts one fresh worker's set-up (its READY line) and its seconds from the start to READY. */
void tune_sweep_count_setup(tune_sweep *s, const tune_setup_times *t, double ready_s);
/* The winner of every workload, from the database (this run's and earlier results), and the
 * declared one where the declaration chose another (db_declare_winners). */
void tune_sweep_report(tune_sweep *s, const char *db_path);
/* Declares the winners of the units measured whole (db_declare_winners, DB_DECLARE_MARGIN; the
 * counts in s->declared, which the report prints). 0, or -1 (s->err). */
int tune_sweep_declare(tune_sweep *s);

#endif
