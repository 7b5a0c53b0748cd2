/* flashtune tune: load a Lua search space, compile every distinct candidate with NVRTC on all
 * cores and report each one's resources. This is the compile half of the sweep; timing and
 * validation in a worker process, with results in SQLite, are the rest of issue 4. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_driver_internal.h"
#include "tune_space.h"

typedef struct kernel_job {
    gen_config config;
    char hash[GEN_HASH_LEN];
    char *source;
    gen_binary binary;
    char error[512];
    int failed;
} kernel_job;

typedef struct job_queue {
    kernel_job *jobs;
    int count;
    int next;
    const char *arch;
    pthread_mutex_t lock;
} job_queue;

static void help(void)
{
    printf("usage: flashtune tune [--arch ARCH] [--threads N] [SPACE.lua]\n\n"
           "Loads the search space (default tuner/spaces/default.lua), checks it, and compiles every\n"
           "distinct candidate with NVRTC on all cores, printing registers, spills and compile time.\n"
           "The target is the GPU when there is one, else --arch (default sm_90). Exit status: 0 when\n"
           "the space loaded (compile failures are reported, not fatal), 2 for a bad space or option.\n"
           "Timing on the GPU is not built yet (issue 4): this run compiles only.\n");
}

/* The GPU's description, or -1 with the reason when there is none. */
static int real_device(tune_device *dev, char *why, size_t len)
{
    const cu_driver *cu;
    if (cu_driver_open(&cu, why, len) != 0)
        return -1;
    CUdevice d;
    if (cu->DeviceGet(&d, 0) != CUDA_SUCCESS) {
        snprintf(why, len, "cuDeviceGet(0) failed");
        return -1;
    }
    memset(dev, 0, sizeof *dev);
    cu->DeviceGetName(dev->name, sizeof dev->name, d);
    cu->DeviceGetAttribute(&dev->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    cu->DeviceGetAttribute(&dev->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    cu->DeviceGetAttribute(&dev->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
    cu->DeviceGetAttribute(&dev->smem_per_block_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d);
    snprintf(dev->arch, sizeof dev->arch, "sm_%d%d", dev->cc_major, dev->cc_minor);
    dev->real = 1;
    if (!gen_arch_supported(dev->arch)) {
        snprintf(why, len, "%s is %s, which the generator does not target", dev->name, dev->arch);
        return -1;
    }
    return 0;
}

static void *compile_worker(void *arg)
{
    job_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        int i = q->next++;
        pthread_mutex_unlock(&q->lock);
        if (i >= q->count)
            return NULL;
        kernel_job *j = &q->jobs[i];
        j->failed = gen_compile(j->source, q->arch, &j->binary, j->error, sizeof j->error) != 0;
    }
}

/* Adds c unless a kernel of the same source is already listed. */
static int add_kernel(kernel_job **jobs, int *count, int *cap, const gen_config *c)
{
    char *source = gen_expand(c);
    if (!source)
        return -1;
    char hash[GEN_HASH_LEN];
    gen_source_hash(source, hash);
    for (int i = 0; i < *count; i++)
        if (!strcmp((*jobs)[i].hash, hash)) {
            free(source);
            return 0;
        }
    if (*count == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        kernel_job *grown = realloc(*jobs, (size_t)*cap * sizeof **jobs);
        if (!grown) {
            free(source);
            return -1;
        }
        *jobs = grown;
    }
    kernel_job *j = &(*jobs)[(*count)++];
    memset(j, 0, sizeof *j);
    j->config = *c;
    memcpy(j->hash, hash, sizeof hash);
    j->source = source;
    return 0;
}

static void describe(const gen_config *c, char *buf, size_t len)
{
    const int *p = c->p;
    snprintf(buf, len, "%-9s %-4s D=%-3d Dv=%-3d BM=%-3d BN=%-3d W=%-2d S=%d causal=%d skip=%d even=%d%d dq=%d",
             c->family->name, gen_dtype_name(p[GEN_DTYPE]), p[GEN_HEAD_DIM], p[GEN_HEAD_DIM_V], p[GEN_BLOCK_M],
             p[GEN_BLOCK_N], p[GEN_NUM_WARPS], p[GEN_NUM_STAGES], p[GEN_CAUSAL], p[GEN_CAUSAL_SKIP], p[GEN_EVEN_M],
             p[GEN_EVEN_N], p[GEN_DQ_MODE]);
}

int cmd_tune(int argc, char **argv)
{
    const char *space = "tuner/spaces/default.lua", *arch = "sm_90";
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return help(), 0;
        if (!strcmp(argv[i], "--arch") && i + 1 < argc)
            arch = argv[++i];
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

    tune_device dev;
    char why[1024];
    const int have_gpu = real_device(&dev, why, sizeof why) == 0;
    if (!have_gpu && tune_device_default(&dev, arch) != 0) {
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
    kernel_job *jobs = NULL;
    int count = 0, cap = 0;
    long candidates = 0, workloads = 0;
    for (int s = 0; s < set->space_count; s++) {
        const tune_space *sp = &set->spaces[s];
        for (int w = 0; w < sp->workload_count; w++) {
            workloads++;
            for (int c = 0; c < sp->workloads[w].count; c++) {
                candidates++;
                if (add_kernel(&jobs, &count, &cap, &sp->workloads[w].configs[c]) != 0) {
                    fprintf(stderr, "flashtune tune: out of memory, or a template missing from this build\n");
                    tune_space_set_free(set);
                    return 1;
                }
            }
        }
    }
    printf("flashtune tune: %d spaces, %ld workloads, %ld candidates, %d distinct kernels; compiling on %ld threads\n",
           set->space_count, workloads, candidates, count, threads);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    job_queue queue = { jobs, count, 0, dev.arch, PTHREAD_MUTEX_INITIALIZER };
    pthread_t tid[256];
    int started = 0;
    for (; started < threads && started < count; started++)
        if (pthread_create(&tid[started], NULL, compile_worker, &queue) != 0)
            break;
    if (started == 0)
        compile_worker(&queue);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    int failed = 0, spilling = 0;
    printf("\n%-92s %5s %6s %7s\n", "kernel", "regs", "spills", "compile");
    for (int i = 0; i < count; i++) {
        char what[160];
        describe(&jobs[i].config, what, sizeof what);
        if (jobs[i].failed) {
            failed++;
            printf("%-92s FAILED: %.200s\n", what, jobs[i].error);
            continue;
        }
        const gen_binary *b = &jobs[i].binary;
        int spills = b->spill_store_bytes + b->spill_load_bytes;
        spilling += spills > 0;
        printf("%-92s %5d %6d %6.2fs\n", what, b->registers, spills, b->compile_seconds);
    }
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("\nflashtune tune: %d kernels compiled for %s in %.1f s: %d failed, %d spill registers to local memory\n", count - failed,
           dev.arch, wall, failed, spilling);
    printf("flashtune tune: timing and validation on the GPU are not built yet (issue 4); %s\n",
           have_gpu ? "nothing was timed" : "they also need a GPU, and none is here");
    for (int i = 0; i < count; i++) {
        free(jobs[i].source);
        gen_binary_free(&jobs[i].binary);
    }
    free(jobs);
    tune_space_set_free(set);
    return 0;
}
