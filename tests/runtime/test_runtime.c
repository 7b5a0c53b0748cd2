/* libflashtune on the CPU: the lookup tiers on synthetic databases, the built-in defaults,
 * every invalid argument, bad database files and the no-driver path. The driver is pointed at
 * a missing file first, so nothing here ever launches, even on a GPU machine. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include <cmocka.h>

#include "rt_internal.h"
#include "traits/ft_traits.h"

static char dir[] = "/tmp/ft_test_runtime_XXXXXX";

static const rt_device h100 = { "NVIDIA H100 80GB HBM3", "sm_90", 232448, 132 };
static const rt_device h200 = { "NVIDIA H200", "sm_90", 232448, 132 };
static const rt_device test_gpu = { "Test GPU", "sm_90", 232448, 132 };
static const rt_device ampere = { "Test A100", "sm_80", 166912, 108 };
static const rt_device ada = { "Test L4", "sm_89", 101376, 58 };

/* A winners text: device, workload, kernel. */
#define LINE(device, arch, workload, family, hash, params)                                                  \
    "device=\"" device "\" arch=" arch " cc=9.0 sm_count=132 driver=13.0 nvrtc=13.0 " workload " family=" family \
    " source_hash=" hash " " params " median_ms=1.5 tflops=100\n"
#define FWD_BF16_128 "op=fwd dtype=bf16 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 seqlen_q=2048 seqlen_k=2048"
#define P_64x64 "DTYPE=bf16 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=4 NUM_STAGES=2 CAUSAL=0 " \
                "CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic"
#define FWD_F16_256 "op=fwd dtype=f16 head_dim=256 head_dim_v=256 causal=1 batch=1 heads=8 seqlen_q=1024 seqlen_k=1024"
#define P_HUGE "DTYPE=f16 HEAD_DIM=256 HEAD_DIM_V=256 BLOCK_M=128 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=4 CAUSAL=1 " \
               "CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic"

#define P_128x64_CAPPED "DTYPE=bf16 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=128 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=2 " \
                        "CAUSAL=0 CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic SOFTCAP=1"

static const char *synthetic =
    "flashtune winners format 1\n"
    LINE("Test GPU", "sm_90", FWD_BF16_128, "fwd_mma", "0123456789abcdef", P_64x64)
    LINE("Test GPU", "sm_90", FWD_F16_256, "fwd_mma", "1123456789abcdef", P_HUGE)
    LINE("Test GPU", "sm_90", FWD_BF16_128 " heads_k=4 softcap=1", "fwd_mma", "2123456789abcdef", P_128x64_CAPPED);
/* Winners of three kinds of the same problem: dense causal, a variable-length batch's (bucket 3),
 * a causal window's; the Hopper forward, persistent in the first two. */
#define FWD_WGMMA_CAUSAL(tiles, walk, varlen)                                                                    \
    "DTYPE=bf16 HEAD_DIM=128 HEAD_DIM_V=128 " tiles " NUM_STAGES=2 CAUSAL=1 CAUSAL_SKIP=1 EVEN_M=0 EVEN_N=0 "   \
    "DQ_MODE=atomic OVERLAP=1 PINGPONG=0 PERSISTENT=" walk " VARLEN=" varlen
#define FWD_BF16_128_CAUSAL "op=fwd dtype=bf16 head_dim=128 head_dim_v=128 causal=1 batch=4 heads=16"
static const char *kinds =
    "flashtune winners format 1\n"
    LINE("Test GPU", "sm_90", FWD_BF16_128_CAUSAL " seqlen_q=2048 seqlen_k=2048", "fwd_wgmma", "3123456789abcdef",
         FWD_WGMMA_CAUSAL("BLOCK_M=128 BLOCK_N=128 NUM_WARPS=12", "1", "0"))
    LINE("Test GPU", "sm_90", FWD_BF16_128_CAUSAL " seqlen_q=8192 seqlen_k=8192 varlen=3", "fwd_wgmma",
         "4123456789abcdef", FWD_WGMMA_CAUSAL("BLOCK_M=128 BLOCK_N=64 NUM_WARPS=12", "1", "1"))
    LINE("Test GPU", "sm_90", FWD_BF16_128_CAUSAL " seqlen_q=8192 seqlen_k=8192 window=1 window_left=1024 "
         "window_right=0", "fwd_wgmma", "5123456789abcdef", FWD_WGMMA_CAUSAL("BLOCK_M=64 BLOCK_N=128 NUM_WARPS=8",
         "0", "0"));
static const char *other_device =
    "flashtune winners format 1\n"
    LINE("Test A100", "sm_80", FWD_BF16_128, "fwd_mma", "0123456789abcdef", P_64x64);

/* A database file in the test folder holding text (NULL: empty, schema only). */
static db *make_db(const char *name, const char *text)
{
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    db *d = NULL;
    if (db_open(path, DB_OPEN_CREATE, &d, err, sizeof err) != 0)
        fail_msg("db_open: %s", err);
    if (text && db_import_text(d, name, text, NULL, NULL, err, sizeof err) != 0)
        fail_msg("db_import_text: %s", err);
    return d;
}

static db_workload workload(int op, int dtype, int d, int causal, int batch, int heads, int sq, int sk)
{
    return (db_workload){ .op = op, .dtype = dtype, .head_dim = d, .head_dim_v = d, .causal = causal,
                          .batch = batch, .heads = heads, .seqlen_q = sq, .seqlen_k = sk };
}

/* ---- lookup tiers -------------------------------------------------------------------------- */

typedef struct lookup_case {
    const char *name;
    const char *db_text;        /* NULL with use_db: an empty database */
    int use_db, use_shipped;
    const rt_device *device;
    db_workload w;
    int tier;
    const char *why;            /* expected in choice.why */
    int block_m, even_m;        /* expected; block_m 0: not checked */
} lookup_case;

/* w with grouped heads and a softcap. */
static db_workload featured(db_workload w, int heads_k, int softcap)
{
    w.heads_k = heads_k;
    w.softcap = softcap;
    return w;
}

static void lookup_tiers(void **state)
{
    (void)state;
    const db_workload tuned = workload(DB_OP_FWD, FT_BF16, 128, 0, 4, 16, 2048, 2048);
    const lookup_case cases[] = {
        { "exact", "s", 1, 1, &test_gpu, tuned, RT_TIER_DB_EXACT, "database exact", 64, 1 },
        { "nearest lengths", "s", 1, 1, &test_gpu, workload(DB_OP_FWD, FT_BF16, 128, 0, 4, 16, 1000, 1000),
          RT_TIER_DB_NEAREST, "tuned at batch=4 heads=16 seqlen_q=2048", 64, 0 },
        { "nearest batch*heads", "s", 1, 1, &test_gpu, workload(DB_OP_FWD, FT_BF16, 128, 0, 64, 16, 2048, 2048),
          RT_TIER_DB_NEAREST, "database nearest", 64, 1 },
        { "same arch, other GPU", "s", 1, 0, &(rt_device){ "Other H100", "sm_90", 232448, 132 }, tuned,
          RT_TIER_DB_EXACT, "same arch sm_90", 64, 1 },
        { "causal differs: default", "s", 1, 0, &test_gpu, workload(DB_OP_FWD, FT_BF16, 128, 1, 4, 16, 2048, 2048),
          RT_TIER_DEFAULT, "built-in default for sm_90 bf16", 0, 0 },
        { "winner too big: passed over", "s", 1, 0, &test_gpu,
          workload(DB_OP_FWD, FT_F16, 256, 1, 1, 8, 1024, 1024), RT_TIER_DEFAULT, "passed over", 0, 0 },
        { "another device's database", "o", 1, 0, &test_gpu, tuned, RT_TIER_DEFAULT, "built-in default", 0, 0 },
        { "empty database", NULL, 1, 0, &test_gpu, tuned, RT_TIER_DEFAULT, "built-in default", 0, 0 },
        { "no database", NULL, 0, 0, &test_gpu, tuned, RT_TIER_DEFAULT, "built-in default", 0, 0 },
        { "no database, shipped exact", NULL, 0, 1, &h100,
          workload(DB_OP_FWD, FT_BF16, 128, 0, 4, 16, 4096, 4096), RT_TIER_SHIPPED_EXACT, "shipped tuned table", 0, 0 },
        { "no database, shipped nearest", NULL, 0, 1, &h100,
          workload(DB_OP_BWD, FT_BF16, 64, 1, 3, 5, 777, 777), RT_TIER_SHIPPED_NEAREST, "nearest (tuned at", 0, 0 },
        { "database beats shipped", "s", 1, 1, &h100, tuned, RT_TIER_DB_EXACT, "database", 64, 1 },
        /* Workloads of another kind (grouped heads, the softcap): the same kind first, else the
         * nearest kind, compiled with the problem's own SOFTCAP. */
        { "grouped and capped, exact", "s", 1, 0, &test_gpu, featured(tuned, 4, 1), RT_TIER_DB_EXACT,
          "database exact", 128, 1 },
        { "capped alone: the plain one is nearer", "s", 1, 0, &test_gpu, featured(tuned, 0, 1), RT_TIER_DB_NEAREST,
          "tuned at batch=4 heads=16 seqlen_q=2048 seqlen_k=2048 on this GPU model, median 1.5 ms there); with the "
          "softcap (SOFTCAP=1)", 64, 1 },
        { "grouped alone: the grouped capped one is nearer", "s", 1, 0, &test_gpu, featured(tuned, 4, 0),
          RT_TIER_DB_NEAREST, "heads_k=4 softcap=1 on this GPU model, median 1.5 ms there); without the softcap "
          "(SOFTCAP=0)", 128, 1 },
        { "shipped table: other arch", NULL, 0, 1, &ampere,
          workload(DB_OP_FWD, FT_BF16, 128, 0, 4, 16, 4096, 4096), RT_TIER_DEFAULT, "built-in default for sm_80", 0, 0 },
    };
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    assert_non_null(shipped);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const lookup_case *c = &cases[i];
        db *user = NULL;
        if (c->use_db)
            user = make_db("lookup.db", !c->db_text ? NULL : c->db_text[0] == 's' ? synthetic : other_device);
        rt_choice choice;
        int db_error = -1;
        int rc = rt_choose(user, c->use_shipped ? shipped : NULL, c->device, &c->w, 0, &choice, &db_error, err,
                           sizeof err);
        printf("  %-30s -> %s\n", c->name, rc == 0 ? choice.why : err);
        assert_int_equal(rc, 0);
        assert_int_equal(db_error, 0);
        if (choice.tier != c->tier)
            fail_msg("%s: tier %d, expected %d (%s)", c->name, choice.tier, c->tier, choice.why);
        if (!strstr(choice.why, c->why))
            fail_msg("%s: '%s' does not say '%s'", c->name, choice.why, c->why);
        if (c->block_m) {
            assert_int_equal(choice.config.p[GEN_BLOCK_M], c->block_m);
            assert_int_equal(choice.config.p[GEN_EVEN_M], c->even_m);
        }
        /* A family for this op and dtype that runs on the device (fwd_wgmma or fwd_mma on sm_90). */
        assert_int_equal(choice.config.family->backward, c->w.op == DB_OP_BWD);
        assert_true(choice.config.family->dtypes & (1u << c->w.dtype));
        assert_int_equal(gen_check_arch(choice.config.family, c->device->arch, err, sizeof err), 0);
        assert_int_equal(choice.config.p[GEN_CAUSAL], c->w.causal);
        assert_int_equal(choice.config.p[GEN_SOFTCAP], c->w.softcap);
        assert_int_equal(gen_validate(&choice.config, c->device->smem_limit, err, sizeof err), 0);
        db_close(user);
    }
    db_close(shipped);
}

/* w as a variable-length batch of bucket varlen, or with a causal window of `left` keys. */
static db_workload of_kind(db_workload w, int varlen, int left)
{
    w.varlen = varlen;
    if (left)
        db_workload_set_mask(&w, 1, 0, left, 0);
    return w;
}

typedef struct kind_case {
    const char *name;
    const char *db_text;
    db_workload w;
    const char *why;            /* expected in choice.why */
    int block_n, persistent, varlen;
} kind_case;

/* Masks and variable-length batches are looked up by kind: a varlen batch takes a varlen winner
 * (the nearest bucket) as tuned, persistent walk and all, else the dense one one block a tile; a
 * dense problem never takes a varlen winner while a dense one is there; a window takes the
 * window's winner before the plain causal one of its exact lengths. */
static void lookup_by_mask_and_varlen(void **state)
{
    (void)state;
    const db_workload causal = workload(DB_OP_FWD, FT_BF16, 128, 1, 4, 16, 2048, 2048);
    const char *dense_only = "flashtune winners format 1\n"
        LINE("Test GPU", "sm_90", FWD_BF16_128_CAUSAL " seqlen_q=2048 seqlen_k=2048", "fwd_wgmma", "3123456789abcdef",
             FWD_WGMMA_CAUSAL("BLOCK_M=128 BLOCK_N=128 NUM_WARPS=12", "1", "0"));
    const kind_case cases[] = {
        { "varlen, its bucket", kinds, of_kind(causal, 3, 0), "varlen=3 on", 64, 1, 1 },
        { "varlen, the nearest bucket", kinds, of_kind(causal, 5, 0), "varlen=3 on", 64, 1, 1 },
        { "dense: the dense winner", kinds, causal, "database exact", 128, 1, 0 },
        { "window: the window's winner", kinds, of_kind(causal, 0, 512), "window=1 window_left=1024 window_right=0",
          128, 0, 0 },
        { "varlen without a varlen winner: dense, walking the packed batch", dense_only, of_kind(causal, 3, 0),
          "for a variable-length batch (VARLEN=1)", 128, 1, 1 },
    };
    char err[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const kind_case *c = &cases[i];
        db *user = make_db("kinds.db", c->db_text);
        rt_choice choice;
        int db_error = -1;
        const int rc = rt_choose(user, NULL, &test_gpu, &c->w, 0, &choice, &db_error, err, sizeof err);
        printf("  %-30s -> %s\n", c->name, rc == 0 ? choice.why : err);
        assert_int_equal(rc, 0);
        if (!strstr(choice.why, c->why))
            fail_msg("%s: '%s' does not say '%s'", c->name, choice.why, c->why);
        assert_int_equal(choice.config.p[GEN_BLOCK_N], c->block_n);
        assert_int_equal(choice.config.p[GEN_PERSISTENT], c->persistent);
        assert_int_equal(choice.config.p[GEN_VARLEN], c->varlen);
        assert_int_equal(choice.config.p[GEN_CAUSAL], 1);
        assert_int_equal(choice.config.p[GEN_EVEN_M], !c->varlen);
        assert_int_equal(gen_validate(&choice.config, test_gpu.smem_limit, err, sizeof err), 0);
        db_close(user);
    }
}

/* A dense winner in clusters (fwd_wgmma's MULTICAST) runs as tuned on its own kind, and without
 * them on a packed batch, whose adjacent query tiles may lie in two sequences, and on a problem of
 * one query tile (its pair would have none). */
static void a_cluster_winner_serves_a_packed_batch_alone(void **state)
{
    (void)state;
    const char *text = "flashtune winners format 1\n"
        LINE("Test GPU", "sm_90", "op=fwd dtype=bf16 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 "
             "seqlen_q=4096 seqlen_k=4096", "fwd_wgmma", "6123456789abcdef",
             "DTYPE=bf16 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=128 BLOCK_N=176 NUM_WARPS=12 NUM_STAGES=2 CAUSAL=0 "
             "CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=0 DQ_MODE=atomic OVERLAP=1 PINGPONG=0 PERSISTENT=0 MULTICAST=1");
    db *user = make_db("cluster.db", text);
    db_workload w = workload(DB_OP_FWD, FT_BF16, 128, 0, 4, 16, 4096, 4096);
    char err[512];
    for (int varlen = 0; varlen <= 3; varlen += 3) {
        w.varlen = varlen;
        rt_choice choice;
        int db_error = -1;
        assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &choice, &db_error, err, sizeof err), 0);
        printf("  varlen=%d -> %s\n", varlen, choice.why);
        assert_string_equal(choice.config.family->name, "fwd_wgmma");
        assert_int_equal(choice.config.p[GEN_MULTICAST], !varlen);
        assert_int_equal(choice.config.p[GEN_VARLEN], varlen != 0);
        assert_int_equal(strstr(choice.why, "MULTICAST=0") != NULL, varlen != 0);
        if (gen_validate(&choice.config, test_gpu.smem_limit, err, sizeof err) != 0)
            fail_msg("varlen=%d: %s", varlen, err);
    }
    w = workload(DB_OP_FWD, FT_BF16, 128, 0, 4, 16, 128, 4096);   /* one query tile of 128 rows */
    rt_choice one;
    int db_error = -1;
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &one, &db_error, err, sizeof err), 0);
    printf("  one query tile -> %s\n", one.why);
    assert_int_equal(one.config.p[GEN_MULTICAST], 0);
    assert_non_null(strstr(one.why, "one query tile, no pair to share loads with (MULTICAST=0)"));
    db_close(user);
}

/* A deterministic request keeps a float32 winner whose key slabs split the queries (bwd_mma's
 * SPLIT_QUERIES, which atomic dQ alone takes): dQ separate, the split dropped, the tiles kept. */
