/* flashtune.h: the public C API of libflashtune, the runtime that runs the best tuned
 * FlashAttention kernel for a problem on the current GPU.
 *
 * Typical use:
 *
 *     ft_context *ft;
 *     if (ft_open("flashtune.db", &ft) != FT_OK)      // or ft_open(NULL, &ft): no database
 *         fprintf(stderr, "%s\n", ft_last_error(NULL));
 *     ft_attention_desc d = { .struct_size = sizeof(ft_attention_desc), .batch = 4, .heads = 16,
 *                             .seqlen_q = 2048, .seqlen_k = 2048, .head_dim = 128,
 *                             .head_dim_v = 128, .dtype = FT_BF16, ... strides };
 *     if (ft_attention_forward(ft, &d, q, k, v, o, lse, stream) != FT_OK)
 *         fprintf(stderr, "%s\n", ft_last_error(ft));
 *     ft_close(ft);
 *
 * Tensors. Every data pointer is a CUDA device pointer (a CUdeviceptr cast to void *) in the
 * CUDA context current on the calling thread. Q is [batch, heads, seqlen_q, head_dim], K is
 * [batch, heads, seqlen_k, head_dim], V is [batch, heads, seqlen_k, head_dim_v] and O is
 * [batch, heads, seqlen_q, head_dim_v], in any layout the strides describe: strides are in
 * elements (not bytes), [0] batch, [1] head, [2] sequence position; the head dim is always
 * contiguous (stride 1). A [B, N, H, D] tensor (heads inside positions) is
 * { N*H*D, D, H*D }. Backward's dO uses o_stride, dQ q_stride, dK k_stride and dV v_stride.
 * lse is [batch, heads, seqlen_q], contiguous, of the accumulator type: float for FT_F32,
 * FT_F16 and FT_BF16, double for FT_F64 (hence void *: the f64 kernels keep it in double).
 * Element sizes: f32 4 bytes, f16 and bf16 2, f64 8.
 *
 * Requirements beyond the shapes. f16 and bf16 run on tensor cores and need every tensor's
 * base pointer 16-byte aligned and every stride (of a dimension longer than 1) a multiple of 8
 * elements; otherwise the call returns FT_ERR_UNSUPPORTED naming the tensor and value. f32 and
 * f64 take any element-aligned pointer and stride. Head dims: any from 1 to 256, head_dim_v
 * independently of head_dim; in f16 and bf16 multiples of 8 (rows are read in 16-byte pieces:
 * pad a tensor with zero columns and pass softmax_scale for others). A head dim runs on the
 * kernels of the next compiled one (32, 64, 96, 128, 192, 256), the padding columns never read
 * from memory nor written; ft_describe_choice says so. Except where no kernel configuration fits
 * the GPU, which returns FT_ERR_UNSUPPORTED saying so: the f16/bf16 forward with head_dim_v
 * above 192 and head_dim 33 to 128 on GPUs before sm_90 (registers), and the f64 backward with
 * both head dims above 192 on GPUs with less than 160 KiB of shared memory per block (sm_86,
 * sm_89). batch*heads above 65535 (CUDA's grid limit) is split
 * into several launches; heads alone must be at most 65535.
 *
 * Choosing the kernel, in this order: the tuned winner for this exact problem on this GPU in
 * the database given to ft_open; else the database's winner for the nearest tuned problem with
 * the same dtype, head dims and masked or not (decode shapes of at most 16 query rows: without
 * a mask or causal bottom-right alike) (of the same kind first: the same query heads per
 * K/V head, softcap or not, mask (causal, window sides, alignment) and dense or variable-length
 * batch (bucketed by how full it is: total_q + total_k over batch * (seqlen_q + seqlen_k), in
 * eighths); then by sequence lengths and how full the problem's grid keeps the GPU's SMs, in
 * waves (decode shapes: batch * K/V heads)); else the winners shipped inside the
 * library (tuned by the flashtune authors, looked up the same way); where neither has a winner of
 * the problem's head dims and its built-in default pads them further (head dims up to 32 on
 * Hopper, to 64), the winners of the padded dims the same way, run padded; else a built-in default
 * for the GPU's architecture, dtype and head dims. So a supported problem always runs.
 * ft_describe_choice says which rule picked the kernel. Every mask (causal either way aligned, a
 * window) runs the same masked kernels, the band an argument of their launch, so a winner tuned
 * on one mask serves the others.
 *
 * Loading: a kernel's CUBIN is taken from the database when one was compiled from the same
 * source, with the same options, for this GPU's architecture by this library's NVRTC version
 * (all compared, not only their hash); else from the per-user cache on disk, where the same is
 * compared; otherwise it is compiled with NVRTC (a few seconds, once per kernel) and stored in
 * the cache on disk and, when the database file is writable, in the database, for the next
 * process. The cache is the folder $FLASHTUNE_CACHE_DIR, else $XDG_CACHE_HOME/flashtune, else
 * ~/.cache/flashtune (one file a kernel, written aside and renamed, so processes may share it;
 * FLASHTUNE_CACHE_DIR set to "" or "0" turns it off; `flashtune cache warm` fills it with the
 * tuned winners' kernels ahead of time); ft_open reads the variables. The first
 * call for a problem may therefore take seconds once per machine; later calls cost a hash lookup
 * and the launches.
 *
 * Errors. Every fallible call returns an ft_status; FT_OK is 0. The message of the last failed
 * call is kept per thread and per context: ft_last_error(ctx) returns it, naming the function,
 * the argument and its value (e.g. "ft_attention_forward: head_dim=300 is not supported (1 to
 * 256)"), plus the CUDA error name when there is one. The library never exits or
 * aborts.
 *
 * Threads. One ft_context may be used by several threads at once, also from several CUDA
 * contexts (each context gets its own loaded modules). ft_open and ft_close are not to race
 * with other calls on the same context. Launches are asynchronous on the given stream, as
 * cuLaunchKernel is; the caller synchronizes as usual.
 *
 * CUDA contexts. The context current on the calling thread is used (so a library shares
 * PyTorch's). When none is current, the library retains device 0's primary context, makes it
 * current on that thread, and releases it in ft_close. Modules loaded into a context stay
 * loaded until ft_close: close the ft_context before destroying a CUDA context it used.
 *
 * No GPU. ft_open works without a GPU or driver (it only opens the database). Calls that need
 * the GPU check their arguments first, then return FT_ERR_NO_DEVICE with a message saying
 * what is missing. The CUDA driver is loaded at run time (dlopen), never linked. */
