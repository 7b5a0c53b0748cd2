/* GPU correctness of every template family and dtype: random inputs (fresh per run), outputs
 * poisoned with NaN first, candidates compared with the GPU reference kernels and, at small
 * sizes, with the CPU double reference, which also pins the GPU reference itself. Then the
 * deterministic backward modes: bitwise the same dQ, dK, dV over 10 runs, and right.
 * Label "gpu": without a GPU it prints why and exits GPU_SKIP_CODE, which ctest shows as skipped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <fnmatch.h>

#include "ft_mask.h"
#include "gpu_harness.h"
#include "ref_attention.h"
#include "traits/ft_traits.h"

typedef struct attn_case {
    const char *name;
    int dtype;                 /* 0 f32, 1 f16, 2 bf16, 3 f64 */
    int head_dim, head_dim_v;
    int batch, heads, seqlen_q, seqlen_k;
    int causal, causal_skip, dq_mode, layout;
    /* Tiles for the forward and backward candidates; 0 keeps the family default (shrunk until
     * the configuration is valid for the head dims). */
    int fwd_block_m, fwd_block_n, fwd_warps, fwd_stages;
    int bwd_block_m, bwd_block_n, bwd_warps, bwd_stages;
    /* The rest of the mask (ft_mask.h); all 0 for none: bottom-right alignment of the diagonal,
     * and a local window of wl keys left and wr right of it (-1 unlimited) when window is 1. */
    int bottom_right, window, wl, wr;
} attn_case;

enum { F32 = 0, F16 = 1, BF16 = 2, F64 = 3 };
#define DEFAULT_TILES 0, 0, 0, 0, 0, 0, 0, 0
#define NO_MASK 0, 0, 0, 0               /* top-left causal or none, as `causal` says */
#define BR 1, 0, 0, 0                    /* bottom-right causal */
#define WIN(br, l, r) (br), 1, (l), (r)  /* window (left, right) keys, top-left or bottom-right */