static void deterministic_keeps_split_query_winners(void **state)
{
    (void)state;
    const char *text = "flashtune winners format 1\n"
        LINE("Test GPU", "sm_90", "op=bwd dtype=f32 head_dim=64 head_dim_v=64 causal=0 batch=4 heads=16 "
             "seqlen_q=2048 seqlen_k=2048", "bwd_mma", "7123456789abcdef",
             "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=2 CAUSAL=0 "
             "CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic SPLIT_QUERIES=1");
    db *user = make_db("split.db", text);
    const db_workload w = workload(DB_OP_BWD, FT_F32, 64, 0, 4, 16, 2048, 2048);
    char err[512];
    int db_error = -1;
    rt_choice fast, fixed;
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &fast, &db_error, err, sizeof err), 0);
    assert_int_equal(fast.config.p[GEN_SPLIT_QUERIES], 1);
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, RT_CHOOSE_DETERMINISTIC, &fixed, &db_error, err, sizeof err),
                     0);
    printf("  deterministic -> %s\n", fixed.why);
    assert_string_equal(fixed.config.family->name, "bwd_mma");
    assert_int_equal(fixed.config.p[GEN_DQ_MODE], FT_DQ_SEPARATE);
    assert_int_equal(fixed.config.p[GEN_SPLIT_QUERIES], 0);
    assert_int_equal(fixed.config.p[GEN_BLOCK_M], 64);
    assert_int_equal(fixed.config.p[GEN_BLOCK_N], 64);
    assert_int_equal(fixed.config.p[GEN_NUM_WARPS], 8);
    db_close(user);
}

/* A float32 backward winner that splits Q and dO in shared memory (SPLIT_SMEM, the H200's at head
 * dim 64) serves each kind of request valid: as tuned; with TF32 allowed (no remainder planes,
 * the high parts rounded in place); deterministic (dQ in its own kernel, the tiles and the planes
 * kept). */
static void split_smem_winners_serve_every_kind(void **state)
{
    (void)state;
    const char *text = "flashtune winners format 1\n"
        LINE("Test GPU", "sm_90", "op=bwd dtype=f32 head_dim=64 head_dim_v=64 causal=0 batch=4 heads=16 "
             "seqlen_q=2048 seqlen_k=2048", "bwd_mma", "8123456789abcdef",
             "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=64 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=1 CAUSAL=0 "
             "CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic SPLIT_SMEM=1");
    db *user = make_db("split_smem.db", text);
    db_workload w = workload(DB_OP_BWD, FT_F32, 64, 0, 4, 16, 2048, 2048);
    char err[512];
    int db_error = -1;
    rt_choice got;
    for (int kind = 0; kind < 3; kind++) {
        w.tf32 = kind == 1;
        const int flags = kind == 2 ? RT_CHOOSE_DETERMINISTIC : 0;
        assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, flags, &got, &db_error, err, sizeof err), 0);
        printf("  %s -> %s\n", kind == 0 ? "as tuned" : kind == 1 ? "TF32 allowed" : "deterministic", got.why);
        assert_string_equal(got.config.family->name, "bwd_mma");
        assert_int_equal(got.config.p[GEN_SPLIT_SMEM], 1);
        assert_int_equal(got.config.p[GEN_ALLOW_TF32], kind == 1);
        assert_int_equal(got.config.p[GEN_DQ_MODE], kind == 2 ? FT_DQ_SEPARATE : FT_DQ_ATOMIC);
        assert_int_equal(got.config.p[GEN_BLOCK_M], 64);
        assert_int_equal(got.config.p[GEN_BLOCK_N], 128);
        assert_int_equal(got.config.p[GEN_NUM_WARPS], 8);
        assert_int_equal(gen_validate(&got.config, test_gpu.smem_limit, err, sizeof err), 0);
    }
    db_close(user);
}

/* ---- built-in defaults ------------------------------------------------------------------- */

/* The head-dim pairs no configuration of the family fits (registers or shared memory):
 * ft_attention_* returns FT_ERR_UNSUPPORTED for them, as flashtune.h says. */
static int known_unsupported(const rt_device *dev, const db_workload *w)
{
    const int mma = w->dtype == FT_F16 || w->dtype == FT_BF16;
    if (mma && w->op == DB_OP_FWD && w->head_dim_v == 256 && w->head_dim >= 64 && w->head_dim <= 128 &&
        strcmp(dev->arch, "sm_90") != 0)   /* fwd_wgmma takes them on Hopper */
        return 1;
    return w->dtype == FT_F64 && w->op == DB_OP_BWD && w->head_dim == 256 && w->head_dim_v == 256 &&
           dev->smem_limit < 160 * 1024;
}

static void defaults_cover_every_supported_problem(void **state)
{
    (void)state;
    const rt_device *devices[] = { &h100, &ampere, &ada };
    const int lengths[][2] = { { 1, 1 }, { 128, 128 }, { 77, 300 } };
    int checked = 0, unsupported = 0;
    for (size_t dev = 0; dev < 3; dev++)
        for (int op = 0; op < 2; op++)
            for (int dtype = 0; dtype < 4; dtype++)
                for (int i = 0; i < ln_head_dim_count; i++)
                    for (int j = 0; j < ln_head_dim_count; j++)
                        for (int causal = 0; causal < 2; causal++)
                            for (size_t l = 0; l < 3; l++) {
                                db_workload w = workload(op, dtype, ln_head_dims[i], causal, 2, 3, lengths[l][0],
                                                         lengths[l][1]);
                                w.head_dim_v = ln_head_dims[j];
                                gen_config c;
                                char why[512];
                                const int ok = rt_default_config(devices[dev], &w, 0, &c, why, sizeof why) == 0;
                                if (ok == known_unsupported(devices[dev], &w))
                                    fail_msg("%s %s op=%d D=%d Dv=%d: %s", devices[dev]->arch, gen_dtype_name(dtype),
                                             op, w.head_dim, w.head_dim_v, ok ? "fits, the list says it does not" : why);
                                if (!ok) {
                                    assert_non_null(strstr(why, "no "));
                                    unsupported++;
                                    continue;
                                }
                                assert_int_equal(c.p[GEN_EVEN_M] && (w.seqlen_q % c.p[GEN_BLOCK_M]), 0);
                                assert_int_equal(c.p[GEN_EVEN_N] && (w.seqlen_k % c.p[GEN_BLOCK_N]), 0);
                                checked++;
                            }
    printf("  %d default configurations valid, %d known unsupported\n", checked, unsupported);
}

/* On the H100 the built-in defaults take the Hopper families where the family's tiles for the
 * head dims fit (gen_family.head_dim_tiles): the backward at head dims 192 and 256 on their only
 * shape (64 keys, two consumers splitting the columns beside a producer), at 96 with a producer,
 * and the forward with a producer, on 64 keys where Q/K and V take more than 320 columns
 * together; the same at 256 and 192 over 128 when deterministic, dQ then ordered. */
static void builtin_defaults_take_the_hopper_families(void **state)
{
    (void)state;
    static const struct {
        int op, d, dv, deterministic;
        const char *family;
        int block_n, warps;
    } cases[] = {
        { DB_OP_BWD, 256, 256, 0, "bwd_wgmma", 64, 12 },  { DB_OP_BWD, 256, 256, 1, "bwd_wgmma", 64, 12 },
        { DB_OP_BWD, 96, 96, 0, "bwd_wgmma", 128, 12 },   { DB_OP_BWD, 128, 128, 0, "bwd_wgmma", 128, 8 },
        { DB_OP_BWD, 192, 128, 0, "bwd_wgmma", 64, 12 },  { DB_OP_BWD, 192, 128, 1, "bwd_wgmma", 64, 12 },
        { DB_OP_BWD, 192, 192, 0, "bwd_wgmma", 64, 12 },  { DB_OP_FWD, 128, 128, 0, "fwd_wgmma", 128, 12 },
        { DB_OP_FWD, 96, 96, 0, "fwd_wgmma", 128, 12 },   { DB_OP_FWD, 192, 128, 0, "fwd_wgmma", 128, 12 },
        { DB_OP_FWD, 256, 256, 0, "fwd_wgmma", 64, 12 },  { DB_OP_FWD, 192, 192, 0, "fwd_wgmma", 64, 12 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        db_workload w = workload(cases[i].op, FT_BF16, cases[i].d, 1, 2, 8, 1000, 1000);
        w.head_dim_v = cases[i].dv;
        gen_config c;
        char why[512];
        if (rt_default_config(&h100, &w, cases[i].deterministic, &c, why, sizeof why) != 0)
            fail_msg("op=%d D=%d Dv=%d: %s", cases[i].op, cases[i].d, cases[i].dv, why);
        assert_string_equal(c.family->name, cases[i].family);
        if (cases[i].block_n) {
            assert_int_equal(c.p[GEN_BLOCK_N], cases[i].block_n);
            assert_int_equal(c.p[GEN_NUM_WARPS], cases[i].warps);
        }
        if (cases[i].deterministic)
            assert_int_equal(c.p[GEN_DQ_MODE], FT_DQ_ORDERED);
    }
}

/* The built-in choice goes by each family's default_rank, never by its name: every direction
 * and dtype has a ranked family that takes it, the reference is never one, and on a GPU without
 * the Hopper families (an A100) the default is the next rank's. */
static void builtin_choice_goes_by_rank(void **state)
{
    (void)state;
    int count;
    const gen_family *const *all = gen_family_list(&count);
    for (int bwd = 0; bwd < 2; bwd++)
        for (int dtype = 0; dtype < 4; dtype++) {
            int ranked = 0;
            for (int i = 0; i < count; i++)
                ranked += all[i]->default_rank > 0 && all[i]->backward == bwd && (all[i]->dtypes & (1u << dtype));
            if (!ranked)
                fail_msg("no ranked %s family takes %s", bwd ? "backward" : "forward", gen_dtype_name(dtype));
        }
    assert_int_equal(gen_family_find("ref")->default_rank, 0);
    db_workload w = workload(DB_OP_FWD, FT_BF16, 128, 0, 2, 8, 1000, 1000);
    gen_config c;
    char why[512];
    assert_int_equal(rt_default_config(&ampere, &w, 0, &c, why, sizeof why), 0);
    assert_true(c.family->default_rank > gen_family_find("fwd_wgmma")->default_rank);
    assert_int_equal(rt_default_config(&h100, &w, 0, &c, why, sizeof why), 0);
    assert_int_equal(c.family->default_rank, 1);
}

/* Every head dim from 1 to 256 (multiples of 8 in f16 and bf16) runs: rt_choose looks up the
 * compiled head dims at or above it (ln_padded_head_dim) and compiles the choice padded to them
 * (a Hopper family's default to its 64 at least), DATA_DIM and DATA_DIM_V the problem's own where
 * they differ; the choice is valid on the device, fits the workspace, says so, and a tuned one
 * is the compiled problem's choice otherwise. */
static void padded_head_dims_choose_the_compiled_ones(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    const rt_device *devices[] = { &h100, &ampere };
    int checked = 0, small_on_hopper = 0;
    for (size_t dev = 0; dev < 2; dev++)
        for (int op = 0; op < 2; op++)
            for (int dtype = 0; dtype < 4; dtype++)
                for (int d = 1; d <= 256; d += dtype == FT_F16 || dtype == FT_BF16 ? 8 : 7)
                    for (int deterministic = 0; deterministic < 1 + op; deterministic++) {
                        const int dim = (dtype == FT_F16 || dtype == FT_BF16) && d % 8 ? d + 7 : d;
                        db_workload w = workload(op, dtype, dim, dim % 2, 2, 16, 1000, 1000);
                        w.head_dim_v = dim > 16 ? (dim / 2 + 7) / 8 * 8 : dim;
                        db_workload at = w;
                        at.head_dim = ln_padded_head_dim(w.head_dim);
                        at.head_dim_v = ln_padded_head_dim(w.head_dim_v);
                        if (known_unsupported(devices[dev], &at))
                            continue;
                        rt_choice got, plain;
                        int db_error;
                        if (rt_choose(NULL, shipped, devices[dev], &w, deterministic, &got, &db_error, err,
                                      sizeof err) != 0)
                            fail_msg("%s %s op=%d D=%d Dv=%d: %s", devices[dev]->arch, gen_dtype_name(dtype), op,
                                     w.head_dim, w.head_dim_v, err);
                        assert_int_equal(rt_choose(NULL, shipped, devices[dev], &at, deterministic, &plain, &db_error,
                                                   err, sizeof err), 0);
                        const gen_config *c = &got.config;
                        const int least = c->family->min_head_dim;   /* the Hopper families pad to 64 */
                        const int hd = at.head_dim > least ? at.head_dim : least;
                        const int hdv = at.head_dim_v > least ? at.head_dim_v : least;
                        assert_int_equal(c->p[GEN_HEAD_DIM], hd);
                        assert_int_equal(c->p[GEN_HEAD_DIM_V], hdv);
                        assert_int_equal(c->p[GEN_DATA_DIM], hd != w.head_dim ? w.head_dim : 0);
                        assert_int_equal(c->p[GEN_DATA_DIM_V], hdv != w.head_dim_v ? w.head_dim_v : 0);
                        assert_true(hd <= ln_accum_head_dim(w.head_dim) && hdv <= ln_accum_head_dim(w.head_dim_v));
                        if (gen_validate(c, devices[dev]->smem_limit, err, sizeof err) != 0)
                            fail_msg("%s op=%d D=%d Dv=%d: %s", got.why, op, w.head_dim, w.head_dim_v, err);
                        if (got.tier != RT_TIER_DEFAULT) {   /* a default may also weigh the data's dims (pad_from) */
                            gen_config unpadded = *c, plain_unpadded = plain.config;
                            unpadded.p[GEN_DATA_DIM] = unpadded.p[GEN_DATA_DIM_V] = 0;
                            plain_unpadded.p[GEN_DATA_DIM] = plain_unpadded.p[GEN_DATA_DIM_V] = 0;
                            assert_memory_equal(unpadded.p, plain_unpadded.p, sizeof unpadded.p);
                            assert_string_equal(c->family->name, plain.config.family->name);
                        }
                        const int padded = hd != w.head_dim || hdv != w.head_dim_v;
                        assert_int_equal(strstr(got.why, "padded to") != NULL, padded);
                        small_on_hopper += padded && least > at.head_dim;
                        checked++;
                    }
    assert_true(small_on_hopper > 0);   /* head dims up to 32 take the Hopper families at 64 on the H100 */
    /* Which: the backward from head dim 1, the forward from 24 (gen_family.pad_from); and with
     * no winner of their own head dims (the tables tune none at 32), the winners of the dims the
     * built-in choice pads them to (64) serve them, padded (tier nearest, never exact), where it
     * pads them past their own (head dim 16's forward runs mma.sync at 32: the default). */
    static const struct { int op, d, dv; const char *family; int head_dim, tuned; } small[] = {
        { DB_OP_FWD, 16, 16, "fwd_mma", 32, 0 },   { DB_OP_FWD, 16, 24, "fwd_wgmma", 64, 1 },
        { DB_OP_FWD, 32, 32, "fwd_wgmma", 64, 1 }, { DB_OP_BWD, 8, 8, "bwd_wgmma", 64, 1 },
        { DB_OP_BWD, 32, 16, "bwd_wgmma", 64, 1 }, { DB_OP_FWD, 40, 40, "fwd_wgmma", 64, 1 },
    };
    for (int i = 0; i < (int)(sizeof small / sizeof small[0]); i++) {
        db_workload w = workload(small[i].op, FT_BF16, small[i].d, 0, 2, 16, 4096, 4096);
        w.head_dim_v = small[i].dv;
        rt_choice got;
        int db_error;
        assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
        assert_string_equal(got.config.family->name, small[i].family);
        assert_int_equal(got.config.p[GEN_HEAD_DIM], small[i].head_dim);
        assert_int_equal(got.config.p[GEN_DATA_DIM], small[i].d < small[i].head_dim ? small[i].d : 0);
        if (got.tier != (small[i].tuned ? RT_TIER_SHIPPED_NEAREST : RT_TIER_DEFAULT))
            fail_msg("op=%d D=%d Dv=%d: tier %d (%s)", small[i].op, small[i].d, small[i].dv, got.tier, got.why);
    }
    printf("  %d choices for head dims 1 to 256, %d of them below 64 on a Hopper family\n", checked, small_on_hopper);
    db_close(shipped);
}

/* Grouped heads are a kind of their own (kinds.lua's grouped workloads, in the H200's table): a
 * grouped causal problem near them takes their winner, with the backward's split the problem's
 * own (db_workload_group_splits); a problem of plain heads at the same shape keeps the dense winners, and
 * another grouping takes the nearer ratio's. */
static void grouped_winners_serve_grouped_problems(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    int db_error;
    rt_choice got;
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    for (int op = DB_OP_FWD; op <= DB_OP_BWD; op++) {
        db_workload w = workload(op, FT_BF16, 128, 1, 1, 64, 8192, 8192);
        w.heads_k = 8;
        assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &got, &db_error, err, sizeof err), 0);
        printf("  64/8 %s -> %s\n", op ? "bwd" : "fwd", got.why);
        assert_int_equal(got.tier, RT_TIER_SHIPPED_EXACT);
        if (op == DB_OP_BWD)
            assert_int_equal(got.config.p[GEN_SPLITS], db_workload_group_splits(&w));
        w.seqlen_q = w.seqlen_k = 4096;   /* nearest: the grouped rows, not the dense ones */
        w.batch = 2;
        assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &got, &db_error, err, sizeof err), 0);
        printf("  64/8 N 4096 %s -> %s\n", op ? "bwd" : "fwd", got.why);
        assert_int_equal(got.tier, RT_TIER_SHIPPED_NEAREST);
        assert_non_null(strstr(got.why, "heads=64"));
        db_workload plain = workload(op, FT_BF16, 128, 1, 1, 64, 8192, 8192);
        assert_int_equal(rt_choose(NULL, shipped, &h200, &plain, 0, &got, &db_error, err, sizeof err), 0);
        printf("  64 plain heads %s -> %s\n", op ? "bwd" : "fwd", got.why);
        assert_null(strstr(got.why, "heads_k"));
        db_workload four = workload(op, FT_BF16, 128, 1, 4, 32, 8192, 8192);   /* 32/8: its own row */
        four.heads_k = 8;
        assert_int_equal(rt_choose(NULL, shipped, &h200, &four, 0, &got, &db_error, err, sizeof err), 0);
        assert_non_null(strstr(got.why, "heads=32"));
    }
    db_close(shipped);
}

