/* The compile pool of a sweep: the distinct kernels its candidates expand to, NVRTC on a pool
 * of threads (in a child process during a GPU sweep), and the CUBIN cache in the database. */
#include "tune_sweep_compile_internal.h"

#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune_pipe.h"
#include "tune_sweep.h"

/* ---- the distinct kernels ------------------------------------------------------------------ */

int tune_kernels_add(tune_kernel_set *ks, const gen_config *c)
{
    char *source = gen_expand(c);
    if (!source)
        return -1;
    char hash[GEN_HASH_LEN];
    gen_source_hash(source, hash);
    for (int i = 0; i < ks->count; i++)
        if (!strcmp(ks->jobs[i].hash, hash)) {
            free(source);
            return i;
        }
    if (ks->count == ks->cap) {
        int cap = ks->cap ? 2 * ks->cap : 64;
        tune_kernel_job *grown = realloc(ks->jobs, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(source);
            return -1;
        }
        ks->jobs = grown;
        ks->cap = cap;
    }
    tune_kernel_job *j = &ks->jobs[ks->count];
    memset(j, 0, sizeof *j);
    j->config = *c;
    memcpy(j->hash, hash, sizeof hash);
    j->source = source;
    return ks->count++;
}

void tune_kernels_free(tune_kernel_set *ks)
{
    for (int i = 0; i < ks->count; i++) {
        free(ks->jobs[i].source);
        gen_binary_free(&ks->jobs[i].binary);
    }
    free(ks->jobs);
    memset(ks, 0, sizeof *ks);
}

/* ---- the compile pool ---------------------------------------------------------------------- */

/* Seconds between two progress lines: a few hundred kernels take minutes, and a run that
 * prints nothing that long looks hung. */
#define PROGRESS_EVERY_S 5.0

typedef struct compile_queue {
    tune_kernel_job **todo;
    int count, next, done;
    const char *arch;
    double start, last_report;
    pthread_mutex_t lock;
} compile_queue;

static void *compile_thread(void *arg)
{
    compile_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        int i = q->next++;
        pthread_mutex_unlock(&q->lock);
        if (i >= q->count || tune_sweep_interrupted)
            return NULL;
        tune_kernel_job *j = q->todo[i];
        j->failed = gen_compile(j->source, gen_target_arch(j->config.family, q->arch), &j->binary, j->error,
                                sizeof j->error) != 0;
        j->ready = !j->failed;
        /* A plain line, terminal or not: logs of a long run show how far it got. */
        pthread_mutex_lock(&q->lock);
        const double now = tune_now();
        if (++q->done == q->count || now - q->last_report >= PROGRESS_EVERY_S) {
            q->last_report = now;
            /* The time left at the rate so far (kernels differ in compile time; a rough guide). */
            const double spent = now - q->start, left = spent / q->done * (q->count - q->done);
            if (q->done < q->count)
                printf("flashtune: compiling for %s: %d/%d kernels done (%.0f s, about %.0f s left)\n", q->arch,
                       q->done, q->count, spent, left);
            else
                printf("flashtune: compiling for %s: %d/%d kernels done (%.0f s)\n", q->arch, q->done, q->count,
                       spent);
            fflush(stdout);
        }
        pthread_mutex_unlock(&q->lock);
    }
}

double tune_compile_all(tune_kernel_job **todo, int count, const char *arch, int threads)
{
    double t0 = tune_now();
    compile_queue q = { .todo = todo, .count = count, .arch = arch, .start = t0, .last_report = t0,
                        .lock = PTHREAD_MUTEX_INITIALIZER };
    pthread_t tid[256];
    int started = 0;
    for (; started < threads && started < 256 && started < count; started++)
        if (pthread_create(&tid[started], NULL, compile_thread, &q) != 0)
            break;
    if (started == 0)
        compile_thread(&q);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return tune_now() - t0;
}

