/* An in-memory database: the schema applied to SQLite's ":memory:", no file, no WAL. */
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"
#include "db_memory_internal.h"

int db_open_memory(db **out, char *err, size_t len)
{
    const char *name = ":memory:";
    *out = NULL;
    sqlite3 *sql = NULL;
    if (sqlite3_open_v2(name, &sql, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL)
        != SQLITE_OK) {
        db_fail(err, len, "db_open_memory: %s", sql ? sqlite3_errmsg(sql) : "out of memory");
        sqlite3_close(sql);
        return -1;
    }
    int count;
    const db_migration *list = db_migrations(&count);
    if (sqlite3_exec(sql, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK
        || db_migrate(sql, name, list, count, err, len) != 0) {
        if (err && len && !err[0])
            db_fail_sql(sql, err, len, "db_open_memory", name);
        sqlite3_close(sql);
        return -1;
    }
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
    pthread_mutex_init(&d->lock, NULL);
    *out = d;
    return 0;
}
