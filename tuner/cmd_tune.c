/* flashtune tune: load a Lua search space, then either sweep it on the GPU (compile, validate,
 * time, store every result in SQLite: tune_sweep.c) or, without a GPU (or --compile-only),
 * compile every distinct candidate and report its resources. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_internal.h"
#include "tune_options.h"
#include "tune_space.h"
#include "tune_sweep.h"
#include "tune_worker.h"

static void help(void)
{
    printf("usage: flashtune tune [--db FILE] [--device N] [--arch ARCH] [--threads N] [--compile-only]\n"
           "                      [--from-capture FILE] [--budget DURATION] [--unseeded] [SPACE.lua]\n\n"
           "Loads the search space and checks it (default: tuner/spaces/default.lua in the current folder,\n"
           "else the one installed with this command, PREFIX/share/flashtune/spaces). With a GPU: compiles\n"
           "every distinct candidate with NVRTC on all cores (CUBINs cached in the database), validates\n"
           "each candidate against the ref kernels and times it in a worker process on GPU N (--device,\n"
           "default 0), storing each result at once in FILE (default flashtune.db, or $FLASHTUNE_DB); a\n"
           "rerun skips what is stored (resume), Ctrl-C stops cleanly. Ends with the winner of every\n"
           "workload.\n"
           "Without a GPU, or with --compile-only: a compile-only run. Every distinct candidate is\n"
           "compiled for the GPU or --arch (default sm_90) to check it, with progress, then registers,\n"
           "spills and compile time are printed; nothing is timed or stored. --device N names a GPU\n"
           "that must exist.\n"
           "--from-capture FILE: the problems an application recorded (FLASHTUNE_CAPTURE=FILE while it\n"
           "ran libflashtune) instead of each space's own workloads: each space takes those of its\n"
           "direction, dtypes and head dims (decode shapes only where its own are), those no tuned\n"
           "winner served first, then the heaviest (calls x FLOPs); the problems no space takes are\n"
           "listed.\n"
           "--budget DURATION (90, 90s, 10m, 2h): the sweep stops when it is spent, as Ctrl-C stops it\n"
           "(what was measured is stored, the workloads in their order: with --from-capture the untuned\n"
           "and heaviest first), and exits 0; a rerun resumes. Within a workload the configurations\n"
           "of the winners FILE already holds for this GPU are timed first, and the winner the shipped\n"
           "tables hold for it (this GPU model's, else its arch's); that one and the workload's own\n"
           "winner in FILE are added to its candidates where the space lacks them and their family\n"
           "takes them, so that they are timed here. --unseeded leaves the shipped ones out (a GPU\n"
           "model without a table of its own sees none). A space whose strategy is\n"
           "halving or guided and has no budget_s of its own stops each workload's search within an\n"
           "even share of what is left. A compile-only run stops compiling when it is spent.\n"
           "Options take their value as --name VALUE or --name=VALUE.\n"
           "Exit status: 0 done (failed candidates are results, not errors); 1 a database error or a\n"
           "workload that could not be set up; 2 a bad space or option (or no GPU N); 130 interrupted.\n");
}

/* A captured problem's weight: its calls times the FLOPs of one (tune_flops). */
static double weight(const db_capture_row *r)
{
    const double flops = tune_flops(&r->workload, r->workload.op == DB_OP_BWD);
    return (double)r->calls * (isnan(flops) ? 0 : flops);
}

/* The order to tune captured problems in: those no winner tuned for them served first, then the
 * heaviest. */
static int tune_first(const void *a, const void *b)
{
    const db_capture_row *x = a, *y = b;
    const int missed_x = x->served != DB_SERVED_TUNED, missed_y = y->served != DB_SERVED_TUNED;
    if (missed_x != missed_y)
        return missed_y - missed_x;
    const double wx = weight(x), wy = weight(y);
    return wx > wy ? -1 : wx < wy;
}

/* Reads and orders the capture file; prints what it holds. 0, or 2 with the reason printed. */
static int read_capture(const char *path, db_capture_row **rows, int *count)
{
    char why[1024];
    if (db_capture_read(path, rows, count, why, sizeof why) != 0) {
        fprintf(stderr, "flashtune tune: --from-capture: %s\n", why);
        return TUNE_EXIT_USAGE;
    }
    if (!*count) {
        fprintf(stderr, "flashtune tune: --from-capture: %s records no problem\n", path);
        return TUNE_EXIT_USAGE;
    }
    qsort(*rows, (size_t)*count, sizeof **rows, tune_first);
    int missed = 0;
    unsigned long long calls = 0;
    for (int i = 0; i < *count; i++) {
        missed += (*rows)[i].served != DB_SERVED_TUNED;
        calls += (*rows)[i].calls;
    }
    printf("flashtune tune: %s: %d problems, %llu calls; %d served without a winner tuned for them\n", path, *count,
           calls, missed);
    return 0;
}

/* The captured problems no space of set took, listed so none goes untuned unnoticed. */
static void report_untaken(const tune_space_set *set, const db_capture_row *rows, int count)
{
    int untaken = 0;
    for (int i = 0; i < count; i++) {
        db_workload w = rows[i].workload;
        w.op = 0;   /* as a space holds it: its template gives the direction */
        int taken = 0;
        for (int s = 0; s < set->space_count && !taken; s++)
            for (int j = 0; j < set->spaces[s].workload_count && !taken; j++)
                taken = (set->spaces[s].family->backward != 0) == (rows[i].workload.op == DB_OP_BWD) &&
                        !memcmp(&set->spaces[s].workloads[j].workload, &w, sizeof w);
        if (!taken) {
            char text[512];
            if (!untaken++)
                printf("flashtune tune: captured problems no space takes (their dtype, head dims or kind):\n");
            printf("  %s calls=%llu\n", db_workload_format(&rows[i].workload, text, sizeof text), rows[i].calls);
        }
    }
}

