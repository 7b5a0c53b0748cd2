/* Template parameters: names, value parsing and symbolic value names, family defaults. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gen_internal.h"

/* Indexed by gen_param; the macro names the templates see. */
static const char *const param_names[GEN_PARAM_COUNT] = {
    [GEN_DTYPE] = "DTYPE",         [GEN_HEAD_DIM] = "HEAD_DIM",   [GEN_HEAD_DIM_V] = "HEAD_DIM_V",
    [GEN_BLOCK_M] = "BLOCK_M",     [GEN_BLOCK_N] = "BLOCK_N",     [GEN_NUM_WARPS] = "NUM_WARPS",
    [GEN_NUM_STAGES] = "NUM_STAGES", [GEN_CAUSAL] = "CAUSAL",     [GEN_CAUSAL_SKIP] = "CAUSAL_SKIP",
    [GEN_EVEN_M] = "EVEN_M",       [GEN_EVEN_N] = "EVEN_N",       [GEN_DQ_MODE] = "DQ_MODE",
};

/* Codes as ft_dtype in flashtune.h. */
static const char *const dtype_names[] = { "f32", "f16", "bf16", "f64" };
static const char *const dq_mode_names[] = { "atomic", "separate" };

const char *gen_param_name(gen_param param)
{
    return (unsigned)param < GEN_PARAM_COUNT ? param_names[param] : NULL;
}

int gen_param_lookup(const char *name)
{
    for (int i = 0; name && i < GEN_PARAM_COUNT; i++)
        if (!strcasecmp(param_names[i], name))
            return i;
    return -1;
}

const char *gen_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < 4 ? dtype_names[dtype] : "?";
}

const char *gen_param_value_name(gen_param param, int value)
{
    if (param == GEN_DTYPE && value >= 0 && value < 4)
        return dtype_names[value];
    if (param == GEN_DQ_MODE && value >= 0 && value < 2)
        return dq_mode_names[value];
    return NULL;
}

/* Index of text in names (case-insensitive), or -1. */
static int find_name(const char *const *names, int count, const char *text)
{
    for (int i = 0; i < count; i++)
        if (!strcasecmp(names[i], text))
            return i;
    return -1;
}

int gen_param_parse(gen_param param, const char *text, int *value, char *why, size_t len)
{
    const char *name = gen_param_name(param);
    if (!name) {
        snprintf(why, len, "parameter index %d is out of range", (int)param);
        return -1;
    }
    if (!text || !*text) {
        snprintf(why, len, "%s has an empty value", name);
        return -1;
    }
    int symbolic = -1;
    if (param == GEN_DTYPE)
        symbolic = find_name(dtype_names, 4, text);
    else if (param == GEN_DQ_MODE)
        symbolic = find_name(dq_mode_names, 2, text);
    if (symbolic >= 0) {
        *value = symbolic;
        return 0;
    }
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || errno || v < INT_MIN || v > INT_MAX) {
        if (param == GEN_DTYPE)
            snprintf(why, len, "DTYPE=%s is not a dtype (f32, f16, bf16, f64 or 0..3)", text);
        else if (param == GEN_DQ_MODE)
            snprintf(why, len, "DQ_MODE=%s is not a dQ mode (atomic, separate or 0, 1)", text);
        else
            snprintf(why, len, "%s=%s is not an integer", name, text);
        return -1;
    }
    *value = (int)v;
    return 0;
}

void gen_config_init(gen_config *c, const gen_family *f)
{
    c->family = f;
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        c->p[i] = f ? f->defaults[i] : 0;
}
