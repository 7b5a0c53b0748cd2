/* The measurement of candidates in the worker process: the workload's buffers, random inputs
 * and the reference's outputs, made once; then per candidate NaN-poisoned outputs, one run
 * compared with the reference, and CUDA-event timings. Inputs are made and outputs compared on
 * the device (the ref module's utilities): the workloads hold tens of millions of elements, and
 * doing either on the host cost seconds per workload and a third of a second per candidate.
 * Every launch goes through the launch module, as the runtime's do. */
#include "tune_measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ln_internal.h"
#include "tune_clocks.h"
#include "tune_pipe.h"

/* Timed iterations are queued in batches, their events read after the batch, so the GPU runs
 * them back to back as an application does (and compare.py's timing), not idle between them for
 * a host wait after each. That wait did not cause the drift between candidates that the confirm
 * step answers: sustained load did (notes/kernels.md, "Sustained load"). */
enum { TIMED_BATCH = 32 };

struct tune_measure {
    ln_session s;
    ln_problem p;
    ln_extents x;
    CUstream stream;
    CUevent start[TIMED_BATCH], stop[TIMED_BATCH];   /* a batch of timed iterations' events */
    CUdeviceptr flush;
    size_t flush_bytes;
    int backward;
    int tf32;                   /* the workload's products may round to TF32: TF32's threshold */
    CUmodule ref_module;        /* the ref family: reference, input fill and comparison kernels */
    ln_utilities util;
    CUdeviceptr want[4];        /* the reference's outputs, same types as out[] */
    CUdeviceptr stats;          /* ft_ref_compare's four doubles */
    size_t elems[4];
    int acc[4];                 /* 1: accumulator-typed buffer (L, the sinks' gradient) */
    CUdeviceptr out[4];
    int outputs;
    CUdeviceptr cu_seqlens[2];  /* a variable-length workload's prefix sums (queries, keys), else 0 */
    tune_clocks *clocks;        /* NVML for this GPU, or NULL: the results then carry no clocks */
    char clocks_why[256];       /* why clocks is NULL */
    tune_load load;             /* the GPU's load from this worker's timings (tune_warmup_ms) */
    tune_setup_times times;     /* where setup's seconds went (the worker's READY line) */
};

static const char *cu_str(CUresult rc)
{
    static char buf[256];
    return cu_result_str(rc, buf, sizeof buf);
}

/* Compares out[i] with want[i] on the device: the figures tune_compare gives on the host. */
static CUresult compare_output(tune_measure *m, int i, double *rel, double *max_abs, long *bad)
{
    const cu_driver *cu = m->s.cu;
    double stats[4];
    CUresult rc;
    if ((rc = cu->MemsetD8Async(m->stats, 0, sizeof stats, m->stream)) != CUDA_SUCCESS ||
        (rc = ln_compare(cu, &m->util, m->out[i], m->want[i], m->elems[i], m->acc[i], m->stats, m->stream)) !=
            CUDA_SUCCESS ||
        (rc = cu->StreamSynchronize(m->stream)) != CUDA_SUCCESS ||
        (rc = cu->MemcpyDtoH(stats, m->stats, sizeof stats)) != CUDA_SUCCESS)
        return rc;
    *bad = tune_compare_finish(stats, rel, max_abs);
    return CUDA_SUCCESS;
}

static size_t output_bytes(const tune_measure *m, int i)
{
    return m->elems[i] * (m->acc[i] ? ln_acc_bytes(m->p.dtype) : ln_elem_bytes(m->p.dtype));
}

/* Poisons the outputs (and delta for the backward) with NaN. */
static int poison_outputs(tune_measure *m)
{
    for (int i = 0; i < m->outputs; i++)
        if (ln_poison(m->s.cu, m->out[i], output_bytes(m, i)) != CUDA_SUCCESS)
            return -1;
    if (m->backward && ln_poison(m->s.cu, m->p.delta, m->x.rows * ln_acc_bytes(m->p.dtype)) != CUDA_SUCCESS)
        return -1;
    return 0;
}