/* What the compile process sends back per job, followed by cubin_size bytes of CUBIN. */
typedef struct compile_record {
    int failed, ready;
    size_t cubin_size;
    int registers, spill_store_bytes, spill_load_bytes, stack_frame_bytes, static_smem_bytes;
    double compile_seconds;
    char nvrtc_version[16];
    char error[1024];
} compile_record;

/* tune_compile_all in a child process. NVRTC opens and initializes the CUDA driver while it compiles
 * (seen on the H100 with CUDA 13.0: libcuda.so.1 loaded by libnvrtc), and a process that has
 * initialized CUDA cannot fork a worker that uses it (cuInit then fails with
 * CUDA_ERROR_NOT_INITIALIZED). So the parent never compiles: a child does, and sends the CUBINs
 * back through a pipe. */
static double compile_isolated(tune_kernel_job **todo, int count, const char *arch, int threads)
{
    double t0 = tune_now();
    int fds[2];
    if (count == 0)
        return 0;
    if (pipe(fds) != 0) {
        for (int i = 0; i < count; i++)
            todo[i]->failed = 1, snprintf(todo[i]->error, sizeof todo[i]->error, "pipe: %s", strerror(errno));
        return 0;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        tune_compile_all(todo, count, arch, threads);
        for (int i = 0; i < count; i++) {
            const tune_kernel_job *j = todo[i];
            compile_record r = { .failed = j->failed, .ready = j->ready, .cubin_size = j->ready ? j->binary.cubin_size : 0,
                                 .registers = j->binary.registers, .spill_store_bytes = j->binary.spill_store_bytes,
                                 .spill_load_bytes = j->binary.spill_load_bytes,
                                 .stack_frame_bytes = j->binary.stack_frame_bytes,
                                 .static_smem_bytes = j->binary.static_smem_bytes,
                                 .compile_seconds = j->binary.compile_seconds };
            snprintf(r.nvrtc_version, sizeof r.nvrtc_version, "%s", j->binary.nvrtc_version);
            snprintf(r.error, sizeof r.error, "%s", j->error);
            if (tune_pipe_write(fds[1], &r, sizeof r, 0) != 0 ||
                (r.cubin_size && tune_pipe_write(fds[1], j->binary.cubin, r.cubin_size, 0) != 0))
                _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    int i = 0;
    for (; pid > 0 && i < count; i++) {
        tune_kernel_job *j = todo[i];
        compile_record r;
        if (tune_pipe_read(fds[0], &r, sizeof r, 0) != 1)
            break;
        j->failed = r.failed;
        j->ready = r.ready;
        snprintf(j->error, sizeof j->error, "%s", r.error);
        if (r.cubin_size) {
            j->binary.cubin = malloc(r.cubin_size);
            if (!j->binary.cubin || tune_pipe_read(fds[0], j->binary.cubin, r.cubin_size, 0) != 1) {
                free(j->binary.cubin);
                j->binary.cubin = NULL;
                break;
            }
        }
        j->binary.cubin_size = r.cubin_size;
        j->binary.registers = r.registers;
        j->binary.spill_store_bytes = r.spill_store_bytes;
        j->binary.spill_load_bytes = r.spill_load_bytes;
        j->binary.stack_frame_bytes = r.stack_frame_bytes;
        j->binary.static_smem_bytes = r.static_smem_bytes;
        j->binary.compile_seconds = r.compile_seconds;
        snprintf(j->binary.nvrtc_version, sizeof j->binary.nvrtc_version, "%s", r.nvrtc_version);
        snprintf(j->binary.arch, sizeof j->binary.arch, "%s", arch);
    }
    for (; i < count; i++) {   /* the compile process died or could not start */
        todo[i]->failed = 1;
        todo[i]->ready = 0;
        snprintf(todo[i]->error, sizeof todo[i]->error, "the compile process %s", pid < 0 ? "could not start" : "died");
    }
    close(fds[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return tune_now() - t0;
}

/* ---- the CUBIN cache ----------------------------------------------------------------------- */

/* The cache's row of j on a GPU of arch, as the runtime's loader stores and finds it: keyed
 * and compared on everything j is compiled from (gen_cache_id). OUT: *b, nothing but that set.
 * -1 when j's family does not run on arch: not cached, and its compile fails saying so. */
static int cache_row(const tune_kernel_job *j, const char *arch, db_binary *b)
{
    gen_cache_id id;
    if (gen_cache_id_init(j->config.family, j->source, arch, &id) != 0)
        return -1;
    db_binary_init(b, id.key, id.arch, id.nvrtc_version, id.options, id.source);
    return 0;
}

int tune_kernels_build(tune_kernel_set *ks, db *d, const char *arch, int threads, int verbose, char *err,
                       size_t len)
{
    tune_kernel_job **todo = malloc((size_t)(ks->count ? ks->count : 1) * sizeof *todo);
    if (!todo)
        return snprintf(err, len, "out of memory"), -1;
    int n = 0, cached = 0;
    for (int i = 0; i < ks->count; i++) {
        tune_kernel_job *j = &ks->jobs[i];
        if (!j->needed || j->ready || j->failed)
            continue;
        if (!j->kernel_id) {   /* a reference kernel: stored for the cache too */
            db_kernel k = { .p = { 0 } };
            snprintf(k.family, sizeof k.family, "%s", j->config.family->name);
            memcpy(k.source_hash, j->hash, sizeof k.source_hash);
            memcpy(k.p, j->config.p, sizeof k.p);
            if (db_kernel_upsert(d, &k, &j->kernel_id, err, len) != 0)
                return free(todo), -1;
        }
        db_binary b, want;
        int found = cache_row(j, arch, &want) == 0 ? db_binary_lookup(d, &want, &b, &j->binary_id, err, len) : 0;
        if (found < 0)
            return free(todo), -1;
        if (found) {
            j->binary.cubin = b.cubin;   /* ownership moves to the job */
            j->binary.cubin_size = b.cubin_size;
            snprintf(j->binary.arch, sizeof j->binary.arch, "%s", b.arch);
            snprintf(j->binary.nvrtc_version, sizeof j->binary.nvrtc_version, "%s", b.nvrtc_version);
            j->binary.registers = b.registers;
            j->binary.spill_store_bytes = b.spill_store_bytes;
            j->binary.spill_load_bytes = b.spill_load_bytes;
            j->binary.compile_seconds = b.compile_seconds;
            j->ready = j->cached = 1;
            cached++;
        } else {
            todo[n++] = j;
        }
    }
    if (verbose) {
        printf("flashtune tune: %d kernels needed: %d from the database's cache, compiling %d on %d threads\n",
               n + cached, cached, n, threads);
        fflush(stdout);
    }
    double wall = compile_isolated(todo, n, arch, threads);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        tune_kernel_job *j = todo[i];
        if (!j->ready) {
            failed += j->failed;
            continue;
        }
        db_binary b;
        if (cache_row(j, arch, &b) != 0)
            continue;
        b.cubin = j->binary.cubin;
        b.cubin_size = j->binary.cubin_size;
        b.registers = j->binary.registers;
        b.spill_store_bytes = j->binary.spill_store_bytes;
        b.spill_load_bytes = j->binary.spill_load_bytes;
        b.stack_frame_bytes = j->binary.stack_frame_bytes;
        b.static_smem_bytes = j->binary.static_smem_bytes;
        b.compile_seconds = j->binary.compile_seconds;
        if (db_binary_put(d, j->kernel_id, &b, &j->binary_id, err, len) != 0)
            return free(todo), -1;
    }
    free(todo);
    if (verbose && !tune_sweep_interrupted)
        printf("flashtune tune: compiled %d kernels in %.1f s, %d failed\n", n - failed, wall, failed);
    return 0;
}
