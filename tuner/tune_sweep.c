/* The sweep driver: opens the database and the sweep row, then plans, compiles (or takes from
 * the cache), measures every unit with its strategy and prints the report; Ctrl-C stops it
 * cleanly. The steps live in tune_sweep_{plan,compile,measure,strategy,report}.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"
#include "tune_sweep_internal.h"

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

int tune_sweep_run(const tune_space_set *set, const tune_gpu_info *gpu, const char *db_path, int threads,
                   long budget_s, int seeded)
{
    tune_sweep s;
    memset(&s, 0, sizeof s);
    s.gpu = gpu;
    s.tty = isatty(STDOUT_FILENO);
    tune_stop stop;
    tune_stop_arm(&stop, budget_s);
    const double started = tune_now();

    int rc = 1;
    if (db_open(db_path, DB_OPEN_CREATE, &s.d, s.err, sizeof s.err) != 0)
        goto done;
    char why[256];
    if (seeded && rt_shipped_open(&s.seeds, why, sizeof why) != 0)   /* no seeds then; the sweep goes on */
        printf("flashtune tune: the shipped winners could not be read to seed the searches: %s\n", why);
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
    if (tune_sweep_plan(&s, set) != 0)
        goto end_sweep;
    long stored = 0, pending = 0;
    int added = 0;
    for (int i = 0; i < s.unit_count; i++) {
        pending += s.units[i].pending_count;
        stored += s.units[i].cands->count - s.units[i].pending_count;
        added += s.units[i].added;
    }
    printf("flashtune tune: %d workloads, %ld candidates: %ld already in the database (resume), %ld to measure\n",
           s.unit_count, stored + pending, stored, pending);
    if (added)
        printf("flashtune tune: %d of the candidates are stored winners (this GPU's in the database, the shipped "
               "tables') that their spaces lack, added so that they are timed here\n", added);
    s.threads = threads;
    if (tune_kernels_build(&s.ks, s.d, gpu->dev.arch, threads, 1, s.err, sizeof s.err) != 0)
        goto end_sweep;
    for (int i = 0; i < s.unit_count && !tune_sweep_interrupted; i++)
        if (!s.units[i].lazy && tune_sweep_record_compile_errors(&s, &s.units[i]) != 0)
            goto end_sweep;
    for (int i = 0; i < s.unit_count; i++) {
        const tune_unit *u = &s.units[i];
        s.total += u->pruned_before ? u->pending_count
                                    : tune_strategy_planned(&u->space->strategy, u->pending_count, budget_s > 0);
    }
    s.timing_start = tune_now();
    int setup_failures = 0, whole = 0;   /* whole: the workloads measured to the end */
    for (int i = 0; i < s.unit_count && !tune_sweep_interrupted; i++) {
        tune_unit *u = &s.units[i];
        if (!u->pending_count) {
            u->whole = 1;
            whole++;
            continue;
        }
        if (!s.ks.jobs[u->ref_job].ready) {
            snprintf(u->failure, sizeof u->failure, "the ref kernel did not compile: %.900s", s.ks.jobs[u->ref_job].error);
            setup_failures++;
            continue;
        }
        u->best_tflops = 0;
        /* A search a budget bounds gets an even share of what is left of the sweep's, among those
         * left to run (the others take what they take). */
        double share_s = 0;
        if (budget_s > 0 && u->lazy) {
            int searches = 0;
            for (int j = i; j < s.unit_count; j++)
                searches += s.units[j].lazy && s.units[j].pending_count > 0 && s.ks.jobs[s.units[j].ref_job].ready;
            share_s = (budget_s - (tune_now() - started)) / searches;
        }
        int prc = tune_sweep_measure_unit(&s, u, share_s > 0 ? share_s : 0);
        if (s.tty)
            printf("\n");
        if (prc == TUNE_PHASE_DB_ERROR)
            goto end_sweep;
        if (prc == TUNE_PHASE_SETUP_FAILED) {
            char label[200];
            tune_sweep_unit_label(u, label, sizeof label);
            printf("flashtune tune: %s: not measured: %s\n", label, u->failure);
            setup_failures++;
        }
        u->whole = prc == TUNE_PHASE_OK && !tune_sweep_interrupted;
        whole += u->whole;
    }
    alarm(0);
    if (tune_sweep_declare(&s) != 0)
        goto end_sweep;
    tune_sweep_report(&s, db_path);
    const int budget_spent = tune_stop_budget_spent();
    rc = tune_sweep_interrupted && !budget_spent ? TUNE_SWEEP_INTERRUPTED : setup_failures ? 1 : 0;
    if (budget_spent)
        printf("flashtune tune: the budget of %ld s is spent: %d of %d workloads measured whole; the results above "
               "are stored, a rerun resumes from there\n", budget_s, whole, s.unit_count);
    else if (tune_sweep_interrupted) {
        printf("flashtune tune: interrupted; the results above are stored, a rerun resumes from there\n");
    }

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
        free(s.units[i].grown.configs);
    }
    free(s.units);
    tune_kernels_free(&s.ks);
    db_close(s.seeds);
    db_close(s.d);
    tune_stop_disarm(&stop);
    return rc;
}
