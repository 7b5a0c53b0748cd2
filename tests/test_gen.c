/* The generator: parameters, validation, expansion, hashes, the ptxas log parser, NVRTC, and
 * every family of the catalogue compiled to CUBIN without spills (launch shapes: test_launch).
 * `test_gen` runs what CI runs (every family x dtype x head dim for sm_80 and sm_90);
 * `test_gen full` (ctest test_gen_full, part of every run) compiles the whole cross product instead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "gen_internal.h"
#include "traits/ft_traits.h"
#include "traits/bwd_wgmma.h"
#include "traits/fwd_wgmma.h"
#include "traits/bwd_wgmma_f32.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const int head_dims[] = { 32, 64, 96, 128, 192, 256 };

/* ---- parameters ------------------------------------------------------------------------ */

static void param_names_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const char *name = gen_param_name((gen_param)i);
        assert_non_null(name);
        assert_int_equal(gen_param_lookup(name), i);
    }
    assert_int_equal(gen_param_lookup("block_m"), GEN_BLOCK_M);
    assert_int_equal(gen_param_lookup("BLOK_M"), -1);
    assert_int_equal(gen_param_lookup(""), -1);
    assert_null(gen_param_name(GEN_PARAM_COUNT));
}

static const struct {
    gen_param param;
    const char *text;
    int value;              /* expected when why is NULL */
    const char *why;        /* expected substring of the reason, NULL: accepted */
} parse_cases[] = {
    { GEN_DTYPE, "f32", 0, NULL },
    { GEN_DTYPE, "f16", 1, NULL },
    { GEN_DTYPE, "bf16", 2, NULL },
    { GEN_DTYPE, "F64", 3, NULL },
    { GEN_DTYPE, "2", 2, NULL },
    { GEN_DTYPE, "f8", 0, "DTYPE=f8 is not f32, f16, bf16, f64 or an integer 0..3" },
    { GEN_DQ_MODE, "atomic", 0, NULL },
    { GEN_DQ_MODE, "separate", 1, NULL },
    { GEN_DQ_MODE, "1", 1, NULL },
    { GEN_DQ_MODE, "ordered", 2, NULL },
    { GEN_DQ_MODE, "direct", 3, NULL },
    { GEN_DQ_MODE, "later", 0, "DQ_MODE=later is not atomic, separate, ordered, direct or an integer 0..3" },
    { GEN_BLOCK_M, "64", 64, NULL },
    { GEN_BLOCK_M, "-3", -3, NULL },          /* ranges are gen_validate's job */
    { GEN_BLOCK_M, "6x4", 0, "BLOCK_M=6x4 is not an integer" },
    { GEN_BLOCK_N, "", 0, "BLOCK_N has an empty value" },
    { GEN_NUM_WARPS, "99999999999", 0, "NUM_WARPS=99999999999" },
    { GEN_CAUSAL, "bf16", 0, "CAUSAL=bf16 is not an integer" },
};

static void param_values_parse(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(parse_cases); i++) {
        int value = -12345;
        char why[256] = "";
        const int rc = gen_param_parse(parse_cases[i].param, parse_cases[i].text, &value, why, sizeof why);
        if (!parse_cases[i].why) {
            if (rc != 0 || value != parse_cases[i].value)
                fail_msg("case %d: %s=%s: expected %d, got rc %d value %d (%s)", i,
                         gen_param_name(parse_cases[i].param), parse_cases[i].text, parse_cases[i].value,
                         rc, value, why);
        } else if (rc != -1 || !strstr(why, parse_cases[i].why)) {
            fail_msg("case %d: %s=%s: expected rejection '%s', got rc %d reason '%s'", i,
                     gen_param_name(parse_cases[i].param), parse_cases[i].text, parse_cases[i].why, rc, why);
        }
    }
}

/* Every row of the parameter table round-trips: name and lookup, each value in its range
 * through format and parse, each symbolic name, and the range check at both ends. */
static void param_table_rows_round_trip(void **state)
{
    (void)state;
    gen_param_set problem = gen_param_mask(GEN_ROLE_PROBLEM), tunable = gen_param_mask(GEN_ROLE_TUNABLE);
    assert_true((problem & tunable) == 0);
    assert_true((problem | tunable) == (~(gen_param_set)0 >> (64 - GEN_PARAM_COUNT)));
    assert_null(gen_param_get(GEN_PARAM_COUNT));
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const gen_param p = (gen_param)i;
        const gen_param_info *info = gen_param_get(p);
        assert_non_null(info);
        assert_string_equal(info->name, gen_param_name(p));
        assert_non_null(info->help);
        /* The name is the template macro: upper case, digits and '_'. */
        assert_int_equal(strspn(info->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"), strlen(info->name));
        char lower[64], why[256], buf[32];
        for (size_t k = 0; k <= strlen(info->name); k++)
            lower[k] = (char)(info->name[k] >= 'A' && info->name[k] <= 'Z' ? info->name[k] + 32 : info->name[k]);
        assert_int_equal(gen_param_lookup(info->name), i);
        assert_int_equal(gen_param_lookup(lower), i);
        assert_true(info->min <= info->def && info->def <= info->max && info->step >= 1);
        assert_int_equal(gen_param_check(p, info->def, why, sizeof why), 0);
        for (int v = info->min; v <= info->max; v += info->step) {
            int back = -12345;
            assert_int_equal(gen_param_check(p, v, why, sizeof why), 0);
            assert_int_equal(gen_param_parse(p, gen_param_format(p, v, buf, sizeof buf), &back, why, sizeof why), 0);
            assert_int_equal(back, v);
        }
        const int outside[] = { info->min - 1, info->max + 1 };
        for (int k = 0; k < 2; k++) {
            char want[64];
            snprintf(want, sizeof want, "%s=%d ", info->name, outside[k]);
            assert_int_equal(gen_param_check(p, outside[k], why, sizeof why), -1);
            if (!strstr(why, want))
                fail_msg("%s: expected '%s' in '%s'", info->name, want, why);
        }
        for (int v = 0; info->values && info->values[v]; v++) {
            int back = -1;
            assert_string_equal(gen_param_value_name(p, v), info->values[v]);
            assert_int_equal(gen_param_parse(p, info->values[v], &back, why, sizeof why), 0);
            assert_int_equal(back, v);
            assert_true(v >= info->min && v <= info->max);
        }
        if (!info->values)
            assert_null(gen_param_value_name(p, info->def));
    }
    assert_string_equal(gen_dtype_name(2), "bf16");
    assert_string_equal(gen_dtype_name(9), "?");
}

/* The one text form of a configuration: exact for a known family, and parsed back for all. */
static void config_text_round_trips(void **state)
{
    (void)state;
    char buf[512], why[512];
    gen_config c;
    gen_config_init(&c, gen_family_find("bwd_mma"));
    assert_string_equal(gen_config_format(&c, GEN_FORMAT_FAMILY | GEN_FORMAT_TUNABLES, buf, sizeof buf),
                        "bwd_mma BLOCK_M=32 BLOCK_N=128 NUM_WARPS=8 NUM_STAGES=2 CAUSAL_SKIP=1 DQ_MODE=atomic SPLIT_SMEM=0 "
                        "SPLIT_QUERIES=0");
    gen_config_init(&c, gen_family_find("fwd_mma"));
    assert_string_equal(gen_config_format(&c, GEN_FORMAT_TUNABLES, buf, sizeof buf),
                        "BLOCK_M=128 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=2 CAUSAL_SKIP=1 SPLITS=1 PACK_GQA=0 SPLIT_SMEM=0");
    assert_string_equal(gen_config_format(&c, 0, buf, sizeof buf),
                        "DTYPE=bf16 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=128 BLOCK_N=64 NUM_WARPS=8 NUM_STAGES=2 "
                        "CAUSAL=0 CAUSAL_SKIP=1 EVEN_M=0 EVEN_N=0 SOFTCAP=0 DATA_DIM=0 DATA_DIM_V=0 VARLEN=0 SPLITS=1 "
                        "PACK_GQA=0 SINKS=0 ALLOW_TF32=0 SPLIT_SMEM=0");
    int count;
    const gen_family *const *all = gen_family_list(&count);
    for (int k = 0; k < count; k++) {
        gen_config want, got;
        gen_config_init(&want, all[k]);
        want.p[GEN_BLOCK_M] += 16;
        gen_config_format(&want, 0, buf, sizeof buf);
        memset(&got, 0, sizeof got);
        got.family = all[k];
        if (gen_config_parse(&got, buf, why, sizeof why))
            fail_msg("%s: '%s' does not parse back: %s", all[k]->name, buf, why);
        for (int i = 0; i < GEN_PARAM_COUNT; i++)
            if (all[k]->params & GEN_BIT(i))
                assert_int_equal(got.p[i], want.p[i]);
    }
    static const struct { const char *text, *why; } bad[] = {
        { "BLOCK_Q=64", "unknown parameter 'BLOCK_Q' in 'BLOCK_Q=64' (parameters: DTYPE, HEAD_DIM" },
        { "BLOCK_M=64 NUM_WARPS", "'NUM_WARPS' is not PARAM=VALUE" },
        { "=4", "'=4' is not PARAM=VALUE" },
        { "DTYPE=f8", "DTYPE=f8 is not f32, f16, bf16, f64" },
        { "BLOCK_N=", "BLOCK_N has an empty value" },
    };
    for (int i = 0; i < ARRAY_LEN(bad); i++) {
        gen_config_init(&c, all[0]);
        if (gen_config_parse(&c, bad[i].text, why, sizeof why) != -1 || !strstr(why, bad[i].why))
            fail_msg("'%s': expected '%s', got '%s'", bad[i].text, bad[i].why, why);
    }
    assert_int_equal(gen_config_parse(&c, "  block_m=16\tdq_mode=separate ", why, sizeof why), 0);
    assert_int_equal(c.p[GEN_BLOCK_M], 16);
    assert_int_equal(c.p[GEN_DQ_MODE], 1);
}

/* ---- catalogue and expansion ----------------------------------------------------------- */

static void catalogue_lists_unique_families(void **state)
{
    (void)state;
    int count = 0;
    const gen_family *const *all = gen_family_list(&count);
    assert_int_equal(count, 8);
    for (int i = 0; i < count; i++) {
        assert_ptr_equal(gen_family_find(all[i]->name), all[i]);
        assert_true(all[i]->entry_count >= 1 && all[i]->entry_count <= GEN_MAX_ENTRIES);
        assert_true(all[i]->dtypes != 0 && (all[i]->dtypes & ~0xfu) == 0);
    }
    assert_null(gen_family_find("fwd_tcgen05_someday"));
    assert_null(gen_family_find(NULL));
}

/* Fails (never skips) when a listed family's template is not in this build. */
static void every_family_has_its_template(void **state)
{
    (void)state;
    int count, missing = 0;
    const gen_family *const *all = gen_family_list(&count);
    for (int i = 0; i < count; i++)
        if (!gen_family_template(all[i])) {
            print_error("family %s: template %s is not embedded (not written yet?)\n", all[i]->name,
                        all[i]->file);
            missing++;
        }
    assert_int_equal(missing, 0);
}

static int contains_line(const char *text, const char *line)
{
    const size_t n = strlen(line);
    for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == ' '))
            return 1;
    return 0;
}

