/* test_traits: the traits written once (templates/traits/) agree with the templates.
 *
 * The host validates and launches with a family's traits functions; gen_expand writes the
 * shared-memory bytes it computed for each launched entry into the source
 * (FT_SMEM_BYTES_<entry>), and each template static_asserts that its own shared-memory layout
 * takes exactly that much. So NVRTC compiling a configuration is the check that the two agree,
 * and changing either side alone must make the compile fail. For a sample of configurations
 * of every family this test compiles the expansion (it must succeed), then the same source with
 * the template's layout formula changed, then with the host's figure changed (both must fail,
 * naming the layout). No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gen_internal.h"

typedef struct sample {
    const char *family;
    const char *params;   /* "NAME=VALUE ..." over the family's defaults */
} sample;

/* Each family at its defaults and at tiles that move every term of its layout. */
static const sample samples[] = {
    { "fwd_mma", "DTYPE=bf16 HEAD_DIM=128" },
    { "fwd_mma", "DTYPE=f16 HEAD_DIM=64 HEAD_DIM_V=96 BLOCK_M=64 BLOCK_N=32 NUM_WARPS=4 NUM_STAGES=3" },
    /* f32 on TF32 tensor cores: tiles of twice the 16-bit columns, K/V split into planes. */
    { "fwd_mma", "DTYPE=f32 HEAD_DIM=128 BLOCK_M=128 BLOCK_N=32 NUM_WARPS=8 NUM_STAGES=2 SPLIT_SMEM=1" },
    { "fwd_wgmma", "DTYPE=bf16 HEAD_DIM=128" },
    { "fwd_wgmma", "DTYPE=f16 HEAD_DIM=64 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=4 NUM_STAGES=1" },
    /* Persistent with two Q tiles (O leaves from them), with one (192 over 128), and head dim 96
     * in whole panels beside a producer. */
    { "fwd_wgmma", "DTYPE=bf16 HEAD_DIM=128 OVERLAP=1 PERSISTENT=1" },
    { "fwd_wgmma", "DTYPE=f16 HEAD_DIM=192 HEAD_DIM_V=128 OVERLAP=1 PERSISTENT=1" },
    { "fwd_wgmma", "DTYPE=bf16 HEAD_DIM=96 HEAD_DIM_V=96 BLOCK_M=64 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=2" },
    /* Three consumers beside a producer (192 rows, 16 warps), persistent with two Q tiles. */
    { "fwd_wgmma", "DTYPE=bf16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=192 BLOCK_N=128 NUM_WARPS=16 NUM_STAGES=2 OVERLAP=1 "
                   "PINGPONG=1 PERSISTENT=1" },
    /* Key tiles beyond powers of two: FA3's 176 at head dim 128 beside a producer, 112 beside
     * three consumers at 64, 80 by cp.async (every warp loads). */
    { "fwd_wgmma", "DTYPE=bf16 HEAD_DIM=128 BLOCK_N=176 OVERLAP=1" },
    { "fwd_wgmma", "DTYPE=f16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=192 BLOCK_N=112 NUM_WARPS=16 NUM_STAGES=3 OVERLAP=1 PINGPONG=1 "
                   "PERSISTENT=1" },
    { "fwd_wgmma", "DTYPE=bf16 HEAD_DIM=96 HEAD_DIM_V=96 BLOCK_M=64 BLOCK_N=80 NUM_WARPS=4 NUM_STAGES=2" },
    /* f32 on TF32 wgmma: Q and K in two planes, V as it lands and V^T's two planes a stage, the
     * ready mbarriers; one plane with ALLOW_TF32 (then two Q tiles fit a persistent block). */
    { "fwd_wgmma", "DTYPE=f32 HEAD_DIM=128 BLOCK_M=128 BLOCK_N=32 NUM_WARPS=12 NUM_STAGES=1 PINGPONG=1" },
    { "fwd_wgmma", "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=128 BLOCK_N=64 NUM_WARPS=12 NUM_STAGES=2 ALLOW_TF32=1 "
                   "OVERLAP=1 PERSISTENT=1" },
    { "fwd_exact", "DTYPE=f32 HEAD_DIM=64" },
    { "fwd_exact", "DTYPE=f64 HEAD_DIM=32 HEAD_DIM_V=64 BLOCK_M=32 BLOCK_N=16 NUM_STAGES=1" },
    { "bwd_mma", "DTYPE=bf16 HEAD_DIM=128 DQ_MODE=atomic" },
    { "bwd_mma", "DTYPE=f16 HEAD_DIM=64 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=4 NUM_STAGES=1 DQ_MODE=separate" },
    /* f32: the float dS^T tile (atomic dQ), and ft_bwd_dq's tiles (separate) with a slab split. */
    { "bwd_mma", "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=4 NUM_STAGES=1 DQ_MODE=atomic" },
    { "bwd_mma", "DTYPE=f32 HEAD_DIM=128 BLOCK_M=32 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=2 DQ_MODE=separate" },
    /* Q and dO split into TF32 planes in shared memory (with a slab's queries split, and without). */
    { "bwd_mma", "DTYPE=f32 HEAD_DIM=128 BLOCK_M=64 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=1 DQ_MODE=atomic SPLIT_SMEM=1 "
                 "SPLIT_QUERIES=1" },
    { "bwd_mma", "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=64 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=2 DQ_MODE=separate "
                 "SPLIT_SMEM=1" },
    /* The float32 Hopper backward: three products (32-query tiles), one (64, three slots; at head
     * dim 128 two consumers). */
    { "bwd_wgmma_f32", "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 DQ_MODE=atomic" },
    { "bwd_wgmma_f32", "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=64 NUM_STAGES=3 DQ_MODE=atomic ALLOW_TF32=1" },
    /* dQ straight into dQ (no accumulator, no convert entry; the shared memory as atomic's). */
    { "bwd_wgmma_f32", "DTYPE=f32 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=64 NUM_STAGES=1 DQ_MODE=direct ALLOW_TF32=1" },
    { "bwd_wgmma_f32", "DTYPE=f32 HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=1 DQ_MODE=direct "
                       "ALLOW_TF32=1" },
    /* Head dim 128 in bfloat16 parts: two consumers, no K^T and no dS tile, two slots. */
    { "bwd_wgmma_f32", "DTYPE=f32 HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=2 DQ_MODE=atomic "
                       "BF16_PARTS=1" },
    /* Head dim 128 with one TF32 product: two consumers, 32-query tiles in three slots. */
    { "bwd_wgmma_f32", "DTYPE=f32 HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=3 DQ_MODE=atomic "
                       "ALLOW_TF32=1" },
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=128" },
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_N=64 NUM_WARPS=4 NUM_STAGES=3" },
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=96 HEAD_DIM_V=128 BLOCK_N=64 NUM_WARPS=4 NUM_STAGES=2 DQ_MODE=ordered" },
    /* A producer beside one consumer; head dim 64 over 128 keys (the keys' dQ halves), with
     * and without a producer. */
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=96 HEAD_DIM_V=96 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=3" },
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=1 DQ_MODE=ordered" },
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=64 HEAD_DIM_V=128 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=2" },
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=256 HEAD_DIM_V=256 BLOCK_N=64 NUM_WARPS=12 NUM_STAGES=1 DQ_MODE=ordered" },
    /* 128-row query tiles (each consumer's dQ rows; one dQ tile, L and delta in 2 KB), with and
     * without a producer. */
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=128 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=2" },
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=128 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=3 DQ_MODE=ordered" },
    /* 80-row query tiles: dQ transposed, one dS^T tile in two panels, plain and reordered. */
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=128 BLOCK_M=80 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=2" },
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=128 BLOCK_M=80 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=1 DQ_FIRST=1 DV_EARLY=1 "
                   "PERSISTENT=1 DQ_INIT=store" },
    /* The products reordered (the layout is the same): one consumer, two splitting the keys. */
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=128 NUM_WARPS=12 DQ_FIRST=1 DK_SS=1 DV_EARLY=1" },
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=128 NUM_WARPS=12 DQ_FIRST=1 L_EARLY=1 PERSISTENT=1 DQ_INIT=store" },
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=96 HEAD_DIM_V=96 NUM_WARPS=12 DQ_MODE=ordered DQ_INIT=store" },
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_M=128 BLOCK_N=128 NUM_WARPS=12 L_EARLY=1" },
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=3 DQ_FIRST=1 DV_EARLY=1" },
    /* The columns split with dQ in a tile of its own (192 over 128), and in the slot at 192. */
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=192 HEAD_DIM_V=128 BLOCK_N=64 NUM_WARPS=12 NUM_STAGES=2" },
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=192 HEAD_DIM_V=192 BLOCK_N=64 NUM_WARPS=12 NUM_STAGES=3 DQ_MODE=ordered" },
    /* The wide keys at 192 over 128: 128 keys split, one dS^T and one dQ tile, with two stages and
     * one, persistent. */
    { "bwd_wgmma", "DTYPE=bf16 HEAD_DIM=192 HEAD_DIM_V=128 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=2 DQ_FIRST=1 DV_EARLY=1" },
    { "bwd_wgmma", "DTYPE=f16 HEAD_DIM=192 HEAD_DIM_V=128 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=1 PERSISTENT=1" },
    { "bwd_exact", "DTYPE=f32 HEAD_DIM=64 DQ_MODE=atomic" },
    { "bwd_exact", "DTYPE=f64 HEAD_DIM=32 BLOCK_M=16 BLOCK_N=32 NUM_WARPS=4 DQ_MODE=separate" },
};

