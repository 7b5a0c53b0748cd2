/* The sweep on a real GPU (label gpu; skips with code 77 without one):
 *   - a candidate that writes out of bounds is recorded 'crashed', one that never ends is
 *     recorded 'timeout', and the sweep goes on with a fresh worker to time a good candidate;
 *   - a sweep killed with SIGKILL mid-way and rerun ends with every candidate measured once:
 *     nothing lost, nothing duplicated, the results stored before the kill untouched;
 *   - the device comparison (ft_ref_compare) is what the sweep reports: a candidate that is
 *     right passes with a small error, and the fault candidates never win.
 * The broken kernels are test-only families registered here (gen_family_register), so they
 * go through the real space loader, compiler, worker and watchdog without shipping. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "gen_internal.h"
#include "gpu_harness.h"
#include "tune_space.h"
#include "tune_sweep.h"
#include "tune_worker.h"

/* Writes a terabyte past O: the launch faults with an illegal address. */
static const char oob_source[] =
    "extern \"C\" __global__ void ft_fwd(const ft_fwd_args args)\n"
    "{\n"
    "    volatile elem_t *o = (elem_t *)args.o;\n"
    "    o[(1ll << 40) + threadIdx.x] = to_elem((acc_t)1);\n"
    "}\n";

/* Spins until O's first element reads 12345, which nothing writes (O is NaN-poisoned). */
static const char hang_source[] =
    "extern \"C\" __global__ void ft_fwd(const ft_fwd_args args)\n"
    "{\n"
    "    volatile unsigned short *o = (volatile unsigned short *)args.o;\n"
    "    while (o[0] != 12345)\n"
    "        ;\n"
    "}\n";

static const gen_entry fault_entries[] = { { "ft_fwd", 0, NULL, NULL, GEN_OP_FAMILY, 0, 0 } };

#define FAULT_FAMILY(var, fname, src)                                                                              \
    static const gen_family var = {                                                                                \
        .name = fname, .file = fname ".cu", .backward = 0, .dtypes = 1u << 2,                                      \
        .params = GEN_BIT(GEN_DTYPE) | GEN_BIT(GEN_HEAD_DIM) | GEN_BIT(GEN_HEAD_DIM_V) | GEN_BIT(GEN_BLOCK_M) |    \
                  GEN_BIT(GEN_BLOCK_N) | GEN_BIT(GEN_NUM_WARPS) | GEN_BIT(GEN_CAUSAL),                             \
        .defaults = { [GEN_DTYPE] = 2, [GEN_HEAD_DIM] = 64, [GEN_HEAD_DIM_V] = 64, [GEN_BLOCK_M] = 64,             \
                      [GEN_BLOCK_N] = 64, [GEN_NUM_WARPS] = 4, [GEN_NUM_STAGES] = 1 },                             \
        .entries = fault_entries, .entry_count = 1, .source = src,                                                 \
    }
FAULT_FAMILY(fault_oob, "test_fault_oob", oob_source);
FAULT_FAMILY(fault_hang, "test_fault_hang", hang_source);

/* One odd-length workload: 2 x 4 heads of 1000 rows, head dim 64. */
static const char fault_space[] =
    "local w = grid{ dtype = 'bf16', head_dim = 64, causal = {0}, seqlen = 1000, tokens = 2000, hidden = 256 }\n"
    "local bench = { warmup_ms = 2, rep_ms = 10, timeout_s = 5 }\n"
    "return {\n"
    "  space{ name = 'oob', template = 'test_fault_oob', params = { BLOCK_M = {64} }, workloads = w, bench = bench },\n"
    "  space{ name = 'hang', template = 'test_fault_hang', params = { BLOCK_M = {64} }, workloads = w, bench = bench },\n"
    "  space{ name = 'good', template = 'fwd_mma', fixed = { NUM_STAGES = 2 },\n"
    "         params = { BLOCK_M = {64}, BLOCK_N = {64}, NUM_WARPS = {4} }, workloads = w, bench = bench },\n"
    "}\n";

