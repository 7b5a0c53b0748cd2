/* bench_kernels: times hand-picked configurations of the generated kernels on the GPU.
 * CUDA events around each launch, warm-up first, median of the repetitions (min kept too),
 * random inputs; FLOPs by the FlashAttention convention: forward 2*B*H*Nq*Nk*(D + Dv) (halved when
 * causal), backward 2.5x forward. Usage: bench_kernels [reps [family|all [features]]]: with a
 * family, only its rows run (for a profiler); with "features", only the rows that give heads_k or
 * a softcap (grouped-query attention beside its plain twin, the softcap beside none); with another
 * word, only the rows of that set (e.g. "order": bwd_wgmma's product orders). Only the rows that
 * run are compiled (an unknown set is an error). Prints one line per row; H reads H/Hk with grouped
 * K/V heads. FT_BENCH_L=typical (or zero, the default) gives the backward's rows a log-sum-exp of
 * real size instead of 0 (see main); FT_BENCH_FLUSH=1 writes 256 MB before each timed launch, as
 * bench/compare.py's timing does, so nothing of the launch's data is left in L2 (the tuner's sweep
 * writes twice the L2 likewise). 20 repetitions time the GPU before its clocks settle under load:
 * compare kernels within one run (notes/kernels.md, "Sustained load"), and confirm an order of a
 * few per cent at 1,500 with the pair timed A B B A (the gqasus set), as the power cap's
 * clock can reverse it: the grouped backward's persistent walk led by 5 % in a burst, and lost in
 * the sweep's sustained timing and in 1,500 calls A B B A (notes/tuning.md, section 19).
 * Launches go through the launch module, as the runtime's and the tuner's do. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ln_internal.h"

#define SKIP_CODE 77   /* no GPU: ctest's SKIP_RETURN_CODE */

typedef struct bench_row {
    const char *family;
    int dtype, head_dim, batch, heads, seqlen, causal;
    int block_m, block_n, warps, stages, dq_mode;
    int overlap, pingpong;   /* fwd_wgmma's schedule (OVERLAP, PINGPONG); 0 where left out */
    int head_dim_v;          /* 0: head_dim */
    int persistent;          /* PERSISTENT (fwd_wgmma, bwd_wgmma) */
    int heads_k;             /* K/V heads (grouped-query attention); 0: heads */
    float softcap;           /* 0, or the softcap (the kernel compiled with SOFTCAP 1) */
    int splits;              /* SPLITS where the family takes it; 0: its default */
    int dq_first, dk_ss, dv_early;   /* bwd_wgmma's product order (DQ_FIRST, DK_SS, DV_EARLY) */
    const char *set;         /* a named set of rows the third argument selects, or NULL */
    int wg_flags;            /* bwd_wgmma's: 1 L_EARLY, or'ed with 2 DQ_INIT store and 4 STAGGER; fwd_wgmma's: 8 MULTICAST,
                              * 16 P_SMEM */
    int tf32;                /* f32: 1 ALLOW_TF32 (one TF32 product, not three), or'ed with 2 SPLIT_SMEM (fwd_mma,
                              * bwd_mma), 4 SPLIT_QUERIES (bwd_mma), 8 DQ_BULK (bwd_wgmma_f32) and 16 BF16_PARTS
                              * (fwd_wgmma, bwd_wgmma_f32) */
} bench_row;

/* fwd_wgmma's float32 in bfloat16 parts (the "parts" set: BF16_PARTS, six 16-bit products) beside
 * the three TF32 products the H200's table ships at the float32 table's shapes (d128 B 4 H 16 N
 * 4096 and causal B 16 N 1024, d64 B 4 H 32 N 4096): tiles, stages, OVERLAP, PINGPONG, PERSISTENT,
 * then 16 for the parts or 0. */
#define PARTS_ROW(d, b, h, n, causal, bn, st, ov, pp, pe, parts)                                        \
    { "fwd_wgmma", 0, d, b, h, n, causal, 128, bn, 12, st, 0, ov, pp, 0, pe, 0, 0, 0, 0, 0, 0, "parts", 0, parts }

/* bwd_wgmma's product orders (the "order" set) against the default order, bf16, two consumers
 * beside a producer (one consumer at the end): the order flags as DQ_FIRST, DK_SS, DV_EARLY. */
#define ORDER(d, b, h, n, causal, bm, bn, w, st, dq, f, s, e)                                          \
    { "bwd_wgmma", 2, d, b, h, n, causal, bm, bn, w, st, dq, 0, 0, 0, 0, 0, 0, 0, f, s, e, "order", 0, 0 }

/* bwd_wgmma's persistent blocks (the "persist" set) beside one block a key tile, on the grid's
 * short and long lengths (B x N = 16384 tokens, compare.py's grid), bf16, the sweep's usual tiles:
 * head dim 64 with 128-row tiles, 128 with 64 rows; order flags as in ORDER, then PERSISTENT. */
#define PERSIST(d, b, h, n, causal, bm, f, e, ps)                                                       \
    { "bwd_wgmma", 2, d, b, h, n, causal, bm, 128, 12, 2, 0, 0, 0, 0, ps, 0, 0, 0, f, 0, e, "persist", 0, 0 }

/* The grouped-query backward at Llama 3 8B's shape (the "gqa" set: bf16, D 128, B 2, 32 query
 * heads, N 8192 and 4096, causal, the shipped product order): plain heads beside 8 K/V heads with
 * the group's query heads over 1, 2 or 4 blocks a key tile (SPLITS), one block a unit or
 * persistent. The runtime's rule (rt_group_splits) was set by these rows (bench/RESULTS.md,
 * 2026-11-28, sixth session). */
#define GQA(n, hk, splits, ps)                                                                         \
    { "bwd_wgmma", 2, 128, 2, 32, n, 1, 64, 128, 12, 2, 0, 0, 0, 0, ps, hk, 0, splits, 1, 0, 1, "gqa", 0, 0 }
/* The same at Llama 3 70B's grouping (bf16, D 128, B 1, 64 query heads over 8, N 8192 causal):
 * groups of eight over 1 to 8 blocks a key tile, one block a unit and persistent. */
#define GQA70(splits, ps)                                                                              \
    { "bwd_wgmma", 2, 128, 1, 64, 8192, 1, 64, 128, 12, 2, 0, 0, 0, 0, ps, 8, 0, splits, 1, 0, 1, "gqa", 0, 0 }
/* The grouped kind's winners (kinds.lua: one block a key tile, DQ_FIRST without DV_EARLY, split 2)
 * beside the same persistent, under sustained load (the "gqasus" set, for REPS 1500: each pair timed
 * A B B A), at 64/8 (B 1) and 32/8 (B 2), N 8192 causal: the sweep and a burst ordered them apart. */
#define GQAS(b, h, ps)                                                                                 \
    { "bwd_wgmma", 2, 128, b, h, 8192, 1, 64, 128, 12, 2, 0, 0, 0, 0, ps, 8, 0, 2, 1, 0, 0, "gqasus", 0, 0 }
#define GQAS_ABBA(b, h) GQAS(b, h, 0), GQAS(b, h, 1), GQAS(b, h, 1), GQAS(b, h, 0)

/* Head dims 192 over 128 (the "wide" set: bf16, B 4, H 16, N 4096, and causal B 16 N 1024): the
 * columns split (64 keys) beside the wide keys (128 keys split) in the orders that compile without
 * spills, one block a key tile and persistent. Flags as DQ_FIRST, DK_SS, DV_EARLY, PERSISTENT. */
#define WIDE(b, n, causal, bn, f, s, e, ps)                                                          \
    { "bwd_wgmma", 2, 192, b, 16, n, causal, 64, bn, 12, 2, 0, 0, 0, 128, ps, 0, 0, 0, f, s, e, "wide", 0, 0 }

/* L and delta as the products' starting values (the "early" set: bwd_wgmma's L_EARLY 0 and 1),
 * bf16, two consumers splitting 128 keys beside a producer, in the shipped orders: head dim 128 (64
 * rows, DQ_FIRST) at the persist set's shapes, one block a key tile and persistent; 64 (128 rows,
 * DQ_FIRST, DV_EARLY); 192 over 128 (the wide keys, DQ_FIRST, DK_SS). Flags as in WIDE. */
#define EARLY(d, dv, b, h, n, causal, bm, f, s, e, ps, le)                                             \
    { "bwd_wgmma", 2, d, b, h, n, causal, bm, 128, 12, 2, 0, 0, 0, dv, ps, 0, 0, 0, f, s, e, "early", le, 0 }
#define EARLY_PAIR(d, dv, b, h, n, causal, bm, f, s, e, ps)                                            \
    EARLY(d, dv, b, h, n, causal, bm, f, s, e, ps, 0), EARLY(d, dv, b, h, n, causal, bm, f, s, e, ps, 1)

/* Head dim 96 (the "d96" set: bf16, B 4, H 16, N 4096 and B 16 N 1024) beside a producer and with
 * the consumers alone, in the sweep's orders, one block a key tile and persistent: the second
 * consumer's 32 dQ columns (DQ_NARROW) against its 64. Flags as DQ_FIRST, DV_EARLY, PERSISTENT. */