/* The steps of operation op of config in module, for the workload. 0, or -1 (why). */
static int plan_for(tune_measure *m, const gen_config *config, CUmodule module, ln_op op, ln_plan *plan, char *why,
                    size_t len)
{
    if (ln_plan_make(config, op, m->p.seqlen_q, m->p.seqlen_k, plan, why, len) != 0)
        return -1;
    const char *missing = "?";
    const CUresult rc = ln_plan_bind(m->s.cu, plan, module, &missing);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "cuModuleGetFunction(%s): %s", missing, cu_str(rc));
        return -1;
    }
    return 0;
}

/* One reference operation, poisoned outputs first, waited for. 0, or -1 (why). */
static int run_reference(tune_measure *m, const gen_config *ref, ln_op op, char *why, size_t len)
{
    ln_plan plan;
    if (plan_for(m, ref, m->ref_module, op, &plan, why, len) != 0)
        return -1;
    if (poison_outputs(m) != 0) {
        snprintf(why, len, "poisoning the outputs failed");
        return -1;
    }
    CUresult rc = ln_launch(m->s.cu, &plan, &m->p, m->stream);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "launch failed: %s", cu_str(rc));
        return -1;
    }
    if ((rc = m->s.cu->StreamSynchronize(m->stream)) != CUDA_SUCCESS) {
        snprintf(why, len, "kernel failed: %s", cu_str(rc));
        return -1;
    }
    return 0;
}

/* The softcap a softcapped workload is measured with (Gemma 2's): the value costs nothing more or
 * less than another, and validation checks it against the reference all the same. */
#define TUNE_SOFTCAP 30.0

/* The workload as the launch module's problem: contiguous [B, H, N, D] (K and V over heads_k
 * heads), or a variable-length batch packed [total, H, D] as FlashAttention's varlen takes it
 * (its prefix sums: prefix_sums), the default scale, the workload's mask, the softcap when it has
 * one. */
static void workload_problem(const db_workload *w, const int *prefix_q, const int *prefix_k, ln_problem *p)
{
    const int heads_k = w->heads_k ? w->heads_k : w->heads;
    *p = (ln_problem){ .dtype = w->dtype, .batch = w->batch, .heads = w->heads, .seqlen_q = w->seqlen_q,
                       .seqlen_k = w->seqlen_k, .head_dim = w->head_dim, .head_dim_v = w->head_dim_v,
                       .softmax_scale = ln_softmax_scale(0, w->head_dim),
                       .heads_k = heads_k, .softcap = w->softcap ? TUNE_SOFTCAP : 0 };
    if (w->varlen) {
        p->total_q = prefix_q[w->batch];
        p->total_k = prefix_k[w->batch];
    }
    db_workload key;
    int left, right;
    tune_workload_db(w, DB_OP_FWD, &key);
    db_workload_mask_sides(&key, &left, &right);
    ln_problem_mask(p, 0, w->bottom_right, left, right);
    const struct { long long *stride; int heads, rows, dim; } t[] = {
        { p->q_stride, w->heads, w->varlen ? p->total_q : w->seqlen_q, w->head_dim },
        { p->k_stride, heads_k, w->varlen ? p->total_k : w->seqlen_k, w->head_dim },
        { p->v_stride, heads_k, w->varlen ? p->total_k : w->seqlen_k, w->head_dim_v },
        { p->o_stride, w->heads, w->varlen ? p->total_q : w->seqlen_q, w->head_dim_v },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        ln_contiguous_strides(t[i].heads, t[i].rows, t[i].dim, t[i].stride);
        if (w->varlen) {   /* [total, H, D]: a row holds every head */
            t[i].stride[1] = t[i].dim;
            t[i].stride[2] = (long long)t[i].heads * t[i].dim;
        }
    }
}

/* A variable-length workload's lengths as prefix sums, on the host (OUT, batch + 1 each) and in
 * m's problem on the device. 0, or -1 (why). */
