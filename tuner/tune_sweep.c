/* The tuning sweep: parallel compilation with the CUBIN cache, resume, worker dispatch under a
 * watchdog, immediate storage of each result, progress and the final report. */
#include "tune_sweep.h"

#include <math.h>
#include <pthread.h>
#include <sys/wait.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

volatile sig_atomic_t tune_sweep_interrupted;

/* ---- the distinct kernels and the compile pool ------------------------------------------ */

typedef struct kernel_job {
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
} kernel_job;

typedef struct kernel_set {
    kernel_job *jobs;
    int count, cap;
} kernel_set;

/* The index of c's kernel in ks, added unless a kernel of the same source is listed; -1 when
 * memory ran out or a template is missing from this build. */
static int kernel_add(kernel_set *ks, const gen_config *c)
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
        kernel_job *grown = realloc(ks->jobs, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(source);
            return -1;
        }
        ks->jobs = grown;
        ks->cap = cap;
    }
    kernel_job *j = &ks->jobs[ks->count];
    memset(j, 0, sizeof *j);
    j->config = *c;
    memcpy(j->hash, hash, sizeof hash);
    j->source = source;
    return ks->count++;
}

static void kernel_set_free(kernel_set *ks)
{
    for (int i = 0; i < ks->count; i++) {
        free(ks->jobs[i].source);
        gen_binary_free(&ks->jobs[i].binary);
    }
    free(ks->jobs);
    memset(ks, 0, sizeof *ks);
}

typedef struct compile_queue {
    kernel_job **todo;
    int count, next;
    const char *arch;
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
        kernel_job *j = q->todo[i];
        j->failed = gen_compile(j->source, gen_target_arch(j->config.family, q->arch), &j->binary, j->error,
                                sizeof j->error) != 0;
        j->ready = !j->failed;
    }
}

/* Compiles the count jobs of todo on up to `threads` threads. Returns the wall time (s). */
static double compile_all(kernel_job **todo, int count, const char *arch, int threads)
{
    double t0 = tune_now();
    compile_queue q = { todo, count, 0, arch, PTHREAD_MUTEX_INITIALIZER };
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

static int write_all(int fd, const void *buf, size_t len)
{
    for (const char *p = buf; len;) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w, len -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    for (char *p = buf; len;) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r, len -= (size_t)r;
    }
    return 0;
}

/* compile_all in a child process. NVRTC opens and initializes the CUDA driver while it compiles
 * (seen on the H100 with CUDA 13.0: libcuda.so.1 loaded by libnvrtc), and a process that has
 * initialized CUDA cannot fork a worker that uses it (cuInit then fails with
 * CUDA_ERROR_NOT_INITIALIZED). So the parent never compiles: a child does, and sends the CUBINs
 * back through a pipe. */
