/* The one body of the reference attention; ref_attention.c includes it once per precision. */
/* The includer defines REAL (storage and arithmetic type), SFX(name) (appends _d or _f), RNAME
 * ("d" or "f", for messages), EXP, LOG and TANH (the math functions of REAL). No include guard, on
 * purpose. */

/* a * b as the tensor cores make it from `splits` TF32 parts (ref_problem.tf32_splits): 0 plain,
 * 1 both rounded to TF32, 3 high x high + high x low + low x high (each part product exact in
 * float, summed smallest first); or (negative: -ref_problem.bf16_products) from three bfloat16
 * parts of each, the 3 or 6 largest part products (bf16_product). Only the float reference is
 * given splits. */
static REAL SFX(product)(REAL a, REAL b, int splits)
{
    if (!splits)
        return a * b;
    if (splits < 0)
        return (REAL)bf16_product((float)a, (float)b, -splits);
    const float ah = tf32_round((float)a), bh = tf32_round((float)b);
    if (splits == 1)
        return (REAL)(ah * bh);
    const float al = tf32_round((float)a - ah), bl = tf32_round((float)b - bh);
    return (REAL)(ah * bl + al * bh + ah * bh);
}

/* Products on the tensor cores: sum of a[t] * b[t], and y += a * x, with t->splits. */
static REAL SFX(dot)(const REAL *a, const REAL *b, int n, int splits)
{
    REAL s = 0;
    if (!splits) {
        for (int t = 0; t < n; t++)
            s += a[t] * b[t];
        return s;
    }
    for (int t = 0; t < n; t++)
        s += SFX(product)(a[t], b[t], splits);
    return s;
}

static void SFX(axpy)(REAL *y, REAL a, const REAL *x, int n, int splits)
{
    if (!splits) {
        for (int t = 0; t < n; t++)
            y[t] += a * x[t];
        return;
    }
    for (int t = 0; t < n; t++)
        y[t] += SFX(product)(a, x[t], splits);
}

static void SFX(zero)(REAL *y, int n)
{
    for (int t = 0; t < n; t++)
        y[t] = 0;
}

/* One (batch, head) slice: row r of q is q + r*qs, and so on; lse rows are contiguous. */
typedef struct SFX(head) {
    const REAL *q, *k, *v, *o, *lse, *dout;
    REAL *o_out, *lse_out, *dq, *dk, *dv;
    long long qs, ks, vs, os;
    int nq, nk, d, dv_dim;
    int masked, lo, hi;   /* masked: key j visible to query i iff i + lo <= j <= i + hi */
    REAL scale;
    REAL cap;             /* softcap: 0 none */
    int has_sink;         /* 1: sink is this head's sink logit (ref_problem.sinks) */
    REAL sink;
    REAL *dsink;          /* ref_sinks_grad's output: this head's sum */
    int splits;           /* how the products are made: ref_problem.tf32_splits, or -bf16_products */
} SFX(head);

/* base moved to slice (b, h), whose K and V are those of head hk; NULL pointers (unused by the
 * caller) stay NULL. In a variable-length batch the slice is sequence b's rows of head h, with
 * its own lengths and band. */
static SFX(head) SFX(head_seek)(const SFX(head) *base, const ref_problem *p, int b, int h, int hk)
{
    SFX(head) t = *base;
    long long qo = slice_offset(p->q_stride, b, h), ko = slice_offset(p->k_stride, b, hk);
    long long vo = slice_offset(p->v_stride, b, hk), oo = slice_offset(p->o_stride, b, h);
    long long lo = ((long long)b * p->heads + h) * p->seqlen_q;
    if (ref_problem_varlen(p)) {
        const int q0 = p->cu_seqlens_q[b], k0 = p->cu_seqlens_k[b];
        qo = q0 * p->q_stride[2] + h * p->q_stride[1];
        ko = k0 * p->k_stride[2] + hk * p->k_stride[1];
        vo = k0 * p->v_stride[2] + hk * p->v_stride[1];
        oo = q0 * p->o_stride[2] + h * p->o_stride[1];
        lo = (long long)h * ref_problem_total_q(p) + q0;
        t.nq = p->cu_seqlens_q[b + 1] - q0;
        t.nk = p->cu_seqlens_k[b + 1] - k0;
        const int left = p->window ? p->window_left : -1, right = p->window ? p->window_right : -1;
        ft_mask_band(p->causal, p->causal_align, left, right, t.nq, t.nk, &t.lo, &t.hi);
    }
    if (t.q) t.q += qo;
    if (t.dq) t.dq += qo;
    if (t.k) t.k += ko;
    if (t.dk) t.dk += ko;
    if (t.v) t.v += vo;
    if (t.dv) t.dv += vo;
    if (t.o) t.o += oo;
    if (t.o_out) t.o_out += oo;
    if (t.dout) t.dout += oo;
    if (t.lse) t.lse += lo;
    if (t.lse_out) t.lse_out += lo;
    if (t.dsink) {   /* the head's sum, from its first batch on (the call's checks passed) */
        t.dsink += h;
        if (b == 0)
            *t.dsink = 0;
    }
    t.has_sink = p->sinks != NULL;
    t.sink = p->sinks ? (REAL)p->sinks[h] : 0;
    return t;
}