static int upload_prefix_sums(tune_measure *m, const db_workload *w, int *prefix, char *why, size_t len)
{
    const int n = w->batch;
    int *lengths = malloc(2 * (size_t)n * sizeof *lengths);
    if (!lengths || tune_varlen_lengths(w, lengths, lengths + n, why, len) != 0) {
        if (!lengths)
            snprintf(why, len, "out of host memory for %d lengths", n);
        free(lengths);
        return -1;
    }
    for (int s = 0; s < 2; s++) {
        prefix[s * (n + 1)] = 0;
        for (int b = 0; b < n; b++)
            prefix[s * (n + 1) + b + 1] = prefix[s * (n + 1) + b] + lengths[s * n + b];
    }
    free(lengths);
    const size_t bytes = ((size_t)n + 1) * sizeof *prefix;
    CUdeviceptr *dev[2] = { &m->cu_seqlens[0], &m->cu_seqlens[1] };
    for (int s = 0; s < 2; s++) {
        CUresult rc = m->s.cu->MemAlloc(dev[s], bytes);
        if (rc == CUDA_SUCCESS)
            rc = m->s.cu->MemcpyHtoD(*dev[s], prefix + s * (n + 1), bytes);
        if (rc != CUDA_SUCCESS) {
            snprintf(why, len, "prefix sums to the device: %s", cu_str(rc));
            return -1;
        }
    }
    return 0;
}

/* A workload with sinks: one logit a query head, uniform in [-1, 2) from the seed (the host
 * makes them: a handful), in the accumulator type, and their gradient's buffer; m's problem
 * points at both. 0, or -1 (why). */
static int make_sinks(tune_measure *m, unsigned long long seed, char *why, size_t len)
{
    const cu_driver *cu = m->s.cu;
    const int heads = m->p.heads;
    const size_t acc = ln_acc_bytes(m->p.dtype), bytes = (size_t)heads * acc;
    unsigned char *host = malloc(bytes);
    if (!host) {
        snprintf(why, len, "out of host memory for %d sinks", heads);
        return -1;
    }
    unsigned long long x = seed ^ 0x9E3779B97F4A7C15ULL;
    for (int h = 0; h < heads; h++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        const double u = (double)((x * 0x2545F4914F6CDD1DULL) >> 11) * 0x1p-53;
        const double logit = 3.0 * u - 1.0;
        if (acc == sizeof(double))
            memcpy(host + h * acc, &logit, sizeof logit);
        else {
            const float f = (float)logit;
            memcpy(host + h * acc, &f, sizeof f);
        }
    }
    CUresult rc = cu->MemAlloc(&m->p.sinks, bytes);
    if (rc == CUDA_SUCCESS)
        rc = cu->MemcpyHtoD(m->p.sinks, host, bytes);
    if (rc == CUDA_SUCCESS && m->backward)
        rc = cu->MemAlloc(&m->p.dsinks, bytes);
    free(host);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "the sinks of %d heads to the device: %s", heads, cu_str(rc));
        return -1;
    }
    return 0;
}

/* NVML for the session's GPU, found by its PCI address (NVML numbers GPUs its own way, and
 * CUDA_VISIBLE_DEVICES renumbers CUDA's); NULL where NVML cannot say, which costs nothing
 * but the clocks. */
static tune_clocks *open_clocks(const ln_session *s, char *why, size_t len)
{
    const cu_driver *cu = s->cu;
    int domain, bus, device;
    if (cu->DeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, s->device) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, s->device) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, s->device) != CUDA_SUCCESS) {
        snprintf(why, len, "the GPU's PCI address is unknown to the CUDA driver");
        return NULL;
    }
    char address[32];
    snprintf(address, sizeof address, "%04x:%02x:%02x.0", domain, bus, device);
    return tune_clocks_open(address, why, len);
}

