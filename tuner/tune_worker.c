/* The benchmark worker process: probes the GPU, validates and times candidates in a child that
 * owns the CUDA context, and speaks the line protocol of tune_worker.h. */
#include "tune_worker.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "gpu_harness.h"

double tune_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- pure helpers ------------------------------------------------------------------------ */

void tune_record_init(tune_record *r, int id)
{
    memset(r, 0, sizeof *r);
    r->id = id;
    r->status = DB_STATUS_OK;
    r->median_ms = r->min_ms = r->spread = r->tflops = r->rel_error = r->max_abs_error = NAN;
}

void tune_record_format(const tune_record *r, char *line, size_t len)
{
    char msg[sizeof r->message];
    snprintf(msg, sizeof msg, "%s", r->message[0] ? r->message : "-");
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    snprintf(line, len, "R %d %s %.9g %.9g %.9g %.9g %.9g %.9g %s\n", r->id, db_status_name(r->status), r->median_ms,
             r->min_ms, r->spread, r->tflops, r->rel_error, r->max_abs_error, msg);
}

int tune_record_parse(const char *line, tune_record *r)
{
    char status[32];
    int used = 0;
    tune_record_init(r, -1);
    if (sscanf(line, "R %d %31s %lf %lf %lf %lf %lf %lf %n", &r->id, status, &r->median_ms, &r->min_ms,
               &r->spread, &r->tflops, &r->rel_error, &r->max_abs_error, &used) != 8 || used == 0)
        return -1;
    int s = db_status_parse(status);
    if (s < 0)
        return -1;
    r->status = (db_status)s;
    const char *msg = line + used;
    if (strcmp(msg, "-") && strcmp(msg, "-\n"))
        snprintf(r->message, sizeof r->message, "%s", msg);
    size_t n = strlen(r->message);
    while (n && (r->message[n - 1] == '\n' || r->message[n - 1] == ' '))
        r->message[--n] = '\0';
    return 0;
}

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

double tune_flops(const tune_workload *w, int backward)
{
    double f = 2.0 * w->batch * w->heads * (double)w->seqlen_q * w->seqlen_k * (w->head_dim + w->head_dim_v);
    if (w->causal)
        f /= 2;
    return backward ? 2.5 * f : f;
}

double tune_threshold(int dtype)
{
    switch (dtype) {
    case 0: return 1e-5;
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

/* ---- child side ------------------------------------------------------------------------ */

/* Writes all of s to fd; the child dies (SIGPIPE) when the parent is gone. */
static void put(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            _exit(5);
        s += k;
        n -= (size_t)k;
    }
}

/* Signals and parent-death handling common to every child. */
static void child_init(pid_t parent)
{
    signal(SIGINT, SIG_IGN);    /* Ctrl-C reaches the whole group: the parent decides */
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
        _exit(6);
}

/* Forks a child joined to the caller by a pipe. Parent: returns the pid, *fd the read end.
 * Child: returns 0 after child_init, *fd the write end (the child must _exit). -1 (why) when
 * the pipe or the fork failed. */
static pid_t fork_child(int *fd, char *why, size_t len)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, len, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_init(parent);
        *fd = fds[1];
        return 0;
    }
    close(fds[1]);
    *fd = fds[0];
    return pid;
}

static void probe_child(int fd)
{
    char why[512], line[768];
    const cu_driver *cu;
    if (cu_driver_open(&cu, why, sizeof why) != 0) {
        snprintf(line, sizeof line, "N %s\n", why);
        put(fd, line);
        _exit(0);
    }
    CUdevice d;
    int count = 0;
    CUresult rc = cu->DeviceGetCount(&count);
    if (rc != CUDA_SUCCESS || count < 1 || cu->DeviceGet(&d, 0) != CUDA_SUCCESS) {
        char buf[256];
        snprintf(line, sizeof line, "N no CUDA device (cuDeviceGetCount: %s, %d devices)\n",
                 cu_result_str(rc, buf, sizeof buf), count);
        put(fd, line);
        _exit(0);
    }
    char name[128] = "";
    int major = 0, minor = 0, sms = 0, smem = 0, l2 = 0, version = 0;
    if (cu->DeviceGetName(name, sizeof name, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d) != CUDA_SUCCESS ||
        cu->DriverGetVersion(&version) != CUDA_SUCCESS) {
        put(fd, "N cuDeviceGetName/cuDeviceGetAttribute/cuDriverGetVersion failed on device 0\n");
        _exit(0);
    }
    snprintf(line, sizeof line, "D %d %d %d %d %d %d.%d %s\n", major, minor, sms, smem, l2, version / 1000,
             (version % 1000) / 10, name);
    put(fd, line);
    _exit(0);
}

