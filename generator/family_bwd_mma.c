/* The bwd_mma family: tensor-core backward for f16/bf16 (templates/bwd_mma.cu). The warp
 * layouts, shared-memory sizes and rules here mirror the template's traits block. */
#include <stdio.h>

#include "gen_family_internal.h"

/* 227 KiB, the most any supported GPU (sm_90) gives one block; per-arch limits come later. */
#define BWD_MMA_SMEM_MAX 232448

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* ft_bwd_dkdv: warps along the keys (KV_WARPS_N) and, past BLOCK_N/16 warps, a split of the
 * dK/dV columns (KV_DSPLIT). */
static int kv_warps_n(const int *p)
{
    return imin(p[GEN_NUM_WARPS], p[GEN_BLOCK_N] / 16);
}

/* ft_bwd_dq and the dQ step of ft_bwd_dkdv: warps along the queries (Q_WARPS_M). */
static int q_warps_m(const int *p)
{
    return imin(p[GEN_NUM_WARPS], p[GEN_BLOCK_M] / 16);
}

/* K and V tiles, NUM_STAGES x (Q, dO tiles, L and delta rows), and with DQ_MODE 0 the dS^T
 * tile (row stride BLOCK_M + 8); DKDV_SMEM_BYTES in the template. */
static size_t smem_dkdv(const int *p)
{
    const size_t bm = (size_t)p[GEN_BLOCK_M], bn = (size_t)p[GEN_BLOCK_N];
    const size_t d = (size_t)p[GEN_HEAD_DIM], dv = (size_t)p[GEN_HEAD_DIM_V];
    const size_t stage = bm * (d + dv) * 2 + bm * 4 * 2;
    const size_t ds = p[GEN_DQ_MODE] == 0 ? bn * (bm + 8) * 2 : 0;
    return bn * (d + dv) * 2 + (size_t)p[GEN_NUM_STAGES] * stage + ds;
}

/* Q and dO tiles and NUM_STAGES x (K, V tiles); at the end the same memory holds the fp32 dQ
 * tile (row stride HEAD_DIM + 8); DQ_SMEM_BYTES in the template. */
static size_t smem_dq(const int *p)
{
    const size_t bm = (size_t)p[GEN_BLOCK_M], bn = (size_t)p[GEN_BLOCK_N];
    const size_t d = (size_t)p[GEN_HEAD_DIM], dv = (size_t)p[GEN_HEAD_DIM_V];
    const size_t main_bytes = bm * (d + dv) * 2 + (size_t)p[GEN_NUM_STAGES] * bn * (d + dv) * 2;
    const size_t red_bytes = bm * (d + 8) * 4;
    return main_bytes > red_bytes ? main_bytes : red_bytes;
}

static size_t smem_none(const int *p)
{
    (void)p;
    return 0;
}

static int used_dq(const int *p)
{
    return p[GEN_DQ_MODE] == 1;
}

static int used_dq_convert(const int *p)
{
    return p[GEN_DQ_MODE] == 0;
}

/* Per-thread fp32 registers the kernels hold at their peak: ft_bwd_dkdv's dK and dV
 * accumulators, S^T (then P^T) and dP^T, the latter over DP_CHUNK queries at a time (as the
 * template derives it); ft_bwd_dq's dQ accumulators, S and dP. Fragments, addresses and indices
 * take about 90 more: with that margin, head dim 128 at 32 x 128 tiles is spill-free and at
 * 64 x 128 spills (ptxas, CUDA 13.0, sm_80 and sm_90). A block of NUM_WARPS*32 threads gets
 * at most 65536/threads registers each, 255 at most. Only what would obviously spill is
 * refused: near the limit ptxas may still spill a few bytes, which the compile report shows. */
static int check_registers(const int *p, char *why, size_t len)
{
    const int nw = p[GEN_NUM_WARPS], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V];
    const int kvn = kv_warps_n(p), dsplit = nw / kvn, kv_rows = bn / kvn;
    const int qm = q_warps_m(p), qn = nw / qm, q_rows = bm / qm;
    int cap = 65536 / (nw * 32);
    if (cap > 255)
        cap = 255;
    const int acc = kv_rows * (d + dv) / dsplit / 32, s_regs = kv_rows * bm / 32;
    const int dp_chunk = bm > 32 && bm % 32 == 0 && acc + 2 * s_regs > 176 ? 32 : bm;
    const int dkdv = acc + s_regs + kv_rows * dp_chunk / 32;
    const int dq = p[GEN_DQ_MODE] == 1 ? q_rows * d / 32 + 2 * q_rows * (bn / qn) / 32 : 0;
    const int need = (dkdv > dq ? dkdv : dq) + 90;
    if (need > cap) {
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d with HEAD_DIM=%d HEAD_DIM_V=%d: about %d "
                 "registers per thread would spill (at most %d for %d threads)",
                 bm, bn, nw, d, dv, need, cap, nw * 32);
        return -1;
    }
    return 0;
}

