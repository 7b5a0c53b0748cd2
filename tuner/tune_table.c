/* The CLI's tables: aligned plain text (widths from the widest cell of each column), CSV or
 * JSON. Writing stops at the first row the stream refuses (a full disk, /dev/full). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tune_table.h"

int tune_format_parse(const char *name, tune_format *f)
{
    static const char *const names[] = { "text", "csv", "json" };
    for (int i = 0; name && i < 3; i++)
        if (!strcmp(name, names[i])) {
            *f = (tune_format)i;
            return 0;
        }
    return -1;
}

void tune_table_init(tune_table *t, int cols, const char *const *head, const char *align)
{
    memset(t, 0, sizeof *t);
    t->too_wide = cols > TUNE_TABLE_MAX_COLS;
    t->cols = t->too_wide ? TUNE_TABLE_MAX_COLS : cols;
    for (int c = 0; c < t->cols; c++) {
        t->head[c] = head[c];
        t->align[c] = align && (align[c] == 'r' || align[c] == 'b') ? align[c] : 'l';
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

static const char *const *row_cells(const tune_table *t, int r)
{
    return (const char *const *)(t->cells + (size_t)r * (size_t)t->cols);
}

/* ---- text ---------------------------------------------------------------------------------- */

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

static void write_text(const tune_table *t, FILE *out)
{
    int width[TUNE_TABLE_MAX_COLS];
    for (int c = 0; c < t->cols; c++) {
        width[c] = (int)strlen(t->head[c]);
        for (int r = 0; r < t->rows; r++) {
            int w = (int)strlen(row_cells(t, r)[c]);
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
    for (int r = 0; r < t->rows && !ferror(out); r++)
        print_row(t, width, row_cells(t, r), out);
}

/* ---- CSV (RFC 4180) ------------------------------------------------------------------------ */

static void csv_field(const char *s, FILE *out)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* One line; a row's flags are true or false and its "-" cells empty, as JSON's null. */
static void csv_line(const tune_table *t, const char *const *cells, int heading, FILE *out)
{
    for (int c = 0; c < t->cols; c++) {
        if (c)
            fputc(',', out);
        if (!heading && t->align[c] == 'b')
            fputs(cells[c][0] ? "true" : "false", out);
        else if (heading || strcmp(cells[c], "-"))
            csv_field(cells[c], out);
    }
    fputs("\r\n", out);
}

static void write_csv(const tune_table *t, FILE *out)
{
    csv_line(t, t->head, 1, out);
    for (int r = 0; r < t->rows && !ferror(out); r++)
        csv_line(t, row_cells(t, r), 0, out);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* 1 when s is a number by JSON's grammar (no '+', no leading zeros, no "inf" or "nan"). */
static int is_json_number(const char *s)
{
    s += *s == '-';
    if (!is_digit(*s))
        return 0;
    if (*s == '0')
        s++;
    else
        while (is_digit(*s))
            s++;
    if (*s == '.') {
        if (!is_digit(*++s))
            return 0;
        while (is_digit(*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        if (!is_digit(*s))
            return 0;
        while (is_digit(*s))
            s++;
    }
    return *s == '\0';
}

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when it is not one. */
static int utf8_length(const unsigned char *s)
{
    const unsigned char c = s[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;   /* the second byte's range */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

static void json_string(const char *text, FILE *out)
{
    fputc('"', out);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        const int n = utf8_length(s);
        if (n == 0) {
            fputs("\\ufffd", out);
            s++;
        } else if (n > 1) {
            fwrite(s, 1, (size_t)n, out);
            s += n;
        } else {
            if (*s == '"' || *s == '\\')
                fprintf(out, "\\%c", *s);
            else if (*s == '\n')
                fputs("\\n", out);
            else if (*s == '\t')
                fputs("\\t", out);
            else if (*s < 0x20 || *s == 0x7F)
                fprintf(out, "\\u%04x", *s);
            else
                fputc(*s, out);
            s++;
        }
    }
    fputc('"', out);
}

static void json_value(char kind, const char *cell, FILE *out)
{
    if (kind == 'b')
        fputs(cell[0] ? "true" : "false", out);
    else if (!cell[0] || !strcmp(cell, "-"))
        fputs("null", out);
    else if (kind == 'r' && is_json_number(cell))
        fputs(cell, out);
    else
        json_string(cell, out);
}

static void write_json(const tune_table *t, FILE *out)
{
    fputc('[', out);
    for (int r = 0; r < t->rows && !ferror(out); r++) {
        const char *const *cells = row_cells(t, r);
        fputs(r ? ",\n  {" : "\n  {", out);
        for (int c = 0; c < t->cols; c++) {
            if (c)
                fputs(", ", out);
            json_string(t->head[c], out);
            fputs(": ", out);
            json_value(t->align[c], cells[c], out);
        }
        fputc('}', out);
    }
    fputs(t->rows ? "\n]\n" : "]\n", out);
}

/* ---- output -------------------------------------------------------------------------------- */

int tune_table_write(const tune_table *t, tune_format f, FILE *out, char *err, size_t len)
{
    if (t->too_wide) {
        snprintf(err, len, "a table of more than %d columns (TUNE_TABLE_MAX_COLS)", TUNE_TABLE_MAX_COLS);
        return -1;
    }
    if (t->failed) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    errno = 0;
    if (f == TUNE_FORMAT_CSV)
        write_csv(t, out);
    else if (f == TUNE_FORMAT_JSON)
        write_json(t, out);
    else
        write_text(t, out);
    if (ferror(out)) {
        snprintf(err, len, "writing the output failed: %s", errno ? strerror(errno) : "I/O error");
        return -1;
    }
    return 0;
}

int tune_table_print(const tune_table *t, FILE *out)
{
    char err[128];
    return tune_table_write(t, TUNE_FORMAT_TEXT, out, err, sizeof err);
}

void tune_table_free(tune_table *t)
{
    for (size_t i = 0; i < (size_t)t->rows * (size_t)t->cols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