#ifndef FLASHTUNE_H
#define FLASHTUNE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FT_API __attribute__((visibility("default")))
#else
#define FT_API
#endif

#define FT_VERSION_MAJOR 0
#define FT_VERSION_MINOR 2
#define FT_VERSION_PATCH 0

/* An open library handle: database, caches, loaded modules. Opaque. */
typedef struct ft_context ft_context;

typedef enum ft_status {
    FT_OK = 0,
    FT_ERR_INVALID_ARGUMENT,   /* a NULL pointer, a size < 1, overlapping strides, ... */
    FT_ERR_UNSUPPORTED,        /* a valid problem these kernels cannot run (head dim, alignment) */
    FT_ERR_NO_DEVICE,          /* no CUDA driver, no GPU, or a GPU the generator does not target */
    FT_ERR_CUDA,               /* a CUDA driver call failed; the message names it */
    FT_ERR_COMPILE,            /* NVRTC could not compile the kernel; the message has its log head */
    FT_ERR_DB,                 /* the database file is missing, foreign, corrupt or of a newer schema */
    FT_ERR_OUT_OF_MEMORY,      /* host or device memory ran out */
    FT_ERR_INTERNAL,           /* a bug in flashtune; please report the message */
    FT_ERR_IO                  /* a file the library was asked to write (a capture file) failed */
} ft_status;

