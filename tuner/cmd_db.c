/* flashtune results | best | db export | db import: read and move tuning results in SQLite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_print.h"

#define DEFAULT_DB "flashtune.db"

/* Takes "--db PATH" out of argv (default flashtune.db). Returns the path. */
static const char *db_path(int *argc, char **argv)
{
    const char *path = getenv("FLASHTUNE_DB") ? getenv("FLASHTUNE_DB") : DEFAULT_DB;
    for (int i = 1; i < *argc; i++)
        if (!strcmp(argv[i], "--db") && i + 1 < *argc) {
            path = argv[i + 1];
            memmove(&argv[i], &argv[i + 2], (size_t)(*argc - i - 2) * sizeof *argv);
            *argc -= 2;
            break;
        }
    return path;
}

static int open_or_report(const char *cmd, const char *path, int flags, db **d)
{
    char err[1024];
    if (db_open(path, flags, d, err, sizeof err) != 0) {
        fprintf(stderr, "flashtune %s: %s\n", cmd, err);
        return 1;
    }
    return 0;
}

int cmd_results(int argc, char **argv)
{
    const char *path = db_path(&argc, argv), *sort = "median_ms", *workload = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: flashtune results [--db FILE] [--sort COLUMN] [WORKLOAD]\n\n"
                   "Without WORKLOAD: the workloads in the database. With one (e.g. \"op=fwd dtype=bf16 d=128\n"
                   "causal=0 b=4 h=16 sq=4096 sk=4096\"): its candidates, sorted by COLUMN (median_ms,\n"
                   "tflops, registers, a parameter name...; a leading - reverses).\n");
            return 0;
        }
        if (!strcmp(argv[i], "--sort") && i + 1 < argc)
            sort = argv[++i];
        else
            workload = argv[i];
    }
    db *d;
    if (open_or_report("results", path, DB_OPEN_READONLY, &d))
        return 1;
    char err[1024];
    int rc;
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
    const char *path = db_path(&argc, argv);
    if (argc > 1) {
        printf("usage: flashtune best [--db FILE]\n\nThe winner of every workload, per device.\n");
        return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
    }
    db *d;
    if (open_or_report("best", path, DB_OPEN_READONLY, &d))
        return 1;
    char err[1024];
    int rc = tune_print_best(d, stdout, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "flashtune best: %s\n", err);
    db_close(d);
    return rc ? 1 : 0;
}

int cmd_db(int argc, char **argv)
{
    const char *path = db_path(&argc, argv);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: flashtune db export [--db FILE] > winners.txt\n"
               "       flashtune db import [--db FILE] winners.txt\n\n"
               "A text form of the winners, to review, diff and commit; import adds what is missing.\n");
        return argc < 2 ? 2 : 0;
    }
    char err[1024];
    db *d;
    int rc;
    if (!strcmp(argv[1], "export") && argc == 2) {
        if (open_or_report("db export", path, DB_OPEN_READONLY, &d))
            return 1;
        rc = db_export(d, stdout, err, sizeof err);
    } else if (!strcmp(argv[1], "import") && argc == 3) {
        if (open_or_report("db import", path, DB_OPEN_CREATE, &d))
            return 1;
        int added = 0, kept = 0;
        rc = db_import_file(d, argv[2], &added, &kept, err, sizeof err);
        if (rc == 0)
            printf("flashtune db import: %d winners added, %d already there\n", added, kept);
    } else {
        fprintf(stderr, "flashtune db: expected 'export' or 'import FILE', got '%s' (try --help)\n", argv[1]);
        return 2;
    }
    if (rc != 0)
        fprintf(stderr, "flashtune db %s: %s\n", argv[1], err);
    db_close(d);
    return rc ? 1 : 0;
}