#define D96(b, n, causal, w, f, e, ps)                                                                 \
    { "bwd_wgmma", 2, 96, b, 16, n, causal, 64, 128, w, 2, 0, 0, 0, 0, ps, 0, 0, 0, f, 0, e, "d96", 0, 0 }

/* 80-row query tiles at head dim 128 (the "e80" set: bf16, H 16, B x N = 16384 tokens and B 16 N
 * 1024; dQ transposed) beside the shipped 64-row tiles (DQ_FIRST), two consumers beside a
 * producer, two stages: 80 rows in the plain order and with DQ_FIRST. Flags as DQ_FIRST,
 * DV_EARLY, PERSISTENT. */
#define E80(b, n, causal, bm, f, e, ps)                                                                 \
    { "bwd_wgmma", 2, 128, b, 16, n, causal, bm, 128, 12, 2, 0, 0, 0, 0, ps, 0, 0, 0, f, 0, e, "e80", 0, 0 }
#define E80_TRIO(b, n, causal) E80(b, n, causal, 64, 1, 0, 0), E80(b, n, causal, 80, 0, 0, 0), E80(b, n, causal, 80, 1, 0, 0)

/* The forward's shipped tiles on the grid (the "fgrid" set: bf16, B x N = 16384 tokens; fwd_wgmma with
 * 128 keys, OVERLAP, two stages): head dim 128 on 128 rows (12 warps), 64 on 192 (16) or 128. Flags
 * as PINGPONG, PERSISTENT. */
#define FGRID(d, b, h, n, causal, bm, w, pp, ps)                                                        \
    { "fwd_wgmma", 2, d, b, h, n, causal, bm, 128, w, 2, 0, 1, pp, 0, ps, 0, 0, 0, 0, 0, 0, "fgrid", 0, 0 }

/* The forward's key tiles beyond powers of two (the "fkeys" set: bf16, fwd_wgmma beside a producer,
 * OVERLAP, two stages, one block a tile): each head dim pair's 128 keys (64 at 256 and 192/128)
 * beside wider or narrower tiles, at B x N = 16384 tokens (d128: 1 x 16384, 4 x 4096, 16 x 1024)
 * and B 4 N 4096 for the others. Flags as PINGPONG. */
#define FKEYS(d, dv, b, h, n, causal, bm, bn, w, pp)                                                   \
    { "fwd_wgmma", 2, d, b, h, n, causal, bm, bn, w, 2, 0, 1, pp, dv, 0, 0, 0, 0, 0, 0, 0, "fkeys", 0, 0 }
#define FKEYS_128(b, n, causal)                                                                        \
    FKEYS(128, 0, b, 16, n, causal, 128, 128, 12, 0), FKEYS(128, 0, b, 16, n, causal, 128, 144, 12, 0),    \
    FKEYS(128, 0, b, 16, n, causal, 128, 160, 12, 0), FKEYS(128, 0, b, 16, n, causal, 128, 176, 12, 0),    \
    FKEYS(128, 0, b, 16, n, causal, 128, 192, 12, 0)

/* A non-causal backward's key tiles walking their query tiles from staggered places (the "stagger"
 * set: bwd_wgmma's STAGGER 0 and 1, each with dQ's first share added and stored: DQ_INIT), bf16,
 * two consumers beside a producer, two stages, at B x N = 16384 tokens: head dim 128 (64 rows,
 * DQ_FIRST), 64 (H 32, 128 rows, DQ_FIRST and DV_EARLY); one block a key tile and persistent. */
#define STAG(d, b, h, n, bm, e, ps, init, sg)                                                          \
    { "bwd_wgmma", 2, d, b, h, n, 0, bm, 128, 12, 2, 0, 0, 0, 0, ps, 0, 0, 0, 1, 0, e, "stagger", 2 * (init) + 4 * (sg), 0 }
#define STAG4(d, b, h, n, bm, e, ps)                                                                   \
    STAG(d, b, h, n, bm, e, ps, 0, 0), STAG(d, b, h, n, bm, e, ps, 0, 1), STAG(d, b, h, n, bm, e, ps, 1, 0),     \
    STAG(d, b, h, n, bm, e, ps, 1, 1)

/* The forward at head dim 128 non-causal, where FA4's 128 x 128 tile with its two consumers taking
 * turns ran 8-10 % ahead of the H200's winner (192 keys, no turns) in compare.py (the "fturns" set:
 * bf16, fwd_wgmma, 12 warps, OVERLAP, two stages, B x N = 16384 tokens at N 4096, 8192 and 16384):
 * 128 keys with and without turns, one block a tile and persistent, beside 176 and 192 keys without
 * turns. Time it with FT_BENCH_FLUSH=1 too, as compare.py flushes L2 (notes/kernels.md). */
#define FTURNS(b, n, bn, pp, ps)                                                                       \
    { "fwd_wgmma", 2, 128, b, 16, n, 0, 128, bn, 12, 2, 0, 1, pp, 0, ps, 0, 0, 0, 0, 0, 0, "fturns", 0, 0 }
#define FTURNS_SET(b, n)                                                                               \
    FTURNS(b, n, 128, 0, 0), FTURNS(b, n, 128, 1, 0), FTURNS(b, n, 128, 0, 1), FTURNS(b, n, 128, 1, 1),       \
    FTURNS(b, n, 176, 0, 0), FTURNS(b, n, 192, 0, 0)

/* Clusters of two blocks sharing each K/V tile's load (the "fmcast" set: fwd_wgmma's MULTICAST 0
 * and 1), bf16, head dim 128 non-causal, 12 warps, OVERLAP, two stages, one block a tile, at B x N
 * = 16384 tokens (N 4096, 8192, 16384): 128, 176 and 192 keys, beside the H200's persistent 128 x
 * 128 with turns (no clusters there). */
#define FMCAST(d, b, h, n, bn, st, pp, ps, mc)                                                         \
    { "fwd_wgmma", 2, d, b, h, n, 0, 128, bn, 12, st, 0, 1, pp, 0, ps, 0, 0, 0, 0, 0, 0, "fmcast", 8 * (mc), 0 }
#define FMCAST_SET(b, n)                                                                               \
    FMCAST(128, b, 16, n, 128, 2, 1, 1, 0), FMCAST(128, b, 16, n, 128, 2, 0, 0, 0),                         \
    FMCAST(128, b, 16, n, 128, 2, 0, 0, 1), FMCAST(128, b, 16, n, 176, 2, 0, 0, 0),                         \
    FMCAST(128, b, 16, n, 176, 2, 0, 0, 1), FMCAST(128, b, 16, n, 192, 2, 0, 0, 0),                         \
    FMCAST(128, b, 16, n, 192, 2, 0, 0, 1)
/* ... and with a third stage at 128 keys (one more tile in flight to cover the pair's coupling),
 * and at head dim 64 (H 32), where a tile's loads weigh twice as much against its products. */
#define FMCAST_MORE(b, n)                                                                              \
    FMCAST(128, b, 16, n, 128, 3, 0, 0, 0), FMCAST(128, b, 16, n, 128, 3, 0, 0, 1),                         \
    FMCAST(64, b, 32, n, 128, 2, 0, 0, 0), FMCAST(64, b, 32, n, 128, 2, 0, 0, 1)

/* P from shared memory (the "fpsmem" set: fwd_wgmma's P_SMEM), bf16, 128 keys, OVERLAP, two
 * stages, a producer: three consumers (192 rows, which P's registers refuse at head dims 96 and
 * 128), with and without turns and persistent blocks, beside the H200's winners (128 x 128, two
 * consumers, persistent) and the same tiles with P in registers; B x N = 16384 tokens. */
#define FPSMEM(d, b, h, n, causal, bm, pp, ps, psm)                                                    \
    { "fwd_wgmma", 2, d, b, h, n, causal, bm, 128, (bm) / 16 + 4, 2, 0, 1, pp, 0, ps, 0, 0, 0, 0, 0, 0, "fpsmem", \
      16 * (psm), 0 }
#define FPSMEM_SET(d, b, h, n, causal)                                                                 \
    FPSMEM(d, b, h, n, causal, 128, 0, 1, 0), FPSMEM(d, b, h, n, causal, 128, 0, 1, 1),                       \
    FPSMEM(d, b, h, n, causal, 192, 1, 0, 1), FPSMEM(d, b, h, n, causal, 192, 1, 1, 1),                       \
    FPSMEM(d, b, h, n, causal, 192, 0, 1, 1)

/* Head dim 96 in narrow panels (the "fd96" set: fwd_wgmma's 64-byte rows at head dim 96 beside a
 * producer), bf16, OVERLAP, two stages: the H200's winners (128 x 128 persistent; three consumers
 * with P_SMEM, turns or persistent) beside FlashAttention-4's 192 x 144 with P_SMEM, turns or
 * persistent; B 4 N 4096 causal and not, B 1 N 16384. Run beside main's tree (dev/gpu/bench-trees.sh)
 * to see what the layout alone changes at the shared shapes. */
