/* Validation of a configuration: the rules every family shares, then the family's own check,
 * then shared memory against the target's limit. */
#include <stdio.h>
#include <string.h>

#include "gen_internal.h"

int gen_entry_used(const gen_config *c, const gen_entry *e)
{
    return !e->used || e->used(c->p);
}

/* "f16, bf16": the dtypes in mask. */
static void dtype_list(unsigned mask, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int d = 0; d <= gen_param_get(GEN_DTYPE)->max; d++)
        if (mask & (1u << d)) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s", used ? ", " : "", gen_dtype_name(d));
        }
}

/* The rules every family shares, from the parameter table: a parameter the family does not use
 * keeps its default (so that one kernel never gets two identities; its range does not matter),
 * one it uses is in the table's range; DTYPE is also one of the family's. */
static int check_common(const gen_config *c, char *why, size_t len)
{
    const gen_family *f = c->family;
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const gen_param p = (gen_param)i;
        if (!(f->params & GEN_BIT(p))) {
            if (c->p[p] != f->defaults[p]) {
                snprintf(why, len, "%s=%d is not used by %s and must keep its default %d",
                         gen_param_name(p), c->p[p], f->name, f->defaults[p]);
                return -1;
            }
            continue;
        }
        const int dtype = c->p[GEN_DTYPE];
        if (p == GEN_DTYPE && (dtype < 0 || dtype > 31 || !(f->dtypes & (1u << dtype)))) {
            char list[64];
            dtype_list(f->dtypes, list, sizeof list);
            snprintf(why, len, "DTYPE=%d (%s) is not supported by %s (%s)", dtype, gen_dtype_name(dtype),
                     f->name, list);
            return -1;
        }
        if (gen_param_check(p, c->p[p], why, len))
            return -1;
    }
    return 0;
}

/* DATA_DIM and DATA_DIM_V, where the family takes them: 0, or a head dim below HEAD_DIM (and
 * HEAD_DIM_V) that the kernel pads to it. Equal would give one kernel two identities. In f16 and
 * bf16 a multiple of 8, in f32 on tensor cores (the families that take ALLOW_TF32) of 4: those
 * families copy rows in 16-byte pieces. */
static int check_data_dims(const gen_config *c, char *why, size_t len)
{
    static const gen_param pairs[2][2] = { { GEN_DATA_DIM, GEN_HEAD_DIM }, { GEN_DATA_DIM_V, GEN_HEAD_DIM_V } };
    const int dtype = c->p[GEN_DTYPE];
    for (int i = 0; i < 2; i++) {
        const gen_param data = pairs[i][0], head = pairs[i][1];
        const int d = c->p[data], h = c->p[head];
        if (!(c->family->params & GEN_BIT(data)) || d == 0)
            continue;
        if (d >= h) {
            snprintf(why, len, "%s=%d must be below %s=%d (0 when the data fills the head dim)", gen_param_name(data),
                     d, gen_param_name(head), h);
            return -1;
        }
        if ((dtype == 1 || dtype == 2) && d % 8 != 0) {
            snprintf(why, len, "%s=%d in %s must be a multiple of 8 (rows are copied in 16-byte pieces)",
                     gen_param_name(data), d, gen_dtype_name(dtype));
            return -1;
        }
        if (dtype == 0 && (c->family->params & GEN_BIT(GEN_ALLOW_TF32)) && d % 4 != 0) {
            snprintf(why, len, "%s=%d in f32 on %s's tensor cores must be a multiple of 4 (rows are copied in "
                     "16-byte pieces)", gen_param_name(data), d, c->family->name);
            return -1;
        }
    }
    return 0;
}

/* VARLEN 1: every sequence has its own lengths, so neither may be declared a multiple of a tile.
 * PACK_GQA 1: a tile's rows are a group's heads' rows, so seqlen_q is not declared a multiple of it. */
static int check_varlen(const gen_config *c, char *why, size_t len)
{
    const gen_param_set used = c->family->params;
    if ((used & GEN_BIT(GEN_PACK_GQA)) && c->p[GEN_PACK_GQA] && (used & GEN_BIT(GEN_EVEN_M)) && c->p[GEN_EVEN_M]) {
        snprintf(why, len, "EVEN_M=1 with PACK_GQA=1: a packed tile's rows are a group's query heads' rows "
                 "(EVEN_M must be 0)");
        return -1;
    }
    if (!(used & GEN_BIT(GEN_VARLEN)) || !c->p[GEN_VARLEN])
        return 0;
    for (int i = 0; i < 2; i++) {
        const gen_param even = i ? GEN_EVEN_N : GEN_EVEN_M;
        if ((c->family->params & GEN_BIT(even)) && c->p[even]) {
            snprintf(why, len, "%s=1 with VARLEN=1: a variable-length batch's sequences have their own lengths "
                     "(%s must be 0)", gen_param_name(even), gen_param_name(even));
            return -1;
        }
    }
    return 0;
}

