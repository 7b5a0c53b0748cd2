/* Search spaces: the shipped space files load and enumerate valid, deterministic candidates;
 * grid builds the papers' shapes; where() and skip() filter with reasons; the random strategy is
 * reproducible; the device reaches Lua; every broken fixture (tests/spaces/bad_*.lua) fails with
 * its file, line and a plain message, runaway ones within seconds (limits pcall cannot swallow,
 * no __gc, a wall-clock bound). No GPU needed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "gen_internal.h"
#include "source_path.h"
#include "tune_space.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static tune_space_set *load_ok(const char *rel, const tune_device *dev)
{
    char path[1024], err[2048];
    test_source_path(path, sizeof path, rel);
    tune_space_set *set = NULL;
    if (tune_space_load(path, dev, &set, err, sizeof err))
        fail_msg("%s: expected to load, got: %s", rel, err);
    return set;
}

static const tune_space *find_space(const tune_space_set *set, const char *name)
{
    for (int i = 0; i < set->space_count; i++)
        if (!strcmp(set->spaces[i].name, name))
            return &set->spaces[i];
    fail_msg("no space named '%s' in %s", name, set->path);
    return NULL;
}

/* Every candidate valid for its workload and the set's device, EVEN_M/EVEN_N derived. */
static void check_candidates(const tune_space_set *set)
{
    const int smem = set->device.smem_per_block_optin;
    for (int i = 0; i < set->space_count; i++) {
        const tune_space *s = &set->spaces[i];
        assert_true(s->workload_count > 0);
        for (int j = 0; j < s->workload_count; j++) {
            const tune_candidates *c = &s->workloads[j];
            const db_workload *w = &c->workload;
            if (c->count < 1)
                fail_msg("%s: space '%s' workload %d has no candidate", set->path, s->name, j + 1);
            assert_int_equal(c->enumerated, c->valid + c->skipped_invalid + c->skipped_where);
            for (int k = 0; k < c->count; k++) {
                const gen_config *g = &c->configs[k];
                char why[512];
                if (gen_validate(g, smem, why, sizeof why))
                    fail_msg("%s: space '%s' workload %d candidate %d is invalid: %s", set->path, s->name, j + 1,
                             k, why);
                assert_ptr_equal(g->family, s->family);
                assert_int_equal(g->p[GEN_DTYPE], w->dtype);
                assert_int_equal(g->p[GEN_HEAD_DIM], w->head_dim);
                assert_int_equal(g->p[GEN_HEAD_DIM_V], w->head_dim_v);
                assert_int_equal(g->p[GEN_CAUSAL], db_workload_masked(w));
                assert_int_equal(g->p[GEN_SOFTCAP], w->softcap);
                assert_int_equal(g->p[GEN_SINKS], w->sinks);
                /* A group's packed rows (PACK_GQA) are seqlen_q x the group: never taken as even. */
                const int packed = (s->family->params & GEN_BIT(GEN_PACK_GQA)) && g->p[GEN_PACK_GQA];
                assert_int_equal(g->p[GEN_EVEN_M], !w->varlen && !packed && w->seqlen_q % g->p[GEN_BLOCK_M] == 0);
                assert_int_equal(g->p[GEN_EVEN_N], !w->varlen && w->seqlen_k % g->p[GEN_BLOCK_N] == 0);
            }
        }
    }
}

/* Two configurations alike, member by member (a gen_config may have padding). */
static int same_config(const gen_config *a, const gen_config *b)
{
    return a->family == b->family && !memcmp(a->p, b->p, sizeof a->p);
}

static void assert_same_sets(const tune_space_set *a, const tune_space_set *b)
{
    assert_int_equal(a->space_count, b->space_count);
    for (int i = 0; i < a->space_count; i++) {
        assert_string_equal(a->spaces[i].name, b->spaces[i].name);
        assert_int_equal(a->spaces[i].workload_count, b->spaces[i].workload_count);
        for (int j = 0; j < a->spaces[i].workload_count; j++) {
            const tune_candidates *x = &a->spaces[i].workloads[j], *y = &b->spaces[i].workloads[j];
            assert_int_equal(x->count, y->count);
            assert_memory_equal(&x->workload, &y->workload, sizeof x->workload);
            for (int k = 0; k < x->count; k++)
                assert_true(same_config(&x->configs[k], &y->configs[k]));
        }
    }
}

/* ---- the shipped spaces ---------------------------------------------------------------- */

static const struct {
    const char *file;
    int spaces;          /* on sm_90 */
    int workloads;       /* over every space, on sm_90 */
    int hopper_only;     /* 1: other archs are refused with a message naming sm_90 */
} shipped[] = {
    { "tuner/spaces/default.lua", 8, 352, 0 },
    { "tuner/spaces/wide.lua", 6, 352, 0 },
    { "tuner/spaces/quick.lua", 2, 4, 0 },
    { "tuner/spaces/derived.lua", 8, 64, 0 },
    { "tuner/spaces/kinds.lua", 4, 14, 1 },
};

/* Each shipped space loads for every arch the generator targets (smaller shared memory than
 * sm_90's must not leave a workload without candidates), or, tuning Hopper's families only,
 * says so on the others. */
static void shipped_spaces_enumerate(void **state)
{
    (void)state;
    static const char *const archs[] = { "sm_90", "sm_80", "sm_86" };
    for (int a = 0; a < ARRAY_LEN(archs); a++)
        for (int i = 0; i < ARRAY_LEN(shipped); i++) {
            tune_device dev;
            assert_int_equal(tune_device_default(&dev, archs[a]), 0);
            if (a > 0 && shipped[i].hopper_only) {
                char path[1024], err[1024];
                tune_space_set *none = NULL;
                test_source_path(path, sizeof path, shipped[i].file);
                assert_int_equal(tune_space_load(path, &dev, &none, err, sizeof err), -1);
                assert_non_null(strstr(err, "run it on an sm_90 GPU"));
                continue;
            }
            tune_space_set *x = load_ok(shipped[i].file, &dev), *y = load_ok(shipped[i].file, &dev);
            int workloads = 0;
            for (int k = 0; k < x->space_count; k++)
                workloads += x->spaces[k].workload_count;
            if (a == 0) {
                assert_int_equal(x->space_count, shipped[i].spaces);
                assert_int_equal(workloads, shipped[i].workloads);
            }
            check_candidates(x);
            assert_same_sets(x, y);
            print_message("%s on %s: %d spaces, %d workloads, %ld candidates\n", shipped[i].file, archs[a],
                          x->space_count, workloads, tune_space_set_count(x));
            tune_space_set_free(x);
            tune_space_set_free(y);
        }
}

/* default.lua is what `make tune` runs: both passes, both dtypes, D 64 and 128, causal and not,
 * seqlen 512..16384 at 16384 tokens; the Hopper families also head dims 96, 192/128, 192/192 and
 * 256 (16 heads, 16384 tokens, N 1024 and 4096), and the papers' head dims 64 and 128 on small
 * grids (B 1, N 256 to 2048). */
static int hopper_extra(const db_workload *w)
{
    const int wide = (w->head_dim == 96 && w->head_dim_v == 96) || (w->head_dim == 256 && w->head_dim_v == 256) ||
                     (w->head_dim == 192 && (w->head_dim_v == 128 || w->head_dim_v == 192));
    if (wide)
        return w->heads == 16 && w->batch * w->seqlen_q == 16384 && (w->seqlen_q == 1024 || w->seqlen_q == 4096);
    /* the small grids: a batch of one at head dims 64 and 128, 256 to 2048 tokens, and of eight at 256 */
    return (w->head_dim == 64 || w->head_dim == 128) && w->heads * w->head_dim == 2048 &&
           ((w->batch == 1 && (w->seqlen_q == 256 || w->seqlen_q == 512 || w->seqlen_q == 1024 || w->seqlen_q == 2048)) ||
            (w->batch == 8 && w->seqlen_q == 256));
}

/* The float32 shapes: the papers' head dims and masks at three lengths, with TF32 allowed or not;
 * and (the forward on Hopper) head dim 96 at 16 heads, N 1024 and 4096. */
static void assert_f32_shape(const db_workload *w)
{
    assert_true(w->dtype == 0 && w->head_dim == w->head_dim_v);
    assert_int_equal(w->batch * w->seqlen_q, 16384);
    if (w->head_dim == 96) {
        assert_true(w->seqlen_q == 1024 || w->seqlen_q == 4096);
        assert_int_equal(w->heads, 16);
        return;
    }
    assert_true(w->head_dim == 64 || w->head_dim == 128);
    assert_true(w->seqlen_q == 1024 || w->seqlen_q == 4096 || w->seqlen_q == 16384);
    assert_int_equal(w->heads * w->head_dim, 2048);
}

