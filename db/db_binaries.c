/* The CUBIN cache: compiled kernels stored by cache key with everything they were compiled
 * from, so a rerun or the runtime loads them instead of compiling again, and only when all of
 * it matches (the key is a 64-bit hash). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"

#define BINARY_COLUMNS "id, cache_key, arch, nvrtc_version, cubin, registers, spill_store_bytes, " \
                       "spill_load_bytes, stack_frame_bytes, static_smem_bytes, compile_seconds"

/* A cache key as gen_cache_key prints it. */
static int key_ok(const char *key)
{
    return strspn(key, "0123456789abcdef") == 16 && !key[16];
}

void db_binary_init(db_binary *b, const char *cache_key, const char *arch, const char *nvrtc_version,
                    const char *compile_options, const char *source)
{
    memset(b, 0, sizeof *b);
    snprintf(b->cache_key, sizeof b->cache_key, "%s", cache_key);
    snprintf(b->arch, sizeof b->arch, "%s", arch);
    snprintf(b->nvrtc_version, sizeof b->nvrtc_version, "%s", nvrtc_version);
    b->compile_options = compile_options;
    b->source = source;
}

int db_binary_put(db *d, int64_t kernel_id, const db_binary *b, int64_t *id, char *err, size_t len)
{
    const char *func = "db_binary_put";
    if (d && !b)
        return db_fail(err, len, "%s: b is NULL", func);
    if (b && !key_ok(b->cache_key))
        return db_fail(err, len, "%s: cache_key '%.17s' is not 16 lower-case hex digits", func, b->cache_key);
    if (b && (!b->arch[0] || !b->nvrtc_version[0]))
        return db_fail(err, len, "%s: %s is empty", func, b->arch[0] ? "nvrtc_version" : "arch");
    if (b && (!b->cubin || b->cubin_size == 0 || b->cubin_size > (size_t)0x7fffffff))
        return db_fail(err, len, "%s: cubin_size=%zu (cubin %s): nothing to store", func, b->cubin_size,
                       b->cubin ? "set" : "NULL");
    if (db_enter(d, func, 1, err, len) != 0)
        return -1;
    sqlite3_stmt *st = NULL;
    int rc = db_begin(d, err, len);
    /* The same key and inputs are the same bytes: two tuners compiling one candidate both land
     * here, and the row stays. Other inputs under the key (a row stored before schema 3 without
     * them, or a collision) would never be found by db_binary_lookup: this binary replaces it. */
    if (rc == 0)
        rc = db_prepare(d, "INSERT INTO binaries (kernel_id, cache_key, arch, nvrtc_version, cubin, registers, "
                           "spill_store_bytes, spill_load_bytes, stack_frame_bytes, static_smem_bytes, "
                           "compile_seconds, compile_options, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                           "?9, ?10, ?11, ?12, ?13) "
                           "ON CONFLICT (cache_key) DO UPDATE SET kernel_id = excluded.kernel_id, "
                           "arch = excluded.arch, nvrtc_version = excluded.nvrtc_version, cubin = excluded.cubin, "
                           "registers = excluded.registers, spill_store_bytes = excluded.spill_store_bytes, "
                           "spill_load_bytes = excluded.spill_load_bytes, "
                           "stack_frame_bytes = excluded.stack_frame_bytes, "
                           "static_smem_bytes = excluded.static_smem_bytes, "
                           "compile_seconds = excluded.compile_seconds, compile_options = excluded.compile_options, "
                           "source = excluded.source, created_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') "
                           "WHERE NOT (arch IS excluded.arch AND nvrtc_version IS excluded.nvrtc_version AND "
                           "compile_options IS excluded.compile_options AND source IS excluded.source)",
                        &st, err, len);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, kernel_id);
        sqlite3_bind_text(st, 2, b->cache_key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, b->arch, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, b->nvrtc_version, -1, SQLITE_STATIC);
        sqlite3_bind_blob(st, 5, b->cubin, (int)b->cubin_size, SQLITE_STATIC);
        const int v[] = { b->registers, b->spill_store_bytes, b->spill_load_bytes, b->stack_frame_bytes,
                          b->static_smem_bytes };
        for (int i = 0; i < 5; i++)
            sqlite3_bind_int(st, 6 + i, v[i]);
        db_bind_real(st, 11, b->compile_seconds);
        sqlite3_bind_text(st, 12, b->compile_options, -1, SQLITE_STATIC);   /* NULL binds NULL */
        sqlite3_bind_text(st, 13, b->source, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = sqlite3_extended_errcode(d->sql) == SQLITE_CONSTRAINT_FOREIGNKEY
                     ? db_fail(err, len, "%s: kernel_id=%lld is not a stored kernel", func, (long long)kernel_id)
                     : db_fail_sql(d->sql, err, len, d->path);
        sqlite3_finalize(st);
        st = NULL;
    }
    if (rc == 0 && id) {
        rc = db_prepare(d, "SELECT id FROM binaries WHERE cache_key = ?1", &st, err, len);
        if (rc == 0) {
            sqlite3_bind_text(st, 1, b->cache_key, -1, SQLITE_STATIC);
            if (sqlite3_step(st) == SQLITE_ROW)
                *id = sqlite3_column_int64(st, 0);
            else
                rc = db_fail_sql(d->sql, err, len, d->path);
            sqlite3_finalize(st);
        }
    }
    if (rc == 0)
        rc = db_commit(d, err, len);
    else
        db_rollback(d);
    db_leave(d);
    return rc;
}