static void expansion_is_deterministic_and_complete(void **state)
{
    (void)state;
    int count, failures = 0;
    const gen_family *const *all = gen_family_list(&count);
    for (int k = 0; k < count; k++) {
        const gen_family *f = all[k];
        gen_config c;
        gen_config_init(&c, f);
        char *a = gen_expand(&c), *b = gen_expand(&c);
        if (!a || !b) {
            print_error("family %s: gen_expand failed (template %s not embedded?)\n", f->name, f->file);
            failures++;
            free(a), free(b);
            continue;
        }
        assert_string_equal(a, b);
        assert_true(strstr(a, f->name) && strstr(a, f->name) < strchr(a, '\n'));   /* first line */
        for (int i = 0; i < GEN_PARAM_COUNT; i++) {
            char line[96];
            snprintf(line, sizeof line, "//   %s = %d", gen_param_name((gen_param)i), c.p[i]);
            if (!contains_line(a, line))
                fail_msg("family %s: header comment lacks '%s'", f->name, line);
            snprintf(line, sizeof line, "#define %s %d", gen_param_name((gen_param)i), c.p[i]);
            if (!contains_line(a, line))
                fail_msg("family %s: source lacks '%s'", f->name, line);
        }
        /* The common parts, the family's parts, then its mainloop, in that order, and no
         * #include (NVRTC has no include path). */
        const char *common[] = { "common/ft_kernel_args.h", "common/ft_mask.h", "traits/ft_traits.h",
                                 "common/ft_types.cuh" };
        const char *prev = a;
        char marker[128];
        for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) {
            snprintf(marker, sizeof marker, "// ---- file: %s\n", common[i]);
            const char *at = strstr(a, marker);
            if (!at || at < prev)
                fail_msg("family %s: common part %s missing or out of order", f->name, common[i]);
            prev = at;
        }
        for (const char *const *part = f->parts; part && *part; part++) {
            snprintf(marker, sizeof marker, "// ---- file: %s\n", *part);
            const char *at = strstr(a, marker);
            if (!at || at < prev)
                fail_msg("family %s: part %s missing or out of order", f->name, *part);
            prev = at;
        }
        snprintf(marker, sizeof marker, "// ---- file: %s\n", f->file);
        const char *family = strstr(a, marker);
        assert_true(family && family > prev);
        assert_null(strstr(a, "\n#include"));
        /* Another value changes the text and its hash. */
        char h1[GEN_HASH_LEN], h2[GEN_HASH_LEN];
        gen_source_hash(a, h1);
        c.p[GEN_BLOCK_M] += 16;
        char *d = gen_expand(&c);
        assert_non_null(d);
        gen_source_hash(d, h2);
        assert_string_not_equal(a, d);
        assert_string_not_equal(h1, h2);
        free(a), free(b), free(d);
    }
    assert_int_equal(failures, 0);
}

/* ---- validation ------------------------------------------------------------------------ */

typedef struct tweak {
    gen_param param;
    int value;
} tweak;

