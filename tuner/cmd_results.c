/* flashtune results | best: read the tuning results in SQLite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_options.h"
#include "tune_print.h"

static int open_or_report(const char *cmd, const char *path, db **d)
{
    char err[1024];
    if (db_open(path, DB_OPEN_READONLY, d, err, sizeof err) != 0) {
        fprintf(stderr, "flashtune %s: %s\n", cmd, err);
        return 1;
    }
    return 0;
}

/* --format's value: 0 with *f, or the usage error. */
static int parse_format(const char *cmd, const char *name, tune_format *f)
{
    if (!name)
        return *f = TUNE_FORMAT_TEXT, 0;
    if (tune_format_parse(name, f) != 0)
        return tune_usage_error(cmd, "--format=%s is not text, csv or json", name);
    return 0;
}

/* The exit status of a print that failed: 1 when the output was lost, else `status`. */
static int print_status(int status)
{
    return ferror(stdout) ? 1 : status;
}

int cmd_results(int argc, char **argv)
{
    const char *given_db = NULL, *sort = "median_ms", *format = NULL, *path;
    int help, first;
    const tune_option options[] = { { "db", 0, &given_db, NULL }, { "sort", 0, &sort, NULL },
                                    { "format", 0, &format, NULL } };
    int rc = tune_options_parse("results", argc, argv, options, 3, &help, &first);
    if (rc || help) {
        if (help)
            printf("usage: flashtune results [--db FILE] [--sort COLUMN] [--format text|csv|json] [WORKLOAD]\n\n"
                   "Without WORKLOAD: the workloads in the database. With one (e.g. \"op=fwd dtype=bf16 d=128\n"
                   "causal=0 b=4 h=16 sq=4096 sk=4096\"): its candidates, sorted by COLUMN (median_ms,\n"
                   "tflops, registers, a parameter name...; a leading - reverses). sm_mhz and clock_events:\n"
                   "the least SM clock while it was timed and what held the clocks (NVML's reasons: power cap,\n"
                   "thermal...; none, or - where nothing was sampled).\n"
                   "--format csv: a heading line, then one line per row (RFC 4180). --format json: an array of\n"
                   "one object per row; figures are numbers, what was not measured is null.\n");
        return rc;
    }
    tune_format f;
    if (argc - first > 1)
        return tune_usage_error("results", "one WORKLOAD expected, got '%s' and '%s'", argv[first], argv[first + 1]);
    if (parse_format("results", format, &f) || tune_db_path("results", given_db, &path))
        return TUNE_EXIT_USAGE;
    const char *workload = first < argc ? argv[first] : NULL;
    db *d;
    if (open_or_report("results", path, &d))
        return 1;
    char err[1024];
    if (!workload) {
        rc = tune_print_workloads_as(d, f, stdout, err, sizeof err);
    } else {
        db_workload w;
        rc = db_workload_parse(workload, &w, err, sizeof err);
        if (rc == 0)
            rc = tune_print_results_as(d, &w, sort, f, stdout, err, sizeof err);
    }
    if (rc != 0)
        fprintf(stderr, "flashtune results: %s\n", err);
    db_close(d);
    return rc ? print_status(2) : 0;
}

int cmd_best(int argc, char **argv)
{
    const char *given_db = NULL, *format = NULL, *path;
    int help, first;
    const tune_option options[] = { { "db", 0, &given_db, NULL }, { "format", 0, &format, NULL } };
    int rc = tune_options_parse("best", argc, argv, options, 2, &help, &first);
    if (rc || help) {
        if (help)
            printf("usage: flashtune best [--db FILE] [--format text|csv|json]\n\n"
                   "The winner of every workload, per device. --format as for 'flashtune results'.\n");
        return rc;
    }
    tune_format f;
    if (first < argc)
        return tune_usage_error("best", "unexpected argument '%s': best takes no operands", argv[first]);
    if (parse_format("best", format, &f) || tune_db_path("best", given_db, &path))
        return TUNE_EXIT_USAGE;
    db *d;
    if (open_or_report("best", path, &d))
        return 1;
    char err[1024];
    rc = tune_print_best_as(d, f, stdout, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "flashtune best: %s\n", err);
    db_close(d);
    return rc ? print_status(1) : 0;
}
