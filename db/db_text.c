/* Text forms: the NAME=VALUE field reader shared by the import and the CLI, the workload's
 * one-line form, and a text file read whole. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_core_internal.h"

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void db_fields_free(db_fields *f)
{
    if (!f)
        return;
    free(f->buf);
    memset(f, 0, sizeof *f);
}

int db_fields_parse(const char *line, db_fields *f, char *err, size_t len)
{
    memset(f, 0, sizeof *f);
    size_t n = strlen(line);
    f->buf = malloc(n + 1);
    if (!f->buf)
        return db_fail(err, len, "out of memory");
    memcpy(f->buf, line, n + 1);
    char *r = f->buf;
    for (;;) {
        while (is_space(*r))
            r++;
        if (!*r)
            return 0;
        char *name = r;
        while (is_name_char(*r))
            r++;
        if (*r != '=' || r == name) {
            char *end = name;
            while (*end && !is_space(*end))
                end++;
            *end = '\0';
            db_fail(err, len, "'%s' is not NAME=VALUE", name);
            goto fail;
        }
        *r++ = '\0';
        char *value = r;
        if (*r == '"') {
            /* Unescape in place: the write position never passes the read position. */
            char *w = r++;
            value = w;
            for (;; r++) {
                if (!*r) {
                    db_fail(err, len, "field '%s': the quoted value is not closed", name);
                    goto fail;
                }
                if (*r == '"')
                    break;
                if (*r == '\\') {
                    if (r[1] != '"' && r[1] != '\\') {
                        db_fail(err, len, "field '%s': unknown escape '\\%c' (only \\\" and \\\\)", name,
                                r[1] ? r[1] : ' ');
                        goto fail;
                    }
                    r++;
                }
                *w++ = *r;
            }
            r++;
            if (*r && !is_space(*r)) {
                db_fail(err, len, "field '%s': text after the closing quote", name);
                goto fail;
            }
            *w = '\0';
            if (*r)
                r++;
        } else {
            while (*r && !is_space(*r))
                r++;
            if (*r)
                *r++ = '\0';
        }
        for (int i = 0; i < f->count; i++)
            if (!strcmp(f->name[i], name)) {
                db_fail(err, len, "field '%s' appears twice", name);
                goto fail;
            }
        if (f->count == DB_FIELDS_MAX) {
            db_fail(err, len, "more than %d fields", DB_FIELDS_MAX);
            goto fail;
        }
        f->name[f->count] = name;
        f->value[f->count] = value;
        f->used[f->count++] = 0;
    }
fail:
    db_fields_free(f);
    return -1;
}

const char *db_field_take(db_fields *f, const char *name)
{
    for (int i = 0; i < f->count; i++)
        if (!strcmp(f->name[i], name)) {
            f->used[i] = 1;
            return f->value[i];
        }
    return NULL;
}

const char *db_fields_unused(const db_fields *f)
{
    for (int i = 0; i < f->count; i++)
        if (!f->used[i])
            return f->name[i];
    return NULL;
}

/* Strict decimal integer (gen_parse_long: no blanks, no '+'): 0, or -1. */
static int parse_int(const char *text, int *out)
{
    long v;
    if (gen_parse_long(text, INT_MIN, INT_MAX, &v))
        return -1;
    *out = (int)v;
    return 0;
}

int db_field_int(db_fields *f, const char *name, int lo, int hi, int *out, char *err, size_t len)
{
    return db_field_int_or(f, name, lo, hi, 0, 1, out, err, len);
}

int db_field_int_or(db_fields *f, const char *name, int lo, int hi, int absent, int required, int *out, char *err,
                    size_t len)
{
    const char *v = db_field_take(f, name);
    if (!v && !required) {
        *out = absent;
        return 0;
    }
    if (!v)
        return db_fail(err, len, "missing field '%s'", name);
    if (parse_int(v, out) != 0)
        return db_fail(err, len, "field '%s': '%s' is not an integer", name, v);
    if (*out < lo || *out > hi)
        return db_fail(err, len, "field '%s': %d is not in %d..%d", name, *out, lo, hi);
    return 0;
}

