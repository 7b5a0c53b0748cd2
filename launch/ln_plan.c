/* A family's steps for one operation: its entries in table order (table order is launch
 * order), those its used() launches, each with its function and shape; and which entries
 * serve which operation. */
#include <stdio.h>
#include <string.h>

#include "ln_internal.h"
#include "traits/ft_traits.h"

/* The `ref` family serves the forward, the backward and the tuner's utilities with one table
 * (family_ref.c); its entry names say which. Every other family serves the one operation of
 * its `backward` flag. (A gen_entry field naming the operation would replace this.) */
ln_op ln_entry_op(const gen_family *f, const gen_entry *e)
{
    switch (e->op) {
    case GEN_OP_FORWARD:
        return LN_FORWARD;
    case GEN_OP_BACKWARD:
        return LN_BACKWARD;
    case GEN_OP_UTILITY:
        return LN_UTILITY;
    default:
        return f->backward ? LN_BACKWARD : LN_FORWARD;
    }
}

/* DQ_MODE atomic and ordered: dkdv adds dQ into dq_accum, which (and the order area of ordered)
 * must start at zero (templates/README.md, "Backward order"). */
static int uses_accum(const gen_config *c, ln_op op)
{
    return op == LN_BACKWARD && (c->family->params & GEN_BIT(GEN_DQ_MODE)) &&
           (c->p[GEN_DQ_MODE] == FT_DQ_ATOMIC || c->p[GEN_DQ_MODE] == FT_DQ_ORDERED);
}

int ln_plan_make(const gen_config *c, ln_op op, int seqlen_q, int seqlen_k, ln_plan *out, char *err, size_t len)
{
    memset(out, 0, sizeof *out);
    if (!c || !c->family) {
        snprintf(err, len, "ln_plan_make: config=%p has no family", (const void *)c);
        return -1;
    }
    const gen_family *f = c->family;
    if (op != LN_FORWARD && op != LN_BACKWARD) {
        snprintf(err, len, "ln_plan_make: op=%d is neither the forward nor the backward", (int)op);
        return -1;
    }
    out->backward = op == LN_BACKWARD;
    out->accum = uses_accum(c, op);
    out->accum_stored = out->accum && (f->params & GEN_BIT(GEN_DQ_INIT)) && c->p[GEN_DQ_INIT] == FT_DQ_INIT_STORE;
    out->map_rows = f->map_rows ? f->map_rows(c->p) : 0;
    out->q_map_rows = f->q_map_rows ? f->q_map_rows(c->p) : 0;
    out->o_map_rows = f->o_map_rows ? f->o_map_rows(c->p) : 0;
    out->map_row_bytes = f->map_row_bytes ? f->map_row_bytes(c->p) : 128;
    const int persistent = f->persistent ? f->persistent(c->p) : 0;
    out->seqlen_q = seqlen_q;
    out->seqlen_k = seqlen_k;
    out->features = f->features;
    out->required = 0;
    /* A feature compiled in (SOFTCAP, SINKS, VARLEN): the kernel takes the problems with it iff
     * its switch is on. */
#define SWITCHED(param, feature)                                                                                  \
    if (f->params & GEN_BIT(param)) {                                                                            \
        if (c->p[param])                                                                                         \
            out->required |= (feature);                                                                          \
        else                                                                                                     \
            out->features &= ~(unsigned)(feature);                                                               \
    }
    GEN_SWITCH_FEATURES(SWITCHED)
#undef SWITCHED
    const int pads = (f->params & GEN_BIT(GEN_DATA_DIM)) != 0;
    out->head_dim = pads && c->p[GEN_DATA_DIM] ? c->p[GEN_DATA_DIM] : c->p[GEN_HEAD_DIM];
    out->head_dim_v = pads && c->p[GEN_DATA_DIM_V] ? c->p[GEN_DATA_DIM_V] : c->p[GEN_HEAD_DIM_V];
    out->accum_cols = out->accum ? c->p[GEN_HEAD_DIM] : 0;
    const int splits = (f->params & GEN_BIT(GEN_SPLITS)) ? c->p[GEN_SPLITS] : 1;
    const int packed = (f->params & GEN_BIT(GEN_PACK_GQA)) && c->p[GEN_PACK_GQA];
    out->splits = splits > 1 ? splits : 1;
    out->part_cols = c->p[GEN_HEAD_DIM_V];
    out->part_cols_k = c->p[GEN_HEAD_DIM];
    for (int i = 0; i < f->entry_count; i++) {
        const gen_entry *e = &f->entries[i];
        if (ln_entry_op(f, e) != op || !gen_entry_used(c, e))
            continue;
        if (out->count == LN_MAX_STEPS) {
            snprintf(err, len, "ln_plan_make: family %s launches more than %d entries", f->name, LN_MAX_STEPS);
            return -1;
        }
        ln_step *s = &out->steps[out->count];
        size_t smem;
        if (ln_entry_dims(c, e, seqlen_q, seqlen_k, &s->grid_x, &s->block_x, &smem) != 0) {
            snprintf(err, len, "ln_plan_make: no launch shape for %s of %s with seqlen_q=%d seqlen_k=%d BLOCK_M=%d "
                     "BLOCK_N=%d NUM_WARPS=%d", e->name, f->name, seqlen_q, seqlen_k, c->p[GEN_BLOCK_M],
                     c->p[GEN_BLOCK_N], c->p[GEN_NUM_WARPS]);
            return -1;
        }
        s->smem = (unsigned)smem;
        s->entry = e;
        s->persistent = persistent && e->persists;
        s->key_major = e->key_major;
        s->splits = e->split ? (unsigned)out->splits : 1;
        s->pack_rows = e->split && packed ? (unsigned)c->p[GEN_BLOCK_M] : 0;
        s->cluster = ln_entry_cluster(c, e);
        if (s->cluster > 1 && s->persistent) {
            snprintf(err, len, "ln_plan_make: %s of %s runs persistent in clusters of %u blocks, which the launcher "
                     "cannot size", e->name, f->name, s->cluster);
            return -1;
        }
        out->count++;
    }
    if (out->count == 0) {
        snprintf(err, len, "ln_plan_make: family %s has no %s entry", f->name,
                 op == LN_BACKWARD ? "backward" : "forward");
        return -1;
    }
    return 0;
}

