/* flashtune tune: load a Lua search space, then either sweep it on the GPU (compile, validate,
 * time, store every result in SQLite: tune_sweep.c) or, without a GPU (or --compile-only),
 * compile every distinct candidate and report its resources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune_space.h"
#include "tune_sweep.h"
#include "tune_worker.h"

static void help(void)
{
    printf("usage: flashtune tune [--db FILE] [--arch ARCH] [--threads N] [--compile-only] [SPACE.lua]\n\n"
           "Loads the search space (default tuner/spaces/default.lua) and checks it. With a GPU: compiles\n"
           "every distinct candidate with NVRTC on all cores (CUBINs cached in the database), validates\n"
           "each candidate against the ref kernels and times it in a worker process, storing each result\n"
           "at once in FILE (default flashtune.db, or $FLASHTUNE_DB); a rerun skips what is stored\n"
           "(resume), Ctrl-C stops cleanly. Ends with the winner of every workload.\n"
           "Without a GPU, or with --compile-only: compiles for the GPU or --arch (default sm_90) and\n"
           "prints registers, spills and compile time; nothing is stored.\n"
           "Exit status: 0 done (failed candidates are results, not errors); 1 a database error or a\n"
           "workload that could not be set up; 2 a bad space or option; 130 interrupted.\n");
}

int cmd_tune(int argc, char **argv)
{
    const char *space = "tuner/spaces/default.lua", *arch = "sm_90";
    const char *db_path = getenv("FLASHTUNE_DB") ? getenv("FLASHTUNE_DB") : "flashtune.db";
    int compile_only = 0;
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return help(), 0;
        if (!strcmp(argv[i], "--arch") && i + 1 < argc)
            arch = argv[++i];
        else if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else if (!strcmp(argv[i], "--compile-only"))
            compile_only = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end;
            threads = strtol(argv[++i], &end, 10);
            if (*end || threads < 1 || threads > 256) {
                fprintf(stderr, "flashtune tune: --threads=%s must be an integer in 1..256\n", argv[i]);
                return 2;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "flashtune tune: unknown option '%s' (try --help)\n", argv[i]);
            return 2;
        } else
            space = argv[i];
    }

    /* The GPU is described by a child process: this one must not initialize CUDA before it
     * forks the benchmark workers. */
    tune_gpu_info gpu;
    char why[1024] = "";
    int have_gpu = tune_worker_probe(&gpu, 120, why, sizeof why) == 1;
    if (have_gpu && !gen_arch_supported(gpu.dev.arch)) {
        snprintf(why, sizeof why, "%s is %s, which the generator does not target", gpu.dev.name, gpu.dev.arch);
        have_gpu = 0;
    }
    tune_device dev;
    if (have_gpu)
        dev = gpu.dev;
    else if (tune_device_default(&dev, arch) != 0) {
        fprintf(stderr, "flashtune tune: --arch=%s is not a target of the generator (sm_80, sm_86, sm_89, sm_90, sm_90a)\n", arch);
        return 2;
    }
    printf("flashtune tune: %s on %s (%s)%s\n", space, dev.name, dev.arch, have_gpu ? "" : ", described: no GPU here");
    if (!have_gpu)
        printf("flashtune tune: %s\n", why);

    tune_space_set *set = NULL;
    if (tune_space_load(space, &dev, &set, why, sizeof why) != 0) {
        fprintf(stderr, "flashtune tune: %s\n", why);
        return 2;
    }
    int rc;
    if (have_gpu && !compile_only) {
        rc = tune_sweep_run(set, &gpu, db_path, (int)threads);
    } else {
        rc = tune_sweep_compile_only(set, dev.arch, (int)threads);
        printf("flashtune tune: compile only (%s); nothing was timed or stored\n",
               have_gpu ? "--compile-only" : "no GPU here");
    }
    tune_space_set_free(set);
    return rc;
}
