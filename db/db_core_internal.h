/* What the files of db/ share: the handle, error and SQL helpers, the embedded SQL, the
 * migration list, and the NAME=VALUE field reader. Not for use outside db/ and test_db. */
#ifndef FT_DB_CORE_INTERNAL_H
#define FT_DB_CORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>

#include "db_internal.h"
#include "db_workload_fields.h"

struct db {
    sqlite3 *sql;
    char *path;
    int readonly;
    pthread_mutex_t lock;   /* held for the whole of each public call */
    long long bound_ns;     /* how long one public call's statements may run (0: unbounded) */
    long long deadline_ns;  /* CLOCK_MONOTONIC: the current call's statements stop past it; 0
                             * outside a call (db_enter sets it, db_leave clears it) */
};

/* Every statement is bounded in time: a public call (db_enter) sets its deadline, and SQLite's
 * progress handler interrupts a statement that runs past it ("database PATH: a statement ran
 * past ..."). The bound is FLASHTUNE_DB_BOUND_S seconds, DB_BOUND_S when unset; 0 turns it off.
 * Sets d's bound and handler: 0, or -1 with the variable named when its value is not a number
 * of seconds. */
#define DB_BOUND_S 600.0
#define DB_BOUND_ENV "FLASHTUNE_DB_BOUND_S"
int db_bound_statements(db *d, char *err, size_t len);

/* ---- embedded SQL (generated db_sql.c, from db/embed_sql.cmake) ---------------------- */

typedef struct db_sql_file {
    const char *name;       /* "schema.sql" */
    const char *text;
} db_sql_file;
extern const db_sql_file db_sql_files[];
extern const size_t db_sql_count;

/* ---- migrations (db_migrate.c) ------------------------------------------------------- */

/* Migration `version` takes a file from version-1 to version; version 1 builds the schema on
 * an empty file. A list is in increasing version order with no gaps, starting at 1. */
typedef struct db_migration {
    int version;
    const char *name;       /* for errors: "schema.sql" */
    const char *sql;
} db_migration;

/* The built-in list. OUT: *count. */
const db_migration *db_migrations(int *count);
/* db_open with another migration list: the test fakes a future version with it. */
int db_open_with(const char *path, int flags, const db_migration *list, int count, db **out,
                 char *err, size_t len);
/* Applies list to the open writable connection in one IMMEDIATE transaction, re-reading the
 * header inside it (another process may have created or migrated the file meanwhile). */
int db_migrate(sqlite3 *sql, const char *path, const db_migration *list, int count, char *err,
               size_t len);
/* Classifies the file behind sql by its header: 0 current or older flashtune (OUT: *version),
 * 1 empty (no tables, no application_id: may be created), -1 not ours or newer (err says). */
int db_check_header(sqlite3 *sql, const char *path, int known, int *version, char *err, size_t len);
/* The file's triggers and views are exactly those of migrations 1..version of list (built in
 * memory to compare with): anything else, or a changed body, is refused before a statement can
 * fire it (a trigger that loops forever or deletes winners). 0, or -1 (err). */
int db_check_objects(sqlite3 *sql, const char *path, const db_migration *list, int version, char *err, size_t len);

/* ---- errors and SQL helpers (db_core.c) --------------------------------------------- */