/* The padded dims' winners serve head dim 32 on Hopper as the nearest, never exactly, even at a
 * tuned row's own shape; and only a family that pads 32 to 64 itself: a database's mma.sync
 * winner at 64 (a family that compiles 32) is passed over, a warpgroup one taken. */
#define FWD_BF16_64 "op=fwd dtype=bf16 head_dim=64 head_dim_v=64 causal=0 batch=1 heads=32 seqlen_q=512 seqlen_k=512"
#define P_MMA_64 "DTYPE=bf16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=4 NUM_STAGES=2 CAUSAL=0 " \
                 "CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic"
#define P_WGMMA_64 "DTYPE=bf16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=128 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=2 " \
                   "CAUSAL=0 CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic OVERLAP=1 PINGPONG=1 PERSISTENT=1"
static void padded_dims_winners_serve_as_nearest(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    int db_error;
    rt_choice got;
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    const db_workload w = workload(DB_OP_FWD, FT_BF16, 32, 0, 1, 32, 512, 512);   /* a head-dim-64 row's shape */
    assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &got, &db_error, err, sizeof err), 0);
    printf("  -> %s\n", got.why);
    assert_int_equal(got.tier, RT_TIER_SHIPPED_NEAREST);
    assert_non_null(strstr(got.why, "nearest (tuned at batch=1 heads=32 seqlen_q=512"));
    assert_null(strstr(got.why, " exact "));
    assert_non_null(strstr(got.why, "padded to 64, 64"));
    assert_int_equal(got.config.p[GEN_DATA_DIM], 32);
    db_close(shipped);
    db *mma = make_db("padded-mma.db", "flashtune winners format 1\n"
                      LINE("Test GPU", "sm_90", FWD_BF16_64, "fwd_mma", "8123456789abcdef", P_MMA_64));
    assert_int_equal(rt_choose(mma, NULL, &test_gpu, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_DEFAULT);
    db_close(mma);
    db *wgmma = make_db("padded-wgmma.db", "flashtune winners format 1\n"
                        LINE("Test GPU", "sm_90", FWD_BF16_64, "fwd_wgmma", "9123456789abcdef", P_WGMMA_64));
    assert_int_equal(rt_choose(wgmma, NULL, &test_gpu, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_DB_NEAREST);
    assert_string_equal(got.config.family->name, "fwd_wgmma");
    assert_int_equal(got.config.p[GEN_BLOCK_M], 128);
    assert_int_equal(got.config.p[GEN_HEAD_DIM], 64);
    assert_int_equal(got.config.p[GEN_DATA_DIM], 32);
    db_close(wgmma);
}

/* A variable-length batch: the shipped varlen winners where there are some (bf16 D 128 on the
 * H100 and the H200), run as tuned; elsewhere the dense choice of its longest lengths, compiled
 * VARLEN=1 with no length a tile multiple, persistent as chosen where its family walks a packed
 * batch's own tiles (fwd_wgmma, bwd_wgmma's 64-row tiles), else one block a tile (PERSISTENT=0);
 * valid on the device; every dtype, both directions, causal or not, deterministic too. */
static void variable_length_choices(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    const rt_device *devices[] = { &h100, &h200, &ampere };   /* the H200's backward winners: persistent */
    int packed_walks[2] = { 0, 0 };   /* persistent choices kept, by direction */
    for (size_t dev = 0; dev < 3; dev++)
        for (int op = 0; op < 2; op++)
            for (int dtype = 0; dtype < 4; dtype++)
                for (int causal = 0; causal < 2; causal++)
                    for (int deterministic = 0; deterministic < 1 + op; deterministic++) {
                        db_workload w = workload(op, dtype, 128, causal, 23, 16, 7718, 7718);
                        rt_choice dense, got;
                        int db_error;
                        assert_int_equal(rt_choose(NULL, shipped, devices[dev], &w, deterministic, &dense, &db_error,
                                                   err, sizeof err), 0);
                        w.varlen = 3;
                        assert_int_equal(rt_choose(NULL, shipped, devices[dev], &w, deterministic, &got, &db_error,
                                                   err, sizeof err), 0);
                        const gen_config *c = &got.config;
                        assert_int_equal(c->p[GEN_VARLEN], 1);
                        assert_int_equal(c->p[GEN_EVEN_M], 0);
                        assert_int_equal(c->p[GEN_EVEN_N], 0);
                        if (gen_validate(c, devices[dev]->smem_limit, err, sizeof err) != 0)
                            fail_msg("%s: %s", got.why, err);
                        assert_int_equal(got.tuned_varlen, devices[dev] != &ampere && dtype == FT_BF16);
                        if (got.tuned_varlen) {
                            assert_non_null(strstr(got.why, " varlen=3 on"));
                            continue;
                        }
                        assert_string_equal(c->family->name, dense.config.family->name);
                        const int walks = c->family->packed_walk && c->family->packed_walk(c->p);
                        const int dropped = !walks && (c->family->params & GEN_BIT(GEN_PERSISTENT));
                        packed_walks[op] += walks && c->p[GEN_PERSISTENT];
                        if (!walks)
                            assert_int_equal(c->p[GEN_PERSISTENT], 0);
                        for (int p = 0; p < GEN_PARAM_COUNT; p++)   /* the rest as the dense choice's */
                            if (p != GEN_VARLEN && p != GEN_EVEN_M && p != GEN_EVEN_N && (p != GEN_PERSISTENT || !dropped))
                                assert_int_equal(c->p[p], dense.config.p[p]);
                        if (!strstr(got.why, dropped ? "variable-length batch (VARLEN=1, PERSISTENT=0)"
                                                     : "variable-length batch (VARLEN=1)"))
                            fail_msg("%s: the packed batch's change not said", got.why);
                    }
    /* The Hopper winners' walks kept in both directions (a walk dropped: persistent_backward_refit). */
    assert_true(packed_walks[0] > 0);
    assert_true(packed_walks[1] > 0);
    db_close(shipped);
}

/* rt_rows16: f32 runs on tensor cores only where every row starts 16-byte aligned. */
static void rows16_decides_f32_tensor_cores(void **state)
{
    (void)state;
    static const char buf[64] __attribute__((aligned(16)));
    db_workload w = workload(DB_OP_FWD, FT_F32, 64, 0, 2, 4, 100, 100);
    const int64_t dense[3] = { 4 * 100 * 64, 100 * 64, 64 }, odd_rows[3] = { 4 * 100 * 66, 100 * 66, 66 };
    rt_tensor t = { "q", "q_stride", buf, dense, 4, 100, 64 };
    assert_int_equal(rt_rows16(&w, &t, 1), 1);
    t.ptr = buf + 4;   /* 4-byte aligned: a float's, not a row copy's */
    assert_int_equal(rt_rows16(&w, &t, 1), 0);
    t.ptr = buf;
    t.stride = odd_rows;   /* rows 264 bytes apart */
    assert_int_equal(rt_rows16(&w, &t, 1), 0);
    w.batch = 1;   /* a batch stride that is never stepped along does not count */
    const int64_t one_batch[3] = { 3, 100 * 64, 64 };
    t.stride = one_batch;
    assert_int_equal(rt_rows16(&w, &t, 1), 1);
    const rt_tensor lse = { "lse", NULL, buf + 4, NULL, 4, 0, 0 };   /* no strides: not a row copy's */
    assert_int_equal(rt_rows16(&w, &lse, 1), 1);
    assert_int_equal(rt_family_reads_rows16(gen_family_find("fwd_mma"), FT_F32), 1);
    assert_int_equal(rt_family_reads_rows16(gen_family_find("fwd_exact"), FT_F32), 0);
    assert_int_equal(rt_family_reads_rows16(gen_family_find("fwd_exact"), FT_F64), 0);
    assert_int_equal(rt_family_reads_rows16(gen_family_find("fwd_wgmma"), FT_BF16), 1);
    assert_int_equal(rt_family_reads_rows16(gen_family_find("bwd_mma"), FT_F32), 1);
    assert_int_equal(rt_family_reads_rows16(gen_family_find("bwd_exact"), FT_F32), 0);
}

/* A winner tuned with products rounded to TF32 serves a float32 problem without them (and the
 * other way), compiled and validated for the problem's ALLOW_TF32: one whose planes fit only
 * with TF32 (SPLIT_SMEM keeps high parts alone then) is passed over; one that fits both is
 * served. The winners files carry tf32 through import. */
#define FWD_F32_128_TF32 "op=fwd dtype=f32 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 seqlen_q=2048 " \
                         "seqlen_k=2048 tf32=1"
#define P_F32(stages) "DTYPE=f32 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=128 BLOCK_N=32 NUM_WARPS=8 NUM_STAGES=" stages \
                      " CAUSAL=0 CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 SPLIT_SMEM=1 ALLOW_TF32=1"
static void tf32_winners_serve_both_kinds(void **state)
{
    (void)state;
    db *user = make_db("tf32_4.db", "flashtune winners format 1\n"
                                     LINE("Test GPU", "sm_90", FWD_F32_128_TF32, "fwd_mma", "6123456789abcdef",
                                          P_F32("4")));
    db_workload w = workload(DB_OP_FWD, FT_F32, 128, 0, 4, 16, 2048, 2048);
    w.tf32 = 1;
    rt_choice got;
    int db_error;
    char err[512];
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_DB_EXACT);
    assert_int_equal(got.config.p[GEN_ALLOW_TF32], 1);
    w.tf32 = 0;   /* four stages and two planes: 256 KiB, more than the GPU has */
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_DEFAULT);
    assert_non_null(strstr(got.why, "passed over"));
    assert_int_equal(got.config.p[GEN_ALLOW_TF32], 0);
    assert_int_equal(gen_validate(&got.config, test_gpu.smem_limit, err, sizeof err), 0);
    db_close(user);
    /* The desc's flag keys float32 problems only, forward and backward (bwd_mma takes it too): a
     * 16-bit or float64 problem has no TF32 products to round. */
    ft_attention_desc d = { .struct_size = sizeof d, .batch = 4, .heads = 16, .seqlen_q = 2048, .seqlen_k = 2048,
                            .head_dim = 128, .head_dim_v = 128, .dtype = FT_F32, .allow_tf32 = 1 };
    const int64_t st[3] = { 16 * 2048 * 128, 2048 * 128, 128 };
    memcpy(d.q_stride, st, sizeof st), memcpy(d.k_stride, st, sizeof st);
    memcpy(d.v_stride, st, sizeof st), memcpy(d.o_stride, st, sizeof st);
    db_workload k;
    static const struct { ft_dtype dtype; int backward, tf32; } keyed[] = {
        { FT_F32, 0, 1 }, { FT_F32, 1, 1 }, { FT_BF16, 0, 0 }, { FT_F64, 0, 0 },
    };
    for (int i = 0; i < 4; i++) {
        d.dtype = keyed[i].dtype;
        assert_int_equal(rt_check_desc("f", &d, keyed[i].backward, &k, err, sizeof err), FT_OK);
        assert_int_equal(k.tf32, keyed[i].tf32);
    }
    user = make_db("tf32_2.db", "flashtune winners format 1\n"
                                LINE("Test GPU", "sm_90", FWD_F32_128_TF32, "fwd_mma", "7123456789abcdef",
                                     P_F32("2")));
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_DB_NEAREST);
    assert_int_equal(got.config.p[GEN_ALLOW_TF32], 0);
    assert_int_equal(got.config.p[GEN_SPLIT_SMEM], 1);
    assert_non_null(strstr(got.why, "float32's accuracy (ALLOW_TF32=0)"));
    db_close(user);
}

/* Decode shapes (at most 16 query rows, f16/bf16 forwards): the shipped decode winners serve them
 * and nothing else; without a database the built-in decode configuration splits the keys and packs
 * the group; a longer query, an f32 one and a backward get no decode kernel. */