/* Forward and backward, causal and not, a few tiles each: 24 candidates, long enough to kill. */
static const char resume_space[] =
    "local w = grid{ dtype = 'bf16', head_dim = 64, causal = {0, 1}, seqlen = 2048, tokens = 8192, hidden = 1024 }\n"
    "local bench = { warmup_ms = 5, rep_ms = 40, timeout_s = 10 }\n"
    "return {\n"
    "  space{ name = 'fwd', template = 'fwd_mma', fixed = { NUM_STAGES = 2 },\n"
    "         params = { BLOCK_M = {64, 128}, BLOCK_N = {32, 64}, NUM_WARPS = {4, 8} }, workloads = w, bench = bench },\n"
    "  space{ name = 'bwd', template = 'bwd_mma', fixed = { NUM_STAGES = 2, NUM_WARPS = 8 },\n"
    "         params = { BLOCK_M = {32, 64}, BLOCK_N = {64, 128} }, workloads = w, bench = bench },\n"
    "}\n";

/* One forward and two backward candidates (fwd_mma, bwd_mma) for each workload of grid{WORKLOADS}. */
#define FEATURE_SPACES(WORKLOADS)                                                                                 \
    "local w = grid{ " WORKLOADS " }\n"                                                                           \
    "local bench = { warmup_ms = 2, rep_ms = 10, timeout_s = 10 }\n"                                             \
    "return {\n"                                                                                                  \
    "  space{ name = 'fwd', template = 'fwd_mma', fixed = { NUM_STAGES = 2 },\n"                                  \
    "         params = { BLOCK_M = {64}, BLOCK_N = {64}, NUM_WARPS = {4} }, workloads = w, bench = bench },\n"   \
    "  space{ name = 'bwd', template = 'bwd_mma', fixed = { NUM_STAGES = 2, NUM_WARPS = 8 },\n"                  \
    "         params = { BLOCK_M = {32}, BLOCK_N = {64, 128} }, workloads = w, bench = bench },\n"                \
    "}\n"

/* Grouped heads and the softcap, tuned: 8 query heads over 2, capped, forward and backward. */
static const char features_space[] = FEATURE_SPACES(
    "dtype = 'bf16', head_dim = 64, causal = {0, 1}, seqlen = 300, batch = 2, heads = 8, heads_k = 2, softcap = true");

/* Attention sinks, tuned: a sink logit a query head, forward and backward (the sinks' gradient
 * validated as a fourth output). */
static const char sinks_space[] = FEATURE_SPACES(
    "dtype = 'bf16', head_dim = 64, causal = {0, 1}, seqlen = 300, batch = 2, heads = 4, sinks = true");

/* Three forward candidates, all finalists (within 100 %), confirmed over two rounds. */
static const char confirm_space[] =
    "local w = grid{ dtype = 'bf16', head_dim = 64, causal = {0}, seqlen = 1024, tokens = 4096, hidden = 512 }\n"
    "return {\n"
    "  space{ name = 'fwd', template = 'fwd_mma', fixed = { NUM_STAGES = 2, NUM_WARPS = 4 },\n"
    "         params = { BLOCK_M = {64}, BLOCK_N = {32, 64, 128} }, workloads = w,\n"
    "         bench = { warmup_ms = 2, rep_ms = 10, timeout_s = 10 },\n"
    "         confirm = { top = 3, within = 1, rounds = 2 } },\n"
    "}\n";

/* The guided search over 22 forward candidates a workload (tiles 32-128 x 32-128, 2-8 warps, 1-2
 * stages), two workloads: kernels built as the search reaches them, the first workload's winner
 * seeding the second's search. */
static const char guided_space[] =
    "local w = grid{ dtype = 'bf16', head_dim = 64, causal = {0, 1}, seqlen = 1024, tokens = 4096, hidden = 512 }\n"
    "return {\n"
    "  space{ name = 'fwd', template = 'fwd_mma',\n"
    "         params = { BLOCK_M = {32, 64, 128}, BLOCK_N = {32, 64, 128}, NUM_WARPS = {2, 4, 8},\n"
    "                    NUM_STAGES = {1, 2} }, workloads = w,\n"
    "         strategy = { kind = 'guided', keep = 0.5, warmup_ms = 1, rep_ms = 5 },\n"
    "         bench = { warmup_ms = 2, rep_ms = 10, timeout_s = 10 } },\n"
    "}\n";

/* The other kinds of workload: a two-sided window, a bottom-right causal mask on lengths that
 * differ, and a causal variable-length batch of 6 sequences filling about half its padded batch. */
