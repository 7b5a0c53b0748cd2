/* What a sweep prints: progress after each timing (a live line with the ETA on a terminal, one
 * plain line per candidate otherwise) and the final report of every workload's winner. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "tune_clocks.h"
#include "tune_print.h"
#include "tune_sweep_internal.h"

/* The parameters a space may choose, as "BLOCK_M=128 BLOCK_N=64 ...". */
static const char *config_str(const gen_config *c, char *buf, size_t len)
{
    return gen_config_format(c, GEN_FORMAT_FAMILY | GEN_FORMAT_TUNABLES, buf, len);
}

int tune_sweep_is_default(const gen_config *c)
{
    const gen_param_set tunables = gen_param_mask(GEN_ROLE_TUNABLE);
    for (int p = 0; p < GEN_PARAM_COUNT; p++)
        if ((c->family->params & tunables & GEN_BIT(p)) && c->p[p] != c->family->defaults[p])
            return 0;
    return 1;
}

void tune_sweep_unit_label(const tune_unit *u, char *buf, size_t len)
{
    char w[160];
    tune_workload_str(&u->cands->workload, w, sizeof w);
    snprintf(buf, len, "%s %s", u->backward ? "bwd" : "fwd", w);
}

static void fmt_eta(double seconds, char *buf, size_t len)
{
    if (!(seconds >= 0) || seconds > 360000)
        snprintf(buf, len, "?");
    else
        snprintf(buf, len, "%d:%02d:%02d", (int)seconds / 3600, (int)seconds / 60 % 60, (int)seconds % 60);
}

void tune_sweep_count_setup(tune_sweep *s, const tune_setup_times *t, double ready_s)
{
    s->setups++;
    s->setup_sum.open_s += t->open_s;
    s->setup_sum.clocks_s += t->clocks_s;
    s->setup_sum.inputs_s += t->inputs_s;
    s->setup_sum.reference_s += t->reference_s;
    s->ready_s += ready_s;
}

