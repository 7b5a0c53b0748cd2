/* flashtune db export | db import: the winners as text, to review, diff and commit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_import_check.h"
#include "tune_options.h"
#include "tune_print.h"

static void help(void)
{
    printf("usage: flashtune db export [--db FILE] > winners.txt\n"
           "       flashtune db import [--db FILE] [--keep] winners.txt\n\n"
           "A text form of the winners, to review, diff and commit.\n\n"
           "import checks every line first (each kernel through the generator: its family, its\n"
           "parameters on the line's arch, its source_hash against the source this flashtune\n"
           "generates; each workload as a space file's) and writes nothing when one is wrong.\n"
           "Then, per line: a device and workload without a winner gets it (added); one whose\n"
           "winner is slower gets the line's kernel as its winner (replaced); else the stored\n"
           "winner stays (kept). The database is created, when missing, only for a good file.\n\n"
           "  --db FILE   the database (default $FLASHTUNE_DB, else flashtune.db)\n"
           "  --keep      never replace a stored winner, even by a faster one\n");
}

static int import(const char *path, const char *file, int keep)
{
    const char *cmd = "flashtune db import";
    char err[1024], *text;
    const db_import_options opt = { .keep = keep, .check = db_import_check_generated };
    if (db_import_read(file, &text, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        return 1;
    }
    /* Checked before the database is opened: a bad file never creates one. */
    db *d = NULL;
    db_import_counts n;
    int rc = db_import_check(file, text, &opt, NULL, err, sizeof err);
    if (rc == 0)
        rc = db_open(path, DB_OPEN_CREATE, &d, err, sizeof err);
    if (rc == 0)
        rc = db_import_text(d, file, text, &opt, &n, err, sizeof err);
    free(text);
    db_close(d);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        return 1;
    }
    printf("%s: %d winners added, %d replaced by faster ones, %d kept%s\n", cmd, n.added, n.replaced, n.kept,
           keep ? " (--keep)" : "");
    return 0;
}

int cmd_db(int argc, char **argv)
{
    const char *given_db = NULL, *path;
    int show_help, first, keep = 0;
    const tune_option options[] = { { "db", 0, &given_db, NULL }, { "keep", 0, NULL, &keep } };
    int rc = tune_options_parse("db", argc, argv, options, 2, &show_help, &first);
    if (rc || show_help || first >= argc) {
        if (show_help)
            help();
        else if (!rc)
            rc = tune_usage_error("db", "expected 'export' or 'import FILE'");
        return rc;
    }
    if (tune_db_path("db", given_db, &path))
        return TUNE_EXIT_USAGE;
    const char *sub = argv[first];
    const int operands = argc - first - 1;
    if (!strcmp(sub, "import") && operands == 1)
        return import(path, argv[first + 1], keep);
    if (!strcmp(sub, "export") && operands == 0 && keep)
        return tune_usage_error("db", "--keep is an option of 'db import', not of 'db export'");
    if (!strcmp(sub, "export") && operands == 0) {
        char err[1024];
        db *d;
        if (db_open(path, DB_OPEN_READONLY, &d, err, sizeof err) != 0) {
            fprintf(stderr, "flashtune db export: %s\n", err);
            return 1;
        }
        rc = db_export(d, stdout, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "flashtune db export: %s\n", err);
        db_close(d);
        return rc ? 1 : 0;
    }
    if (!strcmp(sub, "export") || !strcmp(sub, "import"))
        return tune_usage_error("db", "'db %s' takes %s, got %d operands", sub,
                                sub[0] == 'e' ? "no operand" : "one FILE", operands);
    return tune_usage_error("db", "expected 'export' or 'import FILE', got '%s'", sub);
}