static const char kinds_space[] =
    "local w = {\n"
    "  { dtype = 'bf16', head_dim = 64, seqlen = 700, batch = 2, heads = 4, window_left = 64, window_right = 32 },\n"
    "  { dtype = 'bf16', head_dim = 64, seqlen_q = 300, seqlen_k = 700, batch = 2, heads = 4, causal = 1,\n"
    "    bottom_right = true },\n"
    "  { dtype = 'bf16', head_dim = 64, seqlen = 700, batch = 6, heads = 4, causal = 1, varlen = 0.5 },\n"
    "}\n"
    "local bench = { warmup_ms = 2, rep_ms = 10, timeout_s = 10 }\n"
    "return {\n"
    "  space{ name = 'fwd', template = 'fwd_mma', fixed = { NUM_STAGES = 2 },\n"
    "         params = { BLOCK_M = {64}, BLOCK_N = {64}, NUM_WARPS = {4} }, workloads = w, bench = bench },\n"
    "  space{ name = 'bwd', template = 'bwd_mma', fixed = { NUM_STAGES = 2, NUM_WARPS = 8 },\n"
    "         params = { BLOCK_M = {32}, BLOCK_N = {64} }, workloads = w, bench = bench },\n"
    "}\n";

static tune_gpu_info gpu;
static char tmpdir[] = "/tmp/ft_tune_gpu_XXXXXX";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static tune_space_set *load_space(const char *name, const char *text)
{
    char path[256], err[2048];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_file(path, text);
    tune_space_set *set = NULL;
    if (tune_space_load(path, &gpu.dev, &set, err, sizeof err) != 0)
        fail_msg("loading %s: %s", path, err);
    return set;
}