static const struct {
    const char *family;
    tweak tweaks[5];
    int ntweaks;
    int smem_limit;
    const char *why;
} invalid_cases[] = {
    { "bwd_mma", { { GEN_DTYPE, 0 } }, 1, 232448,
      "BLOCK_M=32 BLOCK_N=128 NUM_WARPS=8 with HEAD_DIM=128 HEAD_DIM_V=128 in f32: about" },
    { "bwd_mma", { { GEN_ALLOW_TF32, 1 } }, 1, 232448, "ALLOW_TF32=1 with DTYPE=bf16: TF32 products are for f32" },
    { "bwd_mma", { { GEN_DTYPE, 0 }, { GEN_HEAD_DIM, 96 }, { GEN_HEAD_DIM_V, 96 }, { GEN_BLOCK_N, 64 } }, 4, 232448,
      "HEAD_DIM=96 and HEAD_DIM_V=96 must be multiples of 64 in f32" },
    { "fwd_mma", { { GEN_DTYPE, 3 } }, 1, 232448, "DTYPE=3 (f64) is not supported by fwd_mma (f32, f16, bf16)" },
    { "fwd_mma", { { GEN_ALLOW_TF32, 1 } }, 1, 232448, "ALLOW_TF32=1 with DTYPE=bf16: TF32 products are for f32" },
    { "fwd_mma", { { GEN_SPLIT_SMEM, 1 } }, 1, 232448, "SPLIT_SMEM=1 with DTYPE=bf16: TF32 products are for f32" },
    { "fwd_mma", { { GEN_DTYPE, 0 }, { GEN_DATA_DIM, 26 } }, 2, 232448,
      "DATA_DIM=26 in f32 on fwd_mma's tensor cores must be a multiple of 4" },
    { "fwd_mma", { { GEN_DTYPE, 0 }, { GEN_HEAD_DIM, 256 }, { GEN_HEAD_DIM_V, 256 }, { GEN_BLOCK_M, 16 },
                   { GEN_NUM_WARPS, 1 } }, 5, 232448, "fragment registers per thread would spill" },
    { "fwd_mma", { { GEN_HEAD_DIM, 80 } }, 1, 232448, "HEAD_DIM=80" },
    { "fwd_mma", { { GEN_HEAD_DIM, 264 } }, 1, 232448, "HEAD_DIM=264 is out of range (1..256)" },
    { "fwd_mma", { { GEN_HEAD_DIM_V, 12 } }, 1, 232448, "HEAD_DIM_V=12: fwd_mma needs multiples of 32" },
    { "fwd_wgmma", { { GEN_HEAD_DIM_V, 20 } }, 1, 232448, "HEAD_DIM_V=20" },
    { "fwd_exact", { { GEN_DTYPE, 0 }, { GEN_HEAD_DIM, 20 } }, 2, 232448,
      "HEAD_DIM=20, HEAD_DIM_V=128: fwd_exact takes multiples of 8" },
    { "bwd_exact", { { GEN_DTYPE, 3 }, { GEN_HEAD_DIM_V, 12 } }, 2, 232448,
      "HEAD_DIM=128, HEAD_DIM_V=12: bwd_exact takes multiples of 8" },
    /* A padded head dim: below the compiled one, whole 16-byte pieces in 16-bit dtypes. */
    { "fwd_mma", { { GEN_DATA_DIM, 128 } }, 1, 232448, "DATA_DIM=128 must be below HEAD_DIM=128" },
    { "bwd_wgmma", { { GEN_DATA_DIM_V, 200 } }, 1, 232448, "DATA_DIM_V=200 must be below HEAD_DIM_V=128" },
    { "bwd_mma", { { GEN_DATA_DIM, 36 } }, 1, 232448, "DATA_DIM=36 in bf16 must be a multiple of 8" },
    { "fwd_wgmma", { { GEN_DATA_DIM, 257 } }, 1, 232448, "DATA_DIM=257 is out of range (0..256)" },
    { "fwd_mma", { { GEN_BLOCK_M, 48 }, { GEN_NUM_WARPS, 4 } }, 2, 232448,
      "BLOCK_M=48 is not a multiple of 16*NUM_WARPS=64" },
    { "fwd_mma", { { GEN_BLOCK_N, 24 } }, 1, 232448, "BLOCK_N=24" },
    /* Decode: splits in range, and a packed group's rows are never a declared multiple of a tile. */
    { "fwd_mma", { { GEN_SPLITS, 0 } }, 1, 232448, "SPLITS=0 is out of range (1..64)" },
    { "fwd_mma", { { GEN_SPLITS, 65 } }, 1, 232448, "SPLITS=65 is out of range (1..64)" },
    { "fwd_mma", { { GEN_PACK_GQA, 1 }, { GEN_EVEN_M, 1 } }, 2, 232448, "EVEN_M=1 with PACK_GQA=1" },
    { "fwd_wgmma", { { GEN_SPLITS, 4 } }, 1, 232448, "SPLITS=4 is not used by fwd_wgmma" },
    /* f32 (TF32 wgmma): a producer, whole 32-key panels, head dims to 128, the tiles that fit,
     * one stage only where it does not spill; ALLOW_TF32 in f32 only. */
    { "fwd_wgmma", { { GEN_DTYPE, 0 }, { GEN_BLOCK_M, 64 }, { GEN_NUM_WARPS, 4 }, { GEN_BLOCK_N, 64 } }, 4, 232448,
      "fwd_wgmma's f32 needs a producer warpgroup (NUM_WARPS=8) and key tiles of whole 32-key panels" },
    { "fwd_wgmma", { { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 80 } }, 2, 232448, "fwd_wgmma's f32 needs a producer" },
    { "fwd_wgmma", { { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 160 } }, 2, 232448,
      "BLOCK_N=160: fwd_wgmma takes a multiple of 32 from 32 to 128 in f32" },
    { "fwd_wgmma", { { GEN_DTYPE, 0 }, { GEN_HEAD_DIM, 192 }, { GEN_BLOCK_N, 32 } }, 3, 232448,
      "(in f32 64, 96 and 128)" },
    { "fwd_wgmma", { { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 64 } }, 2, 232448, "~256 registers per thread, 224 available" },
    { "fwd_wgmma", { { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 32 }, { GEN_NUM_STAGES, 1 }, { GEN_OVERLAP, 1 } }, 4, 232448,
      "NUM_STAGES=1 in f32 (three products) with BLOCK_M=128 BLOCK_N=32 HEAD_DIM_V=128 OVERLAP=1 PINGPONG=0: "
      "registers spill" },
    { "fwd_wgmma", { { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 32 } }, 2, 232448, "shared memory: ft_fwd needs 296960 bytes" },
    { "fwd_wgmma", { { GEN_ALLOW_TF32, 1 } }, 1, 232448, "ALLOW_TF32=1 with DTYPE=bf16: TF32 products are for f32" },
    { "bwd_mma", { { GEN_PACK_GQA, 1 } }, 1, 232448, "PACK_GQA=1 is not used by bwd_mma" },
    { "bwd_wgmma", { { GEN_SPLITS, 4 }, { GEN_VARLEN, 1 } }, 2, 232448, "SPLITS=4 with VARLEN=1" },
    { "bwd_mma", { { GEN_SPLITS, 2 } }, 1, 232448, "SPLITS=2 is not used by bwd_mma" },
    { "fwd_mma", { { GEN_DQ_MODE, 1 } }, 1, 232448, "DQ_MODE=1 is not used by fwd_mma" },
    { "fwd_mma", { { GEN_HEAD_DIM, 256 }, { GEN_NUM_STAGES, 2 } }, 2, 101376,
      "shared memory: ft_fwd needs" },
    { "bwd_mma", { { GEN_HEAD_DIM, 80 } }, 1, 232448, "HEAD_DIM=80" },
    { "bwd_mma", { { GEN_DTYPE, 3 } }, 1, 232448, "DTYPE=3 (f64) is not supported by bwd_mma" },
    { "fwd_exact", { { GEN_DTYPE, 1 } }, 1, 232448, "DTYPE=1 (f16) is not supported by fwd_exact" },
    { "bwd_mma", { { GEN_DQ_MODE, 4 } }, 1, 232448, "DQ_MODE=4 is out of range (0..3)" },
    { "bwd_mma", { { GEN_DQ_MODE, 2 } }, 1, 232448, "DQ_MODE=2: bwd_mma makes dQ with atomics (0) or in its own" },
    { "bwd_exact", { { GEN_DTYPE, 0 }, { GEN_DQ_MODE, 2 } }, 2, 232448, "DQ_MODE=2: bwd_exact makes dQ" },
    { "bwd_wgmma", { { GEN_DQ_MODE, 1 } }, 1, 232448, "DQ_MODE=1: bwd_wgmma adds dQ with the copy engine" },
    /* bwd_wgmma's columns split: 192 or 256 beside 128 or the same, 64 keys, 12 warps, what fits. */
    { "bwd_wgmma", { { GEN_HEAD_DIM, 192 }, { GEN_HEAD_DIM_V, 64 } }, 2, 232448,
      "HEAD_DIM=192, HEAD_DIM_V=64: bwd_wgmma takes head dims of 64, 96 or 128" },
    { "bwd_wgmma", { { GEN_HEAD_DIM, 256 }, { GEN_HEAD_DIM_V, 128 }, { GEN_NUM_WARPS, 12 } }, 3, 232448,
      "BLOCK_N=128: bwd_wgmma takes key tiles" },
    { "bwd_wgmma", { { GEN_HEAD_DIM, 192 }, { GEN_HEAD_DIM_V, 192 }, { GEN_NUM_WARPS, 12 } }, 3, 232448,
      "(192 over 192 with BLOCK_N=64)" },
    { "bwd_wgmma", { { GEN_HEAD_DIM, 192 }, { GEN_BLOCK_N, 64 } }, 2, 232448,
      "NUM_WARPS=8 with HEAD_DIM=192 BLOCK_N=64: bwd_wgmma runs two consumer" },
    { "bwd_wgmma", { { GEN_HEAD_DIM, 192 } }, 1, 232448,
      "NUM_WARPS=8 with HEAD_DIM=192 BLOCK_N=128: bwd_wgmma runs two consumer" },
    { "bwd_wgmma", { { GEN_HEAD_DIM, 192 }, { GEN_BLOCK_N, 64 }, { GEN_NUM_WARPS, 12 }, { GEN_NUM_STAGES, 3 } }, 4,
      232448, "NUM_STAGES=3 with HEAD_DIM=192 HEAD_DIM_V=128 needs 241664 bytes" },
    /* 128-row query tiles: two consumers (128 keys) at head dims 64, and what fits. */
    { "bwd_wgmma", { { GEN_BLOCK_M, 128 }, { GEN_HEAD_DIM, 64 }, { GEN_BLOCK_N, 64 }, { GEN_NUM_WARPS, 4 } }, 4,
      232448, "BLOCK_M=128 with BLOCK_N=64 NUM_WARPS=4 HEAD_DIM=64 HEAD_DIM_V=128 DQ_MODE=0 L_EARLY=0 DK_SS=0: "
      "bwd_wgmma streams query tiles of 64, or of 128" },
    { "bwd_wgmma", { { GEN_BLOCK_M, 128 }, { GEN_HEAD_DIM, 96 }, { GEN_HEAD_DIM_V, 64 } }, 3, 232448,
      "BLOCK_M=128 with BLOCK_N=128 NUM_WARPS=8 HEAD_DIM=96 HEAD_DIM_V=64 DQ_MODE=0 L_EARLY=0 DK_SS=0: bwd_wgmma streams" },
    /* 80-row query tiles (dQ transposed): 12 warps at head dims 128, atomic dQ, L read late. */
    { "bwd_wgmma", { { GEN_BLOCK_M, 80 } }, 1, 232448,
      "BLOCK_M=80 with BLOCK_N=128 NUM_WARPS=8 HEAD_DIM=128 HEAD_DIM_V=128 DQ_MODE=0 L_EARLY=0 DK_SS=0: bwd_wgmma streams" },
    { "bwd_wgmma", { { GEN_BLOCK_M, 80 }, { GEN_NUM_WARPS, 12 }, { GEN_L_EARLY, 1 } }, 3, 232448,
      "DQ_MODE=0 L_EARLY=1 DK_SS=0: bwd_wgmma streams query tiles of 64, or of 128" },
    { "bwd_wgmma", { { GEN_BLOCK_M, 80 }, { GEN_NUM_WARPS, 12 }, { GEN_DK_SS, 1 } }, 3, 232448,
      "L_EARLY=0 DK_SS=1: bwd_wgmma streams" },
    { "bwd_wgmma", { { GEN_BLOCK_M, 80 }, { GEN_NUM_WARPS, 12 }, { GEN_DQ_MODE, 2 } }, 3, 232448,
      "DQ_MODE=2 L_EARLY=0 DK_SS=0: bwd_wgmma streams" },
    { "bwd_wgmma", { { GEN_BLOCK_M, 80 }, { GEN_NUM_WARPS, 12 }, { GEN_HEAD_DIM, 96 }, { GEN_HEAD_DIM_V, 96 } }, 4,
      232448, "BLOCK_M=80 with BLOCK_N=128 NUM_WARPS=12 HEAD_DIM=96 HEAD_DIM_V=96" },
    { "bwd_wgmma", { { GEN_BLOCK_M, 80 }, { GEN_NUM_WARPS, 12 }, { GEN_NUM_STAGES, 3 } }, 3, 232448,
      "BLOCK_M=80 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=3 with HEAD_DIM=128 HEAD_DIM_V=128 needs 274432 bytes" },
    { "bwd_wgmma", { { GEN_BLOCK_M, 128 }, { GEN_HEAD_DIM, 64 }, { GEN_HEAD_DIM_V, 64 }, { GEN_NUM_WARPS, 12 },
      { GEN_NUM_STAGES, 3 } }, 5, 232448,
      "BLOCK_M=128 BLOCK_N=128 NUM_WARPS=12 NUM_STAGES=3 with HEAD_DIM=64 HEAD_DIM_V=64 needs 236544 bytes" },
    /* The products reordered: consumers beside a producer, the keys split (not the columns). */
    { "bwd_wgmma", { { GEN_DQ_FIRST, 1 } }, 1, 232448,
      "DQ_FIRST=1 DK_SS=0 DV_EARLY=0 with NUM_WARPS=8 HEAD_DIM=128: bwd_wgmma reorders a tile's products" },
    { "bwd_wgmma", { { GEN_DV_EARLY, 1 }, { GEN_BLOCK_N, 64 }, { GEN_NUM_WARPS, 4 } }, 3, 232448,
      "DQ_FIRST=0 DK_SS=0 DV_EARLY=1 with NUM_WARPS=4" },
    { "bwd_wgmma", { { GEN_DK_SS, 1 }, { GEN_HEAD_DIM, 256 }, { GEN_HEAD_DIM_V, 256 }, { GEN_BLOCK_N, 64 },
      { GEN_NUM_WARPS, 12 } }, 5, 232448, "DQ_FIRST=0 DK_SS=1 DV_EARLY=0 with NUM_WARPS=12 HEAD_DIM=256" },
    { "bwd_wgmma", { { GEN_DK_SS, 2 } }, 1, 232448, "DK_SS=2 must be 0 or 1" },
    /* L read early: where the consumers split the keys (tile_gradients), not the columns. */
    { "bwd_wgmma", { { GEN_L_EARLY, 1 }, { GEN_HEAD_DIM, 256 }, { GEN_HEAD_DIM_V, 256 }, { GEN_BLOCK_N, 64 },
      { GEN_NUM_WARPS, 12 } }, 5, 232448, "L_EARLY=1 with HEAD_DIM=256 BLOCK_N=64: bwd_wgmma reads a tile's L early" },
    /* The first dQ share stored: by a producer's dQ warp only. */
    { "bwd_wgmma", { { GEN_DQ_INIT, 1 }, { GEN_BLOCK_N, 64 }, { GEN_NUM_WARPS, 4 } }, 3, 232448,
      "DQ_INIT=1 with NUM_WARPS=4 BLOCK_N=64 HEAD_DIM=128: bwd_wgmma stores a query tile's first dQ share" },
    { "bwd_wgmma", { { GEN_DQ_INIT, 2 } }, 1, 232448, "DQ_INIT=2 must be 0 or 1" },
    /* The register split: setmaxnreg's steps, a producer to give them, and the consumers' estimate
     * held to what is left (head dim 128's 240 do not fit 232). */
    { "bwd_wgmma", { { GEN_PRODUCER_REGS, 12 } }, 1, 232448, "PRODUCER_REGS=12 is not supported (a multiple of 8" },
    { "bwd_wgmma", { { GEN_PRODUCER_REGS, 16 }, { GEN_NUM_WARPS, 12 }, { GEN_HEAD_DIM, 96 }, { GEN_HEAD_DIM_V, 96 } },
      4, 232448, "PRODUCER_REGS=16 with NUM_WARPS=12 BLOCK_N=128 HEAD_DIM=96: bwd_wgmma's producer warpgroup" },
    { "bwd_wgmma", { { GEN_PRODUCER_REGS, 32 }, { GEN_BLOCK_N, 64 }, { GEN_NUM_WARPS, 4 } }, 3, 232448,
      "PRODUCER_REGS=32 with NUM_WARPS=4 BLOCK_N=64 HEAD_DIM=128: bwd_wgmma's producer warpgroup (8 warps)" },
    { "bwd_wgmma", { { GEN_PRODUCER_REGS, 32 }, { GEN_NUM_WARPS, 12 } }, 2, 232448,
      "HEAD_DIM=128 HEAD_DIM_V=128 PRODUCER_REGS=32: about 240 registers per thread would spill (at most 232)" },
    /* A staggered walk: with dQ added in any order only. */
    { "bwd_wgmma", { { GEN_STAGGER, 1 }, { GEN_DQ_MODE, 2 }, { GEN_NUM_WARPS, 12 } }, 3, 232448,
      "STAGGER=1 with DQ_MODE=2: bwd_wgmma staggers its walks over the query tiles only where dQ is added in any order" },
    /* fwd_wgmma: turns need two or three consumers; three have 160 registers a thread. */
    { "fwd_wgmma", { { GEN_BLOCK_M, 64 }, { GEN_NUM_WARPS, 8 }, { GEN_OVERLAP, 1 }, { GEN_PINGPONG, 1 } }, 4, 232448,
      "PINGPONG=1 with NUM_WARPS=8 and BLOCK_M=64: fwd_wgmma takes turns between two or three" },
    { "fwd_wgmma", { { GEN_BLOCK_M, 192 }, { GEN_NUM_WARPS, 16 } }, 2, 232448,
      "BLOCK_N=128 HEAD_DIM_V=128 NUM_WARPS=16: ~192 registers per thread, 160 available" },
    { "fwd_wgmma", { { GEN_BLOCK_M, 192 }, { GEN_NUM_WARPS, 14 } }, 2, 232448, "NUM_WARPS=14 with BLOCK_M=192" },
    /* Key tiles: multiples of 16 from 64 to 192 (176 is taken, below), and the registers they cost:
     * 192 keys beside three consumers at head dim 128. */
    { "fwd_wgmma", { { GEN_BLOCK_N, 72 } }, 1, 232448, "BLOCK_N=72: fwd_wgmma takes a multiple of 16 from 64 to 192" },
    { "fwd_wgmma", { { GEN_BLOCK_N, 208 } }, 1, 232448, "BLOCK_N=208: fwd_wgmma takes a multiple of 16" },
    { "fwd_wgmma", { { GEN_BLOCK_N, 48 } }, 1, 232448, "BLOCK_N=48: fwd_wgmma takes" },
    { "fwd_wgmma", { { GEN_BLOCK_M, 192 }, { GEN_BLOCK_N, 112 }, { GEN_NUM_WARPS, 16 } }, 3, 232448,
      "BLOCK_N=112 HEAD_DIM_V=128 NUM_WARPS=16: ~180 registers per thread, 160 available" },
    /* Clusters sharing K/V loads: only where both blocks walk the same key tiles, by a producer. */
    { "fwd_wgmma", { { GEN_MULTICAST, 1 }, { GEN_CAUSAL, 1 } }, 2, 232448,
      "MULTICAST=1 with NUM_WARPS=12 BLOCK_M=128 PERSISTENT=0 DTYPE=bf16 CAUSAL=1 VARLEN=0: fwd_wgmma shares K/V "
      "loads between a cluster's two blocks only where both walk the same key tiles" },
    { "fwd_wgmma", { { GEN_MULTICAST, 1 }, { GEN_NUM_WARPS, 8 } }, 2, 232448, "MULTICAST=1 with NUM_WARPS=8" },
    { "fwd_wgmma", { { GEN_MULTICAST, 1 }, { GEN_PERSISTENT, 1 } }, 2, 232448, "PERSISTENT=1 DTYPE=bf16" },
    { "fwd_wgmma", { { GEN_MULTICAST, 1 }, { GEN_VARLEN, 1 } }, 2, 232448, "CAUSAL=0 VARLEN=1: fwd_wgmma shares" },
    { "fwd_wgmma", { { GEN_MULTICAST, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 32 }, { GEN_NUM_STAGES, 1 } }, 4, 232448,
      "DTYPE=f32 CAUSAL=0" },
    { "fwd_wgmma", { { GEN_MULTICAST, 2 } }, 1, 232448, "MULTICAST=2 must be 0 or 1" },
    /* P from shared memory: 16-bit, beside a producer; key tiles not whole 64-key panels where
     * the shared memory holds P's whole panels (narrow panels at head dim 96: 192 x 144). */
    { "fwd_wgmma", { { GEN_P_SMEM, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 64 } }, 3, 232448,
      "P_SMEM=1 with DTYPE=f32 NUM_WARPS=12 BLOCK_M=128 BLOCK_N=64: fwd_wgmma reads P from shared memory only in "
      "16-bit" },
    { "fwd_wgmma", { { GEN_P_SMEM, 1 }, { GEN_BLOCK_N, 176 }, { GEN_NUM_STAGES, 3 } }, 3, 232448,
      "shared memory" },
    { "fwd_wgmma", { { GEN_P_SMEM, 1 }, { GEN_NUM_WARPS, 8 } }, 2, 232448, "P_SMEM=1 with DTYPE=bf16 NUM_WARPS=8" },
    { "fwd_wgmma", { { GEN_P_SMEM, 2 } }, 1, 232448, "P_SMEM=2 must be 0 or 1" },
    /* f32 in bfloat16 parts: f32 without TF32, beside a producer, 32- or 64-key tiles, head dims 64
     * and 128, two or three consumers, the registers its accumulators take. */
    { "fwd_wgmma", { { GEN_BF16_PARTS, 1 } }, 1, 232448,
      "BF16_PARTS=1 with DTYPE=bf16 ALLOW_TF32=0 NUM_WARPS=12 BLOCK_M=128 BLOCK_N=128 HEAD_DIM=128 HEAD_DIM_V=128: "
      "fwd_wgmma makes f32 of bfloat16 parts only for float32's accuracy" },
    { "fwd_wgmma", { { GEN_BF16_PARTS, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 32 }, { GEN_ALLOW_TF32, 1 } }, 4, 232448,
      "BF16_PARTS=1 with DTYPE=f32 ALLOW_TF32=1" },
    { "fwd_wgmma", { { GEN_BF16_PARTS, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 96 }, { GEN_NUM_STAGES, 1 } }, 4, 232448,
      "BLOCK_N=96 HEAD_DIM=128" },
    { "fwd_wgmma", { { GEN_BF16_PARTS, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 32 }, { GEN_HEAD_DIM, 96 },
      { GEN_HEAD_DIM_V, 96 } }, 5, 232448, "HEAD_DIM=96 HEAD_DIM_V=96: fwd_wgmma makes f32 of bfloat16 parts" },
    { "fwd_wgmma", { { GEN_BF16_PARTS, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 32 }, { GEN_BLOCK_M, 64 },
      { GEN_NUM_WARPS, 8 } }, 5, 232448,
      "BF16_PARTS=1 with BLOCK_M=64 BLOCK_N=32 HEAD_DIM_V=128 NUM_STAGES=2 OVERLAP=0 PINGPONG=0: ~184 registers per "
      "thread" },
    { "fwd_wgmma", { { GEN_BF16_PARTS, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_N, 32 }, { GEN_OVERLAP, 1 } }, 4, 232448,
      "OVERLAP=1 PINGPONG=0: ~248 registers per thread" },
    { "fwd_wgmma", { { GEN_BF16_PARTS, 2 } }, 1, 232448, "BF16_PARTS=2 must be 0 or 1" },
    /* The slab's queries split between its two warps: f32, two warps a slab, dQ by atomics. */
    { "bwd_mma", { { GEN_SPLIT_QUERIES, 1 } }, 1, 232448, "SPLIT_QUERIES=1 with DTYPE=bf16 NUM_WARPS=8 BLOCK_N=128" },
    { "bwd_mma", { { GEN_SPLIT_QUERIES, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_M, 32 }, { GEN_BLOCK_N, 64 },
      { GEN_DQ_MODE, 1 } }, 5, 232448, "DQ_MODE=1: bwd_mma splits the queries between a key slab's warps in f32 only" },
    { "bwd_mma", { { GEN_SPLIT_QUERIES, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_M, 16 }, { GEN_BLOCK_N, 64 } }, 4, 232448,
      "BLOCK_M=16 DQ_MODE=0" },
    /* Q and dO split into TF32 parts in shared memory: f32 only, and its planes must fit. */
    { "bwd_mma", { { GEN_SPLIT_SMEM, 1 } }, 1, 232448, "SPLIT_SMEM=1 with DTYPE=bf16: bwd_mma splits Q and dO" },
    { "bwd_mma", { { GEN_SPLIT_SMEM, 1 }, { GEN_DTYPE, 0 }, { GEN_BLOCK_M, 64 }, { GEN_BLOCK_N, 64 } }, 4, 232448,
      "NUM_STAGES=2 with HEAD_DIM=128 HEAD_DIM_V=128 and SPLIT_SMEM=1 needs" },
    /* The Hopper float32 backward: head dim 64 (8 warps), or 128 with one TF32 product (12 warps,
     * 32 query rows), 64 keys, dQ by atomics, and its planes must fit (three products: 32 query
     * rows in at most two slots). */
    { "bwd_wgmma_f32", { { GEN_HEAD_DIM, 128 }, { GEN_HEAD_DIM_V, 128 } }, 2, 232448,
      "HEAD_DIM=128, HEAD_DIM_V=128 with ALLOW_TF32=0 BF16_PARTS=0: bwd_wgmma_f32 takes head dims of 64, or of 128 "
      "with ALLOW_TF32=1 or BF16_PARTS=1" },
    { "bwd_wgmma_f32", { { GEN_HEAD_DIM, 96 }, { GEN_HEAD_DIM_V, 96 }, { GEN_ALLOW_TF32, 1 } }, 3, 232448,
      "HEAD_DIM=96, HEAD_DIM_V=96 with ALLOW_TF32=1 BF16_PARTS=0: bwd_wgmma_f32 takes head dims of 64, or of 128" },
    { "bwd_wgmma_f32", { { GEN_HEAD_DIM, 128 }, { GEN_HEAD_DIM_V, 64 }, { GEN_ALLOW_TF32, 1 } }, 3, 232448,
      "HEAD_DIM=128, HEAD_DIM_V=64 with ALLOW_TF32=1 BF16_PARTS=0" },
    { "bwd_wgmma_f32", { { GEN_HEAD_DIM, 128 }, { GEN_HEAD_DIM_V, 128 }, { GEN_ALLOW_TF32, 1 } }, 3, 232448,
      "NUM_WARPS=8: bwd_wgmma_f32 runs 8 warps at head dim 64, 12 at 128" },
    { "bwd_wgmma_f32", { { GEN_HEAD_DIM, 128 }, { GEN_HEAD_DIM_V, 128 }, { GEN_ALLOW_TF32, 1 }, { GEN_NUM_WARPS, 12 },
      { GEN_BLOCK_M, 64 } }, 5, 232448, "BLOCK_M=64: bwd_wgmma_f32 takes query tiles of 32 or 64 rows at head dim 64, "
      "of 32 at 128" },
    { "bwd_wgmma_f32", { { GEN_BLOCK_M, 48 } }, 1, 232448, "BLOCK_M=48: bwd_wgmma_f32 takes query tiles of 32 or 64" },
    { "bwd_wgmma_f32", { { GEN_BLOCK_N, 128 } }, 1, 232448, "BLOCK_N=128: bwd_wgmma_f32 takes key tiles of 64" },
    { "bwd_wgmma_f32", { { GEN_NUM_WARPS, 12 } }, 1, 232448, "NUM_WARPS=12: bwd_wgmma_f32 runs 8 warps" },
    { "bwd_wgmma_f32", { { GEN_NUM_STAGES, 4 } }, 1, 232448, "NUM_STAGES=4 is out of range for bwd_wgmma_f32" },
    { "bwd_wgmma_f32", { { GEN_DQ_MODE, 2 } }, 1, 232448,
      "DQ_MODE=ordered with DQ_BULK=0: bwd_wgmma_f32 adds dQ by atomics, into dq_accum (DQ_MODE=atomic, either "
      "DQ_BULK) or straight into dQ (DQ_MODE=direct, DQ_BULK=0)" },
    /* Direct adds into dQ's own rows, which a bulk reduction of whole tiles cannot address. */
    { "bwd_wgmma_f32", { { GEN_DQ_MODE, 3 }, { GEN_DQ_BULK, 1 }, { GEN_NUM_STAGES, 1 } }, 3, 232448,
      "DQ_MODE=direct with DQ_BULK=1: bwd_wgmma_f32 adds dQ by atomics" },
    /* Only the float32 family adds dQ straight into dQ (of the accumulator's type). */
    { "bwd_wgmma", { { GEN_DQ_MODE, 3 } }, 1, 232448, "DQ_MODE=3: bwd_wgmma adds dQ with the copy engine" },
    { "bwd_mma", { { GEN_DQ_MODE, 3 } }, 1, 232448, "DQ_MODE=3: bwd_mma makes dQ with atomics (0) or" },
    { "bwd_wgmma_f32", { { GEN_NUM_STAGES, 3 } }, 1, 232448,
      "BLOCK_M=32 NUM_STAGES=3 with HEAD_DIM=64 HEAD_DIM_V=64, ALLOW_TF32=0, BF16_PARTS=0 and DQ_BULK=0 needs 249904 bytes of shared "
      "memory" },
    { "bwd_wgmma_f32", { { GEN_DQ_BULK, 1 }, { GEN_DQ_MODE, 0 } }, 2, 232448,
      "BLOCK_M=32 NUM_STAGES=2 with HEAD_DIM=64 HEAD_DIM_V=64, ALLOW_TF32=0, BF16_PARTS=0 and DQ_BULK=1 needs 232480 bytes of shared "
      "memory" },
    { "bwd_wgmma_f32", { { GEN_BLOCK_M, 64 }, { GEN_NUM_STAGES, 1 } }, 2, 232448,
      "BLOCK_M=64 NUM_STAGES=1 with HEAD_DIM=64 HEAD_DIM_V=64, ALLOW_TF32=0, BF16_PARTS=0 and DQ_BULK=0 needs" },
    /* The bfloat16 parts: at head dim 128 (two consumers), 32 query rows, in one slot or two (three
     * parts), or up to three (two parts, with TF32). */
    { "bwd_wgmma_f32", { { GEN_BF16_PARTS, 1 } }, 1, 232448,
      "BF16_PARTS=1 with HEAD_DIM=64 HEAD_DIM_V=64: bwd_wgmma_f32 takes the bfloat16 parts at head dims of 128" },
    { "bwd_wgmma_f32", { { GEN_BF16_PARTS, 1 }, { GEN_ALLOW_TF32, 1 }, { GEN_HEAD_DIM, 128 }, { GEN_HEAD_DIM_V, 96 },
      { GEN_NUM_WARPS, 12 } }, 5, 232448, "BF16_PARTS=1 with HEAD_DIM=128 HEAD_DIM_V=96" },
    { "bwd_wgmma_f32", { { GEN_BF16_PARTS, 1 }, { GEN_HEAD_DIM, 128 }, { GEN_HEAD_DIM_V, 128 }, { GEN_NUM_WARPS, 12 },
      { GEN_BLOCK_M, 64 } }, 5, 232448, "BLOCK_M=64: bwd_wgmma_f32 takes query tiles of 32 or 64 rows at head dim 64, "
      "of 32 at 128" },
    { "bwd_wgmma_f32", { { GEN_BF16_PARTS, 1 }, { GEN_HEAD_DIM, 128 }, { GEN_HEAD_DIM_V, 128 }, { GEN_NUM_WARPS, 12 },
      { GEN_NUM_STAGES, 3 } }, 5, 232448,
      "BLOCK_M=32 NUM_STAGES=3 with HEAD_DIM=128 HEAD_DIM_V=128, ALLOW_TF32=0, BF16_PARTS=1 and DQ_BULK=0 needs 274480 "
      "bytes of shared memory" },
};