int tune_worker_probe(tune_gpu_info *out, double timeout_s, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    int fd;
    pid_t pid = fork_child(&fd, why, len);
    if (pid < 0)
        return -1;
    if (pid == 0)
        probe_child(fd);
    tune_worker_proc w = { .pid = pid, .fd = fd };
    char line[768], how[128];
    int got = tune_worker_read_line(&w, tune_now() + timeout_s, line, sizeof line);
    tune_worker_stop(&w, how, sizeof how);
    if (got != 1) {
        snprintf(why, len, "the GPU probe %s (%s)", got == -1 ? "timed out" : got == -2 ? "was interrupted" : "died", how);
        return -1;
    }
    if (line[0] == 'N') {
        snprintf(why, len, "%s", line + 2);
        return 0;
    }
    tune_device *dev = &out->dev;
    int used = 0;
    if (sscanf(line, "D %d %d %d %d %d %15s %n", &dev->cc_major, &dev->cc_minor, &dev->sm_count,
               &dev->smem_per_block_optin, &out->l2_bytes, out->driver_version, &used) != 6 || !used) {
        snprintf(why, len, "the GPU probe answered '%.200s'", line);
        return -1;
    }
    snprintf(dev->name, sizeof dev->name, "%s", line + used);
    snprintf(dev->arch, sizeof dev->arch, "sm_%d%d", dev->cc_major, dev->cc_minor);
    dev->real = 1;
    return 1;
}

/* The worker's state in the child. Inputs are made and outputs compared on the device (the
 * ref module's utilities): the workloads hold tens of millions of elements, and doing either on
 * the host cost seconds per workload and a third of a second per candidate. */
typedef struct bench_ctx {
    gpu_session s;
    gpu_problem p;
    CUstream stream;
    CUevent start, stop;
    CUdeviceptr flush;
    size_t flush_bytes;
    int backward;
    CUmodule ref_module;        /* the ref family: reference, input fill and comparison kernels */
    CUfunction fill, compare;
    CUdeviceptr want[3];        /* the reference's outputs, same types as out[] */
    CUdeviceptr stats;          /* ft_ref_compare's four doubles */
    size_t elems[3];
    int acc[3];                 /* 1: accumulator-typed buffer (L) */
    CUdeviceptr out[3];
    int outputs;
} bench_ctx;

static const char *cu_str(CUresult rc)
{
    static char buf[256];
    return cu_result_str(rc, buf, sizeof buf);
}

/* A grid-stride utility launch: enough blocks to fill the GPU a few times over. */
static CUresult launch_utility(bench_ctx *b, CUfunction fn, void **params)
{
    const unsigned blocks = (unsigned)(b->s.sm_count > 0 ? b->s.sm_count * 8 : 1024);
    return b->s.cu->LaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, b->stream, params, NULL);
}

/* Standard normal values into n elements at dst, from stream `seed`: never zeros, softmax
 * neither flat nor one-hot. */
static CUresult fill_normal(bench_ctx *b, CUdeviceptr dst, size_t n, unsigned long long seed)
{
    long long count = (long long)n;
    void *params[] = { &dst, &count, &seed };
    return launch_utility(b, b->fill, params);
}

/* Compares out[i] with want[i] on the device: the figures tune_compare gives on the host. */
static CUresult compare_output(bench_ctx *b, int i, double *rel, double *max_abs, long *bad)
{
    const cu_driver *cu = b->s.cu;
    double stats[4];
    long long n = (long long)b->elems[i];
    int acc = b->acc[i];
    void *params[] = { &b->out[i], &b->want[i], &n, &acc, &b->stats };
    CUresult rc;
    if ((rc = cu->MemsetD8Async(b->stats, 0, sizeof stats, b->stream)) != CUDA_SUCCESS ||
        (rc = launch_utility(b, b->compare, params)) != CUDA_SUCCESS ||
        (rc = cu->StreamSynchronize(b->stream)) != CUDA_SUCCESS ||
        (rc = cu->MemcpyDtoH(stats, b->stats, sizeof stats)) != CUDA_SUCCESS)
        return rc;
    *bad = tune_compare_finish(stats, rel, max_abs);
    return CUDA_SUCCESS;
}

