/* Aligned plain-text tables for the CLI: widths from the widest cell of each column. */
#include <stdlib.h>
#include <string.h>

#include "tune_table.h"

void tune_table_init(tune_table *t, int cols, const char *const *head, const char *align)
{
    memset(t, 0, sizeof *t);
    t->cols = cols > TUNE_TABLE_MAX_COLS ? TUNE_TABLE_MAX_COLS : cols;
    for (int c = 0; c < t->cols; c++) {
        t->head[c] = head[c];
        t->align[c] = align && align[c] == 'r' ? 'r' : 'l';
    }
}

void tune_table_add(tune_table *t, const char *const *cells)
{
    if (t->failed)
        return;
    if (t->rows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        char **grown = realloc(t->cells, (size_t)cap * (size_t)t->cols * sizeof *grown);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->cells = grown;
        t->cap = cap;
    }
    char **row = t->cells + (size_t)t->rows * (size_t)t->cols;
    for (int c = 0; c < t->cols; c++) {
        const char *s = cells[c] ? cells[c] : "";
        row[c] = malloc(strlen(s) + 1);
        if (!row[c]) {
            while (c-- > 0)
                free(row[c]);
            t->failed = 1;
            return;
        }
        strcpy(row[c], s);
    }
    t->rows++;
}

/* One line, cells padded to width; trailing blanks trimmed (an empty last cell leaves none). */
static void print_row(const tune_table *t, const int *width, const char *const *cells, FILE *out)
{
    size_t size = 1;
    for (int c = 0; c < t->cols; c++)
        size += (size_t)width[c] + 2 + strlen(cells[c]);
    char *line = malloc(size), *w = line;
    if (!line)
        return;
    for (int c = 0; c < t->cols; c++) {
        int pad = width[c] - (int)strlen(cells[c]);
        if (c)
            w += sprintf(w, "  ");
        if (t->align[c] == 'r')
            w += sprintf(w, "%*s%s", pad, "", cells[c]);
        else
            w += sprintf(w, "%s%*s", cells[c], pad, "");
    }
    while (w > line && w[-1] == ' ')
        w--;
    *w = '\0';
    fprintf(out, "%s\n", line);
    free(line);
}

int tune_table_print(const tune_table *t, FILE *out)
{
    int width[TUNE_TABLE_MAX_COLS];
    for (int c = 0; c < t->cols; c++) {
        width[c] = (int)strlen(t->head[c]);
        for (int r = 0; r < t->rows; r++) {
            int w = (int)strlen(t->cells[(size_t)r * (size_t)t->cols + (size_t)c]);
            if (w > width[c])
                width[c] = w;
        }
    }
    print_row(t, width, t->head, out);
    const char *rule[TUNE_TABLE_MAX_COLS];
    char *dashes = malloc(4096);
    if (dashes) {
        memset(dashes, '-', 4095);
        dashes[4095] = '\0';
        for (int c = 0; c < t->cols; c++)
            rule[c] = dashes + 4095 - (width[c] < 4095 ? width[c] : 4095);
        print_row(t, width, rule, out);
        free(dashes);
    }
    for (int r = 0; r < t->rows; r++)
        print_row(t, width, (const char *const *)(t->cells + (size_t)r * (size_t)t->cols), out);
    return t->failed ? -1 : 0;
}

void tune_table_free(tune_table *t)
{
    for (size_t i = 0; i < (size_t)t->rows * (size_t)t->cols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
