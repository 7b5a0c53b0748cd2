/* The flashtune command's option conventions, in one place: getopt_long for every sub-command
 * ("--name VALUE" and "--name=VALUE" alike), messages that name the option and the value,
 * a repeated option refused rather than silently winning, strict integers, and the database
 * path from --db or $FLASHTUNE_DB. */
#ifndef FT_TUNE_OPTIONS_H
#define FT_TUNE_OPTIONS_H

#include <stddef.h>

/* Exit status of a usage error: unknown option, missing or bad value. */
#define TUNE_EXIT_USAGE 2

/* One option of a sub-command. Exactly one of `value` (an option with a value) and `flag`
 * (a switch, set to 1) is non-NULL. */
typedef struct tune_option {
    const char *name;       /* long name without "--" */
    char short_name;        /* e.g. 'o' for -o, or 0 */
    const char **value;     /* receives the value */
    int *flag;              /* receives 1 */
} tune_option;

/* Parses the options of argv[1..argc-1] for sub-command `command` ("db import"); --help and -h
 * set *help and stop. The operands (arguments that are not options) are moved to the end:
 * *first_operand is the index of the first. On an unknown option, a missing value, a value given
 * to a switch, or an option given twice, prints "flashtune COMMAND: reason" and a pointer to
 * --help on stderr and returns TUNE_EXIT_USAGE; else 0. */
int tune_options_parse(const char *command, int argc, char **argv, const tune_option *options, int count,
                       int *help, int *first_operand);

/* Prints "flashtune COMMAND: reason" and the pointer to --help on stderr; returns TUNE_EXIT_USAGE. */
int tune_usage_error(const char *command, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Parses `text`, the value of `option`, as a decimal integer in lo..hi: digits with an optional
 * leading '-', nothing else (no spaces, no '+'). Returns 0, or prints the usage error naming the
 * option, the value and the range and returns TUNE_EXIT_USAGE. */
int tune_parse_int(const char *command, const char *option, const char *text, long lo, long hi, long *out);

/* Parses `text`, the value of `option`, as a duration: a whole number of seconds, or of seconds,
 * minutes or hours with the suffix s, m or h ("90", "90s", "10m", "2h"), at least 1 s and at most
 * a week. Returns 0 (OUT: *seconds), or prints the usage error naming the option and the value and
 * returns TUNE_EXIT_USAGE. */
int tune_parse_duration(const char *command, const char *option, const char *text, long *seconds);

/* The database path: `given` (--db) when not NULL, else $FLASHTUNE_DB when set, else
 * "flashtune.db". An empty path from either is a usage error naming where it came from. */
int tune_db_path(const char *command, const char *given, const char **path);

/* The search space `flashtune tune` runs when none is named: a checkout's tuner/spaces/default.lua
 * (the current folder), else the one installed with the command; buf holds the latter's path
 * (PATH_MAX + 64 bytes are enough). */
const char *tune_default_space(char *buf, size_t len);

#endif