/* Seconds since *mark, which moves to now: one phase of setup's time. */
static double lap(double *mark)
{
    const double now = tune_now(), s = now - *mark;
    *mark = now;
    return s;
}

/* Sets up context, buffers, inputs and the reference outputs. 0 or -1 (why). */
static int setup(tune_measure *m, const tune_worker_task *t, char *why, size_t len)
{
    double mark = tune_now();
    if (ln_session_open_device(&m->s, t->device, why, len) != 0)
        return -1;
    const cu_driver *cu = m->s.cu;
    m->times.open_s = lap(&mark);
    m->clocks = open_clocks(&m->s, m->clocks_why, sizeof m->clocks_why);
    m->times.clocks_s = lap(&mark);
    m->backward = t->backward;
    const db_workload *w = &t->workload;
    int *prefix = w->varlen ? malloc(2 * ((size_t)w->batch + 1) * sizeof *prefix) : NULL;
    if (w->varlen && (!prefix || upload_prefix_sums(m, w, prefix, why, len) != 0)) {
        if (!prefix)
            snprintf(why, len, "out of host memory for %d prefix sums", w->batch);
        free(prefix);
        return -1;
    }
    workload_problem(w, prefix, prefix ? prefix + w->batch + 1 : NULL, &m->p);
    free(prefix);
    m->p.cu_seqlens_q = m->cu_seqlens[0];
    m->p.cu_seqlens_k = m->cu_seqlens[1];
    ln_problem_extents(&m->p, &m->x);
    if (ln_buffers_alloc(cu, &m->p, why, len) != 0)
        return -1;
    CUresult rc = cu->StreamCreate(&m->stream, 0);
    for (int i = 0; i < TIMED_BATCH && rc == CUDA_SUCCESS; i++)
        if ((rc = cu->EventCreate(&m->start[i], 0)) == CUDA_SUCCESS)
            rc = cu->EventCreate(&m->stop[i], 0);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, len, "cuStreamCreate/cuEventCreate: %s", cu_str(rc));
        return -1;
    }
    if (t->l2_bytes > 0) {
        m->flush_bytes = 2 * (size_t)t->l2_bytes;
        if ((rc = cu->MemAlloc(&m->flush, m->flush_bytes)) != CUDA_SUCCESS) {
            snprintf(why, len, "cuMemAlloc(%zu bytes of L2 flush buffer): %s", m->flush_bytes, cu_str(rc));
            return -1;
        }
    }
    const char *what;
    if ((rc = ln_module_load(cu, t->ref_config, t->ref_cubin, &m->ref_module, &what)) != CUDA_SUCCESS ||
        (rc = ln_utilities_load(cu, m->ref_module, m->s.sm_count, &m->util)) != CUDA_SUCCESS ||
        (rc = cu->MemAlloc(&m->stats, 4 * sizeof(double))) != CUDA_SUCCESS) {
        snprintf(why, len, "loading the ref module: %s", cu_str(rc));
        return -1;
    }
    const unsigned long long seed = t->seed ? t->seed : 0x243F6A8885A308D3ULL;
    struct { CUdeviceptr dst; size_t n; } in[] = {
        { m->p.q, m->x.q }, { m->p.k, m->x.k }, { m->p.v, m->x.v }, { m->p.dout, m->x.o },
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        if ((rc = ln_fill_normal(cu, &m->util, in[i].dst, in[i].n, seed + i, m->stream)) != CUDA_SUCCESS) {
            snprintf(why, len, "making the random inputs: %s", cu_str(rc));
            return -1;
        }
    if (w->sinks && make_sinks(m, seed, why, len) != 0)
        return -1;
    m->tf32 = w->tf32;
    if (m->backward) {
        m->outputs = 3;
        m->out[0] = m->p.dq, m->elems[0] = m->x.q;
        m->out[1] = m->p.dk, m->elems[1] = m->x.k;
        m->out[2] = m->p.dv, m->elems[2] = m->x.v;
        if (w->sinks) {   /* the sinks' gradient, summed over the batch */
            m->outputs = 4;
            m->out[3] = m->p.dsinks, m->elems[3] = (size_t)m->p.heads, m->acc[3] = 1;
        }
    } else {
        m->outputs = 2;
        m->out[0] = m->p.o, m->elems[0] = m->x.o;
        m->out[1] = m->p.lse, m->elems[1] = m->x.rows, m->acc[1] = 1;
    }

    if ((rc = cu->StreamSynchronize(m->stream)) != CUDA_SUCCESS) {   /* the inputs made, for their time */
        snprintf(why, len, "making the random inputs: %s", cu_str(rc));
        return -1;
    }
    m->times.inputs_s = lap(&mark);

    /* The reference: its forward O and L also feed every backward candidate. */
    char what_failed[512];
    if (run_reference(m, t->ref_config, LN_FORWARD, what_failed, sizeof what_failed) != 0 ||
        (m->backward && run_reference(m, t->ref_config, LN_BACKWARD, what_failed, sizeof what_failed) != 0)) {
        snprintf(why, len, "the ref family failed: %s", what_failed);
        return -1;
    }
    for (int i = 0; i < m->outputs; i++) {
        const size_t bytes = output_bytes(m, i);
        if ((rc = cu->MemAlloc(&m->want[i], bytes)) != CUDA_SUCCESS ||
            (rc = cu->MemcpyDtoD(m->want[i], m->out[i], bytes)) != CUDA_SUCCESS) {
            snprintf(why, len, "keeping the reference (%zu bytes): %s", bytes, cu_str(rc));
            return -1;
        }
        /* A reference with NaN (never expected) would make every candidate look wrong. */
        double rel, mx;
        long nans;
        if ((rc = compare_output(m, i, &rel, &mx, &nans)) != CUDA_SUCCESS || nans || rel != 0) {
            snprintf(why, len, "the reference output %d is not finite (%ld values) or the comparison is broken "
                     "(self-difference %g): %s", i, nans, rel, cu_str(rc));
            return -1;
        }
    }
    m->times.reference_s = lap(&mark);
    return 0;
}