/* Formats into err (err may be NULL) and returns -1. */
int db_fail(char *err, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* "database WHAT: <SQLite's message>" (WHAT: its path or name), returns -1. The messages of
 * what a user can meet (a database, a workload, a winners file) name that, not a function. */
int db_fail_sql(sqlite3 *sql, char *err, size_t len, const char *what);

/* Checks d (not NULL, open) and takes its lock; on failure writes "func: db is NULL". A
 * writing call passes write = 1: a read-only handle is an error. */
int db_enter(db *d, const char *func, int write, char *err, size_t len);
void db_leave(db *d);

/* Runs SQL with no result rows. */
int db_exec(db *d, const char *sql, char *err, size_t len);
/* Prepares one statement; on failure the error names the database. */
int db_prepare(db *d, const char *sql, sqlite3_stmt **st, char *err, size_t len);
/* One step of st: 1 a row (read it from st), 0 done, -1 with SQLite's error naming the database. */
int db_step_row(db *d, sqlite3_stmt *st, char *err, size_t len);
/* BEGIN IMMEDIATE (takes the write lock up front: no deadlock between two writers), COMMIT,
 * ROLLBACK (ignores errors: used on failure paths). */
int db_begin(db *d, char *err, size_t len);
int db_commit(db *d, char *err, size_t len);
void db_rollback(db *d);

/* Binds a double, or NULL when it is not finite. */
int db_bind_real(sqlite3_stmt *st, int index, double v);
/* Column as double, NAN when NULL. */
double db_column_real(sqlite3_stmt *st, int col);
/* Copies a text column into buf (len bytes, truncated, NUL-terminated; "" when NULL). */
void db_column_text(sqlite3_stmt *st, int col, char *buf, size_t len);
/* Makes room for element n of *list (*cap allocated, doubling) and returns it zeroed; NULL when
 * out of memory (*list is kept). */
void *db_grow(void **list, int n, int *cap, size_t size);
/* Starts a call that reads rows into a list: out (a T **) and count must not be NULL; both are
 * cleared; then db_enter for reading. 0, or -1 with err. */
int db_list_start(db *d, void *out, int *count, const char *func, char *err, size_t len);
/* Ends a call that read rows into a list: an SQL error if the last step was not SQLITE_DONE,
 * finalizes st, unlocks d; then hands list and n out (rc 0) or frees list. Returns rc or -1. */
int db_list_finish(db *d, sqlite3_stmt *st, int rc, int step, void *list, int n, void *out, int *count, char *err,
                   size_t len);
/* Copies src into dst of len bytes; -1 when it does not fit. */
int db_copy(char *dst, size_t len, const char *src);

/* ---- rows inside a transaction (db_rows.c): the lock and transaction are the caller's --- */

int db_device_upsert_tx(db *d, const db_device *dev, int64_t *id, char *err, size_t len);
int db_kernel_upsert_tx(db *d, const db_kernel *k, int64_t *id, char *err, size_t len);
int db_workload_upsert_tx(db *d, const db_workload *w, int64_t *id, char *err, size_t len);
int db_workload_find_tx(db *d, const db_workload *w, int64_t *id, char *err, size_t len);
/* Writes (device, workload)'s declaration (db_declare.c), replacing one stored. */
int db_declared_put_tx(db *d, int64_t device_id, int64_t workload_id, const db_declared *c, char *err, size_t len);
/* Field checks shared with db_import: 0, or -1 with the field named in err (no prefix). */
int db_device_check(const db_device *dev, char *err, size_t len);
int db_kernel_check(const db_kernel *k, char *err, size_t len);
int db_workload_check(const db_workload *w, char *err, size_t len);
/* Row readers for a statement whose columns start at col, in the order of the SELECT lists
 * below (used by db_query.c and db_listing.c). */
#define DB_DEVICE_COLUMNS(t) t ".name, " t ".arch, " t ".cc_major, " t ".cc_minor, " t ".sm_count, " \
                             t ".driver_version, " t ".nvrtc_version"
/* A kernel is its family, hash and "NAME=VALUE NAME=VALUE ..." from kernel_params (t.id must
 * be selectable), 3 columns. */
#define DB_KERNEL_COLUMNS(t) t ".family, " t ".source_hash, (SELECT group_concat(kp.name || '=' || kp.value, ' ')" \
    " FROM kernel_params kp WHERE kp.kernel_id = " t ".id)"
#define DB_KERNEL_COLUMN_COUNT 3
int db_device_read(sqlite3_stmt *st, int col, db_device *dev);       /* returns col + 7 */
/* Returns col + DB_WORKLOAD_COLUMN_COUNT, or -1 with err when its extra column names a field this
 * build does not know or holds a malformed one. */
int db_workload_read(sqlite3_stmt *st, int col, db_workload *w, char *err, size_t len);
/* The extra fields of w as the `extra` column stores them ("" when all are 0), and back; the
 * parse returns -1 with err for an unknown name, a repeated one or a value not a decimal int. */
void db_workload_extra_format(const db_workload *w, char *buf, size_t len);
int db_workload_extra_parse(const char *text, db_workload *w, char *err, size_t len);
/* Reads DB_KERNEL_COLUMNS at col: 0, or -1 when a parameter name is unknown to this build or
 * a value is not an integer (err names the kernel's hash and the parameter; no prefix). */
int db_kernel_read(sqlite3_stmt *st, int col, db_kernel *k, char *err, size_t len);

/* ---- NAME=VALUE fields (db_text.c) --------------------------------------------------- */

/* A winner line of a windowed variable-length workload has 47 fields (device 6, workload 16,
 * kernel 2, parameters 21, times 2): room left for new parameters. */
#define DB_FIELDS_MAX 64
typedef struct db_fields {
    int count;
    char *name[DB_FIELDS_MAX];
    char *value[DB_FIELDS_MAX];   /* quotes removed, \" and \\ undone */
    int used[DB_FIELDS_MAX];      /* set by db_field_take: a field nobody took is unknown */
    char *buf;                    /* owns the strings */
} db_fields;

/* Splits a line into fields. Values may be double-quoted (with \" and \\). Duplicate names,
 * a token without '=', an unterminated quote: -1 with the reason. Free with db_fields_free. */
int db_fields_parse(const char *line, db_fields *f, char *err, size_t len);
void db_fields_free(db_fields *f);
/* The value of name (marking it used), or NULL when absent. */
const char *db_field_take(db_fields *f, const char *name);
/* The first field nobody took, or NULL. */
const char *db_fields_unused(const db_fields *f);
/* Required integer field name in [lo, hi]: 0, or -1 "field 'name': ..." in err. */
int db_field_int(db_fields *f, const char *name, int lo, int hi, int *out, char *err, size_t len);
/* The same; with required 0 an absent field gives absent. */
int db_field_int_or(db_fields *f, const char *name, int lo, int hi, int absent, int required, int *out, char *err,
                    size_t len);
/* db_workload_parse's fields taken from f, a line already split (the caller's own fields taken
 * out before): every field a workload has; a field left over is an error ("unknown field ..."). */
int db_workload_take(db_fields *f, db_workload *w /* OUT */, char *err, size_t len);
/* The whole of the text file at path (`what` names it in messages: "winners file"), at most
 * max_bytes, read in steps (a device or a pipe may have no end); NUL bytes refused. OUT: *text,
 * malloc'ed and NUL-terminated. 0, or -1 with the reason. */
int db_text_file_read(const char *path, const char *what, int max_bytes, char **text, char *err, size_t len);
/* Writes value double-quoted with " and \ escaped. */
void db_write_quoted(FILE *out, const char *value);

#endif