static double compile_isolated(kernel_job **todo, int count, const char *arch, int threads)
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
        compile_all(todo, count, arch, threads);
        for (int i = 0; i < count; i++) {
            const kernel_job *j = todo[i];
            compile_record r = { .failed = j->failed, .ready = j->ready, .cubin_size = j->ready ? j->binary.cubin_size : 0,
                                 .registers = j->binary.registers, .spill_store_bytes = j->binary.spill_store_bytes,
                                 .spill_load_bytes = j->binary.spill_load_bytes,
                                 .stack_frame_bytes = j->binary.stack_frame_bytes,
                                 .static_smem_bytes = j->binary.static_smem_bytes,
                                 .compile_seconds = j->binary.compile_seconds };
            snprintf(r.nvrtc_version, sizeof r.nvrtc_version, "%s", j->binary.nvrtc_version);
            snprintf(r.error, sizeof r.error, "%s", j->error);
            if (write_all(fds[1], &r, sizeof r) != 0 || (r.cubin_size && write_all(fds[1], j->binary.cubin, r.cubin_size) != 0))
                _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    int i = 0;
    for (; pid > 0 && i < count; i++) {
        kernel_job *j = todo[i];
        compile_record r;
        if (read_all(fds[0], &r, sizeof r) != 0)
            break;
        j->failed = r.failed;
        j->ready = r.ready;
        snprintf(j->error, sizeof j->error, "%s", r.error);
        if (r.cubin_size) {
            j->binary.cubin = malloc(r.cubin_size);
            if (!j->binary.cubin || read_all(fds[0], j->binary.cubin, r.cubin_size) != 0) {
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

/* The parameters a space may choose, as "fwd_mma BLOCK_M=128 BLOCK_N=64 ...". */
static const char *config_str(const gen_config *c, char *buf, size_t len)
{
    return gen_config_format(c, GEN_FORMAT_FAMILY | GEN_FORMAT_TUNABLES, buf, len);
}

int tune_sweep_is_default(const gen_config *c)
{
    const unsigned tunables = gen_param_mask(GEN_ROLE_TUNABLE);
    for (int p = 0; p < GEN_PARAM_COUNT; p++)
        if ((c->family->params & tunables & GEN_BIT(p)) && c->p[p] != c->family->defaults[p])
            return 0;
    return 1;
}

int tune_sweep_keep_count(int timed, double keep)
{
    if (timed <= 0)
        return 0;
    int n = (int)ceil(keep * timed - 1e-9);
    return n < 1 ? 1 : n > timed ? timed : n;
}

/* ---- compile only (no GPU) ------------------------------------------------------------- */

/* "fwd_mma DTYPE=bf16 HEAD_DIM=128 ...": every parameter the family uses. */
static void describe(const gen_config *c, char *buf, size_t len)
{
    gen_config_format(c, GEN_FORMAT_FAMILY, buf, len);
}

int tune_sweep_compile_only(const tune_space_set *set, const char *arch, int threads)
{
    kernel_set ks = { 0 };
    long candidates = 0, workloads = 0;
    for (int s = 0; s < set->space_count; s++) {
        const tune_space *sp = &set->spaces[s];
        for (int w = 0; w < sp->workload_count; w++, workloads++)
            for (int c = 0; c < sp->workloads[w].count; c++, candidates++)
                if (kernel_add(&ks, &sp->workloads[w].configs[c]) < 0) {
                    fprintf(stderr, "flashtune tune: out of memory, or a template missing from this build\n");
                    kernel_set_free(&ks);
                    return 1;
                }
    }
    printf("flashtune tune: %d spaces, %ld workloads, %ld candidates, %d distinct kernels; compiling on %d threads\n",
           set->space_count, workloads, candidates, ks.count, threads);
    kernel_job **todo = malloc((size_t)(ks.count ? ks.count : 1) * sizeof *todo);
    if (!todo) {
        kernel_set_free(&ks);
        return 1;
    }
    for (int i = 0; i < ks.count; i++)
        todo[i] = &ks.jobs[i];
    double wall = compile_all(todo, ks.count, arch, threads);
    free(todo);

    int failed = 0, spilling = 0;
    printf("\n%-140s %5s %6s %7s\n", "kernel", "regs", "spills", "compile");
    for (int i = 0; i < ks.count; i++) {
        char what[256];
        describe(&ks.jobs[i].config, what, sizeof what);
        if (!ks.jobs[i].ready) {
            failed++;
            printf("%-140s FAILED: %.200s\n", what, ks.jobs[i].failed ? ks.jobs[i].error : "not compiled (interrupted)");
            continue;
        }
        const gen_binary *b = &ks.jobs[i].binary;
        int spills = b->spill_store_bytes + b->spill_load_bytes;
        spilling += spills > 0;
        printf("%-140s %5d %6d %6.2fs\n", what, b->registers, spills, b->compile_seconds);
    }
    printf("\nflashtune tune: %d kernels compiled for %s in %.1f s: %d failed, %d spill registers to local memory\n",
           ks.count - failed, arch, wall, failed, spilling);
    kernel_set_free(&ks);
    return 0;
}

/* ---- resume ------------------------------------------------------------------------------ */

int tune_sweep_pending(db *d, int64_t device_id, int64_t workload_id, const int64_t *kernel_ids, int count,
                       int *pending, int *pending_count, int *pruned, char *err, size_t len)
{
    *pending_count = 0;
    if (pruned)
        *pruned = 0;
    for (int i = 0; i < count; i++) {
        db_status st;
        int found = db_result_get(d, device_id, workload_id, kernel_ids[i], &st, err, len);
        if (found < 0)
            return -1;
        if (!found)
            pending[(*pending_count)++] = i;
        else if (pruned && st == DB_STATUS_SKIPPED)
            (*pruned)++;
    }
    return 0;
}

/* ---- the sweep ---------------------------------------------------------------------------- */

/* One (space, workload): its candidates, their kernels and what is left to measure. */
typedef struct unit {
    const tune_space *space;
    const tune_candidates *cands;
    int backward;
    int *job;                   /* per candidate: index into the kernel set */
    int ref_job;
    gen_config ref_config;
    int64_t workload_id;
    int *pending;               /* candidate indices without a stored result */
    int pending_count;
    int pruned_before;          /* 'skipped' results already stored: a prune was decided */
    double best_tflops;         /* best of this run, for the progress line */
    char best[160];
    char failure[1024];         /* why the workload could not be measured; empty when fine */
} unit;

typedef struct sweep {
    db *d;
    const tune_gpu_info *gpu;
    kernel_set ks;
    unit *units;
    int unit_count;
    int64_t device_id, sweep_id;
    long total, done;           /* timings planned and finished, for progress and ETA */
    double timing_start;
    int tty;
    char err[1024];
} sweep;

static void on_signal(int sig)
{
    (void)sig;
    tune_sweep_interrupted = 1;
}

static void unit_label(const unit *u, char *buf, size_t len)
{
    char w[160];
    tune_workload_str(&u->cands->workload, w, sizeof w);
    snprintf(buf, len, "%s %s", u->backward ? "bwd" : "fwd", w);
}

/* Stores one result of candidate c of u. 0 or -1 (s->err). */
static int store(sweep *s, const unit *u, int c, const tune_record *r)
{
    const kernel_job *j = &s->ks.jobs[u->job[c]];
    db_result res = {
        .sweep_id = s->sweep_id, .device_id = s->device_id, .workload_id = u->workload_id,
        .kernel_id = j->kernel_id, .binary_id = j->binary_id, .status = r->status,
        .median_ms = r->median_ms, .min_ms = r->min_ms, .spread = r->spread, .tflops = r->tflops,
        .rel_error = r->rel_error, .max_abs_error = r->max_abs_error,
        .message = r->message[0] ? r->message : NULL,
    };
    return db_result_put(s->d, &res, s->err, sizeof s->err);
}

static void fmt_eta(double seconds, char *buf, size_t len)
{
    if (!(seconds >= 0) || seconds > 360000)
        snprintf(buf, len, "?");
    else
        snprintf(buf, len, "%d:%02d:%02d", (int)seconds / 3600, (int)seconds / 60 % 60, (int)seconds % 60);
}

/* Progress after one timing: a live line on a terminal, one plain line otherwise. */
static void progress(sweep *s, unit *u, int c, const tune_record *r, const char *pass)
{
    s->done++;
    char cfg[160], label[200], eta[32];
    config_str(&u->cands->configs[c], cfg, sizeof cfg);
    if (r->status == DB_STATUS_OK && r->tflops > u->best_tflops) {
        u->best_tflops = r->tflops;
        snprintf(u->best, sizeof u->best, "%s", cfg);
    }
    double elapsed = tune_now() - s->timing_start;
    long left = s->total > s->done ? s->total - s->done : 0;
    fmt_eta(s->done ? elapsed / (double)s->done * (double)left : -1, eta, sizeof eta);
    unit_label(u, label, sizeof label);
    if (s->tty) {
        /* Failures stay on screen; the live line is cut short so a carriage return clears it. */
        if (r->status != DB_STATUS_OK)
            printf("\r\033[K%s | %s%s: %s%s%s\n", label, cfg, pass, db_status_name(r->status), r->message[0] ? ": " : "",
                   r->message);
        char live[512];
        snprintf(live, sizeof live, "[%ld/%ld ETA %s] %s: best %.1f TFLOP/s (%s)", s->done, s->total, eta, label,
                 u->best_tflops, u->best[0] ? u->best : "none yet");
        printf("\r\033[K%.150s", live);
    } else if (r->status == DB_STATUS_OK) {
        printf("[%ld/%ld ETA %s] %s | %s%s: ok %.4f ms (min %.4f, spread %.1f%%) %.1f TFLOP/s, rel err %.2e\n",
               s->done, s->total, eta, label, cfg, pass, r->median_ms, r->min_ms, 100 * r->spread, r->tflops,
               r->rel_error);
    } else {
        printf("[%ld/%ld ETA %s] %s | %s%s: %s%s%s\n", s->done, s->total, eta, label, cfg, pass,
               db_status_name(r->status), r->message[0] ? ": " : "", r->message);
    }
    fflush(stdout);
}

/* Seeds the random inputs from the workload, so a rerun sees the same data. */
static unsigned long long workload_seed(const tune_workload *w)
{
    int f[] = { w->dtype, w->head_dim, w->head_dim_v, w->causal, w->batch, w->heads, w->seqlen_q, w->seqlen_k };
    unsigned long long h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        h = (h ^ (unsigned)f[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

enum { PHASE_OK = 0, PHASE_SETUP_FAILED = -1, PHASE_DB_ERROR = -2, PHASE_INTERRUPTED = 1 };

/* Runs candidates cands[0..n-1] of u (candidate indices) in workers with bench. Each result
 * goes to out[i] (may be NULL) and, unless it is ok and defer_ok is set, to the database at
 * once. Returns a PHASE_* code. */
static int run_phase(sweep *s, unit *u, const int *cands, int n, const tune_bench *bench, int defer_ok,
                     tune_record *out, const char *pass)
{
    if (n == 0)
        return PHASE_OK;
    tune_worker_item *items = malloc((size_t)n * sizeof *items);
    if (!items) {
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return PHASE_SETUP_FAILED;
    }
    for (int i = 0; i < n; i++)
        items[i] = (tune_worker_item){ &u->cands->configs[cands[i]], s->ks.jobs[u->job[cands[i]]].binary.cubin, i };
    tune_worker_task task = {
        .workload = u->cands->workload, .backward = u->backward, .ref_cubin = s->ks.jobs[u->ref_job].binary.cubin,
        .ref_config = &u->ref_config, .bench = *bench, .l2_bytes = s->gpu->l2_bytes,
        .seed = workload_seed(&u->cands->workload), .items = items, .count = n,
    };
    const double setup_s = bench->timeout_s * 10 > 300 ? bench->timeout_s * 10 : 300;
    int next = 0, stalls = 0, rc = PHASE_OK;
    while (next < n && rc == PHASE_OK) {
        tune_worker_proc w;
        char why[1024] = "", line[2048], how[160];
        if (tune_worker_start(&task, next, &w, why, sizeof why) != 0) {
            snprintf(u->failure, sizeof u->failure, "starting a worker: %s", why);
            rc = PHASE_SETUP_FAILED;
            break;
        }
        int ready = 0, inflight = -1, progressed = 0;
        double deadline = tune_now() + setup_s;
        for (;;) {
            int got = tune_worker_read_line(&w, deadline, line, sizeof line);
            if (tune_sweep_interrupted) {
                tune_worker_stop(&w, NULL, 0);
                rc = PHASE_INTERRUPTED;
                break;
            }
            if (got == -2)
                continue;
            if (got == 1) {
                tune_record r;
                int id;
                if (!strcmp(line, "READY")) {
                    ready = 1;
                    deadline = tune_now() + bench->timeout_s;
                } else if (line[0] == 'E' && line[1] == ' ') {
                    snprintf(why, sizeof why, "%.1000s", line + 2);
                } else if (sscanf(line, "B %d", &id) == 1 && id >= next && id < n) {
                    inflight = id;
                    deadline = tune_now() + bench->timeout_s;
                } else if (line[0] == 'R' && tune_record_parse(line, &r) == 0 && r.id >= next && r.id < n) {
                    int c = cands[r.id];
                    if (out)
                        out[r.id] = r;
                    if (!(defer_ok && r.status == DB_STATUS_OK) && store(s, u, c, &r) != 0) {
                        tune_worker_stop(&w, NULL, 0);
                        rc = PHASE_DB_ERROR;
                        break;
                    }
                    progress(s, u, c, &r, pass);
                    next = r.id + 1;
                    inflight = -1;
                    progressed = 1;
                    deadline = tune_now() + bench->timeout_s;
                } else {
                    snprintf(why, sizeof why, "unexpected line from the worker: '%.200s'", line);
                }
                continue;
            }
            /* The worker ended (got == 0) or the watchdog fired (got == -1). */
            int timed_out = got == -1;
            tune_worker_stop(&w, how, sizeof how);
            if (inflight >= 0) {
                tune_record r;
                tune_record_init(&r, inflight);
                r.status = timed_out ? DB_STATUS_TIMEOUT : DB_STATUS_CRASHED;
                if (timed_out)
                    snprintf(r.message, sizeof r.message, "no result within timeout_s=%g s; worker killed", bench->timeout_s);
                else
                    snprintf(r.message, sizeof r.message, "the worker died during this candidate (%s)", how);
                if (out)
                    out[inflight] = r;
                if (store(s, u, cands[inflight], &r) != 0) {
                    rc = PHASE_DB_ERROR;
                    break;
                }
                progress(s, u, cands[inflight], &r, pass);
                next = inflight + 1;
                progressed = 1;
            } else if (!ready) {
                snprintf(u->failure, sizeof u->failure, "worker setup %s: %s", timed_out ? "timed out" : "failed",
                         why[0] ? why : how);
                rc = PHASE_SETUP_FAILED;
            } else if (next < n && !progressed && ++stalls >= 2) {
                snprintf(u->failure, sizeof u->failure, "the worker keeps ending without a result (%s)", how);
                rc = PHASE_SETUP_FAILED;
            }
            break;
        }
    }
    free(items);
    return rc;
}

static int cmp_median(const void *a, const void *b)
{
    const tune_record *x = a, *y = b;
    return (x->median_ms > y->median_ms) - (x->median_ms < y->median_ms);
}

/* Measures the pending candidates of u with its space's strategy. Returns a PHASE_* code. */
static int measure_unit(sweep *s, unit *u)
{
    const tune_space *sp = u->space;
    if (sp->strategy.kind != TUNE_PRUNE || u->pruned_before)
        return run_phase(s, u, u->pending, u->pending_count, &sp->bench, 0, NULL, "");
    /* Prune: everything briefly, then the best fraction with the full bench. */
    int n = u->pending_count;
    tune_record *first = calloc((size_t)(n ? n : 1), sizeof *first);
    int *kept = malloc((size_t)(n ? n : 1) * sizeof *kept);
    if (!first || !kept) {
        free(first);
        free(kept);
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return PHASE_SETUP_FAILED;
    }
    for (int i = 0; i < n; i++)
        tune_record_init(&first[i], -1);
    int rc = run_phase(s, u, u->pending, n, &sp->strategy.first, 1, first, " (first pass)");
    if (rc == PHASE_OK) {
        int ok = 0;
        for (int i = 0; i < n; i++)
            if (first[i].id >= 0 && first[i].status == DB_STATUS_OK)
                first[ok++] = first[i];   /* compacted; ids still index u->pending */
        qsort(first, (size_t)ok, sizeof *first, cmp_median);
        int keep = tune_sweep_keep_count(ok, sp->strategy.keep);
        for (int i = keep; i < ok && rc == PHASE_OK; i++) {
            tune_record r = first[i];
            r.status = DB_STATUS_SKIPPED;
            snprintf(r.message, sizeof r.message, "pruned: first-pass median %.4f ms ranks %d of %d (keep %d)",
                     first[i].median_ms, i + 1, ok, keep);
            if (store(s, u, u->pending[first[i].id], &r) != 0)
                rc = PHASE_DB_ERROR;
        }
        for (int i = 0; i < keep; i++)
            kept[i] = u->pending[first[i].id];
        s->total += keep - tune_sweep_keep_count(n, sp->strategy.keep);
        if (rc == PHASE_OK)
            rc = run_phase(s, u, kept, keep, &sp->bench, 0, NULL, "");
    }
    free(first);
    free(kept);
    return rc;
}

/* Reads the stored result of (device, workload, kernel): 1 found, 0 not. */
static int load_result(sweep *s, int64_t workload_id, int64_t kernel_id, db_status *status, double *median,
                       double *tflops)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(s->d),
                           "SELECT status, median_ms, tflops FROM results WHERE device_id = ?1 AND workload_id = ?2 "
                           "AND kernel_id = ?3",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, s->device_id);
    sqlite3_bind_int64(st, 2, workload_id);
    sqlite3_bind_int64(st, 3, kernel_id);
    int found = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(st, 0);
        int code = name ? db_status_parse((const char *)name) : -1;
        *status = code < 0 ? DB_STATUS_INVALID : (db_status)code;
        *median = sqlite3_column_type(st, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 1);
        *tflops = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
        found = 1;
    }
    sqlite3_finalize(st);
    return found;
}

/* The winner of every workload, from the database (this run's and earlier results). */
static void report(sweep *s, const char *db_path)
{
    printf("\nflashtune tune: winners on %s (%s), database %s\n", s->gpu->dev.name, s->gpu->dev.arch, db_path);
    printf("%-44s %7s %9s %9s %10s %10s  %s\n", "workload", "ok/all", "TFLOP/s", "ms", "vs slowest", "vs default",
           "winner");
    for (int i = 0; i < s->unit_count; i++) {
        unit *u = &s->units[i];
        char label[200];
        unit_label(u, label, sizeof label);
        int ok = 0, all = 0, best = -1, counts[DB_STATUS_COUNT] = { 0 };
        double best_ms = INFINITY, best_tf = NAN, slow_ms = 0, default_ms = NAN;
        for (int c = 0; c < u->cands->count; c++) {
            db_status st;
            double med, tf;
            if (!load_result(s, u->workload_id, s->ks.jobs[u->job[c]].kernel_id, &st, &med, &tf))
                continue;
            all++;
            counts[st]++;
            if (st != DB_STATUS_OK || !(med > 0))
                continue;
            ok++;
            if (med < best_ms)
                best_ms = med, best_tf = tf, best = c;
            if (med > slow_ms)
                slow_ms = med;
            if (tune_sweep_is_default(&u->cands->configs[c]))
                default_ms = med;
        }
        char cfg[160] = "none valid", vs_default[16] = "-";
        if (best >= 0)
            config_str(&u->cands->configs[best], cfg, sizeof cfg);
        if (best >= 0 && default_ms > 0)
            snprintf(vs_default, sizeof vs_default, "%.2fx", default_ms / best_ms);
        char ratio[16];
        snprintf(ratio, sizeof ratio, "%d/%d", ok, u->cands->count);
        if (best >= 0)
            printf("%-44.44s %7s %9.1f %9.4f %9.2fx %10s  %s\n", label, ratio, best_tf, best_ms, slow_ms / best_ms,
                   vs_default, cfg);
        else
            printf("%-44.44s %7s %9s %9s %10s %10s  %s\n", label, ratio, "-", "-", "-", "-", cfg);
        if (all > ok || all < u->cands->count || u->failure[0]) {
            printf("%-44s ", "");
            for (int st = 0; st < DB_STATUS_COUNT; st++)
                if (st != DB_STATUS_OK && counts[st])
                    printf(" %d %s", counts[st], db_status_name((db_status)st));
            if (all < u->cands->count)
                printf(" %d not measured", u->cands->count - all);
            if (u->failure[0])
                printf(" (%s)", u->failure);
            printf("\n");
        }
    }
}

/* Reads the space file for its hash; "unreadable" when it cannot be read. */
static void file_hash(const char *path, char out[GEN_HASH_LEN])
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t size = 0;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1))) {
            size = fread(text, 1, (size_t)n, f);
            text[size] = '\0';
        }
    }
    if (f)
        fclose(f);
    if (text)
        gen_source_hash(text, out);
    else
        snprintf(out, GEN_HASH_LEN, "unreadable");
    free(text);
}