static size_t output_bytes(const bench_ctx *b, int i)
{
    return b->elems[i] * (b->acc[i] ? gpu_acc_bytes(b->p.dtype) : gpu_dtype_bytes(b->p.dtype));
}

/* Poisons the outputs (and delta for the backward) with NaN. */
static int poison_outputs(bench_ctx *b)
{
    for (int i = 0; i < b->outputs; i++)
        if (gpu_poison(&b->s, b->out[i], output_bytes(b, i)) != 0)
            return -1;
    if (b->backward) {
        size_t rows = (size_t)b->p.batch * b->p.heads * b->p.seqlen_q;
        if (gpu_poison(&b->s, b->p.delta, rows * gpu_acc_bytes(b->p.dtype)) != 0)
            return -1;
    }
    return 0;
}

static CUresult launch_async(bench_ctx *b, const gpu_kernel *k, int backward)
{
    return (CUresult)(backward ? gpu_backward_async(&b->s, k, &b->p, b->stream)
                               : gpu_forward_async(&b->s, k, &b->p, b->stream));
}

/* Sets up context, buffers, inputs and the reference outputs. 0 or -1 (why). */
static int setup(bench_ctx *b, const tune_worker_task *t, char *why, size_t len)
{
    const cu_driver *cu;
    if (gpu_open(&b->s, why, len) != 0)
        return -1;
    cu = b->s.cu;
    const tune_workload *w = &t->workload;
    b->backward = t->backward;
    b->p = (gpu_problem){ .dtype = w->dtype, .batch = w->batch, .heads = w->heads, .seqlen_q = w->seqlen_q,
                          .seqlen_k = w->seqlen_k, .head_dim = w->head_dim, .head_dim_v = w->head_dim_v,
                          .causal = w->causal, .layout = 0 };
    if (gpu_problem_alloc(&b->s, &b->p, why, len) != 0)
        return -1;
    CUresult rc;
    if ((rc = cu->StreamCreate(&b->stream, 0)) != CUDA_SUCCESS || (rc = cu->EventCreate(&b->start, 0)) != CUDA_SUCCESS ||
        (rc = cu->EventCreate(&b->stop, 0)) != CUDA_SUCCESS) {
        snprintf(why, len, "cuStreamCreate/cuEventCreate: %s", cu_str(rc));
        return -1;
    }
    if (t->l2_bytes > 0) {
        b->flush_bytes = 2 * (size_t)t->l2_bytes;
        if ((rc = cu->MemAlloc(&b->flush, b->flush_bytes)) != CUDA_SUCCESS) {
            snprintf(why, len, "cuMemAlloc(%zu bytes of L2 flush buffer): %s", b->flush_bytes, cu_str(rc));
            return -1;
        }
    }
    if ((rc = cu->ModuleLoadData(&b->ref_module, t->ref_cubin)) != CUDA_SUCCESS ||
        (rc = cu->ModuleGetFunction(&b->fill, b->ref_module, "ft_ref_fill_normal")) != CUDA_SUCCESS ||
        (rc = cu->ModuleGetFunction(&b->compare, b->ref_module, "ft_ref_compare")) != CUDA_SUCCESS ||
        (rc = cu->MemAlloc(&b->stats, 4 * sizeof(double))) != CUDA_SUCCESS) {
        snprintf(why, len, "loading the ref module: %s", cu_str(rc));
        return -1;
    }
    const unsigned long long seed = t->seed ? t->seed : 0x243F6A8885A308D3ULL;
    struct { CUdeviceptr dst; size_t n; } in[] = {
        { b->p.q, b->p.q_elems }, { b->p.k, b->p.k_elems }, { b->p.v, b->p.v_elems }, { b->p.dout, b->p.o_elems },
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        if ((rc = fill_normal(b, in[i].dst, in[i].n, seed + i)) != CUDA_SUCCESS) {
            snprintf(why, len, "making the random inputs: %s", cu_str(rc));
            return -1;
        }
    size_t rows = (size_t)b->p.batch * b->p.heads * b->p.seqlen_q;
    if (b->backward) {
        b->outputs = 3;
        b->out[0] = b->p.dq, b->elems[0] = b->p.q_elems;
        b->out[1] = b->p.dk, b->elems[1] = b->p.k_elems;
        b->out[2] = b->p.dv, b->elems[2] = b->p.v_elems;
    } else {
        b->outputs = 2;
        b->out[0] = b->p.o, b->elems[0] = b->p.o_elems;
        b->out[1] = b->p.lse, b->elems[1] = rows, b->acc[1] = 1;
    }

    /* The reference: its forward O and L also feed every backward candidate. */
    gpu_kernel ref;
    memset(&ref, 0, sizeof ref);
    ref.config = *t->ref_config;
    ref.module = b->ref_module;
    char what[512];
    int bad = poison_outputs(b) != 0 || gpu_forward(&b->s, &ref, &b->p, b->stream, what, sizeof what) != 0;
    if (!bad && b->backward)
        bad = poison_outputs(b) != 0 || gpu_backward(&b->s, &ref, &b->p, b->stream, what, sizeof what) != 0;
    if (bad) {
        snprintf(why, len, "the ref family failed: %s", what);
        return -1;
    }
    for (int i = 0; i < b->outputs; i++) {
        const size_t bytes = output_bytes(b, i);
        if ((rc = cu->MemAlloc(&b->want[i], bytes)) != CUDA_SUCCESS ||
            (rc = cu->MemcpyDtoD(b->want[i], b->out[i], bytes)) != CUDA_SUCCESS) {
            snprintf(why, len, "keeping the reference (%zu bytes): %s", bytes, cu_str(rc));
            return -1;
        }
        /* A reference with NaN (never expected) would make every candidate look wrong. */
        double rel, mx;
        long nans;
        if ((rc = compare_output(b, i, &rel, &mx, &nans)) != CUDA_SUCCESS || nans || rel != 0) {
            snprintf(why, len, "the reference output %d is not finite (%ld values) or the comparison is broken "
                     "(self-difference %g): %s", i, nans, rel, cu_str(rc));
            return -1;
        }
    }
    return 0;
}

/* One untimed iteration for the warm-up: flush, launch, wait. */
static CUresult iterate(bench_ctx *b, const gpu_kernel *k, int timed, float *ms)
{
    const cu_driver *cu = b->s.cu;
    CUresult rc;
    if (b->flush && (rc = cu->MemsetD8Async(b->flush, (unsigned char)(rand() & 0xff), b->flush_bytes, b->stream)) != CUDA_SUCCESS)
        return rc;
    if (timed && (rc = cu->EventRecord(b->start, b->stream)) != CUDA_SUCCESS)
        return rc;
    if ((rc = launch_async(b, k, b->backward)) != CUDA_SUCCESS)
        return rc;
    if (!timed)
        return cu->StreamSynchronize(b->stream);
    if ((rc = cu->EventRecord(b->stop, b->stream)) != CUDA_SUCCESS || (rc = cu->EventSynchronize(b->stop)) != CUDA_SUCCESS)
        return rc;
    return cu->EventElapsedTime(ms, b->start, b->stop);
}

/* Validates then times one candidate into r. Returns 0, or -1 after a CUDA error (r says
 * which; the context may be unusable, so the worker exits). */
static int run_candidate(bench_ctx *b, const tune_worker_task *t, const tune_worker_item *it, tune_record *r)
{
    const cu_driver *cu = b->s.cu;
    gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.config = *it->config;
    CUresult rc = cu->ModuleLoadData(&k.module, it->cubin);
    if (rc != CUDA_SUCCESS) {
        r->status = DB_STATUS_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "cuModuleLoadData: %s", cu_str(rc));
        return -1;
    }
    int fail = 0;
    /* Validation: NaN-poisoned outputs, one run, compared with the reference. */
    if (poison_outputs(b) != 0) {
        r->status = DB_STATUS_CRASHED;
        snprintf(r->message, sizeof r->message, "poisoning the outputs failed");
        fail = 1;
    } else if ((rc = launch_async(b, &k, b->backward)) != CUDA_SUCCESS) {
        r->status = DB_STATUS_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "launch: %s", cu_str(rc));
        fail = 1;
    } else if ((rc = cu->StreamSynchronize(b->stream)) != CUDA_SUCCESS) {
        r->status = DB_STATUS_CRASHED;
        snprintf(r->message, sizeof r->message, "kernel: %s", cu_str(rc));
        fail = 1;
    }
    static const char *const fwd_names[] = { "O", "L" }, *const bwd_names[] = { "dQ", "dK", "dV" };
    double limit = tune_threshold(b->p.dtype);
    r->rel_error = 0;
    r->max_abs_error = 0;
    for (int i = 0; i < b->outputs && !fail; i++) {
        double rel, mx;
        long nans;
        if ((rc = compare_output(b, i, &rel, &mx, &nans)) != CUDA_SUCCESS) {
            r->status = DB_STATUS_CRASHED;
            snprintf(r->message, sizeof r->message, "comparing the output: %s", cu_str(rc));
            fail = 1;
            break;
        }
        const char *name = b->backward ? bwd_names[i] : fwd_names[i];
        if (rel > r->rel_error || isnan(rel))
            r->rel_error = rel;
        if (mx > r->max_abs_error || isnan(mx))
            r->max_abs_error = mx;
        if (r->status == DB_STATUS_OK && (nans || !(rel < limit))) {
            r->status = DB_STATUS_INVALID;
            if (nans)
                snprintf(r->message, sizeof r->message, "%s: %ld NaN/Inf values (unwritten or overflow)", name, nans);
            else
                snprintf(r->message, sizeof r->message, "%s: relative error %.3e over the %s limit %.0e", name, rel,
                         gen_dtype_name(b->p.dtype), limit);
        }
    }
    if (fail) {
        cu->ModuleUnload(k.module);
        return -1;
    }
    if (r->status != DB_STATUS_OK) {   /* wrong results: not worth timing */
        cu->ModuleUnload(k.module);
        return 0;
    }

    /* Timing: warm-up for warmup_ms, then enough repetitions to fill rep_ms. */
    double t0 = tune_now(), elapsed = 0;
    int warm = 0;
    do {
        if ((rc = iterate(b, &k, 0, NULL)) != CUDA_SUCCESS)
            break;
        warm++;
        elapsed = tune_now() - t0;
    } while (elapsed * 1e3 < t->bench.warmup_ms || warm < 2);
    float *ms = NULL;
    int reps = 0;
    if (rc == CUDA_SUCCESS) {
        double per = elapsed / warm * 1e3;
        double want = per > 0 ? ceil(t->bench.rep_ms / per) : 1000;
        reps = want < 5 ? 5 : want > 100000 ? 100000 : (int)want;
        ms = malloc((size_t)reps * sizeof *ms);
        if (!ms)
            reps = 0;
        for (int i = 0; i < reps; i++)
            if ((rc = iterate(b, &k, 1, &ms[i])) != CUDA_SUCCESS)
                break;
    }
    cu->ModuleUnload(k.module);
    if (rc != CUDA_SUCCESS) {
        r->status = DB_STATUS_CRASHED;
        snprintf(r->message, sizeof r->message, "while timing: %s", cu_str(rc));
        free(ms);
        return -1;
    }
    if (!ms) {
        r->status = DB_STATUS_CRASHED;
        snprintf(r->message, sizeof r->message, "out of host memory for %d timings", reps);
        return -1;
    }
    tune_stats(ms, reps, &r->median_ms, &r->min_ms, &r->spread);
    free(ms);
    r->tflops = r->median_ms > 0 ? tune_flops(&t->workload, b->backward) / (r->median_ms * 1e-3) / 1e12 : NAN;
    if (!(r->median_ms > 0) && r->status == DB_STATUS_OK) {
        r->status = DB_STATUS_INVALID;
        snprintf(r->message, sizeof r->message, "median time %g ms is not positive", r->median_ms);
    }
    return 0;
}

