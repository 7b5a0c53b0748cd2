/* Measurement: hands a unit's candidates to benchmark workers (tune_worker.h) under a watchdog,
 * restarts a worker that crashed or hung, and stores each result the moment it arrives. One
 * worker serves every step of a unit's search (its context, inputs and reference made once): it
 * is kept between the calls and stopped with the unit (tune_sweep_end_unit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune_sweep_internal.h"

int tune_sweep_store(tune_sweep *s, const tune_unit *u, int c, const tune_record *r)
{
    const tune_kernel_job *j = &s->ks.jobs[u->job[c]];
    db_result res = {
        .sweep_id = s->sweep_id, .device_id = s->device_id, .workload_id = u->workload_id,
        .kernel_id = j->kernel_id, .binary_id = j->binary_id, .status = r->status,
        .median_ms = r->median_ms, .min_ms = r->min_ms, .spread = r->spread, .tflops = r->tflops,
        .rel_error = r->rel_error, .max_abs_error = r->max_abs_error,
        .sm_mhz = r->sm_mhz, .clock_events = r->clock_events,
        .message = r->message[0] ? r->message : NULL,
    };
    return db_result_put(s->d, &res, s->err, sizeof s->err);
}

/* Seeds the random inputs from the workload, so a rerun sees the same data. */
static unsigned long long workload_seed(const db_workload *w)
{
    int f[] = { w->dtype, w->head_dim, w->head_dim_v, w->causal, w->batch, w->heads, w->seqlen_q, w->seqlen_k,
                w->heads_k, w->softcap, w->window, w->window_left, w->window_right, w->bottom_right, w->varlen,
                w->sinks };
    unsigned long long h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (i < 8 || f[i])   /* the features only where set: a plain workload keeps its seed */
            h = (h ^ (unsigned)f[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

int tune_sweep_run_phase(tune_sweep *s, tune_unit *u, const int *cands, int n, const tune_bench *bench, int defer_ok,
                     tune_record *out, const char *pass)
{
    if (n == 0)
        return TUNE_PHASE_OK;
    tune_worker_item *items = malloc((size_t)n * sizeof *items);
    if (!items) {
        snprintf(u->failure, sizeof u->failure, "out of memory");
        return TUNE_PHASE_SETUP_FAILED;
    }
    for (int i = 0; i < n; i++) {
        const gen_binary *b = &s->ks.jobs[u->job[cands[i]]].binary;
        items[i] = (tune_worker_item){ &u->cands->configs[cands[i]], b->cubin, b->cubin_size, i };
    }
    tune_worker_task task = {
        .workload = u->cands->workload, .backward = u->backward, .ref_cubin = s->ks.jobs[u->ref_job].binary.cubin,
        .ref_config = &u->ref_config, .bench = *bench, .l2_bytes = s->gpu->l2_bytes, .device = s->gpu->ordinal,
        .seed = workload_seed(&u->cands->workload), .items = items, .count = n,
    };
    const double setup_s = bench->timeout_s * 10 > 300 ? bench->timeout_s * 10 : 300;
    const double began = tune_now();
    s->steps++;
    int next = 0, stalls = 0, rc = TUNE_PHASE_OK;
    while (next < n && rc == TUNE_PHASE_OK) {
        tune_worker_proc *w = &u->worker;
        char why[1024] = "", line[2048], how[160];
        int ready = 0, inflight = -1, progressed = 0, reused = 0;
        double started = 0, deadline = tune_now() + setup_s;   /* started: when a fresh worker was */
        /* The unit's worker, idle since its last call, takes the whole list; else (none yet, or
         * one gone) a fresh worker starts at the first candidate without a result. */
        if (u->worker_live && next == 0) {
            if (tune_worker_send(w, &task, why, sizeof why) == 0) {
                ready = reused = 1;
                s->steps_kept++;
                deadline = tune_now() + bench->timeout_s;
            } else {
                tune_worker_stop(w, NULL, 0);
                u->worker_live = 0;
                if (tune_sweep_interrupted) {   /* the send was cut short by Ctrl-C or the budget */
                    rc = TUNE_PHASE_INTERRUPTED;
                    break;
                }
            }
        }
        if (!u->worker_live) {
            why[0] = '\0';
            started = tune_now();
            if (tune_worker_start(&task, next, w, why, sizeof why) != 0) {
                snprintf(u->failure, sizeof u->failure, "starting a worker: %s", why);
                rc = TUNE_PHASE_SETUP_FAILED;
                break;
            }
            u->worker_live = 1;
            s->workers++;
        }
        for (;;) {
            if (next == n)
                break;   /* every candidate answered: the worker waits for the unit's next call */
            int got = tune_worker_read_line(w, deadline, line, sizeof line);
            if (tune_sweep_interrupted) {
                tune_worker_stop(w, NULL, 0);
                u->worker_live = 0;
                rc = TUNE_PHASE_INTERRUPTED;
                break;
            }
            if (got == -2)
                continue;
            if (got == 1) {
                tune_record r;
                int id;
                tune_setup_times setup;
                if (tune_ready_parse(line, &setup) == 0) {
                    ready = 1;
                    deadline = tune_now() + bench->timeout_s;
                    tune_sweep_count_setup(s, &setup, tune_now() - started);
                } else if (line[0] == 'C' && line[1] == ' ') {
                    if (!s->clocks_why[0])   /* said once: every worker of the sweep has the same GPU */
                        snprintf(s->clocks_why, sizeof s->clocks_why, "%.250s", line + 2);
                } else if (line[0] == 'E' && line[1] == ' ') {
                    snprintf(why, sizeof why, "%.1000s", line + 2);
                } else if (sscanf(line, "B %d", &id) == 1 && id >= next && id < n) {
                    inflight = id;
                    deadline = tune_now() + bench->timeout_s;
                } else if (line[0] == 'R' && tune_record_parse(line, &r) == 0 && r.id >= next && r.id < n) {
                    int c = cands[r.id];
                    if (out)
                        out[r.id] = r;
                    if (!(defer_ok && r.status == DB_STATUS_OK) && tune_sweep_store(s, u, c, &r) != 0) {
                        tune_worker_stop(w, NULL, 0);
                        u->worker_live = 0;
                        rc = TUNE_PHASE_DB_ERROR;
                        break;
                    }
                    tune_sweep_progress(s, u, c, &r, pass);
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
            tune_worker_stop(w, how, sizeof how);
            u->worker_live = 0;
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
                if (tune_sweep_store(s, u, cands[inflight], &r) != 0) {
                    rc = TUNE_PHASE_DB_ERROR;
                    break;
                }
                tune_sweep_progress(s, u, cands[inflight], &r, pass);
                next = inflight + 1;
                progressed = 1;
            } else if (!ready) {
                snprintf(u->failure, sizeof u->failure, "worker setup %s: %s", timed_out ? "timed out" : "failed",
                         why[0] ? why : how);
                rc = TUNE_PHASE_SETUP_FAILED;
            } else if (reused && !progressed) {
                /* The kept worker was gone before this call began (it ended after answering the
                 * last call, after a CUDA error say): a fresh one, and no stall. */
                s->steps_kept--;   /* the fresh worker takes the step */
            } else if (next < n && !progressed && ++stalls >= 2) {
                snprintf(u->failure, sizeof u->failure, "the worker keeps ending without a result (%s)", how);
                rc = TUNE_PHASE_SETUP_FAILED;
            }
            break;
        }
    }
    free(items);
    s->step_s += tune_now() - began;
    return rc;
}

void tune_sweep_end_unit(tune_unit *u)
{
    if (!u->worker_live)
        return;
    /* Its command pipe closed, an idle worker frees its context and exits: a few seconds for
     * that, then whatever is left is killed. */
    close(u->worker.cmd_fd);
    u->worker.cmd_fd = -1;
    char line[256];
    while (tune_worker_read_line(&u->worker, tune_now() + 5, line, sizeof line) == 1)
        ;
    tune_worker_stop(&u->worker, NULL, 0);
    u->worker_live = 0;
}

int tune_sweep_record_compile_errors(tune_sweep *s, tune_unit *u)
{
    int kept = 0;
    for (int i = 0; i < u->pending_count; i++) {
        int c = u->pending[i];
        tune_kernel_job *j = &s->ks.jobs[u->job[c]];
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
        if (tune_sweep_store(s, u, c, &r) != 0)
            return -1;
    }
    u->pending_count = kept;
    return 0;
}

int tune_sweep_build_batch(tune_sweep *s, tune_unit *u, const int *cands, int n)
{
    int todo = 0;
    for (int i = 0; i < n; i++) {
        tune_kernel_job *j = &s->ks.jobs[u->job[cands[i]]];
        if (!j->ready && !j->failed)
            j->needed = 1, todo++;
    }
    return todo ? tune_kernels_build(&s->ks, s->d, s->gpu->dev.arch, s->threads, 0, s->err, sizeof s->err) : 0;
}
