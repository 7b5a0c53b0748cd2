/* Schema versions: recognizing a flashtune file by its header, and applying the migrations
 * that bring an empty or older file to the version this code knows. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "db_core_internal.h"

/* Name of the embedded file, or NULL. */
static const char *sql_text(const char *name)
{
    for (size_t i = 0; i < db_sql_count; i++)
        if (!strcmp(db_sql_files[i].name, name))
            return db_sql_files[i].text;
    return NULL;
}

/* Add a row per new version: {2, "migrate_002.sql", NULL}. Never edit a shipped file. */
static db_migration builtin[] = {
    { 1, "schema.sql", NULL },
    { 2, "migrate_002.sql", NULL },   /* kernel parameters as rows of kernel_params */
    { 3, "migrate_003.sql", NULL },   /* the CUBIN cache stores what it compared: options, source */
    { 4, "migrate_004.sql", NULL },   /* workloads keyed by heads_k and softcap too */
    { 5, "migrate_005.sql", NULL },   /* and by the mask's kind and the variable-length bucket */
    { 6, "migrate_006.sql", NULL },   /* and by the fields added since, in one text column (extra) */
    { 7, "migrate_007.sql", NULL },   /* results: the GPU's clocks while timed */
    { 8, "migrate_008.sql", NULL },   /* declared winners: the view serves them */
};
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

/* The texts live in the generated db_sql.c; looked up once. */
static void builtin_resolve(void)
{
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        builtin[i].sql = sql_text(builtin[i].name);
}

const db_migration *db_migrations(int *count)
{
    pthread_once(&builtin_once, builtin_resolve);
    *count = (int)(sizeof builtin / sizeof builtin[0]);
    return builtin;
}

int db_schema_version(void)
{
    int count;
    const db_migration *list = db_migrations(&count);
    return list[count - 1].version;
}

