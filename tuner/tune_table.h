/* The CLI's tables (tune_table.c): aligned plain text (headings, a rule, rows; columns two
 * spaces apart, left- or right-aligned, no trailing blanks), or the same rows as CSV (RFC 4180)
 * or JSON (an array of objects keyed by the headings) for `--format`. */
#ifndef FT_TUNE_TABLE_H
#define FT_TUNE_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef enum tune_format { TUNE_FORMAT_TEXT, TUNE_FORMAT_CSV, TUNE_FORMAT_JSON } tune_format;

/* "text", "csv" or "json": 0 with *f set, else -1. */
int tune_format_parse(const char *name, tune_format *f /* OUT */);

/* The widest table: `best`'s workload fields, every tunable of the parameter table and four
 * figures, with room for parameters to come (a wider table is an error, never cut short). */
#define TUNE_TABLE_MAX_COLS 64
typedef struct tune_table {
    int cols;
    const char *head[TUNE_TABLE_MAX_COLS];
    char align[TUNE_TABLE_MAX_COLS];   /* 'l' text, 'r' a number (right-aligned), 'b' a flag: a cell
                                          is set when not empty */
    char **cells;                       /* rows * cols strings, malloc'ed */
    int rows, cap;
    int failed;                         /* out of memory: tune_table_print reports it */
    int too_wide;                       /* more columns asked for than TUNE_TABLE_MAX_COLS: likewise */
} tune_table;

/* cols headings; align has one 'l', 'r' or 'b' per column ("llrr"). */
void tune_table_init(tune_table *t, int cols, const char *const *head, const char *align);
/* Appends a row of cols strings (copied; NULL prints as empty). */
void tune_table_add(tune_table *t, const char *const *cells);
/* Prints headings, a rule and the rows. 0, or -1 when a row could not be stored or writing
 * failed (it stops at the first failed row). */
int tune_table_print(const tune_table *t, FILE *out);
/* The rows in format f. Text: tune_table_print. CSV: a heading line, then one line per row,
 * CRLF-terminated, fields quoted when they hold a comma, a quote or a line break, a 'b' cell
 * true or false, a "-" cell empty. JSON: an array
 * of one object per row, keyed by heading; an 'r' cell that is a number is a JSON number, a 'b'
 * cell true or false, an empty or "-" cell null, anything else a string (escaped; bytes that
 * are not UTF-8 become U+FFFD). Returns 0, or -1 as tune_table_print, with the reason in err
 * ("writing the output failed: No space left on device"). */
int tune_table_write(const tune_table *t, tune_format f, FILE *out, char *err, size_t len);
void tune_table_free(tune_table *t);

#endif
