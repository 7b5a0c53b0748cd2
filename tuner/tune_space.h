/* Search spaces (prefix tune_): loads a Lua space file, checks it and enumerates every space's
 * candidate configurations per workload, all before anything is compiled.
 *
 * A space file is a Lua script run in a fresh interpreter with only the base (without dofile,
 * loadfile, load), table, string, math and utf8 libraries: a data language, no files, no
 * processes. It declares its spaces with space{...} or returns a space or a list of spaces:
 *
 *   return {
 *     space{
 *       name = "fwd",                        -- optional, unique in the file ("fwd_mma#1" if absent)
 *       template = "fwd_mma",                -- a generator family
 *       fixed = { CAUSAL_SKIP = 1 },         -- one value each
 *       params = { BLOCK_M = {64, 128}, BLOCK_N = pow2(32, 128), NUM_WARPS = {4, 8},
 *                  NUM_STAGES = {1, 2} },    -- lists; the cross product is searched
 *       where = function(p, dev, w)          -- optional constraint
 *         if smem_bytes(p) > dev.smem_per_block / 2 then return false, "two blocks per SM" end
 *         return true
 *       end,
 *       workloads = grid{ dtype = {"bf16", "f16"}, head_dim = {64, 128}, causal = {0, 1},
 *                         seqlen = pow2(512, 16384), tokens = 16384, hidden = 2048 },
 *       strategy = "exhaustive",             -- the default; or { kind = "random", n = 20, seed = 1 }
 *                                            -- or { kind = "prune", keep = 0.25, warmup_ms = 5, rep_ms = 20 }
 *                                            -- or { kind = "halving" or "guided", budget_s = 30, keep = 0.25,
 *                                            --      warmup_ms = 5, rep_ms = 20, seed = 1 }
 *       bench = { warmup_ms = 25, rep_ms = 100, timeout_s = 10 },
 *       confirm = { top = 4, within = 0.05, rounds = 3 },   -- optional: the finalists re-timed
 *     },
 *   }
 *
 * Parameter names are exactly the template's (BLOCK_M, ...). Values are integers; DTYPE and
 * DQ_MODE also take their names ("bf16", "separate"), and booleans mean 1 and 0. DTYPE,
 * HEAD_DIM, HEAD_DIM_V and CAUSAL come from each workload, and EVEN_M/EVEN_N are derived from
 * it (seqlen_q % BLOCK_M == 0, seqlen_k % BLOCK_N == 0): none of these six may be fixed or
 * searched. A parameter the template does not use may not be named either.
 *
 * A workload is { dtype = "bf16", head_dim = 128, head_dim_v = 128, causal = 0, batch = 4,
 * heads = 16, seqlen_q = 4096, seqlen_k = 4096 } (head_dim_v defaults to head_dim, seqlen sets
 * both lengths, seqlen_k defaults to seqlen_q, causal may be a boolean), with heads_k = 4 for
 * grouped-query attention (key/value heads dividing heads; absent, 0 or heads: none),
 * softcap = true for capped scores (timed with c = 30; the value costs nothing), sinks = true for
 * attention sinks (a logit a query head, random in [-1, 2); the backward validates their
 * gradient too), tf32 = true for f32 whose products may round to TF32 (validated at TF32's
 * threshold), a mask beyond
 * causal: window_left = 1024 and/or window_right = N (keys visible beside the diagonal; -1 no
 * limit), bottom_right = true (the diagonal ends at the last query and key; lengths that differ
 * or varlen only), and varlen = 0.4 for a variable-length batch of `batch` sequences at most
 * seqlen long whose tokens fill that share of the padded batch (kept as its bucket in eighths;
 * the lengths are made from it: tune_varlen_lengths). `workloads` is a list of them; lists inside
 * it (from grid) are flattened. grid{} makes plain, grouped, capped, sink and tf32 workloads, and
 * bottom-right ones (one bottom_right for the whole grid), no windows or varlen.
 *
 * What Lua sees besides the libraries:
 *   device             { name, arch ("sm_90"), cc (90), cc_major, cc_minor, sm_count,
 *                        smem_per_block (opt-in bytes), real (false: a described target) }
 *   space{...}         checks a space at once (errors point at its line) and declares it
 *   grid{...}          a list of workloads: the cross product of dtype, head_dim, head_dim_v,
 *                      causal, softcap, sinks, tf32, seqlen (or seqlen_q, seqlen_k) and batch, heads,
 *                      heads_k (bottom_right: one value, set on every workload), with
 *                      batch = tokens / seqlen_q when tokens is given and heads = hidden /
 *                      head_dim when hidden is given (the FlashAttention papers' shapes)
 *   range(a, b [, step])  {a, a+step, ..., <= b};   pow2(a, b)  {a, 2a, 4a, ..., <= b}
 *   smem_bytes(p [, template])  the most dynamic shared memory any kernel launched for the
 *                      configuration p needs (bytes), then the sum over those kernels; p is a
 *                      table of parameters (missing ones take the template's defaults) and
 *                      names its template as p.template unless the second argument does
 *   skip(reason)       inside where(): drop this configuration, recording the reason
 * where(p, dev, w) gets p = every parameter by name as the integer the template sees (DTYPE=2),
 * plus p.template and p.dtype ("bf16"); dev = device; w = the workload (dtype as a name). It
 * returns true to keep p, or false [, reason] to skip it; anything else is an error.
 *
 * Errors (syntax, wrong types, unknown keys, templates or parameters, values that do not parse,
 * a where() that throws or returns nothing, a workload the template cannot run, a space left
 * without candidates, a file running away) fail the load with "file:line: plain message". For a
 * space made by space{} the line is its call; for a plain table, the line where the file's
 * return statement ends; for where(), the line in where(). Nothing is compiled by a load: the
 * tuner compiles only what a successful load lists.
 *
 * Limits (tune_space_limits; a file never hangs the tool):
 *   - 5*10^8 Lua instructions and 256 MiB of Lua memory. Both are sticky: once spent, every
 *     further instruction fails, so pcall cannot swallow the error and loop on.
 *   - setmetatable refuses a metatable with __gc: Lua runs finalizers outside the limits.
 *   - the wall clock: work done inside C (a string pattern that backtracks, a huge gsub) escapes
 *     the instruction count, so the whole load (file and enumeration) runs in a child process
 *     given 10 s; then it is killed and the load fails naming the last line it ran. The
 *     environment variable FLASHTUNE_SPACE_TIMEOUT sets the seconds (a decimal number; 0 loads
 *     in-process without the bound, for a debugger). The child gets the same result as an
 *     in-process load: math.random is seeded with 1 in every interpreter.
 *
 * Thread safety: each load has its own interpreter and no global state, so loads may run in
 * parallel; a loaded set is read-only. A load forks; call it before starting threads that hold
 * locks the loader needs (malloc's are safe). */