/* One integer from a query (-1 on error). */
static long long query_int(const char *db_path, const char *sql)
{
    sqlite3 *d = NULL;
    long long v = -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(db_path, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(d, 5000);
        if (sqlite3_prepare_v2(d, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(d);
    return v;
}

/* The status and message of the one result of a family. */
static void family_result(const char *db_path, const char *family, char *status, char *message, size_t len)
{
    sqlite3 *d = NULL;
    sqlite3_stmt *st = NULL;
    status[0] = message[0] = '\0';
    assert_int_equal(sqlite3_open_v2(db_path, &d, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(d,
                                        "SELECT r.status, coalesce(r.message, '') FROM results r "
                                        "JOIN kernels k ON k.id = r.kernel_id WHERE k.family = ?1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, family, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        snprintf(status, len, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(message, len, "%s", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    sqlite3_close(d);
}

static void faults_are_recorded_and_the_sweep_goes_on(void **state)
{
    (void)state;
    tune_space_set *set = load_space("faults.lua", fault_space);
    char db_path[256];
    snprintf(db_path, sizeof db_path, "%s/faults.db", tmpdir);
    const double t0 = tune_now();
    assert_int_equal(tune_sweep_run(set, &gpu, db_path, 4, 0, 0), 0);
    print_message("fault sweep took %.1f s\n", tune_now() - t0);
    tune_space_set_free(set);

    char status[256], message[1024];
    family_result(db_path, "test_fault_oob", status, message, sizeof message);
    print_message("out of bounds: %s (%s)\n", status, message);
    assert_string_equal(status, "crashed");
    family_result(db_path, "test_fault_hang", status, message, sizeof message);
    print_message("never ends: %s (%s)\n", status, message);
    assert_string_equal(status, "timeout");
    family_result(db_path, "fwd_mma", status, message, sizeof message);
    print_message("good candidate: %s %s\n", status, message);
    assert_string_equal(status, "ok");
    /* The right candidate was compared on the device and is close; the winner is it. */
    assert_true(query_int(db_path, "SELECT count(*) FROM results WHERE status = 'ok' AND rel_error > 0 AND "
                                   "rel_error < 1e-2 AND tflops > 0") == 1);
    assert_true(query_int(db_path, "SELECT count(*) FROM winners w JOIN kernels k ON k.id = w.kernel_id "
                                   "WHERE k.family = 'fwd_mma'") == 1);
}

/* Sweeps the space `text` (as NAME.lua) into NAME.db under tmpdir (its path in db_path) and checks
 * every result valid: ok, within 1e-2 of the reference, with a speed. Returns the results' count. */
static long long sweep_all_valid(const char *name, const char *text, char *db_path, size_t len)
{
    char file[64];
    snprintf(file, sizeof file, "%s.lua", name);
    tune_space_set *set = load_space(file, text);
    snprintf(db_path, len, "%s/%s.db", tmpdir, name);
    assert_int_equal(tune_sweep_run(set, &gpu, db_path, 2, 0, 0), 0);
    tune_space_set_free(set);
    const long long total = query_int(db_path, "SELECT count(*) FROM results");
    const long long ok = query_int(db_path, "SELECT count(*) FROM results WHERE status = 'ok' AND rel_error < 1e-2 "
                                            "AND tflops > 0");
    print_message("%s: %lld results, %lld valid\n", name, total, ok);
    assert_int_equal(ok, total);
    /* Each time with the clocks it ran at, where NVML works here: nvidia-smi (NVML's own tool,
     * run as a command so that this process opens nothing of the GPU's between its sweeps'
     * forks) reads the SM clock. */
    FILE *smi = popen("nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits 2>/dev/null", "r");
    int smi_mhz = 0;
    if (smi) {
        if (fscanf(smi, "%d", &smi_mhz) != 1)
            smi_mhz = 0;
        if (pclose(smi) != 0)
            smi_mhz = 0;
    }
    const long long clocked = query_int(db_path, "SELECT count(*) FROM results WHERE sm_clock_mhz > 100");
    print_message("%s: %lld results with the SM clock (nvidia-smi %s)\n", name, clocked,
                  smi_mhz > 0 ? "reads it too" : "does not run here");
    if (smi_mhz > 0)
        assert_int_equal(clocked, total);
    return total;
}

/* Windows, bottom-right masks and variable-length batches are measured as such (the band and the
 * packed batch through the launch module, the kernels compiled CAUSAL and VARLEN), validated
 * against the reference, and stored under their own keys. */
static void masked_and_varlen_workloads_are_tuned(void **state)
{
    (void)state;
    char db_path[256];
    const long long total = sweep_all_valid("kinds", kinds_space, db_path, sizeof db_path);
    assert_int_equal(total, 6);   /* 3 workloads x (1 forward + 1 backward candidate) */
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM workloads WHERE causal = 0 AND window = 1 AND "
                                        "window_left = 64 AND window_right = 32"), 2);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM workloads WHERE causal = 1 AND bottom_right = 1"), 2);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM workloads WHERE varlen = 4"), 2);
    /* Every kernel measured is CAUSAL; those of the variable-length batch, and only they, VARLEN. */
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM results r JOIN kernel_params p ON p.kernel_id = "
                                        "r.kernel_id WHERE p.name = 'CAUSAL' AND p.value = 1"), total);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM results r JOIN kernel_params p ON p.kernel_id = "
                                        "r.kernel_id JOIN workloads w ON w.id = r.workload_id WHERE p.name = "
                                        "'VARLEN' AND p.value = (w.varlen > 0)"), total);
}

/* Workloads of grouped heads with a softcap are measured as such (K/V over heads_k heads, the
 * kernels compiled with SOFTCAP 1), validated against the reference that takes both, and stored
 * under their own key. */
static void grouped_capped_workloads_are_tuned(void **state)
{
    (void)state;
    char db_path[256];
    assert_int_equal(sweep_all_valid("features", features_space, db_path, sizeof db_path),
                     6);   /* 2 masks x (1 forward + 2 backward candidates) */
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM workloads WHERE heads_k = 2 AND softcap = 1"), 4);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM workloads"), 4);
    /* Every measured kernel has SOFTCAP 1 (the reference's kernels, stored beside them, take the softcap as
     * an argument). */
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM kernel_params WHERE name = 'SOFTCAP' AND value = 1"),
                     query_int(db_path, "SELECT count(DISTINCT kernel_id) FROM results"));
}

/* Workloads with sinks are measured with random sink logits (kernels compiled with SINKS 1),
 * validated against the reference that takes them, the backward's sinks' gradient too, and
 * stored under their own key (the workloads' extra column). */
static void workloads_with_sinks_are_tuned(void **state)
{
    (void)state;
    char db_path[256];
    assert_int_equal(sweep_all_valid("sinks", sinks_space, db_path, sizeof db_path),
                     6);   /* 2 masks x (1 forward + 2 backward candidates) */
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM workloads WHERE extra = 'sinks=1'"), 4);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM kernel_params WHERE name = 'SINKS' AND value = 1"),
                     query_int(db_path, "SELECT count(DISTINCT kernel_id) FROM results"));
}