/* The score of query row q_i and key j: scaled, then capped when there is a softcap. */
static REAL SFX(score)(const SFX(head) *t, const REAL *q_i, int j)
{
    REAL s = t->scale * SFX(dot)(q_i, t->k + j * t->ks, t->d, t->splits);
    return t->cap != 0 ? t->cap * TANH(s / t->cap) : s;
}

/* d(capped score) / d(scaled score) at capped score s: 1 - tanh^2; 1 without a softcap. */
static REAL SFX(cap_slope)(const SFX(head) *t, REAL s)
{
    return t->cap != 0 ? 1 - (s / t->cap) * (s / t->cap) : 1;
}

/* ---- naive ---- */

/* 1 when the scores of query i and key j are hidden. */
static int SFX(hidden)(const SFX(head) *t, int i, int j)
{
    return t->masked && !ft_mask_visible(t->lo, t->hi, i, j);
}

/* P (OUT, [nq, nk] row-major) = softmax of the masked scaled scores, the sink's share (if any) in
 * the denominator; lse (OUT) when non-NULL. A row that sees no key gets P = 0 and lse = +inf, or
 * the sink logit. */
static void SFX(naive_probs)(const SFX(head) *t, REAL *P, REAL *lse)
{
    for (int i = 0; i < t->nq; i++) {
        REAL *row = P + (long long)i * t->nk;
        const REAL *q_i = t->q + i * t->qs;
        for (int j = 0; j < t->nk; j++)
            row[j] = SFX(hidden)(t, i, j) ? (REAL)-INFINITY : SFX(score)(t, q_i, j);
        REAL m = t->has_sink ? t->sink : (REAL)-INFINITY;   /* an empty sequence's keys: none */
        for (int j = 0; j < t->nk; j++)
            m = row[j] > m ? row[j] : m;
        if (m == (REAL)-INFINITY) {   /* sees no key, and no sink */
            SFX(zero)(row, t->nk);
            if (lse)
                lse[i] = (REAL)INFINITY;
            continue;
        }
        REAL sum = t->has_sink ? EXP(t->sink - m) : 0;
        for (int j = 0; j < t->nk; j++) {
            row[j] = EXP(row[j] - m);
            sum += row[j];
        }
        for (int j = 0; j < t->nk; j++)
            row[j] /= sum;
        if (lse)
            lse[i] = m + LOG(sum);
    }
}

static void SFX(forward_naive_head)(const SFX(head) *t, REAL *P, int bm, int bn, ref_stats *st)
{
    (void)bm, (void)bn, (void)st;
    SFX(naive_probs)(t, P, t->lse_out);
    for (int i = 0; i < t->nq; i++) {
        REAL *out = t->o_out + i * t->os;
        SFX(zero)(out, t->dv_dim);
        for (int j = 0; j < t->nk; j++)
            SFX(axpy)(out, P[(long long)i * t->nk + j], t->v + j * t->vs, t->dv_dim, t->splits);
    }
}

/* dV = P^T dO; dP = dO V^T; D = rowsum(P * dP); dS = P * (dP - D) (times the softcap's slope);
 * dQ = s dS K; dK = s dS^T Q. dK and dV are added to (the driver zeroes them once for all the
 * query heads that share a K/V head). */
