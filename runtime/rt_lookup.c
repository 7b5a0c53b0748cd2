/* Which kernel runs a problem: the user's database (exact, then nearest tuned workload), the
 * winners shipped with the library, then the built-in default; made deterministic on request. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "rt_internal.h"
#include "traits/ft_traits.h"

/* The winner's configuration fitted to w, when it is a kernel of the right kind and valid on
 * dev. 0, or -1 with the reason. */
static int winner_config(const db_winner *win, const rt_device *dev, const db_workload *w, int any_rows,
                         gen_config *c, char *why, size_t len)
{
    const gen_family *f = gen_family_find(win->kernel.family);
    if (!f || !strcmp(f->name, "ref") || f->backward != (w->op == DB_OP_BWD)) {
        snprintf(why, len, "family '%s' cannot run this problem", win->kernel.family);
        return -1;
    }
    if (any_rows && rt_family_reads_rows16(f, w->dtype)) {
        snprintf(why, len, "%s copies 16-byte rows, and this problem's are not all 16-byte aligned", f->name);
        return -1;
    }
    c->family = f;
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        c->p[i] = win->kernel.p[i];
    rt_config_fit(c, w);
    return gen_validate(c, dev->smem_limit, why, len) ? -1 : gen_check_arch(f, dev->arch, why, len);
}

/* "batch=4 heads=16 seqlen_q=4096 seqlen_k=4096", then the workload's kind as the database
 * writes it (" heads_k=4 softcap=1 ..."). */
static void shape(const db_workload *w, char *buf, size_t len)
{
    char kind[160];
    snprintf(buf, len, "batch=%d heads=%d seqlen_q=%d seqlen_k=%d%s", w->batch, w->heads, w->seqlen_q, w->seqlen_k,
             db_workload_kind_format(w, kind, sizeof kind));
}

static void describe(const db_winner *win, int shipped, char *buf, size_t len)
{
    char where[140], tuned[240];
    if (win->device_match == DB_MATCH_SAME_GPU)
        snprintf(where, sizeof where, "on this GPU model");
    else
        snprintf(where, sizeof where, "on %.100s, same arch %s", win->device.name, win->device.arch);
    shape(&win->workload, tuned, sizeof tuned);
    const char *source = shipped ? "shipped tuned table " : "database";
    const char *names = shipped ? rt_shipped_names() : "";
    if (win->workload_match == DB_MATCH_EXACT)
        snprintf(buf, len, "%s%s exact (tuned %s, median %.4g ms)", source, names, where, win->median_ms);
    else
        snprintf(buf, len, "%s%s nearest (tuned at %s %s, median %.4g ms there)", source, names, tuned, where,
                 win->median_ms);
}

/* The choice out made bitwise repeatable (rt_choose's deterministic): its tiles with a repeatable
 * dQ mode, else the deterministic built-in default; out->why says so. 0, or -1 (why) when no
 * kernel for w on dev is deterministic. */
static int make_deterministic(const rt_device *dev, const db_workload *w, int flags, rt_choice *out, char *why,
                              size_t len)
{
    char first[256], second[256];
    gen_config c = out->config;
    const char *from = "";
    if (rt_repeatable_config(dev, w, &c, first, sizeof first) != 0) {
        /* The tuned tiles take no deterministic mode (bwd_mma's separate dQ splits keys
         * differently, say): the built-in default's, made deterministic. */
        if (rt_default_config(dev, w, flags | RT_CHOOSE_DETERMINISTIC, &c, second, sizeof second) != 0) {
            snprintf(why, len, "no deterministic backward for %s head_dim=%d head_dim_v=%d on %s: %s; %s",
                     gen_dtype_name(w->dtype), w->head_dim, w->head_dim_v, dev->arch, first, second);
            return -1;
        }
        from = ", built-in default tiles";
    }
    out->config = c;
    const size_t used = strlen(out->why);
    snprintf(out->why + used, sizeof out->why - used, "; deterministic (DQ_MODE=%s%s)",
             gen_param_value_name(GEN_DQ_MODE, c.p[GEN_DQ_MODE]), from);
    return 0;
}