int tune_measure_open(const tune_worker_task *t, tune_measure **out, char *why, size_t len)
{
    *out = NULL;
    tune_measure *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(why, len, "out of host memory");
        return -1;
    }
    if (setup(m, t, why, len) != 0) {
        tune_measure_close(m);
        return -1;
    }
    *out = m;
    return 0;
}

/* One iteration: flush, then launch; a timed one (slot >= 0) between the events of that slot of
 * the batch. Nothing waits here. */
static CUresult iterate(tune_measure *m, const ln_plan *plan, int slot)
{
    const cu_driver *cu = m->s.cu;
    CUresult rc;
    if (m->flush &&
        (rc = cu->MemsetD8Async(m->flush, (unsigned char)(rand() & 0xff), m->flush_bytes, m->stream)) != CUDA_SUCCESS)
        return rc;
    if (slot >= 0 && (rc = cu->EventRecord(m->start[slot], m->stream)) != CUDA_SUCCESS)
        return rc;
    if ((rc = ln_launch(cu, plan, &m->p, m->stream)) != CUDA_SUCCESS)
        return rc;
    return slot >= 0 ? cu->EventRecord(m->stop[slot], m->stream) : CUDA_SUCCESS;
}

/* n timed iterations queued back to back, then their times read into ms[0..n-1]. */
static CUresult time_batch(tune_measure *m, const ln_plan *plan, int n, float *ms, tune_clock_span *clocks)
{
    const cu_driver *cu = m->s.cu;
    CUresult rc = CUDA_SUCCESS;
    for (int i = 0; i < n && rc == CUDA_SUCCESS; i++)
        rc = iterate(m, plan, i);
    if (rc == CUDA_SUCCESS) {
        tune_clocks_sample(m->clocks, clocks);   /* while the batch runs: its clocks, not an idle GPU's */
        rc = cu->EventSynchronize(m->stop[n - 1]);
    }
    for (int i = 0; i < n && rc == CUDA_SUCCESS; i++)
        rc = cu->EventElapsedTime(&ms[i], m->start[i], m->stop[i]);
    return rc;
}