void db_write_quoted(FILE *out, const char *value)
{
    fputc('"', out);
    for (const char *c = value; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

/* ---- workloads ------------------------------------------------------------------------ */

/* " NAME=VALUE" of each field the text shows, those of the shape (always) or of the kind
 * (when the workload has them: a plain workload's text is as it always was). */
static void format_fields(const db_workload *w, int kind, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
#define SHOW_(a, name, alias, required, shown)                                                              \
    if ((shown == DB_SHOWN_ALWAYS) != kind                                                                  \
        && (shown == DB_SHOWN_ALWAYS || (shown == DB_SHOWN_IF_SET ? w->name != 0 : w->window != 0)) && at < len) \
        at += (size_t)snprintf(buf + at, len - at, " %s=%d", #name, w->name);
    DB_WORKLOAD_FIELDS(SHOW_, )
#undef SHOW_
}

void db_workload_extra_format(const db_workload *w, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
#define EXTRA_(a, name, ...)                                                                     \
    if (w->name != 0 && at < len)                                                              \
        at += (size_t)snprintf(buf + at, len - at, "%s%s=%d", at ? " " : "", #name, w->name);
    DB_WORKLOAD_EXTRA_FIELDS(EXTRA_, )
#undef EXTRA_
}

int db_workload_extra_parse(const char *text, db_workload *w, char *err, size_t len)
{
    char why[256];
    db_fields f;
    if (db_fields_parse(text ? text : "", &f, why, sizeof why) != 0)
        return db_fail(err, len, "workload extra '%.80s': %s", text, why);
    int rc = 0;
#define TAKE_(a, name, ...)                                                                       \
    if (rc == 0) {                                                                                \
        const char *v = db_field_take(&f, #name);                                                 \
        w->name = 0;                                                                              \
        if (v && parse_int(v, &w->name) != 0)                                                     \
            rc = db_fail(err, len, "workload extra '%.80s': %s='%s' is not an integer", text, #name, v); \
    }
    DB_WORKLOAD_EXTRA_FIELDS(TAKE_, )
#undef TAKE_
    if (rc == 0 && db_fields_unused(&f))
        rc = db_fail(err, len, "workload extra '%.80s': field '%s' is not one this build knows (a database from a "
                     "newer flashtune?)", text, db_fields_unused(&f));
    db_fields_free(&f);
    return rc;
}

const char *db_workload_kind_format(const db_workload *w, char *buf, size_t len)
{
    format_fields(w, 1, buf, len);
    return buf;
}

const char *db_workload_format(const db_workload *w, char *buf, size_t len)
{
    const char *op = db_op_name(w->op), *dtype = db_dtype_name(w->dtype);
    char shape[160], kind[160];
    format_fields(w, 0, shape, sizeof shape);
    format_fields(w, 1, kind, sizeof kind);
    snprintf(buf, len, "op=%s dtype=%s%s%s", op ? op : "?", dtype ? dtype : "?", shape, kind);
    return buf;
}

/* The value of the long or the short name; both given is an error (-1), neither gives 0. */
static int take_either(db_fields *f, const char *name, const char *alias, const char **value, char *err,
                       size_t len)
{
    const char *a = db_field_take(f, name), *b = alias ? db_field_take(f, alias) : NULL;
    if (a && b)
        return db_fail(err, len, "both '%s' and '%s' are given", name, alias);
    *value = a ? a : b;
    return 0;
}

int db_workload_take(db_fields *f, db_workload *w, char *err, size_t len)
{
    static const struct { const char *name, *alias; int required; size_t offset; } ints[] = {
#define FIELD_(a, name, alias, required, shown) { #name, alias, required, offsetof(db_workload, name) },
        DB_WORKLOAD_FIELDS(FIELD_, )
#undef FIELD_
    };
    char why[512];
    memset(w, 0, sizeof *w);
    int rc = 0, dv_default = 0;
    enum { INTS = sizeof ints / sizeof ints[0] };
    /* Every known field taken first, so that one left over is reported before anything missing:
     * "op=fwd foo=1" is a misspelling, not a workload without its dtype. */
    const char *op = db_field_take(f, "op"), *dtype = db_field_take(f, "dtype"), *values[INTS] = { NULL };
    for (size_t i = 0; rc == 0 && i < INTS; i++)
        rc = take_either(f, ints[i].name, ints[i].alias, &values[i], why, sizeof why);
    if (rc == 0 && db_fields_unused(f)) {
        char names[400] = "op, dtype";
        for (size_t k = 0; k < INTS; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), ", %s%s%s", ints[k].name,
                     ints[k].alias ? " or " : "", ints[k].alias ? ints[k].alias : "");
        rc = db_fail(why, sizeof why, "unknown field '%s' (a workload takes %s)", db_fields_unused(f), names);
    }
    if (rc == 0) {
        if (!op)
            rc = db_fail(why, sizeof why, "missing field 'op'");
        else if (db_op_parse(op) < 0)
            rc = db_fail(why, sizeof why, "op=%s is not fwd or bwd", op);
        else if (!dtype)
            rc = db_fail(why, sizeof why, "missing field 'dtype'");
        else if (db_dtype_parse(dtype) < 0)
            rc = db_fail(why, sizeof why, "dtype=%s is not f32, f16, bf16 or f64", dtype);
    }
    if (rc == 0) {
        w->op = db_op_parse(op);
        w->dtype = db_dtype_parse(dtype);
    }
    for (size_t i = 0; rc == 0 && i < INTS; i++) {
        const char *v = values[i];
        int *slot = (int *)((char *)w + ints[i].offset);
        if (!v && ints[i].offset == offsetof(db_workload, head_dim_v))
            dv_default = 1;
        else if (!v && ints[i].required)
            rc = db_fail(why, sizeof why, "missing field '%s'", ints[i].name);
        else if (v && parse_int(v, slot) != 0)
            rc = db_fail(why, sizeof why, "field '%s': '%s' is not an integer", ints[i].name, v);
    }
    if (rc == 0 && dv_default)
        w->head_dim_v = w->head_dim;
    if (rc != 0)
        return db_fail(err, len, "workload: %s", why);
    return db_workload_check(w, err, len);   /* its messages begin "workload ..." */
}

int db_workload_parse(const char *text, db_workload *w, char *err, size_t len)
{
    char why[512];
    if (!text || !w)
        return db_fail(err, len, "db_workload_parse: %s is NULL", text ? "w" : "text");
    db_fields f;
    if (db_fields_parse(text, &f, why, sizeof why) != 0)
        return db_fail(err, len, "workload: %s", why);
    const int rc = db_workload_take(&f, w, err, len);
    db_fields_free(&f);
    return rc;
}

/* ---- files ---------------------------------------------------------------------------- */

int db_text_file_read(const char *path, const char *what, int max_bytes, char **text, char *err, size_t len)
{
    *text = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return db_fail(err, len, "cannot read %s %s: %s", what, path, strerror(errno));
    struct stat sb;
    int e = fstat(fd, &sb) != 0 ? errno : S_ISDIR(sb.st_mode) ? EISDIR : 0;
    if (e) {
        close(fd);
        return db_fail(err, len, "cannot read %s %s: %s", what, path, strerror(e));
    }
    /* Read in steps, never more than the cap: a device or pipe may have no end. */
    char *buf = NULL;
    size_t size = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (size == cap) {
            size_t want = cap ? 2 * cap : 65536;
            if (want > (size_t)max_bytes + 1)
                want = (size_t)max_bytes + 1;
            char *grown = want > cap ? realloc(buf, want + 1) : NULL;
            if (!grown) {
                rc = want > cap ? db_fail(err, len, "out of memory reading %s %s", what, path)
                                : db_fail(err, len, "cannot read %s %s: it is larger than %d MiB, the most a %s "
                                          "may have", what, path, max_bytes >> 20, what);
                break;
            }
            buf = grown;
            cap = want;
        }
        ssize_t got = read(fd, buf + size, cap - size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = db_fail(err, len, "cannot read %s %s: %s", what, path, strerror(errno));
            break;
        }
        if (got == 0)
            break;
        size += (size_t)got;
    }
    close(fd);
    if (rc == 0 && memchr(buf ? buf : "", '\0', size))
        rc = db_fail(err, len, "%s %s is not a text file (it holds NUL bytes)", what, path);
    if (rc != 0) {
        free(buf);
        return -1;
    }
    if (!buf && !(buf = malloc(1)))
        return db_fail(err, len, "out of memory reading %s %s", what, path);
    buf[size] = '\0';
    *text = buf;
    return 0;
}