/* Runs st (one bound SELECT of BINARY_COLUMNS): 1 with *out filled, 0 no row, -1 error. */
static int read_binary(db *d, sqlite3_stmt *st, db_binary *out, int64_t *id, const char *func, char *err,
                       size_t len)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return db_fail_sql(d->sql, err, len, d->path);
    int size = sqlite3_column_bytes(st, 4);
    const void *blob = sqlite3_column_blob(st, 4);
    void *copy = malloc(size > 0 ? (size_t)size : 1);
    if (!copy)
        return db_fail(err, len, "%s: out of memory for a %d-byte cubin", func, size);
    if (size > 0)
        memcpy(copy, blob, (size_t)size);
    if (id)
        *id = sqlite3_column_int64(st, 0);
    db_column_text(st, 1, out->cache_key, sizeof out->cache_key);
    db_column_text(st, 2, out->arch, sizeof out->arch);
    db_column_text(st, 3, out->nvrtc_version, sizeof out->nvrtc_version);
    out->cubin = copy;
    out->cubin_size = (size_t)size;
    out->registers = sqlite3_column_int(st, 5);
    out->spill_store_bytes = sqlite3_column_int(st, 6);
    out->spill_load_bytes = sqlite3_column_int(st, 7);
    out->stack_frame_bytes = sqlite3_column_int(st, 8);
    out->static_smem_bytes = sqlite3_column_int(st, 9);
    out->compile_seconds = db_column_real(st, 10);
    return 1;
}

/* The row of sql (a SELECT of BINARY_COLUMNS), with texts bound to ?1, ?2, ... in order. */
static int find_where(db *d, const char *func, const char *sql, const char *const *texts, int n, db_binary *out,
                      int64_t *id, char *err, size_t len)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int found = -1;
    if (db_prepare(d, sql, &st, err, len) == 0) {
        for (int i = 0; i < n; i++)
            sqlite3_bind_text(st, i + 1, texts[i], -1, SQLITE_STATIC);
        found = read_binary(d, st, out, id, func, err, len);
        sqlite3_finalize(st);
    }
    db_leave(d);
    return found;
}

int db_binary_find(db *d, const char *cache_key, db_binary *out, int64_t *id, char *err, size_t len)
{
    const char *func = "db_binary_find";
    if (d && (!cache_key || !out))
        return db_fail(err, len, "%s: %s is NULL", func, cache_key ? "out" : "cache_key");
    return find_where(d, func, "SELECT " BINARY_COLUMNS " FROM binaries WHERE cache_key = ?1", &cache_key, 1, out, id, err, len);
}

int db_binary_lookup(db *d, const db_binary *want, db_binary *out, int64_t *id, char *err, size_t len)
{
    const char *func = "db_binary_lookup";
    if (!d || !want || !out)
        return db_fail(err, len, "%s: %s is NULL", func, !d ? "db" : want ? "out" : "want");
    if (!key_ok(want->cache_key))
        return db_fail(err, len, "%s: cache_key '%.17s' is not 16 lower-case hex digits", func, want->cache_key);
    if (!want->arch[0] || !want->nvrtc_version[0] || !want->compile_options || !want->source)
        return db_fail(err, len, "%s: want's %s is not set: a lookup compares every input", func,
                       !want->arch[0] ? "arch" : !want->nvrtc_version[0] ? "nvrtc_version"
                       : !want->compile_options ? "compile_options" : "source");
    const char *const texts[] = { want->cache_key, want->arch, want->nvrtc_version, want->compile_options,
                                  want->source };
    return find_where(d, func, "SELECT " BINARY_COLUMNS " FROM binaries WHERE cache_key = ?1 AND arch = ?2 AND "
                      "nvrtc_version = ?3 AND compile_options = ?4 AND source = ?5", texts, 5, out, id, err, len);
}

int db_binary_find_for_kernel(db *d, int64_t kernel_id, const char *arch, const char *nvrtc_version,
                              db_binary *out, int64_t *id, char *err, size_t len)
{
    const char *func = "db_binary_find_for_kernel";
    if (d && (!arch || !nvrtc_version || !out))
        return db_fail(err, len, "%s: %s is NULL", func, !arch ? "arch" : !nvrtc_version ? "nvrtc_version" : "out");
    if (out)
        memset(out, 0, sizeof *out);
    if (db_enter(d, func, 0, err, len) != 0)
        return -1;
    sqlite3_stmt *st;
    int found = -1;
    if (db_prepare(d, "SELECT " BINARY_COLUMNS " FROM binaries WHERE kernel_id = ?1 AND arch = ?2 AND "
                      "nvrtc_version = ?3 ORDER BY id DESC LIMIT 1", &st, err, len) == 0) {
        sqlite3_bind_int64(st, 1, kernel_id);
        sqlite3_bind_text(st, 2, arch, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, nvrtc_version, -1, SQLITE_STATIC);
        found = read_binary(d, st, out, id, func, err, len);
        sqlite3_finalize(st);
    }
    db_leave(d);
    return found;
}

void db_binary_release(db_binary *b)
{
    if (!b)
        return;
    free(b->cubin);
    memset(b, 0, sizeof *b);
}