static void default_space_covers_the_readme(void **state)
{
    (void)state;
    tune_space_set *set = load_ok("tuner/spaces/default.lua", NULL);
    /* On sm_90 the Hopper families take the dense forwards, the float32 ones too: fwd_mma is
     * searched for decode only. */
    for (int i = 0; i < set->space_count; i++)
        assert_true(strcmp(set->spaces[i].family->name, "fwd_mma") != 0 || !strcmp(set->spaces[i].name, "decode"));
    /* bwd_mma is tuned in 16-bit types where no Hopper backward runs (on sm_90 bwd_wgmma won every
     * workload), and in f32 everywhere (bwd_f32: bwd_wgmma takes no f32). */
    for (int i = 0; i < set->space_count; i++)
        assert_true(strcmp(set->spaces[i].family->name, "bwd_mma") != 0 ||
                    !strcmp(set->spaces[i].name, "bwd_f32"));
    assert_string_equal(find_space(set, "bwd_f32")->family->name, "bwd_mma");
    tune_device ampere;
    assert_int_equal(tune_device_default(&ampere, "sm_80"), 0);
    tune_space_set *older = load_ok("tuner/spaces/default.lua", &ampere);
    assert_string_equal(find_space(older, "fwd")->family->name, "fwd_mma");
    assert_string_equal(find_space(older, "fwd_f32")->family->name, "fwd_mma");
    assert_string_equal(find_space(older, "bwd")->family->name, "bwd_mma");
    assert_int_equal(find_space(older, "bwd")->workload_count, find_space(older, "fwd")->workload_count);
    tune_space_set_free(older);
    for (int i = 0; i < set->space_count; i++) {
        const tune_space *s = &set->spaces[i];
        int seen[4][3][2][15] = { { { { 0 } } } };   /* dtype, head dim / 64, causal, log2 seqlen */
        int small[4][3][2][15] = { { { { 0 } } } };  /* the same, the small grid's (batch 1) */
        int eight[4][3][2] = { { { 0 } } };       /* the batch of eight at N 256 */
        int extra = 0, tf32 = 0, spec = 0;
        const int hopper = !strcmp(s->name, "fwd_hopper") || !strcmp(s->name, "bwd_hopper");
        for (int j = 0; j < s->workload_count; j++) {
            const tune_candidates *c = &s->workloads[j];
            const db_workload *w = &c->workload;
            /* At head dims 192 and 256 bwd_wgmma's two consumers split the columns beside a
             * producer: only the stages vary. fwd_wgmma in f32 at head dim 128: one tile fits
             * (128 x 32, one stage), taking turns or not. */
            const int least = (!strcmp(s->name, "bwd_hopper") && w->head_dim > 128) ||
                                      (!strcmp(s->name, "fwd_f32_hopper") && w->head_dim == 128) ||
                                      (!strcmp(s->name, "bwd_f32_hopper") && !w->tf32)
                                  ? 2
                                  : 3;
            /* (bwd_wgmma_f32 with three products: 32-row query tiles in one slot or two.) */
            if (!strcmp(s->name, "bwd_mla")) {   /* 192 over 128 and 192: the columns split or the wide keys */
                assert_true(w->head_dim == 192 && hopper_extra(w));
                /* at 192 over 192 the wide keys do not fit shared memory: the columns split's
                 * stages, the first dQ share stored or not */
                const int fewest = w->head_dim_v == 192 ? 6 : 8;
                if (c->count < fewest || c->count > 24)
                    fail_msg("default.lua 'bwd_mla' workload %d: %d candidates, outside %d..24", j + 1, c->count,
                             fewest);
                extra++;
                continue;
            }
            if (c->count < least || c->count > 24)
                fail_msg("default.lua '%s' workload %d: %d candidates, outside %d..24", s->name, j + 1, c->count,
                         least);
            if (!strcmp(s->name, "bwd_f32") || !strcmp(s->name, "fwd_f32_hopper") ||
                !strcmp(s->name, "fwd_tf32_hopper") || !strcmp(s->name, "bwd_f32_hopper")) {
                /* float32 on TF32 tensor cores: the papers' shapes, three lengths; TF32 allowed in
                 * fwd_tf32_hopper's, in bwd_f32 both ways */
                const int both_ways = !strcmp(s->name, "bwd_f32") || !strcmp(s->name, "bwd_f32_hopper");
                assert_true(w->tf32 == !strcmp(s->name, "fwd_tf32_hopper") || both_ways);
                /* bwd_f32_hopper: three TF32 products at head dim 64, at 128 the bfloat16 parts alone
                 * (with TF32 one TF32 product: the two parts are wide.lua's until measured) */
                if (!strcmp(s->name, "bwd_f32_hopper"))
                    for (int k = 0; k < c->count; k++)
                        assert_int_equal(c->configs[k].p[GEN_BF16_PARTS], w->head_dim == 128 && !w->tf32);
                assert_true(w->head_dim != 96 || !strncmp(s->name, "fwd_", 4));   /* no backward takes f32 96 */
                tf32 += w->tf32;
                assert_f32_shape(w);
                extra++;
                continue;
            }
            if (!strcmp(s->name, "decode") && w->seqlen_q == 16) {   /* speculative decoding */
                assert_true(w->causal && w->bottom_right && w->heads == 32 && w->heads_k == 8 && w->head_dim == 128);
                assert_true(w->seqlen_k == 4096 || w->seqlen_k == 16384);
                assert_true(w->batch == 1 || w->batch == 8);
                spec++;
                continue;
            }
            if (!strcmp(s->name, "decode")) {   /* bench/decode.py's shapes */
                assert_true(w->seqlen_q == 1 && w->heads == 32 && w->heads_k == 8 && w->head_dim == 128);
                assert_true(w->seqlen_k == 8192 || w->seqlen_k == 32768 || w->seqlen_k == 131072);
                assert_true(w->batch == 1 || w->batch == 2 || w->batch == 4 || w->batch == 8);
                assert_false(w->causal);
                extra++;
                continue;
            }
            int lg = 0;
            while ((1 << lg) < w->seqlen_q)
                lg++;
            assert_true(lg >= 8 && lg <= 14);
            if (hopper && hopper_extra(w)) {
                if (w->batch == 1 && w->seqlen_q <= 2048)
                    small[w->dtype][w->head_dim / 64][w->causal][lg]++;
                if (w->batch == 8)
                    eight[w->dtype][w->head_dim / 64][w->causal]++;
                extra++;
                continue;
            }
            assert_int_equal(w->batch * w->seqlen_q, 16384);
            assert_int_equal(w->heads * w->head_dim, 2048);
            assert_true(w->head_dim == 64 || w->head_dim == 128);
            seen[w->dtype][w->head_dim / 64][w->causal][lg]++;
            /* (bwd_wgmma at head dim 64 has 3 configurations: one warpgroup, 1..3 stages.) */
        }
        if (!strcmp(s->name, "bwd_f32") || !strcmp(s->name, "fwd_f32_hopper") || !strcmp(s->name, "fwd_tf32_hopper")) {   /* 2 head dims x 2 causal x 3 lengths (bwd_f32: with TF32 and without), the forwards + 2 causal x 2 lengths at 96 */
            const int both = !strcmp(s->name, "bwd_f32");
            assert_int_equal(extra, both ? 24 : 16);
            assert_int_equal(tf32, both ? 12 : !strcmp(s->name, "fwd_tf32_hopper") ? 16 : 0);
            continue;
        }
        if (!strcmp(s->name, "bwd_f32_hopper")) {   /* 2 head dims x 2 causal x 3 lengths, with TF32 and without */
            assert_int_equal(extra, 24);
            assert_int_equal(tf32, 12);
            continue;
        }
        if (!strcmp(s->name, "decode")) {   /* 2 dtypes x 3 lengths x 4 batches; 2 x 2 x 2 drafts */
            assert_int_equal(extra, 24);
            assert_int_equal(spec, 8);
            continue;
        }
        if (!strcmp(s->name, "bwd_mla")) {   /* 2 head dims of V x 2 dtypes x 2 causal x 2 lengths */
            assert_int_equal(extra, 16);
            continue;
        }
        /* 2 dtypes x 2 causal x (4 head-dim pairs x 2 lengths, + the small grids' 2 head dims x 5
         * shapes); the backward's head dim 192 is bwd_mla's */
        assert_int_equal(extra, !hopper ? 0 : !strcmp(s->name, "bwd_hopper") ? 56 : 72);
        for (int dt = 1; dt <= 2; dt++)
            for (int d = 1; d <= 2; d++)
                for (int causal = 0; causal < 2; causal++)
                    for (int lg = 8; lg <= 14; lg++) {
                        assert_int_equal(seen[dt][d][causal][lg], lg >= 9);
                        /* the small grid: each of N 256, 512, 1024, 2048 once (Hopper) */
                        assert_int_equal(small[dt][d][causal][lg], hopper && lg <= 11);
                    }
        for (int dt = 1; dt <= 2; dt++)
            for (int d = 1; d <= 2; d++)
                for (int causal = 0; causal < 2; causal++)   /* the batch of eight at N 256, once (Hopper) */
                    assert_int_equal(eight[dt][d][causal], hopper);
    }
    tune_space_set_free(set);
}