/* Builds the units, stores devices, workloads and kernels, and finds what is pending. */
static int plan(sweep *s, const tune_space_set *set)
{
    int count = 0;
    for (int i = 0; i < set->space_count; i++)
        count += set->spaces[i].workload_count;
    s->units = calloc((size_t)(count ? count : 1), sizeof *s->units);
    if (!s->units)
        return snprintf(s->err, sizeof s->err, "out of memory"), -1;
    for (int i = 0; i < set->space_count; i++)
        for (int w = 0; w < set->spaces[i].workload_count; w++) {
            unit *u = &s->units[s->unit_count++];
            u->space = &set->spaces[i];
            u->cands = &set->spaces[i].workloads[w];
            u->backward = u->space->family->backward;
            const tune_workload *tw = &u->cands->workload;
            db_workload dw = { u->backward ? DB_OP_BWD : DB_OP_FWD, tw->dtype, tw->head_dim, tw->head_dim_v, tw->causal,
                               tw->batch, tw->heads, tw->seqlen_q, tw->seqlen_k };
            if (db_workload_upsert(s->d, &dw, &u->workload_id, s->err, sizeof s->err) != 0)
                return -1;
            gen_config_init(&u->ref_config, gen_family_find("ref"));
            u->ref_config.p[GEN_DTYPE] = tw->dtype;
            u->ref_config.p[GEN_HEAD_DIM] = tw->head_dim;
            u->ref_config.p[GEN_HEAD_DIM_V] = tw->head_dim_v;
            u->ref_config.p[GEN_CAUSAL] = tw->causal;
            u->job = malloc((size_t)(u->cands->count ? u->cands->count : 1) * sizeof *u->job);
            u->pending = malloc((size_t)(u->cands->count ? u->cands->count : 1) * sizeof *u->pending);
            int64_t *ids = malloc((size_t)(u->cands->count ? u->cands->count : 1) * sizeof *ids);
            if (!u->job || !u->pending || !ids || (u->ref_job = kernel_add(&s->ks, &u->ref_config)) < 0) {
                free(ids);
                return snprintf(s->err, sizeof s->err, "out of memory, or a template missing from this build"), -1;
            }
            for (int c = 0; c < u->cands->count; c++)
                if ((u->job[c] = kernel_add(&s->ks, &u->cands->configs[c])) < 0) {
                    free(ids);
                    return snprintf(s->err, sizeof s->err, "out of memory, or a template missing from this build"), -1;
                }
            /* Kernels get their rows now: the resume filter needs their ids. */
            int rc = 0;
            for (int c = 0; c < u->cands->count && rc == 0; c++) {
                kernel_job *j = &s->ks.jobs[u->job[c]];
                if (!j->kernel_id) {
                    db_kernel k = { .p = { 0 } };
                    snprintf(k.family, sizeof k.family, "%s", j->config.family->name);
                    memcpy(k.source_hash, j->hash, sizeof k.source_hash);
                    memcpy(k.p, j->config.p, sizeof k.p);
                    rc = db_kernel_upsert(s->d, &k, &j->kernel_id, s->err, sizeof s->err);
                }
                ids[c] = j->kernel_id;
            }
            if (rc == 0)
                rc = tune_sweep_pending(s->d, s->device_id, u->workload_id, ids, u->cands->count, u->pending,
                                        &u->pending_count, &u->pruned_before, s->err, sizeof s->err);
            free(ids);
            if (rc != 0)
                return -1;
            for (int c = 0; c < u->pending_count; c++)
                s->ks.jobs[u->job[u->pending[c]]].needed = 1;
            if (u->pending_count)
                s->ks.jobs[u->ref_job].needed = 1;
        }
    return 0;
}