/* Validation: NaN-poisoned outputs, one run, every output compared with the reference. Fills
 * r's errors and status. Returns 0, or -1 after a CUDA error (r says which). */
static int validate(tune_measure *m, const ln_plan *plan, tune_record *r)
{
    const cu_driver *cu = m->s.cu;
    CUresult rc;
    if (poison_outputs(m) != 0) {
        r->status = DB_STATUS_CRASHED;
        snprintf(r->message, sizeof r->message, "poisoning the outputs failed");
        return -1;
    }
    if ((rc = ln_launch(cu, plan, &m->p, m->stream)) != CUDA_SUCCESS) {
        r->status = DB_STATUS_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "launch: %s", cu_str(rc));
        return -1;
    }
    if ((rc = cu->StreamSynchronize(m->stream)) != CUDA_SUCCESS) {
        r->status = DB_STATUS_CRASHED;
        snprintf(r->message, sizeof r->message, "kernel: %s", cu_str(rc));
        return -1;
    }
    static const char *const fwd_names[] = { "O", "L" }, *const bwd_names[] = { "dQ", "dK", "dV" };
    const double limit = tune_threshold(m->p.dtype, m->tf32);
    r->rel_error = 0;
    r->max_abs_error = 0;
    for (int i = 0; i < m->outputs; i++) {
        double rel, mx;
        long nans;
        if ((rc = compare_output(m, i, &rel, &mx, &nans)) != CUDA_SUCCESS) {
            r->status = DB_STATUS_CRASHED;
            snprintf(r->message, sizeof r->message, "comparing the output: %s", cu_str(rc));
            return -1;
        }
        const char *name = m->backward ? bwd_names[i] : fwd_names[i];
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
                         gen_dtype_name(m->p.dtype), limit);
        }
    }
    return 0;
}

/* Timing: warm-up (tune_warmup_ms: the bench's, longer after a pause), then enough repetitions to
 * fill rep_ms. Fills r's times.
 * Returns 0, or -1 after a CUDA error or without host memory (r says which). */
static int time_candidate(tune_measure *m, const tune_worker_task *t, const ln_plan *plan, tune_record *r)
{
    CUresult rc;
    double t0 = tune_now(), elapsed = 0;
    const double warm_ms = tune_warmup_ms(&m->load, t->bench.warmup_ms, t0);
    int warm = 0;
    do {
        if ((rc = iterate(m, plan, -1)) != CUDA_SUCCESS ||
            (rc = m->s.cu->StreamSynchronize(m->stream)) != CUDA_SUCCESS)   /* per-iteration time, below */
            break;
        warm++;
        elapsed = tune_now() - t0;
    } while (elapsed * 1e3 < warm_ms || warm < 2);
    float *ms = NULL;
    int reps = 0;
    tune_clock_span clocks;
    tune_clock_span_init(&clocks);
    if (rc == CUDA_SUCCESS) {
        double per = elapsed / warm * 1e3;
        double want = per > 0 ? ceil(t->bench.rep_ms / per) : 1000;
        reps = want < 5 ? 5 : want > 100000 ? 100000 : (int)want;
        ms = malloc((size_t)reps * sizeof *ms);
        if (!ms)
            reps = 0;
        for (int i = 0; i < reps && rc == CUDA_SUCCESS; i += TIMED_BATCH)
            rc = time_batch(m, plan, reps - i < TIMED_BATCH ? reps - i : TIMED_BATCH, &ms[i], &clocks);
    }
    m->load.idle_since = tune_now();
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
    r->sm_mhz = clocks.sm_mhz;
    r->clock_events = clocks.events;
    r->tflops = r->median_ms > 0 ? tune_flops(&t->workload, m->backward) / (r->median_ms * 1e-3) / 1e12 : NAN;
    if (!(r->median_ms > 0) && r->status == DB_STATUS_OK) {
        r->status = DB_STATUS_INVALID;
        snprintf(r->message, sizeof r->message, "median time %g ms is not positive", r->median_ms);
    }
    return 0;
}