/* 1 when the two sets hold the same workloads of each direction (each once), whatever their spaces. */
static int workload_count_in(const tune_space_set *set, const db_workload *w, int backward)
{
    int hits = 0;
    for (int k = 0; k < set->space_count; k++)
        for (int l = 0; l < set->spaces[k].workload_count; l++)
            hits += set->spaces[k].family->backward == backward && !memcmp(&set->spaces[k].workloads[l].workload, w, sizeof *w);
    return hits;
}

/* The same workloads, each as many times in each direction (two spaces of one direction may take
 * the same workload: bwd_f32 and bwd_f32_hopper at head dim 64, and with TF32 at 128). */
static int same_workloads(const tune_space_set *a, const tune_space_set *b)
{
    int n = 0, matched = 0;
    for (int i = 0; i < a->space_count; i++)
        for (int j = 0; j < a->spaces[i].workload_count; j++, n++) {
            const db_workload *w = &a->spaces[i].workloads[j].workload;
            const int backward = a->spaces[i].family->backward;
            matched += workload_count_in(b, w, backward) == workload_count_in(a, w, backward);
        }
    int m = 0;
    for (int k = 0; k < b->space_count; k++)
        m += b->spaces[k].workload_count;
    return n == m && matched == n;
}

/* wide.lua: default.lua's workloads, on Hopper over every configuration the families' checks
 * accept (no `where` of its own) with the guided strategy, which a sweep's --budget bounds; the
 * mma.sync families only where they can win there: split-key decode and the float32 backward. */
static void wide_space_searches_every_configuration(void **state)
{
    (void)state;
    tune_space_set *set = load_ok("tuner/spaces/wide.lua", NULL);   /* sm_90 */
    static const struct {
        const char *name, *family;
        int workloads, least;   /* least: candidates of every workload at least */
    } hopper[] = {
        { "decode", "fwd_mma", 32, 6 },
        { "bwd_f32", "bwd_mma", 24, 8 },
        { "fwd_hopper", "fwd_wgmma", 120, 40 },
        { "fwd_f32_hopper", "fwd_wgmma", 32, 4 },
        { "bwd_hopper", "bwd_wgmma", 120, 4 },   /* head dim 256: the stages and DQ_INIT */
        { "bwd_f32_hopper", "bwd_wgmma_f32", 24, 2 },   /* three products at 64: 32 rows, one slot or two */
    };
    assert_int_equal(set->space_count, ARRAY_LEN(hopper));
    for (int i = 0; i < ARRAY_LEN(hopper); i++) {
        const tune_space *s = find_space(set, hopper[i].name);
        assert_string_equal(s->family->name, hopper[i].family);
        assert_int_equal(s->strategy.kind, TUNE_GUIDED);
        assert_true(s->strategy.budget_s == 0);   /* a share of the sweep's --budget */
        assert_int_equal(s->workload_count, hopper[i].workloads);
        long total = 0;
        for (int j = 0; j < s->workload_count; j++) {
            const tune_candidates *c = &s->workloads[j];
            if (c->count < hopper[i].least)
                fail_msg("wide.lua '%s' workload %d: %d candidates, fewer than %d", s->name, j + 1, c->count,
                         hopper[i].least);
            total += c->count;
        }
        print_message("wide.lua on sm_90: %s, %d workloads, %ld candidates\n", s->name, s->workload_count, total);
    }
    /* With no hand pruning a workload of the papers' grid holds hundreds of forwards. Its shapes
     * are default.lua's (below), which default_space_covers_the_readme checks. */
    const tune_space *fwd = find_space(set, "fwd_hopper");
    for (int j = 0; j < fwd->workload_count; j++)
        if (!hopper_extra(&fwd->workloads[j].workload))
            assert_true(fwd->workloads[j].count >= 200);

    /* Elsewhere the mma.sync families: the grid in both directions, float32 and decode. */
    tune_device ampere;
    assert_int_equal(tune_device_default(&ampere, "sm_80"), 0);
    tune_space_set *older = load_ok("tuner/spaces/wide.lua", &ampere);
    static const char *const mma[][2] = { { "decode", "fwd_mma" }, { "fwd", "fwd_mma" }, { "fwd_f32", "fwd_mma" },
                                          { "bwd", "bwd_mma" }, { "bwd_f32", "bwd_mma" } };
    assert_int_equal(older->space_count, ARRAY_LEN(mma));
    for (int i = 0; i < ARRAY_LEN(mma); i++) {
        const tune_space *s = find_space(older, mma[i][0]);
        assert_string_equal(s->family->name, mma[i][1]);
        assert_int_equal(s->strategy.kind, TUNE_GUIDED);
    }
    /* The same workloads as default.lua's, arch by arch: a space file cannot share another's
     * grids, so this keeps the two from drifting apart. */
    tune_space_set *hand = load_ok("tuner/spaces/default.lua", &ampere), *hand90 = load_ok("tuner/spaces/default.lua", NULL);
    assert_true(same_workloads(older, hand));
    assert_true(same_workloads(set, hand90));
    tune_space_set_free(hand);
    tune_space_set_free(hand90);
    tune_space_set_free(older);
    tune_space_set_free(set);
}

/* The shipped files' comments state no counts of candidates, kernels or timings: written by
 * hand they drift from what runs (default.lua said 264 kernels while 256 compiled, quick.lua four
 * candidates while fourteen ran); `flashtune tune` prints the real ones. */
static int is_count(const char *word)
{
    static const char *const words[] = { "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                         "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                         "twenty", "thirty", "forty", "fifty", "hundred", "dozen", "dozens" };
    if (*word >= '0' && *word <= '9')
        return 1;
    for (int i = 0; i < ARRAY_LEN(words); i++)
        if (!strcmp(word, words[i]))
            return 1;
    return 0;
}

