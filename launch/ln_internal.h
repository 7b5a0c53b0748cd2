/* The launch module (prefix ln_): the one path from a problem to cuLaunchKernel, used by the
 * runtime, the tuner's worker, the GPU tests and the benchmarks, so that what the tuner
 * validates is launched exactly as the runtime ships it. A problem (ln_problem) and a loaded
 * kernel (a generated configuration's module) give the family's steps in order (ln_plan), each
 * step's grid, block and dynamic shared memory, the argument blocks, the backward workspace and
 * the batch split that keeps grid.y within CUDA's 65535.
 *
 * Part two (ft_launch_gpu, same prefix) is GPU support for the tuner, the tests and the
 * benchmarks: a session on one device, a problem's device buffers, host/device transfers in any
 * dtype, and parallel compilation. The runtime links only part one.
 *
 * Thread safety: every function may be called from several threads at once on distinct
 * objects; none keeps global mutable state. Plans are immutable once made. Errors go to a
 * caller buffer (err, len bytes) and name the argument and its value, or are returned as a
 * CUresult. Never installed. */
#ifndef FT_LN_INTERNAL_H
#define FT_LN_INTERNAL_H

#include <stddef.h>

#include "cuda_driver_internal.h"
#include "ft_kernel_args.h"
#include "gen_internal.h"

#define LN_GRID_Y_MAX 65535       /* CUDA's limit on grid.y, where batch*heads goes */
#define LN_MAX_STEPS 4            /* the most launches one operation makes (a backward: 3) */
#define LN_SMEM_DEFAULT 49152     /* past 48 KiB a kernel must opt in to dynamic shared memory */

/* ---- the problem (ln_problem.c) -------------------------------------------------------- */

/* A problem on the device: sizes, layout, mask and pointers. Strides are in elements, [0]
 * batch, [1] head, [2] sequence, the head dim contiguous; dout has o's strides, dq, dk and dv
 * those of q, k and v. */
typedef struct ln_problem {
    int dtype;                  /* DTYPE: 0 f32, 1 f16, 2 bf16, 3 f64 (= ft_dtype) */
    int batch, heads, seqlen_q, seqlen_k, head_dim, head_dim_v;
    double softmax_scale;       /* resolved (ln_softmax_scale): never 0 */
    int causal;                 /* the CAUSAL template flag: 1 when the band below applies */
    int mask_lo, mask_hi;       /* the band (ft_mask.h): query i sees key j iff i+lo <= j <= i+hi */
    int heads_k;                /* heads of K and V (grouped-query attention); 0 means heads */
    double softcap;             /* 0 none; c > 0: scores c * tanh(S / c) */
    long long q_stride[3], k_stride[3], v_stride[3], o_stride[3];
    CUdeviceptr q, k, v;
    CUdeviceptr o, lse;         /* written by a forward, read by a backward; lse is [B, H, seqlen_q] */
    CUdeviceptr dout, dq, dk, dv;   /* backward only */
    CUdeviceptr delta, dq_accum;    /* backward workspace (ln_workspace_bytes gives the layout) */
    /* A variable-length batch (ft_kernel_args.h): batch + 1 prefix sums each on the device, 0 for
     * a dense batch. seqlen_q, seqlen_k are then the longest lengths, total_q, total_k the packed
     * rows (the last prefix sums), the tensors [total, heads, dim] by strides [1] and [2], lse
     * [heads, total_q]; the mask is each sequence's band: mask_left, mask_right (-1 no limit; 0 the
     * right of a causal mask), mask_bottom_right as ft_mask_band takes them (mask_lo, mask_hi
     * unused). */
    CUdeviceptr cu_seqlens_q, cu_seqlens_k;
    int total_q, total_k;
    int mask_left, mask_right, mask_bottom_right;
    /* The workspace of a plan that splits a tile's work over blocks (ln_plan.splits > 1; its
     * bytes and layout: ln_split_workspace_bytes), else 0: a forward's partial O and L of each
     * share of the keys, a backward's partial dK and dV of each share of a group's heads. */
    CUdeviceptr split_ws;
    size_t split_ws_bytes;
    /* Attention sinks (ft_kernel_args.h), 0 for none: one logit a query head, of the accumulator
     * type ([heads]); a backward's dsinks [heads] (the same type) is zeroed by the launch and
     * gets the sinks' gradient, summed over the batch. */
    CUdeviceptr sinks, dsinks;
} ln_problem;