/* Cases every family must reject the same way, whatever its own rules. */
static const struct {
    tweak t;
    const char *why;   /* printf format of the expected reason, given the value */
} common_cases[] = {
    { { GEN_DTYPE, 7 }, "DTYPE=%d" },
    { { GEN_HEAD_DIM, 0 }, "HEAD_DIM=%d is out of range (1..256)" },
    { { GEN_HEAD_DIM, 300 }, "HEAD_DIM=%d is out of range (1..256)" },
    { { GEN_HEAD_DIM_V, -8 }, "HEAD_DIM_V=%d is out of range (1..256)" },
    { { GEN_BLOCK_M, 0 }, "BLOCK_M=%d is out of range" },
    { { GEN_BLOCK_N, -16 }, "BLOCK_N=%d is out of range" },
    { { GEN_NUM_WARPS, 17 }, "NUM_WARPS=%d is out of range (1..16)" },
    { { GEN_NUM_WARPS, 0 }, "NUM_WARPS=%d is out of range (1..16)" },
    { { GEN_NUM_STAGES, 5 }, "NUM_STAGES=%d is out of range (1..4)" },
    { { GEN_CAUSAL, 2 }, "CAUSAL=%d must be 0 or 1" },
    { { GEN_EVEN_M, -1 }, "EVEN_M=%d must be 0 or 1" },
    { { GEN_EVEN_N, 3 }, "EVEN_N=%d must be 0 or 1" },
    { { GEN_CAUSAL_SKIP, 9 }, "CAUSAL_SKIP=%d must be 0 or 1" },
};