static void shipped_comments_state_no_counts(void **state)
{
    (void)state;
    static const char *const counted[] = { "candidate", "kernel", "timing" };
    for (int i = 0; i < ARRAY_LEN(shipped); i++) {
        char path[1024], line[1024];
        test_source_path(path, sizeof path, shipped[i].file);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        for (int number = 1; fgets(line, sizeof line, f); number++) {
            const char *comment = strstr(line, "--");
            if (!comment)
                continue;
            /* Words of the comment, lower case; a count followed within three words by a counted noun. */
            char words[64][32];
            int n = 0;
            for (const char *p = comment; *p && n < 64;) {
                while (*p && !(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9'))
                    p++;
                int k = 0;
                while (((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) && k < 31)
                    words[n][k++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p), p++;
                words[n][k] = '\0';
                n += k > 0;
            }
            for (int w = 0; w < n; w++)
                for (int a = w + 1; is_count(words[w]) && a <= w + 3 && a < n; a++)
                    for (int c = 0; c < ARRAY_LEN(counted); c++)
                        if (!strncmp(words[a], counted[c], strlen(counted[c])))
                            fail_msg("%s:%d states a count (\"%s ... %s\"): let `flashtune tune` print it\n  %s",
                                     shipped[i].file, number, words[w], words[a], line);
        }
        fclose(f);
    }

    /* What derived.lua's comments say of its spaces: no backward space at head dim 256 where a
     * block's shared memory is small (sm_86, sm_89), and samples of eight in f32. */
    static const struct {
        const char *arch;
        int has_bwd_d256;
    } archs[] = { { "sm_90", 1 }, { "sm_80", 1 }, { "sm_86", 0 }, { "sm_89", 0 } };
    for (int a = 0; a < ARRAY_LEN(archs); a++) {
        tune_device dev;
        assert_int_equal(tune_device_default(&dev, archs[a].arch), 0);
        tune_space_set *set = load_ok("tuner/spaces/derived.lua", &dev);
        int found = 0;
        for (int i = 0; i < set->space_count; i++) {
            const tune_space *s = &set->spaces[i];
            found |= !strcmp(s->name, "bwd bf16 d256");
        }
        assert_int_equal(found, archs[a].has_bwd_d256);
        for (int k = 0; k < 2; k++) {
            const tune_space *s = find_space(set, k ? "bwd f32" : "fwd f32");
            for (int j = 0; j < s->workload_count; j++)
                assert_int_equal(s->workloads[j].count, 8);
        }
        tune_space_set_free(set);
    }
}

/* ---- grid -------------------------------------------------------------------------------- */

static const struct {
    int head_dim, seqlen, batch, heads;
} paper_shapes[] = {
    { 128, 512, 32, 16 }, { 128, 1024, 16, 16 }, { 128, 2048, 8, 16 },
    { 128, 4096, 4, 16 }, { 128, 8192, 2, 16 },  { 128, 16384, 1, 16 },
    { 64, 512, 32, 32 },  { 64, 16384, 1, 32 },
};

static void grid_builds_paper_shapes(void **state)
{
    (void)state;
    tune_space_set *set = load_ok("tests/spaces/good_grid.lua", NULL);
    const tune_space *paper = find_space(set, "paper");
    assert_int_equal(paper->workload_count, 12);
    for (int i = 0; i < ARRAY_LEN(paper_shapes); i++) {
        int found = 0;
        for (int j = 0; j < paper->workload_count; j++) {
            const db_workload *w = &paper->workloads[j].workload;
            if (w->head_dim != paper_shapes[i].head_dim || w->seqlen_q != paper_shapes[i].seqlen)
                continue;
            found++;
            assert_int_equal(w->dtype, 2);
            assert_int_equal(w->seqlen_k, w->seqlen_q);
            assert_int_equal(w->head_dim_v, w->head_dim);
            assert_int_equal(w->causal, 0);
            if (w->batch != paper_shapes[i].batch || w->heads != paper_shapes[i].heads)
                fail_msg("D=%d seqlen %d: expected batch %d heads %d, got %d %d", w->head_dim, w->seqlen_q,
                         paper_shapes[i].batch, paper_shapes[i].heads, w->batch, w->heads);
        }
        assert_int_equal(found, 1);
    }
    /* Order: dtype, head_dim, head_dim_v, causal, seqlen_q, seqlen_k, batch, heads (innermost). */
    const tune_space *cross = find_space(set, "cross");
    assert_int_equal(cross->workload_count, 16);
    const db_workload *first = &cross->workloads[0].workload, *second = &cross->workloads[1].workload,
                        *last = &cross->workloads[15].workload;
    assert_int_equal(first->dtype, 1);
    assert_int_equal(first->head_dim_v, 64);
    assert_int_equal(first->causal, 0);
    assert_int_equal(first->seqlen_q, 128);
    assert_int_equal(first->seqlen_k, 256);
    assert_int_equal(first->batch, 1);
    assert_int_equal(second->batch, 2);
    assert_int_equal(last->head_dim_v, 128);
    assert_int_equal(last->causal, 1);
    assert_int_equal(last->seqlen_k, 512);
    assert_int_equal(last->heads, 3);
    /* Grouped heads, the softcap and sinks: heads_k as many as heads is no grouping (0); softcap
     * turns inside causal, heads_k inside heads; a workload table takes them too, sinks compiled
     * into its kernels (SINKS 1). */
    const tune_space *features = find_space(set, "features");
    assert_int_equal(features->workload_count, 6);
    static const int want[6][3] = { { 2, 0, 0 }, { 0, 0, 0 }, { 2, 1, 0 }, { 0, 1, 0 }, { 1, 1, 0 }, { 0, 0, 1 } };
    for (int i = 0; i < 6; i++) {
        const db_workload *w = &features->workloads[i].workload;
        assert_int_equal(w->heads_k, want[i][0]);
        assert_int_equal(w->softcap, want[i][1]);
        assert_int_equal(w->sinks, want[i][2]);
        for (int c = 0; c < features->workloads[i].count; c++)
            assert_int_equal(features->workloads[i].configs[c].p[GEN_SINKS], want[i][2]);
    }
    char text[128];
    tune_workload_str(&features->workloads[4].workload, text, sizeof text);
    assert_string_equal(text, "f16 d=64 noncausal b=1 h=6 hk=1 s=128 softcap");
    tune_workload_str(&features->workloads[5].workload, text, sizeof text);
    assert_string_equal(text, "bf16 d=64 causal b=2 h=4 s=100 sinks");
    /* A backward's SPLITS shares a group's query heads over blocks: refused before compiling where
     * it does not divide the group (no grouping: a group of 1), with the reason. */
    const tune_space *splits = find_space(set, "splits");
    assert_int_equal(splits->workloads[0].count, 1);
    assert_int_equal(splits->workloads[0].configs[0].p[GEN_SPLITS], 1);
    assert_int_equal(splits->workloads[0].skipped_invalid, 1);
    assert_non_null(strstr(splits->workloads[0].reasons[0].reason, "SPLITS=2 shares a group's query heads"));
    /* With a group the split is the problem's (db_workload_group_splits: 2 for 8 key-tile blocks),
     * the one the runtime launches: a candidate of another is skipped, saying so. */
    assert_int_equal(splits->workloads[1].count, 1);
    assert_int_equal(splits->workloads[1].configs[0].p[GEN_SPLITS], 2);
    assert_int_equal(splits->workloads[1].skipped_invalid, 1);
    assert_non_null(strstr(splits->workloads[1].reasons[0].reason, "SPLITS=1: this backward runs with SPLITS=2"));
    /* grid{} turns sinks inside softcap. */
    const tune_space *sinks = find_space(set, "sinks");
    assert_int_equal(sinks->workload_count, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(sinks->workloads[i].workload.softcap, i / 2);
        assert_int_equal(sinks->workloads[i].workload.sinks, i % 2);
    }
    /* grid{}'s bottom_right: on every workload, in the database's one form (the mask's). */
    const tune_space *drafts = find_space(set, "drafts");
    assert_int_equal(drafts->workload_count, 2);
    for (int i = 0; i < 2; i++) {
        const db_workload *w = &drafts->workloads[i].workload;
        assert_true(w->causal && w->bottom_right && !w->window);
        assert_int_equal(w->seqlen_q, 16);
        assert_int_equal(w->seqlen_k, i ? 1000 : 256);
        assert_int_equal(w->heads_k, 2);
        assert_int_equal(drafts->workloads[i].configs[0].p[GEN_CAUSAL], 1);
    }
    /* grid{} turns tf32 inside sinks; its kernels make one TF32 product (ALLOW_TF32 1). */
    const tune_space *tf32 = find_space(set, "tf32");
    assert_int_equal(tf32->workload_count, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tf32->workloads[i].workload.sinks, i / 2);
        assert_int_equal(tf32->workloads[i].workload.tf32, i % 2);
        assert_int_equal(tf32->workloads[i].count, 1);
        assert_int_equal(tf32->workloads[i].configs[0].p[GEN_ALLOW_TF32], i % 2);
    }
    tune_workload_str(&tf32->workloads[3].workload, text, sizeof text);
    assert_string_equal(text, "f32 d=64 noncausal b=1 h=2 s=256 sinks tf32");
    /* Masks in their one form (a window ending at the diagonal is causal; a causal mask's window
     * is its left side) and a variable-length batch's bucket; their kernels are CAUSAL, VARLEN. */
    const tune_space *kinds = find_space(set, "kinds");
    assert_int_equal(kinds->workload_count, 5);
    static const int mask[5][5] = {   /* causal, window, left, right, bottom_right */
        { 0, 1, 128, 64, 0 }, { 1, 1, 256, 0, 0 }, { 1, 0, 0, 0, 0 }, { 1, 0, 0, 0, 1 }, { 1, 0, 0, 0, 0 },
    };
    for (int i = 0; i < 5; i++) {
        const db_workload *w = &kinds->workloads[i].workload;
        const int got[5] = { w->causal, w->window, w->window_left, w->window_right, w->bottom_right };
        for (int j = 0; j < 5; j++)
            if (got[j] != mask[i][j])
                fail_msg("kinds workload %d field %d: %d, expected %d", i, j, got[j], mask[i][j]);
        assert_int_equal(w->varlen, i == 4 ? 4 : 0);
        assert_true(kinds->workloads[i].count > 0);
        for (int c = 0; c < kinds->workloads[i].count; c++) {
            assert_int_equal(kinds->workloads[i].configs[c].p[GEN_CAUSAL], 1);
            assert_int_equal(kinds->workloads[i].configs[c].p[GEN_VARLEN], i == 4);
            if (i == 4)   /* 4096 rows fill every tile of a dense batch; a varlen one has no such length */
                assert_int_equal(kinds->workloads[i].configs[c].p[GEN_EVEN_M], 0);
        }
    }
    tune_workload_str(&kinds->workloads[0].workload, text, sizeof text);
    assert_string_equal(text, "bf16 d=64 noncausal win=128,64 b=2 h=4 s=1000");
    tune_workload_str(&kinds->workloads[4].workload, text, sizeof text);
    assert_string_equal(text, "bf16 d=64 causal b=16 h=4 s=4096 varlen=4/8");
    check_candidates(set);
    tune_space_set_free(set);
}

/* kinds.lua's grouped backward: every candidate shares the group's query heads over as many
 * blocks as the runtime will (db_workload_group_splits, from the problem alone: the enumeration
 * sets it), so that the kernel a sweep times is the one served; and the grouped forwards keep
 * their K/V heads. */
static void grouped_kinds_split_as_the_runtime_does(void **state)
{
    (void)state;
    tune_device dev;
    assert_int_equal(tune_device_default(&dev, "sm_90"), 0);
    tune_space_set *set = load_ok("tuner/spaces/kinds.lua", &dev);
    const tune_space *bwd = find_space(set, "bwd_grouped");
    assert_int_equal(bwd->workload_count, 2);
    assert_true(bwd->family->backward);
    for (int i = 0; i < bwd->workload_count; i++) {
        db_workload w;   /* a space's workloads carry no direction: its template's is the backward */
        tune_workload_db(&bwd->workloads[i].workload, DB_OP_BWD, &w);
        assert_int_equal(w.heads_k, 8);
        assert_true(bwd->workloads[i].count > 0);
        const int splits = db_workload_group_splits(&w);
        assert_true(splits > 1);
        for (int c = 0; c < bwd->workloads[i].count; c++)
            if (bwd->workloads[i].configs[c].p[GEN_SPLITS] != splits)
                fail_msg("bwd_grouped workload %d candidate %d: SPLITS=%d, the runtime's %d", i, c,
                         bwd->workloads[i].configs[c].p[GEN_SPLITS], splits);
    }
    const tune_space *fwd = find_space(set, "fwd_kinds");
    int grouped = 0;
    for (int i = 0; i < fwd->workload_count; i++)
        grouped += fwd->workloads[i].workload.heads_k == 8;
    assert_int_equal(grouped, 2);
    tune_space_set_free(set);
}

/* A variable-length workload's lengths: the longest present, every one in 1..longest, the
 * tokens in the workload's bucket, the same every time; FLOPs summed over them. */
static void varlen_lengths_fill_their_bucket(void **state)
{
    (void)state;
    const db_workload cases[] = {
        { .dtype = 2, .head_dim = 128, .head_dim_v = 128, .batch = 23, .heads = 16, .seqlen_q = 8192,
          .seqlen_k = 8192, .varlen = 4, .causal = 1 },
        { .dtype = 2, .head_dim = 64, .head_dim_v = 64, .batch = 8, .heads = 2, .seqlen_q = 1024, .seqlen_k = 4096,
          .varlen = 6 },
        /* Log-uniform lengths fill at least about 1 / ln(longest): bucket 2 here, not 1. */
        { .dtype = 1, .head_dim = 64, .head_dim_v = 64, .batch = 64, .heads = 2, .seqlen_q = 3000, .seqlen_k = 3000,
          .varlen = 2 },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        const db_workload *w = &cases[i];
        int q[64], k[64], again[128];
        char why[256];
        if (tune_varlen_lengths(w, q, k, why, sizeof why) != 0)
            fail_msg("case %d: %s", i, why);
        assert_int_equal(tune_varlen_lengths(w, again, again + 64, why, sizeof why), 0);
        long long tq = 0, tk = 0;
        int longest_q = 0, longest_k = 0, sorted = 1;
        double pairs = 0;
        for (int b = 0; b < w->batch; b++) {
            assert_true(q[b] >= 1 && q[b] <= w->seqlen_q && k[b] >= 1 && k[b] <= w->seqlen_k);
            assert_int_equal(q[b], again[b]);
            assert_int_equal(k[b], again[64 + b]);
            longest_q = q[b] > longest_q ? q[b] : longest_q;
            longest_k = k[b] > longest_k ? k[b] : longest_k;
            sorted &= b == 0 || q[b] <= q[b - 1];
            tq += q[b], tk += k[b];
            pairs += (double)q[b] * k[b];
        }
        assert_int_equal(longest_q, w->seqlen_q);
        assert_int_equal(longest_k, w->seqlen_k);
        assert_false(sorted);   /* shuffled, as a real batch comes */
        assert_int_equal(db_varlen_bucket(w->batch, w->seqlen_q, w->seqlen_k, tq, tk), w->varlen);
        const double want = 2.0 * w->heads * pairs * (w->head_dim + w->head_dim_v) / (w->causal ? 2 : 1);
        assert_true(fabs(tune_flops(w, 0) - want) <= 1e-9 * want);
    }
}

/* ---- where() and skip() ---------------------------------------------------------------------- */

static size_t smem_of(const gen_config *c)
{
    size_t most = 0;
    for (int i = 0; i < c->family->entry_count; i++) {
        const gen_entry *e = &c->family->entries[i];
        if (gen_entry_used(c, e) && e->smem_bytes && e->smem_bytes(c->p) > most)
            most = e->smem_bytes(c->p);
    }
    return most;
}

static long reason_count(const tune_candidates *c, const char *reason)
{
    for (int i = 0; i < c->reason_count; i++)
        if (!strcmp(c->reasons[i].reason, reason))
            return c->reasons[i].count;
    return 0;
}

static void where_filters_with_reasons(void **state)
{
    (void)state;
    tune_space_set *set = load_ok("tests/spaces/good_where.lua", NULL);
    const tune_candidates *c = &find_space(set, "filtered")->workloads[0];
    assert_int_equal(c->enumerated, 24);
    assert_true(c->count > 0);
    assert_int_equal(c->skipped_where, reason_count(c, "where: no wide key tiles") +
                                           reason_count(c, "where: over 40000 bytes"));
    assert_int_equal(reason_count(c, "where: no wide key tiles"), 4);   /* the valid BLOCK_N = 128 ones */
    assert_true(reason_count(c, "where: over 40000 bytes") > 0);
    for (int k = 0; k < c->count; k++) {
        assert_int_not_equal(c->configs[k].p[GEN_BLOCK_N], 128);
        assert_true(smem_of(&c->configs[k]) <= 40000);
        assert_int_equal(c->configs[k].p[GEN_EVEN_M], 0);   /* seqlen_q 1000 */
        assert_int_equal(c->configs[k].p[GEN_EVEN_N], 1);   /* seqlen_k 2048 */
    }
    /* Enumeration order: the searched parameters in gen_param order, the last one fastest. */
    for (int k = 1; k < c->count; k++) {
        const int *p = c->configs[k - 1].p, *q = c->configs[k].p;
        const int order[] = { GEN_BLOCK_M, GEN_BLOCK_N, GEN_NUM_WARPS, GEN_NUM_STAGES };
        int cmp = 0;
        for (int j = 0; j < 4 && !cmp; j++)
            cmp = (p[order[j]] > q[order[j]]) - (p[order[j]] < q[order[j]]);
        assert_true(cmp < 0);
    }
    check_candidates(set);
    tune_space_set_free(set);
}

/* ---- strategies ----------------------------------------------------------------------------- */

static void random_strategy_is_reproducible(void **state)
{
    (void)state;
    const char *file = "tests/spaces/good_random.lua";
    tune_space_set *a = load_ok(file, NULL), *b = load_ok(file, NULL);
    assert_same_sets(a, b);
    const tune_space *all = find_space(a, "all"), *s3 = find_space(a, "seed 3"), *s4 = find_space(a, "seed 4");
    assert_int_equal(s3->strategy.kind, TUNE_RANDOM);
    assert_int_equal(s3->strategy.n, 5);
    assert_int_equal((int)s3->strategy.seed, 3);
    int differs = 0;
    for (int j = 0; j < all->workload_count; j++) {
        const tune_candidates *full = &all->workloads[j], *x = &s3->workloads[j], *y = &s4->workloads[j];
        assert_int_equal(x->count, 5);
        assert_int_equal(x->valid, full->count);
        /* A sample is a subsequence of the full enumeration. */
        int at = 0;
        for (int k = 0; k < x->count; k++) {
            while (at < full->count && !same_config(&full->configs[at], &x->configs[k]))
                at++;
            assert_true(at < full->count);
            at++;
        }
        for (int k = 0; k < 5; k++)
            differs |= !same_config(&x->configs[k], &y->configs[k]);
    }
    assert_true(differs);
    const tune_space *pruned = find_space(a, "pruned");
    assert_int_equal(pruned->strategy.kind, TUNE_PRUNE);
    assert_true(pruned->strategy.keep == 0.5);
    assert_true(pruned->strategy.first.warmup_ms == 2 && pruned->strategy.first.rep_ms == 8);
    assert_true(pruned->strategy.first.timeout_s == pruned->bench.timeout_s);
    assert_int_equal(pruned->workloads[0].count, all->workloads[0].count);
    assert_true(all->bench.warmup_ms == 25 && all->bench.rep_ms == 100 && all->bench.timeout_s == 10);
    /* The cutting strategies under a budget: every candidate enumerated, the search decides. */
    const tune_space *halving = find_space(a, "halving"), *guided = find_space(a, "guided");
    assert_int_equal(halving->strategy.kind, TUNE_HALVING);
    assert_true(halving->strategy.budget_s == 30 && halving->strategy.keep == 0.25);
    assert_int_equal((int)halving->strategy.seed, 9);
    assert_int_equal(guided->strategy.kind, TUNE_GUIDED);
    assert_true(guided->strategy.budget_s == 2.5 && guided->strategy.keep == 0.3);
    assert_true(guided->strategy.first.warmup_ms == 5 && guided->strategy.first.rep_ms == 20);
    assert_int_equal(guided->workloads[0].count, all->workloads[0].count);
    assert_string_equal(tune_strategy_name(TUNE_GUIDED), "guided");
    assert_true(all->strategy.budget_s == 0);
    tune_space_set_free(a);
    tune_space_set_free(b);
}

/* ---- the device, declared and plain spaces -------------------------------------------------- */

static void device_reaches_lua(void **state)
{
    (void)state;
    const tune_device dev = {
        .name = "Test GPU", .arch = "sm_86", .cc_major = 8, .cc_minor = 6, .sm_count = 84,
        .smem_per_block_optin = 101376, .real = 1,
    };
    tune_space_set *set = load_ok("tests/spaces/good_device.lua", &dev);
    const tune_candidates *c = &set->spaces[0].workloads[0];
    assert_true(c->count > 0);
    int refused_smem = 0;
    for (int i = 0; i < c->reason_count; i++)
        refused_smem |= strstr(c->reasons[i].reason, "more than the 101376 allowed") != NULL;
    assert_true(refused_smem);
    for (int k = 0; k < c->count; k++)
        assert_true(smem_of(&c->configs[k]) <= 101376);
    check_candidates(set);
    tune_space_set_free(set);

    /* Without the device the file's own assert fails, with its line. */
    char path[1024], err[2048];
    test_source_path(path, sizeof path, "tests/spaces/good_device.lua");
    assert_int_equal(tune_space_load(path, NULL, &set, err, sizeof err), -1);
    assert_null(set);
    assert_non_null(strstr(err, "good_device.lua:2: not the test GPU"));
}

static void declared_and_plain_spaces(void **state)
{
    (void)state;
    tune_space_set *set = load_ok("tests/spaces/good_declared.lua", NULL);
    assert_int_equal(set->space_count, 2);
    assert_string_equal(set->spaces[0].name, "declared");
    assert_string_equal(set->spaces[1].name, "bwd_mma#2");
    assert_non_null(strstr(set->spaces[1].defined_at, "good_declared.lua:4"));
    tune_space_set_free(set);

    set = load_ok("tests/spaces/good_plain.lua", NULL);
    assert_int_equal(set->space_count, 2);
    assert_string_equal(set->spaces[0].family->name, "fwd_exact");
    assert_string_equal(set->spaces[1].name, "inner");
    assert_int_equal(set->spaces[1].workloads[0].configs[0].p[GEN_DQ_MODE], 1);
    assert_int_equal(set->spaces[0].workloads[0].count, 2);
    check_candidates(set);
    tune_space_set_free(set);
}

static void device_defaults(void **state)
{
    (void)state;
    tune_device d;
    assert_int_equal(tune_device_default(&d, "sm_90"), 0);
    assert_string_equal(d.arch, "sm_90");
    assert_int_equal(d.sm_count, 132);
    assert_int_equal(d.smem_per_block_optin, 232448);
    assert_int_equal(d.real, 0);
    assert_int_equal(tune_device_default(&d, "sm_80"), 0);
    assert_int_equal(d.smem_per_block_optin, 166912);
    assert_int_equal(tune_device_default(&d, "sm_70"), -1);
    assert_string_equal(d.arch, "sm_90");
    tune_space_set_free(NULL);
    assert_int_equal(tune_space_set_count(NULL), 0);
}

/* ---- broken fixtures ------------------------------------------------------------------------ */

/* Loads a space file written to a temp path; returns the set, or NULL with err. */
static tune_space_set *load_text(const char *text, char *err, size_t len)
{
    char path[] = "/tmp/ft_test_space_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    tune_space_set *set = NULL;
    tune_space_load(path, NULL, &set, err, len);
    unlink(path);
    return set;
}

/* Every row of the parameter table reaches the space loader: a tunable may be fixed (and its
 * value lands in the candidates), a value out of the table's range is refused naming it, and a
 * problem parameter is refused as coming from the workload. */
static void table_rows_reach_the_space_loader(void **state)
{
    (void)state;
    int count;
    const gen_family *const *all = gen_family_list(&count);
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const gen_param_info *info = gen_param_get((gen_param)i);
        const gen_family *f = NULL;
        for (int k = 0; k < count && !f; k++)
            if (all[k]->params & GEN_BIT(i))
                f = all[k];
        assert_non_null(f);
        const int dtype = f->defaults[GEN_DTYPE];   /* the family's own (its default tiles fit it) */
        const int values[2] = { f->defaults[i], info->max + 1 };
        for (int v = 0; v < 2; v++) {
            char text[1024], value[32], err[2048] = "", want[128];
            const char *sym = gen_param_value_name((gen_param)i, values[v]);
            if (sym)
                snprintf(value, sizeof value, "\"%s\"", sym);
            else
                snprintf(value, sizeof value, "%d", values[v]);
            snprintf(text, sizeof text,
                     "return { space{ name = 'row', template = '%s', fixed = { %s = %s },\n"
                     "  workloads = { { dtype = '%s', head_dim = 64, seqlen = 256, batch = 1, heads = 1 } } } }\n",
                     f->name, info->name, value, gen_dtype_name(dtype));
            tune_space_set *set = load_text(text, err, sizeof err);
            if (info->role == GEN_ROLE_PROBLEM) {
                snprintf(want, sizeof want, "fixed.%s: %s comes from", info->name, info->name);
                if (set || !strstr(err, want))
                    fail_msg("%s: expected '%s', got '%s'", info->name, want, err);
                continue;
            }
            if (v == 0) {
                if (!set)
                    fail_msg("%s=%s in %s: %s", info->name, value, f->name, err);
                assert_true(set->spaces[0].workload_count == 1 && set->spaces[0].workloads[0].count >= 1);
                assert_int_equal(set->spaces[0].workloads[0].configs[0].p[i], values[v]);
                tune_space_set_free(set);
            } else {
                snprintf(want, sizeof want, "fixed.%s: %s=%d ", info->name, info->name, values[v]);
                if (set || !strstr(err, want))
                    fail_msg("%s: expected '%s', got '%s'", info->name, want, err);
            }
        }
    }
}

static const struct {
    const char *file;
    int line;                   /* the message starts "FILE:LINE:" */
    const char *phrase[2];      /* and contains these */
} broken[] = {
    { "bad_syntax.lua", 5, { "'}' expected", "near 'template'" } },
    { "bad_type.lua", 4, { "space 'typed'", "params.BLOCK_M must be a list of integers, got string" } },
    { "bad_template.lua", 3, { "unknown template 'fwd_mmx'", "known: fwd_mma, fwd_wgmma, fwd_exact, bwd_mma" } },
    { "bad_param.lua", 3, { "unknown parameter 'BLOCK_K' in params", "fwd_mma takes BLOCK_M" } },
    { "bad_value.lua", 3, { "params.BLOCK_N[2]", "BLOCK_N=wide is not an integer" } },
    { "bad_where_throws.lua", 8, { "attempt to compare", "in where() of space 'thrower', for BLOCK_M=" } },
    { "bad_where_nil.lua", 7, { "where() of space 'silent' returned nothing", "workload bf16 d=128" } },
    { "bad_no_workloads.lua", 3, { "space 'idle' has no workloads", NULL } },
    { "bad_workload_param.lua", 3, { "fixed.DTYPE", "comes from each workload's dtype" } },
    { "bad_heads_k.lua", 3, { "workloads[1].heads_k = 3 must divide heads = 8 (0 or heads: no grouping)", NULL } },
    { "bad_sinks.lua", 3, { "workloads[1].sinks: SINKS=2 must be 0 or 1", NULL } },
    { "bad_tf32.lua", 3, { "workloads[1].tf32 = 1 with dtype bf16: only f32 has products to round to TF32", NULL } },
    { "bad_varlen.lua", 3, { "workloads[1].varlen = 0.5: varlen bucket 4", "cannot be made from 1 sequences" } },
    { "bad_window.lua", 3, { "workloads[1].window_right = 8 with causal", NULL } },
    { "bad_bottom_right.lua", 3, { "workloads[1].bottom_right with equal lengths: it moves nothing", NULL } },
    { "bad_unused_param.lua", 3, { "params.DQ_MODE", "fwd_mma does not use DQ_MODE" } },
    { "bad_no_candidates.lua", 3, { "has no candidate for workload 1", "first reason:" } },
    { "bad_grid.lua", 2, { "grid: tokens = 16384 is not a multiple of seqlen_q = 3000", NULL } },
    { "bad_grid_bottom_right.lua", 2, { "grid: bottom_right takes one value for every workload, got 2", NULL } },
    { "bad_grid_bottom_right_causal.lua", 2, { "grid: bottom_right = true needs causal = 1 on every workload", NULL } },
    { "bad_dtype.lua", 3, { "workloads[1]", "dtype f32 is not supported by bwd_wgmma" } },
    { "bad_key.lua", 3, { "space 'key': unknown key 'param'", "known: name, template" } },
    { "bad_strategy_key.lua", 3, { "space 'budget'", "strategy.budget_s is only for kind \"halving\" or \"guided\"" } },
    { "bad_error_table.lua", 3, { "the space file failed with a table value (error() wants a string)", NULL } },
    { "bad_declares_nothing.lua", 3, { "the file declares no space", NULL } },
    { "bad_nul_template.lua", 3, { "space 'nul': template 'fwd_mma' holds a NUL byte after it", NULL } },
    { "bad_nul_key.lua", 4, { "space 'nulkey': a key holds a NUL byte ('params\\0...')", NULL } },
    { "bad_plain.lua", 3, { "space 1: params.NUM_STAGES[2] = 9.5 is not an integer", NULL } },
    { "bad_duplicate.lua", 5, { "two spaces are named 'twin'", "bad_duplicate.lua:4" } },
    { "bad_skip_outside.lua", 3, { "skip() may only be called inside where()", "too early" } },
    { "bad_sandbox.lua", 2, { "global 'io'", NULL } },
};

static void broken_spaces_fail_with_position(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(broken); i++) {
        char rel[256], path[1024], err[2048] = "", head[300];
        snprintf(rel, sizeof rel, "tests/spaces/%s", broken[i].file);
        test_source_path(path, sizeof path, rel);
        tune_space_set sentinel, *set = &sentinel;   /* must become NULL */
        const int rc = tune_space_load(path, NULL, &set, err, sizeof err);
        snprintf(head, sizeof head, "%s:%d: ", broken[i].file, broken[i].line);
        const char *at = strstr(err, head);
        int ok = rc == -1 && set == NULL && at && (at == err || at[-1] == '/');
        for (int k = 0; k < 2 && ok; k++)
            ok = !broken[i].phrase[k] || strstr(err, broken[i].phrase[k]);
        if (!ok)
            fail_msg("%s: expected rc -1 and \"%s...\" with \"%s\" and \"%s\"; got rc %d: %s", broken[i].file, head,
                     broken[i].phrase[0], broken[i].phrase[1] ? broken[i].phrase[1] : "", rc, err);
    }
    /* A missing file and a small error buffer. */
    char err[24];
    tune_space_set *set = NULL;
    assert_int_equal(tune_space_load("/nonexistent/space.lua", NULL, &set, err, sizeof err), -1);
    assert_null(set);
    assert_true(strlen(err) < sizeof err);
    assert_int_equal(tune_space_load(NULL, NULL, &set, NULL, 0), -1);
}