/* Bytes of an element of dtype (f32 4, f16 and bf16 2, f64 8) and of its accumulator type
 * (lse, delta, dq_accum: 8 for f64, else 4). */
size_t ln_elem_bytes(int dtype);
size_t ln_acc_bytes(int dtype);
/* scale, or 1/sqrt(head_dim) when scale is 0. */
double ln_softmax_scale(double scale, int head_dim);
/* The heads of p's K and V: heads_k, or heads when it is 0. */
int ln_heads_k(const ln_problem *p);
/* The problem features beyond plain attention that p needs (GEN_FEATURE_*: grouped K/V heads,
 * a softcap, a variable-length batch); a plan launches p only when its family takes all of them. */
unsigned ln_problem_features(const ln_problem *p);
/* p's mask from a problem's (sides -1: no limit; causal 1 hides keys right of the diagonal):
 * the CAUSAL flag, the band (mask_lo, mask_hi) for p's lengths, and the sides a variable-length
 * batch's kernels place per sequence (mask_left, mask_right, mask_bottom_right). Set p's lengths
 * first. The one place a launch's mask fields are derived. */
void ln_problem_mask(ln_problem *p, int causal, int bottom_right, int window_left, int window_right);
/* 1 when p is a variable-length batch (cu_seqlens_q set). */
int ln_varlen(const ln_problem *p);
/* Rows of p's lse, delta and dQ accumulator: batch*heads*seqlen_q, or heads*total_q. */
size_t ln_lse_rows(const ln_problem *p);
/* Strides of a contiguous [batch, heads, seqlen, dim] tensor. */
void ln_contiguous_strides(int heads, int seqlen, int dim, long long stride[3] /* OUT */);
/* Elements a tensor of those strides and sizes spans, from its first element to its last. */
size_t ln_tensor_elems(const long long stride[3], int batch, int heads, int seqlen, int dim);

/* The head dims the runtime compiles, ascending: 32, 64, 96, 128, 192, 256. */
extern const int ln_head_dims[];
extern const int ln_head_dim_count;
/* The head dim a problem of head dim d is looked up at: the smallest of ln_head_dims at least
 * d, or d itself past them. The runtime's kernels take that HEAD_DIM (or a family's larger
 * min_head_dim), padding d with DATA_DIM where they differ. */
int ln_padded_head_dim(int d);
/* The HEAD_DIM family f runs a problem of head dim d at: ln_padded_head_dim(d), or the family's
 * min_head_dim above it (gen_family.min_head_dim; DATA_DIM pads d to it). */
int ln_family_head_dim(const gen_family *f, int d);
/* The widest of those over the catalogue: the backward workspace's dQ accumulator is that wide. */
int ln_accum_head_dim(int d);
/* The backward workspace: delta [B, H, seqlen_q] at offset 0, then (256-byte aligned) the dQ
 * accumulator [B, H, seqlen_q, ln_accum_head_dim(head_dim)] (a kernel of a smaller HEAD_DIM
 * uses the start of it), both of the accumulator type, then the dQ order area
 * of DQ_MODE ordered (ft_kernel_args.h): ints, a ticket per batch index (a launch slice uses its
 * first batch's), then the semaphores [B, H, ceil(seqlen_q / FT_DQ_SEM_ROWS)]. A variable-length
 * batch (total_q > 0: its packed query rows; seqlen_q its longest) has delta [H, total_q] and the
 * accumulator [H, total_q, .], the order area as above. Returns its bytes; OUT: *accum_offset,
 * bytes from the start to dq_accum (may be NULL). */
size_t ln_workspace_bytes(int dtype, int batch, int heads, int seqlen_q, int total_q, int head_dim,
                          size_t *accum_offset);
/* Semaphores a head has in the dQ order area, ints in the whole area, and the bytes from
 * dq_accum to the workspace's end (the accumulator and the order area: what is zeroed before an
 * atomic or ordered backward). */