static void expect_rejected(const gen_config *c, int limit, const char *want, const char *label)
{
    char why[512] = "";
    const int rc = gen_validate(c, limit, why, sizeof why);
    if (rc != -1 || !strstr(why, want))
        fail_msg("%s: expected rejection containing '%s', got rc %d, reason '%s'", label, want, rc, why);
}

static void invalid_sets_are_rejected_with_reason(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(invalid_cases); i++) {
        gen_config c;
        gen_config_init(&c, gen_family_find(invalid_cases[i].family));
        assert_non_null(c.family);
        for (int t = 0; t < invalid_cases[i].ntweaks; t++)
            c.p[invalid_cases[i].tweaks[t].param] = invalid_cases[i].tweaks[t].value;
        char label[64];
        snprintf(label, sizeof label, "invalid case %d (%s)", i, invalid_cases[i].family);
        expect_rejected(&c, invalid_cases[i].smem_limit, invalid_cases[i].why, label);
    }
    int count;
    const gen_family *const *all = gen_family_list(&count);
    for (int k = 0; k < count; k++) {
        for (int i = 0; i < ARRAY_LEN(common_cases); i++) {
            gen_config c;
            gen_config_init(&c, all[k]);
            c.p[common_cases[i].t.param] = common_cases[i].t.value;
            char want[128], label[64];
            const gen_param p = common_cases[i].t.param;
            if (p == GEN_DTYPE || p == GEN_HEAD_DIM || p == GEN_HEAD_DIM_V || (all[k]->params & GEN_BIT(p)))
                snprintf(want, sizeof want, common_cases[i].why, common_cases[i].t.value);
            else   /* a parameter the family ignores only has to keep its default */
                snprintf(want, sizeof want, "%s=%d is not used by", gen_param_name(p), common_cases[i].t.value);
            snprintf(label, sizeof label, "%s, common case %d", all[k]->name, i);
            expect_rejected(&c, 232448, want, label);
        }
        /* A parameter the family ignores keeps its default. */
        for (int p = 0; p < GEN_PARAM_COUNT; p++) {
            if (all[k]->params & GEN_BIT(p))
                continue;
            gen_config c;
            gen_config_init(&c, all[k]);
            const int d = c.p[p];   /* another value that passes the common range checks */
            if (p == GEN_HEAD_DIM || p == GEN_HEAD_DIM_V || p == GEN_BLOCK_M || p == GEN_BLOCK_N)
                c.p[p] = d == 64 ? 128 : 64;
            else if (p == GEN_NUM_STAGES || p == GEN_NUM_WARPS)
                c.p[p] = 1 + d % 4;
            else
                c.p[p] = !d;
            char want[128], label[64];
            snprintf(want, sizeof want, "%s=%d is not used by %s", gen_param_name((gen_param)p), c.p[p], all[k]->name);
            snprintf(label, sizeof label, "%s, unused %s", all[k]->name, gen_param_name((gen_param)p));
            expect_rejected(&c, 232448, want, label);
        }
    }
}

static void defaults_are_valid(void **state)
{
    (void)state;
    int count;
    const gen_family *const *all = gen_family_list(&count);
    for (int k = 0; k < count; k++) {
        gen_config c;
        gen_config_init(&c, all[k]);
        char why[512] = "";
        /* On the oldest GPU the family runs on: sm_80, or its own target (the Hopper families). */
        const char *arch = all[k]->target_arch ? all[k]->target_arch : "sm_80";
        if (gen_validate(&c, gen_smem_limit_for_arch(arch), why, sizeof why))
            fail_msg("family %s: defaults rejected on %s: %s", all[k]->name, arch, why);
    }
}

static const struct {
    const char *arch;
    int limit;
} arch_cases[] = {
    { "sm_80", 166912 }, { "sm_86", 101376 }, { "sm_89", 101376 }, { "sm_90", 232448 },
    { "sm_90a", 232448 }, { "sm_70", -1 }, { "sm_100", -1 }, { "", -1 }, { NULL, -1 },
};

static void smem_limits_per_arch(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(arch_cases); i++) {
        assert_int_equal(gen_smem_limit_for_arch(arch_cases[i].arch), arch_cases[i].limit);
        assert_int_equal(gen_arch_supported(arch_cases[i].arch), arch_cases[i].limit > 0);
    }
}

/* ---- hashes ---------------------------------------------------------------------------- */

static void hashes_are_fnv1a_and_tell_inputs_apart(void **state)
{
    (void)state;
    char h[GEN_HASH_LEN], k1[GEN_HASH_LEN], k2[GEN_HASH_LEN], k3[GEN_HASH_LEN];
    gen_source_hash("", h);
    assert_string_equal(h, "cbf29ce484222325");   /* FNV-1a 64 test vectors */
    gen_source_hash("a", h);
    assert_string_equal(h, "af63dc4c8601ec8c");
    gen_source_hash("foobar", h);
    assert_string_equal(h, "85944171f73967e8");
    gen_cache_key("kernel", "sm_80", k1);
    gen_cache_key("kernel", "sm_90", k2);
    gen_cache_key("kernel", "sm_80", k3);
    assert_string_not_equal(k1, k2);
    assert_string_equal(k1, k3);
    gen_cache_key("kernelsm_8", "0", k3);   /* parts cannot run together */
    assert_string_not_equal(k1, k3);
}

/* The CUBIN cache's identity names the arch NVRTC compiles for, in the key and the row alike:
 * fwd_wgmma on an sm_90 GPU is sm_90a code (stored as sm_90 by one path and looked up as
 * sm_90a by another, it was never found again). */
static void cache_id_names_the_compile_target(void **state)
{
    (void)state;
    const struct { const char *family, *device, *target; } cases[] = {
        { "fwd_wgmma", "sm_90", "sm_90a" }, { "fwd_mma", "sm_90", "sm_90" }, { "bwd_mma", "sm_80", "sm_80" },
        { "fwd_exact", "sm_89", "sm_89" }, { "fwd_wgmma", "sm_80", NULL }, { "fwd_mma", "sm_70", NULL },
    };
    const char *source = "__global__ void k() {}";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gen_cache_id id;
        const int rc = gen_cache_id_init(gen_family_find(cases[i].family), source, cases[i].device, &id);
        if (!cases[i].target) {
            assert_int_equal(rc, -1);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_string_equal(id.arch, cases[i].target);
        char key[GEN_HASH_LEN], version[16];
        gen_cache_key(source, cases[i].target, key);
        assert_string_equal(id.key, key);
        gen_nvrtc_version(version, sizeof version);
        assert_string_equal(id.nvrtc_version, version);
        assert_string_equal(id.options, gen_compile_options());
        assert_ptr_equal(id.source, source);
    }
}

/* ---- ptxas log parser ------------------------------------------------------------------ */

typedef struct expect_res {
    const char *name;
    int regs, spill_st, spill_ld, stack, smem;
} expect_res;

static const struct {
    const char *label;
    const char *log;
    int entries;
    expect_res total;
    expect_res entry[2];
} ptxas_cases[] = {
    { "two entries and a called function (CUDA 13, sm_90)",
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_90'\n"
      "ptxas info    : Function properties for k2\n"
      "ptxas         .     128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 0 barriers, 128 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 16.592 ms\n"
      "ptxas info    : Function properties for _Z1gPfi\n"
      "ptxas         .     0 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 1 barriers, 256 bytes smem\n"
      "ptxas info    : Compile time = 2.108 ms\n",
      2, { "", 40, 12, 8, 128, 256 }, { { "k2", 40, 0, 0, 128, 0 }, { "k", 10, 0, 0, 0, 256 } } },
    { "spilling entry, older layout, cmem and no trailing newline",
      "ptxas info    : Compiling entry function 'ft_fwd' for 'sm_80'\n"
      "ptxas info    : Function properties for ft_fwd\n"
      "    24 bytes stack frame, 20 bytes spill stores, 16 bytes spill loads\n"
      "ptxas warning : Registers are spilled to local memory in function 'ft_fwd', 20 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 255 registers, 49152 bytes smem, 400 bytes cmem[0]",
      1, { "", 255, 20, 16, 24, 49152 }, { { "ft_fwd", 255, 20, 16, 24, 49152 } } },
    { "empty log", "", 0, { "", 0, 0, 0, 0, 0 }, { { NULL } } },
    { "not a ptxas log", "error: expected a ';'\n1 error detected\n", 0, { "", 0, 0, 0, 0, 0 }, { { NULL } } },
};

