/* The CUBIN cache as its three users see it, on the CPU: the database (db_binary_put and
 * db_binary_lookup), the runtime's loader (rt_cubin_store and rt_cubin_load, the steps of
 * rt_module_get before a module is loaded) and the tuner's compile step (tune_kernels_build).
 * The CUBINs are a few fake bytes but one, which NVRTC compiles (no GPU needed); nothing is
 * loaded. A row found by its 64-bit key must be used only when everything it was compiled from
 * matches. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include <cmocka.h>

#include "db_core_internal.h"
#include "rt_internal.h"
#include "tune_sweep_compile_internal.h"

static char dir[] = "/tmp/ft_test_cubin_cache_XXXXXX";

/* dir/name, removed first, with its WAL files. */
static void fresh_path(const char *name, char *path, size_t len)
{
    char side[300];
    snprintf(path, len, "%s/%s", dir, name);
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

static db *open_db(const char *path)
{
    db *d = NULL;
    char err[512];
    if (db_open(path, DB_OPEN_CREATE, &d, err, sizeof err) != 0)
        fail_msg("db_open: %s", err);
    return d;
}

/* One statement on the file through a second connection: what a forger (or an old flashtune)
 * writes. */
static void raw_sql(const char *path, const char *sql)
{
    sqlite3 *s;
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    sqlite3_busy_timeout(s, 5000);
    char *msg = NULL;
    if (sqlite3_exec(s, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(s);
}

static int64_t some_kernel(db *d)
{
    db_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.family, sizeof k.family, "fwd_mma");
    snprintf(k.source_hash, sizeof k.source_hash, "0123456789abcdef");
    gen_config c;
    gen_config_init(&c, gen_family_find("fwd_mma"));
    memcpy(k.p, c.p, sizeof k.p);
    int64_t id;
    char err[512];
    if (db_kernel_upsert(d, &k, &id, err, sizeof err) != 0)
        fail_msg("db_kernel_upsert: %s", err);
    return id;
}

#define KEY "00112233445566ff"
#define OPTIONS "-std=c++17 --ptxas-options=-v -lineinfo"
#define SOURCE "// a kernel\n__global__ void ft_fwd() {}\n"

/* The cached CUBIN for the standard inputs: 1 with its first byte in *first, 0, or -1. */
static int lookup(db *d, char *first)
{
    db_binary want, got;
    char err[512];
    db_binary_init(&want, KEY, "sm_90a", "13.0", OPTIONS, SOURCE);
    int found = db_binary_lookup(d, &want, &got, NULL, err, sizeof err);
    if (found < 0)
        fail_msg("db_binary_lookup: %s", err);
    if (found)
        *first = *(const char *)got.cubin;
    db_binary_release(&got);
    return found;
}

/* Stores the standard inputs with a one-byte CUBIN. OUT: the row's id. */
static int64_t put(db *d, int64_t kernel_id, char byte)
{
    db_binary b;
    db_binary_init(&b, KEY, "sm_90a", "13.0", OPTIONS, SOURCE);
    b.cubin = &byte;
    b.cubin_size = 1;
    int64_t id = 0;
    char err[512];
    if (db_binary_put(d, kernel_id, &b, &id, err, sizeof err) != 0)
        fail_msg("db_binary_put: %s", err);
    return id;
}

typedef struct forge_case {
    const char *name;
    const char *set;            /* SQL assignments that make the row's inputs differ */
} forge_case;

/* The key matches, one input does not: the row is never used, and the next put replaces it. */
static void forged_rows_are_not_used(void **state)
{
    (void)state;
    const forge_case cases[] = {
        { "source, one byte", "source = replace(source, 'ft_fwd', 'ft_fwe')" },
        { "source, longer", "source = source || ' '" },
        { "source, empty", "source = ''" },
        { "source, NULL (stored before schema 3)", "source = NULL" },
        { "options", "compile_options = '-std=c++17 --use_fast_math'" },
        { "options, NULL", "compile_options = NULL" },
        { "arch", "arch = 'sm_90'" },
        { "NVRTC version", "nvrtc_version = '12.8'" },
    };
    char path[256], sql[512], first = 0;
    fresh_path("forged.db", path, sizeof path);
    db *d = open_db(path);
    const int64_t kernel = some_kernel(d);
    const int64_t id = put(d, kernel, 'A');
    assert_int_equal(lookup(d, &first), 1);
    assert_int_equal(first, 'A');
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(sql, sizeof sql, "UPDATE binaries SET %s, cubin = x'46' WHERE cache_key = '" KEY "'",
                 cases[i].set);
        raw_sql(path, sql);
        const int found = lookup(d, &first);
        printf("  %-40s %s\n", cases[i].name, found ? "USED" : "not used");
        if (found)
            fail_msg("%s: a row whose inputs differ was used (CUBIN '%c')", cases[i].name, first);
        /* What the loader or the tuner does next: compile and store; the row is replaced in place. */
        assert_int_equal(put(d, kernel, 'B'), id);
        assert_int_equal(lookup(d, &first), 1);
        assert_int_equal(first, 'B');
    }
    /* Same key, same inputs: kept (two tuners compiling one kernel). */
    assert_int_equal(put(d, kernel, 'C'), id);
    assert_int_equal(lookup(d, &first), 1);
    assert_int_equal(first, 'B');

    /* A lookup compares every input, so each must be given. */
    db_binary want, got;
    char err[512];
    db_binary_init(&want, KEY, "sm_90a", "13.0", OPTIONS, NULL);
    assert_int_equal(db_binary_lookup(d, &want, &got, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_binary_lookup: want's source is not set"));
    db_binary_init(&want, KEY, "", "13.0", OPTIONS, SOURCE);
    assert_int_equal(db_binary_lookup(d, &want, &got, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "want's arch is not set"));
    db_binary_init(&want, "0011", "sm_90a", "13.0", OPTIONS, SOURCE);
    assert_int_equal(db_binary_lookup(d, &want, &got, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "cache_key '0011' is not 16 lower-case hex digits"));
    assert_int_equal(db_binary_lookup(NULL, &want, &got, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "db_binary_lookup: db is NULL"));
    db_close(d);
}

/* A file of the schema before the inputs were stored: its rows survive the migration, are never
 * used, and are replaced by the next compile. */
static void rows_from_before_the_inputs_are_replaced(void **state)
{
    (void)state;
    int count, before = 0;
    const db_migration *all = db_migrations(&count);
    while (before < count && !strstr(all[before].sql, "ADD COLUMN source"))
        before++;
    assert_true(before < count);
    char path[256], err[512], first = 0;
    fresh_path("old.db", path, sizeof path);
    db *d = NULL;
    if (db_open_with(path, DB_OPEN_CREATE, all, before, &d, err, sizeof err) != 0)
        fail_msg("db_open_with: %s", err);
    const int64_t kernel = some_kernel(d);
    db_close(d);
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO binaries (id, kernel_id, cache_key, arch, nvrtc_version, cubin) VALUES "
             "(7, %lld, '" KEY "', 'sm_90a', '13.0', x'4f')", (long long)kernel);
    raw_sql(path, sql);

    d = open_db(path);   /* migrates */
    db_binary got;
    assert_int_equal(db_binary_find(d, KEY, &got, NULL, err, sizeof err), 1);   /* kept */
    db_binary_release(&got);
    assert_int_equal(lookup(d, &first), 0);
    assert_int_equal(put(d, kernel, 'N'), 7);
    assert_int_equal(lookup(d, &first), 1);
    assert_int_equal(first, 'N');
    db_close(d);
}

/* ---- the runtime's loader and the tuner ------------------------------------------------------ */

typedef struct store_case {
    const char *family, *device_arch, *target;    /* target: the arch stored */
} store_case;

/* A fake CUBIN as gen_compile returns it: its arch is the compile target. */
static gen_binary fake_binary(const char *target, const char *bytes)
{
    gen_binary b;
    memset(&b, 0, sizeof b);
    b.cubin = (void *)bytes;
    b.cubin_size = strlen(bytes) + 1;
    snprintf(b.arch, sizeof b.arch, "%s", target);
    gen_nvrtc_version(b.nvrtc_version, sizeof b.nvrtc_version);
    b.registers = 96;
    return b;
}

/* What the loader stores, the loader of a later process finds, for every family on the arch it
 * targets (fwd_wgmma on sm_90 is compiled for sm_90a, and was never found again); and so does
 * the tuner's compile step. */
static void loader_and_tuner_find_what_the_loader_stored(void **state)
{
    (void)state;
    const store_case cases[] = {
        { "fwd_wgmma", "sm_90", "sm_90a" },
        { "fwd_mma", "sm_90", "sm_90" },
        { "bwd_mma", "sm_90", "sm_90" },
        { "fwd_mma", "sm_80", "sm_80" },
        { "fwd_exact", "sm_89", "sm_89" },
    };
    char path[256], err[512];
    fresh_path("loader.db", path, sizeof path);
    db_close(open_db(path));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const store_case *t = &cases[i];
        gen_config c;
        gen_config_init(&c, gen_family_find(t->family));
        char *source = gen_expand(&c);
        assert_non_null(source);
        char bytes[64];
        snprintf(bytes, sizeof bytes, "CUBIN of %s for %s", t->family, t->target);
        const gen_binary bin = fake_binary(t->target, bytes);

        ft_context *ft;
        assert_int_equal(ft_open(path, &ft), FT_OK);
        assert_true(ft->user_writable);
        rt_cubin_store(ft, &c, source, t->device_arch, &bin);
        ft_close(ft);

        /* A new process with the same database. */
        assert_int_equal(ft_open(path, &ft), FT_OK);
        rt_cubin cubin;
        memset(&cubin, 0, sizeof cubin);
        const int found = rt_cubin_load(ft, &c, source, t->device_arch, &cubin);
        printf("  %-10s on %-6s -> %s\n", t->family, t->device_arch, found ? cubin.origin : "not found");
        if (!found)
            fail_msg("%s on %s: the loader does not find the CUBIN it stored", t->family, t->device_arch);
        assert_string_equal(cubin.image, bytes);
        assert_non_null(strstr(cubin.origin, "CUBIN from the database"));
        free(cubin.image);

        /* The row says what the CUBIN is: the compile target. */
        gen_cache_id id;
        assert_int_equal(gen_cache_id_init(c.family, source, t->device_arch, &id), 0);
        assert_string_equal(id.arch, t->target);
        db_binary row;
        assert_int_equal(db_binary_find(ft->user, id.key, &row, NULL, err, sizeof err), 1);
        assert_string_equal(row.arch, t->target);
        db_binary_release(&row);

        /* The tuner takes it from the cache instead of compiling. */
        tune_kernel_set ks = { 0 };
        assert_int_equal(tune_kernels_add(&ks, &c), 0);
        ks.jobs[0].needed = 1;
        if (tune_kernels_build(&ks, ft->user, t->device_arch, 1, 1, err, sizeof err) != 0)
            fail_msg("tune_kernels_build: %s", err);
        assert_int_equal(ks.jobs[0].cached, 1);
        assert_int_equal(ks.jobs[0].binary.cubin_size, strlen(bytes) + 1);
        assert_memory_equal(ks.jobs[0].binary.cubin, bytes, strlen(bytes) + 1);
        tune_kernels_free(&ks);
        ft_close(ft);
        free(source);
    }
}

/* A forged row under the key of a kernel the loader wants: not loaded, so the loader compiles. */
static void loader_refuses_a_forged_row(void **state)
{
    (void)state;
    char path[256];
    fresh_path("forged_loader.db", path, sizeof path);
    db_close(open_db(path));
    gen_config c;
    gen_config_init(&c, gen_family_find("fwd_mma"));
    char *source = gen_expand(&c);
    assert_non_null(source);
    const gen_binary bin = fake_binary("sm_90", "the real CUBIN");
    ft_context *ft;
    assert_int_equal(ft_open(path, &ft), FT_OK);
    rt_cubin_store(ft, &c, source, "sm_90", &bin);
    rt_cubin cubin;
    assert_int_equal(rt_cubin_load(ft, &c, source, "sm_90", &cubin), 1);
    free(cubin.image);
    ft_close(ft);

    /* Another kernel's CUBIN under this key, as a 64-bit collision would store it. */
    raw_sql(path, "UPDATE binaries SET source = 'another kernel', cubin = CAST('a forged CUBIN' AS BLOB)");
    assert_int_equal(ft_open(path, &ft), FT_OK);
    memset(&cubin, 0, sizeof cubin);
    assert_int_equal(rt_cubin_load(ft, &c, source, "sm_90", &cubin), 0);
    assert_null(cubin.image);
    /* The tuner does not take it either: it compiles the kernel (NVRTC, no GPU needed) and
     * stores the real CUBIN in the row's place, which the loader then finds. */
    tune_kernel_set ks = { 0 };
    assert_int_equal(tune_kernels_add(&ks, &c), 0);
    ks.jobs[0].needed = 1;
    char err[512];
    assert_int_equal(tune_kernels_build(&ks, ft->user, "sm_90", 1, 1, err, sizeof err), 0);
    assert_int_equal(ks.jobs[0].cached, 0);
    if (!ks.jobs[0].ready)
        fail_msg("compiling fwd_mma for sm_90: %s", ks.jobs[0].error);
    assert_memory_equal(ks.jobs[0].binary.cubin, "\177ELF", 4);
    memset(&cubin, 0, sizeof cubin);
    assert_int_equal(rt_cubin_load(ft, &c, source, "sm_90", &cubin), 1);
    assert_int_equal(cubin.size, ks.jobs[0].binary.cubin_size);
    assert_memory_equal(cubin.image, ks.jobs[0].binary.cubin, cubin.size);
    free(cubin.image);
    tune_kernels_free(&ks);
    ft_close(ft);
    free(source);
}

/* The cache on disk: what one process compiled, a later one (no database, or one without the
 * row) loads; a file that is not exactly what it says (another kernel's under this key, cut
 * short, with bytes after its end, from another NVRTC) is passed over; "" turns it off. */
static void disk_cache_keeps_what_was_compiled(void **state)
{
    (void)state;
    char cache[300], path[600];
    snprintf(cache, sizeof cache, "%s/cache/flashtune", dir);   /* two levels made on the first store */
    gen_config c, other;
    gen_config_init(&c, gen_family_find("fwd_mma"));
    gen_config_init(&other, gen_family_find("fwd_mma"));
    other.p[GEN_BLOCK_N] = 32;
    char *source = gen_expand(&c), *other_source = gen_expand(&other);
    assert_non_null(source);
    assert_non_null(other_source);
    const gen_binary bin = fake_binary("sm_90", "a CUBIN of fwd_mma");
    gen_cache_id id, other_id;
    assert_int_equal(gen_cache_id_init(c.family, source, "sm_90", &id), 0);
    assert_int_equal(gen_cache_id_init(other.family, other_source, "sm_90", &other_id), 0);

    ft_context *ft;
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    snprintf(ft->cache_dir, sizeof ft->cache_dir, "%s", cache);
    rt_cubin_store(ft, &c, source, "sm_90", &bin);
    ft_close(ft);
    snprintf(path, sizeof path, "%s/%s-%s.cubin", cache, id.key, id.arch);
    assert_int_equal(access(path, R_OK), 0);

    /* A later process, without a database, then with one that lacks the row. */
    char db_path[256];
    fresh_path("disk.db", db_path, sizeof db_path);
    db_close(open_db(db_path));
    const char *dbs[2] = { NULL, db_path };
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ft_open(dbs[i], &ft), FT_OK);
        snprintf(ft->cache_dir, sizeof ft->cache_dir, "%s", cache);
        rt_cubin cubin;
        memset(&cubin, 0, sizeof cubin);
        assert_int_equal(rt_cubin_load(ft, &c, source, "sm_90", &cubin), 1);
        assert_string_equal(cubin.image, "a CUBIN of fwd_mma");
        assert_int_equal(cubin.size, bin.cubin_size);
        assert_non_null(strstr(cubin.origin, "CUBIN from the cache"));
        free(cubin.image);
        /* Nothing for another kernel. */
        memset(&cubin, 0, sizeof cubin);
        assert_int_equal(rt_cubin_load(ft, &other, other_source, "sm_90", &cubin), 0);
        ft_close(ft);
    }

    /* Damaged or foreign files: each passed over. */
    size_t size;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size = (size_t)ftell(f);
    rewind(f);
    char *good = malloc(size);
    assert_int_equal(fread(good, 1, size, f), size);
    fclose(f);
    char other_path[600];
    snprintf(other_path, sizeof other_path, "%s/%s-%s.cubin", cache, other_id.key, other_id.arch);
    const struct { const char *name; const char *file; size_t keep; const char *tail; } damaged[] = {
        { "another kernel's file under its key", other_path, size, "" },
        { "cut short", path, size - 3, "" },
        { "bytes after the end", path, size, "x" },
        { "only the header", path, 40, "" },
    };
    for (size_t i = 0; i < sizeof damaged / sizeof damaged[0]; i++) {
        f = fopen(damaged[i].file, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(good, 1, damaged[i].keep, f), damaged[i].keep);
        fputs(damaged[i].tail, f);
        fclose(f);
        rt_cubin cubin;
        memset(&cubin, 0, sizeof cubin);
        const int found = damaged[i].file == other_path ? rt_disk_cache_load(cache, &other_id, &cubin)
                                                          : rt_disk_cache_load(cache, &id, &cubin);
        if (found)
            fail_msg("%s: loaded", damaged[i].name);
        assert_null(cubin.image);
        unlink(other_path);
    }
    /* Another NVRTC's file: the version in the header differs. */
    gen_cache_id newer = id;
    snprintf(newer.nvrtc_version, sizeof newer.nvrtc_version, "99.9");
    rt_disk_cache_store(cache, &newer, "a newer CUBIN", 14);
    rt_cubin cubin;
    memset(&cubin, 0, sizeof cubin);
    assert_int_equal(rt_disk_cache_load(cache, &id, &cubin), 0);
    assert_int_equal(rt_disk_cache_load(cache, &newer, &cubin), 1);
    free(cubin.image);
    /* Off: nothing stored, nothing found. */
    memset(&cubin, 0, sizeof cubin);
    unlink(path);
    rt_disk_cache_store("", &id, "x", 2);
    assert_int_equal(rt_disk_cache_load("", &id, &cubin), 0);
    free(good);
    free(source);
    free(other_source);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_cubin_cache: a cache lookup blocked (a FIFO opened for reading?)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