size_t ln_dq_sems_per_head(int seqlen_q);
size_t ln_dq_order_ints(int batch, int heads, int seqlen_q);
size_t ln_accum_bytes(int dtype, int batch, int heads, int seqlen_q, int total_q, int head_dim);   /* as above */
/* Bytes from dq_accum to the order area (the accumulator alone) for p. */
size_t ln_dq_order_offset(const ln_problem *p);
/* The workspace of a forward whose keys `splits` blocks share (ft_kernel_args.h o_part, lse_part):
 * fp32 partial O [splits, rows, cols] at offset 0, then (256-byte aligned) fp32 log2 L [splits,
 * rows]; rows = ln_lse_rows of the problem, cols the kernels' HEAD_DIM_V. 0 when splits <= 1.
 * OUT: *lse_offset (may be NULL). */
size_t ln_fwd_workspace_bytes(int splits, size_t rows, int cols, size_t *lse_offset);
/* The workspace of a backward whose groups' query heads `splits` blocks share (ft_kernel_args.h
 * dk_part, dv_part): fp32 partial dK [splits, rows, dk_cols] at offset 0, then (256-byte aligned)
 * partial dV [splits, rows, dv_cols]; rows = batch * heads_k * seqlen_k, the columns the kernels'
 * HEAD_DIM and HEAD_DIM_V. 0 when splits <= 1. OUT: *dv_offset (may be NULL). */
size_t ln_bwd_split_bytes(int splits, size_t rows, int dk_cols, int dv_cols, size_t *dv_offset);

/* ---- argument blocks (ln_args.c) --------------------------------------------------------- */

/* The argument blocks of batches [b0, b0 + nb) of p: pointers moved to batch b0 (lse, delta,
 * a split forward's partials (splits > 1, rows of part_cols columns in p->split_ws; splits 1 passes
 * none) and dq_accum by whole [heads, seqlen_q] rows, of accum_cols columns for dq_accum; for a
 * variable-length batch only the prefix sums move, the rest is addressed by them), batch = nb,
 * everything else as p says. accum_cols > 0 (the kernels' HEAD_DIM) passes p->dq_accum and the
 * dQ order area's ticket and semaphores, 0 passes NULL (kernels without DQ_MODE atomic or
 * ordered never read them). */
void ln_fwd_args(const ln_problem *p, int splits, int part_cols, int b0, int nb, ft_fwd_args *a /* OUT */);
/* A split backward's partials in a (splits > 1; ln_bwd_split_bytes's layout in p->split_ws),
 * moved to batch b0 by whole [heads_k, seqlen_k] rows; splits 1: none. */
void ln_bwd_split_args(const ln_problem *p, int splits, int dk_cols, int dv_cols, int b0, ft_bwd_args *a /* IN/OUT */);
void ln_bwd_args(const ln_problem *p, int accum_cols, int b0, int nb, ft_bwd_args *a /* OUT */);
/* Encodes a's q_map and do_map (ft_kernel_args.h) for a's slice, boxes of 64 columns by box_rows
 * rows, and where out_box_rows > 0 its k_map, v_map, dk_map and dv_map, boxes of out_box_rows
 * keys (rows past seqlen_k read as zeros, and not written). CUDA_SUCCESS, or the driver's error
 * (CUDA_ERROR_INVALID_VALUE for a dtype other than f16/bf16, or pointers and strides the copy
 * engine refuses: they need 16-byte alignment). */
CUresult ln_bwd_tensor_maps(const cu_driver *cu, const ln_problem *p, int box_rows, int out_box_rows,
                            ft_bwd_args *a /* IN/OUT */);
/* The same for the forward: a's k_map and v_map (keys past seqlen_k read as zeros), where
 * q_box_rows > 0 its q_map, boxes of q_box_rows (rows past seqlen_q read as zeros), and where
 * o_box_rows > 0 its o_map (rows past seqlen_q are not written); boxes of row_bytes a row (128,
 * or 64: 32 16-bit columns in a 64-byte swizzle, gen_family.map_row_bytes). */
CUresult ln_fwd_tensor_maps(const cu_driver *cu, const ln_problem *p, int box_rows, int q_box_rows, int o_box_rows,
                            int row_bytes, ft_fwd_args *a /* IN/OUT */);

/* ---- steps and their shapes (ln_dims.c, ln_plan.c) -------------------------------------- */

/* The blocks a cluster of entry e of c's family along grid.x: its family's cluster() for its main
 * kernel (the entry that `persists`), else 1. */
unsigned ln_entry_cluster(const gen_config *c, const gen_entry *e);