/* The confirm table: absent means none, its defaults, and each bad value refused by name. */
static void confirm_is_read_and_checked(void **state)
{
    (void)state;
    static const char *const head =
        "return { space{ name = 'c', template = 'fwd_mma', fixed = { NUM_STAGES = 1 },\n"
        "  workloads = { { dtype = 'bf16', head_dim = 64, seqlen = 256, batch = 1, heads = 1 } }";
    static const struct {
        const char *confirm;   /* the space's confirm entry, or "" */
        int top, rounds;
        double within;
        const char *error;     /* NULL: loads */
    } cases[] = {
        { "", 4, 0, 0.05, NULL },
        { ", confirm = {}", 4, 3, 0.05, NULL },
        { ", confirm = { top = 3, within = 0.1, rounds = 5 }", 3, 5, 0.1, NULL },
        { ", confirm = { rounds = 0 }", 4, 0, 0.05, NULL },
        { ", confirm = 3", 0, 0, 0, "space 'c': confirm must be a table" },
        { ", confirm = { top = 1 }", 0, 0, 0, "space 'c': confirm.top = 1 must be at least 2" },
        { ", confirm = { top = 17 }", 0, 0, 0, "confirm.top = 17 is out of range (at most 16)" },
        { ", confirm = { rounds = 40 }", 0, 0, 0, "confirm.rounds = 40 is out of range (at most 16)" },
        { ", confirm = { rounds = -1 }", 0, 0, 0, "confirm.rounds = -1 must be at least 0" },
        { ", confirm = { within = 1.5 }", 0, 0, 0, "confirm.within = 1.5 is out of range" },
        { ", confirm = { round = 2 }", 0, 0, 0, "unknown key 'round'" },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        char text[1024], err[2048] = "";
        snprintf(text, sizeof text, "%s%s } }\n", head, cases[i].confirm);
        tune_space_set *set = load_text(text, err, sizeof err);
        if (cases[i].error) {
            if (set || !strstr(err, cases[i].error))
                fail_msg("'%s': expected '%s', got '%s'", cases[i].confirm, cases[i].error, err);
            continue;
        }
        if (!set)
            fail_msg("'%s': %s", cases[i].confirm, err);
        const tune_confirm *c = &set->spaces[0].confirm;
        if (c->top != cases[i].top || c->rounds != cases[i].rounds || c->within != cases[i].within)
            fail_msg("'%s': top %d rounds %d within %g", cases[i].confirm, c->top, c->rounds, c->within);
        tune_space_set_free(set);
    }
}

