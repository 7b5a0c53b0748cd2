/* Template parameters on the command line (emit, compile, and later the tuner): the shared
 * parser of --template NAME, --arch, -o FILE and PARAM=VALUE, and its help text. */
#ifndef FT_TUNE_PARAMS_H
#define FT_TUNE_PARAMS_H

#include <stddef.h>
#include <stdio.h>

#include "gen_internal.h"
#include "tune_options.h"


typedef struct tune_cli {
    const char *arch;           /* --arch, "sm_90" when not given */
    const char *output;         /* -o FILE (--output), or NULL */
    int help;                   /* --help or -h was given: nothing else was checked */
    int show_log;               /* --log (compile) */
    int show_hash;              /* --hash (emit) */
    gen_config config;          /* the family's defaults with every PARAM=VALUE applied, validated */
} tune_cli;

/* Sets one parameter of c from "NAME=VALUE" (gen_config_parse). Returns 0, or -1 with the reason in err naming
 * the parameter or the value. */
int tune_params_set(gen_config *c, const char *assignment, char *err, size_t len);

/* Parses argv[1..argc-1] of sub-command `command` ("emit") into cli: the options (as
 * tune_options_parse: --name VALUE or --name=VALUE, none twice), then the PARAM=VALUE operands
 * in order (a parameter given twice is an error naming both values); then validates the set for
 * the arch's shared memory. On error prints "flashtune COMMAND: reason" to stderr and returns
 * TUNE_EXIT_USAGE; else 0. */
int tune_cli_parse(tune_cli *cli, const char *command, int argc, char **argv);

/* Writes size bytes of data to the file path (created or truncated), or to stdout when path is
 * NULL. Returns 0, or 1 after printing "flashtune COMMAND: writing PATH failed: REASON". */
int tune_cli_write(const char *command, const char *path, const void *data, size_t size);

/* Lists the families (with their dtypes and entries), the parameters (with each family's
 * default, then tune_params_table) and the archs. */
void tune_params_help(FILE *out);
/* One line per parameter of the table: name, role (problem or tunable), range, meaning and
 * symbolic values. For `flashtune help`. */
void tune_params_table(FILE *out);

#endif