/* Launch shape of entry e of c for a problem of those lengths: grid.x = ceil(seqlen_q /
 * BLOCK_M) (times SPLITS for a split entry, gen_entry.split; with PACK_GQA ln_launch sets it),
 * or ceil(seqlen_k / BLOCK_N) for a key-major entry, rounded up to whole clusters
 * (ln_entry_cluster); block.x = NUM_WARPS*32; OUT:
 * *smem, the entry's dynamic shared memory (bytes). grid.y (batch*heads of a launch), grid.z,
 * block.y and block.z are the launcher's (1 except grid.y). Returns 0, or -1 when a size or a
 * tile is < 1. */
int ln_entry_dims(const gen_config *c, const gen_entry *e, int seqlen_q, int seqlen_k, unsigned *grid_x /* OUT */,
                  unsigned *block_x /* OUT */, size_t *smem /* OUT */);

/* The operations an entry serves. */
typedef enum ln_op { LN_FORWARD, LN_BACKWARD, LN_UTILITY } ln_op;
/* Which one entry e of f serves: its descriptor's `op`, or for GEN_OP_FAMILY the family's
 * direction (`backward`). */
ln_op ln_entry_op(const gen_family *f, const gen_entry *e);

/* One launch: an entry, its function in the loaded module and its shape for a problem's
 * lengths. grid.y is batch*heads of each launch. */
typedef struct ln_step {
    const gen_entry *entry;
    CUfunction fn;
    unsigned grid_x, block_x, smem;
    int persistent;             /* 1: the kernel loops over its grid_x * batch*heads tiles on at most
                                 * `resident` blocks, all in grid.x (gen_family.persistent) */
    unsigned resident;          /* persistent: the blocks that fit the GPU at once (ln_plan_bind) */
    int key_major;              /* 1: grid.y counts K/V heads (batch*heads_k), not query heads */
    unsigned splits;            /* blocks per query tile (gen_entry.split: SPLITS; else 1), in grid.x */
    unsigned pack_rows;         /* > 0 (PACK_GQA): grid.x tiles of this many packed rows, seqlen_q * heads /
                                 * heads_k of them, times splits; grid.y counts K/V heads */
    unsigned cluster;           /* blocks a cluster along grid.x (gen_family.cluster; 1: none): grid.x is
                                 * a multiple of it */
} ln_step;

/* The grid of one launch of step s for nb problems of p's batch (a slice, ln_launch): grid.x as
 * ln_entry_dims made it, grid.y nb times the heads (K/V heads for a key-major entry); with
 * pack_rows, tiles of the group's packed rows over the K/V heads; persistent, every tile of the
 * slice in grid.x, at most s->resident blocks, grid.y 1. */
void ln_step_grid(const ln_step *s, const ln_problem *p, int nb, unsigned *grid_x /* OUT */,
                  unsigned *grid_y /* OUT */);

/* Every launch of one operation of a kernel for one pair of lengths, in order: the family's
 * entries for that operation in table order, those whose used() says so. Immutable once made;
 * reused for any batch, heads, pointers, strides, scale and mask of those lengths. */
typedef struct ln_plan {
    int backward;               /* argument block: 1 ft_bwd_args, 0 ft_fwd_args */
    int accum;                  /* DQ_MODE atomic or ordered: dq_accum and the order area passed,
                                 * zeroed before the first step */
    int accum_stored;           /* DQ_INIT store: the kernels store each query tile's first dQ share, so
                                 * only the order area is zeroed */
    int map_rows;               /* > 0: the maps the kernel reads (the backward's Q and dO, the
                                 * forward's K and V) go with boxes 64 x map_rows (gen_family.map_rows) */
    int q_map_rows;             /* > 0: the forward's Q map goes too, boxes 64 x q_map_rows */
    int o_map_rows;             /* > 0: and O's (the backward's dK and dV), boxes 64 x o_map_rows */
    int map_row_bytes;          /* the forward's boxes' bytes a row: 128, or 64 (gen_family.map_row_bytes) */
    int seqlen_q, seqlen_k;     /* the lengths the grids are for */
    unsigned features;          /* GEN_FEATURE_* the kernels take; ln_launch refuses a problem needing more */
    unsigned required;          /* GEN_FEATURE_* the kernels were compiled for (SOFTCAP 1, VARLEN 1): ln_launch refuses a
                                 * problem without them */
    int head_dim, head_dim_v;   /* the data's head dims the kernels were compiled for (DATA_DIM, DATA_DIM_V
                                 * where they pad, else HEAD_DIM, HEAD_DIM_V): ln_launch refuses others */
    int accum_cols;             /* columns of a dQ accumulator row: the kernels' HEAD_DIM */
    int splits;                 /* > 1: a forward whose keys, or a backward whose groups' query heads, that
                                 * many blocks share, needing the split workspace (ln_problem.split_ws,
                                 * ln_split_workspace_bytes); else 1 */
    int part_cols;              /* columns of a partial O or dV row: the kernels' HEAD_DIM_V */
    int part_cols_k;            /* columns of a partial dK row: the kernels' HEAD_DIM */
    ln_step steps[LN_MAX_STEPS];
    int count;
} ln_plan;