/* ---- runaway files ------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Small budgets, so each case ends in well under a second; the wall clock only where the hook
 * cannot see the work (a generous one elsewhere, so a slow machine still meets the count). */
static const struct {
    const char *file;
    int line;                   /* the message starts "FILE:LINE: " */
    double timeout_s;
    const char *phrase;
} runaway[] = {
    { "bad_loop.lua", 3, 30, "the space file ran more than 20 million Lua instructions (an endless loop?)" },
    { "bad_pcall_loop.lua", 3, 30, "the space file ran more than 20 million Lua instructions" },
    { "bad_pcall_memory.lua", 4, 30, "the space file needs more than 32 MiB of memory" },
    { "bad_pcall_return.lua", 3, 30, "the space file needs more than 32 MiB of memory" },
    { "bad_gc.lua", 3, 30, "setmetatable: a metatable with __gc is not allowed in a space file" },
    { "bad_pattern.lua", 4, 1, "the space file did not finish within 1 s (a string pattern that backtracks" },
    { "bad_where_pattern.lua", 8, 1, "did not finish within 1 s (a string pattern that backtracks" },
    { "slow_lua.lua", 4, 0.5, "did not finish within 0.5 s, and was still running there (a large enumeration" },
};

/* Expects the fixture rel to fail with "REL_BASENAME:LINE: ...phrase..." within timeout + 5 s. */
static void expect_runaway(const char *file, int line, const tune_space_limits *lim, const char *phrase)
{
    char rel[256], path[1024], err[2048] = "", head[300];
    snprintf(rel, sizeof rel, "tests/spaces/%s", file);
    test_source_path(path, sizeof path, rel);
    tune_space_set sentinel, *set = &sentinel;
    const double start = now_s();
    const int rc = tune_space_load_limited(path, NULL, lim, &set, err, sizeof err);
    const double took = now_s() - start;
    snprintf(head, sizeof head, "%s:%d: ", file, line);
    const char *at = strstr(err, head);
    if (rc != -1 || set || !at || (at != err && at[-1] != '/') || !strstr(err, phrase))
        fail_msg("%s: expected rc -1 and \"%s...%s\"; got rc %d: %s", file, head, phrase, rc, err);
    if (took > (lim->timeout_s > 0 ? lim->timeout_s : 0) + 5)
        fail_msg("%s: took %.1f s", file, took);
    print_message("%s: %.2f s: %s\n", file, took, err);
}