static void worker_child(const tune_worker_task *t, int first, int fd)
{
    bench_ctx b;
    memset(&b, 0, sizeof b);
    char why[1024], line[1024];
    if (setup(&b, t, why, sizeof why) != 0) {
        snprintf(line, sizeof line, "E %.1000s\n", why);
        for (char *c = line + 2; *c && c[1]; c++)
            if (*c == '\n')
                *c = ' ';
        put(fd, line);
        _exit(3);
    }
    put(fd, "READY\n");
    for (int i = first; i < t->count; i++) {
        snprintf(line, sizeof line, "B %d\n", t->items[i].id);
        put(fd, line);
        tune_record r;
        tune_record_init(&r, t->items[i].id);
        int rc = run_candidate(&b, t, &t->items[i], &r);
        tune_record_format(&r, line, sizeof line);
        put(fd, line);
        if (rc != 0)
            _exit(4);   /* after a CUDA error the context may be dead: a fresh worker goes on */
    }
    /* Orderly release, so a leak here never hides one elsewhere. */
    for (int i = 0; i < b.outputs; i++)
        b.s.cu->MemFree(b.want[i]);
    b.s.cu->MemFree(b.stats);
    b.s.cu->ModuleUnload(b.ref_module);
    if (b.flush)
        b.s.cu->MemFree(b.flush);
    b.s.cu->EventDestroy(b.start);
    b.s.cu->EventDestroy(b.stop);
    b.s.cu->StreamDestroy(b.stream);
    gpu_problem_free(&b.s, &b.p);
    gpu_close(&b.s);
    _exit(0);
}