static void SFX(backward_naive_head)(const SFX(head) *t, REAL *P, int bm, int bn, ref_stats *st)
{
    (void)bm, (void)bn, (void)st;
    REAL *G = P + (long long)t->nq * t->nk;
    SFX(naive_probs)(t, P, NULL);
    for (int i = 0; i < t->nq; i++) {
        const REAL *p_row = P + (long long)i * t->nk;
        REAL *g_row = G + (long long)i * t->nk;
        const REAL *dout_i = t->dout + i * t->os;
        REAL delta = 0;
        for (int j = 0; j < t->nk; j++) {
            SFX(axpy)(t->dv + j * t->vs, p_row[j], dout_i, t->dv_dim, t->splits);
            g_row[j] = SFX(dot)(dout_i, t->v + j * t->vs, t->dv_dim, t->splits);
            delta += p_row[j] * g_row[j];
        }
        REAL *dq_i = t->dq + i * t->qs;
        SFX(zero)(dq_i, t->d);
        for (int j = 0; j < t->nk; j++) {
            REAL ds = p_row[j] * (g_row[j] - delta);
            if (t->cap != 0 && p_row[j] != 0)
                ds *= SFX(cap_slope)(t, SFX(score)(t, t->q + i * t->qs, j));
            SFX(axpy)(dq_i, t->scale * ds, t->k + j * t->ks, t->d, t->splits);
            SFX(axpy)(t->dk + j * t->ks, t->scale * ds, t->q + i * t->qs, t->d, t->splits);
        }
    }
}

/* ---- tiled (FlashAttention) ---- */

/* One query tile [m0, m1) over its key tiles. Per row: running max m, running sum l of
 * exp(s - m), and acc = sum of exp(s - m) v; a new max rescales l and acc by exp(m_old - m_new).
 * Masked: only the key tiles holding a key of the tile's band are visited (the kernels' block
 * skipping), and only tiles not wholly inside the band are masked element by element. */
static void SFX(forward_query_tile)(const SFX(head) *t, int m0, int m1, int bn, REAL *m, REAL *l,
                                    REAL *acc, REAL *srow, ref_stats *st)
{
    for (int r = 0; r < m1 - m0; r++) {   /* a sink: a first score, exp(0) = 1, with no value */
        m[r] = t->has_sink ? t->sink : (REAL)-INFINITY;
        l[r] = t->has_sink ? 1 : 0;
        SFX(zero)(acc + (long long)r * t->dv_dim, t->dv_dim);
    }
    int key_begin = 0, key_end = t->nk;
    if (t->masked) {
        ft_mask_key_range(t->lo, t->hi, m0, m1, t->nk, &key_begin, &key_end);
        if (key_begin >= key_end)
            key_begin = key_end = 0;   /* no row of the tile sees a key: visit nothing */
    }
    for (int n0 = key_begin / bn * bn; n0 < key_end; n0 += bn) {   /* tiles stay bn-aligned */
        int n1 = min_int(n0 + bn, t->nk);
        int crosses = t->masked && !ft_mask_tile_full(t->lo, t->hi, m0, m1, n0, n1);
        st->tiles_visited++;
        st->tiles_masked += crosses;
        for (int i = m0; i < m1; i++) {
            int r = i - m0;
            const REAL *q_i = t->q + i * t->qs;
            REAL tile_max = (REAL)-INFINITY;
            for (int j = n0; j < n1; j++) {
                REAL s = (crosses && SFX(hidden)(t, i, j)) ? (REAL)-INFINITY : SFX(score)(t, q_i, j);
                srow[j - n0] = s;
                tile_max = s > tile_max ? s : tile_max;
            }
            REAL m_new = tile_max > m[r] ? tile_max : m[r];
            if (m_new == (REAL)-INFINITY)
                continue;   /* the row has seen no key yet */
            REAL alpha = EXP(m[r] - m_new);   /* 0 on the first tile: m[r] is -inf */
            REAL *acc_r = acc + (long long)r * t->dv_dim;
            for (int c = 0; c < t->dv_dim; c++)
                acc_r[c] *= alpha;
            REAL sum = 0;
            for (int j = n0; j < n1; j++) {
                REAL pj = EXP(srow[j - n0] - m_new);
                sum += pj;
                SFX(axpy)(acc_r, pj, t->v + j * t->vs, t->dv_dim, t->splits);
            }
            l[r] = alpha * l[r] + sum;
            m[r] = m_new;
        }
    }
    for (int i = m0; i < m1; i++) {
        int r = i - m0;
        REAL *out = t->o_out + i * t->os;
        const REAL *acc_r = acc + (long long)r * t->dv_dim;
        if (l[r] == 0) {   /* saw no key and has no sink: O = 0, L = +inf */
            SFX(zero)(out, t->dv_dim);
            t->lse_out[i] = (REAL)INFINITY;
            continue;
        }
        for (int c = 0; c < t->dv_dim; c++)
            out[c] = acc_r[c] / l[r];
        t->lse_out[i] = m[r] + LOG(l[r]);
    }
}