/* Finds cached CUBINs, compiles the rest, and stores the new ones. */
static int build(sweep *s, int threads)
{
    const char *arch = s->gpu->dev.arch;
    kernel_job **todo = malloc((size_t)(s->ks.count ? s->ks.count : 1) * sizeof *todo);
    if (!todo)
        return snprintf(s->err, sizeof s->err, "out of memory"), -1;
    int n = 0, cached = 0;
    for (int i = 0; i < s->ks.count; i++) {
        kernel_job *j = &s->ks.jobs[i];
        if (!j->needed)
            continue;
        if (!j->kernel_id) {   /* a reference kernel: stored for the cache too */
            db_kernel k = { .p = { 0 } };
            snprintf(k.family, sizeof k.family, "%s", j->config.family->name);
            memcpy(k.source_hash, j->hash, sizeof k.source_hash);
            memcpy(k.p, j->config.p, sizeof k.p);
            if (db_kernel_upsert(s->d, &k, &j->kernel_id, s->err, sizeof s->err) != 0)
                return free(todo), -1;
        }
        char key[GEN_HASH_LEN];
        gen_cache_key(j->source, arch, key);
        db_binary b;
        int found = db_binary_find(s->d, key, &b, &j->binary_id, s->err, sizeof s->err);
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
    printf("flashtune tune: %d kernels needed: %d from the database's cache, compiling %d on %d threads\n", n + cached,
           cached, n, threads);
    fflush(stdout);
    double wall = compile_isolated(todo, n, arch, threads);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        kernel_job *j = todo[i];
        if (!j->ready) {
            failed += j->failed;
            continue;
        }
        db_binary b = { .cubin = j->binary.cubin, .cubin_size = j->binary.cubin_size,
                        .registers = j->binary.registers, .spill_store_bytes = j->binary.spill_store_bytes,
                        .spill_load_bytes = j->binary.spill_load_bytes, .stack_frame_bytes = j->binary.stack_frame_bytes,
                        .static_smem_bytes = j->binary.static_smem_bytes, .compile_seconds = j->binary.compile_seconds };
        gen_cache_key(j->source, arch, b.cache_key);
        snprintf(b.arch, sizeof b.arch, "%s", arch);
        snprintf(b.nvrtc_version, sizeof b.nvrtc_version, "%s", j->binary.nvrtc_version);
        if (db_binary_put(s->d, j->kernel_id, &b, &j->binary_id, s->err, sizeof s->err) != 0)
            return free(todo), -1;
    }
    free(todo);
    if (!tune_sweep_interrupted)
        printf("flashtune tune: compiled %d kernels in %.1f s, %d failed\n", n - failed, wall, failed);
    return 0;
}

