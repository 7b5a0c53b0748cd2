/* The benchmark worker (prefix tune_): a child process that owns the CUDA context, validates
 * candidates against the `ref` family and times them; its line protocol over a pipe; the
 * statistics and FLOP count of a timing. The parent (tune_sweep.c) never initializes CUDA:
 * CUDA is not fork-safe, so every CUDA call happens in a child made by tune_worker.c (the
 * process and the pipe), which measures with tune_measure.c; tune_record.c writes and parses
 * the result lines, tune_stats.c holds the figures.
 *
 * Protocol (one text line each, child to parent):
 *   "D cc_major cc_minor sm_count smem_optin l2_bytes driver NAME"  probe: the GPU
 *   "N reason"                          probe: no usable GPU
 *   "READY open clocks inputs reference"  worker: context, buffers and reference are ready, and
 *                                       the seconds its set-up took (tune_setup_times)
 *   "C reason"                          worker: its timings will carry no clocks (tune_clocks.h)
 *   "E reason"                          worker: setup failed (nothing was measured)
 *   "B i"                               worker: candidate i (index into the task) starts
 *   "R i status median min spread tflops rel_error max_abs sm_mhz clock_events message"   its result
 * A worker that has answered every candidate it was given waits for more on a second pipe, parent
 * to child (tune_worker_send: a binary batch of candidates, their CUBINs included), so that one
 * worker serves every step of a workload's search: its context, inputs and reference are made
 * once. It exits when that pipe is closed. */
#ifndef FT_TUNE_WORKER_H
#define FT_TUNE_WORKER_H

#include <stddef.h>
#include <sys/types.h>

#include "db_internal.h"
#include "tune_pipe.h"
#include "tune_space.h"

/* What the probe child reports of one GPU. */
typedef struct tune_gpu_info {
    tune_device dev;            /* name, arch, cc, sm_count, smem_per_block_optin; real = 1 */
    char driver_version[16];    /* "13.0" */
    int l2_bytes;               /* L2 cache size (flushed between timed repetitions) */
    int ordinal;                /* its CUDA device number (tune --device), which the workers open */
} tune_gpu_info;

/* Forks a short-lived child that opens the driver and describes GPU number `ordinal` (the
 * caller's process never touches CUDA). Returns 1 with *out filled, 0 when there is no usable
 * GPU of that number (why: "no GPU here: REASON", or tune_device_check's), -1 when the probe
 * itself failed (fork, pipe, timeout; reason in why). */
int tune_worker_probe(int ordinal, tune_gpu_info *out, double timeout_s, char *why, size_t len);

/* 0 when GPU number `ordinal` is one of the `count` the driver reports; else -1 with why naming
 * the count: "this machine has 2 GPUs (0..1)", or "no GPU here" when count is 0. */
int tune_device_check(int ordinal, int count, char *why, size_t len);

/* One candidate handed to the worker. */
typedef struct tune_worker_item {
    const gen_config *config;
    const void *cubin;          /* the compiled image, owned by the caller */
    size_t cubin_size;          /* its bytes: what tune_worker_send copies to a running worker */
    int id;                     /* the caller's number, echoed in the results ("R id ...") */
} tune_worker_item;

/* The work of one worker process: one workload, its reference and the candidates to run. */
typedef struct tune_worker_task {
    db_workload workload;
    int backward;               /* 0: forward candidates; 1: backward */
    int device;                 /* the CUDA device number to run on (tune_gpu_info.ordinal) */
    const void *ref_cubin;      /* the ref family's image for this workload */
    const gen_config *ref_config;
    tune_bench bench;           /* warm-up and repetition time */
    int l2_bytes;               /* flush buffer size / 2 (0: no flush) */
    unsigned long long seed;    /* random inputs */
    const tune_worker_item *items;
    int count;
} tune_worker_task;

/* A running worker, seen from the parent. */
typedef struct tune_worker_proc {
    pid_t pid;
    int fd;                     /* read end of the results pipe */
    int cmd_fd;                 /* write end of the command pipe (tune_worker_send); -1 when closed */
    char buf[8192];             /* bytes read but not yet returned as a line */
    size_t used;
    int eof;                    /* the pipe reached end of file */
} tune_worker_proc;

/* Forks a worker that runs task->items[first..count-1] in order, then waits for more
 * (tune_worker_send). Returns 0 or -1 (why). */
int tune_worker_start(const tune_worker_task *task, int first, tune_worker_proc *w, char *why, size_t len);

/* Hands a running worker, one that has answered every candidate it was given, the candidates
 * task->items[0..count) to time with task->bench (the task's workload must be the worker's). It
 * answers them as at its start ("B i", "R i ..."). Returns 0, or -1 (why) when the worker is gone
 * or its pipe failed: then stop it and start another. The caller ignores SIGPIPE (tune_stop_arm). */
int tune_worker_send(tune_worker_proc *w, const tune_worker_task *task, char *why, size_t len);

/* One batch as the worker reads it from the command pipe (tune_worker_read_batch): the bench and
 * the candidates, each with its own copy of the configuration and the CUBIN. */
