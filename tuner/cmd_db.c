/* flashtune db export | db import | db declare: the winners as text, to review, diff and commit;
 * their declaration judged again (db_declare_winners). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_import_check.h"
#include "tune_options.h"
#include "tune_print.h"

static void help(void)
{
    printf("usage: flashtune db export [--db FILE] > winners.txt\n"
           "       flashtune db import [--db FILE] [--keep] winners.txt\n"
           "       flashtune db declare [--db FILE] [--margin PERCENT]\n\n"
           "A text form of the winners, to review, diff and commit; and their declaration.\n\n"
           "import checks every line first (each kernel through the generator: its family, its\n"
           "parameters on the line's arch, its source_hash against the source this flashtune\n"
           "generates; each workload as a space file's) and writes nothing when one is wrong.\n"
           "Then, per line: a device and workload without a winner gets it (added); one whose\n"
           "winner is slower gets the line's kernel as its winner (replaced); else the stored\n"
           "winner stays (kept). The database is created, when missing, only for a good file.\n\n"
           "declare judges every workload's timings again (a sweep does it for the workloads it\n"
           "measured): the stored winner stays while it is within the margin of the fastest (or\n"
           "within the two timings' spreads, at most 5 %%) and spills no registers where a tied\n"
           "kernel spills none; else of the kernels within it, those without spills first, the one\n"
           "within it at the most other workloads of the kind; else the fastest. Export and the\n"
           "library serve the declared winner. With --margin 0 only the spreads make ties.\n\n"
           "  --db FILE         the database (default $FLASHTUNE_DB, else flashtune.db)\n"
           "  --keep            never replace a stored winner, even by a faster one\n"
           "  --margin PERCENT  the least width of a tie, 0..100 (default 2: the noise measured\n"
           "                    between two sweeps of the same kernels)\n");
}

/* A percentage 0..100 ("2", "0.5"): 0 (OUT: *fraction), or the usage error. */
static int parse_margin(const char *text, double *fraction)
{
    char *end = NULL;
    const double v = text[0] && text[0] != ' ' ? strtod(text, &end) : NAN;
    if (!end || *end || !(v >= 0 && v <= 100))
        return tune_usage_error("db", "--margin='%s' must be a percentage from 0 to 100 (2 for 2 %%)", text);
    *fraction = v / 100;
    return 0;
}

static int declare(const char *path, double margin)
{
    char err[1024];
    db *d;
    db_declare_counts n;
    if (db_open(path, 0, &d, err, sizeof err) != 0 ||
        db_declare_winners(d, 0, NULL, 0, margin, &n, err, sizeof err) != 0) {
        fprintf(stderr, "flashtune db declare: %s\n", err);
        db_close(d);
        return 1;
    }
    db_close(d);
    tune_print_declare_counts(stdout, "flashtune db declare: ", &n, margin);
    return 0;
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
    const char *given_db = NULL, *path, *margin_text = NULL;
    int show_help, first, keep = 0;
    const tune_option options[] = { { "db", 0, &given_db, NULL }, { "keep", 0, NULL, &keep },
                                    { "margin", 0, &margin_text, NULL } };
    int rc = tune_options_parse("db", argc, argv, options, 3, &show_help, &first);
    if (rc || show_help || first >= argc) {
        if (show_help)
            help();
        else if (!rc)
            rc = tune_usage_error("db", "expected 'export', 'import FILE' or 'declare'");
        return rc;
    }
    if (tune_db_path("db", given_db, &path))
        return TUNE_EXIT_USAGE;
    const char *sub = argv[first];
    const int operands = argc - first - 1;
    if (margin_text && strcmp(sub, "declare") != 0)
        return tune_usage_error("db", "--margin is an option of 'db declare', not of 'db %s'", sub);
    if (!strcmp(sub, "declare")) {
        double margin = DB_DECLARE_MARGIN;
        if (operands)
            return tune_usage_error("db", "'db declare' takes no operand, got %d", operands);
        if (keep)
            return tune_usage_error("db", "--keep is an option of 'db import', not of 'db declare'");
        if (margin_text && parse_margin(margin_text, &margin))
            return TUNE_EXIT_USAGE;
        return declare(path, margin);
    }
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
    return tune_usage_error("db", "expected 'export', 'import FILE' or 'declare', got '%s'", sub);
}