static void check_res(const char *label, const gen_resources *got, const expect_res *want)
{
    if (strcmp(got->name, want->name) || got->registers != want->regs ||
        got->spill_store_bytes != want->spill_st || got->spill_load_bytes != want->spill_ld ||
        got->stack_frame_bytes != want->stack || got->static_smem_bytes != want->smem)
        fail_msg("%s: expected %s regs %d spills %d/%d stack %d smem %d; got %s regs %d spills %d/%d "
                 "stack %d smem %d", label, want->name, want->regs, want->spill_st, want->spill_ld,
                 want->stack, want->smem, got->name, got->registers, got->spill_store_bytes,
                 got->spill_load_bytes, got->stack_frame_bytes, got->static_smem_bytes);
}

static void ptxas_log_is_parsed(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(ptxas_cases); i++) {
        gen_resources total, entries[GEN_MAX_ENTRIES];
        int count = -1;
        const int found = gen_ptxas_parse(ptxas_cases[i].log, &total, entries, GEN_MAX_ENTRIES, &count);
        assert_int_equal(found, ptxas_cases[i].entries);
        assert_int_equal(count, ptxas_cases[i].entries);
        check_res(ptxas_cases[i].label, &total, &ptxas_cases[i].total);
        for (int e = 0; e < count; e++)
            check_res(ptxas_cases[i].label, &entries[e], &ptxas_cases[i].entry[e]);
    }
    /* More entries than room: counted, only max stored. */
    gen_resources total, one[1];
    int count;
    assert_int_equal(gen_ptxas_parse(ptxas_cases[0].log, &total, one, 1, &count), 2);
    assert_int_equal(count, 1);
    assert_string_equal(one[0].name, "k2");
    assert_int_equal(total.static_smem_bytes, 256);
}

/* ---- NVRTC on a tiny kernel ------------------------------------------------------------ */

/* Compiles configuration c for sm_90 (NVRTC, no GPU) and checks that its entry `entry` spills
 * no register. */
static void compiles_without_spills(const gen_config *c, const char *entry)
{
    char *source = gen_expand(c);
    assert_non_null(source);
    gen_binary b;
    char err[4096] = "";
    if (gen_compile(source, gen_target_arch(c->family, "sm_90"), &b, err, sizeof err))
        fail_msg("%s", err);
    int seen = 0;
    for (int e = 0; e < b.entry_count; e++)
        if (!strcmp(b.entries[e].name, entry)) {
            seen = 1;
            assert_int_equal(b.entries[e].spill_store_bytes, 0);
            assert_int_equal(b.entries[e].stack_frame_bytes, 0);   /* no register array indexed at run time */
        }
    assert_true(seen);
    gen_binary_free(&b);
    free(source);
}

/* bwd_wgmma's register split (PRODUCER_REGS): the traits' arithmetic (setmaxnreg's pool: the
 * block's registers at entry less the producer's, shared by the consumers in steps of 8), and what
 * the split is for: a head-dim-96 persistent causal kernel whose producer spilled in 24 registers
 * (NVRTC 13.0: 16 bytes) compiles without a spill in 32. */
static void bwd_register_split(void **state)
{
    (void)state;
    assert_int_equal(bwd_wgmma_consumer_regs(128, 12, 96, 0, 0), 240);
    assert_int_equal(bwd_wgmma_consumer_regs(128, 12, 96, 0, 32), 232);
    assert_int_equal(bwd_wgmma_consumer_regs(128, 12, 96, 0, 40), 232);
    assert_int_equal(bwd_wgmma_consumer_regs(128, 12, 96, 0, 48), 224);
    assert_int_equal(bwd_wgmma_consumer_regs(64, 8, 64, 0, 0), 232);     /* one consumer, two blocks an SM */
    assert_int_equal(bwd_wgmma_consumer_regs(64, 8, 64, 0, 32), 224);
    assert_int_equal(bwd_wgmma_consumer_regs(128, 12, 128, 1, 0), 232);  /* the packed walk's own split */
    assert_int_equal(bwd_wgmma_consumer_regs(128, 8, 128, 0, 0), 255);   /* no producer: one block's cap */

    gen_config c;
    gen_config_init(&c, gen_family_find("bwd_wgmma"));
    char why[512];
    if (gen_config_parse(&c, "DTYPE=bf16 HEAD_DIM=96 HEAD_DIM_V=96 NUM_WARPS=12 CAUSAL=1 PERSISTENT=1 PRODUCER_REGS=32",
                         why, sizeof why) ||
        gen_validate(&c, gen_smem_limit_for_arch("sm_90"), why, sizeof why))
        fail_msg("%s", why);
    compiles_without_spills(&c, "ft_bwd_dkdv");
}

/* bwd_wgmma_f32's forms the H200 ships, at head dim 64 (one consumer: three products in 32-row
 * tiles, one in 64-row tiles) and 128 (two consumers, one product, one slot: whole tiles, head dims
 * padded, a softcap under a mask; three slots without whole tiles), dQ straight into dQ (the
 * family's default, DQ_MODE direct) or into dq_accum (atomic), and by bulk reductions (DQ_BULK,
 * into dq_accum) at both head dims, and the bfloat16 parts at head dim 128: valid, and each
 * compiles without a spill or a stack frame. (A pair of P^T's values picked by an index made at run time
 * once put the consumer's scores in a stack frame: 256 bytes, 0.67-0.94x the speed on an H200.) */
static void hopper_f32_backward_compiles_clean(void **state)
{
    (void)state;
    /* The parts' shared memory at head dim 128, 32 query rows, two slots: K and V 96 KB, a slot
     * 48 KB and 1 KB of L and delta, P^T and dS^T 12 KB each (no K^T, no dS tile). */
    assert_int_equal(bwd_wgmma_f32_smem_bytes(32, 64, 128, 128, 2, 0, 0, 1),
                     1024 + 6 * 64 * 256 + 2 * (6 * 32 * 256 + 1024) + 2 * 6 * 64 * 32 + 32);
    /* With TF32 two parts, 4 bytes an element: three slots fit. */
    assert_int_equal(bwd_wgmma_f32_part_count(1), 2);
    assert_int_equal(bwd_wgmma_f32_smem_bytes(32, 64, 128, 128, 3, 1, 0, 1),
                     1024 + 4 * 64 * 256 + 3 * (4 * 32 * 256 + 1024) + 2 * 4 * 64 * 32 + 48);
    static const char *const forms[] = {
        "HEAD_DIM=64 HEAD_DIM_V=64 NUM_WARPS=8 BLOCK_M=32 NUM_STAGES=2 EVEN_M=1 EVEN_N=1 ALLOW_TF32=0",
        "HEAD_DIM=64 HEAD_DIM_V=64 NUM_WARPS=8 BLOCK_M=64 NUM_STAGES=1 EVEN_M=1 EVEN_N=1 ALLOW_TF32=1 CAUSAL=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=1 EVEN_M=1 EVEN_N=1 ALLOW_TF32=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=1 EVEN_M=1 EVEN_N=1 ALLOW_TF32=1 DATA_DIM=120 "
        "DATA_DIM_V=112",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=1 EVEN_M=1 EVEN_N=1 ALLOW_TF32=1 CAUSAL=1 "
        "SOFTCAP=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=3 ALLOW_TF32=1 CAUSAL=1 SOFTCAP=1",
        "HEAD_DIM=64 HEAD_DIM_V=64 NUM_WARPS=8 BLOCK_M=32 NUM_STAGES=2 EVEN_M=1 EVEN_N=1 ALLOW_TF32=0 DQ_MODE=atomic",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=1 ALLOW_TF32=1 DQ_MODE=atomic",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=1 EVEN_M=1 EVEN_N=1 ALLOW_TF32=1 DQ_MODE=atomic "
        "DQ_BULK=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=2 ALLOW_TF32=1 CAUSAL=1 SOFTCAP=1 DQ_MODE=atomic "
        "DQ_BULK=1",
        "HEAD_DIM=64 HEAD_DIM_V=64 NUM_WARPS=8 BLOCK_M=64 NUM_STAGES=2 EVEN_M=1 EVEN_N=1 ALLOW_TF32=1 DQ_MODE=atomic "
        "DQ_BULK=1",
        /* The bfloat16 parts at head dim 128: two slots, one with bulk reductions, dQ direct under a mask with a
         * softcap, padded head dims, a packed batch. */
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=2 EVEN_M=1 EVEN_N=1 BF16_PARTS=1 DQ_MODE=atomic",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=1 BF16_PARTS=1 DQ_MODE=atomic DQ_BULK=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=2 BF16_PARTS=1 CAUSAL=1 SOFTCAP=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=2 BF16_PARTS=1 DATA_DIM=120 DATA_DIM_V=112",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=2 BF16_PARTS=1 VARLEN=1",
        /* Two parts with TF32 allowed: three slots, and two with bulk reductions. */
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=3 BF16_PARTS=1 ALLOW_TF32=1 CAUSAL=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 NUM_WARPS=12 BLOCK_M=32 NUM_STAGES=2 BF16_PARTS=1 ALLOW_TF32=1 DQ_MODE=atomic "
        "DQ_BULK=1 EVEN_M=1 EVEN_N=1",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char why[512];
        gen_config c;
        gen_config_init(&c, gen_family_find("bwd_wgmma_f32"));
        if (gen_config_parse(&c, forms[i], why, sizeof why) ||
            gen_validate(&c, gen_smem_limit_for_arch("sm_90"), why, sizeof why))
            fail_msg("%s: %s", forms[i], why);
        compiles_without_spills(&c, "ft_bwd_dkdv");
    }
}

/* fwd_wgmma in f32 with ALLOW_TF32: one product, P V straight into O (no accumulator apart, which
 * the three products keep for their accuracy), so 64 fewer registers a thread at head dim 128 and
 * no one-stage rule: 128 x 64 in one stage with OVERLAP and PINGPONG is valid and compiles without
 * a spill, where three products are refused. */
static void tf32_forward_keeps_no_pv_apart(void **state)
{
    (void)state;
    assert_int_equal(fwd_wgmma_regs(64, 128, 1, 0, 1, 0), 32 + 64 + 32 + 32);
    assert_int_equal(fwd_wgmma_regs(64, 128, 1, 0, 0, 0), 32 + 128 + 64 + 32);
    static const char params[] = "DTYPE=f32 HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_M=128 BLOCK_N=64 NUM_WARPS=12 "
                                 "NUM_STAGES=1 OVERLAP=1 PINGPONG=1 ALLOW_TF32=";
    char why[512], text[256];
    gen_config c;
    for (int tf32 = 0; tf32 <= 1; tf32++) {
        gen_config_init(&c, gen_family_find("fwd_wgmma"));
        snprintf(text, sizeof text, "%s%d", params, tf32);
        if (gen_config_parse(&c, text, why, sizeof why))
            fail_msg("%s", why);
        const int refused = gen_validate(&c, gen_smem_limit_for_arch("sm_90"), why, sizeof why) != 0;
        if (refused != !tf32)
            fail_msg("%s: %s", text, refused ? why : "accepted");
    }
    compiles_without_spills(&c, "ft_fwd");
}

/* fwd_wgmma with P from shared memory (P_SMEM): P's registers freed, so three consumers take
 * 128-key tiles at head dims 96 and 128 (refused with P in registers: ~176 and ~192 of their
 * 160), in shared memory beside two K/V stages, and compile without a spill. */
