/* Opening a database: check the file through a read-only connection before anything may write
 * to it, then open for real, create or migrate the schema, and set WAL and the busy timeout.
 * A new file is built whole under a temporary name and linked into place. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_core_internal.h"

/* Opens path with SQLite flags and the busy timeout. 0, or -1 (the connection closed). */
static int open_connection(const char *path, int flags, sqlite3 **sql, char *err, size_t len)
{
    *sql = NULL;
    int rc = sqlite3_open_v2(path, sql, flags | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(*sql, DB_BUSY_TIMEOUT_MS);
    /* A file from elsewhere: its schema may not call functions with side effects, nor may SQL
     * here write the schema or the file's bytes directly (db_check_objects refuses its triggers). */
    if (rc == SQLITE_OK)
        rc = sqlite3_db_config(*sql, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_db_config(*sql, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    if (rc != SQLITE_OK) {
        db_fail(err, len, "cannot open database %s: %s", path,
                *sql ? sqlite3_errmsg(*sql) : sqlite3_errstr(rc));
        sqlite3_close(*sql);
        *sql = NULL;
        return -1;
    }
    return 0;
}

/* Runs a PRAGMA that answers one text row and checks the answer (journal_mode may refuse). */
static int pragma_expect(sqlite3 *sql, const char *path, const char *pragma, const char *want,
                         char *err, size_t len)
{
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(sql, pragma, -1, &st, NULL) == SQLITE_OK;
    int rc = ok ? sqlite3_step(st) : SQLITE_ERROR;
    const char *got = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        db_fail_sql(sql, err, len, path);
        sqlite3_finalize(st);
        return -1;
    }
    if (want && (!got || strcmp(got, want))) {
        db_fail(err, len, "database %s: '%s' answered '%s', not '%s'", path, pragma, got ? got : "",
                want);
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

/* The file's first bytes, read without SQLite: a file that is not SQLite at all is refused
 * before SQLite touches it. OUT: *wal, 1 when the header says WAL mode. 0 an SQLite file or
 * an empty one, -1 not SQLite (err says) or unreadable. */
static int sniff(const char *path, int *wal, char *err, size_t len)
{
    unsigned char head[100];
    *wal = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return db_fail(err, len, "cannot read database %s: %s", path, strerror(errno));
    ssize_t got = 0, n;
    while (got < (ssize_t)sizeof head && (n = read(fd, head + got, sizeof head - (size_t)got)) > 0)
        got += n;
    close(fd);
    if (got == 0)
        return 0;
    if (got < (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16))
        return db_fail(err, len, "database %s is not a flashtune database (not an SQLite file)", path);
    *wal = head[18] == 2;   /* file format write version: 2 is WAL */
    return 0;
}

/* 1 when path-suffix exists. */
static int sidecar_exists(const char *path, const char *suffix)
{
    char name[4096];
    if (snprintf(name, sizeof name, "%s%s", path, suffix) >= (int)sizeof name)
        return 1;
    return access(name, F_OK) == 0;
}

/* 1 when files can be created beside path. */
static int dir_writable(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return access(".", W_OK) == 0;
    if (slash == path)
        return access("/", W_OK) == 0;
    char dir[4096];
    if ((size_t)(slash - path) >= sizeof dir)
        return 1;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    return access(dir, W_OK) == 0;
}

/* "file:PATH?mode=ro&immutable=1", PATH percent-encoded where a URI needs it; malloc'ed. */
static char *immutable_uri(const char *path)
{
    char *uri = malloc(3 * strlen(path) + 40), *w = uri;
    if (!uri)
        return NULL;
    w += sprintf(w, "file:%s", path[0] == '/' ? "//" : "");
    for (const char *c = path; *c; c++)
        w += (*c == '%' || *c == '?' || *c == '#') ? sprintf(w, "%%%02X", (unsigned char)*c) : (*w = *c, 1);
    strcpy(w, "?mode=ro&immutable=1");
    return uri;
}

/* A read-only connection to path that reads the file as immutable (no -wal, -shm). */
static int open_immutable(const char *path, sqlite3 **sql, char *err, size_t len)
{
    char *uri = immutable_uri(path);
    if (!uri)
        return db_fail(err, len, "db_open: out of memory");
    int rc = open_connection(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, sql, err, len);
    free(uri);
    return rc;
}

/* fsync of a file or folder by name; errors are ignored (durability, not correctness). */
static void sync_path(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* The folder of path, for the fsync that makes a new name durable. */
static void sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        return;
    sync_path(dir, O_RDONLY | O_DIRECTORY);
}

/* Creates a database at path: the schema (list) and WAL mode are written to a new file beside
 * it ("PATH.new-PID-N"), which is then hard-linked to path and unlinked. link(2) never replaces:
 * when another process linked its file first (EEXIST), that one is kept and this call still
 * succeeds; the caller opens whatever is at path. So no process ever sees a half-made file. */
static int create_file(const char *path, const db_migration *list, int count, char *err, size_t len)
{
    static atomic_uint serial;   /* names of one process's threads differ */
    const size_t size = strlen(path) + 48;
    char *tmp = malloc(size);
    if (!tmp)
        return db_fail(err, len, "db_open: out of memory");
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(tmp, size, "%s.new-%ld-%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        const int e = errno;
        if (e == EACCES || e == EPERM || e == EROFS) {   /* the folder's fault: name it */
            const char *slash = strrchr(path, '/');
            const int dir_len = slash ? (slash == path ? 1 : (int)(slash - path)) : 1;
            db_fail(err, len, "cannot create database %s: %s (its folder %.*s takes no new file; the database is "
                    "written beside its name first)", path, strerror(e), dir_len, slash ? path : ".");
        } else {
            db_fail(err, len, "cannot create database %s: %s", path, strerror(e));
        }
        free(tmp);
        return -1;
    }
    close(fd);
    sqlite3 *sql = NULL;
    char why[512] = "";
    int rc = open_connection(tmp, SQLITE_OPEN_READWRITE, &sql, why, sizeof why);
    if (rc == 0)
        rc = db_migrate(sql, tmp, list, count, why, sizeof why);
    if (rc == 0)
        rc = pragma_expect(sql, tmp, "PRAGMA journal_mode = WAL", "wal", why, sizeof why);
    /* The last connection's close checkpoints and removes tmp-wal and tmp-shm. */
    if (sql && sqlite3_close(sql) != SQLITE_OK && rc == 0)
        rc = db_fail(why, sizeof why, "closing the new %s failed", tmp);
    if (rc == 0) {
        sync_path(tmp, O_RDONLY);
        if (link(tmp, path) == 0)
            sync_dir_of(path);
        else if (errno != EEXIST)
            rc = db_fail(why, sizeof why, "link from %s: %s", tmp, strerror(errno));
    }
    if (rc != 0)   /* said of the file asked for; the aside one is removed below */
        db_fail(err, len, "cannot create database %s (nothing was left behind): %s", path,
                why);
    /* tmp and whatever SQLite left beside it when a step failed. */
    static const char *const sides[] = { "", "-wal", "-shm", "-journal" };
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        char name[4096];
        if (snprintf(name, sizeof name, "%s%s", tmp, sides[i]) < (int)sizeof name)
            unlink(name);
    }
    free(tmp);
    return rc;
}

int db_open_with(const char *path, int flags, const db_migration *list, int count, db **out,
                 char *err, size_t len)
{
    if (out)
        *out = NULL;
    if (!path)
        return db_fail(err, len, "db_open: path is NULL");
    if (!*path)
        return db_fail(err, len, "db_open: path is empty");
    if (!out)
        return db_fail(err, len, "db_open: out is NULL");
    if ((flags & ~(DB_OPEN_READONLY | DB_OPEN_CREATE))
        || (flags & (DB_OPEN_READONLY | DB_OPEN_CREATE)) == (DB_OPEN_READONLY | DB_OPEN_CREATE))
        return db_fail(err, len, "db_open: flags=%d is not DB_OPEN_READONLY, DB_OPEN_CREATE or 0", flags);
    if (!list || count < 1)
        return db_fail(err, len, "db_open: no migrations");
    int known = list[count - 1].version;
    int readonly = (flags & DB_OPEN_READONLY) != 0;

    struct stat sb;
    int exists = stat(path, &sb) == 0;
    if (!exists && errno != ENOENT)
        return db_fail(err, len, "cannot open database %s: %s", path, strerror(errno));
    if (!exists && !(flags & DB_OPEN_CREATE))
        return db_fail(err, len, "database %s does not exist", path);
    if (!exists) {
        if (create_file(path, list, count, err, len) != 0)
            return -1;
        if (stat(path, &sb) != 0)
            return db_fail(err, len, "cannot open database %s: %s", path, strerror(errno));
    }
    if (S_ISDIR(sb.st_mode))
        return db_fail(err, len, "database %s is a directory", path);
    if (!S_ISREG(sb.st_mode))
        return db_fail(err, len, "database %s is not a regular file", path);

    sqlite3 *sql = NULL;
    int wal = 0, idle_wal = 0;
    /* Read-only first: a foreign or newer file must never be written, not even by the
     * journal-mode switch or a checkpoint at close. A WAL file nobody has open (no -wal,
     * no -shm) is read as immutable, else SQLite would leave those two files beside it. */
    if (sniff(path, &wal, err, len) != 0)
        return -1;
    idle_wal = wal && !sidecar_exists(path, "-wal") && !sidecar_exists(path, "-shm");
    if (idle_wal ? open_immutable(path, &sql, err, len) : open_connection(path, SQLITE_OPEN_READONLY, &sql, err, len))
        return -1;
    int version = 0;
    int state = db_check_header(sql, path, known, &version, err, len);
    if (state == 0 && db_check_objects(sql, path, list, version, err, len) != 0)
        state = -1;
    sqlite3_close(sql);
    sql = NULL;
    if (state < 0)
        return -1;
    if (state == 1 && !(flags & DB_OPEN_CREATE))
        return db_fail(err, len, "database %s is empty, not a flashtune database (left unchanged)", path);
    if (readonly && version < known)
        return db_fail(err, len,
                       "database %s has schema version %d, older than this flashtune's %d: open it "
                       "writable once to migrate it", path, version, known);

    /* The file exists by now: SQLite never creates one here. */
    int sqlite_flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    /* A shipped database in a read-only folder: SQLite could not create -shm and -wal, and
     * nobody can be writing the file there. */
    if (readonly && idle_wal && !dir_writable(path) ? open_immutable(path, &sql, err, len)
                                                    : open_connection(path, sqlite_flags, &sql, err, len))
        return -1;
    if (pragma_expect(sql, path, "PRAGMA foreign_keys = ON", NULL, err, len) != 0)
        goto fail;
    if (!readonly) {
        /* The migration re-checks the header inside its transaction, so a file that appeared
         * or changed since the check above is still never overwritten. */
        if (db_migrate(sql, path, list, count, err, len) != 0)
            goto fail;
        /* WAL: readers never block the writer, and a killed writer loses only its open
         * transaction. FULL: a commit survives power loss too (one fsync per result is
         * nothing next to a benchmark). */
        if (pragma_expect(sql, path, "PRAGMA journal_mode = WAL", "wal", err, len) != 0
            || pragma_expect(sql, path, "PRAGMA synchronous = FULL", NULL, err, len) != 0)
            goto fail;
    }

    db *d = calloc(1, sizeof *d);
    char *copy = malloc(strlen(path) + 1);
    if (!d || !copy) {
        free(d);
        free(copy);
        db_fail(err, len, "db_open: out of memory");
        goto fail;
    }
    strcpy(copy, path);
    d->sql = sql;
    d->path = copy;
    d->readonly = readonly;
    if (db_bound_statements(d, err, len) != 0) {
        free(d);
        free(copy);
        goto fail;
    }
    pthread_mutex_init(&d->lock, NULL);
    *out = d;
    return 0;
fail:
    sqlite3_close(sql);
    return -1;
}

int db_open(const char *path, int flags, db **out, char *err, size_t len)
{
    int count;
    const db_migration *list = db_migrations(&count);
    return db_open_with(path, flags, list, count, out, err, len);
}

void db_close(db *d)
{
    if (!d)
        return;
    sqlite3_close(d->sql);
    pthread_mutex_destroy(&d->lock);
    free(d->path);
    free(d);
}

sqlite3 *db_sqlite(db *d)
{
    return d ? d->sql : NULL;
}

const char *db_file_path(db *d)
{
    return d ? d->path : NULL;
}