/* The plan of operation op (LN_FORWARD or LN_BACKWARD) of c for those lengths, its functions
 * not looked up yet (ln_plan_bind). Needs no GPU. Returns 0, or -1 (err): a family without
 * that operation, a length or tile < 1, more than LN_MAX_STEPS steps. */
int ln_plan_make(const gen_config *c, ln_op op, int seqlen_q, int seqlen_k, ln_plan *out /* OUT */, char *err,
                 size_t len);
/* Looks each step's function up in module (c's, loaded with ln_module_load) and, for a
 * persistent step, counts the blocks that fit the current context's GPU at once (occupancy per
 * SM x SMs). CUDA_SUCCESS or the error; OUT: *missing (may be NULL), the entry that failed. */
CUresult ln_plan_bind(const cu_driver *cu, ln_plan *plan, CUmodule module, const char **missing);

/* Bytes of the split workspace plan needs for p (ln_fwd_workspace_bytes or ln_bwd_split_bytes;
 * 0 where it splits nothing). */
size_t ln_split_workspace_bytes(const ln_plan *plan, const ln_problem *p);

/* Loads image (a CUBIN of configuration c) and opts each entry it launches in to the dynamic
 * shared memory it needs past 48 KiB: once per module, so launches never set attributes.
 * OUT: *module (0 on failure). Returns CUDA_SUCCESS, or the error with *what naming the call
 * that failed ("cuModuleLoadData"). */
CUresult ln_module_load(const cu_driver *cu, const gen_config *c, const void *image, CUmodule *module,
                        const char **what /* OUT */);

/* ---- launches (ln_launch.c, ln_utility.c) ------------------------------------------------- */

/* The lowest-level call, the only cuLaunchKernel of the project: fn on grid (grid_x, grid_y, 1)
 * of blocks (block_x, 1, 1) with smem bytes of dynamic shared memory and one parameter list. */
CUresult ln_launch_one(const cu_driver *cu, CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned block_x,
                       unsigned smem, CUstream stream, void **params);

/* Enqueues plan's launches for p on stream: dq_accum and the dQ order area zeroed first when
 * plan->accum, then per batch slice of at most 65535/heads batches, each step in order with
 * that slice's argument block (grid.y: the slice's batch*heads, batch*heads_k for a key-major
 * or packed step). No allocation, no locks, no synchronization. Returns CUDA_SUCCESS or the
 * first error (CUDA_ERROR_INVALID_VALUE when p's lengths or head dims are not the plan's, heads >
 * 65535, heads_k does not divide heads, p needs a feature the plan's family does not take, or a
 * split plan's forward workspace is missing or smaller than ln_fwd_workspace_bytes). */
CUresult ln_launch(const cu_driver *cu, const ln_plan *plan, const ln_problem *p, CUstream stream);

/* The tuner's utilities in the `ref` module (templates/families/ref.cu), launched on a grid-stride grid
 * of sm_count*8 blocks of 256 threads (1024 blocks when sm_count is unknown). */
typedef struct ln_utilities {
    CUfunction fill_normal, compare;
    int sm_count;
} ln_utilities;

/* Looks both up in ref_module. CUDA_SUCCESS or the error. */
CUresult ln_utilities_load(const cu_driver *cu, CUmodule ref_module, int sm_count, ln_utilities *out);
/* n standard normal values of the module's dtype into dst, from stream seed. */
CUresult ln_fill_normal(const cu_driver *cu, const ln_utilities *u, CUdeviceptr dst, size_t n,
                        unsigned long long seed, CUstream stream);
