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

int cmd_results(int argc, char **argv)
{
    const char *given_db = NULL, *sort = "median_ms", *path;
    int help, first;
    const tune_option options[] = { { "db", 0, &given_db, NULL }, { "sort", 0, &sort, NULL } };
    int rc = tune_options_parse("results", argc, argv, options, 2, &help, &first);
    if (rc || help) {
        if (help)
            printf("usage: flashtune results [--db FILE] [--sort COLUMN] [WORKLOAD]\n\n"
                   "Without WORKLOAD: the workloads in the database. With one (e.g. \"op=fwd dtype=bf16 d=128\n"
                   "causal=0 b=4 h=16 sq=4096 sk=4096\"): its candidates, sorted by COLUMN (median_ms,\n"
                   "tflops, registers, a parameter name...; a leading - reverses).\n");
        return rc;
    }
    if (argc - first > 1)
        return tune_usage_error("results", "one WORKLOAD expected, got '%s' and '%s'", argv[first], argv[first + 1]);
    if (tune_db_path("results", given_db, &path))
        return TUNE_EXIT_USAGE;
    const char *workload = first < argc ? argv[first] : NULL;
    db *d;
    if (open_or_report("results", path, &d))
        return 1;
    char err[1024];
    if (!workload) {
        rc = tune_print_workloads(d, stdout, err, sizeof err);
    } else {
        db_workload w;
        rc = db_workload_parse(workload, &w, err, sizeof err);
        if (rc == 0)
            rc = tune_print_results(d, &w, sort, stdout, err, sizeof err);
    }
    if (rc != 0)
        fprintf(stderr, "flashtune results: %s\n", err);
    db_close(d);
    return rc ? 2 : 0;
}

int cmd_best(int argc, char **argv)
{
    const char *given_db = NULL, *path;
    int help, first;
    const tune_option options[] = { { "db", 0, &given_db, NULL } };
    int rc = tune_options_parse("best", argc, argv, options, 1, &help, &first);
    if (rc || help) {
        if (help)
            printf("usage: flashtune best [--db FILE]\n\nThe winner of every workload, per device.\n");
        return rc;
    }
    if (first < argc)
        return tune_usage_error("best", "unexpected argument '%s': best takes no operands", argv[first]);
    if (tune_db_path("best", given_db, &path))
        return TUNE_EXIT_USAGE;
    db *d;
    if (open_or_report("best", path, &d))
        return 1;
    char err[1024];
    rc = tune_print_best(d, stdout, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "flashtune best: %s\n", err);
    db_close(d);
    return rc ? 1 : 0;
}