#define FD96(b, n, causal, bm, bn, pp, ps, psm)                                                        \
    { "fwd_wgmma", 2, 96, b, 16, n, causal, bm, bn, (bm) / 16 + 4, 2, 0, 1, pp, 0, ps, 0, 0, 0, 0, 0, 0, "fd96", \
      16 * (psm), 0 }
#define FD96_SET(b, n, causal)                                                                          \
    FD96(b, n, causal, 128, 128, 0, 1, 0), FD96(b, n, causal, 192, 128, 1, 0, 1), FD96(b, n, causal, 192, 128, 0, 1, 1), \
    FD96(b, n, causal, 192, 144, 1, 0, 1), FD96(b, n, causal, 192, 144, 0, 1, 1)

/* The float32 forward with TF32 allowed (the "tf32fwd" set: fwd_wgmma, one product, H 16, a
 * producer), where P V goes into O directly and so wider key tiles fit one stage at head dim 128:
 * the H200's winners before that (128 x 32 in two stages; causal three, persistent) beside 64 and
 * 96 keys in one stage, 192 rows, OVERLAP and PINGPONG; head dim 128 B 2 N 4096 and causal B 4 N
 * 4096, head dim 64 causal B 4 N 2048. */
#define TF32FWD(d, b, n, causal, bm, bn, st, ov, pp, ps)                                              \
    { "fwd_wgmma", 0, d, b, 16, n, causal, bm, bn, (bm) / 16 + 4, st, 0, ov, pp, 0, ps, 0, 0, 0, 0, 0, 0,          \
      "tf32fwd", 0, 1 }
#define TF32FWD_SET                                                                                     \
    TF32FWD(128, 2, 4096, 0, 128, 32, 2, 0, 0, 0), TF32FWD(128, 2, 4096, 0, 128, 32, 2, 1, 0, 0),          \
    TF32FWD(128, 2, 4096, 0, 128, 32, 2, 0, 1, 0), TF32FWD(128, 2, 4096, 0, 128, 32, 2, 1, 1, 0),          \
    TF32FWD(128, 2, 4096, 0, 128, 64, 1, 0, 0, 0), TF32FWD(128, 2, 4096, 0, 128, 64, 1, 1, 0, 0),          \
    TF32FWD(128, 2, 4096, 0, 128, 64, 1, 0, 1, 0), TF32FWD(128, 2, 4096, 0, 128, 64, 1, 1, 1, 0),          \
    TF32FWD(128, 2, 4096, 0, 128, 96, 1, 0, 0, 0), TF32FWD(128, 2, 4096, 0, 128, 96, 1, 0, 1, 0),          \
    TF32FWD(128, 2, 4096, 0, 192, 32, 2, 0, 0, 0), TF32FWD(128, 2, 4096, 0, 192, 32, 2, 1, 1, 0),          \
    TF32FWD(128, 4, 4096, 1, 128, 32, 3, 0, 0, 1), TF32FWD(128, 4, 4096, 1, 128, 32, 2, 1, 1, 0),          \
    TF32FWD(128, 4, 4096, 1, 128, 64, 1, 0, 1, 0), TF32FWD(128, 4, 4096, 1, 128, 64, 1, 1, 1, 0),          \
    TF32FWD(64, 4, 2048, 1, 128, 32, 2, 1, 0, 0), TF32FWD(64, 4, 2048, 1, 128, 32, 2, 1, 1, 0),            \
    TF32FWD(64, 4, 2048, 1, 128, 64, 2, 1, 0, 0), TF32FWD(64, 4, 2048, 1, 128, 96, 2, 1, 1, 0),            \
    TF32FWD(64, 4, 2048, 1, 128, 128, 2, 1, 0, 0), TF32FWD(64, 4, 2048, 1, 128, 128, 2, 1, 1, 0)

#define DV(r) ((r)->head_dim_v ? (r)->head_dim_v : (r)->head_dim)