/* Adds the error figures of got against want (n elements of the dtype, or of the accumulator
 * type when acc is 1) into stats (4 doubles the caller zeroed; see tune_compare_finish). */
CUresult ln_compare(const cu_driver *cu, const ln_utilities *u, CUdeviceptr got, CUdeviceptr want, size_t n, int acc,
                    CUdeviceptr stats, CUstream stream);

/* ==== part two (ft_launch_gpu): GPU support for the tuner, the tests and the benchmarks ==== */

/* ---- a session on one device (ln_session.c) --------------------------------------------- */

typedef struct ln_session {
    const cu_driver *cu;
    CUdevice device;
    CUcontext context;
    char arch[16];            /* "sm_90" */
    char name[128];           /* "NVIDIA H100 80GB HBM3" */
    int sm_count;
    int smem_limit;           /* opt-in dynamic shared memory per block, bytes */
} ln_session;

/* Opens the driver, CUDA device `ordinal` and its primary context (made current). Returns 0, or
 * -1 with the reason in why, naming the device (no driver, no such device, an arch the generator
 * does not target). */
int ln_session_open_device(ln_session *s, int ordinal, char *why, size_t len);
/* ln_session_open_device on device 0: the GPU tests and the benchmarks. */
int ln_session_open(ln_session *s, char *why, size_t len);
/* Releases the primary context; a session that never opened: nothing to do. */
void ln_session_close(ln_session *s);

/* ---- a problem's device buffers (ln_buffers.c) ------------------------------------------ */

/* Element counts of p's tensors (from their strides), and rows = ln_lse_rows(p). */
typedef struct ln_extents {
    size_t q, k, v, o, rows;
} ln_extents;

void ln_problem_extents(const ln_problem *p, ln_extents *out /* OUT */);
/* Allocates q, k, v, o, dout, dq, dk, dv, lse and the workspace (delta at its start, dq_accum
 * after it) for p's sizes and strides. On failure frees what it allocated. 0 or -1 (why). */
int ln_buffers_alloc(const cu_driver *cu, ln_problem *p, char *why, size_t len);
/* Frees what ln_buffers_alloc allocated and zeroes the pointers. */
void ln_buffers_free(const cu_driver *cu, ln_problem *p);
/* Fills bytes with 0xFF: a NaN in every dtype, so an element no kernel writes is caught. */
CUresult ln_poison(const cu_driver *cu, CUdeviceptr dst, size_t bytes);

/* ---- host values in a dtype (ln_convert.c) ----------------------------------------------- */

/* x rounded to dtype exactly as the device stores it (round to nearest even). */
double ln_round_to_dtype(int dtype, double x);
/* Uploads n host doubles rounded to dtype (acc 0) to dst; rounded (may be NULL) gets the values
 * as the device holds them. 0 or -1. */
int ln_upload(const cu_driver *cu, int dtype, CUdeviceptr dst, const double *host, size_t n, double *rounded);
/* Downloads n elements of dtype (or of its accumulator type when acc is 1) as doubles. 0 or -1. */
int ln_download(const cu_driver *cu, int dtype, CUdeviceptr src, double *host, size_t n, int acc);

/* ---- parallel compilation (ln_build.c) --------------------------------------------------- */

/* A configuration compiled and loaded (ln_module_load) into the session's context. */
typedef struct ln_built {
    gen_config config;
    CUmodule module;
    gen_binary binary;
    char error[1024];         /* why it could not be validated, compiled or loaded; empty when fine */
} ln_built;

/* Configurations built so far, so identical sources compile once. Zero-initialized = empty. */
typedef struct ln_build_cache {
    struct ln_cached *entries;
    int count;
} ln_build_cache;

/* Validates (for the session's GPU), compiles with `threads` threads and loads every
 * configuration not in the cache. OUT: built[i] for configs[i], owned by the cache. Returns the
 * number that failed; each has its reason in built[i]->error. */
int ln_build(ln_session *s, ln_build_cache *cache, const gen_config *configs, ln_built **built, int count,
             int threads);
/* Unloads and frees everything in the cache; it is empty afterwards. */
void ln_build_cache_free(ln_session *s, ln_build_cache *cache);

#endif