int gen_validate(const gen_config *c, int smem_limit_bytes, char *why, size_t len)
{
    if (!c || !c->family) {
        snprintf(why, len, "no template family given");
        return -1;
    }
    if (why && len)
        why[0] = '\0';
    const gen_family *f = c->family;
    if (check_common(c, why, len) || check_data_dims(c, why, len) || check_varlen(c, why, len))
        return -1;
    if (f->check && f->check(c->p, why, len)) {
        if (why && len && !why[0])
            snprintf(why, len, "%s rejects this configuration", f->name);
        return -1;
    }
    for (int i = 0; smem_limit_bytes > 0 && i < f->entry_count; i++) {
        const gen_entry *e = &f->entries[i];
        if (!gen_entry_used(c, e) || !e->smem_bytes)
            continue;
        const size_t need = e->smem_bytes(c->p);
        if (need > (size_t)smem_limit_bytes) {
            snprintf(why, len, "shared memory: %s needs %zu bytes with BLOCK_M=%d, BLOCK_N=%d, "
                     "NUM_STAGES=%d, HEAD_DIM=%d, HEAD_DIM_V=%d, more than the %d allowed",
                     e->name, need, c->p[GEN_BLOCK_M], c->p[GEN_BLOCK_N], c->p[GEN_NUM_STAGES],
                     c->p[GEN_HEAD_DIM], c->p[GEN_HEAD_DIM_V], smem_limit_bytes);
            return -1;
        }
    }
    return 0;
}

/* ---- what a problem's sizes decide (the space loader's rules, shared with db import) -------- */

int gen_check_problem_sizes(int batch, int heads, int seqlen_q, int seqlen_k, char *why, size_t len)
{
    const struct { const char *name; int value; } sizes[] = {
        { "batch", batch }, { "heads", heads }, { "seqlen_q", seqlen_q }, { "seqlen_k", seqlen_k },
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1) {
            snprintf(why, len, "%s = %d must be at least 1", sizes[i].name, sizes[i].value);
            return -1;
        }
    if ((long long)batch * heads > 65535) {
        snprintf(why, len, "batch*heads = %lld is more than 65535 (CUDA's limit on grid.y)", (long long)batch * heads);
        return -1;
    }
    /* The kernels form row + mask offset in int (ft_mask.h). */
    if ((long long)seqlen_q + seqlen_k >= 0x80000000LL) {
        snprintf(why, len, "seqlen_q + seqlen_k = %lld must be below 2^31 (the kernels index rows in int)",
                 (long long)seqlen_q + seqlen_k);
        return -1;
    }
    return 0;
}

int gen_check_problem_heads(const gen_config *c, int heads, int heads_k, char *why, size_t len)
{
    const gen_family *f = c->family;
    if (!f || !f->backward || !(f->params & GEN_BIT(GEN_SPLITS)) || c->p[GEN_SPLITS] <= 1)
        return 0;
    const int group = heads_k > 0 && heads_k < heads ? heads / heads_k : 1;
    if (group % c->p[GEN_SPLITS] == 0)
        return 0;
    snprintf(why, len, "SPLITS=%d shares a group's query heads over blocks: it must divide the group of %d (heads "
             "= %d over heads_k = %d)", c->p[GEN_SPLITS], group, heads, heads_k > 0 ? heads_k : heads);
    return -1;
}

void gen_config_fit_lengths(gen_config *c, int seqlen_q, int seqlen_k)
{
    /* A tile < 1 is refused by gen_validate; it must not divide here. */
    const gen_param_set used = c->family ? c->family->params : 0;
    const int dense = !(used & GEN_BIT(GEN_VARLEN)) || !c->p[GEN_VARLEN];   /* else no length is known */
    const int packed = (used & GEN_BIT(GEN_PACK_GQA)) && c->p[GEN_PACK_GQA];   /* rows seqlen_q * group */
    if (used & GEN_BIT(GEN_EVEN_M))
        c->p[GEN_EVEN_M] = dense && !packed && c->p[GEN_BLOCK_M] > 0 && seqlen_q % c->p[GEN_BLOCK_M] == 0;
    if (used & GEN_BIT(GEN_EVEN_N))
        c->p[GEN_EVEN_N] = dense && c->p[GEN_BLOCK_N] > 0 && seqlen_k % c->p[GEN_BLOCK_N] == 0;
}
