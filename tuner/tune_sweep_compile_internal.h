/* What the sweep's files share about its kernels (tune_sweep_compile.c): the distinct kernels
 * of a sweep, the compile pool and the CUBIN cache. Used only by tuner/tune_sweep*.c. */
#ifndef FT_TUNE_SWEEP_COMPILE_INTERNAL_H
#define FT_TUNE_SWEEP_COMPILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "db_internal.h"
#include "gen_internal.h"

typedef struct tune_kernel_job {
    gen_config config;
    char hash[GEN_HASH_LEN];
    char *source;
    gen_binary binary;
    char error[1024];
    int failed;                 /* compilation failed (error says why) */
    int needed;                 /* a pending candidate or reference uses it */
    int ready;                  /* binary holds a CUBIN (compiled now or from the cache) */
    int cached;
    int64_t kernel_id, binary_id;
} tune_kernel_job;

typedef struct tune_kernel_set {
    tune_kernel_job *jobs;
    int count, cap;
} tune_kernel_set;

/* The index of c's kernel in ks, added unless a kernel of the same source is listed; -1 when
 * memory ran out or a template is missing from this build. */
int tune_kernels_add(tune_kernel_set *ks, const gen_config *c);
/* Frees every job's source and binary and the list; ks is empty afterwards. */
void tune_kernels_free(tune_kernel_set *ks);

/* Compiles the count jobs of todo on up to `threads` threads, in this process, printing a
 * progress line ("N/M kernels done") every few seconds and when the last is done. Returns the
 * wall time (s). */
double tune_compile_all(tune_kernel_job **todo, int count, const char *arch, int threads);

/* For the jobs of ks that are needed and neither built nor failed yet: stores the rows of
 * reference kernels, takes the CUBINs the database's cache holds, compiles the rest for arch in a
 * child process on `threads` threads and stores the new CUBINs. Compile failures are left in the
 * jobs. verbose: print what is compiled and how long it took. Returns 0, or -1 on a database
 * error or when memory ran out (err). */
int tune_kernels_build(tune_kernel_set *ks, db *d, const char *arch, int threads, int verbose, char *err,
                       size_t len);

#endif