static void SFX(forward_tiled_head)(const SFX(head) *t, REAL *scratch, int bm, int bn,
                                    ref_stats *st)
{
    REAL *m = scratch, *l = m + bm, *acc = l + bm, *srow = acc + (long long)bm * t->dv_dim;
    for (int m0 = 0; m0 < t->nq; m0 += bm)
        SFX(forward_query_tile)(t, m0, min_int(m0 + bm, t->nq), bn, m, l, acc, srow, st);
}

/* One key tile [n0, n1) over its query tiles: dK and dV accumulate in dk_acc and dv_acc, then
 * are added to dk and dv (zeroed by the driver once per K/V head), dQ in place in dq. P = exp(s - L) from the forward's L; D = rowsum(dO * O) from its O, recomputed
 * per visit so scratch stays O(tile). Masked: only the query tiles that see a key of the tile
 * are visited (ft_mask_query_range); rows that see no key have L = +inf, so P = 0. */
static void SFX(backward_key_tile)(const SFX(head) *t, int n0, int n1, int bm, REAL *dk_acc,
                                   REAL *dv_acc, ref_stats *st)
{
    int nt = n1 - n0;
    SFX(zero)(dk_acc, nt * t->d);
    SFX(zero)(dv_acc, nt * t->dv_dim);
    int query_begin = 0, query_end = t->nq;
    if (t->masked) {
        ft_mask_query_range(t->lo, t->hi, n0, n1, t->nq, &query_begin, &query_end);
        if (query_begin >= query_end)
            query_begin = query_end = 0;   /* no row sees a key of the tile: dK = dV = 0 */
    }
    for (int m0 = query_begin / bm * bm; m0 < query_end; m0 += bm) {   /* tiles stay bm-aligned */
        int m1 = min_int(m0 + bm, t->nq);
        int crosses = t->masked && !ft_mask_tile_full(t->lo, t->hi, m0, m1, n0, n1);
        st->tiles_visited++;
        st->tiles_masked += crosses;
        for (int i = m0; i < m1; i++) {
            const REAL *q_i = t->q + i * t->qs, *dout_i = t->dout + i * t->os;
            REAL *dq_i = t->dq + i * t->qs;
            REAL delta = SFX(dot)(dout_i, t->o + i * t->os, t->dv_dim, 0);   /* CUDA cores */
            REAL lse_i = t->lse[i];
            for (int j = n0; j < n1; j++) {
                if (crosses && SFX(hidden)(t, i, j))
                    continue;   /* P = 0, so dS = 0: no contribution */
                const REAL *k_j = t->k + j * t->ks;
                REAL s = SFX(score)(t, q_i, j);
                REAL pij = EXP(s - lse_i);
                SFX(axpy)(dv_acc + (long long)(j - n0) * t->dv_dim, pij, dout_i, t->dv_dim, t->splits);
                REAL dp = SFX(dot)(dout_i, t->v + j * t->vs, t->dv_dim, t->splits);
                REAL ds = t->scale * pij * (dp - delta) * SFX(cap_slope)(t, s);
                SFX(axpy)(dq_i, ds, k_j, t->d, t->splits);
                SFX(axpy)(dk_acc + (long long)(j - n0) * t->d, ds, q_i, t->d, t->splits);
            }
        }
    }
    for (int j = n0; j < n1; j++) {
        SFX(axpy)(t->dk + j * t->ks, 1, dk_acc + (long long)(j - n0) * t->d, t->d, 0);
        SFX(axpy)(t->dv + j * t->vs, 1, dv_acc + (long long)(j - n0) * t->dv_dim, t->dv_dim, 0);
    }
}

