/* Fuzzing db import (ctest test_db_fuzz): a few hundred mutations of the winners text (bytes,
 * fields, lines; fixed seed), starting from db/tuned/\*.txt and from db_export's output, each
 * imported through the generator's check into a copy of a database holding the shipped
 * winners. A refused import must leave the file byte for byte; an accepted one must export
 * and re-import to the same text, and the shipped winners must still import after it, there
 * and in a new database. Each case is
 * bounded in time; a crash fails the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_core_internal.h"
#include "test_db_import.h"

enum { CASES = 300, SECONDS_PER_CASE = 10 };

static uint64_t rng = 0x14db14db14db14dbull;   /* fixed: every run tries the same texts */

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t pick(size_t n)
{
    return n ? (size_t)(next() % n) : 0;
}

/* A growable string. */
typedef struct text {
    char *s;
    size_t n;
} text;

static void text_set(text *t, const char *s, size_t n)
{
    free(t->s);
    t->s = malloc(n + 1);
    assert_non_null(t->s);
    memcpy(t->s, s, n);
    t->s[n] = '\0';
    t->n = n;
}

/* Replaces t[at, at+cut) with ins. */
static void splice(text *t, size_t at, size_t cut, const char *ins, size_t n)
{
    char *s = malloc(t->n - cut + n + 1);
    assert_non_null(s);
    memcpy(s, t->s, at);
    memcpy(s + at, ins, n);
    memcpy(s + at + n, t->s + at + cut, t->n - at - cut + 1);
    free(t->s);
    t->s = s;
    t->n = t->n - cut + n;
}

/* The line starting at or before pos: OUT *start, *len (without the newline). */
static void line_at(const text *t, size_t pos, size_t *start, size_t *len)
{
    size_t a = pos;
    while (a > 0 && t->s[a - 1] != '\n')
        a--;
    *start = a;
    *len = strcspn(t->s + a, "\n");
}

static void mutate_byte(text *t)
{
    static const char chars[] = "\"\\= \t\n#0123456789-+.eE_xaz\r\x01\x7f\xff";
    const size_t at = pick(t->n + 1);
    const char c = chars[pick(sizeof chars - 1)];
    switch (pick(3)) {
    case 0: if (at < t->n) { splice(t, at, 1, &c, 1); break; } /* fall through */
    case 1: splice(t, at, 0, &c, 1); break;
    default: if (at < t->n) splice(t, at, 1, "", 0); break;
    }
}

/* A field's value (or the field) replaced by a value a careless or hostile writer might use. */
static void mutate_field(text *t)
{
    static const char *const values[] = {
        "", "0", "-1", "1", "7", "64", "128", "256", "65535", "65536", "2147483647", "2147483648",
        "-2147483648", "99999999999999999999", "abc", "1e308", "nan", "inf", "-0", "0.001", "5", "1e-300",
        "\"x y\"", "\"\"", "13?0", "13.0", "12.4", "sm_90", "sm_90a", "sm_80", "abc", "8.0", "9.0", "fwd", "bwd",
        "f16", "bf16", "f32", "f64", "bwd_nope", "fwd_mma", "bwd_mma", "fwd_wgmma", "fwd_exact", "bwd_exact",
        "ref", "0123456789abcdef", "atomic", "separate", "x=y", "\"unclosed",
    };
    size_t start, len;
    line_at(t, pick(t->n), &start, &len);
    /* One of that line's fields: its k-th '='. */
    int count = 0;
    for (size_t i = 0; i < len; i++)
        count += t->s[start + i] == '=';
    if (!count)
        return;
    const char *eq = t->s + start;
    for (int k = (int)pick((size_t)count);; eq++)
        if (*eq == '=' && k-- == 0)
            break;
    size_t v = (size_t)(eq - t->s) + 1, vend = v;
    while (vend < t->n && t->s[vend] != ' ' && t->s[vend] != '\n')
        vend++;
    size_t name = (size_t)(eq - t->s);
    while (name > start && t->s[name - 1] != ' ')
        name--;
    switch (pick(4)) {
    case 0:   /* drop the field */
        splice(t, name, vend - name, "", 0);
        break;
    case 1: { /* the field twice */
        char copy[256];
        size_t n = vend - name < sizeof copy - 1 ? vend - name : sizeof copy - 2;
        copy[0] = ' ';
        memcpy(copy + 1, t->s + name, n);
        splice(t, vend, 0, copy, n + 1);
        break;
    }
    default: {
        const char *value = values[pick(sizeof values / sizeof values[0])];
        splice(t, v, vend - v, value, strlen(value));
        break;
    }
    }
}

static void mutate_line(text *t)
{
    size_t start, len, start2, len2;
    line_at(t, pick(t->n), &start, &len);
    char *line = malloc(len + 2);
    assert_non_null(line);
    memcpy(line, t->s + start, len);
    line[len] = '\n';
    line[len + 1] = '\0';
    switch (pick(6)) {
    case 0: splice(t, start, len + (start + len < t->n), "", 0); break;     /* delete */
    case 1: splice(t, start, 0, line, len + 1); break;                      /* duplicate */
    case 2: {                                                               /* cut short */
        const size_t keep = pick(len + 1);
        splice(t, start + keep, len - keep, "", 0);
        break;
    }
    case 3: splice(t, start + len, 0, " x=1", 4); break;                    /* an unknown field */
    case 4: splice(t, start, 0, "flashtune winners format 2\n", 27); break;
    default: {                                                              /* moved elsewhere */
        splice(t, start, len + (start + len < t->n), "", 0);
        line_at(t, pick(t->n), &start2, &len2);
        splice(t, start2, 0, line, len + 1);
        break;
    }
    }
    free(line);
}