/* What may serve the problem w, for the filter below: its decode kind, worked out once (whether it
 * is a decode shape, and if so its query tile); whether only its own mask's winners may; and the
 * head dims looked up, its own compiled ones or (padded) those its built-in choice pads them to. */
typedef struct serve_kind {
    const db_workload *w;
    int decode, tile_rows;
    int own_mask_only, padded;
    int head_dim, head_dim_v;
} serve_kind;

/* db_winner_find_if's filter: the candidate is a decode shape exactly when the problem is, and
 * then one whose rows fill the same query tile (ctx: the problem's serve_kind). Decode winners
 * are tuned for their rows: a 16-row draft's 64-row tile served to one row of 4 heads would pad
 * 60 of them. Looked up at padded dims, only a family that pads the problem's to them (a
 * warpgroup family's 64 for head dim 32; mma.sync compiles 32 itself and is not run wider). */
static int may_serve(const db_winner *candidate, void *ctx)
{
    const serve_kind *k = ctx;
    const db_workload *cw = &candidate->workload;
    if (db_workload_decode(cw) != k->decode)
        return 0;
    if (k->own_mask_only && db_workload_masked(cw) != db_workload_masked(k->w))
        return 0;
    if (k->decode && rt_decode_tile_rows(cw) != k->tile_rows)
        return 0;
    if (k->padded) {
        const gen_family *f = gen_family_find(candidate->kernel.family);
        return f && ln_family_head_dim(f, k->w->head_dim) == k->head_dim &&
               ln_family_head_dim(f, k->w->head_dim_v) == k->head_dim_v;
    }
    return 1;
}

/* The nearest winner for w looked up at head dims (d, dv): its own compiled ones, or (padded) the
 * ones its built-in choice pads them to; own_mask_only: among the winners of w's own mask alone. */
static int find_served(db *d, const char *device_name, const char *arch, int sm_count, const db_workload *w, int dh,
                       int dhv, int padded, int own_mask_only, db_winner *out, char *err, size_t len)
{
    db_workload key = *w;   /* the database knows the compiled head dims */
    key.head_dim = dh;
    key.head_dim_v = dhv;
    /* a decode kernel for decode shapes only (and its own query tile's), and nothing else */
    serve_kind kind = { w, db_workload_decode(w), rt_decode_tile_rows(w), own_mask_only, padded, dh, dhv };
    return db_winner_find_if(d, device_name, arch, sm_count, &key, may_serve, &kind, out, err, len);
}

int rt_find_served(db *d, const char *device_name, const char *arch, int sm_count, const db_workload *w,
                   db_winner *out, char *err, size_t len)
{
    return find_served(d, device_name, arch, sm_count, w, ln_padded_head_dim(w->head_dim),
                       ln_padded_head_dim(w->head_dim_v), 0, 0, out, err, len);
}

/* The winner of the first source that has one for w looked up at head dims (dh, dhv): its own
 * compiled ones, or (padded) those its built-in choice pads them to; fitted to w: 1 (OUT: out's
 * config, tier, why), 0 none (skipped gets the reasons of winners passed over), -1 a database error
 * (err). */
