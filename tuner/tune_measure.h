/* The measurement in the worker process (tune_measure.c): the problem on the device, random
 * inputs, the reference's outputs, and per candidate validation then timing, all launched
 * through the launch module. Used by tune_worker.c's child only; never by the parent. */
#ifndef FT_TUNE_MEASURE_H
#define FT_TUNE_MEASURE_H

#include <stddef.h>

#include "tune_worker.h"

typedef struct tune_measure tune_measure;

/* Opens a session on GPU t->device, allocates t's workload with random inputs and runs the ref
 * family on it (its outputs are kept to compare candidates with). OUT: *out. Returns 0, or -1 with the
 * reason in why (nothing was measured; *out is NULL). */
int tune_measure_open(const tune_worker_task *t, tune_measure **out, char *why, size_t len);

/* Validates then times candidate it into r. Returns 0, or -1 after a CUDA error (r says which;
 * the context may be unusable, so the worker exits). */
int tune_measure_run(tune_measure *m, const tune_worker_task *t, const tune_worker_item *it, tune_record *r);

/* Where tune_measure_open's seconds went. */
const tune_setup_times *tune_measure_setup_times(const tune_measure *m);

/* Why the timings carry no clocks (NVML could not be opened for this GPU: tune_clocks.h), or
 * NULL when they do. */
const char *tune_measure_no_clocks(const tune_measure *m);

/* Releases everything in order and closes the session. NULL: nothing to do. */
void tune_measure_close(tune_measure *m);

#endif