/* Element types; the codes are the templates' DTYPE values. */
typedef enum ft_dtype { FT_F32 = 0, FT_F16 = 1, FT_BF16 = 2, FT_F64 = 3 } ft_dtype;

/* Where the diagonal of a causal mask or a window sits (ft_attention_desc.causal_align). */
enum {
    FT_ALIGN_TOP_LEFT = 0,       /* query i's diagonal is key i (PyTorch's is_causal) */
    FT_ALIGN_BOTTOM_RIGHT = 1    /* query i's diagonal is key i + seqlen_k - seqlen_q: the last query
                                  * meets the last key (a KV cache; FlashAttention 2.1+) */
};

/* One attention problem: shapes, type, masking, scale and layout.
 *
 * Masks. Every mask is a band around a diagonal: query i sees key j when
 *     diag(i) - window_left <= j <= diag(i) + right
 * where diag(i) is i (top-left) or i + seqlen_k - seqlen_q (bottom-right, causal_align), right is
 * 0 when causal is 1 and window_right otherwise, and a side of -1 (or a side without window) is
 * unlimited. causal = 1 alone is the usual causal mask; window = 1 with causal = 0 is a local
 * (sliding) window, (left, -1) or (-1, right) a one-sided one. A query row that sees no key at
 * all (possible with bottom-right alignment when seqlen_q > seqlen_k, or with a window) gets
 * O = 0 and lse = +inf, and its dQ is 0; a key no query sees gets dK = dV = 0.
 *
 * Growing (the ABI rule). Fields are only ever appended, never removed, reordered or resized,
 * and a zero in a new field always means the behaviour from before the field existed. Set
 * struct_size to sizeof(ft_attention_desc) (FT_ATTENTION_DESC_INIT or ft_attention_desc_init
 * do): the library reads min(struct_size, its own sizeof) bytes and treats fields past that as
 * zero, so a program built against an older header keeps working with a newer library. A
 * struct_size larger than the library's (a program built against a newer header) is accepted
 * only when every byte past the fields the library knows is zero, else the call returns
 * FT_ERR_UNSUPPORTED naming struct_size (the program asks for something this library cannot
 * do). A struct_size below FT_ATTENTION_DESC_SIZE_V1 or above FT_ATTENTION_DESC_SIZE_MAX is
 * FT_ERR_INVALID_ARGUMENT: 0 (not set), or a program built against flashtune 0.1, whose desc
 * began with batch and heads, must be rebuilt. Added in 0.2.0: struct_size; causal_align,
 * window, window_left, window_right. Added after 0.2.0: deterministic, heads_k, softcap (and
 * reserved); cu_seqlens_q, cu_seqlens_k, total_q, total_k; sinks, dsinks; allow_tf32 (and
 * reserved2, since named prefix_sums_checked: a field that was 0 keeps its meaning).
 *
 * Determinism. The forward, and a backward with deterministic = 1, give bitwise identical
 * results for identical inputs on the same GPU and library version, run after run. A backward
 * with deterministic = 0 may differ in the last bits from run to run: the fastest kernels add
 * each query's dQ over the key tiles in whatever order the GPU runs them. With deterministic = 1
 * the chosen kernel adds them in a fixed order instead (or computes dQ in a kernel of its own),
 * at some cost in speed (docs/PERFORMANCE.md). */