size_t ln_split_workspace_bytes(const ln_plan *plan, const ln_problem *p)
{
    if (!plan->backward)
        return ln_fwd_workspace_bytes(plan->splits, ln_lse_rows(p), plan->part_cols, NULL);
    const size_t rows = (size_t)p->batch * ln_heads_k(p) * p->seqlen_k;
    return ln_bwd_split_bytes(plan->splits, rows, plan->part_cols_k, plan->part_cols, NULL);
}

/* The blocks of step s that fit the current context's GPU at once: its occupancy per SM (its
 * registers, block size and dynamic shared memory) times the SMs. */
static CUresult resident_blocks(const cu_driver *cu, ln_step *s)
{
    CUdevice dev;
    int per_sm = 0, sms = 0;
    CUresult rc = cu->OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s->fn, (int)s->block_x, s->smem);
    if (rc == CUDA_SUCCESS)
        rc = cu->CtxGetDevice(&dev);
    if (rc == CUDA_SUCCESS)
        rc = cu->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    if (rc == CUDA_SUCCESS && (per_sm < 1 || sms < 1))
        rc = CUDA_ERROR_INVALID_VALUE;   /* a kernel that cannot run here at all */
    s->resident = rc == CUDA_SUCCESS ? (unsigned)(per_sm * sms) : 0;
    return rc;
}

CUresult ln_plan_bind(const cu_driver *cu, ln_plan *plan, CUmodule module, const char **missing)
{
    for (int i = 0; i < plan->count; i++) {
        ln_step *s = &plan->steps[i];
        CUresult rc = cu->ModuleGetFunction(&s->fn, module, s->entry->name);
        if (rc == CUDA_SUCCESS && s->persistent)
            rc = resident_blocks(cu, s);
        if (rc != CUDA_SUCCESS) {
            if (missing)
                *missing = s->entry->name;
            return rc;
        }
    }
    return CUDA_SUCCESS;
}