#ifndef FT_TUNE_SPACE_H
#define FT_TUNE_SPACE_H

#include <stddef.h>

#include "db_internal.h"
#include "gen_internal.h"

#define TUNE_NAME_LEN 64
#define TUNE_POS_LEN 160        /* "tuner/spaces/default.lua:12" */
#define TUNE_REASON_LEN 256
#define TUNE_REASONS_KEPT 6     /* distinct skip reasons kept per workload for the report */

/* The GPU the space is tuned for, as Lua sees it in `device`. */
typedef struct tune_device {
    char name[TUNE_NAME_LEN];   /* "NVIDIA H100 80GB HBM3" */
    char arch[16];              /* NVRTC target, "sm_90" */
    int cc_major, cc_minor;     /* compute capability, 9 and 0 */
    int sm_count;               /* streaming multiprocessors */
    int smem_per_block_optin;   /* bytes of dynamic shared memory a block may opt in to; the
                                 * limit candidates are validated against (<= 0: the arch's) */
    int real;                   /* 1: read from a GPU; 0: a description of the target */
} tune_device;

/* Fills dev with a description of a typical GPU of arch ("sm_90": an H100 SXM, 132 SMs, 227 KiB)
 * for a machine without one; dev->real = 0. Returns 0, or -1 for an arch the generator does not
 * target (dev then describes sm_90). */
int tune_device_default(tune_device *dev, const char *arch);

/* One problem shape to tune for: the database's workload (db_internal.h), one struct for the
 * tuner and the database. Its op is the direction only once keyed for one (tune_workload_db); a
 * space's workloads serve both directions and leave it 0. */