static const attn_case cases[] = {
    /* name                         dtype hd  hdv  B  H   Nq    Nk  causal skip dq layout  fwd tiles      bwd tiles */
    { "bf16 N=1",                   BF16, 64, 64,  2, 3,    1,    1, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 N=17 causal",           BF16, 64, 64,  2, 3,   17,   17, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 N=128 even separate",   BF16, 128, 128, 2, 4, 128,  128, 0, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 N=1000 causal noskip",  BF16, 128, 128, 1, 3, 1000, 1000, 1, 0, 0, 1, DEFAULT_TILES, NO_MASK },
    { "bf16 N=4096 causal",         BF16, 64, 64,  1, 2, 4096, 4096, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 Nq<Nk causal padded",   BF16, 128, 128, 2, 2, 100,  300, 1, 1, 0, 2, DEFAULT_TILES, NO_MASK },
    { "bf16 Nq>Nk causal",          BF16, 64, 64,  2, 2,  300,   77, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 D=32",                  BF16, 32, 32,  2, 2,  200,  200, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK },
    { "bf16 D=96 causal",           BF16, 96, 96,  2, 2,  129,  129, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 D=256 causal",          BF16, 256, 256, 1, 2, 150,  150, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 Dv!=D",                 BF16, 64, 128, 2, 2,  130,   70, 0, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 tiles 64x32 1 stage",   BF16, 64, 64,  2, 2,  333,  333, 1, 1, 0, 0, 64, 32, 4, 1, 0, 0, 0, 0, NO_MASK },
    { "bf16 tiles 64x64 3 stages",  BF16, 128, 128, 1, 2, 777,  777, 0, 1, 0, 1, 64, 64, 4, 3, 0, 0, 0, 0, NO_MASK },
    { "f16 N=17 causal",            F16, 64, 64,   2, 3,   17,   17, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f16 N=1000",                 F16, 128, 128, 1, 3, 1000, 1000, 0, 1, 1, 1, DEFAULT_TILES, NO_MASK },
    { "f16 N=4096 causal",          F16, 128, 128, 1, 2, 4096, 4096, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f16 D=256",                  F16, 256, 256, 1, 2,  100,  100, 0, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "f16 Dv!=D causal",           F16, 128, 64,  2, 2,   90,  200, 1, 0, 0, 2, DEFAULT_TILES, NO_MASK },
    { "f32 N=1",                    F32, 64, 64,   2, 2,    1,    1, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f32 N=17 causal",            F32, 64, 64,   2, 3,   17,   17, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "f32 N=128",                  F32, 128, 128, 2, 2,  128,  128, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK },
    { "f32 N=1000 causal noskip",   F32, 128, 128, 1, 2, 1000, 1000, 1, 0, 1, 0, DEFAULT_TILES, NO_MASK },
    { "f32 N=4096 causal",          F32, 64, 64,   1, 1, 4096, 4096, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f32 Nq<Nk causal",           F32, 64, 64,   1, 2,   50,  170, 1, 1, 0, 2, DEFAULT_TILES, NO_MASK },
    { "f32 Nq>Nk causal",           F32, 64, 64,   1, 2,  170,   50, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "f32 D=32",                   F32, 32, 32,   2, 2,  100,  100, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f32 D=96 causal",            F32, 96, 96,   1, 2,  100,  100, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "f32 D=256",                  F32, 256, 256, 1, 2,  100,  100, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f32 Dv!=D",                  F32, 64, 128,  1, 2,   77,   99, 1, 1, 1, 1, DEFAULT_TILES, NO_MASK },
    { "f64 N=17 causal",            F64, 64, 64,   1, 2,   17,   17, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f64 N=128",                  F64, 128, 128, 1, 2,  128,  128, 0, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "f64 N=1000 causal",          F64, 64, 64,   1, 1, 1000, 1000, 1, 1, 0, 1, DEFAULT_TILES, NO_MASK },
    { "f64 Nq>Nk Dv!=D",            F64, 32, 64,   1, 2,  120,   40, 1, 0, 1, 0, DEFAULT_TILES, NO_MASK },
    { "f64 Nq<Nk D=96",             F64, 96, 96,   1, 1,   40,  120, 1, 1, 0, 2, DEFAULT_TILES, NO_MASK },
    /* Masks beyond top-left causal: bottom-right causal (rows above the diagonal's start see no
     * key when Nq > Nk), windows of either or both sides, with and without block skipping. */
    { "bf16 Nq<Nk causal BR",       BF16, 64, 64,  2, 2,  100,  300, 1, 1, 0, 0, DEFAULT_TILES, BR },
    { "bf16 Nq>Nk causal BR",       BF16, 128, 128, 1, 2, 300,   77, 1, 1, 1, 0, DEFAULT_TILES, BR },
    { "bf16 causal window 64",      BF16, 64, 64,  1, 2,  333,  333, 1, 1, 0, 1, DEFAULT_TILES, WIN(0, 64, -1) },
    { "bf16 window 32,17 BR",       BF16, 128, 128, 1, 2, 500,  450, 0, 1, 1, 0, DEFAULT_TILES, WIN(1, 32, 17) },
    { "bf16 window left 50",        BF16, 64, 64,  2, 1,  300,  300, 0, 1, 0, 0, DEFAULT_TILES, WIN(0, 50, -1) },
    { "bf16 window 0,0 noskip",     BF16, 64, 64,  1, 2,  129,  129, 0, 0, 0, 0, DEFAULT_TILES, WIN(0, 0, 0) },
    { "f16 window right 20 noskip", F16, 128, 64,  1, 2,  200,  260, 0, 0, 1, 2, DEFAULT_TILES, WIN(0, -1, 20) },
    { "f16 Nq>Nk causal BR win 40", F16, 64, 64,   1, 2,  250,  120, 1, 1, 0, 0, DEFAULT_TILES, WIN(1, 40, -1) },
    { "f32 Nq>Nk causal BR",        F32, 64, 64,   1, 2,  170,   50, 1, 1, 1, 0, DEFAULT_TILES, BR },
    { "f32 window 40,40 BR",        F32, 64, 64,   1, 2,  260,  300, 0, 1, 0, 0, DEFAULT_TILES, WIN(1, 40, 40) },
    { "f32 causal window 16 noskip", F32, 32, 32,  1, 1,  100,  100, 1, 0, 1, 0, DEFAULT_TILES, WIN(0, 16, -1) },
    { "f64 causal window 16",       F64, 64, 64,   1, 2,  100,  100, 1, 1, 0, 0, DEFAULT_TILES, WIN(0, 16, 0) },
    { "f64 Nq<Nk causal BR",        F64, 96, 96,   1, 1,   40,  120, 1, 1, 1, 0, DEFAULT_TILES, BR },
    /* Dv < D: bwd_wgmma's tile rotation gives these one and two warpgroups (keep them last). */
    { "f16 Dv<D causal BR",         F16, 128, 64,  2, 2,  130,  190, 1, 1, 0, 0, DEFAULT_TILES, BR },
    { "bf16 Dv<D",                  BF16, 128, 64, 1, 3,  200,  333, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK },
    /* Head dim 96 (bwd_wgmma: two 64-column panels, the second half used) with the others. */
    { "bf16 D=96 N=777 [B,N,H,D]",  BF16, 96, 96,  1, 3,  777,  777, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK },
    { "f16 D=96 Nq>Nk causal",      F16, 96, 96,   2, 2,  300,  190, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 D=128 Dv=96 window",    BF16, 128, 96, 1, 2,  400,  350, 0, 1, 0, 2, DEFAULT_TILES, WIN(0, 100, 30) },
    { "f16 D=96 Dv=64 causal BR",   F16, 96, 64,   2, 2,  150,  260, 1, 1, 1, 0, DEFAULT_TILES, BR },
    { "bf16 D=64 Dv=96",            BF16, 64, 96,  1, 2,  333,  200, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    /* Head dim 256 (bwd_wgmma: two consumers split the columns of one 64-key tile), odd and
     * whole tiles, both dQ modes, masks. */
    { "bf16 D=256 Nq>Nk causal BR", BF16, 256, 256, 2, 2, 333,  200, 1, 1, 0, 1, DEFAULT_TILES, BR },
    { "bf16 D=256 window",          BF16, 256, 256, 1, 2, 1000, 1000, 0, 1, 1, 2, DEFAULT_TILES, WIN(0, 300, 100) },
    { "f16 D=256 N=640 causal",     F16, 256, 256, 1, 3,  640,  640, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 D=256 Nq<Nk",           BF16, 256, 256, 2, 1, 130,  450, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    /* Head dim 192 over 128 (DeepSeek's MLA; fwd_wgmma: three panels of Q/K beside two of V) and
     * 192 throughout (fwd_wgmma on 64 keys). */
    { "bf16 D=192 Dv=128 causal",   BF16, 192, 128, 2, 2, 333,  333, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f16 D=192 Dv=128 Nq<Nk BR",  F16, 192, 128,  1, 3, 200,  517, 1, 1, 1, 1, DEFAULT_TILES, BR },
    { "bf16 D=192 Dv=128 window",   BF16, 192, 128, 1, 2, 700,  700, 0, 1, 0, 0, DEFAULT_TILES, WIN(0, 200, 64) },
    { "bf16 D=192 N=256",           BF16, 192, 192, 2, 2, 256,  256, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f16 D=96 Dv=192 causal",     F16, 96, 192,   1, 2, 190,  190, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    /* bwd_wgmma's columns split at 192 over 128 (a dQ tile of its own) and 256 over 128. */
    { "f16 D=192 Dv=128 Nq>Nk",     F16, 192, 128,  2, 2, 410,  250, 0, 1, 0, 2, DEFAULT_TILES, NO_MASK },
    { "bf16 D=192 Dv=128 N=512 causal", BF16, 192, 128, 1, 3, 512, 512, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 D=256 Dv=128 causal BR", BF16, 256, 128, 1, 2, 300, 333, 1, 1, 0, 1, DEFAULT_TILES, BR },
    /* More query tiles than the GPU holds blocks: fwd_wgmma's persistent blocks loop over
     * several, its ring and Q tiles running on across them (one Q tile at 192/128 and 256; two,
     * and O by the copy engine, at 64 and 128), under a mask in pairs of a long and a short tile
     * (odd counts of query tiles; rows that see no key at Nq>Nk), the PINGPONG turns running on
     * across tiles. Each takes the next persistent tile shape (hopper_config): the last, three
     * consumers in turns on 192 rows. */
    { "bf16 persistent Nq>Nk BR",   BF16, 128, 128, 2, 40, 900, 300, 1, 1, 0, 0, DEFAULT_TILES, BR },
    { "bf16 persistent causal BR",  BF16, 128, 128, 3, 48, 700, 900, 1, 1, 0, 0, DEFAULT_TILES, BR },
    { "f16 persistent D=192 Dv=128", F16, 192, 128, 2, 40, 333, 333, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK },
    { "bf16 persistent D=256 win",  BF16, 256, 256, 2, 36, 257, 300, 0, 1, 0, 0, DEFAULT_TILES, WIN(0, 90, 20) },
    { "f16 persistent D=64 causal", F16, 64, 64,    4, 32, 300, 300, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "bf16 persistent N=777",      BF16, 128, 128, 2, 24, 777, 777, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f16 persistent D=64 Nq>Nk BR", F16, 64, 64,  3, 40, 700, 500, 1, 1, 0, 0, DEFAULT_TILES, BR },
    /* bwd_wgmma's 80-row query tiles (dQ transposed; wgb_pins): a partial last tile (39 rows, dQ
     * row-major), and bottom-right rows that see no key in the reordered, persistent row. */
    { "bf16 D=128 N=999 80-row tiles", BF16, 128, 128, 1, 3, 999, 999, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f16 D=128 Nq>Nk causal BR 80-row tiles", F16, 128, 128, 2, 2, 300, 130, 1, 1, 0, 1, DEFAULT_TILES, BR },
    /* The persistent forward's key tiles that are not powers of two (the persistent cases take the
     * persistent wg_tiles rows in turn: these two the last, 144 keys in turns, 192 keys), the walk
     * ending in a partial tile of keys. */
    { "bf16 persistent Nq>Nk causal BR 144 keys", BF16, 128, 128, 2, 40, 700, 333, 1, 1, 0, 0, DEFAULT_TILES, BR },
    { "f16 persistent N=1000 192 keys", F16, 128, 128, 1, 40, 1000, 1000, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    /* fwd_wgmma's clusters sharing K/V loads (MULTICAST; wg_pins): an odd count of whole query
     * tiles (the block past the last stores nothing) with a partial last key tile, and three
     * consumers over a partial query tile with Nq < Nk. */
    { "bf16 N=384 clusters",        BF16, 128, 128, 2, 3, 384,  384, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f16 D=64 Nq<Nk clusters",    F16, 64, 64,    1, 2, 200, 1000, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    /* fwd_wgmma's f32 with more query tiles than the GPU holds blocks (the f32 persistent rows of
     * wgf_tiles in turn; head dim 64, where they fit): causal pairs, and bottom-right rows that
     * see no key over odd lengths. */
    { "f32 persistent D=64 causal", F32, 64, 64,    2, 16, 2048, 2048, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK },
    { "f32 persistent D=64 Nq>Nk BR", F32, 64, 64,  3, 24, 700, 500, 1, 1, 0, 0, DEFAULT_TILES, BR },
};
#define CASE_COUNT ((int)(sizeof cases / sizeof cases[0]))

/* Relative-error thresholds of DESIGN.md, per dtype. */
static double threshold(int dtype)
{
    switch (dtype) {
    case F32: return 1e-5;
    case F16: return 3e-3;
    case BF16: return 1e-2;
    default: return 1e-12;
    }
}

/* f32 on tensor cores with one TF32 product (ALLOW_TF32 1): TF32's 2^-11 a product, where the
 * three-product split keeps f32's threshold (test_reference holds the CPU model to the same). */
#define TF32_THRESHOLD 2e-3

/* The threshold kernel k's outputs are held to: the dtype's, or TF32's with ALLOW_TF32. */
static double kernel_threshold(const gpu_kernel *k, int dtype)
{
    return (k->config.family->params & GEN_BIT(GEN_ALLOW_TF32)) && k->config.p[GEN_ALLOW_TF32] ? TF32_THRESHOLD
                                                                                                : threshold(dtype);
}

/* Only small problems are also checked against the O(N^2)-memory CPU reference. */
static int cpu_checked(const attn_case *c)
{
    return (double)c->batch * c->heads * c->seqlen_q * c->seqlen_k <= 4e6;
}

static gpu_session session;
static int have_gpu;
static gpu_kernel *fwd_kernels[CASE_COUNT], *bwd_kernels[CASE_COUNT], *ref_kernels[CASE_COUNT];
static uint64_t seed;

static int even(int n, int block)
{
    return block > 0 && n % block == 0;
}

/* g's head dims for c: the case's own for the reference; for a fused family the compiled ones
 * the runtime runs c at (ln_family_head_dim), padding c's with DATA_DIM where they differ. */
static void set_head_dims(gen_config *g, const attn_case *c)
{
    const int pads = (g->family->params & GEN_BIT(GEN_DATA_DIM)) != 0;
    const int d = pads ? ln_family_head_dim(g->family, c->head_dim) : c->head_dim;
    const int dv = pads ? ln_family_head_dim(g->family, c->head_dim_v) : c->head_dim_v;
    g->p[GEN_HEAD_DIM] = d;
    g->p[GEN_HEAD_DIM_V] = dv;
    if (pads) {
        g->p[GEN_DATA_DIM] = d != c->head_dim ? c->head_dim : 0;
        g->p[GEN_DATA_DIM_V] = dv != c->head_dim_v ? c->head_dim_v : 0;
    }
}

/* Family f's defaults with the case's dtype, head dims, mask and block skipping (where f takes
 * them): what every candidate a case builds starts from. */
static gen_config case_config(const gen_family *f, const attn_case *c)
{
    gen_config g;
    gen_config_init(&g, f);
    g.p[GEN_DTYPE] = c->dtype;
    set_head_dims(&g, c);
    if (f->params & GEN_BIT(GEN_CAUSAL))
        g.p[GEN_CAUSAL] = ft_mask_active(c->causal, c->window ? c->wl : -1, c->window ? c->wr : -1);
    if (f->params & GEN_BIT(GEN_CAUSAL_SKIP))
        g.p[GEN_CAUSAL_SKIP] = c->causal_skip;
    return g;
}

/* A candidate of family `name` for the case; tiles from the case or the family defaults,
 * halved until the configuration is valid on this device. */
static gen_config make_config(const char *name, const attn_case *c, int backward)
{
    static const int no_tiles[4];
    gen_config g = case_config(gen_family_find(name), c);
    const int *tiles = !strcmp(name, "ref") ? no_tiles : backward ? &c->bwd_block_m : &c->fwd_block_m;
    int fixed[4] = { GEN_BLOCK_M, GEN_BLOCK_N, GEN_NUM_WARPS, GEN_NUM_STAGES };
    for (int i = 0; i < 4; i++)
        if (tiles[i] && (g.family->params & GEN_BIT(fixed[i])))
            g.p[fixed[i]] = tiles[i];
    if (g.family->params & GEN_BIT(GEN_DQ_MODE))
        g.p[GEN_DQ_MODE] = c->dq_mode;
    /* The family's tiles (or the case's) when valid; else the nearest valid ones: fewer stages,
     * then smaller key and query tiles, each tried with the default warps, twice and half. */
    const gen_config base = g;
    static const int warp_factor[3][2] = { { 1, 1 }, { 2, 1 }, { 1, 2 } };   /* multiply, divide */
    char why[512];
    for (int bm = base.p[GEN_BLOCK_M]; bm >= 1; bm = tiles[0] ? 0 : bm / 2)
        for (int bn = base.p[GEN_BLOCK_N]; bn >= 1; bn = tiles[1] ? 0 : bn / 2)
            for (int wf = 0; wf < (tiles[2] ? 1 : 3); wf++)
                for (int st = base.p[GEN_NUM_STAGES]; st >= 1; st = tiles[3] ? 0 : st - 1) {
                    g = base;
                    g.p[GEN_BLOCK_M] = bm;
                    g.p[GEN_BLOCK_N] = bn;
                    g.p[GEN_NUM_WARPS] = base.p[GEN_NUM_WARPS] * warp_factor[wf][0] / warp_factor[wf][1];
                    g.p[GEN_NUM_STAGES] = st;
                    if (g.family->params & GEN_BIT(GEN_EVEN_M))
                        g.p[GEN_EVEN_M] = even(c->seqlen_q, bm);
                    if (g.family->params & GEN_BIT(GEN_EVEN_N))
                        g.p[GEN_EVEN_N] = even(c->seqlen_k, bn);
                    if (g.p[GEN_NUM_WARPS] >= 1 && gen_validate(&g, session.smem_limit, why, sizeof why) == 0)
                        return g;
                }
    /* Nothing fits: keep the base so the build reports why. */
    g = base;
    return g;
}

/* f32 on tensor cores (fwd_mma, DTYPE f32) beside the case's exact forward where its tiles fit
 * the head dims: three TF32 products a product, or one (ALLOW_TF32) in every third case; each
 * warp splitting its fragments, or in every other case the block each K/V tile in shared memory
 * (SPLIT_SMEM, where it fits). */
static gpu_kernel *tf32_kernels[CASE_COUNT];
static int tf32_config(const attn_case *c, int idx, gen_config *out)
{
    char why[512];
    if (c->dtype != F32)
        return -1;
    gen_config g = make_config("fwd_mma", c, 0);
    g.p[GEN_ALLOW_TF32] = idx % 3 == 2;
    g.p[GEN_SPLIT_SMEM] = idx % 2;
    if (g.p[GEN_SPLIT_SMEM] && gen_validate(&g, session.smem_limit, why, sizeof why) != 0)
        g.p[GEN_NUM_STAGES] = 1;   /* the planes take a stage's room */
    if (gen_validate(&g, session.smem_limit, why, sizeof why) != 0)
        return -1;
    *out = g;
    return 0;
}

/* f32 on tensor cores in the backward (bwd_mma, DTYPE f32) beside the case's exact backward:
 * tile shapes rotating over the cases (the first of the case's turn that fits, else the family's
 * tiles fitted by make_config), one TF32 product (ALLOW_TF32) as the caller says, dQ as the case
 * asks (atomic or separate). The shapes cover one to four warps a 16-key slab (a slab's warps
 * splitting dK/dV's columns), 16- to 64-row query tiles, one to three stages and the family's
 * default (the first row); the fifth column has a slab's two warps split the queries
 * (SPLIT_QUERIES: 32 and 16 queries a warp), the sixth Q and dO split into TF32 parts in shared
 * memory (SPLIT_SMEM). A row keeps each of the two that the case takes (the split needs dQ by
 * atomics, the planes room in shared memory) and runs without the others. Rows 10 and 12 are the
 * forms the H200's float32 winners take at head dims 128 and 64 (one stage, the planes; at 128 the
 * split too), which the feature cases try first: grouped heads, a softcap, sinks and packed
 * batches meet them (TF32B_FEATURE_ROWS). */
static gpu_kernel *tf32b_kernels[CASE_COUNT];
static const int tf32b_tiles[][6] = {
    { 32, 128, 8, 2 }, { 64, 64, 8, 2 }, { 16, 64, 8, 3 }, { 32, 64, 8, 1 }, { 64, 128, 8, 2 }, { 32, 32, 8, 2 },
    { 64, 64, 4, 1 }, { 32, 64, 4, 1 }, { 64, 64, 8, 2, 1 }, { 32, 64, 8, 1, 1 }, { 64, 64, 8, 1, 1, 1 },
    { 32, 64, 4, 1, 0, 1 }, { 64, 128, 8, 1, 0, 1 },
};
enum { TF32B_ROWS = (int)(sizeof tf32b_tiles / sizeof tf32b_tiles[0]), TF32B_SHIPPED_128 = 10, TF32B_SHIPPED_64 = 12 };
/* The first row a case tries: for the cases, every other row (on an H200 they meet the family's
 * default, three stages, the split, the planes, 4 warps); for the feature cases the shipped forms.
 * FT_TEST_COVERAGE checks, without a GPU, that the forms coverage_needs names are all built. */
#define TF32B_MAIN_ROW(i) ((2 * (i) + 1) % TF32B_ROWS)
#define TF32B_FEATURE_ROW(i) ((i) % 2 ? TF32B_SHIPPED_64 : TF32B_SHIPPED_128)
static int tf32b_config(const attn_case *c, int allow_tf32, int first_row, gen_config *out)
{
    char why[512];
    if (c->dtype != F32)
        return -1;
    gen_config g = make_config("bwd_mma", c, 1);
    g.p[GEN_ALLOW_TF32] = allow_tf32;
    for (int t = 0; t < TF32B_ROWS; t++) {
        const int *tl = tf32b_tiles[(first_row + t) % TF32B_ROWS];
        gen_config h = g;
        h.p[GEN_BLOCK_M] = tl[0], h.p[GEN_BLOCK_N] = tl[1], h.p[GEN_NUM_WARPS] = tl[2], h.p[GEN_NUM_STAGES] = tl[3];
        h.p[GEN_EVEN_M] = even(c->seqlen_q, tl[0]);
        h.p[GEN_EVEN_N] = even(c->seqlen_k, tl[1]);
        /* The row's flags, then without the split, then without the planes, then neither. */
        for (int drop = 0; drop < 4; drop++) {
            h.p[GEN_SPLIT_QUERIES] = tl[4] && !(drop & 1);
            h.p[GEN_SPLIT_SMEM] = tl[5] && !(drop & 2);
            if (gen_validate(&h, session.smem_limit, why, sizeof why) == 0) {
                *out = h;
                return 0;
            }
        }
    }
    if (gen_validate(&g, session.smem_limit, why, sizeof why) != 0)
        return -1;
    *out = g;
    return 0;
}

/* bwd_wgmma_f32, the float32 backward on Hopper's TF32 warpgroup tensor cores (head dims to 64,
 * padded to 64, and 128 with one TF32 product): 32-query tiles in two ring slots (the family's
 * default) or one, and with one TF32 product 64-query tiles in three slots or two (32 in three
 * at head dim 128, where the family's warps are two consumers'); the third of a row is DQ_BULK
 * (dQ by atomics, or staged and added by bulk reductions), the fourth DQ_MODE (atomic into
 * dq_accum, or direct: scaled into dQ, which the delta pass zeroes). A case tries its row first
 * (the rows rotate over the cases), then the rows after it. At head dim 128, where three products
 * do not fit, a case of three runs one. Every case at head dim 128 also runs the bfloat16 parts
 * (BF16_PARTS, `parts`, in parts_kernels: three parts, float32's accuracy, 32-query tiles in one
 * slot or two; with TF32 allowed two parts and three products, in up to three slots), its rows
 * rotating four on from the TF32 kernel's of the same case. */
static gpu_kernel *tf32h_kernels[CASE_COUNT], *parts_kernels[CASE_COUNT];
static const int tf32h_tiles[][4] = { { 32, 2, 0, FT_DQ_ATOMIC }, { 64, 3, 0, FT_DQ_DIRECT }, { 32, 1, 1, FT_DQ_ATOMIC },
                                      { 64, 2, 1, FT_DQ_ATOMIC }, { 32, 3, 0, FT_DQ_DIRECT }, { 32, 2, 1, FT_DQ_ATOMIC },
                                      { 32, 1, 0, FT_DQ_DIRECT } };
enum { TF32H_ROWS = (int)(sizeof tf32h_tiles / sizeof tf32h_tiles[0]) };
static int tf32h_config(const attn_case *c, int allow_tf32, int parts, int first_row, gen_config *out)
{
    char why[512];
    const gen_family *f = gen_family_find("bwd_wgmma_f32");
    if (c->dtype != F32 || gen_check_arch(f, session.arch, why, sizeof why) != 0)
        return -1;
    gen_config g = case_config(f, c);
    if (parts && g.p[GEN_HEAD_DIM] != 128)
        return -1;
    g.p[GEN_ALLOW_TF32] = allow_tf32 || (!parts && g.p[GEN_HEAD_DIM] == 128);
    gen_config_head_dim_tiles(&g);   /* the warps for the head dim (and its default form, set next) */
    g.p[GEN_BF16_PARTS] = parts;
    for (int t = 0; t < TF32H_ROWS; t++) {
        const int *tl = tf32h_tiles[(first_row + t) % TF32H_ROWS];
        gen_config h = g;
        h.p[GEN_BLOCK_M] = tl[0];
        h.p[GEN_NUM_STAGES] = tl[1];
        h.p[GEN_DQ_BULK] = tl[2];
        h.p[GEN_DQ_MODE] = tl[3];
        h.p[GEN_EVEN_M] = even(c->seqlen_q, tl[0]);
        h.p[GEN_EVEN_N] = even(c->seqlen_k, h.p[GEN_BLOCK_N]);
        if (gen_validate(&h, session.smem_limit, why, sizeof why) == 0) {
            *out = h;
            return 0;
        }
    }
    return -1;
}

/* The Hopper families (sm_90a only), checked beside the case's forward and backward where this
 * GPU runs them and the head dims fit: fwd_wgmma and bwd_wgmma. Their tile shapes rotate over
 * the cases so each meets odd lengths and masks; bwd_wgmma adds dQ in a fixed order (DQ_MODE
 * ordered) in the cases whose dq column asks for a separate (deterministic) dQ. */
static gpu_kernel *wg_kernels[CASE_COUNT], *wgb_kernels[CASE_COUNT];
/* Tiles as BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, then the schedule flags of the families that
 * take them: fwd_wgmma's OVERLAP, PINGPONG, PERSISTENT, MULTICAST; bwd_wgmma's DQ_FIRST, DK_SS,
 * DV_EARLY, PERSISTENT (persistent_col). fwd_wgmma: consumers alone (NUM_WARPS = BLOCK_M/16) and
 * with a producer warpgroup (+4) in every schedule: OVERLAP, PINGPONG and PERSISTENT on and off,
 * one stage to four, one to three consumers (rows 13 and 14, from 0: three taking turns); then key tiles
 * that are not powers of two (80 to 192), in those schedules too. MULTICAST in four rows of one
 * block a tile (one and two stages, one to three consumers), dropped in the cases it does not
 * take (a mask, a packed batch: hopper_config). The last rows: three consumers taking turns one
 * block a tile, which with P_SMEM (hopper_config: rows 2 and 3 mod 4) runs at head dims 96 and 128,
 * and with 144 keys at head dim 96 in narrow panels (FlashAttention-4's tile there). */
static const int wg_tiles[][8] = {
    { 128, 128, 12, 2, 1, 1, 1 }, { 128, 128, 8, 2, 0, 0, 0 }, { 64, 128, 8, 2, 1, 0, 1 }, { 64, 128, 4, 2, 0, 0, 0 },
    { 128, 64, 12, 1, 0, 1, 1 },  { 192, 64, 12, 3, 0, 0, 0 }, { 128, 64, 8, 1, 0, 0, 0 }, { 64, 64, 8, 3, 0, 0, 1 },
    { 64, 64, 4, 4, 0, 0, 0 },    { 128, 64, 12, 1, 1, 1, 0, 1 }, { 128, 128, 12, 3, 1, 0, 1 }, { 64, 64, 8, 1, 1, 0, 0, 1 },
    { 128, 64, 12, 2, 1, 1, 1 },  { 192, 128, 16, 2, 1, 1, 1 }, { 192, 64, 16, 2, 0, 1, 0 },
    { 128, 176, 12, 2, 1, 0, 0, 1 }, { 128, 144, 12, 2, 1, 1, 1 }, { 192, 96, 16, 2, 1, 1, 0, 1 }, { 64, 80, 4, 2, 0, 0, 0 },
    { 128, 112, 12, 1, 0, 1, 0 }, { 128, 192, 12, 2, 1, 0, 1 }, { 128, 160, 8, 2, 0, 0, 0 },
    { 192, 128, 16, 2, 1, 1, 0 }, { 192, 144, 16, 2, 1, 1, 0 },
};
/* bwd_wgmma: consumers alone (NUM_WARPS = BLOCK_N/16) and with a producer warpgroup (+4); at head
 * dim 64, BLOCK_N 128 splits dQ's keys between the two consumers, or with 128-row query tiles its
 * rows; at 192 and 256 64 x 64 with 12 warps (two consumers splitting the columns), and at 192
 * over 128 also 64 x 128 with 12 warps (the wide keys). Then rows that reorder a tile's products (producer tiles only), each flag in each tile
 * shape that takes it: one consumer, two splitting the keys, two splitting 128 rows; the last
 * (from row 22) are persistent, in each of those shapes, ordered and not, one to three stages
 * (the harness caps their blocks, so each loops over several key tiles: main). */
static const int wgb_tiles[][8] = {
    { 64, 128, 12, 2 },         { 64, 64, 4, 2 },           { 64, 128, 8, 3 },  { 64, 64, 8, 1 },
    { 128, 128, 12, 2 },        { 64, 128, 12, 1 },         { 64, 64, 12, 1 },  { 64, 64, 4, 1 },
    { 128, 128, 8, 3 },         { 64, 128, 8, 1 },          { 64, 64, 8, 3 },   { 64, 128, 8, 2 },
    { 128, 128, 12, 1 },        { 64, 64, 8, 2 },           { 64, 64, 12, 2 },  { 64, 128, 12, 2, 1, 1, 1 },
    { 128, 128, 12, 2, 1, 0, 1 }, { 64, 64, 8, 2, 0, 1, 1 }, { 64, 128, 12, 1, 1, 0, 0 },
    { 128, 128, 12, 1, 0, 1, 0 }, { 64, 128, 12, 2, 0, 0, 1 }, { 64, 64, 8, 3, 1, 1, 0 },
    { 64, 128, 12, 2, 1, 0, 1, 1 }, { 128, 128, 12, 2, 1, 0, 1, 1 }, { 64, 64, 8, 3, 0, 1, 1, 1 },
    { 64, 128, 12, 1, 0, 0, 0, 1 }, { 128, 128, 12, 2, 0, 0, 0, 1 }, { 64, 128, 12, 3, 1, 1, 0, 1 },
    { 80, 128, 12, 2 },         { 80, 128, 12, 2, 1, 0, 1, 1 },
};
/* fwd_wgmma in f32 (TF32 products; a producer always): key tiles of 32 to 96 keys, one to three
 * consumers, one and two stages, each schedule flag on and off, one stage with OVERLAP (it once
 * deadlocked). With three products head dim 96 fits rows 0, 2, 6 and 7, head dim 128 row 2
 * only; with one (P V into O directly: fewer registers) both fit every row but 1 and 4 (shared
 * memory). The rotation's 14 rows against ALLOW_TF32's every third case give each row both
 * product counts; a pinned case's row decides its product count as its index does (wg_pins).
 * BF16_PARTS (every third case) takes the first row from the case's that takes the parts (rows 2,
 * 7 and 11-13: two consumers in one or two stages, 64 keys in one, turns, persistent, OVERLAP at
 * head dim 64, three consumers at head dim 64); the last three rows were added for them. */
static const int wgf_tiles[][8] = {
    { 64, 32, 8, 2, 1, 0, 0 },   { 128, 64, 12, 2, 1, 0, 0 }, { 128, 32, 12, 1, 0, 1, 0 }, { 64, 64, 8, 2, 1, 0, 1 },
    { 128, 64, 12, 2, 1, 1, 1 }, { 128, 96, 12, 1, 0, 0, 0 }, { 64, 32, 8, 2, 0, 0, 1 },  { 128, 32, 12, 2, 1, 1, 0 },
    { 64, 64, 8, 2, 0, 0, 0 },   { 128, 64, 12, 1, 1, 1, 1 }, { 192, 32, 16, 2, 1, 1, 0 }, { 128, 32, 12, 2, 0, 1, 1 },
    { 128, 64, 12, 1, 0, 0, 1 }, { 192, 32, 16, 2, 0, 1, 0 },
};
#define TILE_COUNT(t) ((int)(sizeof t / sizeof t[0]))
/* The fwd_wgmma tiles for a case's dtype. */
#define WG_TILES(c) ((c)->dtype == F32 ? wgf_tiles : wg_tiles), ((c)->dtype == F32 ? TILE_COUNT(wgf_tiles) : TILE_COUNT(wg_tiles))

/* Cases (plain or feature) whose Hopper tile is pinned rather than rotated: the row of the
 * family's tiles to start from, taken as the case's index (past the rows, it wraps: a pin then
 * chooses the index's other choices, such as f32's product form, apart from its row). */
typedef struct {
    const char *name;
    int row;
} tile_pin;
/* fwd_wgmma's (plain and feature cases; f32 ones in wgf_tiles): the clusters' rows, and a float32 one. */
static const tile_pin wg_pins[] = {
    { "bf16 N=384 clusters", 15 },
    { "f16 D=64 Nq<Nk clusters", 17 },
    { "f32 D=96 causal", 5 },   /* wgf_tiles: one TF32 product (a row 2 mod 3), 96 keys in one stage */
    /* wgf_tiles row 12 (40 mod 14) as an index 1 mod 3: bfloat16 parts, 64 keys in one stage. */
    { "f32 N=1000 causal noskip", 40 },
    /* Three consumers one block a tile with P from shared memory (the row's index takes P_SMEM),
     * at head dims 96 and 128 without a mask: the forms the H200's table ships. */
    { "bf16 D=96 N=777 [B,N,H,D]", 22 },
    { "f16 N=1000", 22 },
    { "varlen bf16 D=128 Nq!=Nk three consumers", 22 },   /* a feature case: kinds.lua's packed batch */
    /* 144 keys with P in shared memory at head dim 96 (narrow panels: 64-byte rows), under a
     * causal mask with more queries than keys, and over a packed batch. */
    { "f16 D=96 Nq>Nk causal", 23 },
    { "varlen bf16 D=96 narrow 144 keys", 23 },
};
/* bwd_wgmma's. */
static const tile_pin wgb_pins[] = {
    { "varlen f16 D=64 128-row tiles causal BR", 4 },
    { "varlen bf16 D=64 128-row tiles ordered window", 8 },
    { "bwd split mqa bf16 8/1 D=64 128-row tiles causal split 4", 4 },
    { "bwd split gqa f16 8/2 D=64 128-row tiles ordered split 2", 8 },
    /* The reordered products (the last rows) with a softcap, a packed batch, a window and a
     * group's query heads split over blocks. */
    { "ref f16 gqa 4/2 softcap window", 15 },
    { "varlen bf16 gqa 4/2 causal BR", 16 },
    { "varlen bf16 D=128 ordered softcap 2", 18 },
    { "bwd split mqa bf16 8/1 D=128 causal ordered split 4", 20 },
    { "bwd split gqa f16 8/2 D=64 window Nq<Nk split 2", 21 },
    /* Persistent blocks (the last rows) under every mask, with grouped heads and their shares
     * (SPLITS), a softcap, odd lengths and 128-row tiles. */
    { "bf16 persistent causal BR", 22 },
    { "f16 persistent D=64 causal", 23 },
    { "bf16 persistent N=777", 25 },
    { "f16 persistent D=64 Nq>Nk BR", 26 },
    { "bf16 persistent Nq>Nk BR", 22 },
    { "ref bf16 gqa 32/8 persistent causal", 22 },
    { "ref f16 softcap 5 D=64 Nq>Nk BR", 24 },
    { "bwd split mqa bf16 8/1 D=128 causal split 4", 25 },
    { "bf16 causal window 64", 27 },
    { "f16 window right 20 noskip", 27 },
    { "bf16 D=96 N=777 [B,N,H,D]", 24 },
    { "f16 D=96 Dv=64 causal BR", 22 },
    /* The epilogue through shared memory (a producer's consumers) with padded head dims. */
    { "pad f16 D=40 gqa 4/2 causal", 0 },
    /* Head dims 192 over 128: the columns split (64 keys) and the wide keys (128 keys split: S^T
     * and dP^T one after the other, dQ by panels) in each product order, one and two stages,
     * persistent, ordered, a softcap, a window, a packed batch and a group's shares. */
    { "bf16 D=192 Dv=128 causal", 14 },
    { "f16 D=192 Dv=128 Nq<Nk BR", 0 },
    { "bf16 D=192 Dv=128 window", 15 },
    { "f16 D=192 Dv=128 Nq>Nk", 5 },
    { "bf16 D=192 Dv=128 N=512 causal", 20 },
    { "f16 persistent D=192 Dv=128", 22 },
    { "ref bf16 gqa 6/2 D=192/128 softcap 4 causal", 18 },
    { "varlen f16 D=192/128 causal BR", 15 },
    { "varlen bf16 D=192/128 ordered", 0 },
    { "bwd split gqa bf16 8/2 D=192/128 window split 2", 25 },
    /* 80-row query tiles (the last rows): a partial last tile, rows that see no key, causal without
     * skipping, a padded layout with Nq<Nk, a packed batch, a long causal f16 problem. */
    { "bf16 D=128 N=999 80-row tiles", 28 },
    { "f16 D=128 Nq>Nk causal BR 80-row tiles", 29 },
    { "bf16 N=1000 causal noskip", 28 },
    { "bf16 Nq<Nk causal padded", 29 },
    { "varlen bf16 D=128 causal persistent", 28 },
    { "f16 N=4096 causal", 29 },
    /* A packed batch on persistent blocks (the packed walk over key tiles, 64-row tiles only):
     * grouped heads on one stage, a window with dQ first, empty sequences with one consumer, and
     * the wide keys at 192/128. */
    { "varlen f16 D=64 gqa 6/2 persistent", 25 },
    { "varlen bf16 D=128 persistent window BR", 22 },
    { "varlen bf16 D=64 persistent causal BR", 24 },
    { "varlen bf16 D=192/128 persistent", 22 },
    { "varlen f16 D=64 mqa 2/1 persistent few units", 25 },
};

static int pins_found;   /* wg_pins and wgb_pins that named a case (main checks all did) */
static int pins_lost;    /* pinned cases whose family took another row (main fails the run) */

/* The row a case named `name` is pinned to in `pins`, or -1. */
static int pin_of(const tile_pin *pins, int count, const char *name)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(pins[i].name, name))
            return pins[i].row;
    return -1;
}
#define wg_pin(name) pin_of(wg_pins, TILE_COUNT(wg_pins), name)
#define wgb_pin(name) pin_of(wgb_pins, TILE_COUNT(wgb_pins), name)

/* The row a case named `name` (the idx-th of its table) starts from. */
static int pinned(const tile_pin *pins, int count, const char *name, int idx)
{
    const int row = pin_of(pins, count, name);
    pins_found += row >= 0;
    return row >= 0 ? row : idx;
}
#define wg_pinned(name, idx) pinned(wg_pins, TILE_COUNT(wg_pins), name, idx)
#define wgb_pinned(name, idx) pinned(wgb_pins, TILE_COUNT(wgb_pins), name, idx)

/* The column of a tile row that holds PERSISTENT: after fwd_wgmma's OVERLAP and PINGPONG, after
 * bwd_wgmma's DQ_FIRST, DK_SS and DV_EARLY. */
static int persistent_col(const gen_family *f)
{
    return (f->params & GEN_BIT(GEN_DQ_FIRST)) ? 7 : 6;
}

/* A forward problem with more query tiles than an H100 holds blocks at once (264) goes to a
 * persistent configuration, so that its blocks loop over several tiles. (The backward's
 * persistent rows rotate with the rest, and the harness caps their blocks: main.) */
static int wants_persistent(const gen_family *f, const attn_case *c)
{
    return !f->backward && (f->params & GEN_BIT(GEN_PERSISTENT)) &&
           (long long)c->batch * c->heads * ((c->seqlen_q + 63) / 64) > 264;
}

/* The first tile of the rotation from row idx that the family takes for case c (varlen: a packed
 * batch's, compiled VARLEN=1 with no length a tile multiple). */
static int hopper_config(const char *family, const int (*tiles)[8], int count, const attn_case *c, int varlen,
                         int idx, gen_config *out)
{
    const gen_family *f = gen_family_find(family);
    char why[512];
    if (!(f->dtypes & (1u << c->dtype)) || gen_check_arch(f, session.arch, why, sizeof why))
        return -1;
    /* A persistent case starts at the persistent tiles in turn, counted over the persistent cases
     * alone, so that each persistent schedule meets a case of its own. */
    const int persistent = wants_persistent(f, c);
    int start = idx;
    if (persistent) {
        int nth = 0, tiles_persistent = 0;
        for (int i = 0; i < idx && i < CASE_COUNT; i++)   /* (a pin past the rows may pass CASE_COUNT) */
            nth += wants_persistent(f, &cases[i]);
        for (int t = 0; t < count; t++)
            tiles_persistent += tiles[t][persistent_col(f)] != 0;
        for (int t = 0, seen = 0; t < count; t++)
            if (tiles[t][persistent_col(f)] && seen++ == nth % (tiles_persistent ? tiles_persistent : 1))
                start = t;
    }
    /* fwd_wgmma's f32 in bfloat16 parts (BF16_PARTS) in every third case (beside ALLOW_TF32's): a
     * first pass over the rows takes the first that takes the parts, a second (or a case without
     * them) the first that takes the case. */
    const int parts = (f->params & GEN_BIT(GEN_BF16_PARTS)) && c->dtype == F32 && idx % 3 == 1;
    for (int pass = parts ? 0 : 1; pass < 2; pass++) {
        for (int t = 0; t < count; t++) {
            const int *tile = tiles[(start + t) % count];
            if (persistent && !tile[persistent_col(f)])
                continue;
            gen_config g = case_config(f, c);
            if (f->params & GEN_BIT(GEN_BF16_PARTS))
                g.p[GEN_BF16_PARTS] = pass == 0;
            g.p[GEN_BLOCK_M] = tile[0];
            g.p[GEN_BLOCK_N] = tile[1];
            g.p[GEN_NUM_WARPS] = tile[2];
            g.p[GEN_NUM_STAGES] = tile[3];
            if (f->params & GEN_BIT(GEN_OVERLAP))
                g.p[GEN_OVERLAP] = tile[4];
            if (f->params & GEN_BIT(GEN_PINGPONG))
                g.p[GEN_PINGPONG] = tile[5];
            if (f->params & GEN_BIT(GEN_PERSISTENT))
                g.p[GEN_PERSISTENT] = tile[persistent_col(f)];
            if (f->params & GEN_BIT(GEN_MULTICAST))
                g.p[GEN_MULTICAST] = tile[7];
            if ((f->params & GEN_BIT(GEN_ALLOW_TF32)) && c->dtype == F32)
                g.p[GEN_ALLOW_TF32] = idx % 3 == 2;   /* one TF32 product in every third case */
            if (f->params & GEN_BIT(GEN_DQ_FIRST)) {
                g.p[GEN_DQ_FIRST] = tile[4];
                g.p[GEN_DK_SS] = tile[5];
                g.p[GEN_DV_EARLY] = tile[6];
            }
            g.p[GEN_EVEN_M] = !varlen && even(c->seqlen_q, tile[0]);
            g.p[GEN_EVEN_N] = !varlen && even(c->seqlen_k, tile[1]);
            g.p[GEN_VARLEN] = varlen;
            if (f->backward)
                g.p[GEN_DQ_MODE] = c->dq_mode == FT_DQ_SEPARATE ? FT_DQ_ORDERED : FT_DQ_ATOMIC;
            /* bwd_wgmma's L read early (L_EARLY) in every other case, where its consumers split the keys;
             * its first dQ share stored (DQ_INIT store) in two cases of four, where a producer adds dQ. */
            if (f->params & GEN_BIT(GEN_L_EARLY))
                g.p[GEN_L_EARLY] = idx & 1;
            if (f->params & GEN_BIT(GEN_DQ_INIT))
                g.p[GEN_DQ_INIT] = ((idx >> 1) & 1) ? FT_DQ_INIT_ZERO : FT_DQ_INIT_STORE;
            /* ... and its producer keeping 32 registers (PRODUCER_REGS) in every other four cases, where
             * the consumers' estimate fits what is left. */
            if (f->params & GEN_BIT(GEN_PRODUCER_REGS))
                g.p[GEN_PRODUCER_REGS] = ((idx >> 2) & 1) ? 32 : 0;
            /* ... and its walks staggered (STAGGER) in every other eight cases, where dQ is atomic. */
            if (f->params & GEN_BIT(GEN_STAGGER))
                g.p[GEN_STAGGER] = (idx >> 3) & 1;
            /* ... and fwd_wgmma's P read from shared memory (P_SMEM) in every other two cases, where
             * the tile takes it (16-bit, a producer, whole 64-key panels). */
            if (f->params & GEN_BIT(GEN_P_SMEM))
                g.p[GEN_P_SMEM] = (idx >> 1) & 1;
            /* Where the tile refuses one of those values (or fwd_wgmma's MULTICAST), that one alone
             * goes (each tried in turn, MULTICAST last), so the others still meet the tile; else all
             * of them (0 is each one's default: DQ_INIT zero). */
            static const gen_param optional[] = { GEN_PRODUCER_REGS, GEN_L_EARLY, GEN_DQ_INIT, GEN_STAGGER, GEN_P_SMEM,
                                                  GEN_MULTICAST };
            const int n_optional = (int)(sizeof optional / sizeof optional[0]);
            int valid = gen_validate(&g, session.smem_limit, why, sizeof why) == 0;
            for (int k = 0; !valid && k < n_optional; k++) {
                gen_config h = g;
                if (!h.p[optional[k]])
                    continue;
                h.p[optional[k]] = 0;
                if (gen_validate(&h, session.smem_limit, why, sizeof why) == 0) {
                    g = h;
                    valid = 1;
                }
            }
            for (int k = 0; !valid && k < n_optional; k++) {
                g.p[optional[k]] = 0;
                valid = gen_validate(&g, session.smem_limit, why, sizeof why) == 0;
            }
            if (valid) {
                *out = g;
                return 0;
            }
        }
    }
    return -1;
}

/* A case pinned to a fwd_wgmma row runs that row (the clusters, P_SMEM's three consumers), not a
 * row after it that the family took instead: counted in pins_lost, which fails the run. */
static void check_wg_pin(const attn_case *c, const gen_config *got)
{
    const int pin = wg_pin(c->name);
    const int(*rows)[8] = c->dtype == F32 ? wgf_tiles : wg_tiles;
    const int row = pin % (c->dtype == F32 ? TILE_COUNT(wgf_tiles) : TILE_COUNT(wg_tiles));
    if (pin >= 0 &&
        (got->p[GEN_BLOCK_M] != rows[row][0] || got->p[GEN_BLOCK_N] != rows[row][1] ||
         got->p[GEN_NUM_WARPS] != rows[row][2] || got->p[GEN_NUM_STAGES] != rows[row][3] ||
         got->p[GEN_OVERLAP] != rows[row][4] || got->p[GEN_PINGPONG] != rows[row][5] ||
         got->p[GEN_PERSISTENT] != rows[row][6] || got->p[GEN_MULTICAST] != rows[row][7])) {
        printf("  %s: fwd_wgmma did not take the pinned row %d\n", c->name, row);
        pins_lost++;
    }
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Standard normal values (Box-Muller): never zeros, softmax neither flat nor one-hot. */
static void fill_random(double *x, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        double u1 = ((rng_next(s) >> 11) + 1.0) / 9007199254740993.0;
        double u2 = (rng_next(s) >> 11) / 9007199254740992.0;
        x[i] = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
}

/* ||got - want|| / ||want|| over the elements of a strided tensor (row = `dim` contiguous
 * elements every stride[2]); prints the first mismatches. NaN anywhere fails. */
static double compare(const char *what, const double *got, const double *want, const long long st[3],
                      int batch, int heads, int seqlen, int dim, double limit)
{
    double num = 0, den = 0, max_abs = 0;
    long long nans = 0;
    int shown = 0;
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++)
            for (int n = 0; n < seqlen; n++)
                for (int d = 0; d < dim; d++) {
                    size_t i = (size_t)(b * st[0] + h * st[1] + n * st[2] + d);
                    if (isinf(want[i]) && got[i] == want[i])
                        continue;   /* L of a row that sees no key: +inf on both sides */
                    double diff = got[i] - want[i];
                    if (isnan(got[i]) || isinf(got[i]))
                        nans++;
                    num += diff * diff;
                    den += want[i] * want[i];
                    if (fabs(diff) > max_abs)
                        max_abs = fabs(diff);
                    if ((isnan(diff) || fabs(diff) > 10 * limit * (1 + fabs(want[i]))) && shown < 5) {
                        printf("    %s mismatch at [b=%d h=%d n=%d d=%d]: expected %.9g, got %.9g\n", what, b, h,
                               n, d, want[i], got[i]);
                        shown++;
                    }
                }
    if (getenv("FT_TEST_VERBOSE"))
        for (int d = 0; d < dim && d < 16; d++)
            printf("    %s [0,0,0,%d]: expected %.6g got %.6g\n", what, d, want[d], got[d]);
    double rel = nans ? INFINITY : sqrt(num) / (sqrt(den) > 0 ? sqrt(den) : 1);
    if (nans)
        printf("    %s: %lld NaN/Inf elements (never written, or overflow)\n", what, nans);
    printf("    %-14s rel %.3e  max abs %.3e  %s\n", what, rel, max_abs, rel < limit ? "ok" : "FAIL");
    return rel;
}

/* Poisons O and L, runs kernel k's forward, downloads O and L into o and l; fails the case,
 * naming `what`, when the launch fails. */
static void forward_outputs(const gpu_kernel *k, gpu_problem *p, const char *what, double *o, double *l)
{
    const size_t rows = gpu_lse_rows(p);
    char why[1024];
    assert_int_equal(gpu_poison(&session, p->o, p->o_elems * gpu_dtype_bytes(p->dtype)), 0);
    assert_int_equal(gpu_poison(&session, p->lse, rows * gpu_acc_bytes(p->dtype)), 0);
    if (gpu_forward(&session, k, p, NULL, why, sizeof why) != 0) {
        printf("    %s forward: %s\n", what, why);
        fail();
    }
    assert_int_equal(gpu_download(&session, p, p->o, o, p->o_elems, 0), 0);
    assert_int_equal(gpu_download(&session, p, p->lse, l, rows, 1), 0);
}

/* The CPU reference's description of the device problem p: sizes, mask, strides, grouped
 * heads and softcap. */
static ref_problem cpu_problem(const gpu_problem *p)
{
    ref_problem rp;
    ref_problem_init(&rp, p->batch, p->heads, p->seqlen_q, p->seqlen_k, p->head_dim, p->head_dim_v, p->causal,
                     p->softmax_scale);
    rp.causal_align = p->causal_align;
    rp.window = p->window;
    rp.window_left = p->window ? p->window_left : 0;
    rp.window_right = p->window ? p->window_right : 0;
    rp.heads_k = p->heads_k;
    rp.softcap = p->softcap;
    rp.cu_seqlens_q = p->cu_seqlens_q;
    rp.cu_seqlens_k = p->cu_seqlens_k;
    memcpy(rp.q_stride, p->q_stride, sizeof rp.q_stride);
    memcpy(rp.k_stride, p->k_stride, sizeof rp.k_stride);
    memcpy(rp.v_stride, p->v_stride, sizeof rp.v_stride);
    memcpy(rp.o_stride, p->o_stride, sizeof rp.o_stride);
    return rp;
}

/* Random Q, K, V and dO (in[0..3], malloc'ed; the caller frees) uploaded to p, the host keeping
 * the values as the device holds them, so the CPU reference sees the same. */
static void upload_random_inputs(const gpu_problem *p, uint64_t *rs, double *in[4])
{
    const CUdeviceptr dev[4] = { p->q, p->k, p->v, p->dout };
    const size_t n[4] = { p->q_elems, p->k_elems, p->v_elems, p->o_elems };
    for (int i = 0; i < 4; i++) {
        in[i] = malloc(n[i] * sizeof(double));
        assert_non_null(in[i]);
        fill_random(in[i], n[i], rs);
        assert_int_equal(gpu_upload(&session, p, dev[i], in[i], n[i], in[i]), 0);
    }
}

/* The case's problem on the device, its buffers allocated (gpu_problem_free frees them). */
static gpu_problem case_problem(const attn_case *c)
{
    gpu_problem p = { .dtype = c->dtype, .batch = c->batch, .heads = c->heads, .seqlen_q = c->seqlen_q,
                      .seqlen_k = c->seqlen_k, .head_dim = c->head_dim, .head_dim_v = c->head_dim_v,
                      .causal = c->causal, .layout = c->layout, .causal_align = c->bottom_right,
                      .window = c->window, .window_left = c->wl, .window_right = c->wr };
    char why[1024];
    if (gpu_problem_alloc(&session, &p, why, sizeof why) != 0)
        fail_msg("%s: %s", c->name, why);
    return p;
}

/* The fused kernels of a case checked beside its reference (FUSED_KINDS slots, NULL where none). */
enum {
    FUSED_FWD, FUSED_FWD_WG, FUSED_FWD_TF32, FUSED_BWD, FUSED_BWD_WG, FUSED_BWD_TF32, FUSED_BWD_TF32_WG,
    FUSED_BWD_PARTS_WG, FUSED_KINDS
};
static int fused_backwards_match(gpu_kernel *const *fused, gpu_problem *p, double *const g[3],
                                 const long long *const strides[3], const int heads[3], const int seqs[3],
                                 const int dims[3], double limit, const double *ref_dsinks);

static void run_case(void **state)
{
    const attn_case *c = *state;
    const int idx = (int)(c - cases);
    if (!have_gpu)
        skip();
    if (fwd_kernels[idx]->error[0] || bwd_kernels[idx]->error[0] || ref_kernels[idx]->error[0]) {
        printf("  build failed: %s%s%s\n", fwd_kernels[idx]->error, bwd_kernels[idx]->error, ref_kernels[idx]->error);
        fail();
    }
    gpu_problem p = case_problem(c);
    char why[1024];
    uint64_t rs = seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(idx + 1));
    size_t rows = (size_t)p.batch * p.heads * p.seqlen_q;
    double *q = malloc(p.q_elems * sizeof *q), *k = malloc(p.k_elems * sizeof *k);
    double *v = malloc(p.v_elems * sizeof *v), *dout = malloc(p.o_elems * sizeof *dout);
    double *o_ref = calloc(p.o_elems, sizeof(double)), *o = calloc(p.o_elems, sizeof(double));
    double *l_ref = malloc(rows * sizeof(double)), *l = malloc(rows * sizeof(double));
    double *g_ref[3] = { calloc(p.q_elems, 8), calloc(p.k_elems, 8), calloc(p.v_elems, 8) };
    double *g[3] = { calloc(p.q_elems, 8), calloc(p.k_elems, 8), calloc(p.v_elems, 8) };
    fill_random(q, p.q_elems, &rs);
    fill_random(k, p.k_elems, &rs);
    fill_random(v, p.v_elems, &rs);
    fill_random(dout, p.o_elems, &rs);
    /* The host keeps the values as the device holds them, so the CPU reference sees the same. */
    assert_int_equal(gpu_upload(&session, &p, p.q, q, p.q_elems, q), 0);
    assert_int_equal(gpu_upload(&session, &p, p.k, k, p.k_elems, k), 0);
    assert_int_equal(gpu_upload(&session, &p, p.v, v, p.v_elems, v), 0);
    assert_int_equal(gpu_upload(&session, &p, p.dout, dout, p.o_elems, dout), 0);

    const double limit = threshold(c->dtype);
    const size_t eb = gpu_dtype_bytes(c->dtype), ab = gpu_acc_bytes(c->dtype);
    const long long lse_st[3] = { (long long)p.heads * p.seqlen_q, p.seqlen_q, 1 };
    int ok = 1;
    printf("  %s: fwd %s BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d NUM_STAGES=%d; bwd %s BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d NUM_STAGES=%d\n",
           c->name, fwd_kernels[idx]->config.family->name, fwd_kernels[idx]->config.p[GEN_BLOCK_M],
           fwd_kernels[idx]->config.p[GEN_BLOCK_N], fwd_kernels[idx]->config.p[GEN_NUM_WARPS],
           fwd_kernels[idx]->config.p[GEN_NUM_STAGES], bwd_kernels[idx]->config.family->name,
           bwd_kernels[idx]->config.p[GEN_BLOCK_M], bwd_kernels[idx]->config.p[GEN_BLOCK_N],
           bwd_kernels[idx]->config.p[GEN_NUM_WARPS], bwd_kernels[idx]->config.p[GEN_NUM_STAGES]);

    /* Forward: candidate (and f32 on tensor cores, the Hopper forward), then the reference, whose O and L then feed
     * both backward passes. */
    CUstream st = NULL;
    forward_outputs(fwd_kernels[idx], &p, "candidate", o, l);
    double *o_tf = calloc(p.o_elems, sizeof(double)), *l_tf = malloc(rows * sizeof(double)), tf32_limit = 0;
    if (tf32_kernels[idx]) {
        const gpu_kernel *tk = tf32_kernels[idx];
        printf("    fwd_mma f32 BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d NUM_STAGES=%d ALLOW_TF32=%d SPLIT_SMEM=%d\n",
               tk->config.p[GEN_BLOCK_M], tk->config.p[GEN_BLOCK_N], tk->config.p[GEN_NUM_WARPS],
               tk->config.p[GEN_NUM_STAGES], tk->config.p[GEN_ALLOW_TF32], tk->config.p[GEN_SPLIT_SMEM]);
        if (tk->error[0]) {
            printf("    fwd_mma f32 build failed: %s\n", tk->error);
            fail();
        }
        forward_outputs(tk, &p, "fwd_mma f32", o_tf, l_tf);
        tf32_limit = kernel_threshold(tk, c->dtype);
    }
    /* fwd_wgmma before the reference too: each forward writes the device's O and L. */
    double *o_wg = calloc(p.o_elems, sizeof(double)), *l_wg = malloc(rows * sizeof(double));
    if (wg_kernels[idx]) {
        const gen_config *wc = &wg_kernels[idx]->config;
        printf("    fwd_wgmma BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d NUM_STAGES=%d OVERLAP=%d PINGPONG=%d PERSISTENT=%d "
               "ALLOW_TF32=%d MULTICAST=%d P_SMEM=%d BF16_PARTS=%d\n", wc->p[GEN_BLOCK_M], wc->p[GEN_BLOCK_N],
               wc->p[GEN_NUM_WARPS], wc->p[GEN_NUM_STAGES], wc->p[GEN_OVERLAP], wc->p[GEN_PINGPONG],
               wc->p[GEN_PERSISTENT], wc->p[GEN_ALLOW_TF32], wc->p[GEN_MULTICAST], wc->p[GEN_P_SMEM],
               wc->p[GEN_BF16_PARTS]);
        if (wg_kernels[idx]->error[0]) {
            printf("    fwd_wgmma build failed: %s\n", wg_kernels[idx]->error);
            fail();
        }
        forward_outputs(wg_kernels[idx], &p, "fwd_wgmma", o_wg, l_wg);
    }
    forward_outputs(ref_kernels[idx], &p, "reference", o_ref, l_ref);
    ok &= compare("O vs GPU ref", o, o_ref, p.o_stride, p.batch, p.heads, p.seqlen_q, p.head_dim_v, limit) < limit;
    ok &= compare("L vs GPU ref", l, l_ref, lse_st, p.batch, p.heads, p.seqlen_q, 1, limit) < limit;
    if (tf32_kernels[idx]) {
        ok &= compare("tf32 O", o_tf, o_ref, p.o_stride, p.batch, p.heads, p.seqlen_q, p.head_dim_v, tf32_limit) <
              tf32_limit;
        ok &= compare("tf32 L", l_tf, l_ref, lse_st, p.batch, p.heads, p.seqlen_q, 1, tf32_limit) < tf32_limit;
    }
    free(o_tf);
    free(l_tf);
    if (wg_kernels[idx]) {
        const double wl = kernel_threshold(wg_kernels[idx], c->dtype);   /* TF32's where one product */
        ok &= compare("wgmma O", o_wg, o_ref, p.o_stride, p.batch, p.heads, p.seqlen_q, p.head_dim_v, wl) < wl;
        ok &= compare("wgmma L", l_wg, l_ref, lse_st, p.batch, p.heads, p.seqlen_q, 1, wl) < wl;
    }
    free(o_wg);
    free(l_wg);
    /* Backward from the reference's O and L. */
    CUdeviceptr outs[3] = { p.dq, p.dk, p.dv };
    size_t counts[3] = { p.q_elems, p.k_elems, p.v_elems };
    const long long *strides[3] = { p.q_stride, p.k_stride, p.v_stride };
    int seqs[3] = { p.seqlen_q, p.seqlen_k, p.seqlen_k }, dims[3] = { p.head_dim, p.head_dim, p.head_dim_v };
    const char *names[3] = { "dQ", "dK", "dV" };
    for (int pass = 0; pass < 2; pass++) {
        const gpu_kernel *kern = pass == 0 ? bwd_kernels[idx] : ref_kernels[idx];
        for (int i = 0; i < 3; i++)
            assert_int_equal(gpu_poison(&session, outs[i], counts[i] * eb), 0);
        assert_int_equal(gpu_poison(&session, p.delta, rows * ab), 0);
        if (gpu_backward(&session, kern, &p, st, why, sizeof why) != 0) {
            printf("    %s backward: %s\n", pass == 0 ? "candidate" : "reference", why);
            fail();
        }
        for (int i = 0; i < 3; i++)
            assert_int_equal(gpu_download(&session, &p, outs[i], pass == 0 ? g[i] : g_ref[i], counts[i], 0), 0);
    }
    for (int i = 0; i < 3; i++) {
        char what[32];
        snprintf(what, sizeof what, "%s vs GPU ref", names[i]);
        ok &= compare(what, g[i], g_ref[i], strides[i], p.batch, p.heads, seqs[i], dims[i], limit) < limit;
    }

    /* bwd_wgmma and f32 on tensor cores from the same O and L, outputs poisoned again, against the
     * GPU reference (one in a fixed order run three times, its bits the same each time). */
    gpu_kernel *others[FUSED_KINDS] = { 0 };
    others[FUSED_BWD_WG] = wgb_kernels[idx];
    others[FUSED_BWD_TF32] = tf32b_kernels[idx];
    others[FUSED_BWD_TF32_WG] = tf32h_kernels[idx];
    others[FUSED_BWD_PARTS_WG] = parts_kernels[idx];
    const int heads3[3] = { p.heads, p.heads, p.heads };
    ok &= fused_backwards_match(others, &p, g_ref, strides, heads3, seqs, dims, limit, NULL);

    if (cpu_checked(c)) {
        /* The CPU double reference on the same (rounded) inputs pins both the candidate and
         * the GPU reference. */
        const ref_problem rp = cpu_problem(&p);
        double *o_cpu = calloc(p.o_elems, 8), *l_cpu = calloc(rows, 8);
        double *g_cpu[3] = { calloc(p.q_elems, 8), calloc(p.k_elems, 8), calloc(p.v_elems, 8) };
        char err[256];
        assert_int_equal(ref_forward_naive_d(&rp, q, k, v, o_cpu, l_cpu, err, sizeof err), REF_OK);
        assert_int_equal(ref_backward_naive_d(&rp, q, k, v, dout, g_cpu[0], g_cpu[1], g_cpu[2], err, sizeof err), REF_OK);
        ok &= compare("O vs CPU", o, o_cpu, p.o_stride, p.batch, p.heads, p.seqlen_q, p.head_dim_v, limit) < limit;
        ok &= compare("L vs CPU", l, l_cpu, lse_st, p.batch, p.heads, p.seqlen_q, 1, limit) < limit;
        ok &= compare("ref O vs CPU", o_ref, o_cpu, p.o_stride, p.batch, p.heads, p.seqlen_q, p.head_dim_v, limit) < limit;
        ok &= compare("ref L vs CPU", l_ref, l_cpu, lse_st, p.batch, p.heads, p.seqlen_q, 1, limit) < limit;
        for (int i = 0; i < 3; i++) {
            char what[32];
            snprintf(what, sizeof what, "%s vs CPU", names[i]);
            ok &= compare(what, g[i], g_cpu[i], strides[i], p.batch, p.heads, seqs[i], dims[i], limit) < limit;
            snprintf(what, sizeof what, "ref %s vs CPU", names[i]);
            ok &= compare(what, g_ref[i], g_cpu[i], strides[i], p.batch, p.heads, seqs[i], dims[i], limit) < limit;
        }
        free(o_cpu);
        free(l_cpu);
        for (int i = 0; i < 3; i++)
            free(g_cpu[i]);
    }
    free(q), free(k), free(v), free(dout), free(o_ref), free(o), free(l_ref), free(l);
    for (int i = 0; i < 3; i++)
        free(g[i]), free(g_ref[i]);
    gpu_problem_free(&session, &p);
    if (!ok)
        printf("  FAILED (seed %llu; rerun with FT_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    assert_true(ok);
}

/* ---- deterministic backward: bitwise the same dQ, dK, dV over DET_RUNS runs ------------------ */

#define DET_RUNS 10

typedef struct det_case {
    attn_case shape;            /* dq_mode: the deterministic mode */
    const char *family;
    int tiles[7];               /* BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES (0: the family's, fitted), and
                                 * bwd_wgmma's DQ_FIRST, DK_SS, DV_EARLY */
} det_case;

/* Long enough that many key tiles add into each query tile, at odd lengths and with masks. */
static const det_case det_cases[] = {
    { { "bwd_wgmma ordered bf16 D128 causal", BF16, 128, 128, 2, 4, 1999, 1999, 1, 1, FT_DQ_ORDERED, 0,
        DEFAULT_TILES, NO_MASK }, "bwd_wgmma", { 64, 128, 8, 2 } },
    { { "bwd_wgmma ordered f16 D64 Nq>Nk", F16, 64, 64, 2, 3, 1500, 1100, 0, 1, FT_DQ_ORDERED, 0,
        DEFAULT_TILES, NO_MASK }, "bwd_wgmma", { 64, 64, 4, 3 } },
    { { "bwd_wgmma ordered bf16 Dv<D window", BF16, 128, 64, 1, 4, 2048, 2048, 0, 1, FT_DQ_ORDERED, 0,
        DEFAULT_TILES, WIN(1, 700, 300) }, "bwd_wgmma", { 64, 128, 8, 1 } },
    { { "bwd_wgmma ordered producer bf16 D128 causal", BF16, 128, 128, 2, 3, 1777, 1777, 1, 1, FT_DQ_ORDERED, 0,
        DEFAULT_TILES, NO_MASK }, "bwd_wgmma", { 64, 128, 12, 2 } },
    { { "bwd_wgmma ordered producer f16 D64 Nq<Nk window", F16, 64, 64, 2, 2, 1100, 1500, 0, 1, FT_DQ_ORDERED, 0,
        DEFAULT_TILES, WIN(1, 300, 500) }, "bwd_wgmma", { 64, 64, 8, 3 } },
    { { "bwd_wgmma ordered split keys bf16 D64 causal", BF16, 64, 64, 2, 3, 1333, 1333, 1, 1, FT_DQ_ORDERED, 0,
        DEFAULT_TILES, NO_MASK }, "bwd_wgmma", { 64, 128, 12, 2 } },
    { { "bwd_wgmma ordered split rows f16 D64 Nq<Nk window", F16, 64, 64, 2, 3, 1100, 1400, 0, 1, FT_DQ_ORDERED, 0,
        DEFAULT_TILES, WIN(1, 400, 150) }, "bwd_wgmma", { 128, 128, 12, 2 } },
    { { "bwd_wgmma ordered split rows inline bf16 D64 causal", BF16, 64, 64, 1, 4, 1500, 1500, 1, 1, FT_DQ_ORDERED,
        0, DEFAULT_TILES, NO_MASK }, "bwd_wgmma", { 128, 128, 8, 2 } },
    { { "bwd_wgmma ordered split columns bf16 D256 causal", BF16, 256, 256, 1, 3, 1100, 1100, 1, 1, FT_DQ_ORDERED,
        0, DEFAULT_TILES, NO_MASK }, "bwd_wgmma", { 64, 64, 12, 2 } },
    { { "bwd_wgmma ordered split columns f16 D192/128 Nq>Nk window", F16, 192, 128, 1, 3, 1300, 1100, 0, 1,
        FT_DQ_ORDERED, 0, DEFAULT_TILES, WIN(1, 500, 200) }, "bwd_wgmma", { 64, 64, 12, 2 } },
    { { "bwd_wgmma ordered reordered products bf16 D128 causal", BF16, 128, 128, 2, 3, 1777, 1777, 1, 1,
        FT_DQ_ORDERED, 0, DEFAULT_TILES, NO_MASK }, "bwd_wgmma", { 64, 128, 12, 2, 1, 1, 1 } },
    { { "bwd_wgmma ordered reordered products f16 D64 128-row window", F16, 64, 64, 2, 3, 1100, 1400, 0, 1,
        FT_DQ_ORDERED, 0, DEFAULT_TILES, WIN(1, 400, 150) }, "bwd_wgmma", { 128, 128, 12, 2, 1, 0, 1 } },
    { { "bwd_mma separate bf16 causal", BF16, 128, 128, 2, 2, 1000, 1000, 1, 1, FT_DQ_SEPARATE, 0,
        DEFAULT_TILES, NO_MASK }, "bwd_mma", { 0 } },
    { { "bwd_exact separate f32", F32, 64, 64, 1, 2, 700, 700, 1, 1, FT_DQ_SEPARATE, 0, DEFAULT_TILES, NO_MASK },
      "bwd_exact", { 0 } },
};
#define DET_COUNT ((int)(sizeof det_cases / sizeof det_cases[0]))
static gpu_kernel *det_kernels[DET_COUNT], *det_refs[DET_COUNT];

static gen_config det_config(const det_case *d)
{
    gen_config g;
    if (!d->tiles[0]) {
        g = make_config(d->family, &d->shape, 1);
    } else {
        gen_config_init(&g, gen_family_find(d->family));
        const attn_case *c = &d->shape;
        g.p[GEN_DTYPE] = c->dtype;
        set_head_dims(&g, c);
        g.p[GEN_CAUSAL] = ft_mask_active(c->causal, c->window ? c->wl : -1, c->window ? c->wr : -1);
        g.p[GEN_CAUSAL_SKIP] = c->causal_skip;
        g.p[GEN_BLOCK_M] = d->tiles[0];
        g.p[GEN_BLOCK_N] = d->tiles[1];
        g.p[GEN_NUM_WARPS] = d->tiles[2];
        g.p[GEN_NUM_STAGES] = d->tiles[3];
        if (g.family->params & GEN_BIT(GEN_DQ_FIRST)) {
            g.p[GEN_DQ_FIRST] = d->tiles[4];
            g.p[GEN_DK_SS] = d->tiles[5];
            g.p[GEN_DV_EARLY] = d->tiles[6];
        }
        g.p[GEN_EVEN_M] = even(c->seqlen_q, d->tiles[0]);
        g.p[GEN_EVEN_N] = even(c->seqlen_k, d->tiles[1]);
    }
    g.p[GEN_DQ_MODE] = d->shape.dq_mode;
    return g;
}

static void run_deterministic(void **state)
{
    const det_case *d = *state;
    const int idx = (int)(d - det_cases);
    const attn_case *c = &d->shape;
    if (!have_gpu)
        skip();
    if (!det_kernels[idx]) {   /* an sm_90a family on another GPU */
        printf("  %s: skipped, %s does not run on %s\n", c->name, d->family, session.arch);
        skip();
    }
    if (det_kernels[idx]->error[0] || det_refs[idx]->error[0]) {
        printf("  build failed: %s%s\n", det_kernels[idx]->error, det_refs[idx]->error);
        fail();
    }
    gpu_problem p = case_problem(c);
    char why[1024];
    uint64_t rs = seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(idx + 1));
    const size_t rows = (size_t)p.batch * p.heads * p.seqlen_q;
    double *in[4];
    upload_random_inputs(&p, &rs, in);
    double *o = calloc(p.o_elems, 8), *l = malloc(rows * 8);
    forward_outputs(det_refs[idx], &p, "reference", o, l);

    const CUdeviceptr outs[3] = { p.dq, p.dk, p.dv };
    const size_t counts[3] = { p.q_elems, p.k_elems, p.v_elems };
    const long long *strides[3] = { p.q_stride, p.k_stride, p.v_stride };
    const int seqs[3] = { p.seqlen_q, p.seqlen_k, p.seqlen_k }, dims[3] = { p.head_dim, p.head_dim, p.head_dim_v };
    const char *names[3] = { "dQ", "dK", "dV" };
    double *first[3], *now[3];
    for (int i = 0; i < 3; i++)
        first[i] = malloc(counts[i] * 8), now[i] = malloc(counts[i] * 8);
    const size_t eb = gpu_dtype_bytes(c->dtype), ab = gpu_acc_bytes(c->dtype);
    int ok = 1, differing = 0;
    for (int run = 0; run < DET_RUNS + 1; run++) {
        /* Runs 0..DET_RUNS-1: the deterministic kernel; the last: the GPU reference. */
        const gpu_kernel *k = run < DET_RUNS ? det_kernels[idx] : det_refs[idx];
        for (int i = 0; i < 3; i++)
            assert_int_equal(gpu_poison(&session, outs[i], counts[i] * eb), 0);
        assert_int_equal(gpu_poison(&session, p.delta, rows * ab), 0);
        if (gpu_backward(&session, k, &p, NULL, why, sizeof why) != 0) {
            printf("    run %d backward: %s\n", run, why);
            fail();
        }
        for (int i = 0; i < 3; i++)
            assert_int_equal(gpu_download(&session, &p, outs[i], run ? now[i] : first[i], counts[i], 0), 0);
        if (run == 0 || run == DET_RUNS)
            continue;
        int same = 1;
        for (int i = 0; i < 3; i++)
            for (size_t e = 0; e < counts[i]; e++)
                if (memcmp(&now[i][e], &first[i][e], sizeof(double)) != 0) {
                    if (same)
                        printf("    run %d: %s element %zu is %.9g, run 0 gave %.9g\n", run, names[i], e, now[i][e],
                               first[i][e]);
                    same = 0;
                    break;
                }
        differing += !same;
    }
    printf("  %s: %s BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d NUM_STAGES=%d DQ_MODE=%s: %d of %d runs differ from the "
           "first\n", c->name, d->family, det_kernels[idx]->config.p[GEN_BLOCK_M],
           det_kernels[idx]->config.p[GEN_BLOCK_N], det_kernels[idx]->config.p[GEN_NUM_WARPS],
           det_kernels[idx]->config.p[GEN_NUM_STAGES],
           gen_param_value_name(GEN_DQ_MODE, det_kernels[idx]->config.p[GEN_DQ_MODE]), differing, DET_RUNS - 1);
    ok &= differing == 0;
    /* And right: run 0 against the reference (in now[] after the last run). */
    const double limit = threshold(c->dtype);
    for (int i = 0; i < 3; i++)
        ok &= compare(names[i], first[i], now[i], strides[i], p.batch, p.heads, seqs[i], dims[i], limit) < limit;
    for (int i = 0; i < 4; i++)
        free(in[i]);
    for (int i = 0; i < 3; i++)
        free(first[i]), free(now[i]);
    free(o), free(l);
    gpu_problem_free(&session, &p);
    if (!ok)
        printf("  FAILED (seed %llu; rerun with FT_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    assert_true(ok);
}

/* ---- grouped K/V heads and the softcap: the GPU reference against the CPU one ------------
 * The reference takes both, checked here against the CPU double reference
 * (tests/ref_attention.c) on the inputs as the device holds them, every output poisoned before
 * its launch. The fused families take both (a softcap compiled in, SOFTCAP 1): the case's
 * families (fwd_mma and bwd_mma, or fwd_exact and bwd_exact) and the Hopper ones (where they
 * run) are checked against the GPU reference too, both directions; a backward that adds dQ in a
 * fixed order (dq_mode 1: bwd_mma and bwd_exact separate, bwd_wgmma ordered) must also give the
 * same bits on every run. Head dims that no family compiles run the same way, padded, and
 * variable-length batches with their kernels compiled for them (VARLEN 1): packed [total, H, D]
 * tensors, sequences of odd, unequal and empty lengths, each masked by its own lengths. */
typedef struct feature_case {
    attn_case shape;   /* its heads are the query heads; a variable-length batch's lengths the longest */
    int heads_k;
    double softcap;
    const int *cu_q, *cu_k;   /* a variable-length batch's prefix sums (batch + 1 each), or NULL */
    int splits, pack;         /* fwd_mma's SPLITS and PACK_GQA (0 0: the family's defaults) */
    int bwd_splits;           /* bwd_wgmma's SPLITS (0: its default) */
    int sinks;                /* 1: a sink logit a query head (args.sinks; the fused kernels with SINKS 1) */
} feature_case;

/* Prefix sums of the variable-length cases: odd lengths, a sequence with no keys, one with no
 * queries, one of a single row, some longer than a tile and some shorter. */
static const int cu_a_q[] = { 0, 37, 167, 168, 368, 368 }, cu_a_k[] = { 0, 50, 180, 180, 300, 401 };
static const int cu_b_q[] = { 0, 100, 101, 290 }, cu_b_k[] = { 0, 100, 230, 419 };
static const int cu_c_q[] = { 0, 700, 1213, 1214, 1514, 2114, 2177 }, cu_c_k[] = { 0, 700, 1213, 1214, 1514, 2114, 2177 };
static const int cu_d_q[] = { 0, 5, 69, 198 }, cu_d_k[] = { 0, 17, 81, 171 };
/* Decode: single rows, a sequence with no queries, one with no keys. */
static const int cu_e_q[] = { 0, 1, 3, 3, 4 }, cu_e_k[] = { 0, 300, 317, 367, 367 };
#define DENSE NULL, NULL   /* a dense batch: no prefix sums */

static const feature_case feature_cases[] = {
    { { "ref f32 gqa 6/2 causal",        F32,  64, 32, 2, 6,  37, 53, 1, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 0, 0 },
    { { "ref f64 mqa 4/1 Nq>Nk BR",      F64,  32, 64, 2, 4,  45, 30, 1, 1, 0, 2, DEFAULT_TILES, BR }, 1, 0, DENSE, 0, 0, 0, 0 },
    { { "ref bf16 softcap 1.5",          BF16, 64, 64, 2, 3,  61, 61, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 0, 1.5, DENSE, 0, 0, 0, 0 },
    { { "ref f16 gqa 4/2 softcap window", F16, 128, 128, 1, 4, 50, 70, 0, 1, 0, 1, DEFAULT_TILES, WIN(1, 10, 3) }, 2, 2.0, DENSE, 0, 0, 0, 0 },
    { { "ref f32 softcap 0.8 causal",    F32,  96, 96, 1, 2,  33, 33, 1, 1, 0, 2, DEFAULT_TILES, NO_MASK }, 0, 0.8, DENSE, 0, 0, 0, 0 },
    { { "ref bf16 gqa 32/8 persistent causal", BF16, 128, 128, 3, 32, 200, 200, 1, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 8, 0, DENSE, 0, 0, 0, 0 },
    { { "ref f16 gqa 8/2 D=64 Nq<Nk",    F16,  64, 64, 2, 8, 100, 260, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 0, 0 },
    { { "ref bf16 mqa 4/1 separate window", BF16, 128, 128, 2, 4, 300, 300, 0, 1, 1, 0, DEFAULT_TILES, WIN(0, 90, 40) }, 1, 0, DENSE, 0, 0, 0, 0 },
    { { "ref f32 gqa 6/3 separate BR",   F32,  64, 32, 1, 6,  70, 90, 1, 1, 1, 1, DEFAULT_TILES, BR }, 3, 0, DENSE, 0, 0, 0, 0 },
    { { "ref bf16 gqa 6/2 D=256 causal", BF16, 256, 256, 1, 6, 150, 150, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 0, 0 },
    { { "ref f16 gqa 8/2 D=96/64 separate causal", F16, 96, 64, 2, 8, 129, 129, 1, 1, 1, 2, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 0, 0 },
    { { "ref bf16 softcap 30 D=128 separate causal", BF16, 128, 128, 2, 4, 300, 300, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK }, 0, 30, DENSE, 0, 0, 0, 0 },
    { { "ref f16 softcap 5 D=64 Nq>Nk BR", F16, 64, 64, 2, 3, 170, 90, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 5, DENSE, 0, 0, 0, 0 },
    { { "ref bf16 mqa 6/1 softcap 2 D=256", BF16, 256, 256, 1, 6, 140, 140, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 1, 2, DENSE, 0, 0, 0, 0 },
    { { "ref f64 gqa 4/2 softcap 1 separate", F64, 64, 64, 1, 4, 50, 70, 0, 1, 1, 0, DEFAULT_TILES, WIN(0, 20, 5) }, 2, 1, DENSE, 0, 0, 0, 0 },
    { { "ref bf16 gqa 6/2 D=192/128 softcap 4 causal", BF16, 192, 128, 1, 6, 150, 150, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 2, 4, DENSE, 0, 0, 0, 0 },
    /* Head dims no family compiles, run padded to the next compiled one (set_head_dims). */
    { { "pad f16 D=40 gqa 4/2 causal",   F16,  40, 40, 2, 4,  77, 77, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 0, 0 },
    { { "pad bf16 D=80 BNHD Nq<Nk BR",   BF16, 80, 80, 1, 3, 130, 200, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 0, DENSE, 0, 0, 0, 0 },
    { { "pad bf16 D=16/24 window softcap 3 separate", BF16, 16, 24, 2, 2, 64, 90, 0, 1, 1, 2, DEFAULT_TILES, WIN(0, 30, 10) }, 0, 3, DENSE, 0, 0, 0, 0 },
    { { "pad f16 D=120/72 separate causal", F16, 120, 72, 2, 2, 100, 100, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK }, 0, 0, DENSE, 0, 0, 0, 0 },
    { { "pad bf16 D=8 padded rows",      BF16,  8,  8, 1, 2,  50, 50, 0, 1, 0, 2, DEFAULT_TILES, NO_MASK }, 0, 0, DENSE, 0, 0, 0, 0 },
    { { "pad f32 D=13/7 causal padded rows", F32, 13, 7, 2, 3, 45, 61, 1, 1, 0, 2, DEFAULT_TILES, NO_MASK }, 0, 0, DENSE, 0, 0, 0, 0 },
    { { "pad f64 D=1/3 softcap 1 separate", F64, 1, 3, 1, 2, 30, 30, 0, 1, 1, 0, DEFAULT_TILES, NO_MASK }, 0, 1, DENSE, 0, 0, 0, 0 },
    { { "pad f32 D=36/20 causal softcap 2", F32, 36, 20, 2, 3, 70, 90, 1, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 0, 2, DENSE, 0, 0, 0, 0 },
    { { "pad f32 D=200 BNHD separate",   F32, 200, 200, 1, 2, 40, 33, 0, 1, 1, 1, DEFAULT_TILES, NO_MASK }, 0, 0, DENSE, 0, 0, 0, 0 },
    { { "pad f64 D=70/130 mqa 4/1 window", F64, 70, 130, 1, 4, 37, 41, 0, 1, 0, 0, DEFAULT_TILES, WIN(1, 8, 4) }, 1, 0, DENSE, 0, 0, 0, 0 },
    { { "pad bf16 D=160/128 Nq<Nk BR", BF16, 160, 128, 1, 3, 100, 140, 1, 1, 0, 0, DEFAULT_TILES, BR }, 0, 0, DENSE, 0, 0, 0, 0 },
    /* Variable-length batches (the seqlens: the longest; layout 1: FlashAttention's [total, H, D]). */
    { { "varlen bf16 gqa 4/2 causal BR", BF16, 64, 64, 5, 4, 200, 130, 1, 1, 0, 1, DEFAULT_TILES, BR }, 2, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
    { { "varlen f16 D=128 window separate", F16, 128, 128, 3, 2, 189, 189, 0, 1, 1, 1, DEFAULT_TILES, WIN(0, 40, 7) }, 0, 0, cu_b_q, cu_b_k, 0, 0, 0, 0 },
    { { "varlen bf16 D=128 causal persistent", BF16, 128, 128, 6, 8, 700, 700, 1, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 0, 0, cu_c_q, cu_c_k, 0, 0, 0, 0 },
    /* The persistent forward's packed walk (traits/ft_packed.h) over grouped heads, and under a
     * window (its pairs of tiles then uneven): 7 blocks take every unit (gpu_cap_persistent_blocks). */
    { { "varlen f16 D=64 gqa 6/2 persistent", F16, 64, 64, 6, 6, 700, 700, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 2, 0, cu_c_q, cu_c_k, 0, 0, 0, 0 },
    { { "varlen bf16 D=128 persistent window BR", BF16, 128, 128, 6, 8, 700, 700, 0, 1, 0, 1, DEFAULT_TILES, WIN(1, 100, 30) }, 0, 0, cu_c_q, cu_c_k, 0, 0, 0, 0 },
    /* The persistent backward's packed walk over key tiles (bwd_wgmma: wgb_pins) with empty
     * sequences of queries and of keys and Nq != Nk per sequence, and at head dims 192/128. */
    { { "varlen bf16 D=64 persistent causal BR", BF16, 64, 64, 5, 4, 200, 130, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
    { { "varlen bf16 D=192/128 persistent", BF16, 192, 128, 6, 2, 700, 700, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 0, 0, cu_c_q, cu_c_k, 0, 0, 0, 0 },
    /* Three key tiles in all for seven blocks: four find no unit and leave at once. */
    { { "varlen f16 D=64 mqa 2/1 persistent few units", F16, 64, 64, 3, 2, 129, 90, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 1, 0, cu_d_q, cu_d_k, 0, 0, 0, 0 },
    { { "varlen bf16 D=128 ordered softcap 2", BF16, 128, 128, 6, 2, 700, 700, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK }, 0, 2, cu_c_q, cu_c_k, 0, 0, 0, 0 },
    { { "varlen f32 causal BR",          F32,  64, 64, 5, 3, 200, 130, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
    { { "varlen f64 softcap 1 separate", F64,  32, 32, 3, 2, 129, 90, 0, 1, 1, 1, DEFAULT_TILES, NO_MASK }, 0, 1, cu_d_q, cu_d_k, 0, 0, 0, 0 },
    { { "varlen f16 D=40 mqa 4/1 causal", F16, 40, 40, 3, 4, 129, 90, 1, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 1, 0, cu_d_q, cu_d_k, 0, 0, 0, 0 },
    { { "varlen bf16 D=96/64 separate window BR", BF16, 96, 64, 5, 2, 200, 130, 0, 1, 1, 1, DEFAULT_TILES, WIN(1, 30, 0) }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
    { { "varlen f16 D=192/128 causal BR", F16, 192, 128, 5, 2, 200, 130, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
    /* Attention sinks: the GPU reference against the CPU one, every family against the GPU
     * reference: rows that see no key (L = the sink), grouped heads, a softcap, a window, a
     * packed batch with an empty sequence, every dtype; and fwd_mma's split keys, where the
     * combine adds the sink once. */
    { { "sinks f32 gqa 6/2 Nq>Nk BR",     F32,  64, 64, 2, 6,  45, 30, 1, 1, 0, 0, DEFAULT_TILES, BR }, 2, 0, DENSE, 0, 0, 0, 1 },
    { { "sinks bf16 softcap 2 causal",    BF16, 128, 128, 2, 3, 77, 77, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 0, 2, DENSE, 0, 0, 0, 1 },
    { { "sinks f16 window",               F16,  64, 64, 1, 4,  90, 90, 0, 1, 0, 1, DEFAULT_TILES, WIN(0, 20, 5) }, 0, 0, DENSE, 0, 0, 0, 1 },
    { { "sinks f64 D=32/96",              F64,  32, 96, 2, 2,  33, 41, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 0, 0, DENSE, 0, 0, 0, 1 },
    { { "sinks varlen bf16 causal BR",    BF16, 64, 64, 5, 2, 200, 130, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 1 },
    { { "sinks f16 decode gqa 8/2 split 4", F16, 128, 128, 2, 8, 3, 300, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 4, 1, 0, 1 },
    { { "varlen bf16 D=192/128 ordered", BF16, 192, 128, 6, 2, 700, 700, 0, 1, 1, 0, DEFAULT_TILES, NO_MASK }, 0, 0, cu_c_q, cu_c_k, 0, 0, 0, 0 },
    /* Decode shapes: the keys split over blocks (SPLITS, more splits than tiles included: empty
     * shares) and a group's query heads packed into a tile (PACK_GQA), in fwd_mma. */
    { { "decode bf16 gqa 32/8 split 8 pack", BF16, 128, 128, 2, 32, 1, 1000, 0, 1, 0, 0, 16, 64, 1, 2, 0, 0, 0, 0, NO_MASK }, 8, 0, DENSE, 8, 1, 0, 0 },
    { { "decode f16 gqa 8/2 Nq=5 causal BR split 5 pack", F16, 128, 128, 2, 8, 5, 333, 1, 1, 0, 1, 64, 64, 4, 2, 0, 0, 0, 0, BR }, 2, 0, DENSE, 5, 1, 0, 0 },
    { { "decode bf16 mqa 6/1 D=64 window softcap split 3 pack", BF16, 64, 64, 1, 6, 3, 517, 0, 1, 0, 2, 32, 64, 2, 3, 0, 0, 0, 0, WIN(1, 100, 0) }, 1, 2, DENSE, 3, 1, 0, 0 },
    /* Speculative decoding as the H200's table serves it: a group's 4 x 16 rows in one 64-row
     * tile, three stages, causal bottom-right (the shipped winners' form, odd key count here). */
    { { "decode bf16 gqa 8/2 Nq=16 causal BR split 4 pack 3 stages", BF16, 128, 128, 2, 8, 16, 333, 1, 1, 0, 0, 64, 64, 4, 3, 0, 0, 0, 0, BR }, 2, 0, DENSE, 4, 1, 0, 0 },
    { { "decode f16 Nq=16 causal split 16 of 4 tiles", F16, 128, 128, 2, 4, 16, 200, 1, 1, 0, 0, 16, 64, 1, 2, 0, 0, 0, 0, NO_MASK }, 0, 0, DENSE, 16, 0, 0, 0 },
    { { "decode varlen bf16 gqa 8/2 causal BR split 4 pack", BF16, 128, 128, 4, 8, 2, 300, 1, 1, 0, 1, 16, 64, 1, 2, 0, 0, 0, 0, BR }, 2, 0, cu_e_q, cu_e_k, 4, 1, 0, 0 },
    { { "decode f16 D=40 gqa 4/2 split 2 pack", F16, 40, 40, 1, 4, 2, 129, 0, 1, 0, 0, 64, 32, 4, 2, 0, 0, 0, 0, NO_MASK }, 2, 0, DENSE, 2, 1, 0, 0 },
    { { "decode f32 gqa 8/2 Nq=3 split 4 pack", F32, 64, 64, 2, 8, 3, 300, 0, 1, 0, 0, 32, 64, 2, 2, 0, 0, 0, 0, NO_MASK }, 2, 0, DENSE, 4, 1, 0, 0 },
    { { "pack bf16 gqa 8/2 Nq=20 causal", BF16, 64, 64, 2, 8, 20, 90, 1, 1, 0, 0, 64, 64, 4, 2, 0, 0, 0, 0, NO_MASK }, 2, 0, DENSE, 1, 1, 0, 0 },
    /* Grouped heads shared out over blocks in bwd_wgmma's backward (SPLITS: each block walks
     * group / SPLITS query heads, a reduce step sums their dK and dV in order). */
    { { "bwd split mqa bf16 8/1 D=128 causal split 4", BF16, 128, 128, 2, 8, 300, 300, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 1, 0, DENSE, 0, 0, 4, 0 },
    { { "bwd split gqa f16 8/2 D=64 window Nq<Nk split 2", F16, 64, 64, 2, 8, 150, 333, 0, 1, 0, 1, DEFAULT_TILES, WIN(1, 60, 20) }, 2, 0, DENSE, 0, 0, 2, 0 },
    { { "bwd split mqa bf16 6/1 D=256 softcap split 3", BF16, 256, 256, 1, 6, 129, 129, 0, 1, 0, 2, DEFAULT_TILES, NO_MASK }, 1, 2, DENSE, 0, 0, 3, 0 },
    { { "bwd split mqa f16 8/1 D=80 BR split 8", F16, 80, 80, 1, 8, 100, 211, 1, 1, 0, 0, DEFAULT_TILES, BR }, 1, 0, DENSE, 0, 0, 8, 0 },
    { { "bwd split mqa bf16 8/1 D=128 causal ordered split 4", BF16, 128, 128, 2, 8, 700, 700, 1, 1, 1, 0, DEFAULT_TILES, NO_MASK }, 1, 0, DENSE, 0, 0, 4, 0 },
    { { "bwd split gqa f16 12/2 D=64 ordered split 3", F16, 64, 64, 1, 12, 333, 333, 0, 1, 1, 0, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 3, 0 },
    { { "bwd split gqa bf16 8/2 D=192/128 window split 2", BF16, 192, 128, 2, 8, 170, 260, 0, 1, 0, 2, DEFAULT_TILES, WIN(1, 80, 30) }, 2, 0, DENSE, 0, 0, 2, 0 },
    /* 128-row query tiles (wgb_pins) with a packed batch and with a group's query heads split over
     * blocks, as the runtime runs the head-dim-64 winners for them. */
    { { "varlen f16 D=64 128-row tiles causal BR", F16, 64, 64, 6, 4, 700, 700, 1, 1, 0, 1, DEFAULT_TILES, BR }, 2, 0, cu_c_q, cu_c_k, 0, 0, 0, 0 },
    { { "varlen bf16 D=64 128-row tiles ordered window", BF16, 64, 64, 5, 2, 200, 130, 0, 1, 1, 1, DEFAULT_TILES, WIN(0, 60, 20) }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
    { { "bwd split mqa bf16 8/1 D=64 128-row tiles causal split 4", BF16, 64, 64, 2, 8, 333, 333, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 1, 0, DENSE, 0, 0, 4, 0 },
    { { "bwd split gqa f16 8/2 D=64 128-row tiles ordered split 2", F16, 64, 64, 1, 8, 260, 200, 0, 1, 1, 2, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 2, 0 },
    /* f32 at head dim 128 with grouped heads, a softcap and a window: what the float32 backward's
     * query split (SPLIT_QUERIES, the H200's winners there) meets in a model. */
    { { "ref f32 gqa 4/2 D=128 softcap window BR", F32, 128, 128, 2, 4, 90, 130, 0, 1, 0, 0, DEFAULT_TILES, WIN(1, 50, 20) }, 2, 4.0, DENSE, 0, 0, 0, 0 },
    /* Head dim 128 in f32 where the runtime sends TF32 backwards to bwd_wgmma_f32's two consumers:
     * head dims padded to 128 (both, and the values' alone), a packed batch, sinks with grouped
     * heads, and whole tiles (EVEN_M and EVEN_N, one slot, which the case's place in the rotation
     * of tf32h_tiles gives it: with DQ_BULK since the rotation took it; the shipped winners' form,
     * dQ by atomics, falls to "f32 N=128"; coverage_needs checks both). */
    { { "f32 D=120 padded gqa 4/2 causal", F32, 120, 120, 2, 4, 100, 130, 1, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 2, 0, DENSE, 0, 0, 0, 0 },
    { { "f32 D=128/112 padded Nq>Nk BR", F32, 128, 112, 1, 3, 170, 90, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 0, DENSE, 0, 0, 0, 0 },
    { { "f32 D=128 N=1024 whole tiles", F32, 128, 128, 2, 2, 1024, 1024, 0, 1, 0, 0, DEFAULT_TILES, NO_MASK }, 0, 0, DENSE, 0, 0, 0, 0 },
    { { "varlen f32 D=128 causal BR", F32, 128, 128, 5, 3, 200, 130, 1, 1, 0, 1, DEFAULT_TILES, BR }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
    { { "sinks f32 D=128 gqa 6/2 Nq>Nk BR", F32, 128, 128, 2, 6, 45, 30, 1, 1, 0, 0, DEFAULT_TILES, BR }, 2, 0, DENSE, 0, 0, 0, 1 },    /* Three consumers reading P from shared memory over a packed batch (wg_pins), one block a
     * tile: Nq != Nk per sequence, a sequence of one query row; at head dim 96 in narrow panels
     * with 144 keys too. */
    { { "varlen bf16 D=128 Nq!=Nk three consumers", BF16, 128, 128, 3, 2, 189, 189, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 0, 0, cu_b_q, cu_b_k, 0, 0, 0, 0 },
    { { "varlen bf16 D=96 narrow 144 keys", BF16, 96, 96, 3, 2, 189, 189, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 0, 0, cu_b_q, cu_b_k, 0, 0, 0, 0 },
    /* bwd_wgmma_f32 adding dQ straight into a packed batch's dQ (DQ_MODE direct: tf32h_tiles' row
     * for this case's place), Nq != Nk per sequence. */
    { { "varlen f32 D=64 Nq!=Nk", F32, 64, 64, 5, 3, 200, 130, 0, 1, 0, 1, DEFAULT_TILES, NO_MASK }, 0, 0, cu_a_q, cu_a_k, 0, 0, 0, 0 },
};
#define FEATURE_COUNT ((int)(sizeof feature_cases / sizeof feature_cases[0]))
/* Per case: the reference, and the fused kernels checked against it (NULL where none). */
static gpu_kernel *feature_refs[FEATURE_COUNT], *feature_fused[FEATURE_COUNT][FUSED_KINDS];

static void print_config(const gen_config *g)
{
    printf("    %s BLOCK_M=%d BLOCK_N=%d NUM_WARPS=%d NUM_STAGES=%d", g->family->name, g->p[GEN_BLOCK_M],
           g->p[GEN_BLOCK_N], g->p[GEN_NUM_WARPS], g->p[GEN_NUM_STAGES]);
    if (g->family->params & GEN_BIT(GEN_PERSISTENT))
        printf(" PERSISTENT=%d", g->p[GEN_PERSISTENT]);
    if (g->family->params & GEN_BIT(GEN_P_SMEM))
        printf(" OVERLAP=%d PINGPONG=%d P_SMEM=%d", g->p[GEN_OVERLAP], g->p[GEN_PINGPONG], g->p[GEN_P_SMEM]);
    if ((g->family->params & GEN_BIT(GEN_BF16_PARTS)) && g->p[GEN_DTYPE] == F32)
        printf(" ALLOW_TF32=%d BF16_PARTS=%d", g->p[GEN_ALLOW_TF32], g->p[GEN_BF16_PARTS]);
    if (g->family->backward)
        printf(" DQ_MODE=%s", gen_param_value_name(GEN_DQ_MODE, g->p[GEN_DQ_MODE]));
    if (g->family->params & GEN_BIT(GEN_DQ_FIRST))
        printf(" DQ_FIRST=%d DK_SS=%d DV_EARLY=%d L_EARLY=%d DQ_INIT=%s PRODUCER_REGS=%d STAGGER=%d", g->p[GEN_DQ_FIRST],
               g->p[GEN_DK_SS], g->p[GEN_DV_EARLY], g->p[GEN_L_EARLY],
               gen_param_value_name(GEN_DQ_INIT, g->p[GEN_DQ_INIT]), g->p[GEN_PRODUCER_REGS], g->p[GEN_STAGGER]);
    printf(" SOFTCAP=%d", g->p[GEN_SOFTCAP]);
    if (g->p[GEN_SPLITS] > 1 || g->p[GEN_PACK_GQA])
        printf(" SPLITS=%d PACK_GQA=%d", g->p[GEN_SPLITS], g->p[GEN_PACK_GQA]);
    if ((g->family->params & GEN_BIT(GEN_ALLOW_TF32)) && g->p[GEN_DTYPE] == F32)
        printf(" f32 ALLOW_TF32=%d SPLIT_SMEM=%d SPLIT_QUERIES=%d DQ_BULK=%d", g->p[GEN_ALLOW_TF32],
               g->p[GEN_SPLIT_SMEM], g->p[GEN_SPLIT_QUERIES], g->p[GEN_DQ_BULK]);
    if (g->p[GEN_DATA_DIM] || g->p[GEN_DATA_DIM_V])
        printf(" HEAD_DIM=%d/%d DATA_DIM=%d/%d", g->p[GEN_HEAD_DIM], g->p[GEN_HEAD_DIM_V], g->p[GEN_DATA_DIM],
               g->p[GEN_DATA_DIM_V]);
    printf("\n");
}

/* The case's fused backwards against the GPU reference's gradients g (over the problem's
 * device O and L), each at its threshold (kernel_threshold); one adding dQ in a fixed order
 * runs three times and must repeat its bits. */
static int fused_backwards_match(gpu_kernel *const *fused, gpu_problem *p, double *const g[3],
                                 const long long *const strides[3], const int heads[3], const int seqs[3],
                                 const int dims[3], double limit, const double *ref_dsinks)
{
    const CUdeviceptr outs[3] = { p->dq, p->dk, p->dv };
    const size_t counts[3] = { p->q_elems, p->k_elems, p->v_elems };
    const size_t rows = gpu_lse_rows(p);
    const int batch = p->cu_seqlens_q ? 1 : p->batch;   /* a variable-length batch: one packed sequence */
    const char *names[3] = { "dQ vs GPU ref", "dK vs GPU ref", "dV vs GPU ref" };
    int ok = 1;
    char why[1024];
    for (int i = FUSED_BWD; i < FUSED_KINDS; i++) {
        const gpu_kernel *k = fused[i];
        if (!k)
            continue;
        const double kl = kernel_threshold(k, p->dtype) > limit ? kernel_threshold(k, p->dtype) : limit;
        print_config(&k->config);
        if (k->error[0]) {
            printf("    build failed: %s\n", k->error);
            return 0;
        }
        const int runs = ft_dq_mode_repeatable(k->config.p[GEN_DQ_MODE]) ? 3 : 1;   /* bitwise repeatable: run thrice */
        double *first[3], *now[3];
        for (int t = 0; t < 3; t++)
            first[t] = calloc(counts[t], 8), now[t] = calloc(counts[t], 8);
        for (int run = 0; run < runs && ok; run++) {
            for (int t = 0; t < 3; t++)
                assert_int_equal(gpu_poison(&session, outs[t], counts[t] * gpu_dtype_bytes(p->dtype)), 0);
            assert_int_equal(gpu_poison(&session, p->delta, rows * gpu_acc_bytes(p->dtype)), 0);
            if (gpu_backward(&session, k, p, NULL, why, sizeof why) != 0) {
                printf("    backward: %s\n", why);
                ok = 0;
                break;
            }
            for (int t = 0; t < 3; t++)
                assert_int_equal(gpu_download(&session, p, outs[t], run ? now[t] : first[t], counts[t], 0), 0);
            if (run == 0) {
                for (int t = 0; t < 3; t++)
                    ok &= compare(names[t], first[t], g[t], strides[t], batch, heads[t], seqs[t], dims[t], kl) < kl;
                if (ref_dsinks) {   /* the sinks' gradient, from the family's delta pass */
                    double ds[64];
                    const long long st[3] = { p->heads, 1, 1 };
                    assert_int_equal(gpu_download(&session, p, p->dsinks, ds, (size_t)p->heads, 1), 0);
                    ok &= compare("dsinks vs GPU ref", ds, ref_dsinks, st, 1, p->heads, 1, 1, kl) < kl;
                }
                continue;
            }
            for (int t = 0; t < 3; t++)
                if (memcmp(now[t], first[t], counts[t] * 8) != 0) {
                    printf("    run %d: %s differs bitwise from run 0\n", run, names[t]);
                    ok = 0;
                }
        }
        if (runs > 1 && ok)
            printf("    %d runs, the same bits\n", runs);
        for (int t = 0; t < 3; t++)
            free(first[t]), free(now[t]);
    }
    return ok;
}

static void run_feature_case(void **state)
{
    const feature_case *fc = *state;
    const attn_case *c = &fc->shape;
    const gpu_kernel *ref = feature_refs[fc - feature_cases];
    if (!have_gpu)
        skip();
    if (ref->error[0]) {
        printf("  build failed: %s\n", ref->error);
        fail();
    }
    gpu_problem p = { .dtype = c->dtype, .batch = c->batch, .heads = c->heads, .seqlen_q = c->seqlen_q,
                      .seqlen_k = c->seqlen_k, .head_dim = c->head_dim, .head_dim_v = c->head_dim_v,
                      .causal = c->causal, .layout = c->layout, .causal_align = c->bottom_right,
                      .window = c->window, .window_left = c->wl, .window_right = c->wr,
                      .heads_k = fc->heads_k, .softcap = fc->softcap, .cu_seqlens_q = fc->cu_q,
                      .cu_seqlens_k = fc->cu_k, .with_sinks = fc->sinks };
    if (fc->cu_q) {   /* the case's lengths must be the longest, as the kernels' grids take them */
        int longest_q = 0, longest_k = 0;
        for (int b = 0; b < c->batch; b++) {
            longest_q = fc->cu_q[b + 1] - fc->cu_q[b] > longest_q ? fc->cu_q[b + 1] - fc->cu_q[b] : longest_q;
            longest_k = fc->cu_k[b + 1] - fc->cu_k[b] > longest_k ? fc->cu_k[b + 1] - fc->cu_k[b] : longest_k;
        }
        assert_int_equal(longest_q, c->seqlen_q);
        assert_int_equal(longest_k, c->seqlen_k);
    }
    char why[1024];
    if (gpu_problem_alloc(&session, &p, why, sizeof why) != 0)
        fail_msg("%s: %s", c->name, why);
    const int heads_k = fc->heads_k ? fc->heads_k : c->heads;
    uint64_t rs = seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(fc - feature_cases + 1));
    const size_t rows = gpu_lse_rows(&p);
    /* Compared as tensors of these batches and rows: a variable-length batch as one packed sequence. */
    const int batch = fc->cu_q ? 1 : p.batch;
    const int rows_q = fc->cu_q ? p.total_q : p.seqlen_q, rows_k = fc->cu_q ? p.total_k : p.seqlen_k;
    double *in[4];
    upload_random_inputs(&p, &rs, in);
    /* Sink logits of either sign and about a score's size, as the device holds them. */
    double sinks[64], sinks_dev[64];
    assert_true(c->heads <= 64);
    if (fc->sinks) {
        for (int h = 0; h < c->heads; h++)
            sinks[h] = 3.0 * ((double)(rng_next(&rs) >> 11) * 0x1p-53) - 1.0;
        assert_int_equal(gpu_upload_acc(&session, &p, p.sinks, sinks, (size_t)c->heads, sinks_dev), 0);
        assert_int_equal(gpu_poison(&session, p.dsinks, (size_t)c->heads * gpu_acc_bytes(p.dtype)), 0);
    }
    double *o = calloc(p.o_elems, 8), *l = calloc(rows, 8);
    double *g[3] = { calloc(p.q_elems, 8), calloc(p.k_elems, 8), calloc(p.v_elems, 8) };
    forward_outputs(ref, &p, "reference", o, l);
    const double limit = threshold(c->dtype);
    const long long lse_st[3] = { (long long)p.heads * rows_q, rows_q, 1 };
    printf("  %s: heads %d over %d K/V heads, softcap %g%s\n", c->name, p.heads, heads_k, fc->softcap,
           fc->cu_q ? ", variable lengths" : "");
    int ok = 1;
    gpu_kernel *const *fused = feature_fused[fc - feature_cases];
    for (int i = FUSED_FWD; i <= FUSED_FWD_TF32; i++) {
        if (!fused[i])
            continue;
        print_config(&fused[i]->config);
        if (fused[i]->error[0]) {
            printf("    build failed: %s\n", fused[i]->error);
            fail();
        }
        const double fl = kernel_threshold(fused[i], c->dtype);
        double *o_f = calloc(p.o_elems, 8), *l_f = calloc(rows, 8);
        forward_outputs(fused[i], &p, fused[i]->config.family->name, o_f, l_f);
        ok &= compare("O vs GPU ref", o_f, o, p.o_stride, batch, p.heads, rows_q, p.head_dim_v, fl) < fl;
        ok &= compare("L vs GPU ref", l_f, l, lse_st, batch, p.heads, rows_q, 1, fl) < fl;
        free(o_f), free(l_f);
    }
    /* The fused forwards wrote O and L last; the backwards read the reference's, written again (an
     * f32 forward of one TF32 product is held to TF32's threshold, not the backward's). */
    forward_outputs(ref, &p, "reference", o, l);
    /* The O and L the reference backward reads (the reference forward's, stored in the 16-bit type):
     * the CPU's sinks' gradient is computed from them too, so that O's rounding, amplified by the
     * sum over every row, is not counted against the reference's delta pass. */
    double *o_read = calloc(p.o_elems, 8), *l_read = calloc(rows, 8);
    assert_int_equal(gpu_download(&session, &p, p.o, o_read, p.o_elems, 0), 0);
    assert_int_equal(gpu_download(&session, &p, p.lse, l_read, rows, 1), 0);
    const CUdeviceptr outs[3] = { p.dq, p.dk, p.dv };
    const size_t counts[3] = { p.q_elems, p.k_elems, p.v_elems };
    for (int i = 0; i < 3; i++)
        assert_int_equal(gpu_poison(&session, outs[i], counts[i] * gpu_dtype_bytes(p.dtype)), 0);
    assert_int_equal(gpu_poison(&session, p.delta, rows * gpu_acc_bytes(p.dtype)), 0);
    if (gpu_backward(&session, ref, &p, NULL, why, sizeof why) != 0) {
        printf("    reference backward: %s\n", why);
        fail();
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(gpu_download(&session, &p, outs[i], g[i], counts[i], 0), 0);
    double ds_ref[64];   /* the reference's sinks' gradient, before a fused backward rewrites it */
    if (fc->sinks)
        assert_int_equal(gpu_download(&session, &p, p.dsinks, ds_ref, (size_t)c->heads, 1), 0);
    const long long *strides[3] = { p.q_stride, p.k_stride, p.v_stride };
    const int heads[3] = { p.heads, heads_k, heads_k }, seqs[3] = { rows_q, rows_k, rows_k };
    const int dims[3] = { p.head_dim, p.head_dim, p.head_dim_v };
    ok &= fused_backwards_match(fused, &p, g, strides, heads, seqs, dims, limit, fc->sinks ? ds_ref : NULL);

    ref_problem rp = cpu_problem(&p);
    rp.sinks = fc->sinks ? sinks_dev : NULL;
    double *o_cpu = calloc(p.o_elems, 8), *l_cpu = calloc(rows, 8);
    double *g_cpu[3] = { calloc(p.q_elems, 8), calloc(p.k_elems, 8), calloc(p.v_elems, 8) };
    char err[256];
    assert_int_equal(ref_forward_naive_d(&rp, in[0], in[1], in[2], o_cpu, l_cpu, err, sizeof err), REF_OK);
    assert_int_equal(ref_backward_naive_d(&rp, in[0], in[1], in[2], in[3], g_cpu[0], g_cpu[1], g_cpu[2], err,
                                          sizeof err), REF_OK);
    if (fc->sinks) {   /* the sinks' gradient, from the reference backward's preprocess */
        double ds_cpu[64];
        assert_int_equal(ref_sinks_grad_d(&rp, o_read, l_read, in[3], ds_cpu, err, sizeof err), REF_OK);
        const long long st[3] = { c->heads, 1, 1 };
        ok &= compare("ref dsinks vs CPU", ds_ref, ds_cpu, st, 1, c->heads, 1, 1, limit) < limit;
    }
    const char *names[3] = { "ref dQ vs CPU", "ref dK vs CPU", "ref dV vs CPU" };
    ok &= compare("ref O vs CPU", o, o_cpu, p.o_stride, batch, p.heads, rows_q, p.head_dim_v, limit) < limit;
    ok &= compare("ref L vs CPU", l, l_cpu, lse_st, batch, p.heads, rows_q, 1, limit) < limit;
    for (int i = 0; i < 3; i++)
        ok &= compare(names[i], g[i], g_cpu[i], strides[i], batch, heads[i], seqs[i], dims[i], limit) < limit;
    for (int i = 0; i < 4; i++)
        free(in[i]);
    for (int i = 0; i < 3; i++)
        free(g[i]), free(g_cpu[i]);
    free(o), free(l), free(o_cpu), free(l_cpu), free(o_read), free(l_read);
    gpu_problem_free(&session, &p);
    if (!ok)
        printf("  FAILED (seed %llu; rerun with FT_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    assert_true(ok);
}

/* Compiles every kernel of every case in parallel before the first check. */
/* FT_TEST_FILTER (cmocka's wildcard match of case names): only the matching cases run, so only
 * their kernels are built (a sanitizer run on one case then compiles a handful, not all).
 * fnmatch reads '*' and '?' as cmocka does. */
static int selected(const char *name)
{
    const char *filter = getenv("FT_TEST_FILTER");
    return !filter || fnmatch(filter, name, 0) == 0;
}

/* fwd_mma's decode shape where a feature case asks for one (its SPLITS and PACK_GQA). */
static void set_decode_shape(gen_config *g, const feature_case *fc)
{
    if (!fc->splits || !(g->family->params & GEN_BIT(GEN_SPLITS)))
        return;
    g->p[GEN_SPLITS] = fc->splits;
    g->p[GEN_PACK_GQA] = fc->pack;
    gen_config_fit_lengths(g, fc->shape.seqlen_q, fc->shape.seqlen_k);
}

/* FT_TEST_COVERAGE=ARCH:SMEM (no GPU needed): the configurations the cases would build on a GPU
 * of that arch and opt-in shared memory per block are listed (`listed`), not compiled, and checked
 * against what the tables' comments promise (coverage_needs). */
enum { MAX_LISTED = 6 * CASE_COUNT + 2 * DET_COUNT + (1 + FUSED_KINDS) * FEATURE_COUNT + 3 * CASE_COUNT };
static gen_config listed[MAX_LISTED];
static int listing, listed_count;

/* Compiles and loads the configurations (gpu_build), or lists them (FT_TEST_COVERAGE). */
static int build_kernels(const gen_config *configs, gpu_kernel **built, int count)
{
    if (!listing)
        return gpu_build(&session, configs, built, count, 16);
    for (int i = 0; i < count; i++) {
        if (listed_count < MAX_LISTED)   /* MAX_LISTED counts every build of build_all */
            listed[listed_count++] = configs[i];
        built[i] = NULL;
    }
    return 0;
}

static int build_all(void)
{
    gen_config configs[3 * CASE_COUNT];
    gpu_kernel **slot[3 * CASE_COUNT];
    int count = 0;
    for (int i = 0; i < CASE_COUNT; i++) {
        const attn_case *c = &cases[i];
        if (!selected(c->name))
            continue;
        int mma = c->dtype == F16 || c->dtype == BF16;
        configs[count] = make_config(mma ? "fwd_mma" : "fwd_exact", c, 0);
        slot[count++] = &fwd_kernels[i];
        configs[count] = make_config(mma ? "bwd_mma" : "bwd_exact", c, 1);
        slot[count++] = &bwd_kernels[i];
        configs[count] = make_config("ref", c, 0);
        slot[count++] = &ref_kernels[i];
    }
    gpu_kernel *built_kernels[3 * CASE_COUNT];
    int failed = count ? build_kernels(configs, built_kernels, count) : 0;
    for (int i = 0; i < count; i++)
        *slot[i] = built_kernels[i];
    /* The Hopper families: forward and backward configurations of the cases they fit; and f32 on
     * tensor cores. */
    gen_config wg_configs[6 * CASE_COUNT];
    gpu_kernel **wg_slot[6 * CASE_COUNT];
    int wg_count = 0;
    for (int i = 0; i < CASE_COUNT; i++) {
        if (!selected(cases[i].name))
            continue;
        if (tf32_config(&cases[i], i, &wg_configs[wg_count]) == 0)
            wg_slot[wg_count++] = &tf32_kernels[i];
        if (hopper_config("fwd_wgmma", WG_TILES(&cases[i]), &cases[i], 0, wg_pinned(cases[i].name, i),
                          &wg_configs[wg_count]) == 0) {
            check_wg_pin(&cases[i], &wg_configs[wg_count]);
            wg_slot[wg_count++] = &wg_kernels[i];
        }
        if (hopper_config("bwd_wgmma", wgb_tiles, TILE_COUNT(wgb_tiles), &cases[i], 0, wgb_pinned(cases[i].name, i),
                          &wg_configs[wg_count]) == 0)
            wg_slot[wg_count++] = &wgb_kernels[i];
        if (tf32b_config(&cases[i], i % 3 == 1, TF32B_MAIN_ROW(i), &wg_configs[wg_count]) == 0)
            wg_slot[wg_count++] = &tf32b_kernels[i];
        if (tf32h_config(&cases[i], i % 3 == 2, 0, i, &wg_configs[wg_count]) == 0)
            wg_slot[wg_count++] = &tf32h_kernels[i];
        if (tf32h_config(&cases[i], i % 3 == 2, 1, i + 4, &wg_configs[wg_count]) == 0)
            wg_slot[wg_count++] = &parts_kernels[i];
    }
    gpu_kernel *wg_built[6 * CASE_COUNT];
    if (wg_count)
        failed += build_kernels(wg_configs, wg_built, wg_count);
    for (int i = 0; i < wg_count; i++)
        *wg_slot[i] = wg_built[i];
    /* The deterministic cases: each kernel (where its family runs here) and the reference. */
    gen_config det_configs[2 * DET_COUNT];
    gpu_kernel **det_slot[2 * DET_COUNT];
    int det_count = 0;
    char why[512];
    for (int i = 0; i < DET_COUNT; i++) {
        if (!selected(det_cases[i].shape.name))
            continue;
        const gen_config g = det_config(&det_cases[i]);
        if (gen_check_arch(g.family, session.arch, why, sizeof why) != 0)
            continue;
        det_configs[det_count] = g;
        det_slot[det_count++] = &det_kernels[i];
        det_configs[det_count] = make_config("ref", &det_cases[i].shape, 0);
        det_slot[det_count++] = &det_refs[i];
    }
    gpu_kernel *det_built[2 * DET_COUNT];
    if (det_count)
        failed += build_kernels(det_configs, det_built, det_count);
    for (int i = 0; i < det_count; i++)
        *det_slot[i] = det_built[i];
    /* The feature cases: the reference and the fused kernels, compiled with the case's softcap. */
    gen_config feature_configs[(1 + FUSED_KINDS) * FEATURE_COUNT];
    gpu_kernel **feature_slot[(1 + FUSED_KINDS) * FEATURE_COUNT];
    int feature_count = 0;
    for (int i = 0; i < FEATURE_COUNT; i++) {
        const attn_case *c = &feature_cases[i].shape;
        if (!selected(c->name))
            continue;
        const int mma = c->dtype == F16 || c->dtype == BF16;
        feature_configs[feature_count] = make_config("ref", c, 0);
        feature_slot[feature_count++] = &feature_refs[i];
        const int first_fused = feature_count;
        feature_configs[feature_count] = make_config(mma ? "fwd_mma" : "fwd_exact", c, 0);
        set_decode_shape(&feature_configs[feature_count], &feature_cases[i]);
        feature_slot[feature_count++] = &feature_fused[i][FUSED_FWD];
        feature_configs[feature_count] = make_config(mma ? "bwd_mma" : "bwd_exact", c, 1);
        feature_slot[feature_count++] = &feature_fused[i][FUSED_BWD];
        if (hopper_config("fwd_wgmma", WG_TILES(c), c, feature_cases[i].cu_q != NULL, wg_pinned(c->name, i),
                          &feature_configs[feature_count]) == 0) {
            check_wg_pin(c, &feature_configs[feature_count]);
            feature_slot[feature_count++] = &feature_fused[i][FUSED_FWD_WG];
        }
        if (tf32_config(c, i, &feature_configs[feature_count]) == 0) {
            set_decode_shape(&feature_configs[feature_count], &feature_cases[i]);
            feature_slot[feature_count++] = &feature_fused[i][FUSED_FWD_TF32];
        }
        const int wgb_start = wgb_pinned(c->name, i);
        if (hopper_config("bwd_wgmma", wgb_tiles, TILE_COUNT(wgb_tiles), c, feature_cases[i].cu_q != NULL, wgb_start,
                          &feature_configs[feature_count]) == 0) {
            if (feature_cases[i].bwd_splits)
                feature_configs[feature_count].p[GEN_SPLITS] = feature_cases[i].bwd_splits;
            /* A pinned packed batch runs its row's tile (the packed walk where the row is
             * persistent), not a row after it that the family took instead. */
            const int pin = wgb_pin(c->name);
            const gen_config *got = &feature_configs[feature_count];
            if (feature_cases[i].cu_q && pin >= 0 &&
                (got->p[GEN_BLOCK_M] != wgb_tiles[pin][0] || got->p[GEN_BLOCK_N] != wgb_tiles[pin][1] ||
                 got->p[GEN_NUM_WARPS] != wgb_tiles[pin][2] || got->p[GEN_NUM_STAGES] != wgb_tiles[pin][3] ||
                 got->p[GEN_PERSISTENT] != wgb_tiles[pin][7])) {
                printf("  %s: bwd_wgmma did not take the pinned row %d\n", c->name, pin);
                pins_lost++;
            }
            feature_slot[feature_count++] = &feature_fused[i][FUSED_BWD_WG];
        }
        if (tf32b_config(c, i % 3 == 1, TF32B_FEATURE_ROW(i), &feature_configs[feature_count]) == 0)
            feature_slot[feature_count++] = &feature_fused[i][FUSED_BWD_TF32];
        if (tf32h_config(c, i % 3 == 2, 0, i, &feature_configs[feature_count]) == 0)
            feature_slot[feature_count++] = &feature_fused[i][FUSED_BWD_TF32_WG];
        if (tf32h_config(c, i % 3 == 2, 1, i + 4, &feature_configs[feature_count]) == 0)
            feature_slot[feature_count++] = &feature_fused[i][FUSED_BWD_PARTS_WG];
        for (int k = first_fused; k < feature_count; k++) {
            feature_configs[k].p[GEN_SOFTCAP] = feature_cases[i].softcap != 0;
            feature_configs[k].p[GEN_SINKS] = feature_cases[i].sinks;
        }
        if (feature_cases[i].cu_q)   /* every kernel of the case, the reference too: no length is a tile multiple */
            for (int k = first_fused - 1; k < feature_count; k++) {
                feature_configs[k].p[GEN_VARLEN] = 1;
                feature_configs[k].p[GEN_EVEN_M] = feature_configs[k].p[GEN_EVEN_N] = 0;
            }
    }
    gpu_kernel *feature_built[(1 + FUSED_KINDS) * FEATURE_COUNT];
    if (feature_count)
        failed += build_kernels(feature_configs, feature_built, feature_count);
    for (int i = 0; i < feature_count; i++)
        *feature_slot[i] = feature_built[i];
    return failed;
}

/* Forms some case must build on an H200 (sm_90, 232,448 bytes a block), as the tables' comments say:
 * each a family and the parameters (name=value) its configuration must hold. */
static const struct {
    const char *family, *params, *why;
} coverage_needs[] = {
    { "bwd_mma", "DTYPE=0 ALLOW_TF32=0 HEAD_DIM=128 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=1 SPLIT_QUERIES=1 "
                 "SPLIT_SMEM=1 SOFTCAP=1", "the H200's f32 winners at head dim 128, with a softcap" },
    { "bwd_mma", "DTYPE=0 ALLOW_TF32=0 BLOCK_M=64 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=1 SPLIT_SMEM=1 SINKS=1",
      "the H200's f32 winners at head dim 64, with sinks" },
    { "bwd_mma", "DTYPE=0 ALLOW_TF32=0 SPLIT_QUERIES=1 SPLIT_SMEM=1 VARLEN=1", "the split and the planes, packed" },
    { "bwd_mma", "DTYPE=0 ALLOW_TF32=1 SPLIT_SMEM=1", "the planes' TF32 form (high parts rounded in place)" },
    { "bwd_mma", "DTYPE=0 DQ_MODE=1 SPLIT_SMEM=1", "the planes with dQ in its own kernel" },
    { "bwd_mma", "DTYPE=0 ALLOW_TF32=0 NUM_STAGES=2 SPLIT_QUERIES=1", "the split at two stages" },
    { "bwd_mma", "DTYPE=0 BLOCK_M=32 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=2", "the family's default tiles" },
    { "bwd_mma", "DTYPE=0 NUM_STAGES=3", "three stages" },
    { "bwd_wgmma_f32", "ALLOW_TF32=0 BLOCK_M=32 NUM_STAGES=2", "the Hopper float32 backward's default" },
    { "bwd_wgmma_f32", "ALLOW_TF32=0 NUM_STAGES=1", "one slot, three products" },
    { "bwd_wgmma_f32", "ALLOW_TF32=1 BLOCK_M=64 NUM_STAGES=3", "64-query tiles in three slots, one product" },
    { "bwd_wgmma_f32", "ALLOW_TF32=0 CAUSAL=1", "three products under a mask" },
    { "bwd_wgmma_f32", "VARLEN=1", "a packed batch" },
    { "bwd_wgmma_f32", "SOFTCAP=1", "a softcap" },
    { "bwd_wgmma_f32", "SINKS=1", "sinks" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=3",
      "head dim 128: two consumers, three slots" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 NUM_STAGES=1", "head dim 128 in one slot" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 CAUSAL=1", "head dim 128 under a mask" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 SOFTCAP=1", "head dim 128 with a softcap (consumer 1's held L)" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 DATA_DIM=120", "head dims padded to 128" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 VARLEN=1", "head dim 128, a packed batch" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 SINKS=1", "head dim 128 with sinks" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 NUM_STAGES=1 EVEN_M=1 EVEN_N=1",
      "head dim 128's shipped form: one slot, whole tiles" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 DQ_BULK=1 NUM_STAGES=1", "head dim 128, dQ by bulk reductions" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 DQ_BULK=1 NUM_STAGES=2", "head dim 128, dQ by bulk reductions, two slots" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 DQ_BULK=1 EVEN_M=0", "bulk reductions of a last, partial query tile" },
    { "bwd_wgmma_f32", "HEAD_DIM=128 DQ_BULK=1 CAUSAL=1", "head dim 128, bulk reductions under a mask" },
    { "bwd_wgmma_f32", "DQ_BULK=1 ALLOW_TF32=0", "three products, dQ by bulk reductions" },
    { "bwd_wgmma_f32", "DQ_BULK=1 ALLOW_TF32=1 BLOCK_M=64", "64-query tiles, dQ by bulk reductions" },
    { "bwd_wgmma_f32", "DQ_BULK=1 VARLEN=1", "a packed batch, dQ by bulk reductions" },
    { "bwd_wgmma_f32", "DQ_BULK=1 HEAD_DIM=64 EVEN_M=0 VARLEN=0", "head dim 64, a partial query tile reduced in bulk" },
    { "bwd_wgmma_f32", "DQ_MODE=0 DQ_BULK=0", "dQ by each thread's atomics into dq_accum" },
    { "bwd_wgmma_f32", "DQ_MODE=3 ALLOW_TF32=0 EVEN_M=0", "dQ straight into dQ, three products, a partial query tile" },
    { "bwd_wgmma_f32", "DQ_MODE=3 ALLOW_TF32=1 BLOCK_M=64", "dQ straight into dQ, one TF32 product, 64-query tiles" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 ALLOW_TF32=0 NUM_STAGES=2 DQ_MODE=0", "bfloat16 parts in two slots, atomics into dq_accum" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 ALLOW_TF32=1", "two bfloat16 parts with TF32 allowed" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 ALLOW_TF32=1 NUM_STAGES=3", "two bfloat16 parts in three slots" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 NUM_STAGES=1 DQ_BULK=1", "bfloat16 parts, dQ by bulk reductions" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 DQ_MODE=3", "bfloat16 parts, dQ straight into dQ (scaled in registers)" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 CAUSAL=1", "bfloat16 parts under a mask" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 VARLEN=1", "bfloat16 parts over a packed batch" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 SOFTCAP=1", "bfloat16 parts with a softcap" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 SINKS=1", "bfloat16 parts with sinks" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 DATA_DIM=120", "bfloat16 parts at a padded head dim" },
    { "bwd_wgmma_f32", "BF16_PARTS=1 EVEN_M=1 EVEN_N=1", "bfloat16 parts over whole tiles" },
    { "bwd_wgmma_f32", "DQ_MODE=3 CAUSAL=1", "dQ straight into dQ under a mask" },
    { "bwd_wgmma_f32", "DQ_MODE=3 VARLEN=1", "dQ straight into a packed batch's dQ" },
    { "bwd_wgmma_f32", "DQ_MODE=3 HEAD_DIM=128 NUM_STAGES=1", "dQ straight into dQ, head dim 128 (two consumers)" },
    { "bwd_wgmma_f32", "DQ_MODE=3 HEAD_DIM=128 DATA_DIM=120", "dQ straight into dQ's rows of 120 of 128 columns" },
    { "bwd_wgmma", "BLOCK_M=80 STAGGER=1", "80-row query tiles, staggered" },
    { "bwd_wgmma", "PRODUCER_REGS=32 PERSISTENT=1", "the producer at 32 registers on persistent blocks" },
    { "bwd_wgmma", "DQ_MODE=2 BLOCK_M=128", "dQ in a fixed order with 128-row tiles" },
    { "bwd_wgmma", "VARLEN=1 PERSISTENT=1", "a packed batch's key tiles walked by persistent blocks" },
    { "bwd_wgmma", "SPLITS=4 DQ_MODE=2", "a group's query heads over blocks, dQ in a fixed order" },
    { "bwd_wgmma", "HEAD_DIM=192 HEAD_DIM_V=128", "head dims 192 over 128" },
    { "fwd_wgmma", "MULTICAST=1", "clusters sharing K/V loads" },
    { "fwd_wgmma", "P_SMEM=1 BLOCK_M=192 NUM_WARPS=16", "P from shared memory, three consumers" },
    { "fwd_wgmma", "P_SMEM=1 OVERLAP=0", "P from shared memory, each product waited for" },
    { "fwd_wgmma", "P_SMEM=1 OVERLAP=1 CAUSAL=1", "P from shared memory under the overlap and a mask" },
    { "fwd_wgmma", "P_SMEM=1 PERSISTENT=1", "P from shared memory on persistent blocks" },
    { "fwd_wgmma", "P_SMEM=1 HEAD_DIM=96", "P from shared memory at head dim 96" },
    { "fwd_wgmma", "P_SMEM=1 BLOCK_M=192 HEAD_DIM=96 CAUSAL=0", "the shipped form at head dim 96: three consumers" },
    { "fwd_wgmma", "P_SMEM=1 BLOCK_M=192 HEAD_DIM=128 PERSISTENT=0 CAUSAL=0",
      "three consumers one block a tile, without a mask (shipped at head dim 128)" },
    { "fwd_wgmma", "BLOCK_M=192 NUM_WARPS=16 PINGPONG=1", "three consumers in turns" },
    { "fwd_wgmma", "DTYPE=0 PERSISTENT=1", "float32 on persistent blocks" },
    { "fwd_wgmma", "DTYPE=0 ALLOW_TF32=1 HEAD_DIM=128 BLOCK_M=128 BLOCK_N=64 NUM_STAGES=1",
      "one TF32 product at head dim 128: 64 keys in one stage (P V into O)" },
    { "fwd_wgmma", "DTYPE=0 ALLOW_TF32=1 BLOCK_M=128 BLOCK_N=96 NUM_STAGES=1",
      "one TF32 product, 96 keys in one stage" },
    { "fwd_wgmma", "DTYPE=0 BF16_PARTS=1 HEAD_DIM=128 NUM_STAGES=2", "bfloat16 parts at head dim 128 in two stages" },
    { "fwd_wgmma", "DTYPE=0 BF16_PARTS=1 HEAD_DIM=128 BLOCK_N=64", "bfloat16 parts: 64 keys in one stage" },
    { "fwd_wgmma", "DTYPE=0 BF16_PARTS=1 HEAD_DIM=64 OVERLAP=1", "bfloat16 parts, the softmax under P V" },
    { "fwd_wgmma", "DTYPE=0 BF16_PARTS=1 BLOCK_M=192", "bfloat16 parts, three consumers" },
    { "fwd_wgmma", "DTYPE=0 BF16_PARTS=1 PERSISTENT=1 CAUSAL=1", "bfloat16 parts on persistent blocks, causal" },
    { "fwd_wgmma", "DTYPE=0 BF16_PARTS=1 VARLEN=1", "bfloat16 parts over a packed batch" },
    { "fwd_wgmma", "DTYPE=0 BF16_PARTS=1 DATA_DIM=32", "bfloat16 parts at a padded head dim" },
    { "fwd_wgmma", "VARLEN=1 PERSISTENT=1", "a packed batch's tiles walked by persistent blocks" },
    { "fwd_wgmma", "VARLEN=1 P_SMEM=1 BLOCK_M=192 CAUSAL=0", "three consumers over a packed batch (kinds.lua)" },
    { "fwd_wgmma", "HEAD_DIM=96 BLOCK_M=192 BLOCK_N=144 P_SMEM=1 CAUSAL=1", "narrow panels: 144 keys under a mask" },
    { "fwd_wgmma", "HEAD_DIM=96 BLOCK_N=144 P_SMEM=1 VARLEN=1", "narrow panels: 144 keys over a packed batch" },
    { "fwd_wgmma", "HEAD_DIM=96 HEAD_DIM_V=96 PERSISTENT=1", "narrow panels on persistent blocks" },
    { "fwd_wgmma", "HEAD_DIM=96 HEAD_DIM_V=96 NUM_WARPS=12 OVERLAP=0", "narrow panels, each product waited for" },
    { "fwd_mma", "PACK_GQA=1 SPLITS=4", "decode: a group packed, the keys split" },
    { "fwd_mma", "DTYPE=0 SPLIT_SMEM=1", "the forward's float32 planes" },
};

/* Whether config g is of `family` and holds every name=value of `params`. */
static int config_has(const gen_config *g, const char *family, const char *params)
{
    if (strcmp(g->family->name, family))
        return 0;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", params);
    for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        *eq = '\0';
        const int param = gen_param_lookup(tok);
        if (param < 0 || g->p[param] != atoi(eq + 1))   /* a misspelt need is never met: it fails */
            return 0;
    }
    return 1;
}

/* FT_TEST_COVERAGE: the configurations listed for the given arch and shared memory, each need met,
 * every pinned tile named and taken. Returns the process's exit status. */
static int check_coverage(const char *spec)
{
    const char *colon = strchr(spec, ':');
    if (!colon || colon - spec >= (long)sizeof session.arch || atoi(colon + 1) <= 0) {
        printf("test_attn_gpu: FT_TEST_COVERAGE='%s': expected ARCH:SMEM_BYTES (sm_90:232448)\n", spec);
        return 2;
    }
    unsetenv("FT_TEST_FILTER");   /* every case: the needs and the pins are over all of them */
    snprintf(session.arch, sizeof session.arch, "%.*s", (int)(colon - spec), spec);
    session.smem_limit = atoi(colon + 1);
    session.sm_count = 132;
    listing = 1;
    build_all();
    if (getenv("FT_TEST_VERBOSE"))
        for (int i = 0; i < listed_count; i++)
            print_config(&listed[i]);
    int missing = 0;
    const int on_h200 = !strcmp(session.arch, "sm_90") && session.smem_limit == 232448;
    for (int n = 0; on_h200 && n < (int)(sizeof coverage_needs / sizeof coverage_needs[0]); n++) {
        int found = 0;
        for (int i = 0; i < listed_count && !found; i++)
            found = config_has(&listed[i], coverage_needs[n].family, coverage_needs[n].params);
        if (!found) {
            printf("test_attn_gpu: no case builds %s %s (%s)\n", coverage_needs[n].family, coverage_needs[n].params,
                   coverage_needs[n].why);
            missing++;
        }
    }
    const int pins = TILE_COUNT(wg_pins) + TILE_COUNT(wgb_pins);
    printf("test_attn_gpu: %d configurations listed for %s with %d bytes of shared memory; %d needs missed, "
           "%d of %d pins name a case, %d pinned cases off their rows\n", listed_count, session.arch,
           session.smem_limit, missing, pins_found, pins, pins_lost);
    return missing || pins_found != pins || pins_lost ? 1 : 0;
}

int main(void)
{
    char why[512];
    const char *coverage = getenv("FT_TEST_COVERAGE");
    if (coverage)
        return check_coverage(coverage);
    if (gpu_open(&session, why, sizeof why) != 0) {
        printf("test_attn_gpu: SKIPPED, no GPU here: %s\n", why);
        return GPU_SKIP_CODE;
    }
    have_gpu = 1;
    /* A few blocks for the persistent backward: each then loops over several of a small case's
     * key tiles (a prime, so they do not divide evenly). */
    gpu_cap_persistent_blocks(7);
    const char *fixed = getenv("FT_TEST_SEED");
    seed = fixed ? strtoull(fixed, NULL, 10) : (uint64_t)time(NULL) * 2654435761u;
    printf("test_attn_gpu: %s (%s, %d SMs), seed %llu\n", session.name, session.arch, session.sm_count,
           (unsigned long long)seed);
    int failed = build_all();
    const int pins = TILE_COUNT(wg_pins) + TILE_COUNT(wgb_pins);
    if (!getenv("FT_TEST_FILTER") && pins_found != pins) {
        /* A renamed case would otherwise fall back to the rotation's tile unnoticed. */
        printf("test_attn_gpu: %d of %d pinned tiles (wg_pins, wgb_pins) name no case\n", pins - pins_found, pins);
        gpu_close(&session);
        return 1;
    }
    if (pins_lost) {   /* the case would pass on another row, testing what it was not meant to */
        printf("test_attn_gpu: %d pinned cases did not take their rows (above)\n", pins_lost);
        gpu_close(&session);
        return 1;
    }
    if (failed)
        printf("test_attn_gpu: %d kernels failed to build (their cases fail)\n", failed);

    struct CMUnitTest tests[CASE_COUNT + DET_COUNT + FEATURE_COUNT];
    for (int i = 0; i < CASE_COUNT; i++) {
        tests[i] = (struct CMUnitTest){ cases[i].name, run_case, NULL, NULL, (void *)&cases[i] };
    }
    for (int i = 0; i < DET_COUNT; i++)
        tests[CASE_COUNT + i] = (struct CMUnitTest){ det_cases[i].shape.name, run_deterministic, NULL, NULL,
                                                     (void *)&det_cases[i] };
    for (int i = 0; i < FEATURE_COUNT; i++)
        tests[CASE_COUNT + DET_COUNT + i] = (struct CMUnitTest){ feature_cases[i].shape.name, run_feature_case, NULL,
                                                                 NULL, (void *)&feature_cases[i] };
    /* FT_TEST_FILTER="bf16 N=1*" runs the matching cases only (cmocka's wildcard match). */
    if (getenv("FT_TEST_FILTER"))
        cmocka_set_test_filter(getenv("FT_TEST_FILTER"));
    int rc = _cmocka_run_group_tests("test_attn_gpu", tests, CASE_COUNT + DET_COUNT + FEATURE_COUNT, NULL, NULL);
    gpu_close(&session);
    return rc;
}