/* Whether the cache finds id's CUBIN, and then frees it. */
static int cache_finds(const char *cache, const gen_cache_id *id)
{
    rt_cubin cubin;
    memset(&cubin, 0, sizeof cubin);
    const int found = rt_disk_cache_load(cache, id, &cubin);
    free(cubin.image);
    return found;
}

/* What the cache cannot trust is passed over: a flipped CUBIN byte under a valid header (its hash
 * differs), a FIFO planted at a kernel's name (opened without blocking: an alarm fails the test
 * if the lookup waits), a link there (even to a good file), a file or a folder that group or
 * others may write. (A file or folder of another user is refused the same way; a test cannot make
 * one without privileges.) */
static void disk_cache_refuses_what_it_cannot_trust(void **state)
{
    (void)state;
    char cache[300], path[600], copy[600];
    snprintf(cache, sizeof cache, "%s/trust", dir);
    gen_config c;
    gen_config_init(&c, gen_family_find("fwd_mma"));
    char *source = gen_expand(&c);
    assert_non_null(source);
    gen_cache_id id;
    assert_int_equal(gen_cache_id_init(c.family, source, "sm_90", &id), 0);
    static const char image[] = "a CUBIN to trust";
    rt_disk_cache_store(cache, &id, image, sizeof image);
    snprintf(path, sizeof path, "%s/%s-%s.cubin", cache, id.key, id.arch);
    snprintf(copy, sizeof copy, "%s/good.copy", cache);
    assert_int_equal(cache_finds(cache, &id), 1);

    /* The good file aside (copy), then each damage in its place. */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    const size_t size = (size_t)ftell(f);
    rewind(f);
    char *good = malloc(size);
    assert_non_null(good);
    assert_int_equal(fread(good, 1, size, f), size);
    fclose(f);
    f = fopen(copy, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(good, 1, size, f), size);
    fclose(f);
    assert_int_equal(chmod(copy, 0600), 0);

    good[size - 2] ^= 1;   /* the CUBIN is the file's last part */
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(good, 1, size, f), size);
    fclose(f);
    good[size - 2] ^= 1;
    if (cache_finds(cache, &id))
        fail_msg("a flipped CUBIN byte was loaded");

    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    signal(SIGALRM, on_alarm);
    alarm(20);
    if (cache_finds(cache, &id))
        fail_msg("a FIFO was loaded");
    alarm(0);
    unlink(path);

    assert_int_equal(symlink(copy, path), 0);
    if (cache_finds(cache, &id))
        fail_msg("a link was followed");
    unlink(path);

    assert_int_equal(rename(copy, path), 0);
    assert_int_equal(cache_finds(cache, &id), 1);
    assert_int_equal(chmod(path, 0620), 0);
    if (cache_finds(cache, &id))
        fail_msg("a file the group may write was loaded");
    assert_int_equal(chmod(path, 0602), 0);
    if (cache_finds(cache, &id))
        fail_msg("a file others may write was loaded");
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(chmod(cache, 0770), 0);
    if (cache_finds(cache, &id))
        fail_msg("a file in a folder the group may write was loaded");
    assert_int_equal(chmod(cache, 0700), 0);
    assert_int_equal(cache_finds(cache, &id), 1);
    unlink(path);
    free(good);
    free(source);
}