typedef struct ft_attention_desc {
    size_t struct_size;          /* sizeof(ft_attention_desc) as the caller compiled it */
    int batch, heads;            /* >= 1 each */
    int seqlen_q, seqlen_k;      /* >= 1 each; may differ */
    int head_dim;                /* of Q and K: 1 to 256 (f16, bf16: multiples of 8) */
    int head_dim_v;              /* of V and O: the same; 0 means head_dim */
    ft_dtype dtype;
    int causal;                  /* 0 none, 1 causal: keys right of the diagonal are hidden */
    float softmax_scale;         /* 0 means 1/sqrt(head_dim); must be finite and not negative */
    int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3];   /* elements: batch, head, seq */
    /* ---- end of version 1 (FT_ATTENTION_DESC_SIZE_V1) ---- */
    int causal_align;            /* FT_ALIGN_TOP_LEFT (0) or FT_ALIGN_BOTTOM_RIGHT (1); for causal and window */
    int window;                  /* 0 none (window_left and window_right must be 0); 1 a local window */
    int window_left;             /* with window: keys visible left of the diagonal, >= 0; -1 unlimited */
    int window_right;            /* with window: keys visible right of it, >= 0; -1 unlimited; with
                                  * causal 1 it must be 0 or -1 */
    int deterministic;           /* backward: 0 fastest (dQ may differ in its last bits run to run),
                                  * 1 bitwise repeatable; the forward always is */
    int heads_k;                 /* heads of k, v (and dk, dv): 0 means heads; else it must divide
                                  * heads (grouped-query attention, multi-query with 1): query head
                                  * h reads K/V head h / (heads / heads_k), and dk, dv sum over the
                                  * heads / heads_k query heads that read each K/V head */
    float softcap;               /* 0 none; c > 0: the logit softcap (Gemma 2), each score S =
                                  * softmax_scale * Q.K becomes c * tanh(S / c) before the softmax;
                                  * must be finite and >= 0 */
    int reserved;                /* must be 0; keeps every byte of the struct a field (no tail
                                  * padding), so the struct_size rule above sees every byte */
    /* A variable-length batch (FlashAttention's varlen): NULL for a dense one. Else batch
     * sequences of their own lengths packed one after another: cu_seqlens_q and cu_seqlens_k
     * are device memory, batch + 1 int32 prefix sums each (from 0, never decreasing; sequence
     * b's queries are rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1, its keys those rows of
     * cu_seqlens_k; a sequence may be empty); seqlen_q and seqlen_k are the longest lengths (the
     * kernels' grids take them; none may be longer); total_q and total_k the packed rows
     * (cu_seqlens_q[batch], cu_seqlens_k[batch]). q, o [total_q, heads, .] and k, v [total_k,
     * heads_k, .] are addressed by the strides [1] (head) and [2] (row) alone ([0] is not read);
     * lse is [heads, total_q]. Each sequence is its own problem: a mask's bottom-right diagonal
     * is placed by its own lengths. The call copies the prefix sums to the host to check them,
     * which waits for the work queued on stream before it (unless prefix_sums_checked, below).
     * Both pointers or neither. */
    const int32_t *cu_seqlens_q;
    const int32_t *cu_seqlens_k;
    int total_q, total_k;        /* with cu_seqlens_q: >= 1 each; else 0 */
    /* Attention sinks (gpt-oss's), NULL for none: device memory, one logit a query head ([heads];
     * float32, float64 for FT_F64), which joins every row's softmax as a score with no value: L
     * includes it, and a row that sees no key gets O = 0 and L = sinks[h]. The backward writes the
     * sinks' gradient to dsinks ([heads], the same type, summed over the batch) when dsinks is
     * not NULL; dsinks must be NULL without sinks, and the forward does not read it. */
    const void *sinks;
    void *dsinks;
    /* float32 only (the other dtypes ignore it): 0 keeps float32's accuracy (on the tensor cores
     * each product is made of three TF32 products of operands split into a high part and a
     * remainder); 1 lets the products round their operands to TF32 (a 10-bit mantissa: one
     * product, about 3e-4 relative error; what torch.backends.cuda.matmul.allow_tf32 allows
     * PyTorch's matmuls). */
    int allow_tf32;
    /* 0: the call checks a variable-length batch's prefix sums (above). 1: the caller vouches for
     * them, as an earlier call with these very sums, unchanged since, checked them: the call
     * does not read them back, so it does not wait for the stream (the Python package sets it
     * for a cu_seqlens tensor it has passed before, as a model's layers pass the same one).
     * Sums that are not valid then give undefined results. 0 for a dense batch. */
    int prefix_sums_checked;
} ft_attention_desc;