/* The family's defaults with the sample's parameters applied (and valid on sm_90). */
static gen_config sample_config(const sample *s)
{
    gen_config c;
    gen_config_init(&c, gen_family_find(s->family));
    assert_non_null(c.family);
    char why[512];
    if (gen_config_parse(&c, s->params, why, sizeof why))
        fail_msg("%s %s: %s", s->family, s->params, why);
    if (gen_validate(&c, gen_smem_limit_for_arch("sm_90"), why, sizeof why))
        fail_msg("%s %s: not valid on sm_90: %s", s->family, s->params, why);
    return c;
}

/* source with the definition "constexpr int NAME = EXPR;" found after `anchor` turned into
 * "constexpr int NAME = 16 + (EXPR);": the template's layout formula changed alone. NULL when
 * the definition is missing. */
static char *grow_definition(const char *source, const char *anchor, const char *name)
{
    char def[160];
    snprintf(def, sizeof def, "constexpr int %.63s = ", name);
    const char *a = strstr(source, anchor);
    const char *at = a ? strstr(a, def) : NULL;
    const char *end = at ? strchr(at, ';') : NULL;
    if (!end)
        return NULL;
    const size_t expr_at = (size_t)(at - source) + strlen(def), end_at = (size_t)(end - source);
    char *out = malloc(strlen(source) + 16);
    assert_non_null(out);
    memcpy(out, source, expr_at);
    int n = sprintf(out + expr_at, "16 + (");
    memcpy(out + expr_at + n, source + expr_at, end_at - expr_at);
    strcpy(out + end_at + n, ")");
    strcat(out, end);
    return out;
}