static void SFX(backward_tiled_head)(const SFX(head) *t, REAL *scratch, int bm, int bn,
                                     ref_stats *st)
{
    for (int i = 0; i < t->nq; i++)   /* dq is accumulated key tile by key tile */
        SFX(zero)(t->dq + i * t->qs, t->d);
    for (int n0 = 0; n0 < t->nk; n0 += bn)
        SFX(backward_key_tile)(t, n0, min_int(n0 + bn, t->nk), bm, scratch,
                               scratch + (long long)bn * t->d, st);
}

/* The sink's gradient, added to *t->dsink: -exp(sink - L) D for each row, D = rowsum(dO * O). */
static void SFX(sinks_grad_head)(const SFX(head) *t, REAL *scratch, int bm, int bn, ref_stats *st)
{
    (void)scratch, (void)bm, (void)bn, (void)st;
    for (int i = 0; i < t->nq; i++) {
        const REAL delta = SFX(dot)(t->dout + i * t->os, t->o + i * t->os, t->dv_dim, 0);
        *t->dsink -= EXP(t->sink - t->lse[i]) * delta;
    }
}

/* ---- the driver every entry point shares ---- */

typedef void (*SFX(head_fn))(const SFX(head) *t, REAL *scratch, int bm, int bn, ref_stats *st);

/* Checks the call, allocates the op's scratch once, runs work on every (batch, head) slice of
 * base (whose pointers the caller set), frees, and reports the tile counts. */
static int SFX(run)(const char *fn, int op, const ref_problem *p, int block_m, int block_n,
                    const ref_arg *args, int nargs, SFX(head) base, SFX(head_fn) work,
                    ref_stats *stats, char *err, size_t err_len)
{
    int tiled = op == OP_FWD_TILED || op == OP_BWD_TILED;
    int rc = check_call(fn, p, tiled, block_m, block_n, args, nargs, sizeof(REAL), err, err_len);
    if (rc)
        return rc;
    /* A tile larger than the sequence is the whole sequence; this keeps scratch O(tile). */
    int bm = tiled ? min_int(block_m, p->seqlen_q) : 0;
    int bn = tiled ? min_int(block_n, p->seqlen_k) : 0;
    long long elems = scratch_elems(op, p, bm, bn);
    REAL *scratch = alloc_array(elems, sizeof(REAL));
    if (!scratch)
        return fail_nomem(fn, err, err_len, elems, sizeof(REAL));
    base.qs = p->q_stride[2];
    base.ks = p->k_stride[2];
    base.vs = p->v_stride[2];
    base.os = p->o_stride[2];
    base.nq = p->seqlen_q;
    base.nk = p->seqlen_k;
    base.d = p->head_dim;
    base.dv_dim = p->head_dim_v;
    base.masked = problem_band(p, &base.lo, &base.hi);
    base.scale = (REAL)ref_problem_scale(p);
    base.cap = (REAL)p->softcap;
    base.splits = p->bf16_products ? -p->bf16_products : p->tf32_splits;
    const int heads_k = ref_problem_heads_k(p), group = p->heads / heads_k;
    ref_stats st = {0, 0};
    for (int b = 0; b < p->batch; b++)
        for (int hk = 0; hk < heads_k; hk++) {
            /* The backward adds each query head's dK and dV into its K/V head's. */
            SFX(head) kv = SFX(head_seek)(&base, p, b, hk * group, hk);
            for (int j = 0; kv.dk && j < kv.nk; j++) {
                SFX(zero)(kv.dk + j * kv.ks, kv.d);
                SFX(zero)(kv.dv + j * kv.vs, kv.dv_dim);
            }
            for (int h = hk * group; h < (hk + 1) * group; h++) {
                SFX(head) t = SFX(head_seek)(&base, p, b, h, hk);
                work(&t, scratch, bm, bn, &st);
            }
        }
    ref_free(scratch);
    if (stats)
        *stats = st;
    return REF_OK;
}

/* ---- entry points ---- */

int SFX(ref_forward_naive)(const ref_problem *p, const REAL *q, const REAL *k, const REAL *v,
                           REAL *o, REAL *lse, char *err, size_t err_len)
{
    const ref_arg args[] = {
        {"q", q, SHAPE_Q, 0}, {"k", k, SHAPE_K, 0}, {"v", v, SHAPE_V, 0},
        {"o", o, SHAPE_O, 1}, {"lse", lse, SHAPE_LSE, 1},
    };
    const SFX(head) base = {.q = q, .k = k, .v = v, .o_out = o, .lse_out = lse};
    return SFX(run)("ref_forward_naive_" RNAME, OP_FWD_NAIVE, p, 0, 0, args, 5, base,
                    SFX(forward_naive_head), NULL, err, err_len);
}