/* The smallest struct_size accepted: struct_size and the fields through o_stride. */
#define FT_ATTENTION_DESC_SIZE_V1 offsetof(ft_attention_desc, causal_align)
/* The largest struct_size accepted: more means struct_size was never set (see above). */
#define FT_ATTENTION_DESC_SIZE_MAX ((size_t)4096)

/* An initializer: struct_size set, every other field zero (no mask, scale 1/sqrt(head_dim)).
 *     ft_attention_desc d = FT_ATTENTION_DESC_INIT;
 * or, naming more fields, { .struct_size = sizeof(ft_attention_desc), .batch = ..., ... }.
 * (C++: designated initializers need C++20, and g++ -Wextra warns about the fields left out;
 * ft_attention_desc_init has neither problem.) */
#define FT_ATTENTION_DESC_INIT { .struct_size = sizeof(ft_attention_desc) }

/* The same for an existing desc: every byte zero, then struct_size set. */
static inline void ft_attention_desc_init(ft_attention_desc *d /* OUT */)
{
    unsigned char *p = (unsigned char *)d;
    for (size_t i = 0; i < sizeof *d; i++)
        p[i] = 0;
    d->struct_size = sizeof *d;
}

/* ---- context ----------------------------------------------------------------------------- */

/* Constructor. Opens the library with the tuning database at db_path (written by `flashtune
 * tune`), or with none when db_path is NULL (shipped winners and built-in defaults only).
 * The file is opened read-write when writable (compiled CUBINs are then stored in it), else
 * read-only; a missing file is an error, never created.
 * OUT: *ctx, the handle, or NULL on failure.
 * Returns FT_OK; FT_ERR_INVALID_ARGUMENT (ctx NULL, db_path empty); FT_ERR_DB (missing file,
 * not a flashtune database, corrupt, newer schema: the message names the file);
 * FT_ERR_OUT_OF_MEMORY. On failure ft_last_error(NULL) says why. Needs no GPU. */
FT_API ft_status ft_open(const char *db_path, ft_context **ctx);

/* Destructor. Merges the calls counted since the last ft_capture_flush into the capture file
 * (a failure is written to stderr: nothing else can report it), unloads every module, frees the
 * cached workspaces (after their streams finish), releases a primary context the library
 * retained, closes the database. NULL does nothing. No other call on ctx may be running or
 * follow. */
FT_API void ft_close(ft_context *ctx);

/* Capture: the problems an application runs, recorded so that `flashtune tune --from-capture
 * FILE` can tune exactly those. With a capture file, each attention call (not the reference
 * kernels') counts on its problem; ft_capture_flush and ft_close merge the counts into the file,
 * one line a problem (its workload as `flashtune db export` writes it, the head dims padded as
 * the lookup pads them, deterministic=1 for a
 * repeatable backward, calls=N, served=tuned|nearest|default: what chose its kernel), adding to
 * the counts already there under a lock, so several processes may share a file. ft_open takes
 * $FLASHTUNE_CAPTURE when set.
 * ft_capture_to: the context's capture file from now on (NULL or "": none; counting stops);
 * calls counted and not yet flushed go to it at the next flush (flush first to send them to the
 * current one). Not while another call on ctx runs (they read it). Returns FT_OK;
 * FT_ERR_INVALID_ARGUMENT (ctx NULL, a path too long).
 * ft_capture_flush: merges the counts since the last flush into the file. Returns FT_OK;
 * FT_ERR_INVALID_ARGUMENT (ctx NULL, no capture file); FT_ERR_IO (the file cannot be read, is
 * not a capture file, or cannot be written: the message names it; the counts are kept for the
 * next flush). Needs no GPU. */
