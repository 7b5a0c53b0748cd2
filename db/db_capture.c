/* Capture files: the problems an application ran through libflashtune, one a line, with how many
 * calls each took and what served it (FLASHTUNE_CAPTURE, ft_capture_flush). The library merges
 * its counts into the file; `flashtune tune --from-capture` reads it. Several processes may write
 * one file: each merge holds an exclusive lock on FILE.lock (never renamed, so every writer locks
 * the same inode) while it reads the file, adds its counts and renames a new version into place,
 * so a crash mid-write leaves the old file whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "db_core_internal.h"

#define CAPTURE_HEADER "flashtune capture format 1"
#define CAPTURE_MAX_BYTES (64 << 20)

static const char *const served_names[] = { "tuned", "nearest", "default" };

const char *db_served_name(int served)
{
    return served >= 0 && served < (int)(sizeof served_names / sizeof served_names[0]) ? served_names[served] : "?";
}

static int served_parse(const char *text)
{
    for (int i = 0; i < (int)(sizeof served_names / sizeof served_names[0]); i++)
        if (!strcmp(text, served_names[i]))
            return i;
    return -1;
}

/* One line's fields into *row: 0, or -1 with the reason. */
static int parse_row(const char *line, db_capture_row *row, char *err, size_t len)
{
    db_fields f;
    if (db_fields_parse(line, &f, err, len) != 0)
        return -1;
    memset(row, 0, sizeof *row);
    int rc = 0;
    const char *calls = db_field_take(&f, "calls"), *served = db_field_take(&f, "served");
    char *end = NULL;
    if (!calls)
        rc = db_fail(err, len, "missing field 'calls'");
    else if (errno = 0, row->calls = strtoull(calls, &end, 10), errno || !*calls || *end || *calls == '-' ||
             row->calls == 0)
        rc = db_fail(err, len, "field 'calls': '%s' is not a positive integer", calls);
    else if (!served)
        rc = db_fail(err, len, "missing field 'served'");
    else if ((row->served = served_parse(served)) < 0)
        rc = db_fail(err, len, "field 'served': '%s' is not tuned, nearest or default", served);
    else if (db_field_int_or(&f, "deterministic", 0, 1, 0, 0, &row->deterministic, err, len) != 0)
        rc = -1;
    else if (db_workload_take(&f, &row->workload, err, len) != 0)
        rc = -1;
    db_fields_free(&f);
    return rc;
}

static int same_problem(const db_capture_row *a, const db_capture_row *b)
{
    return a->deterministic == b->deterministic && !memcmp(&a->workload, &b->workload, sizeof a->workload);
}

int db_capture_parse(const char *path, const char *text, db_capture_row **rows, int *count, char *err, size_t len)
{
    *rows = NULL;
    *count = 0;
    db_capture_row *list = NULL;
    int n = 0, cap = 0, line_no = 0, seen_header = 0, rc = 0;
    for (const char *line = text; rc == 0 && *line;) {
        const char *eol = strchr(line, '\n');
        const size_t n_chars = eol ? (size_t)(eol - line) : strlen(line);
        char buf[4096];
        line_no++;
        if (n_chars >= sizeof buf) {
            rc = db_fail(err, len, "%s:%d: the line is longer than %zu characters", path, line_no, sizeof buf - 1);
            break;
        }
        memcpy(buf, line, n_chars);
        buf[n_chars] = '\0';
        line = eol ? eol + 1 : line + n_chars;
        const char *first = buf + strspn(buf, " \t\r");
        if (!*first || *first == '#')
            continue;
        if (!seen_header) {
            if (strncmp(first, CAPTURE_HEADER, strlen(CAPTURE_HEADER)) != 0)
                rc = db_fail(err, len, "%s:%d: not a capture file (its first line is not '%s')", path, line_no,
                             CAPTURE_HEADER);
            seen_header = 1;
            continue;
        }
        db_capture_row row;
        char why[512];
        if (parse_row(first, &row, why, sizeof why) != 0) {
            rc = db_fail(err, len, "%s:%d: %s", path, line_no, why);
            break;
        }
        db_capture_row *slot = db_grow((void **)&list, n, &cap, sizeof *list);
        if (!slot) {
            rc = db_fail(err, len, "%s: out of memory at line %d", path, line_no);
            break;
        }
        *slot = row;
        n++;
    }
    if (rc == 0 && !seen_header && *text)
        rc = db_fail(err, len, "%s: not a capture file (no '%s' line)", path, CAPTURE_HEADER);
    if (rc != 0) {
        free(list);
        return -1;
    }
    *rows = list;
    *count = n;
    return 0;
}