/* A driver that refuses one CUBIN (refused_image) and loads any other. */
static const char refused_image[] = "a CUBIN the driver refuses";
static int module_loads;
static CUresult refusing_load(CUmodule *module, const void *image)
{
    module_loads++;
    if (!memcmp(image, refused_image, sizeof refused_image))
        return CUDA_ERROR_INVALID_IMAGE;
    *module = (CUmodule)(uintptr_t)0x1000;
    return CUDA_SUCCESS;
}
static CUresult any_unload(CUmodule module)
{
    (void)module;
    return CUDA_SUCCESS;
}
static CUresult any_function(CUfunction *fn, CUmodule module, const char *name)
{
    (void)module, (void)name;
    *fn = (CUfunction)(uintptr_t)0x2000;
    return CUDA_SUCCESS;
}
static CUresult any_attribute(CUfunction fn, CUfunction_attribute attrib, int value)
{
    (void)fn, (void)attrib, (void)value;
    return CUDA_SUCCESS;
}

/* A stored CUBIN the driver refuses (intact on disk, but damaged or of another driver) is compiled
 * again and stored in its place, so later processes load the good one: not a failure every time. */
static void refused_cubin_is_compiled_again(void **state)
{
    (void)state;
    char cache[300];
    snprintf(cache, sizeof cache, "%s/refused", dir);
    gen_config c;
    gen_config_init(&c, gen_family_find("fwd_mma"));
    char *source = gen_expand(&c);
    assert_non_null(source);
    ft_context *ft;
    assert_int_equal(ft_open(NULL, &ft), FT_OK);
    snprintf(ft->cache_dir, sizeof ft->cache_dir, "%s", cache);
    const gen_binary refused = fake_binary("sm_90", refused_image);
    rt_cubin_store(ft, &c, source, "sm_90", &refused);

    rt_cuctx cc;
    memset(&cc, 0, sizeof cc);
    snprintf(cc.info.arch, sizeof cc.info.arch, "sm_90");
    cc.info.smem_limit = 232448;
    cu_driver cu;
    memset(&cu, 0, sizeof cu);
    cu.ModuleLoadData = refusing_load;
    cu.ModuleUnload = any_unload;
    cu.ModuleGetFunction = any_function;
    cu.FuncSetAttribute = any_attribute;
    const rt_module *m = NULL;
    module_loads = 0;
    if (rt_module_get(ft, "test", &cu, &cc, &c, &m) != FT_OK)
        fail_msg("rt_module_get: %s", ft_last_error(ft));
    assert_int_equal(module_loads, 2);   /* the stored one, then the one compiled in its place */
    assert_non_null(strstr(m->origin, "compiled with NVRTC"));
    gen_cache_id id;
    assert_int_equal(gen_cache_id_init(c.family, source, "sm_90", &id), 0);
    rt_cubin cubin;
    memset(&cubin, 0, sizeof cubin);
    assert_int_equal(rt_disk_cache_load(cache, &id, &cubin), 1);
    assert_false(cubin.size == sizeof refused_image && !memcmp(cubin.image, refused_image, sizeof refused_image));
    free(cubin.image);
    for (rt_module *next; cc.modules; cc.modules = next) {
        next = cc.modules->next;
        free(cc.modules);
    }
    ft_close(ft);
    free(source);
}