static int from_sources(db *const sources[2], const rt_device *dev, const db_workload *w, int dh, int dhv, int padded,
                        int any_rows, rt_choice *out, char *skipped, size_t skipped_len, int *is_db_error, char *err,
                        size_t len)
{
    for (int s = 0; s < 2; s++) {
        if (!sources[s])
            continue;
        db_winner win;
        char why[320];
        int found = find_served(sources[s], dev->name, dev->arch, dev->sm_count, w, dh, dhv, padded, 0, &win, why,
                                sizeof why);
        int unfit = found > 0 && winner_config(&win, dev, w, any_rows, &out->config, why, sizeof why) != 0;
        /* A decode winner of the other mask (db_workload_decode_any_mask) that does not fit this
         * one's (a causal kernel's registers, say): the nearest of the problem's own mask instead. */
        if (unfit && db_workload_masked(&win.workload) != db_workload_masked(w)) {
            db_winner own;
            char own_why[320];
            found = find_served(sources[s], dev->name, dev->arch, dev->sm_count, w, dh, dhv, padded, 1, &own,
                                own_why, sizeof own_why);
            if (found < 0)
                snprintf(why, sizeof why, "%s", own_why);
            else if (found > 0 && winner_config(&own, dev, w, any_rows, &out->config, own_why, sizeof own_why) == 0) {
                win = own;
                unfit = 0;
            } else
                found = 1;   /* the first winner's reason stands */
        }
        if (found < 0) {
            *is_db_error = 1;
            snprintf(err, len, "%s", why);
            return -1;
        }
        if (!found)
            continue;
        if (unfit) {
            /* Tuned for a GPU with more shared memory, say: remember why, try the next tier. */
            snprintf(skipped + strlen(skipped), skipped_len - strlen(skipped), "; %s winner %s%s passed over: %s",
                     s ? "shipped" : "database", win.kernel.family, padded ? " of the padded head dims" : "", why);
            continue;
        }
        if (padded)   /* the padded dims' winner serves the problem as the nearest, never exactly */
            win.workload_match = DB_MATCH_NEAREST;
        const int exact = win.workload_match == DB_MATCH_EXACT;
        const int tf32_other = win.workload.tf32 != w->tf32;   /* compiled for this problem's (rt_config_fit) */
        out->tuned_varlen = win.workload.varlen != 0;
        out->tier = s == 0 ? (exact ? RT_TIER_DB_EXACT : RT_TIER_DB_NEAREST)
                           : (exact ? RT_TIER_SHIPPED_EXACT : RT_TIER_SHIPPED_NEAREST);
        describe(&win, s, out->why, sizeof out->why);
        if (tf32_other)
            snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why), "; %s (ALLOW_TF32=%d)",
                     w->tf32 ? "products rounded to TF32" : "float32's accuracy", w->tf32);
        snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why), "%s", skipped);
        return 1;
    }
    return 0;
}

/* The choice before the softcap: the tiers of rt_choose. */
static int choose(db *user, db *shipped, const rt_device *dev, const db_workload *w, int flags, rt_choice *out,
                  int *is_db_error, char *err, size_t len)
{
    const int want_fixed_order = (flags & RT_CHOOSE_DETERMINISTIC) && w->op == DB_OP_BWD;
    const int any_rows = (flags & RT_CHOOSE_ANY_ROWS) != 0;
    char skipped[400] = "";
    *is_db_error = 0;
    db *const sources[2] = { user, shipped };
    const int dh = ln_padded_head_dim(w->head_dim), dhv = ln_padded_head_dim(w->head_dim_v);
    int got = from_sources(sources, dev, w, dh, dhv, 0, any_rows, out, skipped, sizeof skipped, is_db_error, err, len);
    /* No winner of the problem's head dims, where its built-in choice pads them further (head dims
     * up to 32 on Hopper: the warpgroup families' 64): the winners of those dims, padded to them
     * as the built-in choice would be (the fast one's: a deterministic request then makes the
     * winner repeatable, as any other). */
    gen_config fast;
    char why[512];
    const int fast_ok = got == 0 && rt_default_config(dev, w, flags & ~RT_CHOOSE_DETERMINISTIC, &fast, why,
                                                      sizeof why) == 0;
    if (fast_ok && (fast.p[GEN_HEAD_DIM] != dh || fast.p[GEN_HEAD_DIM_V] != dhv))
        got = from_sources(sources, dev, w, fast.p[GEN_HEAD_DIM], fast.p[GEN_HEAD_DIM_V], 1, any_rows, out, skipped,
                           sizeof skipped, is_db_error, err, len);
    if (got < 0)
        return -1;
    if (got > 0)
        return want_fixed_order ? make_deterministic(dev, w, flags, out, err, len) : 0;
    if (fast_ok && !(flags & RT_CHOOSE_DETERMINISTIC))
        out->config = fast;   /* the built-in choice, already made */
    else if (rt_default_config(dev, w, flags, &out->config, why, sizeof why) != 0) {
        snprintf(err, len, "%s", why);
        return -1;
    }
    out->tier = RT_TIER_DEFAULT;
    out->tuned_varlen = 0;
    snprintf(out->why, sizeof out->why, "built-in default for %s %s head_dim=%d head_dim_v=%d%s", dev->arch,
             gen_dtype_name(w->dtype), w->head_dim, w->head_dim_v, skipped);
    return want_fixed_order ? make_deterministic(dev, w, flags, out, err, len) : 0;
}

