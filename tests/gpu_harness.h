/* GPU test support over the launch module (launch/ln_internal.h): a session on device 0,
 * configurations compiled in parallel and cached per source, device buffers in any dtype and
 * layout, and a family's launches exactly as the runtime and the tuner make them (ln_launch).
 * Used by test_attn_gpu; nothing outside tests/ links it. */
#ifndef FT_GPU_HARNESS_H
#define FT_GPU_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_driver_internal.h"
#include "ft_kernel_args.h"
#include "gen_internal.h"
#include "ln_internal.h"

/* The return code a GPU test gives ctest when there is no GPU (SKIP_RETURN_CODE). */
#define GPU_SKIP_CODE 77

/* cu, device, context, arch ("sm_90"), name, sm_count, smem_limit (opt-in bytes per block). */
typedef ln_session gpu_session;

/* Opens the driver, the first device and its primary context (made current). Returns 0, or -1
 * with the reason in why (no driver, no device). */
int gpu_open(gpu_session *s, char *why, size_t len);
void gpu_close(gpu_session *s);

/* A compiled configuration, loaded into the session's context: config, module, binary, and
 * error (why it could not be compiled or loaded; empty when fine). */
typedef ln_built gpu_kernel;

/* Compiles (with `threads` threads) and loads every configuration; identical sources are
 * compiled once. OUT: kernels[i] for configs[i]. Returns the number that failed; each failure
 * has its reason in kernels[i].error. */
int gpu_build(gpu_session *s, const gen_config *configs, gpu_kernel **kernels, int count, int threads);
void gpu_release_all(gpu_session *s);

/* At most `blocks` blocks for a persistent backward kernel (0: as many as fit, the runtime's
 * choice): a test's small problem then makes each block loop over several tiles, the path a
 * large problem takes on a full GPU. */
void gpu_cap_persistent_blocks(int blocks);

/* A problem on the device: shapes, layout and the buffers. Strides are in elements. delta and
 * dq_accum lie in one workspace (ln_workspace_bytes), delta at its start. The mask is the band
 * of ft_mask.h: causal, aligned top-left or (causal_align 1) bottom-right, and with window 1 a
 * local window of window_left / window_right keys (-1: unlimited); all 0: no mask. */
typedef struct gpu_problem {
    int dtype, batch, heads, seqlen_q, seqlen_k, head_dim, head_dim_v, causal;
    int causal_align, window, window_left, window_right;
    int heads_k;              /* K/V heads (grouped-query attention); 0 means heads */
    double softcap;           /* 0 none */
    double softmax_scale;
    int layout;               /* 0 [B,H,N,D] contiguous; 1 [B,N,H,D] (a transposed view); 2 padded rows */
    long long q_stride[3], k_stride[3], v_stride[3], o_stride[3];
    CUdeviceptr q, k, v, o, lse, dout, dq, dk, dv, delta, dq_accum;
    size_t q_elems, k_elems, v_elems, o_elems;   /* allocation extents in elements */
    /* A variable-length batch: batch + 1 prefix sums each (host memory, the caller's), or NULL
     * for a dense one. seqlen_q, seqlen_k are then the longest lengths, the tensors one packed
     * sequence of total_q (total_k) rows in the layout (1: [total, H, D], FlashAttention's), lse
     * [H, total_q]. gpu_problem_alloc sets total_q, total_k and copies the sums to the device. */
    const int *cu_seqlens_q, *cu_seqlens_k;
    int total_q, total_k;
    CUdeviceptr dev_cu_seqlens_q, dev_cu_seqlens_k;
    /* The workspace of a kernel that splits a tile's work over blocks (ln_split_workspace_bytes),
     * allocated by the first launch that needs it, grown by a larger one, freed with the problem. */
    CUdeviceptr split_ws;
    size_t split_ws_bytes;
    /* Attention sinks: with_sinks 1 has gpu_problem_alloc allocate sinks (the logits, one a query
     * head) and dsinks (their gradient) of the accumulator type, [heads] each, which the caller
     * fills (gpu_upload_acc) and reads (gpu_download, acc 1); 0 none. */
    int with_sinks;
    CUdeviceptr sinks, dsinks;
} gpu_problem;

/* The kernels' CAUSAL template flag for the problem: 1 when any mask applies. */
int gpu_problem_masked(const gpu_problem *p);

size_t gpu_dtype_bytes(int dtype);
size_t gpu_acc_bytes(int dtype);      /* lse, delta, dq_accum element: 8 for f64, else 4 */
/* Rows of lse and delta: batch*heads*seqlen_q, or heads*total_q for a variable-length batch. */
size_t gpu_lse_rows(const gpu_problem *p);

/* Fills strides and extents for the layout, allocates every buffer. Returns 0 or -1 (why). */
int gpu_problem_alloc(gpu_session *s, gpu_problem *p, char *why, size_t len);
void gpu_problem_free(gpu_session *s, gpu_problem *p);

/* Uploads host doubles (laid out with the problem's strides, `elems` long) rounded to the
 * problem's dtype; `rounded` (may be NULL) gets the values as the device holds them. */
int gpu_upload(gpu_session *s, const gpu_problem *p, CUdeviceptr dst, const double *host, size_t elems,
               double *rounded);
/* Uploads host doubles as `elems` elements of the problem's accumulator type (float, double for
 * f64): sink logits; `rounded` (may be NULL) gets them as the device holds them. */
int gpu_upload_acc(gpu_session *s, const gpu_problem *p, CUdeviceptr dst, const double *host, size_t elems,
                   double *rounded);
/* Downloads `elems` dtype elements (or acc-type elements when acc is 1) as doubles. */
int gpu_download(gpu_session *s, const gpu_problem *p, CUdeviceptr src, double *host, size_t elems, int acc);
/* Fills bytes with 0xFF: a NaN in every dtype, so an element no kernel writes is caught. */
int gpu_poison(gpu_session *s, CUdeviceptr dst, size_t bytes);

/* Runs a forward family (or `ref`'s ft_ref_fwd) writing o and lse. Returns 0, or -1 with the
 * CUDA error in why. Synchronizes. */
int gpu_forward(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream, char *why, size_t len);
/* Runs a backward family (or `ref`'s backward entries) writing dq, dk, dv from o, lse, dout. */
int gpu_backward(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream, char *why, size_t len);

/* Forward launches only, asynchronously, for timing. Return a CUresult. */
int gpu_forward_async(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream);
int gpu_backward_async(gpu_session *s, const gpu_kernel *k, gpu_problem *p, CUstream stream);

/* Host-side dtype rounding, exactly as the device stores values (round to nearest even). */
double gpu_round_to_dtype(int dtype, double x);

#endif