FT_API ft_status ft_capture_to(ft_context *ctx, const char *path);
FT_API ft_status ft_capture_flush(ft_context *ctx);

/* The message of the last call on ctx that failed in the calling thread ("" when none); with
 * ctx NULL, that of the last failed ft_open in this thread. The string belongs to the library
 * and stays valid until the calling thread's next call on ctx. Never NULL. */
FT_API const char *ft_last_error(const ft_context *ctx);

/* "FT_ERR_DB: database error"-style static text for a status; never NULL. */
FT_API const char *ft_status_str(ft_status status);

/* The library's version, "0.2.0" (FT_VERSION_* at build time); a static string. */
FT_API const char *ft_version(void);

/* ft_attention_desc as this library was compiled: each field as "name:offset:size" (bytes),
 * separated by single spaces, in the struct's order; a static string. A binding that mirrors
 * the struct (the Python package does) checks its mirror against it when it loads the library. */
FT_API const char *ft_attention_desc_layout(void);

/* ---- attention --------------------------------------------------------------------------- */

/* O = softmax(scale * Q K^T [mask]) V, and lse = logsumexp of each scaled score row (the
 * backward needs it; +inf for a row that sees no key, whose O is 0). q, k, v: inputs; o, lse: outputs written in full. stream: a CUstream
 * (NULL: the legacy default stream). Asynchronous: returns once the kernel is launched.
 * A decode shape (at most 16 query rows in f16/bf16) splits the keys over blocks and keeps their
 * partial results in the workspace the library keeps per CUDA context and stream (see
 * ft_attention_backward), grown on its first such call.
 * Returns FT_OK; FT_ERR_INVALID_ARGUMENT (ctx, d or a pointer NULL, a size < 1, a dtype or
 * causal, causal_align, window or window_left/right value out of range, window_right other than 0
 * or -1 with causal 1, seqlen_q + seqlen_k >= 2^31 with a mask, a struct_size out of range, a
 * non-finite scale, strides that are negative, overlap, or leave rows shorter than the head
 * dim); FT_ERR_UNSUPPORTED (head dim, f16/bf16 alignment, heads > 65535, a struct_size larger
 * than the library's with fields it does not know set); FT_ERR_NO_DEVICE; FT_ERR_COMPILE; FT_ERR_CUDA; FT_ERR_OUT_OF_MEMORY. */
FT_API ft_status ft_attention_forward(ft_context *ctx, const ft_attention_desc *d, const void *q,
                                      const void *k, const void *v, void *o, void *lse, void *stream);

/* Gradients dQ, dK, dV of the forward above, given its inputs, its o and lse, and dout = dL/dO
 * (laid out with o_stride). dq, dk, dv are written in full (q_stride, k_stride, v_stride), and
 * may share no memory with the inputs (dq may be written before q, o and dout are read).
 * The library uses a device workspace (delta, the fp32/fp64 dQ accumulator, and with few K/V
 * heads the fp32 partial dK and dV of the blocks that share a group) that it keeps
 * per CUDA context and stream and grows when needed; ft_attention_backward_ws takes one from
 * the caller instead. Returns as ft_attention_forward; lse NULL is FT_ERR_INVALID_ARGUMENT. */
FT_API ft_status ft_attention_backward(ft_context *ctx, const ft_attention_desc *d, const void *q,
                                       const void *k, const void *v, const void *o, const void *lse,
                                       const void *dout, void *dq, void *dk, void *dv, void *stream);

/* Bytes of device workspace ft_attention_backward_ws needs for d: enough for whichever kernel
 * the library picks. OUT: *bytes. Needs no GPU. Returns FT_OK or FT_ERR_INVALID_ARGUMENT /
 * FT_ERR_UNSUPPORTED as the backward would. */
FT_API ft_status ft_attention_backward_workspace_size(ft_context *ctx, const ft_attention_desc *d,
                                                      size_t *bytes /* OUT */);

