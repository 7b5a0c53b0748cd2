/* The strategies of a sweep: exhaustive and random time every pending candidate once (random
 * sampled them at enumeration, tune_space_enum.c); prune times all briefly, then re-times the
 * best fraction with the full benchmark. After any of them, a space's confirm step times its
 * finalists again in rotation (tune_space.h, tune_confirm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tune_sweep_internal.h"

int tune_sweep_keep_count(int timed, double keep)
{
    if (timed <= 0)
        return 0;
    int n = (int)ceil(keep * timed - 1e-9);
    return n < 1 ? 1 : n > timed ? timed : n;
}

static int cmp_median(const void *a, const void *b)
{
    const tune_record *x = a, *y = b;
    return (x->median_ms > y->median_ms) - (x->median_ms < y->median_ms);
}

int tune_confirm_finalists(const tune_record *timed, int n, const tune_confirm *cf, int *finalists)
{
    if (cf->rounds < 1 || cf->top < 2)
        return 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (timed[i].id < 0 || timed[i].status != DB_STATUS_OK || !(timed[i].median_ms > 0))
            continue;
        /* Kept sorted: i goes before the slower ones; past top the slowest falls off. */
        int at = k;
        while (at > 0 && timed[finalists[at - 1]].median_ms > timed[i].median_ms)
            at--;
        if (at == cf->top)
            continue;
        if (k < cf->top)
            k++;
        for (int j = k - 1; j > at; j--)
            finalists[j] = finalists[j - 1];
        finalists[at] = i;
    }
    const double limit = k ? timed[finalists[0]].median_ms * (1 + cf->within) : 0;
    while (k > 0 && timed[finalists[k - 1]].median_ms > limit)
        k--;
    return k >= 2 ? k : 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tune_confirm_combine(const tune_record *const *timings, int m, tune_record *out)
{
    double med[TUNE_CONFIRM_MAX_TIMINGS];
    if (m > TUNE_CONFIRM_MAX_TIMINGS)
        m = TUNE_CONFIRM_MAX_TIMINGS;
    *out = *timings[0];
    for (int i = 0; i < m; i++) {
        med[i] = timings[i]->median_ms;
        if (timings[i]->min_ms < out->min_ms)
            out->min_ms = timings[i]->min_ms;
        if (timings[i]->rel_error > out->rel_error)
            out->rel_error = timings[i]->rel_error;
        if (timings[i]->max_abs_error > out->max_abs_error)
            out->max_abs_error = timings[i]->max_abs_error;
    }
    qsort(med, (size_t)m, sizeof med[0], cmp_double);
    out->median_ms = m % 2 ? med[m / 2] : 0.5 * (med[m / 2 - 1] + med[m / 2]);
    out->spread = (med[m - 1] - med[0]) / out->median_ms;
    out->tflops = timings[0]->tflops * timings[0]->median_ms / out->median_ms;   /* the same FLOPs */
}

/* The confirm step over the candidates cands[0..n-1] of u just timed (timed[i]: candidate
 * cands[i]'s result, already stored): the finalists in rotation, each stored again with the
 * median of its timings. One that fails a round keeps that failure (run_phase stored it). */
static int confirm_finalists(tune_sweep *s, tune_unit *u, const int *cands, const tune_record *timed, int n)
{
    const tune_confirm *cf = &u->space->confirm;
    int fin[16];
    const int k = tune_confirm_finalists(timed, n, cf, fin);
    if (k == 0)
        return TUNE_PHASE_OK;
    const int m = k * cf->rounds;
    int *list = malloc((size_t)m * sizeof *list);
    tune_record *rec = malloc((size_t)m * sizeof *rec);
    if (!list || !rec) {
        free(list);
        free(rec);
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    for (int i = 0; i < m; i++) {
        list[i] = cands[fin[i % k]];
        tune_record_init(&rec[i], -1);
    }
    s->total += m;
    int rc = tune_sweep_run_phase(s, u, list, m, &u->space->bench, 1, rec, " (confirm)");
    for (int f = 0; f < k && rc == TUNE_PHASE_OK; f++) {
        const tune_record *t[TUNE_CONFIRM_MAX_TIMINGS] = { &timed[fin[f]] };
        int got = 1;
        for (int r = 0; r < cf->rounds && got; r++) {
            const tune_record *x = &rec[r * k + f];
            got = x->id >= 0 && x->status == DB_STATUS_OK ? got + 1 : 0;
            if (got)
                t[got - 1] = x;
        }
        if (!got)
            continue;   /* a round failed (stored as such) or never ran */
        tune_record final;
        tune_confirm_combine(t, got, &final);
        snprintf(final.message, sizeof final.message, "confirmed: the median of %d timings, in rotation with %d other %s",
                 got, k - 1, k == 2 ? "finalist" : "finalists");
        if (tune_sweep_store(s, u, cands[fin[f]], &final) != 0)
            rc = TUNE_PHASE_DB_ERROR;
    }
    free(list);
    free(rec);
    return rc;
}

int tune_sweep_measure_unit(tune_sweep *s, tune_unit *u)
{
    const tune_space *sp = u->space;
    int n = u->pending_count;
    tune_record *timed = malloc((size_t)(n ? n : 1) * sizeof *timed);
    if (!timed) {
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    for (int i = 0; i < n; i++)
        tune_record_init(&timed[i], -1);
    int rc;
    if (sp->strategy.kind != TUNE_PRUNE || u->pruned_before) {
        rc = tune_sweep_run_phase(s, u, u->pending, n, &sp->bench, 0, timed, "");
        if (rc == TUNE_PHASE_OK)
            rc = confirm_finalists(s, u, u->pending, timed, n);
        free(timed);
        return rc;
    }
    /* Prune: everything briefly, then the best fraction with the full bench. */
    tune_record *first = timed;
    int *kept = malloc((size_t)(n ? n : 1) * sizeof *kept);
    tune_record *second = malloc((size_t)(n ? n : 1) * sizeof *second);
    if (!kept || !second) {
        free(first);
        free(kept);
        free(second);
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    rc = tune_sweep_run_phase(s, u, u->pending, n, &sp->strategy.first, 1, first, " (first pass)");
    if (rc == TUNE_PHASE_OK) {
        int ok = 0;
        for (int i = 0; i < n; i++)
            if (first[i].id >= 0 && first[i].status == DB_STATUS_OK)
                first[ok++] = first[i];   /* compacted; ids still index u->pending */
        qsort(first, (size_t)ok, sizeof *first, cmp_median);
        int keep = tune_sweep_keep_count(ok, sp->strategy.keep);
        for (int i = keep; i < ok && rc == TUNE_PHASE_OK; i++) {
            tune_record r = first[i];
            r.status = DB_STATUS_SKIPPED;
            snprintf(r.message, sizeof r.message, "pruned: first-pass median %.4f ms ranks %d of %d (keep %d)",
                     first[i].median_ms, i + 1, ok, keep);
            if (tune_sweep_store(s, u, u->pending[first[i].id], &r) != 0)
                rc = TUNE_PHASE_DB_ERROR;
        }
        for (int i = 0; i < keep; i++) {
            kept[i] = u->pending[first[i].id];
            tune_record_init(&second[i], -1);
        }
        s->total += keep - tune_sweep_keep_count(n, sp->strategy.keep);
        if (rc == TUNE_PHASE_OK)
            rc = tune_sweep_run_phase(s, u, kept, keep, &sp->bench, 0, second, "");
        if (rc == TUNE_PHASE_OK)
            rc = confirm_finalists(s, u, kept, second, keep);
    }
    free(first);
    free(kept);
    free(second);
    return rc;
}