static void runaway_spaces_stop(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(runaway); i++) {
        const tune_space_limits lim = { .instructions = 20000000, .memory = (size_t)32 << 20,
                                        .timeout_s = runaway[i].timeout_s };
        expect_runaway(runaway[i].file, runaway[i].line, &lim, runaway[i].phrase);
    }
}

/* FLASHTUNE_SPACE_TIMEOUT sets the wall-clock bound of tune_space_load; a bad value is refused
 * naming the variable; 0 loads in-process. */
static void space_timeout_from_environment(void **state)
{
    (void)state;
    tune_space_limits lim;
    char err[512] = "";
    assert_int_equal(setenv("FLASHTUNE_SPACE_TIMEOUT", "0.5", 1), 0);
    assert_int_equal(tune_space_limits_default(&lim, err, sizeof err), 0);
    assert_true(lim.timeout_s == 0.5 && lim.instructions == 500000000 && lim.memory == (size_t)256 << 20);
    expect_runaway("bad_pattern.lua", 4, &lim, "did not finish within 0.5 s");

    static const char *const refused[] = { "abc", "", "-1", "1e9", "5s", "nan" };
    for (int i = 0; i < ARRAY_LEN(refused); i++) {
        char want[128];
        tune_space_set *set = NULL;
        assert_int_equal(setenv("FLASHTUNE_SPACE_TIMEOUT", refused[i], 1), 0);
        snprintf(want, sizeof want, "FLASHTUNE_SPACE_TIMEOUT='%s' is not a number of seconds", refused[i]);
        assert_int_equal(tune_space_load("unused.lua", NULL, &set, err, sizeof err), -1);
        if (!strstr(err, want))
            fail_msg("expected '%s', got '%s'", want, err);
    }

    assert_int_equal(setenv("FLASHTUNE_SPACE_TIMEOUT", "0", 1), 0);
    tune_space_set *here = load_ok("tests/spaces/good_where.lua", NULL);
    assert_int_equal(unsetenv("FLASHTUNE_SPACE_TIMEOUT"), 0);
    tune_space_set *child = load_ok("tests/spaces/good_where.lua", NULL);
    assert_same_sets(here, child);
    tune_space_set_free(here);
    tune_space_set_free(child);
}

