/* The strategies of a sweep: exhaustive and random time every pending candidate once (random
 * sampled them at enumeration, tune_space_enum.c); prune times all briefly, then re-times the
 * best fraction with the full benchmark. */
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

int tune_sweep_measure_unit(tune_sweep *s, tune_unit *u)
{
    const tune_space *sp = u->space;
    if (sp->strategy.kind != TUNE_PRUNE || u->pruned_before)
        return tune_sweep_run_phase(s, u, u->pending, u->pending_count, &sp->bench, 0, NULL, "");
    /* Prune: everything briefly, then the best fraction with the full bench. */
    int n = u->pending_count;
    tune_record *first = calloc((size_t)(n ? n : 1), sizeof *first);
    int *kept = malloc((size_t)(n ? n : 1) * sizeof *kept);
    if (!first || !kept) {
        free(first);
        free(kept);
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    for (int i = 0; i < n; i++)
        tune_record_init(&first[i], -1);
    int rc = tune_sweep_run_phase(s, u, u->pending, n, &sp->strategy.first, 1, first, " (first pass)");
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
        for (int i = 0; i < keep; i++)
            kept[i] = u->pending[first[i].id];
        s->total += keep - tune_sweep_keep_count(n, sp->strategy.keep);
        if (rc == TUNE_PHASE_OK)
            rc = tune_sweep_run_phase(s, u, kept, keep, &sp->bench, 0, NULL, "");
    }
    free(first);
    free(kept);
    return rc;
}
