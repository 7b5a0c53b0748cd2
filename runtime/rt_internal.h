/* libflashtune's internals (prefix rt_): argument checks, kernel choice, module and plan
 * caches, workspaces, launches. Never installed; runtime/include/flashtune.h is the API. */
#ifndef FT_RT_INTERNAL_H
#define FT_RT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_driver_internal.h"
#include "db_internal.h"
#include "flashtune.h"
#include "ft_kernel_args.h"
#include "gen_internal.h"
#include "ln_internal.h"

#define RT_ERR_LEN 1024

/* ---- errors (ft_error.c) ---------------------------------------------------------------- */

/* Records the message of a failed call for ft_last_error(ctx) in this thread; returns status. */
ft_status rt_fail(const ft_context *ctx, ft_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- argument checks (rt_check.c) ------------------------------------------------------- */

/* Head dims run from 1 to this; each runs at ln_padded_head_dim's compiled one. */
#define RT_HEAD_DIM_MAX 256

/* Element bytes of a dtype (f32 4, f16/bf16 2, f64 8) and of its accumulator (lse, delta,
 * dq_accum: 8 for f64, else 4). */
size_t rt_elem_bytes(int dtype);
size_t rt_acc_bytes(int dtype);

/* One tensor argument as the checks see it. */
typedef struct rt_tensor {
    const char *name;           /* "q" */
    const char *stride_name;    /* "q_stride" */
    const void *ptr;
    const int64_t *stride;      /* 3 strides, elements */
    int heads, seqlen, dim;     /* k, v, dk, dv have the desc's K/V heads (heads_k) */
} rt_tensor;

/* The ABI rule of flashtune.h: copies the caller's desc (user, of its struct_size; the rest
 * zero) into *d, the full-size copy that everything after it reads. A struct_size out of
 * [FT_ATTENTION_DESC_SIZE_V1, FT_ATTENTION_DESC_SIZE_MAX] is FT_ERR_INVALID_ARGUMENT, one past
 * this library's sizeof with a nonzero byte beyond its fields FT_ERR_UNSUPPORTED. OUT: *d. */
ft_status rt_desc_copy(const char *func, const ft_attention_desc *user, ft_attention_desc *d, char *err, size_t len);
/* Checks d, a full-size desc (rt_desc_copy's), for sizes, dtype, head dims, mask and scale, and
 * fills *w (op = backward) with the problem, head_dim_v resolved and causal the active-mask
 * flag (rt_mask_active). On failure writes "func: ..." into err and returns the status. */
ft_status rt_check_desc(const char *func, const ft_attention_desc *d, int backward, db_workload *w, char *err,
                        size_t len);
/* 1 when d (checked) needs a mask: the kernels' CAUSAL flag, the lookup's causal mode. */
int rt_mask_active(const ft_attention_desc *d);
/* The mask of d (checked) into p, whose lengths are set (ln_problem_mask): the CAUSAL flag, the
 * band (key j visible to query i iff i + mask_lo <= j <= i + mask_hi, ft_mask.h) and the sides
 * a variable-length batch places per sequence. */
void rt_problem_mask(const ft_attention_desc *d, ln_problem *p /* IN/OUT */);
/* Checks n tensors of problem w: non-NULL, strides >= 0 that do not overlap and leave each row
 * its dim elements; with tensor_cores, 16-byte base pointers and strides a multiple of 8. */
ft_status rt_check_tensors(const char *func, const db_workload *w, const rt_tensor *t, int n, int tensor_cores,
                           char *err, size_t len);
/* 1 when every row of the n tensors (checked; lse and other unstrided ones aside) starts 16-byte
 * aligned: base pointers and the strides of dimensions longer than 1, in bytes, multiples of 16. */
int rt_rows16(const db_workload *w, const rt_tensor *t, int n);
/* 1 when family f copies rows of dtype in 16-byte pieces: every tensor-core family, in f32 those
 * that run it as TF32 (ALLOW_TF32); the exact ones read rows of any alignment. */
int rt_family_reads_rows16(const gen_family *f, int dtype);
/* Workspace bytes of a backward: delta, then (256-byte aligned) the dQ accumulator, then
 * (256-byte aligned, where db_workload_group_splits > 1) the partial dK and dV of its shares
 * (ln_bwd_split_bytes, at the widest compiled head dims); total_q the packed query rows of a
 * variable-length batch (unused for a dense one). OUT: *accum_offset, *split_offset (may be NULL). */
size_t rt_workspace_bytes(const db_workload *w, int total_q, size_t *accum_offset, size_t *split_offset);
/* A variable-length batch's prefix sums (d checked), copied to the host once stream's earlier
 * work is done: each from 0, never decreasing, no sequence longer than seqlen_q (seqlen_k), the
 * last equal to total_q (total_k). FT_OK for a dense batch, and while stream captures a CUDA
 * graph (waiting for the stream is not allowed then: the sums are trusted as given). On failure
 * "func: ..." in err, naming the argument, the index and the value. */
/* 1 when stream is capturing a CUDA graph: nothing may allocate, free or wait on it then. */
int rt_stream_capturing(const cu_driver *cu, CUstream stream);
ft_status rt_check_prefix_sums(const char *func, const cu_driver *cu, const ft_attention_desc *d, CUstream stream,
                               char *err, size_t len);

/* ---- kernel choice (rt_defaults.c, rt_lookup.c, rt_shipped.c) --------------------------- */

/* The GPU as the lookup sees it. */
typedef struct rt_device {
    char name[128];             /* "NVIDIA H100 80GB HBM3" */
    char arch[16];              /* "sm_90" */
    int smem_limit;             /* opt-in dynamic shared memory per block, bytes */
    int sm_count;               /* multiprocessors (0: unknown) */
} rt_device;

enum {
    RT_TIER_DB_EXACT,
    RT_TIER_DB_NEAREST,
    RT_TIER_SHIPPED_EXACT,
    RT_TIER_SHIPPED_NEAREST,
    RT_TIER_DEFAULT,
    RT_TIER_REFERENCE,
};

typedef struct rt_choice {
    gen_config config;          /* ready to expand: CAUSAL, EVEN_M, EVEN_N set for the problem */
    int tier;                   /* RT_TIER_* */
    char why[512];              /* "database nearest (tuned at ...)" */
    int tuned_varlen;           /* 1: the winner was tuned on a variable-length batch (its walk measured so) */
} rt_choice;

/* Sets CAUSAL from w and EVEN_M/EVEN_N from w's lengths and c's tiles (where c's family uses them). */
void rt_config_fit(gen_config *c, const db_workload *w);
/* The built-in default for w on dev: the family's defaults, with fewer stages and smaller
 * tiles where the head dims need it, valid under dev's shared-memory limit; with
 * RT_CHOOSE_DETERMINISTIC (a backward), a repeatable dQ mode (DQ_MODE ordered or separate); with
 * RT_CHOOSE_ANY_ROWS, of a family that reads rows of any alignment. Its HEAD_DIM and HEAD_DIM_V are
 * w's as the family runs them (ln_family_head_dim); DATA_DIM is the caller's.
 * 0, or -1 (why). */
int rt_default_config(const rt_device *dev, const db_workload *w, int flags, gen_config *out, char *why,
                      size_t len);
/* rt_choose's and rt_default_config's flags: a backward made bitwise repeatable; a problem whose
 * rows are not all 16-byte aligned (rt_rows16), for which only families that read rows of any
 * alignment are chosen (rt_family_reads_rows16: f32 then runs on CUDA cores). */
#define RT_CHOOSE_DETERMINISTIC 1
#define RT_CHOOSE_ANY_ROWS 2
/* c (a backward configuration for w) with a dQ mode that repeats bitwise: its own when it does,
 * else ordered (dQ added in a fixed order: on the family's tiles for it where it names them,
 * gen_family.repeatable, else on c's), else separate (dQ in a kernel of its own), whichever its
 * family takes; valid on dev. 0, or -1 (why) when none is. */
int rt_repeatable_config(const rt_device *dev, const db_workload *w, gen_config *c, char *why, size_t len);
/* The built-in decode configuration for w (db_workload_decode) on dev: fwd_mma with the group
 * packed where heads_k < heads, the smallest query tile that holds seqlen_q * group rows (16,
 * 32 or 64: a warp per 16 rows), and the keys split in a power of two of blocks, enough for two
 * blocks an SM, at most one a 4 key tiles and 64. 0, or -1 (why). */
int rt_decode_config(const rt_device *dev, const db_workload *w, gen_config *out, char *why, size_t len);
/* The query tile rt_decode_config gives decode shape w: 16, 32 or 64 rows, the smallest that
 * holds seqlen_q x the group (the group's rows packed where heads_k < heads). */
int rt_decode_tile_rows(const db_workload *w);
/* The GPU reference kernels (family ref) for w. */
void rt_reference_config(const db_workload *w, gen_config *out);
/* The winner database d serves problem w with on GPU device_name of arch with sm_count SMs (0:
 * unknown): the nearest tuned workload of its kind (a decode shape's for decode shapes only, and
 * of its query tile: one row of 4 heads is not served a 16-row draft's 64-row tile), looked up at
 * the compiled head dims; what rt_choose takes from each source and what a sweep's search starts
 * from. 1 found (OUT: *out), 0 none, -1 (err). */
int rt_find_served(db *d, const char *device_name, const char *arch, int sm_count, const db_workload *w,
                   db_winner *out, char *err, size_t len);
/* The kernel for w on dev: user database (exact, nearest), shipped table, built-in default.
 * user and shipped may be NULL. A stored winner that is not valid on dev is passed over. With
 * RT_CHOOSE_ANY_ROWS, so is one whose family reads 16-byte rows. With RT_CHOOSE_DETERMINISTIC (a
 * backward), the kernel is made bitwise repeatable: the winner's dQ mode
 * becomes one that adds dQ in a fixed order (DQ_MODE ordered) or computes it in its own kernel
 * (separate), whichever its family takes with its tiles, else the deterministic built-in default.
 * Head dims are looked up as ln_padded_head_dim's, and a smaller one runs padded (DATA_DIM).
 * Returns 0; -1 when a database fails (FT_ERR_DB) or nothing fits (err says). */
int rt_choose(db *user, db *shipped, const rt_device *dev, const db_workload *w, int flags, rt_choice *out,
              int *is_db_error, char *err, size_t len);
/* The winners shipped with the library (db/tuned/\*.txt, embedded at build time) in an
 * in-memory database; NULL when none are embedded. 0, or -1 (err). */
int rt_shipped_open(db **out, char *err, size_t len);
/* "h100-sm90.txt": the names of the embedded tables, comma-separated. */
const char *rt_shipped_names(void);

/* ---- the context (ft_api.c, rt_device.c, rt_loader.c, rt_plan.c, rt_workspace.c) -------- */

#define RT_BUCKETS 512

/* A kernel in the in-memory caches: found by key, proven by configuration and target. */
typedef struct rt_kernel {
    char key[GEN_HASH_LEN];     /* gen_cache_id's key */
    char arch[16];              /* the compile target (gen_target_arch) */
    gen_config config;
} rt_kernel;

/* A module loaded into one CUDA context. Immutable once published. */
typedef struct rt_module {
    rt_kernel kernel;
    CUmodule module;
    char origin[96];            /* "CUBIN from the database", "compiled with NVRTC 13.0 in 2.31 s" */
    struct rt_module *next;
} rt_module;

/* One CUDA context the library has worked in. */
typedef struct rt_cuctx {
    CUcontext context;
    CUdevice device;
    rt_device info;
    rt_module *modules;         /* under ft_context.lock */
    struct rt_cuctx *_Atomic next;
} rt_cuctx;

/* Which kernel a call wants for its problem. */
typedef enum rt_variant {
    RT_TUNED,           /* the fastest: rt_choose */
    RT_REFERENCE,       /* the GPU reference kernels */
    RT_DETERMINISTIC,   /* a backward with desc.deterministic: rt_choose made bitwise repeatable */
    RT_ANY_ROWS,        /* f32 whose rows are not all 16-byte aligned: rt_choose's RT_CHOOSE_ANY_ROWS */
    RT_DETERMINISTIC_ANY_ROWS,   /* both: an f32 backward with desc.deterministic and such rows */
} rt_variant;
/* rt_choose's flags for a variant (RT_REFERENCE: none; it is not chosen). */
int rt_choose_flags(rt_variant v);

/* Everything a call needs after the first: immutable once published, found lock-free. */
typedef struct rt_plan {
    uint64_t hash;
    CUcontext context;
    db_workload w;
    rt_variant variant;
    rt_choice choice;
    const rt_module *module;
    ln_plan launches;           /* the family's steps, functions bound (launch/ln_internal.h) */
    struct rt_plan *_Atomic next;
    /* Calls since the last capture flush (rt_capture.c): the one field that changes once the
     * plan is published, counted only while the context has a capture file. */
    _Atomic unsigned long long calls;
} rt_plan;

/* A cached backward workspace of one (CUDA context, stream). */
typedef struct rt_workspace {
    CUcontext context;
    CUstream stream;
    CUdeviceptr ptr;
    size_t bytes;
    int users;                  /* calls between acquire and release */
    int retired;                /* replaced by a larger one: freed by its last user */
    struct rt_workspace *next;
} rt_workspace;

/* A compiled CUBIN kept in memory, so another CUDA context does not compile again. */
typedef struct rt_cubin {
    rt_kernel kernel;
    void *image;
    size_t size;
    char origin[96];
    struct rt_cubin *next;
} rt_cubin;

#define RT_PATH_LEN 4096

struct ft_context {
    db *user;                   /* the database of ft_open, or NULL */
    int user_writable;
    char cache_dir[RT_PATH_LEN];   /* the CUBIN cache on disk (rt_disk_cache_dir), "" for none */
    db *shipped;                /* the embedded winners, or NULL */
    pthread_mutex_t lock;       /* the slow paths: lists below, never held during a launch */
    rt_cuctx *_Atomic contexts;
    rt_plan *_Atomic buckets[RT_BUCKETS];
    rt_cubin *cubins;
    rt_workspace *workspaces;
    CUcontext primary;          /* device 0's primary context when the library retained it */
    CUdevice primary_device;
    char capture[RT_PATH_LEN];  /* the capture file ($FLASHTUNE_CAPTURE, ft_capture_to), "" for none */
};

/* ---- capture (rt_capture.c) ------------------------------------------------------------ */

/* One call of plan, counted where ctx has a capture file (the reference kernels are not). */
void rt_capture_count(const ft_context *ctx, const rt_plan *plan);
/* The counts since the last flush merged into ctx's capture file, one line a problem (the same
 * problem in several CUDA contexts summed; db_capture_merge). FT_ERR_INVALID_ARGUMENT without a
 * capture file; FT_ERR_IO when the file cannot be read or written, the counts then kept. */
ft_status rt_capture_flush(ft_context *ctx, const char *func);

/* ---- the CUBIN cache on disk (rt_disk_cache.c) ---------------------------------------------- */

/* The folder: $FLASHTUNE_CACHE_DIR ("" or "0": none), else $XDG_CACHE_HOME/flashtune, else
 * $HOME/.cache/flashtune; "" when none is set. OUT: dir. */
void rt_disk_cache_dir(char *dir, size_t len);
/* The CUBIN of id in dir, compiled from exactly id's source, options, target and NVRTC version:
 * 1 (OUT: out->image malloc'ed, out->size, out->origin), else 0 (none, another's, unreadable). */
int rt_disk_cache_load(const char *dir, const gen_cache_id *id, rt_cubin *out);
/* Keeps cubin (size bytes, compiled as id says) in dir, made if missing; silently nothing on any
 * failure (a cache that cannot be written costs a compile later). */
void rt_disk_cache_store(const char *dir, const gen_cache_id *id, const void *cubin, size_t size);

/* The driver, or FT_ERR_NO_DEVICE with the reason recorded for func. */
ft_status rt_driver(ft_context *ctx, const char *func, const cu_driver **cu);
/* The CUDA context to work in (the current one, else the retained primary context made
 * current) and its record (created on first use: device name, arch, shared-memory limit). */
ft_status rt_current(ft_context *ctx, const char *func, const cu_driver *cu, rt_cuctx **out);
/* "what failed: CUDA_ERROR_...": records an FT_ERR_CUDA (or FT_ERR_OUT_OF_MEMORY) failure. */
ft_status rt_fail_cuda(const ft_context *ctx, const char *func, const char *what, CUresult rc);

/* The module of config c in context cc: the loaded one, else a CUBIN from memory, the database
 * or NVRTC, loaded now. The caller has cc current. */
ft_status rt_module_get(ft_context *ctx, const char *func, const cu_driver *cu, rt_cuctx *cc, const gen_config *c,
                        const rt_module **out);
/* The CUBIN cache in the user's database (rt_module_get's steps, apart so that the tests reach
 * them without a GPU). rt_cubin_load: the CUBIN of c, whose expansion is source, for a GPU of
 * device_arch, stored in ctx's database and compiled from exactly this source, options, target
 * arch and NVRTC version: 1 (OUT: out->image malloc'ed, out->size, out->origin), else 0.
 * rt_cubin_store: keeps bin, compiled from source for a GPU of device_arch, in ctx's database
 * when it is writable; a failure only costs a compile later, so it is not reported. */
int rt_cubin_load(ft_context *ctx, const gen_config *c, const char *source, const char *device_arch, rt_cubin *out);
void rt_cubin_store(ft_context *ctx, const gen_config *c, const char *source, const char *device_arch,
                    const gen_binary *bin);
/* Unloads every module and frees the CUBINs (ft_close). */
void rt_modules_free(ft_context *ctx, const cu_driver *cu);

/* The plan of (current context, w, variant): found lock-free, or built (choice, module,
 * launch steps) and published. */
ft_status rt_plan_get(ft_context *ctx, const char *func, const cu_driver *cu, rt_cuctx *cc, const db_workload *w,
                      rt_variant variant, const rt_plan **out);
/* The published plan or NULL; no locks, no allocation. */
const rt_plan *rt_plan_find(ft_context *ctx, CUcontext context, const db_workload *w, rt_variant variant);
void rt_plans_free(ft_context *ctx);

/* A workspace of at least bytes for (context, stream), grown when smaller; release it after
 * the launches that use it are enqueued. */
ft_status rt_workspace_acquire(ft_context *ctx, const char *func, const cu_driver *cu, CUcontext context,
                               CUstream stream, size_t bytes, rt_workspace **out);
void rt_workspace_release(ft_context *ctx, const cu_driver *cu, rt_workspace *ws);
void rt_workspaces_free(ft_context *ctx, const cu_driver *cu);

/* ---- launches (rt_launch.c) ------------------------------------------------------------- */

/* The data pointers of one call; backward-only ones are NULL in a forward. */
typedef struct rt_data {
    const void *q, *k, *v, *o, *lse, *dout;
    void *o_out, *lse_out, *dq, *dk, *dv;
} rt_data;

/* A call's workspace: the backward's delta and dQ accumulator, and a split plan's partials
 * (split, split_bytes: ln_split_workspace_bytes); 0 where unused. */
typedef struct rt_workspace_ptrs {
    CUdeviceptr delta, accum, split;
    size_t split_bytes;
} rt_workspace_ptrs;

/* Bytes of the split workspace plan needs for d (checked): a forward's shares of the keys, a
 * backward's shares of a group's heads (ln_split_workspace_bytes); 0 where it splits nothing. */
size_t rt_split_workspace_bytes(const rt_plan *plan, const ft_attention_desc *d);
/* Enqueues plan's launches on stream for d through the launch module (ln_launch: batches split
 * so grid.y <= 65535, dq_accum zeroed where DQ_MODE atomic needs it), with the workspace ws.
 * Returns CUDA_SUCCESS or the first error. */
CUresult rt_launch(const cu_driver *cu, const rt_plan *plan, const ft_attention_desc *d, const rt_data *p,
                   const rt_workspace_ptrs *ws, CUstream stream);

#endif
