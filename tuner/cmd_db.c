/* flashtune db export | db import: the winners as text, to review, diff and commit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_options.h"
#include "tune_print.h"

static void help(void)
{
    printf("usage: flashtune db export [--db FILE] > winners.txt\n"
           "       flashtune db import [--db FILE] winners.txt\n\n"
           "A text form of the winners, to review, diff and commit; import adds what is missing.\n");
}

int cmd_db(int argc, char **argv)
{
    const char *given_db = NULL, *path;
    int show_help, first;
    const tune_option options[] = { { "db", 0, &given_db, NULL } };
    int rc = tune_options_parse("db", argc, argv, options, 1, &show_help, &first);
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
    char err[1024];
    db *d;
    if (!strcmp(sub, "export") && operands == 0) {
        if (db_open(path, DB_OPEN_READONLY, &d, err, sizeof err) != 0) {
            fprintf(stderr, "flashtune db export: %s\n", err);
            return 1;
        }
        rc = db_export(d, stdout, err, sizeof err);
    } else if (!strcmp(sub, "import") && operands == 1) {
        if (db_open(path, DB_OPEN_CREATE, &d, err, sizeof err) != 0) {
            fprintf(stderr, "flashtune db import: %s\n", err);
            return 1;
        }
        int added = 0, kept = 0;
        rc = db_import_file(d, argv[first + 1], &added, &kept, err, sizeof err);
        if (rc == 0)
            printf("flashtune db import: %d winners added, %d already there\n", added, kept);
    } else if (!strcmp(sub, "export") || !strcmp(sub, "import")) {
        return tune_usage_error("db", "'db %s' takes %s, got %d operands", sub,
                                sub[0] == 'e' ? "no operand" : "one FILE", operands);
    } else {
        return tune_usage_error("db", "expected 'export' or 'import FILE', got '%s'", sub);
    }
    if (rc != 0)
        fprintf(stderr, "flashtune db %s: %s\n", sub, err);
    db_close(d);
    return rc ? 1 : 0;
}