int tune_worker_start(const tune_worker_task *task, int first, tune_worker_proc *w, char *why, size_t len)
{
    memset(w, 0, sizeof *w);
    w->pid = -1;
    w->fd = -1;
    int fd;
    pid_t pid = fork_child(&fd, why, len);
    if (pid < 0)
        return -1;
    if (pid == 0)
        worker_child(task, first, fd);
    w->pid = pid;
    w->fd = fd;
    return 0;
}

int tune_worker_read_line(tune_worker_proc *w, double deadline, char *line, size_t len)
{
    for (;;) {
        char *nl = memchr(w->buf, '\n', w->used);
        if (nl || w->used == sizeof w->buf) {
            size_t n = nl ? (size_t)(nl - w->buf) : w->used;
            size_t keep = n < len ? n : len - 1;
            memcpy(line, w->buf, keep);
            line[keep] = '\0';
            size_t eat = nl ? n + 1 : n;
            memmove(w->buf, w->buf + eat, w->used - eat);
            w->used -= eat;
            return 1;
        }
        if (w->fd < 0)
            return 0;
        double left = deadline - tune_now();
        if (left <= 0)
            return -1;
        struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
        int ms = left > 3600 ? 3600000 : (int)(left * 1e3) + 1;
        int got = poll(&pfd, 1, ms);
        if (got < 0) {
            if (errno == EINTR)
                return -2;
            return 0;
        }
        if (got == 0)
            continue;
        ssize_t k = read(w->fd, w->buf + w->used, sizeof w->buf - w->used);
        if (k < 0 && errno == EINTR)
            return -2;
        if (k <= 0) {
            close(w->fd);
            w->fd = -1;
            w->eof = 1;
            if (w->used) {   /* a last line without its newline */
                size_t keep = w->used < len ? w->used : len - 1;
                memcpy(line, w->buf, keep);
                line[keep] = '\0';
                w->used = 0;
                return 1;
            }
            return 0;
        }
        w->used += (size_t)k;
    }
}

void tune_worker_stop(tune_worker_proc *w, char *how, size_t len)
{
    if (how && len)
        snprintf(how, len, "already reaped");
    if (w->fd >= 0) {
        close(w->fd);
        w->fd = -1;
    }
    if (w->pid <= 0)
        return;
    int status = 0;
    pid_t got = waitpid(w->pid, &status, WNOHANG);
    /* After end of file the child is exiting: give it a moment so its real status is seen. */
    for (int i = 0; got == 0 && w->eof && i < 200; i++) {
        struct timespec nap = { 0, 10 * 1000 * 1000 };
        nanosleep(&nap, NULL);
        got = waitpid(w->pid, &status, WNOHANG);
    }
    if (got == 0) {
        /* Still running (hung or we are leaving): it cannot be trusted to stop by itself. */
        kill(w->pid, SIGKILL);
        while ((got = waitpid(w->pid, &status, 0)) < 0 && errno == EINTR)
            ;
    }
    w->pid = -1;
    if (!how || !len)
        return;
    if (got < 0)
        snprintf(how, len, "waitpid: %s", strerror(errno));
    else if (WIFEXITED(status))
        snprintf(how, len, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(how, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(how, len, "wait status 0x%x", status);
}