/* m->p's split workspace, grown to what plan needs (ln_split_workspace_bytes: a forward's or a
 * backward's partial sums); the stream is idle between candidates. */
static CUresult split_workspace(tune_measure *m, const ln_plan *plan)
{
    const cu_driver *cu = m->s.cu;
    const size_t need = ln_split_workspace_bytes(plan, &m->p);
    if (need <= m->p.split_ws_bytes)
        return CUDA_SUCCESS;
    if (m->p.split_ws)
        cu->MemFree(m->p.split_ws);
    m->p.split_ws = 0;
    m->p.split_ws_bytes = 0;
    CUresult rc = cu->MemAlloc(&m->p.split_ws, need);
    if (rc == CUDA_SUCCESS)
        m->p.split_ws_bytes = need;
    return rc;
}

int tune_measure_run(tune_measure *m, const tune_worker_task *t, const tune_worker_item *it, tune_record *r)
{
    const cu_driver *cu = m->s.cu;
    CUmodule module;
    const char *what;
    CUresult rc = ln_module_load(cu, it->config, it->cubin, &module, &what);
    if (rc != CUDA_SUCCESS) {
        r->status = DB_STATUS_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "%s: %s", what, cu_str(rc));
        return -1;
    }
    ln_plan plan;
    char why[400];
    int result;
    if (plan_for(m, it->config, module, m->backward ? LN_BACKWARD : LN_FORWARD, &plan, why, sizeof why) != 0) {
        r->status = DB_STATUS_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "launch: %s", why);
        result = -1;
    } else if ((rc = split_workspace(m, &plan)) != CUDA_SUCCESS) {
        r->status = DB_STATUS_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "cuMemAlloc of the split workspace (%d splits): %s", plan.splits,
                 cu_str(rc));
        result = -1;
    } else if ((result = validate(m, &plan, r)) == 0 && r->status == DB_STATUS_OK) {
        result = time_candidate(m, t, &plan, r);
    }
    /* Wrong results (status not ok after validation) are not worth timing. */
    cu->ModuleUnload(module);
    return result;
}

const tune_setup_times *tune_measure_setup_times(const tune_measure *m)
{
    return &m->times;
}

const char *tune_measure_no_clocks(const tune_measure *m)
{
    return m->clocks ? NULL : m->clocks_why;
}

void tune_measure_close(tune_measure *m)
{
    if (!m)
        return;
    const cu_driver *cu = m->s.cu;
    if (cu) {   /* orderly release, so a leak here never hides one elsewhere */
        for (int i = 0; i < m->outputs; i++)
            if (m->want[i])
                cu->MemFree(m->want[i]);
        if (m->stats)
            cu->MemFree(m->stats);
        if (m->ref_module)
            cu->ModuleUnload(m->ref_module);
        if (m->flush)
            cu->MemFree(m->flush);
        for (int i = 0; i < TIMED_BATCH; i++) {
            if (m->start[i])
                cu->EventDestroy(m->start[i]);
            if (m->stop[i])
                cu->EventDestroy(m->stop[i]);
        }
        if (m->stream)
            cu->StreamDestroy(m->stream);
        if (m->p.split_ws)
            cu->MemFree(m->p.split_ws);
        tune_clocks_close(m->clocks);
        for (int i = 0; i < 2; i++)
            if (m->cu_seqlens[i])
                cu->MemFree(m->cu_seqlens[i]);
        if (m->p.sinks)
            cu->MemFree(m->p.sinks);
        if (m->p.dsinks)
            cu->MemFree(m->p.dsinks);
        ln_buffers_free(cu, &m->p);
        ln_session_close(&m->s);
    }
    free(m);
}