/* The confirm step: every finalist is stored once, ok, with the median of its three timings. */
static void finalists_are_confirmed_in_rotation(void **state)
{
    (void)state;
    tune_space_set *set = load_space("confirm.lua", confirm_space);
    char db_path[256];
    snprintf(db_path, sizeof db_path, "%s/confirm.db", tmpdir);
    assert_int_equal(tune_sweep_run(set, &gpu, db_path, 2, 0, 0), 0);
    tune_space_set_free(set);
    const long long total = query_int(db_path, "SELECT count(*) FROM results");
    const long long confirmed = query_int(db_path, "SELECT count(*) FROM results WHERE status = 'ok' AND message = "
                                                   "'confirmed: the median of 3 timings, in rotation with 2 other "
                                                   "finalists' AND median_ms > 0 AND min_ms <= median_ms");
    print_message("%lld results, %lld confirmed\n", total, confirmed);
    assert_int_equal(total, 3);
    assert_int_equal(confirmed, 3);
}

/* The guided search: every candidate of each workload ends up stored once, timed (ok, or the
 * first pass's rank) or 'not timed' with the reason; the kernels it never reached were never
 * compiled (no CUBIN in the cache), and each workload's winner is an ok result. */
static void guided_search_builds_what_it_times(void **state)
{
    (void)state;
    tune_space_set *set = load_space("guided.lua", guided_space);
    const long total = tune_space_set_count(set);
    char db_path[256];
    snprintf(db_path, sizeof db_path, "%s/guided.db", tmpdir);
    assert_int_equal(tune_sweep_run(set, &gpu, db_path, 2, 0, 0), 0);
    tune_space_set_free(set);
    const long long stored = query_int(db_path, "SELECT count(*) FROM results");
    const long long distinct = query_int(db_path, "SELECT count(*) FROM (SELECT DISTINCT workload_id, kernel_id "
                                                  "FROM results)");
    const long long untimed = query_int(db_path, "SELECT count(*) FROM results WHERE status = 'skipped' AND "
                                                 "message LIKE 'not timed: the guided search reached its best%'");
    const long long ok = query_int(db_path, "SELECT count(*) FROM results WHERE status = 'ok' AND median_ms > 0");
    const long long built = query_int(db_path, "SELECT count(*) FROM binaries b JOIN kernels k ON k.id = b.kernel_id "
                                               "WHERE k.family = 'fwd_mma'");
    const long long built_untimed = query_int(db_path, "SELECT count(*) FROM results r JOIN binaries b ON "
                                                       "b.kernel_id = r.kernel_id WHERE r.status = 'skipped' AND "
                                                       "r.message LIKE 'not timed%'");
    print_message("guided: %lld results of %ld, %lld ok, %lld not timed, %lld kernels built\n", stored, total, ok,
                  untimed, built);
    assert_int_equal(stored, total);
    assert_int_equal(distinct, total);
    assert_true(ok >= 2);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM winners"), 2);
    assert_int_equal(built_untimed, 0);   /* what the search never reached was never compiled */
    assert_int_equal(built + untimed + query_int(db_path, "SELECT count(*) FROM results WHERE status = 'compile_error'"),
                     total);
}

/* --budget: a sweep given 1 s of the resume space's longer run stops on its own, returns 0 with
 * part of the results stored, and a rerun without a budget completes them, none twice. */