int db_capture_read(const char *path, db_capture_row **rows, int *count, char *err, size_t len)
{
    char *text;
    *rows = NULL;
    *count = 0;
    if (db_text_file_read(path, "capture file", CAPTURE_MAX_BYTES, &text, err, len) != 0)
        return -1;
    const int rc = db_capture_parse(path, text, rows, count, err, len);
    free(text);
    return rc;
}

/* rows [0, n) of list, adding those of add; the list grows. 0, or -1 out of memory. */
static int add_rows(db_capture_row **list, int *n, int *cap, const db_capture_row *add, int add_n)
{
    for (int i = 0; i < add_n; i++) {
        int j = 0;
        while (j < *n && !same_problem(&(*list)[j], &add[i]))
            j++;
        if (j < *n) {
            db_capture_row *r = &(*list)[j];
            r->calls = r->calls > ~0ull - add[i].calls ? ~0ull : r->calls + add[i].calls;
            r->served = add[i].served;   /* the latest: the winners may have changed since */
            continue;
        }
        db_capture_row *slot = db_grow((void **)list, *n, cap, sizeof **list);
        if (!slot)
            return -1;
        *slot = add[i];
        (*n)++;
    }
    return 0;
}

static int write_rows(FILE *out, const db_capture_row *rows, int n)
{
    fprintf(out, "%s\n# One line a problem libflashtune served: the workload (as `flashtune db export` writes it),\n"
                 "# deterministic=1 for a repeatable backward, its calls, and what chose its kernel (tuned: a\n"
                 "# winner tuned for it; nearest: the nearest one; default: the built-in choice). Written under\n"
                 "# FLASHTUNE_CAPTURE; `flashtune tune --from-capture FILE` tunes these problems.\n",
            CAPTURE_HEADER);
    for (int i = 0; i < n; i++) {
        char w[512];
        fprintf(out, "%s%s calls=%llu served=%s\n", db_workload_format(&rows[i].workload, w, sizeof w),
                rows[i].deterministic ? " deterministic=1" : "", rows[i].calls, db_served_name(rows[i].served));
    }
    return ferror(out) ? -1 : 0;
}

int db_capture_merge(const char *path, const db_capture_row *rows, int n, char *err, size_t len)
{
    if (!path || !*path || (n > 0 && !rows))
        return db_fail(err, len, "db_capture_merge: %s", !path || !*path ? "no path" : "rows is NULL");
    char lock_path[4200], tmp_path[4200];
    if (snprintf(lock_path, sizeof lock_path, "%s.lock", path) >= (int)sizeof lock_path ||
        snprintf(tmp_path, sizeof tmp_path, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp_path)
        return db_fail(err, len, "capture file %.200s: the path is too long", path);
    const int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0)
        return db_fail(err, len, "capture file %s: cannot open its lock %s: %s", path, lock_path, strerror(errno));
    while (flock(lock, LOCK_EX) != 0)
        if (errno != EINTR) {
            const int e = errno;
            close(lock);
            return db_fail(err, len, "capture file %s: cannot lock %s: %s", path, lock_path, strerror(e));
        }
    db_capture_row *list = NULL;
    int count = 0, cap = 0, rc = 0;
    if (access(path, F_OK) == 0) {   /* merged into; a file that does not read is left as it is */
        if (db_capture_read(path, &list, &count, err, len) != 0)
            rc = -1;
        cap = count;
    }
    if (rc == 0 && add_rows(&list, &count, &cap, rows, n) != 0)
        rc = db_fail(err, len, "capture file %s: out of memory", path);
    if (rc == 0) {
        const int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!out) {
            rc = db_fail(err, len, "capture file %s: cannot write %s: %s", path, tmp_path, strerror(errno));
            if (fd >= 0)
                close(fd);
        } else {
            int bad = write_rows(out, list, count) != 0 || fflush(out) != 0 || fsync(fileno(out)) != 0;
            const int e = errno;
            bad |= fclose(out) != 0;
            if (bad || rename(tmp_path, path) != 0)
                rc = db_fail(err, len, "capture file %s: cannot write it: %s", path, strerror(bad ? e : errno));
        }
        if (rc != 0)
            unlink(tmp_path);
    }
    free(list);
    flock(lock, LOCK_UN);
    close(lock);
    return rc;
}