/* The choice for w, its head dims looked up padded to the compiled ones (ln_padded_head_dim; a
 * built-in default may pad further, to its family's min_head_dim), then compiled for the dims
 * of the data (DATA_DIM, DATA_DIM_V), w's softcap (SOFTCAP) and a variable-length batch (VARLEN),
 * whatever kind of workload the winner was tuned for. */
int rt_choose(db *user, db *shipped, const rt_device *dev, const db_workload *w, int flags, rt_choice *out,
              int *is_db_error, char *err, size_t len)
{
    if (choose(user, shipped, dev, w, flags, out, is_db_error, err, len) != 0)
        return -1;
    gen_config *c = &out->config;
    const int d = c->p[GEN_HEAD_DIM], dv = c->p[GEN_HEAD_DIM_V];   /* padded, or a family's smallest */
    if (d != w->head_dim || dv != w->head_dim_v) {
        if (!(c->family->params & GEN_BIT(GEN_DATA_DIM))) {   /* every family the runtime picks takes it */
            snprintf(err, len, "family %s cannot pad head_dim=%d head_dim_v=%d to %d, %d", c->family->name,
                     w->head_dim, w->head_dim_v, d, dv);
            return -1;
        }
        c->p[GEN_DATA_DIM] = d != w->head_dim ? w->head_dim : 0;
        c->p[GEN_DATA_DIM_V] = dv != w->head_dim_v ? w->head_dim_v : 0;
        snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why),
                 "; head dims %d, %d padded to %d, %d (DATA_DIM=%d DATA_DIM_V=%d)", w->head_dim, w->head_dim_v, d,
                 dv, c->p[GEN_DATA_DIM], c->p[GEN_DATA_DIM_V]);
    }
    /* A winner of another kind (tuned with or without the softcap) is compiled for this one's. */
    if ((c->family->params & GEN_BIT(GEN_SOFTCAP)) && c->p[GEN_SOFTCAP] != w->softcap) {
        c->p[GEN_SOFTCAP] = w->softcap;
        snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why), "; %s the softcap (SOFTCAP=%d)",
                 w->softcap ? "with" : "without", w->softcap);
    }
    /* Sinks are compiled in (SINKS), as the softcap is: a winner is compiled for this problem's. */
    if ((c->family->params & GEN_BIT(GEN_SINKS)) && c->p[GEN_SINKS] != w->sinks) {
        c->p[GEN_SINKS] = w->sinks;
        snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why), "; %s sinks (SINKS=%d)",
                 w->sinks ? "with" : "without", w->sinks);
    }
    /* A variable-length batch runs a winner tuned on one as it was measured. The dense choice of
     * its longest lengths runs compiled for it: persistent as it is where the family walks a
     * packed batch's own tiles (gen_family.packed_walk), else one block a tile: a walk dealing
     * tiles over the longest length in a fixed order leaves blocks idle on sequences of uneven
     * lengths that the hardware's block scheduler keeps busy (it ran far slower on a batch of 23
     * uneven sequences: notes/kernels.md, variable-length batches). */
    if (w->varlen) {
        if (!(c->family->params & GEN_BIT(GEN_VARLEN))) {
            snprintf(err, len, "family %s takes no variable-length batch", c->family->name);
            return -1;
        }
        c->p[GEN_VARLEN] = 1;   /* a varlen winner's kernel has it already (db import checks) */
        gen_config_fit_lengths(c, w->seqlen_q, w->seqlen_k);   /* no length is a tile multiple */
        if (!out->tuned_varlen) {
            const int walks = c->family->packed_walk && c->family->packed_walk(c->p);
            const int one_a_tile = !walks && (c->family->params & GEN_BIT(GEN_PERSISTENT));
            if (one_a_tile)
                c->p[GEN_PERSISTENT] = 0;
            snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why),
                     "; for a variable-length batch (VARLEN=1%s)", one_a_tile ? ", PERSISTENT=0" : "");
        }
        /* A cluster's two blocks share K/V loads only when they walk the same key tiles, which
         * two adjacent tiles of a packed batch need not (they may lie in two sequences). */
        if ((c->family->params & GEN_BIT(GEN_MULTICAST)) && c->p[GEN_MULTICAST]) {
            c->p[GEN_MULTICAST] = 0;
            snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why), "; without clusters (MULTICAST=0)");
        }
    } else if (c->p[GEN_VARLEN]) {   /* a dense problem handed a variable-length batch's winner */
        c->p[GEN_VARLEN] = 0;
        gen_config_fit_lengths(c, w->seqlen_q, w->seqlen_k);
        snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why), "; for a dense batch (VARLEN=0)");
    }
    /* A cluster pairs adjacent query tiles: with one query tile its pair is a block with none,
     * loading every K/V tile for nothing while the tile waits on it. */
    if ((c->family->params & GEN_BIT(GEN_MULTICAST)) && c->p[GEN_MULTICAST] && w->seqlen_q <= c->p[GEN_BLOCK_M]) {
        c->p[GEN_MULTICAST] = 0;
        snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why),
                 "; one query tile, no pair to share loads with (MULTICAST=0)");
    }
    /* A backward of few K/V heads shares each group's query heads over blocks
     * (db_workload_group_splits: MQA at batch 2, 4096 keys has 64 key tiles of 128 for 132 SMs),
     * deterministic or not; the split is the problem's alone, whatever the winner was tuned with,
     * as the caller's workspace size is (the tuner compiles a grouped backward's candidates with
     * it too). */
    if (w->op == DB_OP_BWD && (c->family->params & GEN_BIT(GEN_SPLITS))) {
        const int splits = db_workload_group_splits(w);
        if (splits != c->p[GEN_SPLITS]) {
            c->p[GEN_SPLITS] = splits;
            snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why),
                     "; each group's query heads over %d blocks a key tile (SPLITS=%d)", splits, splits);
        }
    }
    /* Persistent blocks number their units in an int: at most the tiles of the longest length
     * (query tiles; key tiles in the backward) times the batch times the query heads (a bound on
     * the K/V heads and their shares). Only a packed batch of very many sequences beside a long
     * one gets past it (a dense batch's K and V would not fit a GPU): it runs one block a tile. */
    if ((c->family->params & GEN_BIT(GEN_PERSISTENT)) && c->p[GEN_PERSISTENT]) {
        const int bwd = w->op == DB_OP_BWD;
        const long long rows = bwd ? w->seqlen_k : w->seqlen_q, tile = bwd ? c->p[GEN_BLOCK_N] : c->p[GEN_BLOCK_M];
        const long long units = (rows + tile - 1) / tile * w->batch * w->heads;
        if (units > INT_MAX) {
            c->p[GEN_PERSISTENT] = 0;
            snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why),
                     "; %lld units, past an int: one block a tile (PERSISTENT=0)", units);
        }
    }
    return 0;
}