/* One integer from a PRAGMA or SELECT; -1 with SQLite's message on failure. */
static int query_int(sqlite3 *sql, const char *query, int *value, int *rc)
{
    sqlite3_stmt *st = NULL;
    *rc = sqlite3_prepare_v2(sql, query, -1, &st, NULL);
    if (*rc == SQLITE_OK) {
        *rc = sqlite3_step(st);
        if (*rc == SQLITE_ROW) {
            *value = sqlite3_column_int(st, 0);
            *rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return *rc == SQLITE_OK ? 0 : -1;
}

int db_check_header(sqlite3 *sql, const char *path, int known, int *version, char *err, size_t len)
{
    int app = 0, user = 0, tables = 0, rc = SQLITE_OK;
    if (query_int(sql, "PRAGMA application_id", &app, &rc) != 0
        || query_int(sql, "PRAGMA user_version", &user, &rc) != 0
        || query_int(sql, "SELECT count(*) FROM sqlite_master", &tables, &rc) != 0) {
        if (rc == SQLITE_NOTADB)
            return db_fail(err, len, "database %s is not a flashtune database (not an SQLite file)", path);
        return db_fail_sql(sql, err, len, path);
    }
    *version = user;
    if ((unsigned)app == DB_APPLICATION_ID) {
        if (user > known)
            return db_fail(err, len,
                           "database %s has schema version %d, newer than this flashtune's %d: use a newer "
                           "flashtune (the file was not changed)", path, user, known);
        if (user < 1)
            return db_fail(err, len, "database %s is a damaged flashtune database (schema version %d)",
                           path, user);
        return 0;
    }
    if (app == 0 && tables == 0 && user == 0)
        return 1;
    return db_fail(err, len, "database %s is not a flashtune database (application_id 0x%08x)", path,
                   (unsigned)app);
}

/* The triggers and views of a schema as one text, a record each (type, name, table and SQL apart
 * by 0x1f, records ended by 0x1e: the SQL holds newlines), by type and name: NULL on an SQLite
 * error or out of memory. */
static char *schema_objects(sqlite3 *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sql,
                           "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('trigger', 'view') "
                           "ORDER BY type, name",
                           -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_str *text = sqlite3_str_new(sql);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        sqlite3_str_appendf(text, "%s\x1f%s\x1f%s\x1f%s\x1e", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
                            sqlite3_column_text(st, 2), sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
    char *out = sqlite3_str_finish(text);
    if (rc != SQLITE_DONE) {
        sqlite3_free(out);
        return NULL;
    }
    return out ? out : sqlite3_mprintf("%s", "");
}

/* The length of the record at text (its 0x1e included). */
static size_t record_len(const char *text)
{
    const char *end = strchr(text, '\x1e');
    return end ? (size_t)(end - text + 1) : strlen(text);
}

/* The first record of a (schema_objects) that b lacks, as "type 'name'" in buf; 0 when none. */
static int first_missing(const char *a, const char *b, char *buf, size_t len)
{
    for (size_t n; *a; a += n) {
        n = record_len(a);
        int found = 0;
        for (const char *at = b; !found && *at; at += record_len(at))
            found = record_len(at) == n && !memcmp(a, at, n);
        if (!found) {
            const size_t type = strcspn(a, "\x1f"), name = a[type] ? strcspn(a + type + 1, "\x1f") : 0;
            snprintf(buf, len, "%.*s '%.*s'", (int)type, a, (int)name, a + type + (a[type] != 0));
            return 1;
        }
    }
    return 0;
}

int db_check_objects(sqlite3 *sql, const char *path, const db_migration *list, int version, char *err, size_t len)
{
    sqlite3 *ref = NULL;
    char *mine = NULL, *theirs = NULL;
    int rc = -1;
    if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        db_migrate(ref, ":memory:", list, version, err, len) != 0 || !(mine = schema_objects(ref))) {
        if (err && len && !err[0])
            db_fail(err, len, "database %s: cannot build schema version %d to compare with", path, version);
        goto done;
    }
    if (!(theirs = schema_objects(sql))) {
        db_fail_sql(sql, err, len, path);
        goto done;
    }
    char what[160];
    if (first_missing(theirs, mine, what, sizeof what))
        db_fail(err, len, "database %s has a %s that flashtune did not make (not one of schema version %d's): "
                "refused, so that none of its SQL runs (the file was not changed)", path, what, version);
    else if (first_missing(mine, theirs, what, sizeof what))
        db_fail(err, len, "database %s lacks flashtune's %s (schema version %d): a damaged or altered database "
                "(the file was not changed)", path, what, version);
    else
        rc = 0;
done:
    sqlite3_free(mine);
    sqlite3_free(theirs);
    sqlite3_close(ref);
    return rc;
}

/* The OS's reason behind SQLite's last error, as " (No space left on device)", or "": SQLite says
 * "disk I/O error" for a full disk met while it syncs or grows a file. */
static const char *os_reason(sqlite3 *sql)
{
    static _Thread_local char text[128];
    /* After a failed COMMIT SQLite has rolled back, and its record of the call may be gone; the
     * thread's errno still holds it (taken only when it says the space ran out). */
    int sys = sqlite3_system_errno(sql);
    if (!sys && (errno == ENOSPC || errno == EDQUOT || errno == EFBIG))
        sys = errno;
    if (!sys)
        return "";
    snprintf(text, sizeof text, " (%s)", strerror(sys));
    return text;
}

int db_migrate(sqlite3 *sql, const char *path, const db_migration *list, int count, char *err, size_t len)
{
    for (int i = 0; i < count; i++)
        if (list[i].version != i + 1 || !list[i].sql)
            return db_fail(err, len, "db_open: migration %d (%s) is missing or out of order", i + 1,
                           list[i].name ? list[i].name : "?");
    if (count < 1)
        return db_fail(err, len, "db_open: no migrations");
    int known = list[count - 1].version;

    char *msg = NULL;
    if (sqlite3_exec(sql, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) {
        db_fail(err, len, "database %s: %s%s", path, msg ? msg : sqlite3_errmsg(sql), os_reason(sql));
        sqlite3_free(msg);
        return -1;
    }
    int version = 0;
    int state = db_check_header(sql, path, known, &version, err, len);
    if (state < 0)
        goto fail;
    if (state == 1)
        version = 0;
    for (int i = version; i < count; i++) {
        char record[96];
        snprintf(record, sizeof record, "INSERT INTO schema_version (version) VALUES (%d)", list[i].version);
        if (sqlite3_exec(sql, list[i].sql, NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec(sql, record, NULL, NULL, &msg) != SQLITE_OK) {
            db_fail(err, len, "database %s: migration to schema version %d (%s) failed: %s%s; the file "
                    "was not changed", path, list[i].version, list[i].name,
                    msg ? msg : sqlite3_errmsg(sql), os_reason(sql));
            sqlite3_free(msg);
            goto fail;
        }
    }
    if (version < known) {
        char pragma[96];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d; PRAGMA application_id = %d", known,
                 (int)DB_APPLICATION_ID);
        if (sqlite3_exec(sql, pragma, NULL, NULL, &msg) != SQLITE_OK) {
            db_fail(err, len, "database %s: %s%s", path, msg ? msg : sqlite3_errmsg(sql), os_reason(sql));
            sqlite3_free(msg);
            goto fail;
        }
    }
    if (sqlite3_exec(sql, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
        db_fail(err, len, "database %s: commit of the schema failed: %s%s", path,
                msg ? msg : sqlite3_errmsg(sql), os_reason(sql));
        sqlite3_free(msg);
        goto fail;
    }
    return 0;
fail:
    if (!sqlite3_get_autocommit(sql))
        sqlite3_exec(sql, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}