void tune_sweep_progress(tune_sweep *s, tune_unit *u, int c, const tune_record *r, const char *pass)
{
    s->done++;
    char cfg[GEN_CONFIG_TEXT], label[200], eta[32];
    config_str(&u->cands->configs[c], cfg, sizeof cfg);
    if (r->status == DB_STATUS_OK && r->tflops > u->best_tflops) {
        u->best_tflops = r->tflops;
        snprintf(u->best, sizeof u->best, "%s", cfg);
    }
    double elapsed = tune_now() - s->timing_start;
    long left = s->total > s->done ? s->total - s->done : 0;
    fmt_eta(s->done ? elapsed / (double)s->done * (double)left : -1, eta, sizeof eta);
    tune_sweep_unit_label(u, label, sizeof label);
    if (s->tty) {
        /* Failures stay on screen; the live line is cut short so a carriage return clears it. */
        if (r->status != DB_STATUS_OK)
            printf("\r\033[K%s | %s%s: %s%s%s\n", label, cfg, pass, db_status_name(r->status), r->message[0] ? ": " : "",
                   r->message);
        char live[sizeof label + GEN_CONFIG_TEXT + 128];
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


/* Reads the stored result of (device, workload, kernel): 1 found, 0 not. */
static int load_result(tune_sweep *s, int64_t workload_id, int64_t kernel_id, db_status *status, double *median,
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

/* kernel_id as a candidate of u ("fwd_wgmma BLOCK_M=128 ..."), or by its number. */
static void kernel_str(const tune_sweep *s, const tune_unit *u, int64_t kernel_id, char *buf, size_t len)
{
    snprintf(buf, len, "kernel %lld (not a candidate of this space)", (long long)kernel_id);
    for (int k = 0; k < u->cands->count; k++)
        if (s->ks.jobs[u->job[k]].kernel_id == kernel_id)
            config_str(&u->cands->configs[k], buf, len);
}

/* A line under a workload's row when its declared winner is not its fastest: which, and why; and
 * one when the stored winner was replaced for want of a timing here. Returns 1 when the declared
 * winner spills registers. */
static int print_declared(tune_sweep *s, const tune_unit *u, int64_t fastest_kernel)
{
    db_declared c;
    char why[256], cfg[GEN_CONFIG_TEXT];
    if (db_declared_get(s->d, s->device_id, u->workload_id, &c, why, sizeof why) != 1)
        return 0;
    if (u->untimed_winner && c.kernel_id != u->untimed_winner) {
        kernel_str(s, u, u->untimed_winner, cfg, sizeof cfg);
        printf("%-44s  the stored winner without a valid timing here (not re-timed, or it failed): replaced (another run's figure keeps no winner): %s\n",
               "", cfg);
    }
    if (c.kernel_id == fastest_kernel)
        return c.spills > 0;
    kernel_str(s, u, c.kernel_id, cfg, sizeof cfg);
    if (c.reason == DB_DECLARED_KEPT)
        printf("%-44s  declared: the stored winner, %.1f %% behind, within the interval: %s\n", "", 100 * c.behind,
               cfg);
    else if (c.reason == DB_DECLARED_SPILL_FREE)
        printf("%-44s  declared: %.1f %% behind, tied and without the faster ones' register spills: %s\n", "",
               100 * c.behind, cfg);
    else if (c.reason == DB_DECLARED_HOLDS)
        printf("%-44s  declared: %.1f %% behind, tied here and at %d other workloads of its kind: %s\n", "",
               100 * c.behind, c.neighbours, cfg);
    else
        printf("%-44s  declared: %s: %s\n", "", db_declared_name(c.reason), cfg);
    return c.spills > 0;
}

int tune_sweep_declare(tune_sweep *s)
{
    int64_t *ids = malloc((size_t)(s->unit_count ? s->unit_count : 1) * sizeof *ids);
    if (!ids)
        return snprintf(s->err, sizeof s->err, "out of memory"), -1;
    int n = 0;
    for (int i = 0; i < s->unit_count; i++) {
        tune_unit *u = &s->units[i];
        if (!u->whole)
            continue;
        ids[n++] = u->workload_id;
        /* Read before the declaration replaces it, for the report's line. */
        if (db_declared_untimed(s->d, s->device_id, u->workload_id, &u->untimed_winner, s->err, sizeof s->err) < 0) {
            free(ids);
            return -1;
        }
    }
    /* n 0 would declare every workload: none measured whole, none declared. */
    const int rc = n ? db_declare_winners(s->d, s->device_id, ids, n, DB_DECLARE_MARGIN, &s->declared, s->err,
                                          sizeof s->err)
                     : 0;
    free(ids);
    return rc;
}

void tune_sweep_report(tune_sweep *s, const char *db_path)
{
    printf("\nflashtune tune: winners on %s (%s), database %s\n", s->gpu->dev.name, s->gpu->dev.arch, db_path);
    printf("%-44s %7s %9s %9s %10s %10s  %s\n", "workload", "ok/all", "TFLOP/s", "ms", "vs slowest", "vs default",
           "winner");
    int spilling = 0;   /* declared winners whose binary spills registers */
    for (int i = 0; i < s->unit_count; i++) {
        tune_unit *u = &s->units[i];
        char label[200];
        tune_sweep_unit_label(u, label, sizeof label);
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
        char cfg[GEN_CONFIG_TEXT] = "none valid", vs_default[16] = "-";
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
        if (best >= 0)
            spilling += print_declared(s, u, s->ks.jobs[u->job[best]].kernel_id);
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
    /* The clocks the sweep's timings ran at (tune_clocks.h): a sweep whose GPU was held back by
     * its power cap or its temperature says so, since its times are then not the GPU's best. */
    db_clock_summary c;
    char why[256];
    if (db_sweep_clocks(s->d, s->sweep_id, s->device_id, &c, why, sizeof why) != 0) {
        printf("flashtune tune: the clocks could not be read: %s\n", why);
    } else if (c.timed && !c.sampled) {
        printf("flashtune tune: no clocks recorded: %s\n", s->clocks_why[0] ? s->clocks_why : "NVML gave none");
    } else if (c.timed) {
        char held[256] = "none held back", names[160];
        if (c.held)
            snprintf(held, sizeof held, "%d held back (%s)", c.held,
                     tune_clock_events_name(c.events, names, sizeof names));
        printf("flashtune tune: clocks while timing: %d of %d timings sampled, SM %.0f-%.0f MHz; %s\n", c.sampled,
               c.timed, c.least_mhz, c.most_mhz, held);
    }
    /* What the timing itself cost: a step is one call of a search (a first pass's piece, the cut,
     * the confirm step); a worker kept for its unit takes the later ones without a start. */
    if (s->steps)
        printf("flashtune tune: %d steps of the searches in %.0f s (compiling aside), %d of them on a unit's kept "
               "worker; %d workers started\n", s->steps, s->step_s, s->steps_kept, s->workers);
    if (s->setups) {
        const double n = s->setups, open = s->setup_sum.open_s / n, clocks = s->setup_sum.clocks_s / n;
        const double inputs = s->setup_sum.inputs_s / n, reference = s->setup_sum.reference_s / n;
        const double ready = s->ready_s / n, rest = fmax(0, ready - open - clocks - inputs - reference);
        printf("flashtune tune: a worker's start took %.2f s on average (%d started): the driver and context %.2f, "
               "NVML %.2f, buffers and inputs %.2f, the reference %.2f, the process and its pipe %.2f\n", ready,
               s->setups, open, clocks, inputs, reference, rest);
    }
    if (s->declared.workloads) {
        tune_print_declare_counts(stdout, "flashtune tune: winners declared for ", &s->declared, DB_DECLARE_MARGIN);
        printf("flashtune tune: %d of the declared winners spill registers (no kernel without spills tied "
               "with them)\n", spilling);
    }
}