static void p_smem_frees_the_registers_of_p(void **state)
{
    (void)state;
    assert_int_equal(fwd_wgmma_regs(128, 128, 1, 2, 0, 1), 64 + 64 + 32);
    static const char *const forms[] = { "HEAD_DIM=96 HEAD_DIM_V=96", "HEAD_DIM=128 HEAD_DIM_V=128" };
    char why[512], text[256];
    for (int f = 0; f < 2; f++)
        for (int p_smem = 0; p_smem <= 1; p_smem++) {
            gen_config c;
            gen_config_init(&c, gen_family_find("fwd_wgmma"));
            snprintf(text, sizeof text, "DTYPE=bf16 %s BLOCK_M=192 BLOCK_N=128 NUM_WARPS=16 NUM_STAGES=2 OVERLAP=1 "
                     "PINGPONG=1 P_SMEM=%d", forms[f], p_smem);
            if (gen_config_parse(&c, text, why, sizeof why))
                fail_msg("%s", why);
            const int refused = gen_validate(&c, gen_smem_limit_for_arch("sm_90"), why, sizeof why) != 0;
            if (refused != !p_smem)
                fail_msg("%s: %s", text, refused ? why : "accepted");
            if (p_smem)
                compiles_without_spills(&c, "ft_fwd");
        }
}

/* fwd_wgmma's f32 in bfloat16 parts (BF16_PARTS): Q, K and V take 6 bytes an element (their
 * floats landed, and a third panel a group for the low parts), so 128 x 32 tiles at head dim 128
 * fit two stages (TF32's three products: one), and 64-key tiles one; four score accumulators'
 * worth, P's three parts, O and a tile's P V apart: those tiles compile without a spill. */
static void bf16_parts_fit_two_stages_at_head_dim_128(void **state)
{
    (void)state;
    assert_int_equal(fwd_wgmma_form(0, 1), 2);
    assert_int_equal(fwd_wgmma_planes(0, 2), 3);
    assert_int_equal(fwd_wgmma_parts(2, 2), 0);   /* bf16 has no parts */
    assert_int_equal(fwd_wgmma_smem_bytes(128, 32, 12, 128, 128, 2, 0, 0, 2, 0),
                     1024 + (128LL * 128 + 2 * 32 * 256) * 6 + 1024);
    assert_true(fwd_wgmma_smem_bytes(128, 32, 12, 128, 128, 2, 0, 0, 0, 0) > 232448);   /* three TF32 products */
    assert_int_equal(fwd_wgmma_parts_regs(32, 128, 0), 24 + 128 + 32);   /* P, O and P V apart */
    assert_int_equal(fwd_wgmma_parts_regs(64, 128, 0), 128 + 64 + 32);    /* the scores and O */
    assert_int_equal(fwd_wgmma_parts_regs(32, 128, 1), 64 + 24 + 128 + 32);
    static const char *const forms[] = {
        "HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_N=32 NUM_STAGES=2 PINGPONG=1",
        "HEAD_DIM=128 HEAD_DIM_V=128 BLOCK_N=64 NUM_STAGES=1",
        "HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_N=64 NUM_STAGES=2 PINGPONG=1 PERSISTENT=1 CAUSAL=1",
        "HEAD_DIM=64 HEAD_DIM_V=64 BLOCK_N=32 NUM_STAGES=2 OVERLAP=1 VARLEN=1",
    };
    char why[512], text[256];
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        gen_config c;
        gen_config_init(&c, gen_family_find("fwd_wgmma"));
        snprintf(text, sizeof text, "DTYPE=f32 BLOCK_M=128 NUM_WARPS=12 BF16_PARTS=1 %s", forms[f]);
        if (gen_config_parse(&c, text, why, sizeof why) ||
            gen_validate(&c, gen_smem_limit_for_arch("sm_90"), why, sizeof why))
            fail_msg("%s: %s", text, why);
        compiles_without_spills(&c, "ft_fwd");
    }
}

/* fwd_wgmma's narrow panels: head dim 96 beside a producer lays Q, K and V in 64-byte rows (three
 * panels of 32 columns) where 128-byte rows padded it to 128 columns, which frees the room for
 * FlashAttention-4's 192 x 144 tile there with P in shared memory in two stages (223,232 bytes);
 * at head dim 128 its scores and O take more registers than three consumers have; without a
 * producer head dim 96 keeps 128-byte rows. */
static void narrow_panels_make_room_for_144_keys(void **state)
{
    (void)state;
    assert_int_equal(fwd_wgmma_row_bytes(192, 16, 96, 96, 2), 64);
    assert_int_equal(fwd_wgmma_row_bytes(192, 12, 96, 96, 2), 128);   /* no producer */
    assert_int_equal(fwd_wgmma_row_bytes(128, 12, 128, 128, 2), 128);
    assert_int_equal(fwd_wgmma_row_bytes(128, 12, 96, 96, 0), 128);   /* f32: 32 floats a 128-byte row */
    assert_int_equal(fwd_wgmma_panel_cols(96, 2, 1), 96);
    assert_int_equal(fwd_wgmma_panel_cols(96, 2, 0), 128);
    assert_int_equal(fwd_wgmma_p_bytes(192, 144, 1), 3LL * 64 * 192 * 2);   /* whole 64-key panels */
    assert_int_equal(fwd_wgmma_smem_bytes(192, 144, 16, 96, 96, 2, 0, 2, 0, 1), 223232);
    static const char *const forms[] = { "HEAD_DIM=96 HEAD_DIM_V=96", "HEAD_DIM=128 HEAD_DIM_V=128" };
    char why[512], text[256];
    for (int f = 0; f < 2; f++) {
        gen_config c;
        gen_config_init(&c, gen_family_find("fwd_wgmma"));
        snprintf(text, sizeof text, "DTYPE=bf16 %s BLOCK_M=192 BLOCK_N=144 NUM_WARPS=16 NUM_STAGES=2 OVERLAP=1 "
                 "PINGPONG=1 P_SMEM=1", forms[f]);
        if (gen_config_parse(&c, text, why, sizeof why))
            fail_msg("%s", why);
        const int refused = gen_validate(&c, gen_smem_limit_for_arch("sm_90"), why, sizeof why) != 0;
        if (refused != (f == 1) || (refused && !strstr(why, "registers")))
            fail_msg("%s: %s", text, refused ? why : "accepted");
        if (!refused)
            compiles_without_spills(&c, "ft_fwd");
    }
}

static const char tiny_kernel[] =
    "extern \"C\" __global__ void tiny(float *x, int n)\n"
    "{\n"
    "    __shared__ float s[64];\n"
    "    s[threadIdx.x % 64] = x[threadIdx.x];\n"
    "    __syncthreads();\n"
    "    x[threadIdx.x] = s[(threadIdx.x + 1) % 64] * n;\n"
    "}\n";

static void nvrtc_compiles_a_tiny_kernel(void **state)
{
    (void)state;
    static const char *const archs[] = { "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a" };
    for (int i = 0; i < ARRAY_LEN(archs); i++) {
        gen_binary b;
        char err[4096] = "";
        if (gen_compile(tiny_kernel, archs[i], &b, err, sizeof err))
            fail_msg("%s: %s", archs[i], err);
        assert_true(b.cubin_size > 4);
        assert_memory_equal(b.cubin, "\x7f" "ELF", 4);
        assert_non_null(strstr(b.log, "ptxas"));
        assert_string_equal(b.arch, archs[i]);
        assert_true(strlen(b.nvrtc_version) >= 3);
        assert_true(b.compile_seconds > 0);
        assert_int_equal(b.entry_count, 1);
        assert_string_equal(b.entries[0].name, "tiny");
        assert_true(b.entries[0].registers > 0);
        assert_int_equal(b.entries[0].static_smem_bytes, 256);
        assert_int_equal(b.static_smem_bytes, 256);
        assert_int_equal(b.spill_store_bytes + b.spill_load_bytes, 0);
        gen_binary_free(&b);
        assert_null(b.cubin);
        gen_binary_free(&b);   /* twice: harmless */
    }
}

static void nvrtc_errors_are_reported(void **state)
{
    (void)state;
    gen_binary b;
    char err[4096] = "";
    assert_int_equal(gen_compile("extern \"C\" __global__ void broken( { }\n", "sm_80", &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "NVRTC_ERROR_COMPILATION"));
    assert_non_null(strstr(err, "error"));
    assert_null(b.cubin);
    assert_int_equal(gen_compile(tiny_kernel, "sm_70", &b, err, sizeof err), -1);
    assert_non_null(strstr(err, "arch sm_70 is not supported"));
    assert_int_equal(gen_compile(tiny_kernel, NULL, &b, err, sizeof err), -1);
}

/* ---- every family compiled to CUBIN ---------------------------------------------------- */

typedef struct compile_job {
    gen_config config;
    const char *arch;
    int done_ok;            /* filled by the worker */
    int unsupported;        /* no valid configuration near the defaults: nothing to compile */
    char problem[2048];     /* why it failed (or is unsupported), empty when fine */
} compile_job;

typedef struct job_queue {
    compile_job *jobs;
    int count, next, progress;   /* progress: print a line every that many jobs (0: never) */
    pthread_mutex_t lock;
} job_queue;

static void describe(const compile_job *j, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s %s", j->config.family->name, j->arch);
    for (int i = 0; i < GEN_PARAM_COUNT && n > 0 && (size_t)n < len; i++)
        if (j->config.family->params & GEN_BIT(i))
            n += snprintf(buf + n, len - (size_t)n, " %s=%d", gen_param_name((gen_param)i), j->config.p[i]);
}

/* Compiles one job; every launched entry must be in the CUBIN and nothing may spill. */
static void run_job(compile_job *j)
{
    char *source = gen_expand(&j->config);
    if (!source) {
        snprintf(j->problem, sizeof j->problem, "template %s is not embedded", j->config.family->file);
        return;
    }
    gen_binary b;
    char err[1800];
    if (gen_compile(source, gen_target_arch(j->config.family, j->arch), &b, err, sizeof err)) {
        snprintf(j->problem, sizeof j->problem, "%s", err);
        free(source);
        return;
    }
    free(source);
    const gen_family *f = j->config.family;
    for (int e = 0; e < f->entry_count; e++) {
        if (!gen_entry_used(&j->config, &f->entries[e]))
            continue;
        int found = 0;
        for (int r = 0; r < b.entry_count; r++)
            found |= !strcmp(b.entries[r].name, f->entries[e].name);
        if (!found)
            snprintf(j->problem, sizeof j->problem, "entry %s is not in the CUBIN", f->entries[e].name);
    }
    for (int r = 0; r < b.entry_count && !j->problem[0]; r++)
        if (b.entries[r].spill_store_bytes || b.entries[r].spill_load_bytes)
            snprintf(j->problem, sizeof j->problem, "%s spills %d bytes stored, %d loaded (%d registers)",
                     b.entries[r].name, b.entries[r].spill_store_bytes, b.entries[r].spill_load_bytes,
                     b.entries[r].registers);
    if (!j->problem[0] && (b.spill_store_bytes || b.spill_load_bytes))
        snprintf(j->problem, sizeof j->problem, "a called function spills %d bytes", b.spill_store_bytes);
    j->done_ok = !j->problem[0];
    gen_binary_free(&b);
}

static void *worker(void *arg)
{
    job_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        const int i = q->next++;
        pthread_mutex_unlock(&q->lock);
        if (i >= q->count)
            return NULL;
        if (q->progress && i % q->progress == 0)
            fprintf(stderr, "test_gen: compiling %d of %d\n", i + 1, q->count);
        if (!q->jobs[i].unsupported)
            run_job(&q->jobs[i]);
    }
}

