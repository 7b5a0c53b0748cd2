/* Built-in configurations: the families for a problem (by their default_rank, never by name), a
 * default that fits every supported head dim on every targeted GPU, and the GPU reference
 * kernels. */
#include <stdio.h>

#include "rt_internal.h"
#include "traits/ft_traits.h"

/* Most families a problem may have to try (the catalogue's of one direction and dtype). */
enum { MAX_FAMILIES = 8 };

/* The families to try for w, best first: those of w's direction that take its dtype and every
 * parameter of need_params (GEN_BIT mask), by their default_rank (gen_family), catalogue order
 * among equals. Whether one runs on the GPU and which of its tiles fit is fit_family's to say.
 * OUT: the families; returns their count. */
int rt_family_reads_rows16(const gen_family *f, int dtype)
{
    return dtype == FT_F32 ? (f->params & GEN_BIT(GEN_ALLOW_TF32)) != 0 : dtype != FT_F64;
}

static int families_for(const db_workload *w, gen_param_set need_params, int any_rows,
                        const gen_family *out[MAX_FAMILIES])
{
    int all, count = 0;
    const gen_family *const *list = gen_family_list(&all);
    for (int i = 0; i < all && count < MAX_FAMILIES; i++) {
        const gen_family *f = list[i];
        if (f->default_rank <= 0 || f->backward != (w->op == DB_OP_BWD) || !(f->dtypes & (1u << w->dtype)) ||
            (f->params & need_params) != need_params || (any_rows && rt_family_reads_rows16(f, w->dtype)))
            continue;
        int at = count++;
        for (; at > 0 && out[at - 1]->default_rank > f->default_rank; at--)
            out[at] = out[at - 1];
        out[at] = f;
    }
    return count;
}

void rt_config_fit(gen_config *c, const db_workload *w)
{
    if (c->family->params & GEN_BIT(GEN_CAUSAL))
        c->p[GEN_CAUSAL] = db_workload_masked(w);
    /* Products rounded to TF32 or not (a winner tuned for either serves both): it decides
     * SPLIT_SMEM's planes in shared memory, so the configuration is validated with the problem's. */
    if (c->family->params & GEN_BIT(GEN_ALLOW_TF32))
        c->p[GEN_ALLOW_TF32] = w->tf32;
    /* The data's head dims where the compiled ones are wider (rt_choose sets the same): validated
     * with them, as they decide what a row copy may read (f32 on tensor cores: multiples of 4). */
    if (c->family->params & GEN_BIT(GEN_DATA_DIM)) {
        c->p[GEN_DATA_DIM] = c->p[GEN_HEAD_DIM] != w->head_dim ? w->head_dim : 0;
        c->p[GEN_DATA_DIM_V] = c->p[GEN_HEAD_DIM_V] != w->head_dim_v ? w->head_dim_v : 0;
    }
    /* A winner tuned on other lengths may have had even tiles where this problem has not. */
    gen_config_fit_lengths(c, w->seqlen_q, w->seqlen_k);
}

int rt_decode_tile_rows(const db_workload *w)
{
    const int heads_k = w->heads_k ? w->heads_k : w->heads, rows = w->seqlen_q * (w->heads / heads_k);
    return rows <= 16 ? 16 : rows <= 32 ? 32 : 64;
}

