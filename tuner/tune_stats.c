/* The figures of a measurement: timing statistics, the error limits and the comparison with
 * the reference (pure functions, tested on the CPU). */
#include "tune_worker.h"

#include <math.h>
#include <stdlib.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double quantile(const float *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - lo;
    return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

int tune_stats(float *ms, int n, double *median, double *min, double *spread)
{
    if (n < 1)
        return -1;
    qsort(ms, (size_t)n, sizeof *ms, cmp_float);
    *median = quantile(ms, n, 0.5);
    *min = ms[0];
    *spread = *median > 0 ? (quantile(ms, n, 0.9) - quantile(ms, n, 0.1)) / *median : NAN;
    return 0;
}

double tune_warmup_ms(tune_load *l, double warmup_ms, double now)
{
    const double most = TUNE_PREHEAT_MS / 1e3;
    double load = 0;
    if (l->idle_since > 0) {
        load = l->idle_since - l->busy_since;
        load = (load < most ? load : most) - (now - l->idle_since);
        load = load > 0 ? load : 0;
    }
    l->busy_since = now - load;
    const double preheat = TUNE_PREHEAT_MS - load * 1e3;
    return preheat > warmup_ms ? preheat : warmup_ms;
}

double tune_threshold(int dtype, int tf32)
{
    switch (dtype) {
    case 0: return tf32 ? 2e-3 : 1e-5;   /* TF32: a 10-bit mantissa, about 3e-4 a product (notes/fp32.md) */
    case 1: return 3e-3;
    case 2: return 1e-2;
    default: return 1e-12;
    }
}

long tune_compare_finish(const double stats[4], double *rel, double *max_abs)
{
    const long bad = (long)stats[3];
    *max_abs = bad ? INFINITY : stats[2];
    *rel = bad ? INFINITY : sqrt(stats[0]) / (stats[1] > 0 ? sqrt(stats[1]) : 1);
    return bad;
}

long tune_compare(const double *got, const double *want, size_t n, double *rel, double *max_abs)
{
    double stats[4] = { 0, 0, 0, 0 };
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i])) {
            stats[3] += 1;
            continue;
        }
        double d = got[i] - want[i];
        stats[0] += d * d;
        stats[1] += want[i] * want[i];
        if (fabs(d) > stats[2])
            stats[2] = fabs(d);
    }
    return tune_compare_finish(stats, rel, max_abs);
}