/* NVRTC on source for the family's target on an sm_90 GPU: 0, or -1 with the log's head in err. */
static int compile(const gen_family *f, const char *source, char *err, size_t len)
{
    gen_binary b;
    const int rc = gen_compile(source, gen_target_arch(f, "sm_90"), &b, err, len);
    gen_binary_free(&b);
    return rc;
}

/* Every "static_assert(X == FT_SMEM_BYTES_<entry>" of the source: X, and the host's line. */
typedef struct layout_check {
    char lhs[64];      /* the template's own figure, e.g. SMEM_END */
    char entry[64];    /* ft_fwd */
} layout_check;

static int find_layout_checks(const char *source, layout_check *out, int max)
{
    int n = 0;
    for (const char *p = strstr(source, "static_assert("); p && n < max; p = strstr(p + 1, "static_assert(")) {
        const char *eq = strstr(p, " == FT_SMEM_BYTES_");
        const char *nl = strchr(p, '\n');
        if (!eq || (nl && eq > nl))
            continue;
        const char *lhs = p + strlen("static_assert(");
        const char *entry = eq + strlen(" == FT_SMEM_BYTES_");
        const size_t lhs_len = (size_t)(eq - lhs), entry_len = strcspn(entry, ",) ");
        if (lhs_len >= sizeof out[n].lhs || entry_len >= sizeof out[n].entry)
            continue;
        memcpy(out[n].lhs, lhs, lhs_len);
        out[n].lhs[lhs_len] = '\0';
        memcpy(out[n].entry, entry, entry_len);
        out[n].entry[entry_len] = '\0';
        /* Only entries this configuration launches: the others' checks sit in branches the
         * preprocessor drops (bwd_*'s ft_bwd_dq with DQ_MODE atomic). */
        char define[96];
        snprintf(define, sizeof define, "#define FT_SMEM_BYTES_%s ", out[n].entry);
        if (strstr(source, define))
            n++;
    }
    return n;
}