int rt_decode_config(const rt_device *dev, const db_workload *w, gen_config *out, char *why, size_t len)
{
    if (!db_workload_decode(w)) {
        snprintf(why, len, "not a decode shape (seqlen_q=%d, at most %d in f16 or bf16)", w->seqlen_q, DB_DECODE_ROWS);
        return -1;
    }
    /* The first family that runs here and packs a group's rows (PACK_GQA) and splits the keys
     * (SPLITS); the tiles below are for 16-row mma.sync tiles, which gen_validate checks. */
    const gen_family *families[MAX_FAMILIES], *f = NULL;
    const int count = families_for(w, GEN_BIT(GEN_PACK_GQA) | GEN_BIT(GEN_SPLITS), 0, families);
    for (int i = 0; i < count && !f; i++)
        if (gen_target_arch(families[i], dev->arch))
            f = families[i];
    if (!f) {
        snprintf(why, len, "no family that packs a group's rows and splits the keys runs on %s", dev->arch);
        return -1;
    }
    const int heads_k = w->heads_k ? w->heads_k : w->heads, group = w->heads / heads_k;
    const int rows = w->seqlen_q * group;
    gen_config c;
    gen_config_init(&c, f);
    c.p[GEN_DTYPE] = w->dtype;
    c.p[GEN_HEAD_DIM] = ln_family_head_dim(f, w->head_dim);
    c.p[GEN_HEAD_DIM_V] = ln_family_head_dim(f, w->head_dim_v);
    c.p[GEN_PACK_GQA] = group > 1;
    c.p[GEN_BLOCK_M] = rt_decode_tile_rows(w);
    c.p[GEN_NUM_WARPS] = c.p[GEN_BLOCK_M] / 16;
    c.p[GEN_NUM_STAGES] = 2;
    /* Blocks without the split: one a (query tile, batch, head or group). */
    const long long tiles_q = ((group > 1 ? rows : w->seqlen_q) + c.p[GEN_BLOCK_M] - 1) / c.p[GEN_BLOCK_M];
    const long long blocks = (long long)w->batch * (group > 1 ? heads_k : w->heads) * tiles_q;
    const long long want = 2ll * (dev->sm_count > 0 ? dev->sm_count : 132);
    for (int bn = 64; bn >= 16; bn /= 2) {
        c.p[GEN_BLOCK_N] = bn;
        const long long tiles = ((long long)w->seqlen_k + bn - 1) / bn;
        int splits = 1;
        while (splits < 64 && blocks * splits < want && (long long)splits * 2 * 4 <= tiles)
            splits *= 2;
        c.p[GEN_SPLITS] = splits;
        rt_config_fit(&c, w);
        if (gen_validate(&c, dev->smem_limit, why, len) == 0 && gen_check_arch(f, dev->arch, why, len) == 0) {
            *out = c;
            return 0;
        }
    }
    return -1;
}

int rt_repeatable_config(const rt_device *dev, const db_workload *w, gen_config *c, char *why, size_t len)
{
    static const int modes[] = { FT_DQ_ORDERED, FT_DQ_SEPARATE };   /* preferred first */
    if (!(c->family->params & GEN_BIT(GEN_DQ_MODE))) {
        snprintf(why, len, "family %s has no DQ_MODE", c->family->name);
        return -1;
    }
    if (ft_dq_mode_repeatable(c->p[GEN_DQ_MODE]))
        return gen_validate(c, dev->smem_limit, why, len);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        gen_config d = *c;
        d.p[GEN_DQ_MODE] = modes[i];
        /* A fixed order's turns follow the order a grid's blocks start in: one block a tile, and
         * each walking its tiles from the first (a staggered walk would wait on its turns). */
        if (c->family->params & GEN_BIT(GEN_PERSISTENT))
            d.p[GEN_PERSISTENT] = 0;
        if (c->family->params & GEN_BIT(GEN_STAGGER))
            d.p[GEN_STAGGER] = 0;
        /* A slab's queries split between its warps exchange dS^T where atomic dQ keeps it. */
        if (c->family->params & GEN_BIT(GEN_SPLIT_QUERIES))
            d.p[GEN_SPLIT_QUERIES] = 0;
        if (modes[i] == FT_DQ_ORDERED && c->family->repeatable) {
            /* The family's tiles for a fixed order, else the configuration's own. */
            gen_config e = d;
            c->family->repeatable(e.p);
            rt_config_fit(&e, w);
            if (gen_validate(&e, dev->smem_limit, why, len) == 0) {
                *c = e;
                return 0;
            }
        }
        if (gen_validate(&d, dev->smem_limit, why, len) == 0) {
            *c = d;
            return 0;
        }
    }
    return -1;
}

/* The family's tiles when they fit; else, largest first, smaller key then query tiles, each
 * with the default warps, twice and half as many, and fewer stages: large head dims need
 * smaller tiles for shared memory and registers. deterministic: each made repeatable
 * (rt_repeatable_config). Returns 0, or -1 with the last reason in last. */
