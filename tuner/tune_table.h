/* Aligned plain-text tables for the CLI (tune_table.c): headings, a rule, rows; columns two
 * spaces apart, left- or right-aligned, no trailing blanks. */
#ifndef FT_TUNE_TABLE_H
#define FT_TUNE_TABLE_H

#include <stdio.h>

#define TUNE_TABLE_MAX_COLS 32
typedef struct tune_table {
    int cols;
    const char *head[TUNE_TABLE_MAX_COLS];
    char align[TUNE_TABLE_MAX_COLS];   /* 'l' or 'r' (numbers) */
    char **cells;                       /* rows * cols strings, malloc'ed */
    int rows, cap;
    int failed;                         /* out of memory: tune_table_print reports it */
} tune_table;

/* cols headings; align has one 'l' or 'r' per column ("llrr"). */
void tune_table_init(tune_table *t, int cols, const char *const *head, const char *align);
/* Appends a row of cols strings (copied; NULL prints as empty). */
void tune_table_add(tune_table *t, const char *const *cells);
/* Prints headings, a rule and the rows. 0, or -1 when a row could not be stored. */
int tune_table_print(const tune_table *t, FILE *out);
void tune_table_free(tune_table *t);

#endif