/* "bf16 d=128 causal b=4 h=16 s=4096" (s=Q/K when the lengths differ; dv= when it differs;
 * hk=, softcap, win=L,R, br, varlen=N/8, sinks and tf32 where the workload has them). */
void tune_workload_str(const db_workload *w, char *buf, size_t len);

/* ---- a workload's problem (db_workload.c) ------------------------------------------------ */

/* w as the database's key for op (DB_OP_FWD or DB_OP_BWD): w with its op set. */
void tune_workload_db(const db_workload *w, int op, db_workload *out);
/* The split of a group's query heads over blocks (SPLITS) that family f's kernels for w must have,
 * or 0 where it is not the problem's to set: for a backward family taking SPLITS and a grouped w,
 * db_workload_group_splits, with which the runtime launches it whatever its winner was tuned with
 * (without grouping gen_check_problem_heads refuses a split, with its reason). */
int tune_workload_splits(const gen_family *f, const db_workload *w);
/* A variable-length workload's sequence lengths, the same for every run: w->batch of them, the
 * longest seqlen_q (keys: seqlen_k), the rest spread log-uniformly below it so that the tokens
 * fill db_varlen_fill(varlen) of the padded batch, in a fixed shuffled order. OUT: len_q[batch],
 * len_k[batch]. Returns 0, or -1 (why) when no such lengths fall in w's bucket (one sequence is
 * always full; a bucket below what batch sequences of length >= 1 can fill). */
int tune_varlen_lengths(const db_workload *w, int *len_q, int *len_k, char *why, size_t len);
/* FLOPs of a workload by the FlashAttention convention: forward 2 H (D + Dv) summed over its
 * sequences of the (query, key) pairs computed: Nq Nk, half that under a plain causal mask, the
 * band's exact count under a window or a bottom-right diagonal of unequal lengths; the backward
 * 2.5 times the forward. */
double tune_flops(const db_workload *w, int backward);

/* Timing settings of one benchmark pass. */
typedef struct tune_bench {
    double warmup_ms;           /* run this long before timing */
    double rep_ms;              /* then time repetitions for this long */
    double timeout_s;           /* watchdog: a candidate taking longer is killed and recorded */
} tune_bench;

typedef enum tune_strategy_kind {
    TUNE_EXHAUSTIVE,            /* time every candidate */
    TUNE_RANDOM,                /* time n candidates sampled per workload (all when fewer; the same
                                 * seed and candidates give the same sample) */
    TUNE_PRUNE,                 /* time every candidate with `first`, re-time the best `keep` fraction with bench */
    TUNE_HALVING,               /* prune within budget_s: the first pass (known winners first, then
                                 * a seeded shuffle) as far as the budget affords */
    TUNE_GUIDED,                /* prune within budget_s: the first pass from the known winners and
                                 * a few seeded picks through the neighbours of the best so far */
} tune_strategy_kind;

typedef struct tune_strategy {
    tune_strategy_kind kind;
    int n;                      /* random: sample size per workload (default 20) */
    unsigned long long seed;    /* random, halving, guided: seed (default 1) */
    double keep;                /* prune, halving, guided: fraction in (0, 1] re-timed (default 0.25) */
    tune_bench first;           /* the same three: the short first pass (defaults 5 ms, 20 ms, bench's timeout) */
    double budget_s;            /* halving, guided: seconds of timing a workload (0: none of its own;
                                 * under `flashtune tune --budget` a share of the sweep's) */
} tune_strategy;

/* After a workload's candidates are timed, its finalists (the best `top` of those timed in this
 * run whose medians are within `within` of the best, at least two) are timed again in `rounds`
 * rotations (A B C A B C ...) in one worker, and each one's time becomes the median of its
 * timings. Under load a GPU's clocks settle over about a second, so candidates timed one after
 * the other in short windows differ by a few percent for no reason of their own (notes/kernels.md,
 * "Sustained load"); in rotation that drift falls on each finalist alike. Without a confirm table: none; with one,
 * rounds defaults to 3 (0: none). */
typedef struct tune_confirm {
    int top;                    /* at most this many finalists (default 4, at least 2) */
    double within;              /* a finalist's median is at most (1 + within) x the best's (default 0.05) */
    int rounds;                 /* rotations (0: no confirmation) */
} tune_confirm;

