/* A workload as a problem: its database key, a variable-length batch's lengths (made from the key
 * alone, so that every run and every resumed sweep measures the same batch) and its FLOPs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ft_mask.h"
#include "tune_space.h"

void tune_workload_db(const db_workload *w, int op, db_workload *out)
{
    *out = *w;
    out->op = op;
}

int tune_workload_splits(const gen_family *f, const db_workload *w)
{
    if (!f->backward || !(f->params & GEN_BIT(GEN_SPLITS)) || !w->heads_k || w->heads_k >= w->heads)
        return 0;
    db_workload as_run;
    tune_workload_db(w, DB_OP_BWD, &as_run);
    return db_workload_group_splits(&as_run);
}

/* The mean of exp(-a i / (n - 1)) over i < n: the fill of lengths spread log-uniformly by a. */
static double spread_fill(double a, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += exp(-a * i / (n - 1));
    return sum / n;
}

int tune_varlen_lengths(const db_workload *w, int *len_q, int *len_k, char *why, size_t len)
{
    const int n = w->batch;
    int *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        snprintf(why, len, "out of memory for %d lengths", n);
        return -1;
    }
    /* The spread a whose fill is the bucket's, by bisection: the fill falls as a grows, and
     * a = ln(longest) takes the shortest to one token. */
    const double want = db_varlen_fill(w->varlen);
    double lo = 0, hi = log((double)w->seqlen_q);
    for (int it = 0; n > 1 && it < 60; it++) {
        const double mid = 0.5 * (lo + hi);
        if (spread_fill(mid, n) > want)
            lo = mid;
        else
            hi = mid;
    }
    for (int i = 0; i < n; i++) {
        const long r = n > 1 ? lround(w->seqlen_q * exp(-lo * i / (n - 1))) : w->seqlen_q;
        sorted[i] = r < 1 ? 1 : (int)r;
    }
    /* A fixed shuffle (Fisher-Yates over a xorshift stream): a real batch is not sorted, and the
     * order decides which sequences' tiles the blocks meet first. */
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (int i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const int j = (int)(x % (unsigned long long)(i + 1));
        const int t = sorted[i];
        sorted[i] = sorted[j], sorted[j] = t;
    }
    long long total_q = 0, total_k = 0;
    for (int i = 0; i < n; i++) {
        len_q[i] = sorted[i];
        const long k = sorted[i] == w->seqlen_q ? w->seqlen_k : lround((double)sorted[i] * w->seqlen_k / w->seqlen_q);
        len_k[i] = k < 1 ? 1 : (int)k;
        total_q += len_q[i], total_k += len_k[i];
    }
    free(sorted);
    const int got = db_varlen_bucket(n, w->seqlen_q, w->seqlen_k, total_q, total_k);
    if (got != w->varlen) {
        snprintf(why, len, "varlen bucket %d (a fill of %.3g) cannot be made from %d sequences of at most %d, %d "
                 "tokens: the nearest is bucket %d", w->varlen, want, n, w->seqlen_q, w->seqlen_k, got);
        return -1;
    }
    return 0;
}

/* The (query, key) pairs one sequence of nq queries and nk keys computes under w's mask. */
static double pairs(const db_workload *w, int nq, int nk)
{
    if (!db_workload_masked(w))
        return (double)nq * nk;
    if (!w->window && (!w->bottom_right || nq == nk))
        return (double)nq * nk / 2;   /* the FlashAttention convention for a causal mask */
    int lo, hi;
    ft_mask_band(0, w->bottom_right, w->window ? w->window_left : -1, w->causal ? 0 : w->window_right, nq, nk,
                 &lo, &hi);
    double sum = 0;
    for (int i = 0; i < nq; i++) {
        const int a = i + lo > 0 ? i + lo : 0, b = i + hi < nk - 1 ? i + hi : nk - 1;
        if (b >= a)
            sum += b - a + 1;
    }
    return sum;
}

double tune_flops(const db_workload *w, int backward)
{
    double sum = 0;
    if (w->varlen) {
        int *q = malloc(2 * (size_t)w->batch * sizeof *q);
        char why[160];
        if (!q || tune_varlen_lengths(w, q, q + w->batch, why, sizeof why) != 0) {
            free(q);
            return NAN;   /* a workload the space checked never gets here */
        }
        for (int b = 0; b < w->batch; b++)
            sum += pairs(w, q[b], q[w->batch + b]);
        free(q);
    } else {
        sum = w->batch * pairs(w, w->seqlen_q, w->seqlen_k);
    }
    const double f = 2.0 * w->heads * sum * (w->head_dim + w->head_dim_v);
    return backward ? 2.5 * f : f;
}