int SFX(ref_backward_naive)(const ref_problem *p, const REAL *q, const REAL *k, const REAL *v,
                            const REAL *dout, REAL *dq, REAL *dk, REAL *dv,
                            char *err, size_t err_len)
{
    const ref_arg args[] = {
        {"q", q, SHAPE_Q, 0},       {"k", k, SHAPE_K, 0},   {"v", v, SHAPE_V, 0},
        {"dout", dout, SHAPE_O, 0}, {"dq", dq, SHAPE_Q, 1}, {"dk", dk, SHAPE_K, 1},
        {"dv", dv, SHAPE_V, 1},
    };
    const SFX(head) base = {.q = q, .k = k, .v = v, .dout = dout, .dq = dq, .dk = dk, .dv = dv};
    return SFX(run)("ref_backward_naive_" RNAME, OP_BWD_NAIVE, p, 0, 0, args, 7, base,
                    SFX(backward_naive_head), NULL, err, err_len);
}

int SFX(ref_forward_tiled)(const ref_problem *p, int block_m, int block_n, const REAL *q,
                           const REAL *k, const REAL *v, REAL *o, REAL *lse, ref_stats *stats,
                           char *err, size_t err_len)
{
    const ref_arg args[] = {
        {"q", q, SHAPE_Q, 0}, {"k", k, SHAPE_K, 0}, {"v", v, SHAPE_V, 0},
        {"o", o, SHAPE_O, 1}, {"lse", lse, SHAPE_LSE, 1},
    };
    const SFX(head) base = {.q = q, .k = k, .v = v, .o_out = o, .lse_out = lse};
    return SFX(run)("ref_forward_tiled_" RNAME, OP_FWD_TILED, p, block_m, block_n, args, 5, base,
                    SFX(forward_tiled_head), stats, err, err_len);
}

int SFX(ref_backward_tiled)(const ref_problem *p, int block_m, int block_n, const REAL *q,
                            const REAL *k, const REAL *v, const REAL *o, const REAL *lse,
                            const REAL *dout, REAL *dq, REAL *dk, REAL *dv, ref_stats *stats,
                            char *err, size_t err_len)
{
    const ref_arg args[] = {
        {"q", q, SHAPE_Q, 0},   {"k", k, SHAPE_K, 0},       {"v", v, SHAPE_V, 0},
        {"o", o, SHAPE_O, 0},   {"lse", lse, SHAPE_LSE, 0}, {"dout", dout, SHAPE_O, 0},
        {"dq", dq, SHAPE_Q, 1}, {"dk", dk, SHAPE_K, 1},     {"dv", dv, SHAPE_V, 1},
    };
    const SFX(head) base = {.q = q, .k = k, .v = v, .o = o, .lse = lse, .dout = dout,
                            .dq = dq, .dk = dk, .dv = dv};
    return SFX(run)("ref_backward_tiled_" RNAME, OP_BWD_TILED, p, block_m, block_n, args, 9, base,
                    SFX(backward_tiled_head), stats, err, err_len);
}

int SFX(ref_sinks_grad)(const ref_problem *p, const REAL *o, const REAL *lse, const REAL *dout, REAL *dsinks,
                        char *err, size_t err_len)
{
    const char *fn = "ref_sinks_grad_" RNAME;
    if (p && !p->sinks)
        return fail(REF_ERR_INVALID, err, err_len, fn, "sinks is NULL: the problem has no sink logits");
    const ref_arg args[] = {
        {"o", o, SHAPE_O, 0}, {"lse", lse, SHAPE_LSE, 0}, {"dout", dout, SHAPE_O, 0},
        {"dsinks", dsinks, SHAPE_HEADS, 1},
    };
    const SFX(head) base = {.o = o, .lse = lse, .dout = dout, .dsink = dsinks};
    return SFX(run)(fn, OP_SINKS_GRAD, p, 0, 0, args, 4, base, SFX(sinks_grad_head), NULL, err, err_len);
}