/* Where the cache is: the variable first ("" and "0": none), then the XDG folder (absolute only),
 * then the home folder's. */
static void disk_cache_folder_follows_the_environment(void **state)
{
    (void)state;
    const struct { const char *cache, *xdg, *home, *want; } cases[] = {
        { "/srv/cubins", "/x", "/home/u", "/srv/cubins" },
        { "", "/x", "/home/u", "" },
        { "0", "/x", "/home/u", "" },
        { NULL, "/x", "/home/u", "/x/flashtune" },
        { NULL, "relative", "/home/u", "/home/u/.cache/flashtune" },
        { NULL, NULL, "/home/u", "/home/u/.cache/flashtune" },
        { NULL, NULL, NULL, "" },
    };
    const char *names[3] = { "FLASHTUNE_CACHE_DIR", "XDG_CACHE_HOME", "HOME" };
    char *saved[3];
    for (int v = 0; v < 3; v++)
        saved[v] = getenv(names[v]) ? strdup(getenv(names[v])) : NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *values[3] = { cases[i].cache, cases[i].xdg, cases[i].home };
        for (int v = 0; v < 3; v++)
            values[v] ? setenv(names[v], values[v], 1) : unsetenv(names[v]);
        char got[256];
        rt_disk_cache_dir(got, sizeof got);
        assert_string_equal(got, cases[i].want);
    }
    for (int v = 0; v < 3; v++) {
        saved[v] ? setenv(names[v], saved[v], 1) : unsetenv(names[v]);
        free(saved[v]);
    }
}

/* The group's folder: made before the first case, removed after the last. */
static int make_folder(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_folder(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    /* Nothing is launched: no driver, even on a GPU machine. */
    setenv("FLASHTUNE_CUDA_DRIVER", "/nonexistent/libcuda-for-test.so.1", 1);
    /* The database's cases see the database alone; the disk cache's set their own folder. */
    setenv("FLASHTUNE_CACHE_DIR", "", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forged_rows_are_not_used),
        cmocka_unit_test(rows_from_before_the_inputs_are_replaced),
        cmocka_unit_test(loader_and_tuner_find_what_the_loader_stored),
        cmocka_unit_test(loader_refuses_a_forged_row),
        cmocka_unit_test(disk_cache_keeps_what_was_compiled),
        cmocka_unit_test(disk_cache_refuses_what_it_cannot_trust),
        cmocka_unit_test(refused_cubin_is_compiled_again),
        cmocka_unit_test(disk_cache_folder_follows_the_environment),
    };
    return cmocka_run_group_tests(tests, make_folder, remove_folder);
}