static void budget_stops_the_sweep_and_a_rerun_resumes(void **state)
{
    (void)state;
    tune_space_set *set = load_space("budget.lua", resume_space);
    const long total = tune_space_set_count(set);
    char db_path[256];
    snprintf(db_path, sizeof db_path, "%s/budget.db", tmpdir);
    const double start = tune_now();
    assert_int_equal(tune_sweep_run(set, &gpu, db_path, 4, 1, 0), 0);
    const long long stored = query_int(db_path, "SELECT count(*) FROM results");
    print_message("budget of 1 s: %lld of %ld results in %.1f s\n", stored, total, tune_now() - start);
    assert_true(stored < total);
    /* Only the workloads measured whole were declared (declared ones were measured whole). */
    const long long declared = query_int(db_path, "SELECT count(*) FROM declared");
    const long long workloads = query_int(db_path, "SELECT count(*) FROM workloads");
    print_message("budget of 1 s: %lld of %lld workloads declared\n", declared, workloads);
    assert_true(declared < workloads);
    assert_int_equal(tune_sweep_run(set, &gpu, db_path, 4, 0, 0), 0);
    tune_space_set_free(set);
    /* The rerun declared every workload, and the winners are the declared kernels. */
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM declared"), workloads);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM winners w JOIN declared c ON c.device_id = w.device_id "
                                        "AND c.workload_id = w.workload_id AND c.kernel_id = w.kernel_id"),
                     workloads);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM results"), total);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM (SELECT DISTINCT device_id, workload_id, kernel_id "
                                        "FROM results)"), total);
}

static void killed_sweep_resumes_without_loss_or_duplicates(void **state)
{
    (void)state;
    tune_space_set *set = load_space("resume.lua", resume_space);
    const long total = tune_space_set_count(set);
    assert_true(total >= 16);
    char db_path[256];
    snprintf(db_path, sizeof db_path, "%s/resume.db", tmpdir);

    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int rc = tune_sweep_run(set, &gpu, db_path, 4, 0, 0);
        _exit(rc);
    }
    /* Kill it once some results are in and well before the end. */
    long long stored = 0;
    const double deadline = tune_now() + 300;
    while (tune_now() < deadline) {
        stored = query_int(db_path, "SELECT count(*) FROM results");
        if (stored >= 3)
            break;
        struct timespec nap = { 0, 50 * 1000 * 1000 };
        nanosleep(&nap, NULL);
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    /* Its orphaned worker (if any) dies with it (PR_SET_PDEATHSIG); wait until it has. */
    struct timespec settle = { 0, 500 * 1000 * 1000 };
    nanosleep(&settle, NULL);

    const long long before = query_int(db_path, "SELECT count(*) FROM results");
    print_message("killed with %lld of %ld results stored\n", before, total);
    assert_true(before >= 3 && before < total);
    const long long sum_before = query_int(db_path, "SELECT sum(id * 7 + CAST(coalesce(median_ms, 0) * 1e6 AS INTEGER)) "
                                                    "FROM results");

    assert_int_equal(tune_sweep_run(set, &gpu, db_path, 4, 0, 0), 0);
    tune_space_set_free(set);
    const long long after = query_int(db_path, "SELECT count(*) FROM results");
    const long long distinct = query_int(db_path, "SELECT count(*) FROM (SELECT DISTINCT device_id, workload_id, "
                                                  "kernel_id FROM results)");
    print_message("after the rerun: %lld results, %lld distinct\n", after, distinct);
    assert_int_equal(after, total);
    assert_int_equal(distinct, total);
    /* The first run's rows are the same rows with the same times. */
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT sum(id * 7 + CAST(coalesce(median_ms, 0) * 1e6 AS INTEGER)) FROM results "
                              "WHERE id <= %lld", before);
    assert_true(query_int(db_path, sql) == sum_before);
    assert_int_equal(query_int(db_path, "SELECT count(*) FROM results WHERE status <> 'ok'"), 0);
}

int main(void)
{
    char why[1024] = "";
    if (tune_worker_probe(0, &gpu, 120, why, sizeof why) != 1) {
        printf("no GPU: %s; test_tune_gpu skipped\n", why);
        return GPU_SKIP_CODE;
    }
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    if (gen_family_register(&fault_oob) != 0 || gen_family_register(&fault_hang) != 0) {
        printf("registering the test families failed\n");
        return 1;
    }
    printf("GPU: %s (%s), databases in %s\n", gpu.dev.name, gpu.dev.arch, tmpdir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(faults_are_recorded_and_the_sweep_goes_on),
        cmocka_unit_test(killed_sweep_resumes_without_loss_or_duplicates),
        cmocka_unit_test(budget_stops_the_sweep_and_a_rerun_resumes),
        cmocka_unit_test(grouped_capped_workloads_are_tuned),
        cmocka_unit_test(workloads_with_sinks_are_tuned),
        cmocka_unit_test(masked_and_varlen_workloads_are_tuned),
        cmocka_unit_test(finalists_are_confirmed_in_rotation),
        cmocka_unit_test(guided_search_builds_what_it_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