/* A load in a child process gives what a load in-process gives, math.random included (seeded
 * with 1 in every interpreter), and the same again next time. */
static void child_and_in_process_loads_agree(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(shipped) + 1; i++) {
        const char *rel = i < ARRAY_LEN(shipped) ? shipped[i].file : "tests/spaces/good_lua_random.lua";
        char path[1024], err[2048];
        test_source_path(path, sizeof path, rel);
        const tune_space_limits in_process = { .instructions = 500000000, .memory = (size_t)256 << 20 };
        tune_space_set *sets[3] = { NULL, NULL, NULL };
        for (int k = 0; k < 3; k++) {
            tune_space_limits lim = in_process;
            lim.timeout_s = k ? 30 : 0;
            if (tune_space_load_limited(path, NULL, &lim, &sets[k], err, sizeof err))
                fail_msg("%s: %s", rel, err);
        }
        assert_same_sets(sets[0], sets[1]);
        assert_same_sets(sets[1], sets[2]);
        assert_string_equal(sets[0]->path, sets[1]->path);
        assert_memory_equal(&sets[0]->device, &sets[1]->device, sizeof sets[0]->device);
        assert_string_equal(sets[0]->spaces[0].defined_at, sets[1]->spaces[0].defined_at);
        assert_int_equal(tune_space_set_count(sets[0]), tune_space_set_count(sets[1]));
        for (int k = 0; k < 3; k++)
            tune_space_set_free(sets[k]);
    }
}

/* --from-capture: each space takes, in place of its own workloads, the captured problems of its
 * direction, dtypes and head dims (decode shapes only where its own are), once each, in the
 * capture's order; a space that takes none is left out; none at all is an error. In-process and
 * in the bounded child alike. */
static db_capture_row captured(int op, int dtype, int head_dim, int seqlen_q, int causal, int deterministic)
{
    db_capture_row r;
    memset(&r, 0, sizeof r);
    r.workload.op = op;
    r.workload.dtype = dtype;
    r.workload.head_dim = r.workload.head_dim_v = head_dim;
    r.workload.batch = 4;
    r.workload.heads = 2;
    r.workload.seqlen_q = seqlen_q;
    r.workload.seqlen_k = 1024;
    r.workload.causal = causal;
    r.deterministic = deterministic;
    r.calls = 1;
    return r;
}

static void captured_problems_replace_the_workloads(void **state)
{
    (void)state;
    const db_capture_row rows[] = {
        captured(DB_OP_FWD, 0, 64, 1024, 0, 0),   /* fwd_exact's dtype and head dim, another mask */
        captured(DB_OP_BWD, 0, 64, 1024, 1, 0),
        captured(DB_OP_FWD, 2, 64, 1024, 0, 0),   /* bf16: neither space's own dtype */
        captured(DB_OP_FWD, 0, 128, 1024, 0, 0),  /* head dim 128: neither's */
        captured(DB_OP_BWD, 0, 64, 1024, 1, 1),   /* the repeatable backward: the same problem */
        captured(DB_OP_FWD, 0, 64, 8, 0, 0),      /* 8 query rows in f32: not a decode shape */
    };
    char path[1024], err[2048];
    test_source_path(path, sizeof path, "tests/spaces/good_plain.lua");
    tune_space_limits here;
    assert_int_equal(tune_space_limits_default(&here, err, sizeof err), 0);
    for (int bounded = 0; bounded < 2; bounded++) {
        if (!bounded)
            here.timeout_s = 0;
        else
            assert_int_equal(tune_space_limits_default(&here, err, sizeof err), 0);
        const tune_captured cap = { rows, 6 };
        tune_space_set *set = NULL;
        if (tune_space_load_captured(path, NULL, &here, &cap, &set, err, sizeof err))
            fail_msg("%s", err);
        assert_int_equal(set->space_count, 2);
        const tune_space *fwd = &set->spaces[0], *bwd = &set->spaces[1];
        assert_string_equal(fwd->family->name, "fwd_exact");
        assert_int_equal(fwd->workload_count, 2);
        assert_int_equal(fwd->workloads[0].workload.seqlen_q, 1024);
        assert_int_equal(fwd->workloads[0].workload.causal, 0);
        assert_int_equal(fwd->workloads[1].workload.seqlen_q, 8);
        assert_int_equal(bwd->workload_count, 1);
        assert_int_equal(bwd->workloads[0].workload.op, 0);   /* the candidates' workload is the space's */
        assert_int_equal(bwd->workloads[0].workload.causal, 1);
        assert_true(fwd->workloads[0].count > 0 && bwd->workloads[0].count > 0);
        tune_space_set_free(set);
        /* Only backwards: the forward space is left out. */
        const tune_captured backward = { rows + 1, 1 };
        if (tune_space_load_captured(path, NULL, &here, &backward, &set, err, sizeof err))
            fail_msg("%s", err);
        assert_int_equal(set->space_count, 1);
        assert_string_equal(set->spaces[0].name, "inner");
        tune_space_set_free(set);
        /* Nothing any space takes. */
        const tune_captured none = { rows + 2, 2 };
        assert_int_equal(tune_space_load_captured(path, NULL, &here, &none, &set, err, sizeof err), -1);
        assert_null(set);
        if (!strstr(err, "no space takes any of the 2 captured problems"))
            fail_msg("unexpected: %s", err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_spaces_enumerate),
        cmocka_unit_test(default_space_covers_the_readme),
        cmocka_unit_test(wide_space_searches_every_configuration),
        cmocka_unit_test(captured_problems_replace_the_workloads),
        cmocka_unit_test(shipped_comments_state_no_counts),
        cmocka_unit_test(grid_builds_paper_shapes),
        cmocka_unit_test(grouped_kinds_split_as_the_runtime_does),
        cmocka_unit_test(varlen_lengths_fill_their_bucket),
        cmocka_unit_test(where_filters_with_reasons),
        cmocka_unit_test(random_strategy_is_reproducible),
        cmocka_unit_test(confirm_is_read_and_checked),
        cmocka_unit_test(device_reaches_lua),
        cmocka_unit_test(declared_and_plain_spaces),
        cmocka_unit_test(device_defaults),
        cmocka_unit_test(broken_spaces_fail_with_position),
        cmocka_unit_test(table_rows_reach_the_space_loader),
        cmocka_unit_test(runaway_spaces_stop),
        cmocka_unit_test(space_timeout_from_environment),
        cmocka_unit_test(child_and_in_process_loads_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