typedef struct tune_worker_batch {
    tune_bench bench;
    int count;
    tune_worker_item *items;
    gen_config *configs;
} tune_worker_batch;

/* The worker's side of tune_worker_send (public for the tests): reads one batch from fd. Returns
 * 1 with *b filled (free it with tune_worker_batch_free), 0 when the pipe was closed before a
 * batch began, -1 on a short or malformed batch. */
int tune_worker_read_batch(int fd, tune_worker_batch *b);
void tune_worker_batch_free(tune_worker_batch *b);

/* Waits until deadline (CLOCK_MONOTONIC seconds, see tune_now) for the next line (without its
 * newline, NUL-terminated, truncated to len). Returns 1 line, 0 end of file (the worker
 * exited), -1 deadline passed, -2 interrupted by a signal (the caller checks its flag). */
int tune_worker_read_line(tune_worker_proc *w, double deadline, char *line, size_t len);

/* Ends the worker (closes its pipes; SIGKILL unless it already exited) and reaps it; describes how
 * it ended in how ("exit status 4", "killed by signal 11 (Segmentation fault)"). Safe to call
 * twice. */
void tune_worker_stop(tune_worker_proc *w, char *how, size_t len);

/* ---- results and statistics (pure functions, tested on the CPU) -------------------------- */

typedef struct tune_record {
    int id;
    db_status status;
    double median_ms, min_ms, spread, tflops, rel_error, max_abs_error;   /* NAN: not measured */
    double sm_mhz;              /* the least SM clock sampled while timed (tune_clocks.h); NAN: none */
    long long clock_events;     /* NVML's clock event reasons seen then; -1: not sampled */
    char message[512];          /* empty when none */
} tune_record;

/* Sets every figure to NAN (clock_events -1), message empty, status ok. */
void tune_record_init(tune_record *r, int id);
/* The "R ..." line for r, newline included (newlines in the message become spaces). */
void tune_record_format(const tune_record *r, char *line, size_t len);
/* Parses a line written by tune_record_format (with or without its newline). 0 or -1. */
int tune_record_parse(const char *line, tune_record *r /* OUT */);

/* Where a worker's set-up went, in seconds (its "READY" line): the driver opened and the context
 * made, NVML opened for the clocks, the buffers allocated and the random inputs made (the ref
 * module, whose kernels make them, loaded), the reference run and kept. The sweep sums them to say what a worker's start costs (notes/tuning.md, section 12). */
typedef struct tune_setup_times {
    double open_s, clocks_s, inputs_s, reference_s;
} tune_setup_times;
/* The "READY ..." line for t, newline included. */
void tune_ready_format(const tune_setup_times *t, char *line, size_t len);
/* Parses a line written by tune_ready_format (with or without its newline): 0, or -1 when it is
 * not one (every figure must be a finite number of seconds, at least 0). */
int tune_ready_parse(const char *line, tune_setup_times *t /* OUT */);

/* Median, min and spread (p90 - p10) / median of n > 0 times (sorted in place); quantiles
 * interpolate linearly between order statistics. Returns 0, or -1 when n < 1. */
int tune_stats(float *ms, int n, double *median, double *min, double *spread);

/* A worker's load on the GPU, for the warm-up: busy_since is the time (tune_now) less the load
 * counted, idle_since when its last timing ended (0: none yet). */
typedef struct tune_load {
    double busy_since, idle_since;
} tune_load;
/* A candidate's warm-up in ms when it starts at `now` (seconds): the bench's warmup_ms, or longer
 * where the GPU has been under load for less than TUNE_PREHEAT_MS. The load counted is the time
 * under load up to the last timing, at most TUNE_PREHEAT_MS (the clocks have settled by then), less
 * the gap since (the host compiling, a worker starting), at least none. Under load a board reaches
 * its power cap within tens of milliseconds and its SM clock falls in steps (1980 to 1400-1750 MHz
 * on an H200): timed straight after a pause, a candidate ran at the idle board's clocks, up to
 * 10 % faster than those after it, and a search times the known winners first (notes/tuning.md,
 * section 11). Updates l for this timing; the caller sets l->idle_since when it ends. */
enum { TUNE_PREHEAT_MS = 200 };
double tune_warmup_ms(tune_load *l, double warmup_ms, double now);

/* Relative-error limit of a dtype: f32 1e-5 (2e-3 where its products may round to TF32, tf32 1),
 * f16 3e-3, bf16 1e-2, f64 1e-12. */
double tune_threshold(int dtype, int tf32);

/* ||got - want|| / ||want|| over n values (OUT: *rel, *max_abs). Returns the number of NaN or
 * infinite values in got (then *rel is INFINITY). */
long tune_compare(const double *got, const double *want, size_t n, double *rel, double *max_abs);
/* The same figures from accumulated statistics: stats[0] = sum of squared differences, [1] = sum
 * of squared wants (both over finite got), [2] = max |difference|, [3] = count of non-finite
 * got. The worker accumulates them on the GPU (ft_ref_compare in templates/families/ref.cu). */
long tune_compare_finish(const double stats[4], double *rel, double *max_abs);

#endif