/* ft_attention_backward with a caller-owned workspace: a device pointer, 256-byte aligned, of
 * at least ft_attention_backward_workspace_size bytes, not used by anything else until this
 * call's kernels finish on stream. The library neither keeps nor frees it. Also returns
 * FT_ERR_INVALID_ARGUMENT when workspace is NULL, misaligned or too small. */
FT_API ft_status ft_attention_backward_ws(ft_context *ctx, const ft_attention_desc *d, const void *q,
                                          const void *k, const void *v, const void *o, const void *lse,
                                          const void *dout, void *dq, void *dk, void *dv,
                                          void *workspace, size_t workspace_bytes, void *stream);

/* Bytes of device workspace ft_attention_forward_ws needs for d: what the kernel the library
 * picks for it on the current GPU keeps there (a forward that splits its keys over several blocks
 * keeps their partial sums; most kernels need none: 0). Checks d and its tensors' layouts as the
 * forward does, then picks, and on the first call for a problem loads or compiles, that kernel, so
 * it needs a current CUDA context as the forward does. OUT: *bytes (0 on failure). Returns FT_OK
 * or the forward's statuses. */
FT_API ft_status ft_attention_forward_workspace_size(ft_context *ctx, const ft_attention_desc *d,
                                                     size_t *bytes /* OUT */);

/* ft_attention_forward with a caller-owned workspace: a device pointer, 256-byte aligned, of at
 * least ft_attention_forward_workspace_size bytes (NULL when that is 0), not used by anything
 * else until this call's kernels finish on stream. Also returns FT_ERR_INVALID_ARGUMENT when the
 * workspace is too small or misaligned. */
FT_API ft_status ft_attention_forward_ws(ft_context *ctx, const ft_attention_desc *d, const void *q,
                                         const void *k, const void *v, void *o, void *lse, void *workspace,
                                         size_t workspace_bytes, void *stream);

/* CUDA graphs. Calls may be captured into a CUDA graph (cuStreamBeginCapture, torch.cuda.graph):
 * once a problem has run once outside the capture (its kernel loaded), a call on a capturing
 * stream only queues its kernels and stream-ordered memsets there. It never allocates, frees or
 * waits: the _ws calls take the caller's workspace; the others use the library's workspace for
 * the stream and return FT_ERR_INVALID_ARGUMENT rather than grow it; and a variable-length batch's
 * prefix sums, read back and checked outside a capture, are trusted as given inside one. */

/* The same computations through flashtune's GPU reference kernels (simple, slow, precise:
 * what the tuner validates against), for checking results. Same arguments, layout rules and
 * statuses; any alignment is accepted. The backward uses the cached workspace as above. */
FT_API ft_status ft_attention_forward_reference(ft_context *ctx, const ft_attention_desc *d, const void *q,
                                                const void *k, const void *v, void *o, void *lse,
                                                void *stream);
FT_API ft_status ft_attention_backward_reference(ft_context *ctx, const ft_attention_desc *d, const void *q,
                                                 const void *k, const void *v, const void *o,
                                                 const void *lse, const void *dout, void *dq, void *dk,
                                                 void *dv, void *stream);

/* Which kernel the forward (backward = 0) or backward (1) of d runs on the current GPU, and
 * why, as one line of text into buf (len bytes, always NUL-terminated when len > 0): the
 * family and every parameter, the rule that picked it ("database exact", "database nearest
 * (tuned at ...)", "shipped tuned table ...", "built-in default") and, once loaded, where its
 * CUBIN came from. Compiles nothing. Returns FT_OK; FT_ERR_INVALID_ARGUMENT (also buf NULL or
 * len 0, backward other than 0 or 1); FT_ERR_UNSUPPORTED; FT_ERR_NO_DEVICE; FT_ERR_CUDA; FT_ERR_DB. */
FT_API ft_status ft_describe_choice(ft_context *ctx, const ft_attention_desc *d, int backward, char *buf,
                                    size_t len);

#ifdef __cplusplus
}
#endif

#endif