static const bench_row rows[] = {
    PERSIST(64, 32, 32, 512, 0, 128, 1, 1, 0), PERSIST(64, 32, 32, 512, 0, 128, 1, 1, 1),
    PERSIST(64, 16, 32, 1024, 1, 128, 1, 1, 0), PERSIST(64, 16, 32, 1024, 1, 128, 1, 1, 1),
    PERSIST(64, 4, 32, 4096, 0, 128, 1, 1, 0), PERSIST(64, 4, 32, 4096, 0, 128, 1, 1, 1),
    PERSIST(64, 4, 32, 4096, 1, 128, 1, 1, 0), PERSIST(64, 4, 32, 4096, 1, 128, 1, 1, 1),
    PERSIST(128, 32, 16, 512, 0, 64, 1, 0, 0), PERSIST(128, 32, 16, 512, 0, 64, 1, 0, 1),
    PERSIST(128, 16, 16, 1024, 1, 64, 1, 1, 0), PERSIST(128, 16, 16, 1024, 1, 64, 1, 1, 1),
    PERSIST(128, 4, 16, 4096, 0, 64, 1, 0, 0), PERSIST(128, 4, 16, 4096, 0, 64, 1, 0, 1),
    PERSIST(128, 4, 16, 4096, 1, 64, 1, 1, 0), PERSIST(128, 4, 16, 4096, 1, 64, 1, 1, 1),
    PERSIST(128, 1, 16, 16384, 1, 64, 1, 1, 0), PERSIST(128, 1, 16, 16384, 1, 64, 1, 1, 1),
    EARLY_PAIR(128, 0, 16, 16, 1024, 1, 64, 1, 0, 0, 1), EARLY_PAIR(128, 0, 16, 16, 1024, 1, 64, 1, 0, 0, 0),
    EARLY_PAIR(128, 0, 32, 16, 512, 1, 64, 1, 0, 0, 1), EARLY_PAIR(128, 0, 4, 16, 4096, 1, 64, 1, 0, 0, 1),
    EARLY_PAIR(128, 0, 4, 16, 4096, 0, 64, 1, 0, 0, 0), EARLY_PAIR(128, 0, 1, 16, 16384, 0, 64, 1, 0, 0, 0),
    EARLY_PAIR(128, 0, 1, 16, 16384, 1, 64, 1, 0, 0, 1), EARLY_PAIR(64, 0, 16, 32, 1024, 1, 128, 1, 0, 1, 1),
    EARLY_PAIR(64, 0, 4, 32, 4096, 0, 128, 1, 0, 1, 0), EARLY_PAIR(192, 128, 4, 16, 4096, 1, 64, 1, 1, 0, 0),
    EARLY_PAIR(192, 128, 16, 16, 1024, 1, 64, 1, 1, 0, 1),
    GQA(8192, 32, 0, 0), GQA(8192, 32, 0, 1), GQA(8192, 8, 1, 0), GQA(8192, 8, 1, 1), GQA(8192, 8, 2, 0),
    GQA(8192, 8, 2, 1), GQA(8192, 8, 4, 0), GQA(4096, 32, 0, 0), GQA(4096, 8, 1, 0), GQA(4096, 8, 2, 0),
    GQAS_ABBA(1, 64), GQAS_ABBA(2, 32),
    GQA(4096, 8, 4, 0), GQA70(1, 0), GQA70(1, 1), GQA70(2, 0), GQA70(2, 1), GQA70(4, 0), GQA70(4, 1), GQA70(8, 0),
    GQA70(8, 1),
    FGRID(128, 1, 16, 16384, 0, 128, 12, 0, 0), FGRID(128, 4, 16, 4096, 0, 128, 12, 1, 0),
    FGRID(128, 16, 16, 1024, 0, 128, 12, 0, 1), FGRID(128, 1, 16, 16384, 1, 128, 12, 0, 0),
    FGRID(128, 2, 16, 8192, 1, 128, 12, 1, 1), FGRID(128, 4, 16, 4096, 1, 128, 12, 0, 1),
    FGRID(128, 16, 16, 1024, 1, 128, 12, 1, 1), FGRID(64, 1, 32, 16384, 0, 192, 16, 1, 0),
    FGRID(64, 4, 32, 4096, 1, 192, 16, 1, 1), FGRID(64, 16, 32, 1024, 1, 128, 12, 1, 1),
    FGRID(128, 32, 16, 512, 1, 128, 12, 1, 1), FGRID(128, 32, 16, 512, 0, 128, 12, 1, 1),
    FGRID(64, 32, 32, 512, 1, 128, 12, 1, 1),
    FKEYS_128(1, 16384, 0), FKEYS_128(4, 4096, 0), FKEYS_128(16, 1024, 0), FKEYS_128(1, 16384, 1),
    FKEYS_128(4, 4096, 1),
    FKEYS(64, 0, 1, 32, 16384, 0, 192, 128, 16, 1), FKEYS(64, 0, 1, 32, 16384, 0, 192, 96, 16, 1),
    FKEYS(64, 0, 1, 32, 16384, 0, 192, 112, 16, 1), FKEYS(64, 0, 1, 32, 16384, 0, 128, 176, 12, 0),
    FKEYS(64, 0, 1, 32, 16384, 0, 128, 192, 12, 0), FKEYS(96, 0, 4, 16, 4096, 0, 128, 128, 12, 0),
    FKEYS(96, 0, 4, 16, 4096, 0, 128, 144, 12, 0), FKEYS(96, 0, 4, 16, 4096, 0, 128, 176, 12, 0),
    FKEYS(192, 128, 4, 16, 4096, 0, 128, 64, 12, 0), FKEYS(192, 128, 4, 16, 4096, 0, 128, 96, 12, 0),
    FKEYS(192, 128, 4, 16, 4096, 0, 128, 112, 12, 0), FKEYS(192, 128, 4, 16, 4096, 0, 128, 128, 12, 0),
    FKEYS(256, 0, 4, 16, 4096, 0, 128, 64, 12, 0), FKEYS(256, 0, 4, 16, 4096, 0, 128, 80, 12, 0),
    E80_TRIO(8, 2048, 0), E80_TRIO(4, 4096, 0), E80_TRIO(2, 8192, 0), E80_TRIO(1, 16384, 0), E80_TRIO(16, 1024, 0),
    FTURNS_SET(4, 4096), FTURNS_SET(2, 8192), FTURNS_SET(1, 16384),
    FMCAST_SET(4, 4096), FMCAST_SET(2, 8192), FMCAST_SET(1, 16384),
    FMCAST_MORE(4, 4096), FMCAST_MORE(1, 16384),
    FPSMEM_SET(96, 4, 16, 4096, 0), FPSMEM_SET(96, 4, 16, 4096, 1), FPSMEM_SET(128, 4, 16, 4096, 0),
    FPSMEM_SET(128, 1, 16, 16384, 0), FPSMEM_SET(128, 4, 16, 4096, 1), FPSMEM_SET(64, 4, 32, 4096, 0),
    FD96_SET(4, 4096, 0), FD96_SET(4, 4096, 1), FD96_SET(1, 16384, 0),
    FPSMEM(64, 4, 32, 4096, 0, 192, 1, 0, 0),
    STAG4(128, 1, 16, 16384, 64, 0, 0), STAG4(128, 1, 16, 16384, 64, 0, 1), STAG4(128, 2, 16, 8192, 64, 0, 0),
    STAG4(128, 4, 16, 4096, 64, 0, 0), STAG4(128, 16, 16, 1024, 64, 0, 0),
    STAG4(64, 1, 32, 16384, 128, 1, 0), STAG4(64, 1, 32, 16384, 128, 1, 1), STAG4(64, 4, 32, 4096, 128, 1, 0),
    E80_TRIO(4, 4096, 1), E80_TRIO(1, 16384, 1),
    D96(4, 4096, 0, 12, 0, 0, 0), D96(4, 4096, 0, 12, 1, 0, 0), D96(4, 4096, 0, 12, 1, 1, 1),
    D96(4, 4096, 0, 8, 0, 0, 0),  D96(4, 4096, 1, 12, 0, 0, 0), D96(4, 4096, 1, 12, 1, 0, 0),
    D96(4, 4096, 1, 12, 1, 1, 1), D96(4, 4096, 1, 8, 0, 0, 0),
    D96(16, 1024, 1, 12, 0, 0, 0), D96(16, 1024, 1, 12, 1, 1, 1),
    WIDE(4, 4096, 0, 64, 0, 0, 0, 0), WIDE(4, 4096, 0, 128, 1, 0, 1, 0), WIDE(4, 4096, 0, 128, 1, 1, 1, 0),
    WIDE(4, 4096, 0, 128, 1, 0, 1, 1), WIDE(4, 4096, 1, 64, 0, 0, 0, 0), WIDE(4, 4096, 1, 128, 1, 0, 1, 0),
    WIDE(4, 4096, 1, 128, 1, 1, 1, 0), WIDE(4, 4096, 1, 128, 1, 0, 1, 1), WIDE(16, 1024, 1, 64, 0, 0, 0, 0),
    WIDE(16, 1024, 1, 128, 1, 0, 1, 0), WIDE(16, 1024, 1, 128, 1, 0, 1, 1),
    ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0), ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 1),
    ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 1, 0, 0), ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 1, 0, 1),
    ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 1, 1, 1), ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 0, 1, 1),
    ORDER(128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0), ORDER(128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 1),
    ORDER(128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 1, 0, 0), ORDER(128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 1, 0, 1),
    ORDER(128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 1, 1, 1), ORDER(128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 0, 1, 1),
    ORDER(128, 1, 16, 16384, 0, 64, 128, 12, 2, 0, 0, 0, 0), ORDER(128, 1, 16, 16384, 0, 64, 128, 12, 2, 0, 1, 0, 1),
    ORDER(128, 1, 16, 16384, 0, 64, 128, 12, 2, 0, 1, 1, 1), ORDER(128, 1, 16, 16384, 1, 64, 128, 12, 2, 0, 0, 0, 0),
    ORDER(128, 1, 16, 16384, 1, 64, 128, 12, 2, 0, 1, 0, 1), ORDER(128, 1, 16, 16384, 1, 64, 128, 12, 2, 0, 1, 1, 1),
    ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 2, 0, 0, 0), ORDER(128, 4, 16, 4096, 0, 64, 128, 12, 2, 2, 1, 0, 1),
    ORDER(128, 32, 16, 512, 1, 64, 128, 12, 2, 0, 0, 0, 0), ORDER(128, 32, 16, 512, 1, 64, 128, 12, 2, 0, 1, 0, 1),
    ORDER(64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 0, 0, 0), ORDER(64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 0, 0, 1),
    ORDER(64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 0, 1), ORDER(64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 1),
    ORDER(64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 0, 0, 0), ORDER(64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 1, 0, 1),
    ORDER(64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 1), ORDER(64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 0, 0, 1),
    ORDER(96, 4, 21, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0), ORDER(96, 4, 21, 4096, 0, 64, 128, 12, 2, 0, 1, 0, 1),
    ORDER(96, 4, 21, 4096, 0, 64, 128, 12, 2, 0, 1, 1, 1), ORDER(64, 4, 32, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0),
    ORDER(64, 4, 32, 4096, 0, 64, 64, 8, 2, 0, 1, 0, 1),
    /* The issue-3 floor: bf16, D=128, N=4096, B*H=64, non-causal. */
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 128, 32, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 0, 128, 64, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 128, 4, 16, 4096, 1, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 64, 4, 32, 4096, 0, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 64, 4, 32, 4096, 0, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 64, 4, 32, 4096, 0, 64, 64, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 192, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* A producer warpgroup loading K and V (NUM_WARPS = BLOCK_M/16 + 4). */
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 64, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 16384, 0, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 16384, 0, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 16384, 0, 128, 128, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 128, 128, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 0, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 0, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* The producer's schedules: OVERLAP (softmax under the previous tile's P V), PINGPONG (the
     * two consumers take turns at the tensor cores), beside the rows above (both off). */
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 3, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 64, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 16384, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 16384, 0, 128, 128, 12, 3, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 16384, 0, 128, 128, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 128, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 64, 128, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Head dims 96, 192 over 128 and 256 (16384 tokens, 16 heads), and a grid too small for the
     * SMs (B 1, H 16, N 512: 64 blocks of 128 rows, 128 of 64). */
    { "fwd_wgmma", 2, 96, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 96, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 192, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 0, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 192, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 192, 4, 16, 4096, 0, 128, 64, 12, 2, 0, 1, 0, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 256, 4, 16, 4096, 0, 128, 64, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 256, 4, 16, 4096, 0, 128, 64, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 256, 4, 16, 4096, 1, 128, 64, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 256, 4, 16, 4096, 1, 128, 64, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_mma", 2, 256, 4, 16, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 512, 0, 128, 128, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 512, 0, 64, 128, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 512, 0, 64, 64, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* PERSISTENT: as many blocks as fit loop over the tiles, beside the rows above. */
    { "fwd_wgmma", 2, 128, 1, 16, 512, 0, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 512, 0, 64, 128, 8, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 0, 128, 128, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 0, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 16, 16, 1024, 0, 128, 128, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 16, 16, 1024, 0, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 1, 16, 16384, 0, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 32, 32, 512, 0, 64, 128, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 32, 32, 512, 0, 64, 128, 8, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 32, 32, 512, 0, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 128, 8, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 256, 4, 16, 4096, 0, 128, 64, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 256, 4, 16, 4096, 1, 128, 64, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 192, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 0, 128, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 96, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Causal tiles dealt in pairs and PINGPONG turns across tiles: causal D 128 one block a tile
     * (the shipped winners from N 2048 on) beside persistent with and without PINGPONG; the
     * non-causal short rows with PINGPONG. */
    { "fwd_wgmma", 2, 128, 16, 16, 1024, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 16, 16, 1024, 1, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 16, 16, 1024, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 8, 16, 2048, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 8, 16, 2048, 1, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 8, 16, 2048, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 16, 8192, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 16, 8192, 1, 128, 128, 12, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 16, 8192, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 16, 32, 1024, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 0, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 16, 16, 1024, 0, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Three consumers on 192 query rows (16 warps), taking turns, beside the two-consumer rows above. */
    { "fwd_wgmma", 2, 64, 16, 32, 1024, 1, 192, 128, 16, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 16, 32, 1024, 1, 192, 128, 16, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 192, 128, 16, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 1, 192, 128, 16, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 32, 32, 512, 0, 192, 128, 16, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 32, 32, 512, 0, 192, 128, 16, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 192, 128, 16, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 192, 128, 16, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 192, 128, 16, 2, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 192, 64, 16, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 192, 64, 16, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_exact", 0, 128, 4, 16, 4096, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* f32 on tensor cores (the "tf32" set): fwd_mma's three TF32 products beside the CUDA-core
     * fwd_exact and one TF32 product, each warp splitting its fragments or the block each K/V tile
     * in shared memory (SPLIT_SMEM), at the float32 table's shapes (d64 causal B 4 H 16 N 2048,
     * d128 B 2 H 16 N 4096). */
    { "fwd_exact", 0, 64, 4, 16, 2048, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 128, 32, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 64, 32, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 1 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 2 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 2 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 128, 32, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 2 },
    { "fwd_mma", 0, 64, 4, 16, 2048, 1, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 3 },
    { "fwd_exact", 0, 128, 2, 16, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 128, 32, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 64, 32, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 1 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 128, 32, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 2 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 64, 64, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 2 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 128, 32, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 2 },
    { "fwd_mma", 0, 128, 2, 16, 4096, 0, 128, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 3 },
    /* ... and fwd_wgmma's (TF32 wgmma; 1: one product), a producer splitting K and writing V^T:
     * two consumers or one, one and two stages, OVERLAP, PINGPONG, PERSISTENT. */
    { "fwd_wgmma", 0, 64, 4, 16, 2048, 1, 128, 64, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 64, 4, 16, 2048, 1, 128, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 64, 4, 16, 2048, 1, 128, 64, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 64, 4, 16, 2048, 1, 128, 32, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 64, 4, 16, 2048, 1, 64, 64, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 64, 4, 16, 2048, 1, 128, 96, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 64, 4, 16, 2048, 1, 128, 64, 12, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 1 },
    { "fwd_wgmma", 0, 128, 2, 16, 4096, 0, 64, 32, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 128, 2, 16, 4096, 0, 64, 32, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 128, 2, 16, 4096, 0, 128, 32, 12, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 128, 2, 16, 4096, 0, 128, 32, 12, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 128, 2, 16, 4096, 0, 64, 64, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 128, 2, 16, 4096, 0, 64, 32, 8, 2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "fwd_wgmma", 0, 128, 2, 16, 4096, 0, 64, 32, 8, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 1 },
    /* fwd_wgmma's bfloat16 parts beside its shipped TF32 forms (the "parts" set: PARTS_ROW). */
    PARTS_ROW(128, 4, 16, 4096, 0, 32, 1, 0, 1, 0, 0),  PARTS_ROW(128, 4, 16, 4096, 0, 32, 1, 0, 1, 0, 16),
    PARTS_ROW(128, 4, 16, 4096, 0, 32, 2, 0, 1, 0, 16), PARTS_ROW(128, 4, 16, 4096, 0, 32, 2, 0, 0, 0, 16),
    PARTS_ROW(128, 4, 16, 4096, 0, 64, 1, 0, 0, 0, 16), PARTS_ROW(128, 4, 16, 4096, 0, 32, 2, 0, 1, 1, 16),
    PARTS_ROW(128, 4, 16, 4096, 1, 32, 1, 0, 1, 0, 0),  PARTS_ROW(128, 4, 16, 4096, 1, 32, 2, 0, 1, 0, 16),
    PARTS_ROW(128, 4, 16, 4096, 1, 64, 1, 0, 0, 0, 16), PARTS_ROW(128, 16, 16, 1024, 1, 32, 1, 0, 1, 1, 0),
    PARTS_ROW(128, 16, 16, 1024, 1, 32, 2, 0, 1, 1, 16), PARTS_ROW(128, 16, 16, 1024, 1, 32, 2, 0, 1, 0, 16),
    PARTS_ROW(64, 4, 32, 4096, 0, 64, 1, 0, 0, 0, 0),   PARTS_ROW(64, 4, 32, 4096, 0, 64, 2, 0, 1, 0, 16),
    PARTS_ROW(64, 4, 32, 4096, 0, 64, 2, 0, 0, 0, 16),  PARTS_ROW(64, 4, 32, 4096, 0, 64, 3, 0, 0, 0, 16),
    PARTS_ROW(64, 4, 32, 4096, 0, 32, 2, 1, 1, 0, 16),  PARTS_ROW(64, 4, 32, 4096, 1, 64, 2, 0, 0, 0, 0),
    PARTS_ROW(64, 4, 32, 4096, 1, 64, 2, 0, 1, 0, 16),  PARTS_ROW(64, 4, 32, 4096, 1, 32, 2, 1, 1, 1, 16),
    /* ... and bwd_mma's (three TF32 products; 1: one) beside the CUDA-core backward, atomic and
     * separate dQ, one to four warps a 16-key slab. */
    { "bwd_exact", 0, 64, 4, 16, 2048, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 32, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 32, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 32, 128, 8, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 64, 64, 8, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 32, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 1 },
    { "bwd_exact", 0, 128, 2, 16, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 32, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 16, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 32, 64, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 32, 64, 8, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 64, 64, 8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 32, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 1 },
    /* One TF32 product at head dim 128: the H200's winner (64 x 64, the queries split) and the
     * 128-row tiles its sums added in place let fit (thirtieth session). */
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 5 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 128, 64, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 1 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 128, 64, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tf32", 0, 3 },
    /* ... and a slab's two warps splitting the queries (the "fsplit" set: SPLIT_QUERIES 0 and 1,
     * three TF32 products, dQ by atomics) at the tiles the H200's f32 winners take. */
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 4 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 32, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 0, 32, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 4 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 1, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 0 },
    { "bwd_mma", 0, 128, 2, 16, 4096, 1, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 4 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 0 },
    { "bwd_mma", 0, 64, 4, 16, 2048, 1, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsplit", 0, 4 },
    /* ... and Q and dO split into TF32 parts once in shared memory (the "fsmem" set: SPLIT_SMEM 0
     * and 1 in pairs, at one stage where the planes fit; 4: SPLIT_QUERIES too, 1: one product). */
#define FSMEM(d, b, h, n, causal, bm, bn, w, st, flags)                                                 \
    { "bwd_mma", 0, d, b, h, n, causal, bm, bn, w, st, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsmem", 0, flags }, \
    { "bwd_mma", 0, d, b, h, n, causal, bm, bn, w, st, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fsmem", 0, (flags) | 2 }
    FSMEM(128, 2, 16, 4096, 0, 64, 64, 8, 1, 4),
    FSMEM(128, 2, 16, 4096, 1, 64, 64, 8, 1, 4),
    FSMEM(128, 2, 16, 4096, 0, 64, 64, 8, 1, 0),
    FSMEM(128, 2, 16, 4096, 0, 32, 64, 8, 1, 0),
    FSMEM(128, 2, 16, 4096, 0, 64, 64, 8, 1, 5),
    FSMEM(64, 4, 16, 2048, 1, 64, 128, 8, 1, 0),
    FSMEM(64, 4, 16, 2048, 1, 64, 64, 4, 1, 0),
    FSMEM(64, 4, 16, 2048, 1, 64, 64, 8, 2, 4),
    FSMEM(64, 4, 16, 2048, 0, 64, 128, 8, 2, 0),
#undef FSMEM
    /* The float32 backward on Hopper's TF32 warpgroup tensor cores beside bwd_mma's forms that the
     * H200 ships at head dim 64 (the "fhop" set; tf32 1: one product, 8: DQ_BULK). */
#define FHOP(b, n, causal)                                                                                        \
    { "bwd_mma", 0, 64, b, 16, n, causal, 64, 128, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 2 },          \
    { "bwd_wgmma_f32", 0, 64, b, 16, n, causal, 32, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 0 },     \
    { "bwd_wgmma_f32", 0, 64, b, 16, n, causal, 32, 64, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 0 },     \
    { "bwd_mma", 0, 64, b, 16, n, causal, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 1 },          \
    { "bwd_wgmma_f32", 0, 64, b, 16, n, causal, 64, 64, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 1 },     \
    { "bwd_wgmma_f32", 0, 64, b, 16, n, causal, 32, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 1 },     \
    { "bwd_wgmma_f32", 0, 64, b, 16, n, causal, 32, 64, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 8 },     \
    { "bwd_wgmma_f32", 0, 64, b, 16, n, causal, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 1 },     \
    { "bwd_wgmma_f32", 0, 64, b, 16, n, causal, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop", 0, 9 }
    FHOP(4, 2048, 1),
    FHOP(2, 4096, 0),
    FHOP(1, 16384, 1),
#undef FHOP
    /* ... and at head dim 128 with one TF32 product, two consumers (the "fhop128" set), beside the
     * H200's bwd_mma winners (64 x 64, the queries split; two stages, one under a mask); one to
     * three slots, then one and two with dQ by bulk reductions (DQ_BULK; three do not fit). */
#define FHOP128(b, n, causal)                                                                                       \
    { "bwd_mma", 0, 128, b, 16, n, causal, 64, 64, 8, 2 - causal, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop128", 0, 5 }, \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop128", 0, 1 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop128", 0, 1 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop128", 0, 1 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop128", 0, 9 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fhop128", 0, 9 }
    FHOP128(4, 4096, 0),
    FHOP128(4, 4096, 1),
    FHOP128(16, 1024, 1),
    FHOP128(1, 16384, 0),
#undef FHOP128
    /* ... and in bfloat16 parts (the "bparts" set: BF16_PARTS, six 16-bit products, float32's
     * accuracy) beside the H200's three-product winner there (bwd_mma 64 x 64, the queries split,
     * Q and dO split once in shared memory): two slots with dQ by atomics into dq_accum or straight
     * into dQ, one slot with dQ by bulk reductions or straight into dQ. */
#define BPARTS(b, n, causal)                                                                                         \
    { "bwd_mma", 0, 128, b, 16, n, causal, 64, 64, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "bparts", 0, 6 },           \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "bparts", 0, 16 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "bparts", 0, 16 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "bparts", 0, 24 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "bparts", 0, 16 }
    BPARTS(4, 4096, 0),
    BPARTS(4, 4096, 1),
    BPARTS(16, 1024, 1),
    BPARTS(1, 16384, 0),
#undef BPARTS
    /* With TF32 allowed (the "tparts" set): two bfloat16 parts and three products beside the
     * H200's one-TF32-product winner there (32 x 64, 12 warps, one slot, dQ direct): one to three
     * slots with dQ direct, two with bulk reductions. */
#define TPARTS(b, n, causal)                                                                                         \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tparts", 0, 1 },    \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tparts", 0, 17 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tparts", 0, 17 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tparts", 0, 17 },   \
    { "bwd_wgmma_f32", 0, 128, b, 16, n, causal, 32, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "tparts", 0, 25 }
    TPARTS(4, 4096, 0),
    TPARTS(4, 4096, 1),
    TPARTS(16, 1024, 1),
    TPARTS(1, 16384, 0),
#undef TPARTS
    /* The float32 backward's dQ added into dq_accum and converted after (DQ_MODE atomic) against
     * added straight into dQ (direct: no zeroing of dq_accum, no convert pass; the "fdirect" set),
     * at the H200's shipped forms: three products at head dim 64 (32 x 64, two slots), one (64 x 64,
     * one slot), one at 128 (32 x 64, 12 warps, one slot); short causal lengths, where the passes
     * weigh most, and a long non-causal one. */
#define FDIRECT(d, b, h, n, causal, bm, w, st, tf32)                                                           \
    { "bwd_wgmma_f32", 0, d, b, h, n, causal, bm, 64, w, st, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fdirect", 0, tf32 }, \
    { "bwd_wgmma_f32", 0, d, b, h, n, causal, bm, 64, w, st, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fdirect", 0, tf32 }
    FDIRECT(64, 16, 32, 1024, 1, 32, 8, 2, 0),
    FDIRECT(64, 16, 32, 1024, 1, 64, 8, 1, 1),
    FDIRECT(64, 4, 32, 4096, 0, 32, 8, 2, 0),
    FDIRECT(64, 4, 32, 4096, 0, 64, 8, 1, 1),
    FDIRECT(128, 16, 16, 1024, 1, 32, 12, 1, 1),
    FDIRECT(128, 4, 16, 4096, 0, 32, 12, 1, 1),
#undef FDIRECT
    /* The float32 backward's shipped forms on the H200 at the float32 table's shapes, short causal
     * and long (three products at d64, one, the parts at d128 and with TF32 two parts; dq mode 3
     * direct): the "fdelta" set, for dev/gpu/bench-trees.sh to compare a change to the whole
     * backward (the pass before the kernel included) across trees; it measured delta made in the
     * kernel from O against the pass (notes/fp32.md, forty-third session). */
#define FDELTA(d, b, h, n, causal, bm, w, st, dq, tf32)                                                       \
    { "bwd_wgmma_f32", 0, d, b, h, n, causal, bm, 64, w, st, dq, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "fdelta", 0, tf32 }
    FDELTA(64, 16, 32, 1024, 1, 32, 8, 1, 3, 0),
    FDELTA(64, 4, 32, 4096, 0, 32, 8, 2, 0, 0),
    FDELTA(64, 16, 32, 1024, 1, 64, 8, 1, 3, 1),
    FDELTA(64, 4, 32, 4096, 0, 64, 8, 2, 3, 1),
    FDELTA(128, 16, 16, 1024, 1, 32, 12, 2, 3, 16),
    FDELTA(128, 4, 16, 4096, 0, 32, 12, 2, 3, 16),
    FDELTA(128, 16, 16, 1024, 1, 32, 12, 1, 3, 1),
    FDELTA(128, 4, 16, 4096, 0, 32, 12, 1, 3, 1),
    FDELTA(128, 16, 16, 1024, 1, 32, 12, 2, 3, 17),
    FDELTA(128, 4, 16, 4096, 0, 32, 12, 2, 3, 17),
#undef FDELTA
    { "bwd_mma", 2, 128, 4, 16, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_mma", 2, 128, 4, 16, 4096, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_mma", 2, 64, 4, 32, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_mma", 2, 128, 4, 16, 4096, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 1, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Short sequences, the backward's weakest points against the peers. */
    { "bwd_wgmma", 2, 128, 32, 16, 512, 0, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 32, 16, 512, 1, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 32, 16, 512, 1, 64, 64, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Deterministic dQ (DQ_MODE 2, ordered) beside the atomic rows above and at N = 16384. */
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 1, 64, 128, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 4, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 32, 16, 512, 0, 64, 128, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 0, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 0, 64, 128, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 1, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 1, 64, 128, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Head dim 96: one warpgroup, or two (dQ columns 0-63 and 64-95). */
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 0, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 0, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 0, 64, 128, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 1, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 0, 64, 128, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* A producer warpgroup (NUM_WARPS = BLOCK_N/16 + 4) beside the inline rows above. */
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* bench/train_step.py's attention: B 2 fills the GPU for fewer waves, so the order of the
     * causal key tiles shows most */
    { "bwd_wgmma", 2, 128, 2, 16, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 1, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 1, 16, 16384, 1, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 32, 16, 512, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 32, 16, 512, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 1, 64, 64, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 8, 3, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 1, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Head dim 64, 128 x 128 tiles: the two consumers split dQ's rows (FlashAttention-4's shape). */
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 1, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 1, 32, 16384, 0, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 1, 32, 16384, 1, 128, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 1, 32, 16384, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 1, 32, 16384, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Head dim 64 over 128 keys: the two consumers split dQ's keys. */
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 128, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 128, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 1, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 128, 8, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 1, 16, 16384, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 1, 16, 16384, 0, 64, 64, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 1, 16, 16384, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 96, 4, 21, 4096, 0, 64, 64, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_mma", 2, 96, 4, 21, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Head dim 256: two consumers split the columns of a 64-key tile (bwd_wgmma), against bwd_mma. */
    { "bwd_wgmma", 2, 256, 4, 8, 4096, 0, 64, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 256, 4, 8, 4096, 1, 64, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 256, 4, 8, 4096, 0, 64, 64, 12, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 256, 4, 8, 4096, 0, 64, 64, 12, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 256, 1, 8, 16384, 0, 64, 64, 12, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Head dim 192 over 128 (DeepSeek's MLA; the columns split, dQ in a tile of its own) at
     * compare.py's extra point (B 4, H 16, N 4096), one and two stages, ordered. */
    { "bwd_wgmma", 2, 192, 4, 16, 4096, 0, 64, 64, 12, 2, 0, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 192, 4, 16, 4096, 1, 64, 64, 12, 2, 0, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 192, 4, 16, 4096, 1, 64, 64, 12, 1, 0, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 192, 4, 16, 4096, 1, 64, 64, 12, 2, 2, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_mma", 2, 192, 4, 16, 4096, 1, 0, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_mma", 2, 256, 4, 8, 4096, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_mma", 2, 256, 4, 8, 4096, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_exact", 0, 128, 4, 16, 4096, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Short causal problems, where the diagonal tiles' mask weighs most: the sweep's winners. */
    { "fwd_wgmma", 2, 64, 32, 32, 512, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 32, 32, 512, 1, 64, 64, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 8, 32, 2048, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 32, 16, 512, 1, 128, 128, 12, 2, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 16, 32, 1024, 1, 64, 64, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 32, 32, 512, 1, 64, 64, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* Grouped-query attention: 32 query heads over 32 (plain), 8 and 1 K/V heads, D 128, N 4096,
     * B 2, with the shipped winners' tiles; the same FLOPs in each row of a triple. */
    { "fwd_wgmma", 2, 128, 2, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 8, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 32, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 32, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 8, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 2, 32, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, NULL, 0, 0 },
    /* One K/V head, its group's query heads shared over SPLITS blocks a key tile (2, 4, 8). */
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 4, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 4, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 8, 0, 2, 0, 0, 0, NULL, 0, 0 },
    /* The same deterministic (DQ_MODE ordered): plain heads, one K/V head unsplit and split. */
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 0, 64, 128, 12, 2, 2, 0, 0, 0, 0, 1, 0, 4, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 2, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 2, 32, 4096, 1, 64, 128, 12, 2, 2, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, NULL, 0, 0 },
    /* The softcap's cost: D 128 and D 64, N 4096, without (heads_k given, so that the "features"
     * filter keeps them) and with (SOFTCAP 1, c = 30). */
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 16, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 30, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 16, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 128, 4, 16, 4096, 1, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 30, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "fwd_wgmma", 2, 64, 4, 32, 4096, 0, 128, 128, 12, 2, 0, 1, 1, 0, 0, 0, 30, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 0, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 128, 4, 16, 4096, 1, 64, 128, 12, 2, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, NULL, 0, 0 },
    { "bwd_wgmma", 2, 64, 4, 32, 4096, 0, 64, 64, 8, 2, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 0, NULL, 0, 0 },
    TF32FWD_SET,
};
#define ROW_COUNT ((int)(sizeof rows / sizeof rows[0]))

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The row's problem, contiguous, default scale, top-left causal band when causal. */
static void row_problem(const bench_row *r, ln_problem *p)
{
    const int heads_k = r->heads_k ? r->heads_k : r->heads;
    *p = (ln_problem){ .dtype = r->dtype, .batch = r->batch, .heads = r->heads, .heads_k = heads_k,
                       .seqlen_q = r->seqlen, .seqlen_k = r->seqlen, .head_dim = r->head_dim, .head_dim_v = DV(r),
                       .softmax_scale = ln_softmax_scale(0, r->head_dim),
                       .softcap = r->softcap };
    ln_problem_mask(p, r->causal, 0, -1, -1);
    ln_contiguous_strides(r->heads, r->seqlen, r->head_dim, p->q_stride);
    ln_contiguous_strides(heads_k, r->seqlen, r->head_dim, p->k_stride);
    ln_contiguous_strides(heads_k, r->seqlen, DV(r), p->v_stride);
    ln_contiguous_strides(r->heads, r->seqlen, DV(r), p->o_stride);
}

/* Uniform values in [-1, 1) into every input, from a seed per row. */
static int upload_inputs(const cu_driver *cu, const ln_problem *p, int row)
{
    ln_extents x;
    ln_problem_extents(p, &x);
    size_t n = x.q > x.o ? x.q : x.o;
    n = n > x.k ? n : x.k;
    double *host = malloc(n * sizeof *host);
    if (!host)
        return -1;
    unsigned long long st = 0x1234567ULL + (unsigned long long)row;
    for (size_t j = 0; j < n; j++) {
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        host[j] = ((double)(st >> 11) / 9007199254740992.0) * 2 - 1;
    }
    int bad = ln_upload(cu, p->dtype, p->q, host, x.q, NULL) || ln_upload(cu, p->dtype, p->k, host, x.k, NULL) ||
              ln_upload(cu, p->dtype, p->v, host, x.v, NULL) || ln_upload(cu, p->dtype, p->dout, host, x.o, NULL);
    free(host);
    return bad ? -1 : 0;
}

/* Times reps launches of plan after 3 warm-up runs; with flush_bytes, that many bytes at flush
 * are written before each launch (outside the timing), so the launch finds none of its data in
 * L2. OUT: ms[reps], sorted. 0, or -1 (why). */
static int time_plan(const cu_driver *cu, const ln_plan *plan, const ln_problem *p, CUdeviceptr flush,
                     size_t flush_bytes, int reps, float *ms, char *why, size_t len)
{
    CUevent start, stop;
    char buf[256];
    CUresult rc;
    if ((rc = cu->EventCreate(&start, 0)) != CUDA_SUCCESS || (rc = cu->EventCreate(&stop, 0)) != CUDA_SUCCESS) {
        snprintf(why, len, "cuEventCreate: %s", cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    for (int w = 0; w < 3 && rc == CUDA_SUCCESS; w++)
        if ((rc = ln_launch(cu, plan, p, NULL)) == CUDA_SUCCESS)
            rc = cu->StreamSynchronize(NULL);
    for (int rep = 0; rep < reps && rc == CUDA_SUCCESS; rep++) {
        if (flush_bytes && (rc = cu->MemsetD8Async(flush, (unsigned char)rep, flush_bytes, NULL)) != CUDA_SUCCESS)
            break;
        cu->EventRecord(start, NULL);
        rc = ln_launch(cu, plan, p, NULL);
        cu->EventRecord(stop, NULL);
        cu->EventSynchronize(stop);
        cu->EventElapsedTime(&ms[rep], start, stop);
    }
    cu->EventDestroy(start);
    cu->EventDestroy(stop);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "launch or kernel failed: %s", cu_result_str(rc, buf, sizeof buf));
        return -1;
    }
    qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    if (reps < 1)
        reps = 1;
    const char *only = argc > 2 && strcmp(argv[2], "all") ? argv[2] : NULL;
    const int features_only = argc > 3 && !strcmp(argv[3], "features");   /* the rows that give heads_k or softcap */
    const char *set = argc > 3 && !features_only ? argv[3] : NULL;            /* the rows of that set */
    if (only && !gen_family_find(only)) {
        fprintf(stderr, "bench_kernels: family '%s' is not in the catalogue\n", only);
        return 2;
    }
    gen_config configs[ROW_COUNT];
    int chosen[ROW_COUNT], n_chosen = 0;   /* the rows that run, in order */
    for (int i = 0; i < ROW_COUNT; i++) {
        const bench_row *r = &rows[i];
        if ((only && strcmp(r->family, only) != 0) || (features_only && !r->heads_k && !r->softcap) ||
            (set && (!r->set || strcmp(r->set, set) != 0)))
            continue;
        chosen[n_chosen++] = i;
    }
    if (set && n_chosen == 0) {
        fprintf(stderr, "bench_kernels: no row of set '%s'%s%s (sets:", set, only ? " in family " : "",
                only ? only : "");
        for (int i = 0; i < ROW_COUNT; i++) {   /* each set named once, where it first appears */
            int seen = !rows[i].set;
            for (int j = 0; j < i && !seen; j++)
                seen = rows[j].set && !strcmp(rows[j].set, rows[i].set);
            if (!seen)
                fprintf(stderr, " %s", rows[i].set);
        }
        fprintf(stderr, ")\n");
        return 2;
    }
    const char *l_guess = getenv("FT_BENCH_L");   /* the backward's L: 0, or "typical" (see below) */
    if (l_guess && strcmp(l_guess, "zero") && strcmp(l_guess, "typical")) {
        fprintf(stderr, "bench_kernels: FT_BENCH_L=%s: 'zero' or 'typical'\n", l_guess);
        return 2;
    }
    const char *flush_env = getenv("FT_BENCH_FLUSH");   /* 1: L2 written over before each launch */
    if (flush_env && strcmp(flush_env, "0") && strcmp(flush_env, "1")) {
        fprintf(stderr, "bench_kernels: FT_BENCH_FLUSH=%s: 0 or 1\n", flush_env);
        return 2;
    }
    ln_session s;
    char why[1024];
    if (ln_session_open(&s, why, sizeof why) != 0) {
        printf("bench_kernels: no GPU: %s\n", why);
        return SKIP_CODE;
    }
    /* 256 MB, what triton's do_bench writes between launches (bench/compare.py times the peers
     * with it), several times any Hopper's L2. */
    CUdeviceptr flush = 0;
    size_t flush_bytes = flush_env && !strcmp(flush_env, "1") ? (size_t)256 << 20 : 0;
    if (flush_bytes && s.cu->MemAlloc(&flush, flush_bytes) != CUDA_SUCCESS) {
        printf("alloc failed: %zu bytes to flush L2 with\n", flush_bytes);
        return 1;
    }
    for (int j = 0; j < n_chosen; j++) {
        const int i = chosen[j];
        const bench_row *r = &rows[i];
        gen_config_init(&configs[i], gen_family_find(r->family));
        int *p = configs[i].p;
        p[GEN_DTYPE] = r->dtype;
        p[GEN_HEAD_DIM] = r->head_dim;
        p[GEN_HEAD_DIM_V] = DV(r);
        p[GEN_CAUSAL] = r->causal;
        p[GEN_CAUSAL_SKIP] = 1;
        if (r->block_m) {
            p[GEN_BLOCK_M] = r->block_m;
            p[GEN_BLOCK_N] = r->block_n;
            p[GEN_NUM_WARPS] = r->warps;
            p[GEN_NUM_STAGES] = r->stages;
        }
        if (configs[i].family->params & GEN_BIT(GEN_DQ_MODE))
            p[GEN_DQ_MODE] = r->dq_mode;
        if (configs[i].family->params & GEN_BIT(GEN_OVERLAP)) {
            p[GEN_OVERLAP] = r->overlap;
            p[GEN_PINGPONG] = r->pingpong;
        }
        if (configs[i].family->params & GEN_BIT(GEN_PERSISTENT))
            p[GEN_PERSISTENT] = r->persistent;
        if (configs[i].family->params & GEN_BIT(GEN_EVEN_M)) {
            p[GEN_EVEN_M] = r->seqlen % p[GEN_BLOCK_M] == 0;
            p[GEN_EVEN_N] = r->seqlen % p[GEN_BLOCK_N] == 0;
        }
        if (configs[i].family->params & GEN_BIT(GEN_SOFTCAP))
            p[GEN_SOFTCAP] = r->softcap != 0;
        if (r->splits && (configs[i].family->params & GEN_BIT(GEN_SPLITS)))
            p[GEN_SPLITS] = r->splits;
        if (configs[i].family->params & GEN_BIT(GEN_DQ_FIRST)) {
            p[GEN_DQ_FIRST] = r->dq_first;
            p[GEN_DK_SS] = r->dk_ss;
            p[GEN_DV_EARLY] = r->dv_early;
        }
        if (configs[i].family->params & GEN_BIT(GEN_STAGGER)) {
            p[GEN_L_EARLY] = r->wg_flags & 1;
            p[GEN_DQ_INIT] = (r->wg_flags & 2) != 0;   /* 1: store */
            p[GEN_STAGGER] = (r->wg_flags & 4) != 0;
        }
        if (configs[i].family->params & GEN_BIT(GEN_MULTICAST))
            p[GEN_MULTICAST] = (r->wg_flags & 8) != 0;
        if (configs[i].family->params & GEN_BIT(GEN_P_SMEM))
            p[GEN_P_SMEM] = (r->wg_flags & 16) != 0;
        if (configs[i].family->params & GEN_BIT(GEN_ALLOW_TF32))
            p[GEN_ALLOW_TF32] = r->tf32 & 1;
        if (configs[i].family->params & GEN_BIT(GEN_SPLIT_SMEM))
            p[GEN_SPLIT_SMEM] = (r->tf32 & 2) != 0;
        if (configs[i].family->params & GEN_BIT(GEN_SPLIT_QUERIES))
            p[GEN_SPLIT_QUERIES] = (r->tf32 & 4) != 0;
        if (configs[i].family->params & GEN_BIT(GEN_DQ_BULK))
            p[GEN_DQ_BULK] = (r->tf32 & 8) != 0;
        if (configs[i].family->params & GEN_BIT(GEN_BF16_PARTS))
            p[GEN_BF16_PARTS] = (r->tf32 & 16) != 0;
    }
    ln_build_cache cache = { 0 };
    gen_config chosen_configs[ROW_COUNT];
    ln_built *built[ROW_COUNT], *kernels[ROW_COUNT] = { 0 };
    for (int j = 0; j < n_chosen; j++)
        chosen_configs[j] = configs[chosen[j]];
    ln_build(&s, &cache, chosen_configs, built, n_chosen, 16);
    for (int j = 0; j < n_chosen; j++)
        kernels[chosen[j]] = built[j];
    printf("bench_kernels: %s (%s, %d SMs), median of %d reps after warm-up\n", s.name, s.arch, s.sm_count, reps);
    printf("%-10s %-5s %7s %3s %5s %6s %6s %4s %4s %3s %3s %3s %2s %2s %2s %3s %5s %9s %9s %9s %5s\n", "family",
           "dtype", "D", "B", "H", "N", "causal", "BM", "BN", "W", "S", "DQ", "OV", "PP", "PS", "cap", "regs", "med_ms",
           "min_ms", "TFLOP/s", "order");
    float *ms = malloc((size_t)reps * sizeof *ms);
    for (int j = 0; j < n_chosen && ms; j++) {
        const int i = chosen[j];
        const bench_row *r = &rows[i];
        const ln_built *k = kernels[i];
        if (!k || k->error[0]) {
            printf("%-10s skipped: %s\n", r->family, k ? k->error : "out of memory");
            continue;
        }
        const int *p = k->config.p;
        const int backward = k->config.family->backward;
        ln_problem pr;
        ln_plan plan;
        row_problem(r, &pr);
        if (ln_plan_make(&k->config, backward ? LN_BACKWARD : LN_FORWARD, r->seqlen, r->seqlen, &plan, why,
                         sizeof why) != 0 ||
            ln_plan_bind(s.cu, &plan, k->module, NULL) != CUDA_SUCCESS) {
            printf("%-10s failed: no plan: %s\n", r->family, why);
            continue;
        }
        if (ln_buffers_alloc(s.cu, &pr, why, sizeof why) != 0) {
            printf("alloc failed: %s\n", why);
            return 1;
        }
        pr.split_ws_bytes = ln_split_workspace_bytes(&plan, &pr);   /* a split plan's partials */
        if (pr.split_ws_bytes && s.cu->MemAlloc(&pr.split_ws, pr.split_ws_bytes) != CUDA_SUCCESS) {
            printf("alloc failed: %zu bytes of partial sums\n", pr.split_ws_bytes);
            return 1;
        }
        if (upload_inputs(s.cu, &pr, i) != 0) {
            printf("upload failed\n");
            return 1;
        }
        /* The backward needs a real O and L: one forward of the matching exact/mma family is not
         * at hand here, so lse is filled by a guess (timing only): 0, so P = exp(S scale) is near
         * 1; or with FT_BENCH_L=typical ln(seqlen_k) + 1/2, the log-sum-exp of seqlen_k scores of
         * unit variance, so P is near 1/seqlen_k as in a real backward (the values the tensor
         * cores see differ; whether the timings do is what it is for). */
        if (backward) {
            const size_t lse_rows = (size_t)pr.batch * pr.heads * pr.seqlen_q;
            if (l_guess && !strcmp(l_guess, "typical") && ln_acc_bytes(pr.dtype) == 4) {
                const float l = logf((float)r->seqlen) + 0.5f;
                unsigned bits;
                memcpy(&bits, &l, sizeof bits);
                s.cu->MemsetD32(pr.lse, bits, lse_rows);
            } else {
                s.cu->MemsetD8(pr.lse, 0, lse_rows * ln_acc_bytes(pr.dtype));
            }
        }
        const int timed = time_plan(s.cu, &plan, &pr, flush, flush_bytes, reps, ms, why, sizeof why);
        if (pr.split_ws)
            s.cu->MemFree(pr.split_ws);
        if (timed != 0) {
            printf("%-10s failed: %s\n", r->family, why);
            ln_buffers_free(s.cu, &pr);
            continue;
        }
        double flops = 2.0 * r->batch * r->heads * (double)r->seqlen * r->seqlen * (r->head_dim + DV(r));
        if (r->causal)
            flops /= 2;
        if (backward)
            flops *= 2.5;
        double med = ms[reps / 2];
        char heads[16];   /* H, or H/Hk with grouped K/V heads */
        if (pr.heads_k != pr.heads && plan.splits > 1)   /* and its group's heads over SPLITS blocks */
            snprintf(heads, sizeof heads, "%d/%dx%d", pr.heads, pr.heads_k, plan.splits);
        else if (pr.heads_k != pr.heads)
            snprintf(heads, sizeof heads, "%d/%d", pr.heads, pr.heads_k);
        else
            snprintf(heads, sizeof heads, "%d", pr.heads);
        printf("%-10s %-5s %3d/%-3d %3d %5s %6d %6d %4d %4d %3d %3d %3d %2d %2d %2d %3g %5d %9.4f %9.4f %9.1f"
               "   %d%d%d%s%s%s%s%s%s%s%s%s\n",
               r->family, gen_dtype_name(r->dtype), r->head_dim, DV(r), r->batch, heads, r->seqlen, r->causal,
               p[GEN_BLOCK_M], p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_NUM_STAGES], p[GEN_DQ_MODE], p[GEN_OVERLAP],
               p[GEN_PINGPONG], p[GEN_PERSISTENT], (double)r->softcap, k->binary.registers, med, ms[0],
               flops / (med * 1e-3) / 1e12, p[GEN_DQ_FIRST], p[GEN_DK_SS], p[GEN_DV_EARLY], p[GEN_L_EARLY] ? " L" : "",
               p[GEN_DQ_INIT] ? " store" : "", p[GEN_STAGGER] ? " staggered" : "", p[GEN_MULTICAST] ? " multicast" : "",
               p[GEN_SPLIT_QUERIES] ? " split-queries" : "", p[GEN_SPLIT_SMEM] ? " split-smem" : "",
               p[GEN_ALLOW_TF32] ? " tf32" : "", p[GEN_DQ_BULK] ? " dq-bulk" : "", p[GEN_P_SMEM] ? " p-smem" : "");
        ln_buffers_free(s.cu, &pr);
    }
    free(ms);
    if (flush)
        s.cu->MemFree(flush);
    ln_build_cache_free(&s, &cache);
    ln_session_close(&s);
    return 0;
}
