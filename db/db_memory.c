/* In-memory databases: the schema applied to SQLite's ":memory:", or a packed image of one (the
 * shipped winners, db_pack_winners.c) opened as it is. No file, no WAL. */
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"
#include "db_memory_internal.h"

/* sql wrapped as a handle. 0, or -1 (err; sql closed). */
static int wrap(sqlite3 *sql, const char *name, db **out, char *err, size_t len)
{
    db *d = calloc(1, sizeof *d);
    char *path = malloc(strlen(name) + 1);
    if (!d || !path) {
        free(d);
        free(path);
        sqlite3_close(sql);
        return db_fail(err, len, "db_open_memory: out of memory");
    }
    strcpy(path, name);
    d->sql = sql;
    d->path = path;
    if (db_bound_statements(d, err, len) != 0) {
        free(d);
        free(path);
        sqlite3_close(sql);
        return -1;
    }
    pthread_mutex_init(&d->lock, NULL);
    *out = d;
    return 0;
}

static sqlite3 *open_empty(const char *func, char *err, size_t len)
{
    sqlite3 *sql = NULL;
    if (sqlite3_open_v2(":memory:", &sql, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL)
        != SQLITE_OK) {
        db_fail(err, len, "%s: %s", func, sql ? sqlite3_errmsg(sql) : "out of memory");
        sqlite3_close(sql);
        return NULL;
    }
    return sql;
}

int db_open_memory(db **out, char *err, size_t len)
{
    const char *name = ":memory:";
    *out = NULL;
    sqlite3 *sql = open_empty("db_open_memory", err, len);
    if (!sql)
        return -1;
    int count;
    const db_migration *list = db_migrations(&count);
    if (sqlite3_exec(sql, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK
        || db_migrate(sql, name, list, count, err, len) != 0) {
        if (err && len && !err[0])
            db_fail_sql(sql, err, len, name);
        sqlite3_close(sql);
        return -1;
    }
    return wrap(sql, name, out, err, len);
}

int db_open_memory_image(const void *image, size_t size, db **out, char *err, size_t len)
{
    const char *func = "db_open_memory_image", *name = ":memory:";
    *out = NULL;
    sqlite3 *sql = open_empty(func, err, len);
    if (!sql)
        return -1;
    /* SQLite takes a buffer of its own allocator, freed when the connection closes. */
    unsigned char *copy = sqlite3_malloc64(size);
    if (!copy) {
        sqlite3_close(sql);
        return db_fail(err, len, "%s: out of memory for %zu bytes", func, size);
    }
    memcpy(copy, image, size);
    int rc = sqlite3_deserialize(sql, "main", copy, (sqlite3_int64)size, (sqlite3_int64)size,
                                 SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
    int count, version = -1;
    const db_migration *list = db_migrations(&count);
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK && sqlite3_prepare_v2(sql, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_OK || version != list[count - 1].version ||
        sqlite3_exec(sql, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK) {
        if (rc != SQLITE_OK)
            db_fail(err, len, "%s: %s", func, sqlite3_errmsg(sql));
        else
            db_fail(err, len, "%s: the image has schema version %d, this build %d", func, version,
                    list[count - 1].version);
        sqlite3_close(sql);
        return -1;
    }
    return wrap(sql, name, out, err, len);
}