static void traits_and_templates_agree(void **state)
{
    (void)state;
    int families_seen[16] = { 0 }, count;
    const gen_family *const *all = gen_family_list(&count);
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        const sample *s = &samples[i];
        gen_config c = sample_config(s);
        char *source = gen_expand(&c);
        assert_non_null(source);
        char err[4096];

        /* As generated: the template's layout equals the host's bytes. */
        if (compile(c.family, source, err, sizeof err))
            fail_msg("%s %s: does not compile: %s", s->family, s->params, err);

        layout_check checks[8];
        const int n = find_layout_checks(source, checks, 8);
        if (n == 0)
            fail_msg("%s: no shared-memory layout check in the template", s->family);
        for (int k = 0; k < n; k++) {
            /* The template's formula changed alone. */
            char *changed = grow_definition(source, "// ---- file: families/", checks[k].lhs);
            if (!changed)
                fail_msg("%s: the definition of %s is not in the mainloop", s->family, checks[k].lhs);
            if (!compile(c.family, changed, err, sizeof err))
                fail_msg("%s %s: compiles with %s changed alone", s->family, s->params, checks[k].lhs);
            if (!strstr(err, "layout differs"))
                fail_msg("%s: the failure does not name the layout: %.300s", s->family, err);
            free(changed);

            /* The host's figure changed alone. */
            char define[96];
            snprintf(define, sizeof define, "#define FT_SMEM_BYTES_%s ", checks[k].entry);
            const char *at = strstr(source, define);
            assert_non_null(at);
            const size_t head = (size_t)(at - source);
            char *patched = malloc(strlen(source) + 32);
            assert_non_null(patched);
            memcpy(patched, source, head);
            const int w = sprintf(patched + head, "%s%ld", define, strtol(at + strlen(define), NULL, 10) + 16);
            strcpy(patched + head + w, strchr(at, '\n'));
            if (!compile(c.family, patched, err, sizeof err) || !strstr(err, "layout differs"))
                fail_msg("%s %s: compiles with the host's FT_SMEM_BYTES_%s changed alone", s->family, s->params,
                         checks[k].entry);
            free(patched);
        }
        for (int f = 0; f < count && f < 16; f++)
            if (all[f] == c.family)
                families_seen[f] = 1;
        printf("  %-9s %-70s %d layout check(s) agree and fail when changed alone\n", s->family, s->params, n);
        free(source);
    }
    /* Every family that launches with dynamic shared memory is in the sample. */
    for (int f = 0; f < count && f < 16; f++) {
        int uses_smem = 0;
        for (int e = 0; e < all[f]->entry_count; e++)
            uses_smem |= all[f]->entries[e].smem_bytes != NULL;
        if (uses_smem && !families_seen[f])
            fail_msg("family %s has shared memory but no sample here", all[f]->name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(traits_and_templates_agree),
    };
    return cmocka_run_group_tests_name("test_traits", tests, NULL, NULL);
}