static int check_bwd_mma(const int *p, char *why, size_t len)
{
    const int nw = p[GEN_NUM_WARPS], bm = p[GEN_BLOCK_M], bn = p[GEN_BLOCK_N];
    const int d = p[GEN_HEAD_DIM], dv = p[GEN_HEAD_DIM_V];
    if (bm % 16 != 0) {
        snprintf(why, len, "BLOCK_M=%d is not a multiple of 16 (mma tiles)", bm);
        return -1;
    }
    if (bn % 16 != 0) {
        snprintf(why, len, "BLOCK_N=%d is not a multiple of 16 (mma tiles)", bn);
        return -1;
    }
    if (p[GEN_NUM_STAGES] < 1 || p[GEN_NUM_STAGES] > 3) {
        snprintf(why, len, "NUM_STAGES=%d is out of range for bwd_mma (1..3)", p[GEN_NUM_STAGES]);
        return -1;
    }
    if (d % 32 != 0 || dv % 32 != 0) {
        snprintf(why, len, "HEAD_DIM=%d, HEAD_DIM_V=%d: bwd_mma needs multiples of 32", d, dv);
        return -1;
    }
    const int kvn = kv_warps_n(p);
    if ((bn / 16) % kvn != 0 || nw % kvn != 0) {
        snprintf(why, len, "NUM_WARPS=%d must divide BLOCK_N/16=%d or be a multiple of it", nw, bn / 16);
        return -1;
    }
    const int dsplit = nw / kvn;
    if (d % (16 * dsplit) != 0 || dv % (16 * dsplit) != 0) {
        snprintf(why, len, "NUM_WARPS=%d > BLOCK_N/16=%d splits the head dims %d ways: HEAD_DIM=%d and "
                 "HEAD_DIM_V=%d must be multiples of %d", nw, bn / 16, dsplit, d, dv, 16 * dsplit);
        return -1;
    }
    const int qm = q_warps_m(p);
    if ((bm / 16) % qm != 0 || nw % qm != 0) {
        snprintf(why, len, "NUM_WARPS=%d must divide BLOCK_M/16=%d or be a multiple of it", nw, bm / 16);
        return -1;
    }
    const int qn = nw / qm;
    if (p[GEN_DQ_MODE] == 1 && bn % (16 * qn) != 0) {
        snprintf(why, len, "DQ_MODE=1 with NUM_WARPS=%d > BLOCK_M/16=%d splits each key tile %d ways: "
                 "BLOCK_N=%d must be a multiple of %d", nw, bm / 16, qn, bn, 16 * qn);
        return -1;
    }
    const size_t smem = p[GEN_DQ_MODE] == 1 && smem_dq(p) > smem_dkdv(p) ? smem_dq(p) : smem_dkdv(p);
    if (smem > BWD_MMA_SMEM_MAX) {
        snprintf(why, len, "BLOCK_M=%d BLOCK_N=%d NUM_STAGES=%d with HEAD_DIM=%d HEAD_DIM_V=%d needs %zu bytes "
                 "of shared memory (at most %d)", bm, bn, p[GEN_NUM_STAGES], d, dv, smem, BWD_MMA_SMEM_MAX);
        return -1;
    }
    return check_registers(p, why, len);
}

static const gen_entry bwd_mma_entries[] = {
    { "ft_bwd_preprocess", 0, smem_none, NULL },
    { "ft_bwd_dkdv", 1, smem_dkdv, NULL },
    { "ft_bwd_dq", 0, smem_dq, used_dq },
    { "ft_bwd_dq_convert", 0, smem_none, used_dq_convert },
};

const gen_family gen_family_bwd_mma = {
    .name = "bwd_mma",
    .file = "bwd_mma.cu",
    .backward = 1,
    .dtypes = (1u << 1) | (1u << 2),
    .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |
              GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_NUM_STAGES) | GEN_BIT(GEN_CAUSAL) |
              GEN_BIT(GEN_CAUSAL_SKIP) | GEN_BIT(GEN_EVEN_M) | GEN_BIT(GEN_EVEN_N) | GEN_BIT(GEN_DQ_MODE),
    /* 32 x 128 tiles, 8 warps, 2 stages: no spills for head dims 32-128 on sm_80 and sm_90 in
     * every CAUSAL/CAUSAL_SKIP/EVEN/DQ_MODE variant (ptxas, CUDA 13.0); BLOCK_M 64 spills a
     * few bytes at head dim 128. Head dim 256 needs BLOCK_N 64 (warp pairs split dK/dV). */
    .defaults = {
        [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 128, [GEN_HEAD_DIM_V] = 128,
        [GEN_BLOCK_M] = 32, [GEN_BLOCK_N] = 128, [GEN_NUM_WARPS] = 8, [GEN_NUM_STAGES] = 2,
        [GEN_CAUSAL] = 0, [GEN_CAUSAL_SKIP] = 1, [GEN_EVEN_M] = 0, [GEN_EVEN_N] = 0, [GEN_DQ_MODE] = 0,
    },
    .entries = bwd_mma_entries,
    .entry_count = 4,
    .check = check_bwd_mma,
};