/* Records compile errors for the pending candidates whose kernel failed; drops them from
 * pending. */
static int record_compile_errors(sweep *s, unit *u)
{
    int kept = 0;
    for (int i = 0; i < u->pending_count; i++) {
        int c = u->pending[i];
        kernel_job *j = &s->ks.jobs[u->job[c]];
        if (j->ready) {
            u->pending[kept++] = c;
            continue;
        }
        if (!j->failed)   /* not compiled because of Ctrl-C: left for the rerun */
            continue;
        tune_record r;
        tune_record_init(&r, c);
        r.status = DB_STATUS_COMPILE_ERROR;
        snprintf(r.message, sizeof r.message, "%.500s", j->error[0] ? j->error : "not compiled");
        if (store(s, u, c, &r) != 0)
            return -1;
    }
    u->pending_count = kept;
    return 0;
}

int tune_sweep_run(const tune_space_set *set, const tune_gpu_info *gpu, const char *db_path, int threads)
{
    sweep s;
    memset(&s, 0, sizeof s);
    s.gpu = gpu;
    s.tty = isatty(STDOUT_FILENO);
    tune_sweep_interrupted = 0;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;   /* no SA_RESTART: poll() returns so the watchdog sees it */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int rc = 1;
    if (db_open(db_path, DB_OPEN_CREATE, &s.d, s.err, sizeof s.err) != 0)
        goto done;
    db_device dev = { .cc_major = gpu->dev.cc_major, .cc_minor = gpu->dev.cc_minor, .sm_count = gpu->dev.sm_count };
    snprintf(dev.name, sizeof dev.name, "%s", gpu->dev.name);
    snprintf(dev.arch, sizeof dev.arch, "%s", gpu->dev.arch);
    snprintf(dev.driver_version, sizeof dev.driver_version, "%s", gpu->driver_version);
    gen_nvrtc_version(dev.nvrtc_version, sizeof dev.nvrtc_version);
    char hash[GEN_HASH_LEN];
    file_hash(set->path, hash);
    if (db_device_upsert(s.d, &dev, &s.device_id, s.err, sizeof s.err) != 0 ||
        db_sweep_begin(s.d, set->path, hash, NULL, &s.sweep_id, s.err, sizeof s.err) != 0)
        goto done;
    printf("flashtune tune: sweep %lld into %s (device row %lld: driver %s, NVRTC %s)\n", (long long)s.sweep_id,
           db_path, (long long)s.device_id, dev.driver_version, dev.nvrtc_version);
    if (plan(&s, set) != 0)
        goto end_sweep;
    long stored = 0, pending = 0;
    for (int i = 0; i < s.unit_count; i++) {
        pending += s.units[i].pending_count;
        stored += s.units[i].cands->count - s.units[i].pending_count;
    }
    printf("flashtune tune: %d workloads, %ld candidates: %ld already in the database (resume), %ld to measure\n",
           s.unit_count, stored + pending, stored, pending);
    if (build(&s, threads) != 0)
        goto end_sweep;
    for (int i = 0; i < s.unit_count && !tune_sweep_interrupted; i++)
        if (record_compile_errors(&s, &s.units[i]) != 0)
            goto end_sweep;
    for (int i = 0; i < s.unit_count; i++) {
        const unit *u = &s.units[i];
        s.total += u->pending_count;
        if (u->space->strategy.kind == TUNE_PRUNE && !u->pruned_before)
            s.total += tune_sweep_keep_count(u->pending_count, u->space->strategy.keep);
    }
    s.timing_start = tune_now();
    int setup_failures = 0;
    for (int i = 0; i < s.unit_count && !tune_sweep_interrupted; i++) {
        unit *u = &s.units[i];
        if (!u->pending_count)
            continue;
        if (!s.ks.jobs[u->ref_job].ready) {
            snprintf(u->failure, sizeof u->failure, "the ref kernel did not compile: %.900s", s.ks.jobs[u->ref_job].error);
            setup_failures++;
            continue;
        }
        u->best_tflops = 0;
        int prc = measure_unit(&s, u);
        if (s.tty)
            printf("\n");
        if (prc == PHASE_DB_ERROR)
            goto end_sweep;
        if (prc == PHASE_SETUP_FAILED) {
            char label[200];
            unit_label(u, label, sizeof label);
            printf("flashtune tune: %s: not measured: %s\n", label, u->failure);
            setup_failures++;
        }
    }
    report(&s, db_path);
    rc = tune_sweep_interrupted ? TUNE_SWEEP_INTERRUPTED : setup_failures ? 1 : 0;
    if (tune_sweep_interrupted)
        printf("flashtune tune: interrupted; the results above are stored, a rerun resumes from there\n");

end_sweep:
    if (rc == 1 && s.err[0])
        fprintf(stderr, "flashtune tune: %s\n", s.err);
    s.err[0] = '\0';
    if (db_sweep_end(s.d, s.sweep_id, s.err, sizeof s.err) != 0) {
        fprintf(stderr, "flashtune tune: %s\n", s.err);
        rc = rc ? rc : 1;
    }
    s.err[0] = '\0';
done:
    if (s.err[0])
        fprintf(stderr, "flashtune tune: %s\n", s.err);
    for (int i = 0; i < s.unit_count; i++) {
        free(s.units[i].job);
        free(s.units[i].pending);
    }
    free(s.units);
    kernel_set_free(&s.ks);
    db_close(s.d);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}