/* NVRTC is thread-safe: compile on every core, as the tuner will. */
static void run_jobs(compile_job *jobs, int count, int progress)
{
    job_queue q = { jobs, count, 0, progress, PTHREAD_MUTEX_INITIALIZER };
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;
    pthread_t threads[16];
    for (int t = 0; t < nthreads; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, worker, &q), 0);
    for (int t = 0; t < nthreads; t++)
        pthread_join(threads[t], NULL);
}

/* The family's defaults moved to the problem's dtype, head dims and flags. When those do not
 * fit the arch (say head dim 256 on sm_80's shared memory), the nearest smaller tiles that
 * the family accepts: fewer stages first, then narrower key tiles, then fewer query rows, each
 * with the default warps, then half and a quarter of them (as the runtime's defaults search). */
static int fit_config(gen_config *c, const char *arch, char *why, size_t len)
{
    const int limit = gen_smem_limit_for_arch(arch);
    if (!gen_validate(c, limit, why, len))
        return 0;
    const gen_config base = *c;
    char ignored[512];
    for (int wd = 1; wd <= 4; wd *= 2)
    for (int bm = base.p[GEN_BLOCK_M]; bm >= 1; bm /= 2)
        for (int bn = base.p[GEN_BLOCK_N]; bn >= 1 && bn * 4 >= base.p[GEN_BLOCK_N]; bn /= 2)
            for (int st = base.p[GEN_NUM_STAGES]; st >= 1; st--) {
                *c = base;
                if (c->family->params & GEN_BIT(GEN_NUM_WARPS)) {
                    if (base.p[GEN_NUM_WARPS] % wd)
                        continue;
                    c->p[GEN_NUM_WARPS] = base.p[GEN_NUM_WARPS] / wd;
                } else if (wd > 1) {
                    continue;
                }
                if (c->family->params & GEN_BIT(GEN_BLOCK_M))
                    c->p[GEN_BLOCK_M] = bm;
                if (c->family->params & GEN_BIT(GEN_BLOCK_N))
                    c->p[GEN_BLOCK_N] = bn;
                if (c->family->params & GEN_BIT(GEN_NUM_STAGES))
                    c->p[GEN_NUM_STAGES] = st;
                if (!gen_validate(c, limit, ignored, sizeof ignored))
                    return 0;
            }
    *c = base;
    return -1;   /* why still holds the reason the problem's own configuration failed */
}

/* Adds one job per arch for (family, dtype, head dim, flags); reports a configuration that
 * cannot be fitted as a failed job. */
static int add_jobs(compile_job *jobs, int n, const gen_family *f, const int *values, const int *set,
                    const char *const *archs, int narchs)
{
    for (int a = 0; a < narchs; a++) {
        char why[512];
        if (gen_check_arch(f, archs[a], why, sizeof why))
            continue;   /* an arch-specific family (wgmma) is compiled only for its GPUs */
        compile_job *j = &jobs[n++];
        memset(j, 0, sizeof *j);
        gen_config_init(&j->config, f);
        for (int i = 0; i < GEN_PARAM_COUNT; i++)
            if (set[i] && (f->params & GEN_BIT(i)))
                j->config.p[i] = values[i];
        j->arch = archs[a];
        gen_config_head_dim_tiles(&j->config);
        if (fit_config(&j->config, archs[a], why, sizeof why)) {
            /* gen_validate refuses every candidate, so nothing of this kind is ever compiled or
             * launched (the runtime reports it unsupported); listed, not failed. */
            j->unsupported = 1;
            snprintf(j->problem, sizeof j->problem, "no valid configuration near the defaults: %s", why);
        }
    }
    return n;
}

static int full_mode;

static void every_family_compiles_without_spills(void **state)
{
    (void)state;
    static const char *const ci_archs[] = { "sm_80", "sm_90" };
    const char *full_archs[16];   /* every arch flashtune compiles for (gen_arch.c) */
    int n_full = 0;
    for (const gen_arch *a; n_full < ARRAY_LEN(full_archs) && (a = gen_arch_at(n_full)); n_full++)
        full_archs[n_full] = a->name;
    const char *const *archs = full_mode ? full_archs : ci_archs;
    const int narchs = full_mode ? n_full : ARRAY_LEN(ci_archs);
    int count;
    const gen_family *const *all = gen_family_list(&count);
    const int cap = count * 4 * ARRAY_LEN(head_dims) * 2 * 16 * narchs;
    compile_job *jobs = calloc((size_t)cap, sizeof *jobs);
    assert_non_null(jobs);
    int n = 0;
    int set[GEN_PARAM_COUNT] = { 0 };
    set[GEN_DTYPE] = set[GEN_HEAD_DIM] = set[GEN_HEAD_DIM_V] = set[GEN_CAUSAL] = set[GEN_DQ_MODE] = 1;
    int missing = 0;
    const char *only = getenv("FT_TEST_FAMILY");   /* a developer's shortcut: one family's jobs */
    for (int k = 0; k < count; k++) {
        const gen_family *f = all[k];
        int variant = 0;
        if (only && strcmp(f->name, only) != 0)
            continue;
        if (!gen_family_template(f)) {
            print_error("FAIL %s: template %s is not embedded, nothing compiled\n", f->name, f->file);
            missing++;
            continue;
        }
        for (int d = 0; d < 4; d++) {
            if (!(f->dtypes & (1u << d)))
                continue;
            for (int h = 0; h < ARRAY_LEN(head_dims); h++) {
                /* The wgmma families cover head dims 64 to 256; the runtime uses the mma families
                 * for the rest. A backward's other dQ mode: ordered for bwd_wgmma, separate for
                 * the others. */
                const int fwd_hopper = !strcmp(f->name, "fwd_wgmma"), bwd_hopper = !strcmp(f->name, "bwd_wgmma");
                const int other_dq = bwd_hopper ? FT_DQ_ORDERED : FT_DQ_SEPARATE;
                if ((fwd_hopper || bwd_hopper) && head_dims[h] == 32)
                    continue;
                int v[GEN_PARAM_COUNT] = { 0 };
                v[GEN_DTYPE] = d;
                v[GEN_HEAD_DIM] = v[GEN_HEAD_DIM_V] = head_dims[h];
                if (!full_mode) {
                    /* CI: alternate the flags so both sides of each are compiled somewhere. */
                    v[GEN_CAUSAL] = variant & 1;
                    v[GEN_DQ_MODE] = (f->params & GEN_BIT(GEN_DQ_MODE)) && ((variant >> 1) & 1) ? other_dq : 0;
                    variant++;
                    n = add_jobs(jobs, n, f, v, set, archs, narchs);
                    continue;
                }
                /* Full: CAUSAL x CAUSAL_SKIP x EVEN (both or neither) x DQ_MODE. */
                int full_set[GEN_PARAM_COUNT] = { 0 };
                full_set[GEN_DTYPE] = full_set[GEN_HEAD_DIM] = full_set[GEN_HEAD_DIM_V] = 1;
                full_set[GEN_CAUSAL] = full_set[GEN_CAUSAL_SKIP] = full_set[GEN_EVEN_M] = 1;
                full_set[GEN_EVEN_N] = full_set[GEN_DQ_MODE] = 1;
                for (int bits = 0; bits < 16; bits++) {
                    v[GEN_CAUSAL] = bits & 1;
                    v[GEN_CAUSAL_SKIP] = (bits >> 1) & 1;
                    v[GEN_EVEN_M] = v[GEN_EVEN_N] = (bits >> 2) & 1;
                    v[GEN_DQ_MODE] = (bits >> 3) & 1 ? other_dq : 0;
                    /* Skip combinations that only differ in parameters the family ignores. */
                    if ((!v[GEN_CAUSAL] && v[GEN_CAUSAL_SKIP] != f->defaults[GEN_CAUSAL_SKIP]) ||
                        (!(f->params & GEN_BIT(GEN_CAUSAL_SKIP)) && ((bits >> 1) & 1)) ||
                        (!(f->params & GEN_BIT(GEN_EVEN_M)) && ((bits >> 2) & 1)) ||
                        (!(f->params & GEN_BIT(GEN_DQ_MODE)) && ((bits >> 3) & 1)))
                        continue;
                    n = add_jobs(jobs, n, f, v, full_set, archs, narchs);
                }
            }
        }
    }
    assert_true(n <= cap);
    run_jobs(jobs, n, full_mode ? 100 : 0);
    int failed = 0, unsupported = 0;
    for (int i = 0; i < n; i++) {
        if (jobs[i].done_ok)
            continue;
        char what[512];
        describe(&jobs[i], what, sizeof what);
        if (jobs[i].unsupported) {
            if (unsupported++ < 40)
                print_message("unsupported %s: %s\n", what, jobs[i].problem);
        } else if (failed++ < 40) {
            print_error("FAIL %s: %s\n", what, jobs[i].problem);
        }
    }
    for (int k = 0; k < count; k++) {
        int tried = 0, bad = 0, none = 0;
        for (int i = 0; i < n; i++)
            if (jobs[i].config.family == all[k]) {
                none += jobs[i].unsupported;
                tried += !jobs[i].unsupported;
                bad += !jobs[i].unsupported && !jobs[i].done_ok;
            }
        print_message("  %-10s %4d compiled, %4d failed, %3d without a valid configuration\n", all[k]->name, tried,
                      bad, none);
    }
    print_message("compiled %d configurations: %d ok, %d failed; %d without a valid configuration; %d families "
                  "without a template\n", n - unsupported, n - unsupported - failed, failed, unsupported, missing);
    free(jobs);
    assert_int_equal(failed + missing, 0);
}

int main(int argc, char **argv)
{
    full_mode = argc > 1 && !strcmp(argv[1], "full");
    const struct CMUnitTest fast[] = {
        cmocka_unit_test(param_names_round_trip),
        cmocka_unit_test(param_values_parse),
        cmocka_unit_test(param_table_rows_round_trip),
        cmocka_unit_test(config_text_round_trips),
        cmocka_unit_test(catalogue_lists_unique_families),
        cmocka_unit_test(every_family_has_its_template),
        cmocka_unit_test(expansion_is_deterministic_and_complete),
        cmocka_unit_test(invalid_sets_are_rejected_with_reason),
        cmocka_unit_test(defaults_are_valid),
        cmocka_unit_test(bwd_register_split),
        cmocka_unit_test(tf32_forward_keeps_no_pv_apart),
        cmocka_unit_test(p_smem_frees_the_registers_of_p),
        cmocka_unit_test(narrow_panels_make_room_for_144_keys),
        cmocka_unit_test(bf16_parts_fit_two_stages_at_head_dim_128),
        cmocka_unit_test(hopper_f32_backward_compiles_clean),
        cmocka_unit_test(smem_limits_per_arch),
        cmocka_unit_test(hashes_are_fnv1a_and_tell_inputs_apart),
        cmocka_unit_test(cache_id_names_the_compile_target),
        cmocka_unit_test(ptxas_log_is_parsed),
        cmocka_unit_test(nvrtc_compiles_a_tiny_kernel),
        cmocka_unit_test(nvrtc_errors_are_reported),
        cmocka_unit_test(every_family_compiles_without_spills),
    };
    const struct CMUnitTest full[] = {
        cmocka_unit_test(every_family_compiles_without_spills),
    };
    return full_mode ? cmocka_run_group_tests_name("test_gen_full", full, NULL, NULL)
                     : cmocka_run_group_tests_name("test_gen", fast, NULL, NULL);
}