static int fit_family(const gen_family *f, const rt_device *dev, const db_workload *w, int deterministic,
                      gen_config *out, char *last, size_t len)
{
    const int larger = w->head_dim > w->head_dim_v ? w->head_dim : w->head_dim_v;
    if (larger < f->min_head_dim && larger < f->pad_from) {
        snprintf(last, len, "%s pads head dims below %d only from %d", f->name, f->min_head_dim, f->pad_from);
        return -1;
    }
    gen_config base;
    gen_config_init(&base, f);
    base.p[GEN_DTYPE] = w->dtype;
    /* The compiled head dims (rt_choose then sets DATA_DIM to the problem's). */
    base.p[GEN_HEAD_DIM] = ln_family_head_dim(f, w->head_dim);
    base.p[GEN_HEAD_DIM_V] = ln_family_head_dim(f, w->head_dim_v);
    rt_config_fit(&base, w);   /* the problem's fields first: the default tiles may depend on them (ALLOW_TF32) */
    gen_config_head_dim_tiles(&base);
    if (gen_check_arch(f, dev->arch, last, len))
        return -1;
    static const int warps_mul[3] = { 2, 4, 1 }, warps_div = 2;   /* x1, x2, x1/2 */
    for (int bm = base.p[GEN_BLOCK_M]; bm >= 1; bm /= 2)
        for (int bn = base.p[GEN_BLOCK_N]; bn >= 1; bn /= 2)
            for (int wi = 0; wi < 3; wi++)
                for (int st = base.p[GEN_NUM_STAGES]; st >= 1; st--) {
                    gen_config c = base;
                    c.p[GEN_BLOCK_M] = bm;
                    c.p[GEN_BLOCK_N] = bn;
                    c.p[GEN_NUM_WARPS] = base.p[GEN_NUM_WARPS] * warps_mul[wi] / warps_div;
                    c.p[GEN_NUM_STAGES] = st;
                    rt_config_fit(&c, w);
                    if (c.p[GEN_NUM_WARPS] < 1)
                        continue;
                    if ((deterministic ? rt_repeatable_config(dev, w, &c, last, len)
                                       : gen_validate(&c, dev->smem_limit, last, len)) == 0) {
                        *out = c;
                        return 0;
                    }
                }
    return -1;
}

int rt_default_config(const rt_device *dev, const db_workload *w, int flags, gen_config *out, char *why,
                      size_t len)
{
    const int deterministic = (flags & RT_CHOOSE_DETERMINISTIC) && w->op == DB_OP_BWD;
    const int any_rows = (flags & RT_CHOOSE_ANY_ROWS) != 0;
    if (!any_rows && db_workload_decode(w) && rt_decode_config(dev, w, out, why, len) == 0)
        return 0;
    const gen_family *families[MAX_FAMILIES];
    const int count = families_for(w, 0, any_rows, families);
    char last[512] = "";
    for (int i = 0; i < count; i++)
        if (fit_family(families[i], dev, w, deterministic, out, last, sizeof last) == 0)
            return 0;
    if (count == 0)
        snprintf(why, len, "no %s family takes dtype %s%s", w->op == DB_OP_BWD ? "backward" : "forward",
                 gen_dtype_name(w->dtype), any_rows ? " in rows that are not 16-byte aligned" : "");
    else
        snprintf(why, len, "no %s%s configuration fits %s (%s) for head_dim=%d head_dim_v=%d: %s",
                 deterministic ? "deterministic " : "", families[count - 1]->name, dev->name, dev->arch, w->head_dim,
                 w->head_dim_v, last);
    return -1;
}

void rt_reference_config(const db_workload *w, gen_config *out)
{
    gen_config_init(out, gen_family_find("ref"));
    out->p[GEN_DTYPE] = w->dtype;
    out->p[GEN_HEAD_DIM] = w->head_dim;
    out->p[GEN_HEAD_DIM_V] = w->head_dim_v;
    out->p[GEN_CAUSAL] = db_workload_masked(w);
    out->p[GEN_VARLEN] = w->varlen != 0;
}