/* The driver shim's message ends with advice for library users ("...; a GPU and its driver are
 * needed for this"); here the run goes on without a GPU, so the advice would mislead. */
static void drop_advice(char *why)
{
    char *advice = strstr(why, "; a GPU and its driver are needed");
    if (advice)
        *advice = '\0';
}

int cmd_tune(int argc, char **argv)
{
    char installed[PATH_MAX + 64];
    const char *space = tune_default_space(installed, sizeof installed), *arch = NULL, *given_db = NULL, *threads_text = NULL,
               *device_text = NULL, *db_path, *capture = NULL, *budget_text = NULL;
    int compile_only = 0, unseeded = 0, help_wanted, first;
    const tune_option options[] = {
        { "db", 0, &given_db, NULL },         { "arch", 0, &arch, NULL },
        { "threads", 0, &threads_text, NULL }, { "device", 0, &device_text, NULL },
        { "compile-only", 0, NULL, &compile_only }, { "from-capture", 0, &capture, NULL },
        { "budget", 0, &budget_text, NULL },  { "unseeded", 0, NULL, &unseeded },
    };
    int rc = tune_options_parse("tune", argc, argv, options, 8, &help_wanted, &first);
    if (rc || help_wanted)
        return help_wanted ? (help(), 0) : rc;
    if (argc - first > 1)
        return tune_usage_error("tune", "one SPACE.lua expected, got '%s' and '%s'", argv[first], argv[first + 1]);
    if (first < argc)
        space = argv[first];
    long threads = sysconf(_SC_NPROCESSORS_ONLN), device = 0, budget_s = 0;
    if (threads < 1)
        threads = 1;
    if ((threads_text && tune_parse_int("tune", "--threads", threads_text, 1, 256, &threads)) ||
        (device_text && tune_parse_int("tune", "--device", device_text, 0, INT_MAX, &device)) ||
        (budget_text && tune_parse_duration("tune", "--budget", budget_text, &budget_s)) ||
        tune_db_path("tune", given_db, &db_path))
        return TUNE_EXIT_USAGE;
    tune_device dev;
    char archs[128];
    gen_arch_names(0, archs, sizeof archs);
    if (tune_device_default(&dev, arch ? arch : "sm_90") != 0)
        return tune_usage_error("tune", "--arch=%s is not a target of the generator (%s)", arch, archs);

    /* The GPU is described by a child process: this one must not initialize CUDA before it
     * forks the benchmark workers. */
    tune_gpu_info gpu;
    char why[1024] = "";
    int have_gpu = tune_worker_probe((int)device, &gpu, 120, why, sizeof why) == 1;
    if (!have_gpu && device_text) {
        fprintf(stderr, "flashtune tune: --device %ld: %s\n", device, why);
        return TUNE_EXIT_USAGE;
    }
    if (have_gpu && !gen_arch_supported(gpu.dev.arch)) {
        snprintf(why, sizeof why, "GPU %ld (%s) is %s, which the generator does not target", device, gpu.dev.name,
                 gpu.dev.arch);
        have_gpu = 0;
    }
    if (have_gpu)
        dev = gpu.dev;
    db_capture_row *captured = NULL;   /* read before the run is announced: a bad file is said first */
    int captured_count = 0;
    if (capture && (rc = read_capture(capture, &captured, &captured_count)) != 0)
        return rc;
    if (have_gpu && !compile_only) {
        printf("flashtune tune: %s on GPU %ld, %s (%s)\n", space, device, dev.name, dev.arch);
    } else {
        drop_advice(why);
        if (have_gpu)
            printf("flashtune tune: --compile-only: GPU %ld, %s, is not used\n", device, dev.name);
        else
            printf("flashtune tune: %s\n", why);
        printf("flashtune tune: so this is a compile-only run: every distinct kernel of %s is compiled for %s\n"
               "  (as for %s) to check it and report its registers and spills; nothing is timed or stored\n", space,
               dev.arch, dev.name);
    }
    fflush(stdout);

    const tune_captured cap = { captured, captured_count };
    tune_space_set *set = NULL;
    if (tune_space_load_captured(space, &dev, NULL, capture ? &cap : NULL, &set, why, sizeof why) != 0) {
        fprintf(stderr, "flashtune tune: %s\n", why);
        free(captured);
        return 2;
    }
    if (capture)
        report_untaken(set, captured, captured_count);
    free(captured);
    if (have_gpu && !compile_only) {
        rc = tune_sweep_run(set, &gpu, db_path, (int)threads, budget_s, !unseeded);
    } else {
        if (budget_s)
            printf("flashtune tune: --budget bounds this compile-only run too: it stops compiling after %ld s\n",
                   budget_s);
        rc = tune_sweep_compile_only(set, dev.arch, (int)threads, budget_s);
        printf("flashtune tune: compile-only run %s (%s); nothing was timed or stored\n",
               rc == TUNE_SWEEP_INTERRUPTED ? "interrupted" : "done", have_gpu ? "--compile-only" : "no GPU here");
    }
    tune_space_set_free(set);
    return rc;
}