static void decode_choices(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    int db_error;
    rt_choice got;
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    /* Tuned (bf16, 32 heads over 8, 8192 keys) and nearby: a shipped decode winner. */
    const int lengths[][2] = { { 1, 8192 }, { 1, 65536 }, { 4, 20000 } };
    for (int i = 0; i < 3; i++) {
        const db_workload w = featured(workload(DB_OP_FWD, FT_BF16, 128, 0, 3, 32, lengths[i][0], lengths[i][1]), 8, 0);
        assert_true(db_workload_decode(&w));
        assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
        assert_string_equal(got.config.family->name, "fwd_mma");
        assert_int_equal(got.config.p[GEN_PACK_GQA], 1);
        assert_int_equal(got.config.p[GEN_EVEN_M], 0);
        assert_true(got.tier == RT_TIER_SHIPPED_EXACT || got.tier == RT_TIER_SHIPPED_NEAREST);
        assert_null(strstr(got.why, "passed over"));   /* the decode winners come first by distance */
    }
    /* A prefill shape never gets a decode winner, though seqlen_q 17 is nearer to them: the nearest
     * prefill winner serves it (they are looked among before the nearest is chosen; it fell to
     * the built-in default when the decode winner was found first and passed over). So does a
     * non-causal grouped prefill (32 over 8 heads, N 2048). */
    db_workload w = featured(workload(DB_OP_FWD, FT_BF16, 128, 0, 1, 32, 17, 131072), 8, 0);
    assert_false(db_workload_decode(&w));
    assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_true(got.config.p[GEN_SPLITS] == 1 && !got.config.p[GEN_PACK_GQA]);
    assert_int_equal(got.tier, RT_TIER_SHIPPED_NEAREST);
    assert_null(strstr(got.why, "passed over"));
    w = featured(workload(DB_OP_FWD, FT_BF16, 128, 0, 2, 32, 2048, 2048), 8, 0);
    assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_true(got.tier == RT_TIER_SHIPPED_EXACT || got.tier == RT_TIER_SHIPPED_NEAREST);
    assert_int_equal(got.config.p[GEN_PACK_GQA], 0);
    /* Built in: 8 blocks (a K/V head each) split 32 ways (128 key tiles, 4 a split); 4 query rows
     * of a packed group in one warp's tile. */
    w = featured(workload(DB_OP_FWD, FT_BF16, 128, 0, 1, 32, 1, 8192), 8, 0);
    assert_int_equal(rt_choose(NULL, NULL, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_DEFAULT);
    const gen_config *c = &got.config;
    assert_string_equal(c->family->name, "fwd_mma");
    assert_int_equal(c->p[GEN_PACK_GQA], 1);
    assert_int_equal(c->p[GEN_BLOCK_M], 16);
    assert_int_equal(c->p[GEN_NUM_WARPS], 1);
    assert_int_equal(c->p[GEN_BLOCK_N], 64);
    assert_int_equal(c->p[GEN_SPLITS], 32);
    /* 16 rows of 4 heads: a 64-row tile of 4 warps; a large batch needs no split. */
    w = featured(workload(DB_OP_FWD, FT_F16, 64, 1, 64, 32, 16, 4096), 8, 0);
    assert_int_equal(rt_choose(NULL, NULL, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(c->p[GEN_BLOCK_M], 64);
    assert_int_equal(c->p[GEN_NUM_WARPS], 4);
    assert_int_equal(c->p[GEN_SPLITS], 1);
    assert_int_equal(c->p[GEN_CAUSAL], 1);
    /* Plain heads: nothing to pack. */
    w = workload(DB_OP_FWD, FT_BF16, 128, 0, 2, 16, 1, 100000);
    assert_int_equal(rt_choose(NULL, NULL, &ampere, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_string_equal(c->family->name, "fwd_mma");
    assert_int_equal(c->p[GEN_PACK_GQA], 0);
    assert_true(c->p[GEN_SPLITS] > 1);
    if (gen_validate(c, ampere.smem_limit, err, sizeof err) != 0)
        fail_msg("%s", err);
    /* No decode kernel for f32 or a backward: f32 runs on tensor cores as TF32 (on Hopper
     * fwd_wgmma, elsewhere fwd_mma; three products), unsplit, or on CUDA cores (fwd_exact) where
     * its rows are not 16-byte aligned. */
    w = workload(DB_OP_FWD, FT_F32, 128, 0, 2, 16, 1, 100000);
    assert_false(db_workload_decode(&w));
    assert_int_equal(rt_choose(NULL, NULL, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_string_equal(c->family->name, "fwd_wgmma");
    assert_int_equal(c->p[GEN_ALLOW_TF32], 0);
    if (gen_validate(c, h100.smem_limit, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(rt_choose(NULL, NULL, &ampere, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_string_equal(c->family->name, "fwd_mma");
    assert_int_equal(c->p[GEN_SPLITS], 1);
    assert_int_equal(rt_choose(NULL, NULL, &h100, &w, RT_CHOOSE_ANY_ROWS, &got, &db_error, err, sizeof err), 0);
    assert_string_equal(c->family->name, "fwd_exact");
    w.tf32 = 1;   /* the caller allows TF32: one product (ALLOW_TF32), compiled in */
    assert_int_equal(rt_choose(NULL, NULL, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_string_equal(c->family->name, "fwd_wgmma");
    assert_int_equal(c->p[GEN_ALLOW_TF32], 1);
    w.tf32 = 0;
    /* The f32 backward the same way: on Hopper bwd_wgmma_f32 at head dim 64 (three TF32 products)
     * and 128 (bfloat16 parts), bwd_mma at the others and below 64 (one product with tf32, but for
     * bwd_wgmma_f32's two consumers at head dim 128), bwd_exact where the rows are not 16-byte
     * aligned; its tiles the fitted defaults, valid on the GPU. Deterministic at 64: bwd_mma
     * (bwd_wgmma_f32 adds dQ by atomics only). */
    static const int bwd_dims[] = { 64, 128, 256, 32 };
    for (int i = 0; i < 4; i++) {
        const char *family = bwd_dims[i] == 64 || bwd_dims[i] == 128 ? "bwd_wgmma_f32" : "bwd_mma";
        w = workload(DB_OP_BWD, FT_F32, bwd_dims[i], 1, 2, 16, 1000, 1000);
        assert_int_equal(rt_choose(NULL, NULL, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
        assert_string_equal(c->family->name, family);
        assert_int_equal(c->p[GEN_ALLOW_TF32], 0);
        assert_int_equal(c->p[GEN_BF16_PARTS], bwd_dims[i] == 128);
        if (gen_validate(c, h100.smem_limit, err, sizeof err) != 0)
            fail_msg("head dim %d: %s", bwd_dims[i], err);
        if (bwd_dims[i] == 64) {
            assert_int_equal(c->p[GEN_BLOCK_M], 32);
            assert_int_equal(c->p[GEN_NUM_STAGES], 2);
            assert_int_equal(rt_choose(NULL, NULL, &h100, &w, RT_CHOOSE_DETERMINISTIC, &got, &db_error, err,
                                       sizeof err), 0);
            assert_string_equal(c->family->name, "bwd_mma");
            assert_int_equal(c->p[GEN_DQ_MODE], FT_DQ_SEPARATE);
        }
        assert_int_equal(rt_choose(NULL, NULL, &ampere, &w, 0, &got, &db_error, err, sizeof err), 0);
        assert_string_equal(c->family->name, "bwd_mma");
        w.tf32 = 1;
        assert_int_equal(rt_choose(NULL, NULL, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
        assert_string_equal(c->family->name, bwd_dims[i] == 128 ? "bwd_wgmma_f32" : family);
        assert_int_equal(c->p[GEN_ALLOW_TF32], 1);
        if (bwd_dims[i] == 64) {   /* one product: 64-row tiles in one slot (three: 32 rows in two) */
            assert_int_equal(c->p[GEN_BLOCK_M], 64);
            assert_int_equal(c->p[GEN_NUM_STAGES], 1);
        }
        if (bwd_dims[i] == 128) {   /* two consumers over 32-row tiles in one slot */
            assert_int_equal(c->p[GEN_NUM_WARPS], 12);
            assert_int_equal(c->p[GEN_BLOCK_M], 32);
            assert_int_equal(c->p[GEN_NUM_STAGES], 1);
        }
        assert_int_equal(rt_choose(NULL, NULL, &h100, &w, RT_CHOOSE_ANY_ROWS, &got, &db_error, err, sizeof err), 0);
        assert_string_equal(c->family->name, "bwd_exact");
        /* Deterministic and such rows (the plan variant of both): bwd_exact, dQ separate. */
        assert_int_equal(rt_choose(NULL, NULL, &h100, &w, rt_choose_flags(RT_DETERMINISTIC_ANY_ROWS), &got,
                                   &db_error, err, sizeof err), 0);
        assert_string_equal(c->family->name, "bwd_exact");
        assert_int_equal(c->p[GEN_DQ_MODE], FT_DQ_SEPARATE);
    }
    w = workload(DB_OP_BWD, FT_BF16, 128, 0, 2, 16, 1, 100000);
    assert_false(db_workload_decode(&w));
    db_close(shipped);
}

/* Few K/V heads: the backward shares each group's query heads over blocks, the smallest divisor
 * of the group that makes 256 blocks of 128-key tiles (masked: 1024, and at least 2), at most 8; on the H100
 * (bwd_wgmma) the choice takes it, deterministic (an ordered dQ) too; bwd_mma (sm_80) does not. */
static void group_split_choices(void **state)
{
    (void)state;
    db_workload w = featured(workload(DB_OP_BWD, FT_BF16, 128, 1, 2, 32, 4096, 4096), 1, 0);
    assert_int_equal(db_workload_group_splits(&w), 8);   /* causal, 64 blocks: at most 8 */
    w.heads_k = 8;
    assert_int_equal(db_workload_group_splits(&w), 2);   /* 512 blocks: 2 make 1024 */
    w.seqlen_q = w.seqlen_k = 8192;
    assert_int_equal(db_workload_group_splits(&w), 2);   /* 1024 blocks, but masked: at least 2 */
    w.seqlen_q = 2048;
    assert_int_equal(db_workload_group_splits(&w), 1);   /* a mask over fewer queries: 1024 blocks are enough */
    w = featured(workload(DB_OP_BWD, FT_BF16, 128, 1, 8, 32, 16, 4096), 1, 0);   /* speculative decoding */
    w.heads_k = 8;
    db_workload_set_mask(&w, 1, 1, -1, 0);
    assert_int_equal(db_workload_group_splits(&w), 1);   /* 2048 blocks of 16 queries: no split */
    w.batch = 1;
    assert_int_equal(db_workload_group_splits(&w), 1);   /* 256 blocks: the unmasked target */
    w = featured(workload(DB_OP_BWD, FT_BF16, 128, 1, 2, 32, 8192, 8192), 1, 0);
    w.heads_k = 8;
    w.seqlen_q = w.seqlen_k = 4096;
    w.causal = 0;
    assert_int_equal(db_workload_group_splits(&w), 1);   /* 512 blocks, 256 wanted */
    w.heads_k = 1;
    assert_int_equal(db_workload_group_splits(&w), 4);   /* 64 blocks: 4 make 256 */
    w.seqlen_k = INT_MAX;   /* 16777216 key tiles: no split (the tiles' count once overflowed int: 8) */
    assert_int_equal(db_workload_group_splits(&w), 1);
    w.seqlen_k = 4096;
    w = featured(workload(DB_OP_BWD, FT_F16, 64, 0, 1, 6, 300, 300), 1, 0);   /* 3 blocks, group 6 */
    assert_int_equal(db_workload_group_splits(&w), 6);
    w.heads_k = 0;
    assert_int_equal(db_workload_group_splits(&w), 1);
    w = featured(workload(DB_OP_FWD, FT_BF16, 128, 0, 1, 32, 4096, 4096), 1, 0);
    assert_int_equal(db_workload_group_splits(&w), 1);
    w = featured(workload(DB_OP_BWD, FT_BF16, 128, 0, 1, 32, 4096, 4096), 1, 0);
    w.varlen = 1;
    assert_int_equal(db_workload_group_splits(&w), 1);

    db *shipped = NULL;
    char err[512];
    int db_error;
    rt_choice got;
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    w = featured(workload(DB_OP_BWD, FT_BF16, 128, 1, 2, 32, 4096, 4096), 1, 0);
    assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_string_equal(got.config.family->name, "bwd_wgmma");
    assert_int_equal(got.config.p[GEN_SPLITS], 8);
    assert_non_null(strstr(got.why, "over 8 blocks a key tile (SPLITS=8)"));
    if (gen_validate(&got.config, h100.smem_limit, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 1, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.config.p[GEN_DQ_MODE], FT_DQ_ORDERED);   /* deterministic, split too */
    assert_int_equal(got.config.p[GEN_SPLITS], 8);
    if (gen_validate(&got.config, h100.smem_limit, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(rt_choose(NULL, shipped, &ampere, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_string_equal(got.config.family->name, "bwd_mma");
    db_close(shipped);
}

/* deterministic = 1: every supported backward gets a kernel whose dQ mode is repeatable (ordered
 * or separate), valid on the device; from the shipped H100 table, bwd_wgmma's winners move to the
 * family's tiles for an ordered dQ; the forward is left as it is. */
/* A deterministic request keeps a staggered winner's tuned tiles: the walk is made plain with the
 * fixed order (which refuses STAGGER), not the winner dropped for the built-in default. The H200's
 * table has such winners at head dim 128, non-causal, N 512-1024. */
static void deterministic_keeps_staggered_winners(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    int staggered = 0;
    for (int dtype = FT_F16; dtype <= FT_BF16; dtype++)
        for (int n = 512; n <= 2048; n *= 2)
            for (int batch = 1; batch <= 16384 / n; batch *= 2) {
                const db_workload w = workload(DB_OP_BWD, dtype, 128, 0, batch, 16, n, n);
                rt_choice fast, fixed;
                int db_error;
                assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &fast, &db_error, err, sizeof err), 0);
                if (!(fast.config.family->params & GEN_BIT(GEN_STAGGER)) || !fast.config.p[GEN_STAGGER])
                    continue;
                staggered++;
                assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 1, &fixed, &db_error, err, sizeof err), 0);
                if (strstr(fixed.why, "built-in default tiles"))
                    fail_msg("B %d N %d: %s", batch, n, fixed.why);
                assert_int_equal(fixed.config.p[GEN_DQ_MODE], FT_DQ_ORDERED);
                assert_int_equal(fixed.config.p[GEN_STAGGER], 0);
                assert_int_equal(fixed.config.p[GEN_DQ_FIRST], fast.config.p[GEN_DQ_FIRST]);
                assert_int_equal(gen_validate(&fixed.config, h200.smem_limit, err, sizeof err), 0);
            }
    assert_true(staggered > 0);
    db_close(shipped);
}

static void deterministic_choices(void **state)
{
    (void)state;
    const rt_device *devices[] = { &h100, &ampere, &ada };
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    int checked = 0, ordered = 0;
    for (size_t dev = 0; dev < 3; dev++)
        for (int dtype = 0; dtype < 4; dtype++)
            for (int i = 0; i < ln_head_dim_count; i++)
                for (int j = 0; j < ln_head_dim_count; j++)
                    for (int causal = 0; causal < 2; causal++) {
                        db_workload w = workload(DB_OP_BWD, dtype, ln_head_dims[i], causal, 2, 16, 4096, 4096);
                        w.head_dim_v = ln_head_dims[j];
                        if (known_unsupported(devices[dev], &w))
                            continue;
                        rt_choice fast, fixed;
                        int db_error;
                        assert_int_equal(rt_choose(NULL, shipped, devices[dev], &w, 0, &fast, &db_error, err,
                                                   sizeof err), 0);
                        if (rt_choose(NULL, shipped, devices[dev], &w, 1, &fixed, &db_error, err, sizeof err) != 0)
                            fail_msg("%s %s D=%d Dv=%d causal=%d: %s", devices[dev]->arch, gen_dtype_name(dtype),
                                     w.head_dim, w.head_dim_v, causal, err);
                        const int mode = fixed.config.p[GEN_DQ_MODE];
                        if (mode != FT_DQ_ORDERED && mode != FT_DQ_SEPARATE)
                            fail_msg("%s: DQ_MODE=%d is not deterministic", fixed.why, mode);
                        assert_int_equal(gen_validate(&fixed.config, devices[dev]->smem_limit, err, sizeof err), 0);
                        assert_non_null(strstr(fixed.why, "; deterministic (DQ_MODE="));
                        assert_int_equal(fixed.tier, fast.tier);
                        const int shipped_tier =
                            fast.tier == RT_TIER_SHIPPED_EXACT || fast.tier == RT_TIER_SHIPPED_NEAREST;
                        if (shipped_tier && !strcmp(fast.config.family->name, "bwd_mma")) {
                            /* bwd_mma's (f32) tuned winners become separate on their own tiles, or
                             * on the built-in default's where theirs take no separate dQ. */
                            assert_int_equal(dtype, FT_F32);
                            assert_string_equal(fixed.config.family->name, "bwd_mma");
                            int same_tiles = 1;
                            for (int t = GEN_BLOCK_M; t <= GEN_NUM_STAGES; t++)
                                same_tiles &= fixed.config.p[t] == fast.config.p[t];
                            if (!same_tiles && !strstr(fixed.why, "built-in default tiles"))
                                fail_msg("%s: other tiles than the tuned ones, unsaid", fixed.why);
                            assert_int_equal(mode, FT_DQ_SEPARATE);
                        } else if (shipped_tier && !strcmp(fast.config.family->name, "bwd_wgmma_f32")) {
                            /* bwd_wgmma_f32 adds dQ by atomics only: its tuned winners give way to
                             * the deterministic built-in default (bwd_mma, f32), which says so. */
                            assert_int_equal(dtype, FT_F32);
                            assert_string_equal(fixed.config.family->name, "bwd_mma");
                            assert_non_null(strstr(fixed.why, "built-in default tiles"));
                        } else if (shipped_tier) {
                            /* bwd_wgmma's tuned winners become ordered on the family's tiles for it:
                             * two consumers (on 128 keys, or splitting the columns of 64 at head
                             * dims 192 and 256) and a producer warpgroup, the tuned stages where
                             * they fit. */
                            assert_string_equal(fixed.config.family->name, fast.config.family->name);
                            const int keys = w.head_dim > 128 ? 64 : 128;
                            assert_int_equal(fixed.config.p[GEN_BLOCK_N], keys);
                            assert_int_equal(fixed.config.p[GEN_NUM_WARPS], 12);
                            const int stages = fast.config.p[GEN_NUM_STAGES] > 2 ? 2 : fast.config.p[GEN_NUM_STAGES];
                            assert_int_equal(fixed.config.p[GEN_NUM_STAGES], stages);
                            assert_int_equal(fixed.config.p[GEN_EVEN_N], w.seqlen_k % keys == 0);
                            assert_int_equal(mode, FT_DQ_ORDERED);
                            ordered++;
                        }
                        checked++;
                    }
    /* The forward does not change. */
    const db_workload fwd = workload(DB_OP_FWD, FT_BF16, 128, 1, 2, 16, 4096, 4096);
    rt_choice a, b;
    int db_error;
    assert_int_equal(rt_choose(NULL, shipped, &h100, &fwd, 0, &a, &db_error, err, sizeof err), 0);
    assert_int_equal(rt_choose(NULL, shipped, &h100, &fwd, 1, &b, &db_error, err, sizeof err), 0);
    assert_memory_equal(a.config.p, b.config.p, sizeof a.config.p);
    assert_string_equal(a.why, b.why);
    assert_true(ordered >= 4);   /* the shipped table's bf16/f16 D64/D128 workloads */
    printf("  %d deterministic backward choices, %d of them tuned bwd_wgmma winners made ordered\n", checked, ordered);
    db_close(shipped);
}

/* The deterministic choice moves bwd_wgmma's winner to 128-key tiles (gen_family.repeatable) and
 * refits the divisibility flags to the problem: a length that 64-key tiles divide and 128-key
 * tiles do not must come out with EVEN_N = 0 (and EVEN_M as the winner's query tiles give). */
static void deterministic_tiles_refit_even(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    const db_workload w = workload(DB_OP_BWD, FT_BF16, 64, 0, 2, 16, 4160, 4160);
    rt_choice fast, fixed;
    int db_error;
    assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &fast, &db_error, err, sizeof err), 0);
    assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 1, &fixed, &db_error, err, sizeof err), 0);
    assert_string_equal(fixed.config.family->name, "bwd_wgmma");
    assert_int_equal(fast.config.p[GEN_EVEN_N], 4160 % fast.config.p[GEN_BLOCK_N] == 0);
    assert_int_equal(fixed.config.p[GEN_BLOCK_N], 128);
    assert_int_equal(fixed.config.p[GEN_NUM_WARPS], 12);
    assert_int_equal(fixed.config.p[GEN_EVEN_N], 0);
    assert_int_equal(fixed.config.p[GEN_EVEN_M], 4160 % fixed.config.p[GEN_BLOCK_M] == 0);
    assert_int_equal(fixed.config.p[GEN_DQ_MODE], FT_DQ_ORDERED);
    db_close(shipped);
}

/* A persistent bwd_wgmma winner (PERSISTENT: dQ in any order) run where it cannot be persistent
 * or walks otherwise: made deterministic it keeps its tiles with an ordered dQ, one block a key
 * tile; for a variable-length batch it runs with VARLEN, persistent over the batch's own key
 * tiles, and a 128-row one (which cannot walk them) one block a key tile; for grouped K/V heads
 * it stays persistent, the group's heads split over its units. */
#define BWD_BF16_128 "op=bwd dtype=bf16 head_dim=128 head_dim_v=128 causal=1 batch=4 heads=16 seqlen_q=4096 seqlen_k=4096"
#define P_BWD_PERSISTENT "DTYPE=bf16 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=64 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=2 " \
                         "CAUSAL=1 CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic DQ_FIRST=1 DV_EARLY=1 PERSISTENT=1"
#define BWD_BF16_64 "op=bwd dtype=bf16 head_dim=64 head_dim_v=64 causal=1 batch=4 heads=16 seqlen_q=4096 seqlen_k=4096"
#define P_BWD_PERSISTENT_128 "DTYPE=bf16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=128 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=2 " \
                             "CAUSAL=1 CAUSAL_SKIP=1 EVEN_M=1 EVEN_N=1 DQ_MODE=atomic PERSISTENT=1"
static void persistent_backward_refit(void **state)
{
    (void)state;
    db *user = make_db("persistent.db", "flashtune winners format 1\n" LINE("Test GPU", "sm_90", BWD_BF16_128,
                       "bwd_wgmma", "6123456789abcdef", P_BWD_PERSISTENT));
    const db_workload w = workload(DB_OP_BWD, FT_BF16, 128, 1, 4, 16, 4096, 4096);
    rt_choice fast, fixed, packed;
    int db_error;
    char err[512];
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &fast, &db_error, err, sizeof err), 0);
    assert_int_equal(fast.tier, RT_TIER_DB_EXACT);
    assert_int_equal(fast.config.p[GEN_PERSISTENT], 1);
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 1, &fixed, &db_error, err, sizeof err), 0);
    assert_int_equal(fixed.tier, RT_TIER_DB_EXACT);
    assert_int_equal(fixed.config.p[GEN_DQ_MODE], FT_DQ_ORDERED);
    assert_int_equal(fixed.config.p[GEN_PERSISTENT], 0);
    assert_int_equal(fixed.config.p[GEN_DQ_FIRST], 1);
    assert_int_equal(gen_validate(&fixed.config, test_gpu.smem_limit, err, sizeof err), 0);
    db_workload v = w;
    v.varlen = 3;
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &v, 0, &packed, &db_error, err, sizeof err), 0);
    assert_int_equal(packed.config.p[GEN_VARLEN], 1);
    assert_int_equal(packed.config.p[GEN_PERSISTENT], 1);
    assert_int_equal(gen_validate(&packed.config, test_gpu.smem_limit, err, sizeof err), 0);
    db *rows128 = make_db("persistent128.db", "flashtune winners format 1\n" LINE("Test GPU", "sm_90", BWD_BF16_64,
                          "bwd_wgmma", "7123456789abcdef", P_BWD_PERSISTENT_128));
    db_workload v64 = workload(DB_OP_BWD, FT_BF16, 64, 1, 4, 16, 4096, 4096);
    v64.varlen = 3;
    assert_int_equal(rt_choose(rows128, NULL, &test_gpu, &v64, 0, &packed, &db_error, err, sizeof err), 0);
    assert_int_equal(packed.config.p[GEN_BLOCK_M], 128);
    assert_int_equal(packed.config.p[GEN_VARLEN], 1);
    assert_int_equal(packed.config.p[GEN_PERSISTENT], 0);
    assert_non_null(strstr(packed.why, "(VARLEN=1, PERSISTENT=0)"));
    assert_int_equal(gen_validate(&packed.config, test_gpu.smem_limit, err, sizeof err), 0);
    db_close(rows128);
    /* A packed batch of very many sequences beside a long one: more units than an int numbers
     * (2^20 keys in 128-key tiles x 70,000 sequences x 16 heads), one block a tile. */
    db_workload many = v;
    many.batch = 70000;
    many.seqlen_q = many.seqlen_k = 1 << 20;
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &many, 0, &packed, &db_error, err, sizeof err), 0);
    assert_int_equal(packed.config.p[GEN_VARLEN], 1);
    assert_int_equal(packed.config.p[GEN_PERSISTENT], 0);
    assert_non_null(strstr(packed.why, "9175040000 units, past an int: one block a tile (PERSISTENT=0)"));
    assert_int_equal(gen_validate(&packed.config, test_gpu.smem_limit, err, sizeof err), 0);
    db_workload g = w;   /* grouped K/V heads: persistent still, each group's heads split */
    g.heads_k = 4;
    rt_choice grouped;
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &g, 0, &grouped, &db_error, err, sizeof err), 0);
    assert_int_equal(grouped.config.p[GEN_PERSISTENT], 1);
    assert_int_equal(grouped.config.p[GEN_SPLITS], db_workload_group_splits(&g));
    assert_int_equal(gen_validate(&grouped.config, test_gpu.smem_limit, err, sizeof err), 0);
    db_close(user);
}

/* Speculative decoding (16 query rows, causal bottom-right, 32 over 8 heads): the H200's tuned
 * winners serve it (on the H100 too, the same arch), a group's 64 rows in one tile; the one-row
 * winners (a 16-row tile) never do. One-row decode still takes the non-causal decode winners, and
 * causal decode of fewer rows the winners of its own tile. */
static void speculative_decoding_served_by_its_winners(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    int db_error;
    rt_choice got;
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    db_workload w = featured(workload(DB_OP_FWD, FT_BF16, 128, 1, 8, 32, 16, 4096), 8, 0);
    db_workload_set_mask(&w, 1, 1, -1, -1);
    assert_true(db_workload_decode(&w) && w.bottom_right);
    const rt_device *devices[] = { &h200, &h100 };
    for (int i = 0; i < 2; i++) {
        assert_int_equal(rt_choose(NULL, shipped, devices[i], &w, 0, &got, &db_error, err, sizeof err), 0);
        printf("  %s -> %s\n", devices[i]->name, got.why);
        assert_int_equal(got.tier, RT_TIER_SHIPPED_EXACT);
        assert_string_equal(got.config.family->name, "fwd_mma");
        assert_int_equal(got.config.p[GEN_PACK_GQA], 1);
        assert_int_equal(got.config.p[GEN_BLOCK_M], 64);
        assert_int_equal(got.config.p[GEN_CAUSAL], 1);
        assert_true(got.config.p[GEN_SPLITS] > 1);
    }
    /* Between the tuned lengths: the nearest of them. */
    w.seqlen_k = 8100;   /* not a multiple of the winners' 64 keys */
    assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_SHIPPED_NEAREST);
    assert_non_null(strstr(got.why, "seqlen_q=16"));
    assert_int_equal(got.config.p[GEN_EVEN_N], 0);
    const db_workload one_row = featured(workload(DB_OP_FWD, FT_BF16, 128, 0, 8, 32, 1, 8192), 8, 0);
    assert_int_equal(rt_choose(NULL, shipped, &h200, &one_row, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_SHIPPED_EXACT);
    assert_int_equal(got.config.p[GEN_CAUSAL], 0);
    /* Causal decode whose rows fill a smaller tile (one row, or 8, of 4 heads; 16 rows of one
     * head) is not served the drafts' 64-row tile. Where the one-row winners fill its tile (16
     * rows) they serve it, compiled causal (the diagonal bottom-right hides keys of the last tile
     * only: the same work; on the H200 1.02-1.17x the fastest where the built-in choice ran
     * 1.23-1.38x, notes/tuning.md, section 16); a tile of 32 rows has no winner: the built-in
     * choice, sized to its rows. */
    const struct {
        int heads_k, seqlen_q, tier, block_m;   /* block_m: the built-in choice's */
    } smaller[] = { { 8, 1, RT_TIER_SHIPPED_NEAREST, 0 }, { 8, 8, RT_TIER_DEFAULT, 32 },
                    { 0, 16, RT_TIER_SHIPPED_NEAREST, 0 } };   /* heads_k 0: no grouping */
    for (int i = 0; i < 3; i++) {
        db_workload v = featured(workload(DB_OP_FWD, FT_BF16, 128, 1, 8, 32, smaller[i].seqlen_q, 4096),
                                 smaller[i].heads_k, 0);
        db_workload_set_mask(&v, 1, 1, -1, -1);
        if (rt_choose(NULL, shipped, &h200, &v, 0, &got, &db_error, err, sizeof err) != 0)
            fail_msg("case %d: %s", i, err);
        printf("  causal decode case %d -> %s\n", i, got.why);
        if (got.tier != smaller[i].tier || (smaller[i].block_m && got.config.p[GEN_BLOCK_M] != smaller[i].block_m))
            fail_msg("case %d: tier %d, BLOCK_M %d (%s); expected tier %d", i, got.tier, got.config.p[GEN_BLOCK_M],
                     got.why, smaller[i].tier);
        assert_int_equal(got.config.p[GEN_CAUSAL], 1);
        if (smaller[i].tier != RT_TIER_DEFAULT) {
            assert_non_null(strstr(got.why, "seqlen_q=1 "));
            assert_int_not_equal(got.config.p[GEN_BLOCK_M], 64);
        }
    }
    /* The other way: 16 rows of 4 heads without a mask (a 64-row tile, as the drafts') take the
     * drafts' winners, compiled unmasked (not measured: no such problem was timed). */
    db_workload open = featured(workload(DB_OP_FWD, FT_BF16, 128, 0, 8, 32, 16, 4096), 8, 0);
    assert_int_equal(rt_choose(NULL, shipped, &h200, &open, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_SHIPPED_NEAREST);   /* the mask differs: never exact */
    assert_non_null(strstr(got.why, "seqlen_q=16"));
    assert_non_null(strstr(got.why, "bottom_right=1"));
    assert_int_equal(got.config.p[GEN_BLOCK_M], 64);
    assert_int_equal(got.config.p[GEN_CAUSAL], 0);
    db_close(shipped);
}

/* A decode winner of the other mask that does not fit the problem's (head dim 256: 16 x 32 tiles of
 * one warp take two more registers a thread masked than unmasked, over the limit) gives way to the
 * nearest winner of the problem's own mask in the same database, not to the next tier: here a
 * causal bottom-right draft without grouping, farther in kind (its group ratio) than the unmasked
 * one-row winner of 32 over 4 heads. */
#define DECODE_BF16_256 "op=fwd dtype=bf16 head_dim=256 head_dim_v=256 batch=4 heads=32 seqlen_k=8192"
#define P_DECODE_256(block_n, causal) \
    "DTYPE=bf16 HEAD_DIM=256 HEAD_DIM_V=256 BLOCK_M=16 BLOCK_N=" block_n " NUM_WARPS=1 NUM_STAGES=2 CAUSAL=" causal \
    " CAUSAL_SKIP=1 EVEN_M=0 EVEN_N=1 DQ_MODE=atomic SPLITS=8 PACK_GQA=1"
static void other_mask_unfit_gives_way_to_own_mask(void **state)
{
    (void)state;
    db *user = make_db("unfit-mask.db", "flashtune winners format 1\n"
        LINE("Test GPU", "sm_90", DECODE_BF16_256 " causal=0 heads_k=4 seqlen_q=1", "fwd_mma", "6123456789abcdef",
             P_DECODE_256("32", "0"))
        LINE("Test GPU", "sm_90", DECODE_BF16_256 " causal=1 bottom_right=1 seqlen_q=16", "fwd_mma",
             "7123456789abcdef", P_DECODE_256("16", "1")));
    db_workload w = featured(workload(DB_OP_FWD, FT_BF16, 256, 1, 4, 32, 2, 8192), 4, 0);
    db_workload_set_mask(&w, 1, 1, -1, 0);
    assert_true(db_workload_decode_any_mask(&w));
    char err[512];
    int db_error;
    rt_choice got;
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &got, &db_error, err, sizeof err), 0);
    printf("  -> %s\n", got.why);
    assert_int_equal(got.tier, RT_TIER_DB_NEAREST);
    assert_int_equal(got.config.p[GEN_BLOCK_N], 16);
    assert_int_equal(got.config.p[GEN_CAUSAL], 1);
    /* unmasked, the same problem takes the nearer unmasked winner as tuned */
    db_workload_set_mask(&w, 0, 0, -1, -1);
    assert_int_equal(rt_choose(user, NULL, &test_gpu, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.config.p[GEN_BLOCK_N], 32);
    assert_int_equal(got.config.p[GEN_CAUSAL], 0);
    db_close(user);
}

/* Two GPUs of one arch ship winners (db/tuned/: the H100's, the H200's backward): each takes its
 * own; another board of a model (an H100 PCIe) takes its model's, not the other model's. */
static void shipped_tables_per_gpu(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    const rt_device pcie = { "NVIDIA H100 PCIe", "sm_90", 232448, 114 };
    const db_workload w = workload(DB_OP_BWD, FT_BF16, 128, 1, 4, 16, 4096, 4096);
    rt_choice got;
    int db_error;
    assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_SHIPPED_EXACT);
    assert_non_null(strstr(got.why, "on this GPU model"));
    assert_int_equal(rt_choose(NULL, shipped, &pcie, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_int_equal(got.tier, RT_TIER_SHIPPED_EXACT);
    assert_non_null(strstr(got.why, "on NVIDIA H100 80GB HBM3, same arch"));
    assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &got, &db_error, err, sizeof err), 0);
    assert_non_null(strstr(got.why, "on this GPU model"));
    db_close(shipped);
}

/* Grids that leave SMs idle, on an H200 (its table holds a batch of one at head dims 64 and 128,
 * N 512 to 2048): such a problem is served by a winner tuned at a batch of one, never by the
 * full grid's of its length (at B 32, N 512 that kernel's 192-row tiles made 96 blocks for 132
 * SMs, and ran 16 % slower there: bench/RESULTS.md, 2026-11-30); and a grid of two waves is not
 * served the batch of one's 64-row tiles. */
static void small_grids_served_by_small_grids(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    const struct {
        db_workload w;
        int tier;               /* RT_TIER_* */
        const char *why;        /* expected in choice.why */
        int not_block_m;        /* the full grid's tile, which must not be served; 0: unchecked */
    } cases[] = {
        { workload(DB_OP_FWD, FT_BF16, 64, 0, 1, 32, 512, 512), RT_TIER_SHIPPED_EXACT, "exact", 192 },
        { workload(DB_OP_FWD, FT_F16, 64, 1, 1, 32, 1024, 1024), RT_TIER_SHIPPED_EXACT, "exact", 0 },
        { workload(DB_OP_BWD, FT_BF16, 64, 1, 1, 32, 512, 512), RT_TIER_SHIPPED_EXACT, "exact", 0 },
        { workload(DB_OP_BWD, FT_F16, 128, 0, 1, 16, 2048, 2048), RT_TIER_SHIPPED_EXACT, "exact", 0 },
        /* the shortest tuned length, 256 tokens (the nearest lengths' winners ran 1.07-1.28x the
         * fastest there: notes/tuning.md, section 14) */
        { workload(DB_OP_FWD, FT_BF16, 128, 1, 1, 16, 256, 256), RT_TIER_SHIPPED_EXACT, "exact", 0 },
        { workload(DB_OP_BWD, FT_F16, 64, 0, 1, 32, 256, 256), RT_TIER_SHIPPED_EXACT, "exact", 0 },
        /* between the tuned lengths and batches, a grid under a wave: the nearest batch of one */
        { workload(DB_OP_FWD, FT_BF16, 128, 0, 1, 16, 1536, 1536), RT_TIER_SHIPPED_NEAREST,
          "tuned at batch=1 heads=16 seqlen_q=", 0 },
        /* 128 query tiles, a wave: the batch of one whose grid is as full (at 512 tokens, 32
         * heads), before the one of its own length (1024, twice the tiles) */
        { workload(DB_OP_FWD, FT_BF16, 64, 1, 2, 8, 1024, 1024), RT_TIER_SHIPPED_NEAREST,
          "tuned at batch=1 heads=32 seqlen_q=512", 0 },
        /* two waves (256 tiles): not the batch of one's 64-row tiles made for idle SMs, which batch
         * x heads took (the batch of one at 512, 1.66x the fastest there on the H200; notes/tuning.md,
         * section 14), but the batch of eight at 256 tokens, as full a grid, whose kernel (64 x 64,
         * 8 warps, persistent) the replay's ground truth timed the fastest there (section 18) */
        { workload(DB_OP_FWD, FT_BF16, 128, 1, 4, 16, 512, 512), RT_TIER_SHIPPED_NEAREST,
          "tuned at batch=8 heads=16 seqlen_q=256", 0 },
        { workload(DB_OP_BWD, FT_BF16, 64, 0, 1, 24, 700, 700), RT_TIER_SHIPPED_NEAREST, "tuned at batch=1 heads=32",
          0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_choice got;
        int db_error;
        assert_int_equal(rt_choose(NULL, shipped, &h200, &cases[i].w, 0, &got, &db_error, err, sizeof err), 0);
        printf("  case %zu -> %s\n", i, got.why);
        if (got.tier != cases[i].tier || !strstr(got.why, cases[i].why))
            fail_msg("case %zu: tier %d, '%s' (expected tier %d, '%s')", i, got.tier, got.why, cases[i].tier,
                     cases[i].why);
        if (cases[i].not_block_m)
            assert_int_not_equal(got.config.p[GEN_BLOCK_M], cases[i].not_block_m);
    }
    db_close(shipped);
}

/* Every head-dim pair and dtype the Hopper families serve has tuned winners on the H200, in both
 * directions and both masks: a full grid (B 4, H 16, N 4096) finds one of its own pair in the
 * shipped table, never the built-in default. Float32 at head dim 96 has no backward here: no
 * family takes it unpadded and a tuned kernel pads none (the default runs it padded to 128). */
static void every_served_head_dim_pair_has_tuned_winners(void **state)
{
    (void)state;
    db *shipped = NULL;
    char err[512];
    assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
    static const struct {
        int dtype, tf32, d, dv, backward;   /* backward: 1 the backward too */
    } pairs[] = {
        { FT_BF16, 0, 64, 64, 1 },   { FT_BF16, 0, 96, 96, 1 },   { FT_BF16, 0, 128, 128, 1 },
        { FT_BF16, 0, 192, 128, 1 }, { FT_BF16, 0, 192, 192, 1 }, { FT_BF16, 0, 256, 256, 1 },
        { FT_F16, 0, 64, 64, 1 },    { FT_F16, 0, 96, 96, 1 },    { FT_F16, 0, 128, 128, 1 },
        { FT_F16, 0, 192, 128, 1 },  { FT_F16, 0, 192, 192, 1 },  { FT_F16, 0, 256, 256, 1 },
        { FT_F32, 0, 64, 64, 1 },    { FT_F32, 0, 96, 96, 0 },    { FT_F32, 0, 128, 128, 1 },
        { FT_F32, 1, 64, 64, 1 },    { FT_F32, 1, 96, 96, 0 },    { FT_F32, 1, 128, 128, 1 },
    };
    int checked = 0;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        for (int op = DB_OP_FWD; op <= (pairs[i].backward ? DB_OP_BWD : DB_OP_FWD); op++)
            for (int causal = 0; causal < 2; causal++) {
                db_workload w = workload(op, pairs[i].dtype, pairs[i].d, causal, 4, 16, 4096, 4096);
                w.head_dim_v = pairs[i].dv;
                w.tf32 = pairs[i].tf32;
                rt_choice got;
                int db_error;
                assert_int_equal(rt_choose(NULL, shipped, &h200, &w, 0, &got, &db_error, err, sizeof err), 0);
                if (got.tier != RT_TIER_SHIPPED_EXACT && got.tier != RT_TIER_SHIPPED_NEAREST)
                    fail_msg("%s dtype %d%s head dims %d/%d%s: %s", op == DB_OP_FWD ? "forward" : "backward",
                             pairs[i].dtype, pairs[i].tf32 ? " (TF32 allowed)" : "", pairs[i].d, pairs[i].dv,
                             causal ? " causal" : "", got.why);
                assert_int_equal(got.config.p[GEN_HEAD_DIM], pairs[i].d);
                assert_int_equal(got.config.p[GEN_HEAD_DIM_V], pairs[i].dv);
                checked++;
            }
    printf("  %d problems, each served a tuned winner of its own head dims\n", checked);
    db_close(shipped);
}

/* ---- arguments ------------------------------------------------------------------------------- */

/* A valid call's arguments; cases change one thing. */
typedef struct call {
    ft_attention_desc d;
    const void *q, *k, *v, *o, *lse, *dout;
    void *dq, *dk, *dv;
} call;

static call valid_call(ft_dtype dtype)
{
    call c;
    memset(&c, 0, sizeof c);
    c.d = (ft_attention_desc){ .struct_size = sizeof(ft_attention_desc), .batch = 2, .heads = 4, .seqlen_q = 100,
                               .seqlen_k = 60, .head_dim = 64, .head_dim_v = 64, .dtype = dtype };
    const int64_t q_st[3] = { 4 * 100 * 64, 100 * 64, 64 }, k_st[3] = { 4 * 60 * 64, 60 * 64, 64 };
    memcpy(c.d.q_stride, q_st, sizeof q_st);
    memcpy(c.d.o_stride, q_st, sizeof q_st);
    memcpy(c.d.k_stride, k_st, sizeof k_st);
    memcpy(c.d.v_stride, k_st, sizeof k_st);
    /* Fake device addresses: never dereferenced, the driver is missing. */
    c.q = (void *)0x100000;
    c.k = (void *)0x200000;
    c.v = (void *)0x300000;
    c.o = (void *)0x400000;
    c.lse = (void *)0x500000;
    c.dout = (void *)0x600000;
    c.dq = (void *)0x700000;
    c.dk = (void *)0x800000;
    c.dv = (void *)0x900000;
    return c;
}

typedef struct arg_case {
    const char *name;
    ft_dtype dtype;
    int backward;
    void (*change)(call *c);
    ft_status status;
    const char *message;        /* expected in ft_last_error */
} arg_case;

static void no_desc(call *c) { (void)c; }
static void batch0(call *c) { c->d.batch = 0; }
static void heads_neg(call *c) { c->d.heads = -3; }
static void seqlen_q0(call *c) { c->d.seqlen_q = 0; }
static void seqlen_k0(call *c) { c->d.seqlen_k = 0; }
static void head_dim300(call *c) { c->d.head_dim = 300; }
static void head_dim0(call *c) { c->d.head_dim = 0; }
static void head_dim_v257(call *c) { c->d.head_dim_v = 257; }
static void head_dim13(call *c) { c->d.head_dim = 13; }
static void head_dim_v20(call *c) { c->d.head_dim_v = 20; }
static void dtype7(call *c) { c->d.dtype = (ft_dtype)7; }
static void causal2(call *c) { c->d.causal = 2; }
static void scale_nan(call *c) { c->d.softmax_scale = NAN; }
static void scale_neg(call *c) { c->d.softmax_scale = -0.125f; }
static void heads_huge(call *c) { c->d.heads = 70000; }
static void q_null(call *c) { c->q = NULL; }
static void k_null(call *c) { c->k = NULL; }
static void v_null(call *c) { c->v = NULL; }
static void o_null(call *c) { c->o = NULL; }
static void lse_null(call *c) { c->lse = NULL; }
static void dout_null(call *c) { c->dout = NULL; }
static void dq_null(call *c) { c->dq = NULL; }
static void dk_null(call *c) { c->dk = NULL; }
static void dv_null(call *c) { c->dv = NULL; }
static void seq_stride_short(call *c) { c->d.q_stride[2] = 32; }
static void head_overlap(call *c) { c->d.k_stride[1] = 64; }
static void stride_negative(call *c) { c->d.v_stride[0] = -1; }
static void batch_overlap(call *c) { c->d.o_stride[0] = 1000; }
static void q_misaligned(call *c) { c->q = (const char *)c->q + 8; }
static void q_odd(call *c) { c->q = (const char *)c->q + 1; }
static void stride_not8(call *c) { c->d.k_stride[2] = 68; c->d.k_stride[1] = 68 * 60; c->d.k_stride[0] = 4 * 68 * 60; }
static void lse_odd(call *c) { c->lse = (const char *)c->lse + 2; }
static void align2(call *c) { c->d.causal_align = 2; }
static void align_neg(call *c) { c->d.causal = 1, c->d.causal_align = -1; }
static void window2(call *c) { c->d.window = 2; }
static void deterministic3(call *c) { c->d.deterministic = 3; }
static void heads_k_neg(call *c) { c->d.heads_k = -1; }
static void softcap_neg(call *c) { c->d.softcap = -0.5f; }
static void softcap_inf(call *c) { c->d.softcap = INFINITY; }
static void softcap_30(call *c) { c->d.softcap = 30.f; }
static void reserved1(call *c) { c->d.reserved = 1; }
static void prefix_sums_checked_dense(call *c) { c->d.prefix_sums_checked = 1; }
static void allow_tf32_2(call *c) { c->d.allow_tf32 = 2; }
/* A variable-length batch of 2 sequences packed [total, H, D]: 150 query rows, 90 key rows. */
static void varlen_packed(call *c)
{
    c->d.cu_seqlens_q = (const int32_t *)0xa00000;
    c->d.cu_seqlens_k = (const int32_t *)0xb00000;
    c->d.total_q = 150;
    c->d.total_k = 90;
    const int64_t q_st[3] = { 0, 64, 4 * 64 };
    memcpy(c->d.q_stride, q_st, sizeof q_st);
    memcpy(c->d.o_stride, q_st, sizeof q_st);
    memcpy(c->d.k_stride, q_st, sizeof q_st);
    memcpy(c->d.v_stride, q_st, sizeof q_st);
}
static void varlen_only_q(call *c) { varlen_packed(c); c->d.cu_seqlens_k = NULL; }
static void prefix_sums_checked_2(call *c) { varlen_packed(c); c->d.prefix_sums_checked = 2; }
static void prefix_sums_vouched(call *c) { varlen_packed(c); c->d.prefix_sums_checked = 1; }
static void varlen_total_0(call *c) { varlen_packed(c); c->d.total_k = 0; }
static void total_without_varlen(call *c) { c->d.total_q = 100; }
static void varlen_rows_overlap(call *c) { varlen_packed(c); c->d.q_stride[2] = 128; }
static void heads_k3(call *c) { c->d.heads_k = 3; }   /* of 4 query heads */
static void heads_k8(call *c) { c->d.heads_k = 8; }
/* Grouped heads: k and v have heads_k heads, and their strides are checked over those. */
static void grouped2(call *c)
{
    c->d.heads_k = 2;
    const int64_t st[3] = { 2 * 60 * 64, 60 * 64, 64 };
    memcpy(c->d.k_stride, st, sizeof st);
    memcpy(c->d.v_stride, st, sizeof st);
}
static void grouped2_overlap(call *c) { grouped2(c); c->d.v_stride[0] = 60 * 64; }
static void multi_query(call *c) { c->d.heads_k = 1; c->d.k_stride[0] = c->d.v_stride[0] = 60 * 64; }
static void left_neg2(call *c) { c->d.window = 1, c->d.window_left = -2; }
static void right_neg5(call *c) { c->d.window = 1, c->d.window_left = 16, c->d.window_right = -5; }
static void causal_right3(call *c) { c->d.causal = 1, c->d.window = 1, c->d.window_left = -1, c->d.window_right = 3; }
static void left_no_window(call *c) { c->d.window_left = 128; }
static void right_no_window(call *c) { c->d.window_right = -1; }
static void lengths_2_31(call *c) { c->d.causal = 1, c->d.seqlen_q = 1 << 30, c->d.seqlen_k = 1 << 30; }
static void window_lengths_2_31(call *c) { c->d.window = 1, c->d.window_left = 8, c->d.window_right = -1,
                                           c->d.seqlen_q = 0x7fffffff, c->d.seqlen_k = 1; }
/* Strides whose span overflows int64 (once undefined behaviour that reached the device) or
 * passes 2^62 bytes; and a large span below it, accepted. */
static void stride_overflow(call *c)
{
    c->d.batch = 3, c->d.heads = 2;
    c->d.q_stride[0] = INT64_MAX, c->d.q_stride[1] = (int64_t)1 << 62, c->d.q_stride[2] = 64;
}
static void stride_2_62_elements(call *c) { c->d.o_stride[0] = (int64_t)1 << 62; }   /* batch 2: 2^62 + ... */
static void stride_2_63_bytes(call *c) { c->d.v_stride[0] = (int64_t)1 << 61; }     /* f32: 2^63 bytes */
static void stride_2_60_bytes(call *c) { c->d.v_stride[0] = (int64_t)1 << 58; }     /* f32: 2^60 bytes */
static void size0(call *c) { c->d.struct_size = 0; }
static void size_short(call *c) { c->d.struct_size = FT_ATTENTION_DESC_SIZE_V1 - 1; }
/* A program built against 0.1, whose desc began with int batch, int heads: struct_size reads
 * as heads << 32 | batch (little-endian), far past FT_ATTENTION_DESC_SIZE_MAX. */
static void size_v01(call *c) { c->d.struct_size = (size_t)4 << 32 | 2; }

static const arg_case arg_cases[] = {
    { "desc NULL", FT_BF16, 0, no_desc, FT_ERR_INVALID_ARGUMENT, "desc is NULL" },
    { "batch 0", FT_BF16, 0, batch0, FT_ERR_INVALID_ARGUMENT, "batch=0 must be at least 1" },
    { "heads -3", FT_F32, 1, heads_neg, FT_ERR_INVALID_ARGUMENT, "heads=-3" },
    { "seqlen_q 0", FT_F16, 0, seqlen_q0, FT_ERR_INVALID_ARGUMENT, "seqlen_q=0" },
    { "seqlen_k 0", FT_F64, 1, seqlen_k0, FT_ERR_INVALID_ARGUMENT, "seqlen_k=0" },
    { "head_dim 300", FT_BF16, 0, head_dim300, FT_ERR_UNSUPPORTED, "head_dim=300 is not supported (1 to 256)" },
    { "head_dim 0", FT_F32, 0, head_dim0, FT_ERR_INVALID_ARGUMENT, "head_dim=0" },
    { "head_dim_v 257", FT_F64, 1, head_dim_v257, FT_ERR_UNSUPPORTED, "head_dim_v=257 is not supported (1 to 256)" },
    { "head_dim 13 bf16", FT_BF16, 1, head_dim13, FT_ERR_UNSUPPORTED,
      "head_dim=13 is not supported in bf16, which takes multiples of 8 (pad the tensors with zeros to 16" },
    { "head_dim_v 20 f16", FT_F16, 0, head_dim_v20, FT_ERR_UNSUPPORTED, "head_dim_v=20 is not supported in f16" },
    { "dtype 7", FT_BF16, 0, dtype7, FT_ERR_INVALID_ARGUMENT, "dtype=7" },
    { "causal 2", FT_BF16, 1, causal2, FT_ERR_INVALID_ARGUMENT, "causal=2" },
    { "scale NaN", FT_F32, 0, scale_nan, FT_ERR_INVALID_ARGUMENT, "softmax_scale=nan" },
    { "scale negative", FT_BF16, 0, scale_neg, FT_ERR_INVALID_ARGUMENT, "softmax_scale=-0.125 is negative" },
    { "heads 70000", FT_BF16, 0, heads_huge, FT_ERR_UNSUPPORTED, "heads=70000" },
    { "q NULL", FT_BF16, 0, q_null, FT_ERR_INVALID_ARGUMENT, "ft_attention_forward: q is NULL" },
    { "k NULL", FT_F32, 1, k_null, FT_ERR_INVALID_ARGUMENT, "ft_attention_backward: k is NULL" },
    { "v NULL", FT_F64, 0, v_null, FT_ERR_INVALID_ARGUMENT, "v is NULL" },
    { "o NULL", FT_F16, 1, o_null, FT_ERR_INVALID_ARGUMENT, "o is NULL" },
    { "lse NULL fwd", FT_BF16, 0, lse_null, FT_ERR_INVALID_ARGUMENT, "lse is NULL" },
    { "lse NULL bwd", FT_BF16, 1, lse_null, FT_ERR_INVALID_ARGUMENT, "lse is NULL" },
    { "dout NULL", FT_F32, 1, dout_null, FT_ERR_INVALID_ARGUMENT, "dout is NULL" },
    { "dq NULL", FT_F32, 1, dq_null, FT_ERR_INVALID_ARGUMENT, "dq is NULL" },
    { "dk NULL", FT_BF16, 1, dk_null, FT_ERR_INVALID_ARGUMENT, "dk is NULL" },
    { "dv NULL", FT_F64, 1, dv_null, FT_ERR_INVALID_ARGUMENT, "dv is NULL" },
    { "rows overlap", FT_F32, 0, seq_stride_short, FT_ERR_INVALID_ARGUMENT, "q_stride[2]=32 is less than the 64" },
    { "heads overlap", FT_F32, 1, head_overlap, FT_ERR_INVALID_ARGUMENT, "k_stride = { 15360, 64, 64 } overlap" },
    { "negative stride", FT_F64, 0, stride_negative, FT_ERR_INVALID_ARGUMENT, "v_stride[0]=-1 is negative" },
    { "batches overlap", FT_F32, 0, batch_overlap, FT_ERR_INVALID_ARGUMENT, "o_stride[0]=1000 is less than" },
    { "bf16 q not 16-byte aligned", FT_BF16, 0, q_misaligned, FT_ERR_UNSUPPORTED, "not 16-byte aligned" },
    { "f32 q unaligned element", FT_F32, 0, q_odd, FT_ERR_INVALID_ARGUMENT, "is not 4-byte aligned" },
    { "f16 stride not multiple of 8", FT_F16, 1, stride_not8, FT_ERR_UNSUPPORTED,
      "k_stride[2]=68 is not a multiple of 8" },
    { "f64 lse misaligned", FT_F64, 0, lse_odd, FT_ERR_INVALID_ARGUMENT, "lse=0x500002 is not 8-byte aligned" },
    { "causal_align 2", FT_BF16, 0, align2, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: causal_align=2 must be 0 (FT_ALIGN_TOP_LEFT) or 1 (FT_ALIGN_BOTTOM_RIGHT)" },
    { "causal_align -1", FT_F32, 1, align_neg, FT_ERR_INVALID_ARGUMENT, "ft_attention_backward: causal_align=-1" },
    { "window 2", FT_F16, 0, window2, FT_ERR_INVALID_ARGUMENT, "window=2 must be 0 (none) or 1" },
    { "deterministic 3", FT_BF16, 1, deterministic3, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_backward: deterministic=3 must be 0 (fastest) or 1 (bitwise repeatable backward)" },
    { "heads_k -1", FT_BF16, 0, heads_k_neg, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: heads_k=-1 must divide heads=4 (the K/V heads of grouped-query attention; 0 means heads)" },
    { "heads_k 3 of 4", FT_F32, 1, heads_k3, FT_ERR_INVALID_ARGUMENT, "ft_attention_backward: heads_k=3 must divide heads=4" },
    { "heads_k 8 of 4", FT_F16, 0, heads_k8, FT_ERR_INVALID_ARGUMENT, "heads_k=8 must divide heads=4" },
    { "grouped heads 4/2", FT_BF16, 1, grouped2, FT_ERR_NO_DEVICE, "no CUDA driver" },
    { "grouped heads, v's batches overlap", FT_BF16, 1, grouped2_overlap, FT_ERR_INVALID_ARGUMENT,
      "v_stride = { 3840, 3840, 64 } overlap: v_stride[1]=3840 is less than the 7680 elements" },
    { "multi-query, one K/V head a batch", FT_F32, 0, multi_query, FT_ERR_NO_DEVICE, "no CUDA driver" },
    { "softcap -0.5", FT_BF16, 1, softcap_neg, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_backward: softcap=-0.5 must be a finite number >= 0 (0: none; c > 0 caps scores to c tanh(S / c))" },
    { "softcap inf", FT_F16, 0, softcap_inf, FT_ERR_INVALID_ARGUMENT, "softcap=inf must be a finite number >= 0" },
    { "softcap 30", FT_F64, 1, softcap_30, FT_ERR_NO_DEVICE, "no CUDA driver" },
    { "reserved 1", FT_BF16, 0, reserved1, FT_ERR_INVALID_ARGUMENT, "ft_attention_forward: reserved=1 must be 0" },
    { "prefix_sums_checked 1, dense", FT_F32, 0, prefix_sums_checked_dense, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: prefix_sums_checked=1 must be 0, or 1 with cu_seqlens_q" },
    { "prefix_sums_checked 2", FT_BF16, 1, prefix_sums_checked_2, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_backward: prefix_sums_checked=2 must be 0, or 1 with cu_seqlens_q" },
    { "variable-length, prefix sums vouched for", FT_BF16, 0, prefix_sums_vouched, FT_ERR_NO_DEVICE, "no CUDA driver" },
    { "allow_tf32 2", FT_F32, 0, allow_tf32_2, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: allow_tf32=2 must be 0 (float32's accuracy) or 1" },
    { "variable-length, packed", FT_BF16, 1, varlen_packed, FT_ERR_NO_DEVICE, "no CUDA driver" },
    { "variable-length, cu_seqlens_k NULL", FT_F16, 0, varlen_only_q, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: cu_seqlens_q=0xa00000 and cu_seqlens_k=(nil): a variable-length batch sets both" },
    { "variable-length, total_k 0", FT_F32, 1, varlen_total_0, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_backward: total_k=0 must be at least 1 in a variable-length batch" },
    { "total_q without cu_seqlens", FT_F64, 0, total_without_varlen, FT_ERR_INVALID_ARGUMENT,
      "total_q=100 without cu_seqlens_q: a dense batch leaves it 0" },
    { "variable-length rows overlap", FT_F32, 0, varlen_rows_overlap, FT_ERR_INVALID_ARGUMENT,
      "q_stride = { 0, 64, 128 } overlap: q_stride[2]=128 is less than the 256 elements" },
    { "window_left -2", FT_F64, 1, left_neg2, FT_ERR_INVALID_ARGUMENT, "window_left=-2 must be >= 0, or -1 for no" },
    { "window_right -5", FT_BF16, 0, right_neg5, FT_ERR_INVALID_ARGUMENT, "window_right=-5 must be >= 0, or -1" },
    { "causal with window_right 3", FT_BF16, 0, causal_right3, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: window_right=3 with causal=1: a causal mask has window_right 0 or -1" },
    { "window_left without window", FT_F32, 0, left_no_window, FT_ERR_INVALID_ARGUMENT,
      "window_left=128 with window=0: set window=1" },
    { "window_right without window", FT_F32, 1, right_no_window, FT_ERR_INVALID_ARGUMENT,
      "window_right=-1 with window=0" },
    { "causal lengths 2^31", FT_BF16, 0, lengths_2_31, FT_ERR_INVALID_ARGUMENT,
      "seqlen_q=1073741824 + seqlen_k=1073741824 must be below 2^31 with a mask" },
    { "window lengths 2^31", FT_F32, 1, window_lengths_2_31, FT_ERR_INVALID_ARGUMENT,
      "seqlen_q=2147483647 + seqlen_k=1 must be below 2^31" },
    { "strides overflow int64", FT_F32, 0, stride_overflow, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: q_stride = { 9223372036854775807, 4611686018427387904, 64 } with batch=3 heads=2 "
      "seqlen=100 spans more than 2^62 bytes" },
    { "2^62 elements", FT_F64, 1, stride_2_62_elements, FT_ERR_INVALID_ARGUMENT,
      "o_stride = { 4611686018427387904, 6400, 64 } with batch=2 heads=4 seqlen=100 spans more than 2^62 bytes" },
    { "2^63 bytes", FT_F32, 0, stride_2_63_bytes, FT_ERR_INVALID_ARGUMENT,
      "v_stride = { 2305843009213693952, 3840, 64 } with batch=2 heads=4 seqlen=60 spans more than 2^62" },
    { "2^60 bytes: accepted", FT_F32, 0, stride_2_60_bytes, FT_ERR_NO_DEVICE, "no CUDA driver" },
    { "struct_size 0", FT_BF16, 0, size0, FT_ERR_INVALID_ARGUMENT,
      "ft_attention_forward: struct_size=0 is not the size of an ft_attention_desc" },
    { "struct_size short", FT_F32, 1, size_short, FT_ERR_INVALID_ARGUMENT, "struct_size=143 is not the size" },
    { "struct_size of a 0.1 desc", FT_BF16, 0, size_v01, FT_ERR_INVALID_ARGUMENT, "flashtune 0.1" },
};

static ft_status call_it(ft_context *ft, const call *c, int backward, int null_desc)
{
    const ft_attention_desc *d = null_desc ? NULL : &c->d;
    if (backward)
        return ft_attention_backward(ft, d, c->q, c->k, c->v, c->o, c->lse, c->dout, c->dq, c->dk, c->dv, NULL);
    return ft_attention_forward(ft, d, c->q, c->k, c->v, (void *)c->o, (void *)c->lse, NULL);
}

/* A case's outcome: status s and ft_last_error(ft) as expected. */
static void expect_status(ft_context *ft, const char *name, ft_status s, ft_status status, const char *message)
{
    const char *msg = ft_last_error(ft);
    printf("  %-36s %s\n", name, msg);
    if (s != status)
        fail_msg("%s: status %d (%s), expected %d", name, s, msg, status);
    if (!strstr(msg, message))
        fail_msg("%s: '%s' does not say '%s'", name, msg, message);
}

static void invalid_arguments_name_the_argument(void **state)
{
    (void)state;
    ft_context *ft;
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    for (size_t i = 0; i < sizeof arg_cases / sizeof arg_cases[0]; i++) {
        const arg_case *a = &arg_cases[i];
        call c = valid_call(a->dtype);
        a->change(&c);
        expect_status(ft, a->name, call_it(ft, &c, a->backward, a->change == no_desc), a->status, a->message);
    }
    /* Unaligned f16 pointers are fine for the reference kernels. */
    call c = valid_call(FT_F16);
    q_misaligned(&c);
    assert_int_equal(ft_attention_forward_reference(ft, &c.d, c.q, c.k, c.v, (void *)c.o, (void *)c.lse, NULL),
                     FT_ERR_NO_DEVICE);
    /* The caller's workspace. */
    c = valid_call(FT_BF16);
    size_t need = 0;
    assert_int_equal(ft_attention_backward_workspace_size(ft, &c.d, &need), FT_OK);
    /* delta (3200 bytes, 256-aligned), the dQ accumulator, the dQ order area: 2 tickets and
     * 2 * 4 * ceil(100 / 16) semaphores */
    assert_int_equal(need, 3328 + 2 * 4 * 100 * 64 * 4 + (2 + 2 * 4 * 7) * 4);
    assert_int_equal(ft_attention_backward_ws(ft, &c.d, c.q, c.k, c.v, c.o, c.lse, c.dout, c.dq, c.dk, c.dv,
                                              (void *)0x1000000, need - 1, NULL), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "workspace_bytes="));
    assert_int_equal(ft_attention_backward_ws(ft, &c.d, c.q, c.k, c.v, c.o, c.lse, c.dout, c.dq, c.dk, c.dv,
                                              (void *)0x1000010, need, NULL), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "not 256-byte aligned"));
    assert_int_equal(ft_attention_backward_ws(ft, &c.d, c.q, c.k, c.v, c.o, c.lse, c.dout, c.dq, c.dk, c.dv, NULL,
                                              need, NULL), FT_ERR_INVALID_ARGUMENT);
    /* One K/V head for the 4 query heads: the backward shares them over 4 blocks a key tile
     * (db_workload_group_splits), whose partial dK and dV follow, 256-byte aligned, at the widest head dims. */
    c.d.heads_k = 1;
    size_t split_need = 0;
    assert_int_equal(ft_attention_backward_workspace_size(ft, &c.d, &split_need), FT_OK);
    const size_t base = (need + 255) / 256 * 256;
    assert_int_equal(split_need, base + ln_bwd_split_bytes(4, 2 * 1 * 60, ln_accum_head_dim(64), ln_accum_head_dim(64),
                                                           NULL));
    c.d.heads_k = 0;
    assert_int_equal(ft_attention_backward_workspace_size(ft, &c.d, NULL), FT_ERR_INVALID_ARGUMENT);
    /* The forward's: its arguments are checked before the GPU is needed. */
    size_t fwd_need = 7;
    assert_int_equal(ft_attention_forward_workspace_size(ft, &c.d, NULL), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "ft_attention_forward_workspace_size: bytes is NULL"));
    assert_int_equal(ft_attention_forward_workspace_size(NULL, &c.d, &fwd_need), FT_ERR_INVALID_ARGUMENT);
    c.d.batch = 0;
    assert_int_equal(ft_attention_forward_workspace_size(ft, &c.d, &fwd_need), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "ft_attention_forward_workspace_size: batch=0 must be at least 1"));
    assert_int_equal(fwd_need, 0);
    assert_int_equal(ft_attention_forward_ws(ft, &c.d, c.q, c.k, c.v, (void *)c.o, (void *)c.lse, NULL, 0, NULL),
                     FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "ft_attention_forward_ws: batch=0"));
    c.d.batch = 2;
    assert_int_equal(ft_attention_forward_ws(ft, &c.d, c.q, c.k, c.v, (void *)c.o, (void *)c.lse, NULL, 64, NULL),
                     FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "ft_attention_forward_ws: workspace is NULL"));
    assert_int_equal(ft_attention_forward_ws(ft, &c.d, c.q, c.k, c.v, (void *)c.o, (void *)c.lse, (void *)0x1000010,
                                             512, NULL), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "not 256-byte aligned"));
    char buf[16];
    assert_int_equal(ft_describe_choice(ft, &c.d, 0, NULL, 10), FT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ft_describe_choice(ft, &c.d, 0, buf, 0), FT_ERR_INVALID_ARGUMENT);
    /* backward is a flag: anything but 0 or 1 is a mistake, not "backward". */
    const int flags[] = { 7, -1, 2 };
    for (int i = 0; i < 3; i++) {
        char want[64];
        snprintf(want, sizeof want, "ft_describe_choice: backward=%d must be 0 (forward) or 1", flags[i]);
        expect_status(ft, want, ft_describe_choice(ft, &c.d, flags[i], buf, sizeof buf), FT_ERR_INVALID_ARGUMENT,
                      want);
    }
    assert_int_equal(ft_attention_forward(NULL, &c.d, c.q, c.k, c.v, c.dq, (void *)c.lse, NULL),
                     FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(NULL), "ctx is NULL"));
    ft_close(ft);
}

/* A valid [B, N, H, D] layout (heads inside positions) passes the checks. */
static void bnhd_layout_is_accepted(void **state)
{
    (void)state;
    ft_context *ft;
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    call c = valid_call(FT_BF16);
    const int64_t q_st[3] = { 100 * 4 * 64, 64, 4 * 64 }, k_st[3] = { 60 * 4 * 64, 64, 4 * 64 };
    memcpy(c.d.q_stride, q_st, sizeof q_st);
    memcpy(c.d.o_stride, q_st, sizeof q_st);
    memcpy(c.d.k_stride, k_st, sizeof k_st);
    memcpy(c.d.v_stride, k_st, sizeof k_st);
    assert_int_equal(call_it(ft, &c, 1, 0), FT_ERR_NO_DEVICE);
    ft_close(ft);
}

/* ---- the growing descriptor ----------------------------------------------------------------- */

/* The caller's desc with room past this library's: a newer header's struct. */
typedef struct bigger_desc {
    ft_attention_desc d;
    unsigned char newer[40];
} bigger_desc;

/* Attention sinks through the API's checks and the choice: dsinks needs sinks; a problem with
 * sinks is another workload (w.sinks), never served a winner tuned without them, and its choice
 * is compiled with SINKS 1, the shipped table's winners and the built-in defaults alike. */
static void sinks_reach_the_workload_and_the_kernels(void **state)
{
    (void)state;
    ft_attention_desc d = { .struct_size = sizeof d, .batch = 2, .heads = 16, .seqlen_q = 4096, .seqlen_k = 4096,
                            .head_dim = 128, .head_dim_v = 128, .dtype = FT_BF16 };
    const int64_t row = 128, head = 4096 * row, batch = 16 * head;   /* [B, H, N, D] contiguous */
    d.q_stride[0] = batch, d.q_stride[1] = head, d.q_stride[2] = row;
    memcpy(d.k_stride, d.q_stride, sizeof d.k_stride);
    memcpy(d.v_stride, d.q_stride, sizeof d.v_stride);
    memcpy(d.o_stride, d.q_stride, sizeof d.o_stride);
    db_workload w;
    char err[512];
    d.dsinks = (void *)0x1000;
    assert_int_equal(rt_check_desc("f", &d, 1, &w, err, sizeof err), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "dsinks="));
    assert_non_null(strstr(err, "without sinks"));
    d.sinks = (const void *)0x2000;
    for (int backward = 0; backward < 2; backward++) {
        assert_int_equal(rt_check_desc("f", &d, backward, &w, err, sizeof err), FT_OK);
        assert_int_equal(w.sinks, 1);
        db *shipped = NULL;
        assert_int_equal(rt_shipped_open(&shipped, err, sizeof err), 0);
        rt_choice choice;
        int db_error = 0;
        assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &choice, &db_error, err, sizeof err), 0);
        assert_int_equal(choice.config.p[GEN_SINKS], 1);
        assert_true(choice.config.family->features & GEN_FEATURE_SINKS);
        w.sinks = 0;   /* the same problem without: SINKS 0 */
        assert_int_equal(rt_choose(NULL, shipped, &h100, &w, 0, &choice, &db_error, err, sizeof err), 0);
        assert_int_equal(choice.config.p[GEN_SINKS], 0);
        db_close(shipped);
    }
}

/* ft_attention_desc_layout words the struct as compiled: every field once, in order, each at its
 * offset with its size, the last ending at the struct's end, the gaps only alignment's (the 4
 * bytes after softmax_scale); bindings check their mirrors against it (the Python package). */
static void desc_layout_words_the_struct(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, "%s", ft_attention_desc_layout());
    assert_ptr_equal(ft_attention_desc_layout(), ft_attention_desc_layout());   /* static */
    size_t end = 0, fields = 0, gaps = 0;
    char seen[64][32];
    for (char *save = NULL, *word = strtok_r(text, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
        char name[32];
        size_t offset, size;
        assert_int_equal(sscanf(word, "%31[a-z_0-9]:%zu:%zu", name, &offset, &size), 3);
        for (size_t i = 0; i < fields; i++)
            assert_string_not_equal(seen[i], name);
        assert_true(fields < 64);
        snprintf(seen[fields++], sizeof seen[0], "%s", name);
        assert_true(offset >= end && offset - end < 8);   /* in order; a gap is alignment */
        gaps += offset - end;
        end = offset + size;
    }
    assert_int_equal(end, sizeof(ft_attention_desc));
    assert_int_equal(gaps, 4);
    assert_string_equal(seen[0], "struct_size");
    assert_non_null(strstr(ft_attention_desc_layout(), "softcap:168:4"));
    char want[64];
    snprintf(want, sizeof want, "causal_align:%zu:", FT_ATTENTION_DESC_SIZE_V1);
    assert_non_null(strstr(ft_attention_desc_layout(), want));
}

typedef struct size_case {
    const char *name;
    size_t size;                /* struct_size */
    int set_byte;               /* >= 0: this byte of the caller's struct is set to 1 */
    ft_status status;           /* FT_ERR_NO_DEVICE: accepted (the driver is missing) */
    const char *message;
} size_case;

static void struct_size_rules(void **state)
{
    (void)state;
    const size_t v1 = FT_ATTENTION_DESC_SIZE_V1, full = sizeof(ft_attention_desc);
    const size_case cases[] = {
        { "this library's size", full, -1, FT_ERR_NO_DEVICE, "no CUDA driver" },
        /* Version 1 ends before causal_align: a set window byte past it is not read. */
        { "version 1, bytes past it ignored", v1, (int)offsetof(ft_attention_desc, window), FT_ERR_NO_DEVICE,
          "no CUDA driver" },
        { "larger, zero tail", full + 40, -1, FT_ERR_NO_DEVICE, "no CUDA driver" },
        { "larger, a set byte past the fields", full + 40, (int)full + 39, FT_ERR_UNSUPPORTED,
          "ft_attention_forward: struct_size=264 is larger than this library's ft_attention_desc (224 bytes" },
        { "larger, its first new byte set", full + 8, (int)full, FT_ERR_UNSUPPORTED, "byte 224 past its fields" },
        { "larger, set byte beyond struct_size", full + 8, (int)full + 8, FT_ERR_NO_DEVICE, "no CUDA driver" },
        { "0", 0, -1, FT_ERR_INVALID_ARGUMENT, "struct_size=0 is not the size of an ft_attention_desc (144 to 4096" },
        { "one short of version 1", v1 - 1, -1, FT_ERR_INVALID_ARGUMENT, "struct_size=143" },
        { "past the maximum", FT_ATTENTION_DESC_SIZE_MAX + 1, -1, FT_ERR_INVALID_ARGUMENT, "struct_size=4097" },
    };
    assert_int_equal(v1, 144);   /* struct_size, 8 ints, a float and its padding, 12 int64 */
    assert_int_equal(full, 224);   /* ... then 4 mask ints, deterministic, heads_k, softcap, reserved, 2 pointers,
                                    * 2 totals, the sinks' 2 pointers, allow_tf32, prefix_sums_checked: no padding */
    ft_context *ft;
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_case *a = &cases[i];
        bigger_desc big;
        memset(&big, 0, sizeof big);
        big.d = valid_call(FT_BF16).d;
        big.d.struct_size = a->size;
        if (a->set_byte >= 0)
            ((unsigned char *)&big)[a->set_byte] = 1;
        const call c = valid_call(FT_BF16);
        expect_status(ft, a->name, ft_attention_forward(ft, &big.d, c.q, c.k, c.v, (void *)c.o, (void *)c.lse, NULL),
                      a->status, a->message);
    }
    /* Every entry point takes the desc through the same copy. */
    call c = valid_call(FT_BF16);
    c.d.struct_size = 0;
    size_t bytes;
    char buf[64];
    assert_int_equal(ft_attention_backward_workspace_size(ft, &c.d, &bytes), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "ft_attention_backward_workspace_size: struct_size=0"));
    assert_int_equal(ft_describe_choice(ft, &c.d, 1, buf, sizeof buf), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "ft_describe_choice: struct_size=0"));
    assert_int_equal(ft_attention_forward_reference(ft, &c.d, c.q, c.k, c.v, (void *)c.o, (void *)c.lse, NULL),
                     FT_ERR_INVALID_ARGUMENT);
    /* The initializers set struct_size and nothing else. */
    const ft_attention_desc init = FT_ATTENTION_DESC_INIT;
    ft_attention_desc by_call;
    memset(&by_call, 0xab, sizeof by_call);
    ft_attention_desc_init(&by_call);
    assert_int_equal(init.struct_size, sizeof(ft_attention_desc));
    assert_memory_equal(&init, &by_call, sizeof init);
    assert_int_equal(init.batch | init.causal | init.causal_align | init.window | init.window_left, 0);
    ft_close(ft);
}

typedef struct mask_case {
    const char *name;
    int causal, align, window, left, right, seqlen_q, seqlen_k;
    int flag, lo, hi;           /* the kernels' CAUSAL and the band */
    int key[5];                 /* the workload's stored mask: causal, window, left, right, bottom_right */
} mask_case;

/* Every desc field reaches the kernels' flag, the band they get and the mask the lookup keys on,
 * in its one stored form. */
static void masks_reach_flag_and_band(void **state)
{
    (void)state;
    const mask_case cases[] = {
        { "none (all new fields zero)", 0, 0, 0, 0, 0, 100, 60, 0, -100, 60, { 0, 0, 0, 0, 0 } },
        { "causal top-left", 1, 0, 0, 0, 0, 100, 60, 1, -100, 0, { 1, 0, 0, 0, 0 } },
        { "causal bottom-right, q > k", 1, 1, 0, 0, 0, 100, 60, 1, -100, -40, { 1, 0, 0, 0, 1 } },
        { "causal bottom-right, q < k", 1, 1, 0, 0, 0, 60, 100, 1, -60, 40, { 1, 0, 0, 0, 1 } },
        { "bottom-right alone: no mask", 0, 1, 0, 0, 0, 100, 60, 0, -100, 60, { 0, 0, 0, 0, 0 } },
        { "window unlimited both sides: no mask", 0, 0, 1, -1, -1, 100, 60, 0, -100, 60, { 0, 0, 0, 0, 0 } },
        { "window left only", 0, 0, 1, 16, -1, 100, 60, 1, -16, 60, { 0, 1, 16, -1, 0 } },
        { "window right only", 0, 0, 1, -1, 5, 100, 60, 1, -100, 5, { 0, 1, -1, 5, 0 } },
        { "window both, bottom-right", 0, 1, 1, 8, 3, 60, 100, 1, 32, 43, { 0, 1, 8, 3, 1 } },
        { "window 0 wide: causal", 0, 0, 1, 0, 0, 100, 60, 1, 0, 0, { 1, 1, 0, 0, 0 } },
        { "window right 0: causal", 0, 0, 1, -1, 0, 100, 60, 1, -100, 0, { 1, 0, 0, 0, 0 } },
        { "causal window", 1, 0, 1, 32, 0, 100, 60, 1, -32, 0, { 1, 1, 32, 0, 0 } },
        { "causal window right -1, equal lengths", 1, 1, 1, 32, -1, 100, 100, 1, -32, 0, { 1, 1, 32, 0, 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const mask_case *m = &cases[i];
        call c = valid_call(FT_F32);
        c.d.causal = m->causal;
        c.d.causal_align = m->align;
        c.d.window = m->window;
        c.d.window_left = m->left;
        c.d.window_right = m->right;
        c.d.seqlen_q = m->seqlen_q;
        c.d.seqlen_k = m->seqlen_k;
        ft_attention_desc d;
        db_workload w;
        char err[RT_ERR_LEN];
        if (rt_desc_copy("test", &c.d, &d, err, sizeof err) != FT_OK ||
            rt_check_desc("test", &d, 0, &w, err, sizeof err) != FT_OK)
            fail_msg("%s: %s", m->name, err);
        ln_problem p = { .seqlen_q = d.seqlen_q, .seqlen_k = d.seqlen_k };
        rt_problem_mask(&d, &p);
        const int lo = p.mask_lo, hi = p.mask_hi, flag = db_workload_masked(&w);
        printf("  %-38s CAUSAL=%d band [%d, %d]\n", m->name, flag, lo, hi);
        if (flag != m->flag || p.causal != m->flag || lo != m->lo || hi != m->hi)
            fail_msg("%s: CAUSAL=%d band [%d, %d], expected %d [%d, %d]", m->name, flag, lo, hi, m->flag, m->lo,
                     m->hi);
        const int key[5] = { w.causal, w.window, w.window_left, w.window_right, w.bottom_right };
        for (int k = 0; k < 5; k++)
            if (key[k] != m->key[k])
                fail_msg("%s: stored mask field %d is %d, expected %d", m->name, k, key[k], m->key[k]);
        assert_int_equal(d.struct_size, sizeof d);
    }
}

/* ---- no driver, database files ------------------------------------------------------------- */

static void no_driver_is_no_device(void **state)
{
    (void)state;
    ft_context *ft;
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    call c = valid_call(FT_BF16);
    assert_int_equal(call_it(ft, &c, 0, 0), FT_ERR_NO_DEVICE);
    assert_non_null(strstr(ft_last_error(ft), "ft_attention_forward: no CUDA driver"));
    assert_int_equal(call_it(ft, &c, 1, 0), FT_ERR_NO_DEVICE);
    char buf[256];
    assert_int_equal(ft_describe_choice(ft, &c.d, 1, buf, sizeof buf), FT_ERR_NO_DEVICE);
    assert_non_null(strstr(ft_last_error(ft), "ft_describe_choice: no CUDA driver"));
    size_t bytes = 7;
    assert_int_equal(ft_attention_forward_workspace_size(ft, &c.d, &bytes), FT_ERR_NO_DEVICE);
    assert_non_null(strstr(ft_last_error(ft), "ft_attention_forward_workspace_size: no CUDA driver"));
    assert_int_equal(bytes, 0);
    ft_close(ft);
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

typedef struct open_case {
    const char *name;
    const char *file;           /* in the test folder */
    void (*make)(const char *path);
    ft_status status;
    const char *message;
} open_case;

static void make_garbage(const char *path)
{
    char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 37 + 11);
    write_file(path, junk, sizeof junk);
}

static void make_foreign(const char *path)
{
    sqlite3 *s;
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    assert_int_equal(sqlite3_exec(s, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
}

static void make_newer(const char *path)
{
    db_close(make_db("newer.db", NULL));
    sqlite3 *s;
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    assert_int_equal(sqlite3_exec(s, "PRAGMA user_version = 999", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
}

static void make_truncated(const char *path)
{
    db_close(make_db("truncated.db", synthetic));
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), 1000), 0);
    fclose(f);
}

static void make_good(const char *path)
{
    (void)path;
    db_close(make_db("good.db", synthetic));
}

static void make_nothing(const char *path)
{
    unlink(path);
}

static void make_empty(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

static void database_files(void **state)
{
    (void)state;
    const open_case cases[] = {
        { "missing", "missing.db", make_nothing, FT_ERR_DB, "missing.db: No such file or directory" },
        { "not SQLite", "garbage.db", make_garbage, FT_ERR_DB, "garbage.db is not a flashtune database" },
        { "foreign SQLite", "foreign.db", make_foreign, FT_ERR_DB, "foreign.db is not a flashtune database" },
        { "newer schema", "newer.db", make_newer, FT_ERR_DB, "newer" },
        { "truncated", "truncated.db", make_truncated, FT_ERR_DB, "truncated.db" },
        { "zero-length", "empty.db", make_empty, FT_ERR_DB, "empty.db" },
        { "good", "good.db", make_good, FT_OK, "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].file);
        cases[i].make(path);
        ft_context *ft = (ft_context *)0x1;
        ft_status s = ft_open(path, &ft);
        printf("  %-16s %s\n", cases[i].name, s == FT_OK ? "opened" : ft_last_error(NULL));
        if (s != cases[i].status)
            fail_msg("%s: status %d (%s), expected %d", cases[i].name, s, ft_last_error(NULL), cases[i].status);
        if (s != FT_OK) {
            assert_null(ft);
            if (!strstr(ft_last_error(NULL), cases[i].message) || !strstr(ft_last_error(NULL), "ft_open"))
                fail_msg("%s: '%s' does not say '%s'", cases[i].name, ft_last_error(NULL), cases[i].message);
        }
        ft_close(ft);
    }
    /* ft_open never creates a database: the writable zero-length file is left as it was. */
    struct stat st;
    char empty[256];
    snprintf(empty, sizeof empty, "%s/empty.db", dir);
    assert_int_equal(stat(empty, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(ft_open("", &(ft_context *){ NULL }), FT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ft_open(NULL, NULL), FT_ERR_INVALID_ARGUMENT);
    /* A read-only file opens read-only. */
    char path[256];
    snprintf(path, sizeof path, "%s/good.db", dir);
    chmod(path, 0444);
    ft_context *ft;
    assert_int_equal(ft_open(path, &ft), FT_OK);
    assert_int_equal(ft->user_writable, getuid() == 0);
    ft_close(ft);
    ft_close(NULL);
}

static void names_and_versions(void **state)
{
    (void)state;
    for (int s = FT_OK; s <= FT_ERR_IO; s++)
        assert_non_null(strstr(ft_status_str((ft_status)s), "FT_"));
    assert_string_equal(ft_status_str(FT_ERR_DB), "FT_ERR_DB: database error");
    assert_string_equal(ft_status_str(FT_ERR_IO), "FT_ERR_IO: a file could not be read or written");
    assert_string_equal(ft_status_str((ft_status)(FT_ERR_IO + 1)), "unknown ft_status");
    assert_string_equal(ft_version(), "0.2.0");
    assert_string_equal(ft_version(), FT_PROJECT_VERSION);   /* flashtune.h agrees with CMakeLists.txt */
    assert_non_null(strstr(rt_shipped_names(), ".txt"));
}

/* Capture (rt_capture.c) without a GPU: plans made by hand stand for problems served. Their calls
 * reach the file one line a problem (two CUDA contexts' calls of one problem summed, the
 * deterministic backward apart, the reference kernels and uncalled plans left out, what served
 * each from its tier); a file that cannot be written keeps the counts for the next flush;
 * ft_capture_to moves them to another file; ft_close merges what is left. */
static rt_plan *fake_plan(ft_context *ft, uintptr_t context, int seqlen, rt_variant variant, int tier,
                          unsigned long long calls)
{
    rt_plan *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->context = (CUcontext)context;
    p->w.op = variant == RT_DETERMINISTIC ? DB_OP_BWD : DB_OP_FWD;
    p->w.dtype = FT_BF16;
    p->w.head_dim = p->w.head_dim_v = 64;
    p->w.batch = 1;
    p->w.heads = 8;
    p->w.seqlen_q = p->w.seqlen_k = seqlen;
    p->variant = variant;
    p->choice.tier = tier;
    p->hash = (uint64_t)seqlen * 7 + context;
    atomic_store(&p->calls, calls);
    _Atomic(rt_plan *) *bucket = &ft->buckets[p->hash % RT_BUCKETS];
    atomic_store(&p->next, atomic_load(bucket));
    atomic_store(bucket, p);
    return p;
}

static void capture_counts_problems(void **state)
{
    (void)state;
    char path[300], bad[300], other[300], err[512];
    snprintf(path, sizeof path, "%s/capture.txt", dir);
    snprintf(bad, sizeof bad, "%s/no such folder/capture.txt", dir);
    snprintf(other, sizeof other, "%s/other.txt", dir);
    ft_context *ft;
    unsetenv("FLASHTUNE_CAPTURE");
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    assert_int_equal(ft_capture_flush(ft), FT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(ft_last_error(ft), "no capture file"));
    assert_int_equal(ft_capture_flush(NULL), FT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ft_capture_to(NULL, path), FT_ERR_INVALID_ARGUMENT);
    ft_close(ft);

    setenv("FLASHTUNE_CAPTURE", bad, 1);
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    unsetenv("FLASHTUNE_CAPTURE");
    rt_plan *a = fake_plan(ft, 1, 512, RT_TUNED, RT_TIER_SHIPPED_NEAREST, 3);
    rt_plan *b = fake_plan(ft, 2, 512, RT_TUNED, RT_TIER_SHIPPED_NEAREST, 4);   /* another CUDA context */
    rt_plan *padded = fake_plan(ft, 1, 300, RT_TUNED, RT_TIER_DEFAULT, 1);
    padded->w.head_dim = padded->w.head_dim_v = 80;   /* recorded as looked up: at 96 */
    fake_plan(ft, 1, 1024, RT_DETERMINISTIC, RT_TIER_DEFAULT, 2);
    fake_plan(ft, 1, 2048, RT_TUNED, RT_TIER_DB_EXACT, 0);                       /* never called */
    fake_plan(ft, 1, 4096, RT_REFERENCE, RT_TIER_REFERENCE, 9);
    rt_capture_count(ft, a);   /* a call of a counts */
    assert_int_equal(ft_capture_flush(ft), FT_ERR_IO);
    assert_non_null(strstr(ft_last_error(ft), bad));
    assert_int_equal(atomic_load(&a->calls), 4);   /* kept */
    assert_int_equal(atomic_load(&b->calls), 4);
    assert_int_equal(ft_capture_to(ft, path), FT_OK);
    assert_int_equal(ft_capture_flush(ft), FT_OK);
    assert_int_equal(atomic_load(&a->calls), 0);   /* flushed: counting starts again */
    db_capture_row *rows;
    int n;
    if (db_capture_read(path, &rows, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) {
        if (rows[i].workload.seqlen_q == 300) {
            assert_int_equal(rows[i].workload.head_dim, 96);
            assert_int_equal(rows[i].workload.head_dim_v, 96);
            assert_int_equal(rows[i].calls, 1);
        } else if (rows[i].deterministic) {
            assert_int_equal(rows[i].workload.op, DB_OP_BWD);
            assert_int_equal(rows[i].workload.seqlen_q, 1024);
            assert_int_equal(rows[i].calls, 2);
            assert_int_equal(rows[i].served, DB_SERVED_DEFAULT);
        } else {
            assert_int_equal(rows[i].workload.seqlen_q, 512);
            assert_int_equal(rows[i].calls, 8);
            assert_int_equal(rows[i].served, DB_SERVED_NEAREST);
        }
    }
    free(rows);
    rt_capture_count(ft, b);
    assert_int_equal(ft_capture_to(ft, NULL), FT_OK);   /* no file: counting stops */
    rt_capture_count(ft, b);
    assert_int_equal(atomic_load(&b->calls), 1);
    assert_int_equal(ft_capture_to(ft, other), FT_OK);
    ft_close(ft);   /* the count left goes to the file at close */
    if (db_capture_read(other, &rows, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].calls, 1);
    free(rows);
    unlink(path), unlink(other);
    char lock[320];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    snprintf(lock, sizeof lock, "%s.lock", other);
    unlink(lock);
}

int main(void)
{
    /* Never a real driver here: this test must not launch anything. */
    setenv("FLASHTUNE_CUDA_DRIVER", "/nonexistent/libcuda-for-test.so.1", 1);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lookup_tiers),
        cmocka_unit_test(lookup_by_mask_and_varlen),
        cmocka_unit_test(a_cluster_winner_serves_a_packed_batch_alone),
        cmocka_unit_test(deterministic_keeps_split_query_winners),
        cmocka_unit_test(split_smem_winners_serve_every_kind),
        cmocka_unit_test(defaults_cover_every_supported_problem),
        cmocka_unit_test(builtin_defaults_take_the_hopper_families),
        cmocka_unit_test(builtin_choice_goes_by_rank),
        cmocka_unit_test(desc_layout_words_the_struct),
        cmocka_unit_test(sinks_reach_the_workload_and_the_kernels),
        cmocka_unit_test(padded_head_dims_choose_the_compiled_ones),
        cmocka_unit_test(variable_length_choices),
        cmocka_unit_test(rows16_decides_f32_tensor_cores),
        cmocka_unit_test(tf32_winners_serve_both_kinds),
        cmocka_unit_test(decode_choices),
        cmocka_unit_test(speculative_decoding_served_by_its_winners),
        cmocka_unit_test(group_split_choices),
        cmocka_unit_test(deterministic_choices),
        cmocka_unit_test(deterministic_keeps_staggered_winners),
        cmocka_unit_test(deterministic_tiles_refit_even),
        cmocka_unit_test(persistent_backward_refit),
        cmocka_unit_test(shipped_tables_per_gpu),
        cmocka_unit_test(small_grids_served_by_small_grids),
        cmocka_unit_test(every_served_head_dim_pair_has_tuned_winners),
        cmocka_unit_test(other_mask_unfit_gives_way_to_own_mask),
        cmocka_unit_test(grouped_winners_serve_grouped_problems),
        cmocka_unit_test(padded_dims_winners_serve_as_nearest),
        cmocka_unit_test(invalid_arguments_name_the_argument),
        cmocka_unit_test(bnhd_layout_is_accepted),
        cmocka_unit_test(struct_size_rules),
        cmocka_unit_test(masks_reach_flag_and_band),
        cmocka_unit_test(no_driver_is_no_device),
        cmocka_unit_test(database_files),
        cmocka_unit_test(names_and_versions),
        cmocka_unit_test(capture_counts_problems),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return failed;
}