/* Every eighth winner line of src (and every other line), so a case imports quickly. */
static void thin(const char *src, text *out)
{
    text_set(out, "", 0);
    int winner = 0;
    for (const char *p = src; *p;) {
        size_t n = strcspn(p, "\n");
        const int keep = strncmp(p, "device=", 7) != 0 || winner++ % 8 == 0;
        if (keep)
            splice(out, out->n, 0, p, n + (p[n] == '\n'));
        p += n + (p[n] == '\n');
    }
}

static char *raw_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void fuzz_winners_text(void **state)
{
    fixture *f = *state;
    char base[160], work[160], again[160], err[1024];
    snprintf(base, sizeof base, "%s/base.db", f->dir);
    snprintf(work, sizeof work, "%s/work.db", f->dir);
    snprintf(again, sizeof again, "%s/again.db", f->dir);
    create_shipped_db(base);
    size_t base_size;
    char *base_bytes = raw_bytes(base, &base_size);

    /* The seeds: the shipped files and the database's export, thinned. */
    int shipped;
    char **texts = shipped_texts(&shipped);
    db *d = NULL;
    assert_int_equal(db_open(base, DB_OPEN_READONLY, &d, err, sizeof err), 0);
    char *exported = fixture_export(d);
    db_close(d);
    text seeds[8] = { { 0 } };
    int n_seeds = 0;
    for (int i = 0; i < shipped && n_seeds < 7; i++)
        thin(texts[i], &seeds[n_seeds++]);
    thin(exported, &seeds[n_seeds++]);

    int refused = 0, accepted = 0;
    double slowest = 0;
    for (int c = 0; c < CASES; c++) {
        text t = { 0 };
        text_set(&t, seeds[c % n_seeds].s, seeds[c % n_seeds].n);
        const int mutations = 1 + (int)pick(3);
        for (int m = 0; m < mutations; m++)
            switch (pick(3)) {
            case 0: mutate_byte(&t); break;
            case 1: mutate_field(&t); break;
            default: mutate_line(&t); break;
            }
        copy_file(base, work);
        assert_int_equal(db_open(work, 0, &d, err, sizeof err), 0);
        db_import_options opt = checked;
        opt.keep = (int)pick(2);
        db_import_counts n;
        const double start = now();
        int rc = db_import_text(d, "fuzz.txt", t.s, &opt, &n, err, sizeof err);
        const double took = now() - start;
        slowest = took > slowest ? took : slowest;
        if (took > SECONDS_PER_CASE)
            fail_msg("case %d took %.1f s:\n%s", c, took, t.s);
        if (rc != 0) {
            refused++;
            db_close(d);
            size_t size;
            char *bytes = raw_bytes(work, &size);
            if (size != base_size || memcmp(bytes, base_bytes, size))
                fail_msg("case %d: refused (%s), but the database changed", c, err);
            free(bytes);
        } else {
            accepted++;
            char *out = fixture_export(d);
            db *e = NULL;
            unlink(again);
            assert_int_equal(db_open(again, DB_OPEN_CREATE, &e, err, sizeof err), 0);
            if (db_import_text(e, "again.txt", out, &checked, &n, err, sizeof err) != 0)
                fail_msg("case %d: accepted, but its export does not import: %s\n%s", c, err, t.s);
            char *out2 = fixture_export(e);
            assert_string_equal(out2, out);
            db_close(e);
            /* Into an empty database first, the text must not keep the shipped winners out
             * (a hash stored with other parameters did). */
            unlink(again);
            assert_int_equal(db_open(again, DB_OPEN_CREATE, &e, err, sizeof err), 0);
            assert_int_equal(db_import_text(e, "fuzz.txt", t.s, &opt, &n, err, sizeof err), 0);
            for (int s = 0; s < shipped; s++)
                if (db_import_text(e, "shipped", texts[s], &checked, &n, err, sizeof err) != 0)
                    fail_msg("case %d: after it, in a new database, the shipped winners do not import: %s\n%s", c,
                             err, t.s);
            db_close(e);
            for (int s = 0; s < shipped; s++)
                if (db_import_text(d, "shipped", texts[s], &checked, &n, err, sizeof err) != 0)
                    fail_msg("case %d: after it, the shipped winners do not import: %s\n%s", c, err, t.s);
            free(out);
            free(out2);
            db_close(d);
        }
        free(t.s);
    }
    printf("fuzz: %d cases, %d refused, %d accepted; slowest %.3f s\n", CASES, refused, accepted, slowest);
    /* The mutations must reach both sides. */
    assert_true(refused > CASES / 4);
    assert_true(accepted > 10);
    for (int i = 0; i < n_seeds; i++)
        free(seeds[i].s);
    free(exported);
    free(base_bytes);
    free_texts(texts, shipped);
}