/* "exhaustive", "random", "prune", "halving", "guided". */
const char *tune_strategy_name(tune_strategy_kind kind);
/* 1 for the strategies a budget bounds (halving, guided): they choose what to time as they go. */
int tune_strategy_takes_budget(tune_strategy_kind kind);

/* A configuration skipped for this reason, and how many were. */
typedef struct tune_skip {
    char reason[TUNE_REASON_LEN];   /* gen_validate's reason, or "where: " and where()'s */
    long count;
} tune_skip;

/* A space's candidates for one workload. */
typedef struct tune_candidates {
    db_workload workload;
    gen_config *configs;        /* the candidates in enumeration order (random: the sample), each
                                 * valid for the workload and device; malloc'ed, owned by the set */
    int count;
    long enumerated;            /* size of the cross product of params */
    long valid;                 /* passed gen_validate and where() (before random sampling) */
    long skipped_invalid;       /* refused by gen_validate (including shared memory) */
    long skipped_where;         /* refused by where() or skip() */
    tune_skip reasons[TUNE_REASONS_KEPT];   /* the first distinct reasons, in order met */
    int reason_count;
} tune_candidates;

/* One space of the file. Enumeration order: the searched parameters in gen_param order, the
 * first outermost, each list's values in the order written. */
typedef struct tune_space {
    char name[TUNE_NAME_LEN];
    char defined_at[TUNE_POS_LEN];  /* "file:line" of its space{} call, or of the file's return */
    const gen_family *family;
    gen_param_set searched;     /* GEN_BIT mask of the parameters in params (64 bits: 35 rows) */
    tune_strategy strategy;
    tune_bench bench;           /* the full timing (defaults 25 ms, 100 ms, 10 s) */
    tune_confirm confirm;       /* the finalists' rotations (default none) */
    tune_candidates *workloads; /* in the order given; malloc'ed */
    int workload_count;
} tune_space;

typedef struct tune_space_set {
    char path[TUNE_POS_LEN];    /* the file, as given */
    tune_device device;         /* what the spaces were checked against */
    tune_space *spaces;         /* in file order; malloc'ed */
    int space_count;
} tune_space_set;

/* What a load may spend. */
typedef struct tune_space_limits {
    long instructions;          /* Lua instructions, counted in steps of 1000 */
    size_t memory;              /* bytes the interpreter may hold */
    double timeout_s;           /* wall-clock seconds of the whole load, in a child process;
                                 * <= 0: in-process, no wall bound */
} tune_space_limits;

/* OUT: *lim, the defaults (5*10^8 instructions, 256 MiB, 10 s) with FLASHTUNE_SPACE_TIMEOUT
 * applied. Returns 0, or -1 with a message naming the variable and its value in err. */
int tune_space_limits_default(tune_space_limits *lim, char *err, size_t len);

/* Constructor. Runs the space file at path for dev (NULL: tune_device_default("sm_90")) under
 * the default limits (tune_space_limits_default), checks every space and enumerates every
 * candidate (gen_validate with the device's shared memory, then where()). OUT: *out, a set to release with tune_space_set_free, NULL on failure.
 * Returns 0, or -1 with "file:line: message" in err (len bytes, always NUL-terminated). */
int tune_space_load(const char *path, const tune_device *dev, tune_space_set **out, char *err,
                    size_t len);

/* tune_space_load under the limits lim (NULL: tune_space_limits_default's). */
int tune_space_load_limited(const char *path, const tune_device *dev, const tune_space_limits *lim,
                            tune_space_set **out, char *err, size_t len);

/* The problems an application recorded (a capture file, db_capture_read), in the order to tune
 * them: each space then takes, in place of its own workloads, the captured problems of its
 * direction and kind (decode shapes or not, as its own workloads are) in dtypes its family
 * takes; a space that takes none is left out of the set. */
typedef struct tune_captured {
    const db_capture_row *rows;
    int count;
} tune_captured;
/* tune_space_load_limited with captured (NULL: none). No space taking any captured problem is an
 * error. */
int tune_space_load_captured(const char *path, const tune_device *dev, const tune_space_limits *lim,
                             const tune_captured *captured, tune_space_set **out, char *err, size_t len);

/* Destructor; NULL does nothing. */
void tune_space_set_free(tune_space_set *set);

/* Candidates over every space and workload of the set. */
long tune_space_set_count(const tune_space_set *set);

#endif
