/* `flashtune tune` without a GPU: compiles every distinct kernel of a loaded space (progress
 * every few seconds), within its budget if it has one, and prints each one's registers, spills
 * and compile time, then how many failed and how many spill; nothing is timed or stored. */
#include <stdio.h>
#include <stdlib.h>

#include "tune_sweep.h"
#include "tune_sweep_compile_internal.h"

/* "fwd_mma DTYPE=bf16 HEAD_DIM=128 ...": every parameter the family uses. */
static void describe(const gen_config *c, char *buf, size_t len)
{
    gen_config_format(c, GEN_FORMAT_FAMILY, buf, len);
}

int tune_sweep_compile_only(const tune_space_set *set, const char *arch, int threads, long budget_s)
{
    tune_kernel_set ks = { 0 };
    long candidates = 0, workloads = 0;
    for (int s = 0; s < set->space_count; s++) {
        const tune_space *sp = &set->spaces[s];
        for (int w = 0; w < sp->workload_count; w++, workloads++)
            for (int c = 0; c < sp->workloads[w].count; c++, candidates++)
                if (tune_kernels_add(&ks, &sp->workloads[w].configs[c]) < 0) {
                    fprintf(stderr, "flashtune tune: out of memory, or a template missing from this build\n");
                    tune_kernels_free(&ks);
                    return 1;
                }
    }
    printf("flashtune tune: %d spaces, %ld workloads, %ld candidates, %d distinct kernels; compiling on %d threads\n",
           set->space_count, workloads, candidates, ks.count, threads);
    tune_kernel_job **todo = malloc((size_t)(ks.count ? ks.count : 1) * sizeof *todo);
    if (!todo) {
        tune_kernels_free(&ks);
        return 1;
    }
    for (int i = 0; i < ks.count; i++)
        todo[i] = &ks.jobs[i];
    tune_stop stop;
    tune_stop_arm(&stop, budget_s);
    double wall = tune_compile_all(todo, ks.count, arch, threads);
    const int stopped = tune_sweep_interrupted, budget_spent = tune_stop_budget_spent();
    tune_stop_disarm(&stop);
    free(todo);

    int failed = 0, spilling = 0, unreached = 0;
    printf("\n%-140s %5s %6s %7s\n", "kernel", "regs", "spills", "compile");
    for (int i = 0; i < ks.count; i++) {
        char what[GEN_CONFIG_TEXT];
        describe(&ks.jobs[i].config, what, sizeof what);
        if (!ks.jobs[i].ready && !ks.jobs[i].failed) {   /* stopped before its turn */
            unreached++;
            continue;
        }
        if (!ks.jobs[i].ready) {
            failed++;
            printf("%-140s FAILED: %.200s\n", what, ks.jobs[i].error);
            continue;
        }
        const gen_binary *b = &ks.jobs[i].binary;
        int spills = b->spill_store_bytes + b->spill_load_bytes;
        spilling += spills > 0;
        printf("%-140s %5d %6d %6.2fs\n", what, b->registers, spills, b->compile_seconds);
    }
    printf("\nflashtune tune: %d of %d kernels compiled for %s in %.1f s, %d failed\n", ks.count - failed - unreached,
           ks.count, arch, wall, failed);
    if (unreached)
        printf("flashtune tune: %d kernels not reached: %s\n", unreached,
               budget_spent ? "the budget was spent (--budget)" : "interrupted");
    if (spilling)
        printf("flashtune tune: %d of %d kernels spill registers to local memory (the spills column: bytes "
               "stored + loaded)\n", spilling, ks.count - failed - unreached);
    else if (ks.count > failed + unreached)
        printf("flashtune tune: no kernel spills registers to local memory\n");
    tune_kernels_free(&ks);
    return stopped && !budget_spent ? TUNE_SWEEP_INTERRUPTED : 0;
}
