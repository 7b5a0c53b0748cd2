/* db import against hostile or careless input (issue 14): every kernel checked through the
 * generator and every workload by the space loader's rules, a failed import creates no
 * database, input read with a size cap and reasons, a faster winner replaces a stored one
 * (--keep: never), and the fuzz test (test_db_fuzz.c, ctest test_db_fuzz). No GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_core_internal.h"
#include "gen_internal.h"
#include "test_db_import.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

int cmd_db(int argc, char **argv);   /* tuner/cmd_db.c, compiled into this test */

const db_import_options checked = { .keep = 0, .check = db_import_check_generated };

/* ---- helpers -------------------------------------------------------------- */

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

char *file_bytes(const char *path, size_t *size)
{
    char *text = NULL, err[512] = "";
    if (db_import_read(path, &text, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (size)
        *size = strlen(text);
    return text;
}

void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

char **shipped_texts(int *count)
{
    DIR *dir = opendir(FT_TUNED_DIR);
    assert_non_null(dir);
    char **texts = NULL;
    *count = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".txt"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", FT_TUNED_DIR, e->d_name);
        texts = realloc(texts, (size_t)(*count + 1) * sizeof *texts);
        assert_non_null(texts);
        texts[(*count)++] = file_bytes(path, NULL);
    }
    closedir(dir);
    assert_true(*count >= 1);
    return texts;
}

void free_texts(char **texts, int count)
{
    for (int i = 0; i < count; i++)
        free(texts[i]);
    free(texts);
}

static db *open_ok(const char *path, int flags)
{
    db *d = NULL;
    char err[512] = "";
    if (db_open(path, flags, &d, err, sizeof err) != 0)
        fail_msg("db_open(%s): %s", path, err);
    return d;
}

void create_shipped_db(const char *path)
{
    int count;
    char **texts = shipped_texts(&count);
    db *d = open_ok(path, DB_OPEN_CREATE);
    for (int i = 0; i < count; i++) {
        char err[1024] = "";
        db_import_counts n;
        if (db_import_text(d, "shipped", texts[i], &checked, &n, err, sizeof err) != 0)
            fail_msg("the shipped winners do not import: %s", err);
        assert_true(n.added > 0);
    }
    db_close(d);
    free_texts(texts, count);
}

static long long count_rows(db *d)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db_sqlite(d),
                                        "SELECT (SELECT count(*) FROM results) + (SELECT count(*) FROM devices) + "
                                        "(SELECT count(*) FROM kernels) + (SELECT count(*) FROM workloads) + "
                                        "(SELECT count(*) FROM sweeps)", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* The first shipped line of the H100's (whichever file holds it) of op ("op=fwd") that also holds
 * `must` (NULL: any), into buf. The cases below edit its fields: a new set of shipped winners may
 * need their find/replace strings (or `must`) renewed. */
static void shipped_line_with(const char *op, const char *must, char *buf, size_t len)
{
    int count;
    char **texts = shipped_texts(&count);
    for (int t = 0; t < count; t++)
        for (const char *line = texts[t]; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != '\0')) {
            const int n = (int)strcspn(line, "\n");
            snprintf(buf, len, "%.*s", n, line);
            if (strstr(buf, "device=\"NVIDIA H100 80GB HBM3\"") && strstr(buf, op) && (!must || strstr(buf, must))) {
                free_texts(texts, count);
                return;
            }
        }
    free_texts(texts, count);
    fail_msg("no shipped line holds '%s' and '%s'", op, must ? must : "");
}

static void shipped_line(const char *op, char *buf, size_t len)
{
    shipped_line_with(op, NULL, buf, len);
}

/* line with the first `find` replaced by `repl`, into buf; find must be there. */
static void replace(const char *line, const char *find, const char *repl, char *buf, size_t len)
{
    const char *at = strstr(line, find);
    if (!at)
        fail_msg("'%s' is not in the line", find);
    snprintf(buf, len, "%.*s%s%s", (int)(at - line), line, repl, at + strlen(find));
}

/* line with its kernel's parameters changed by `change` (a replace of the parameters' text) and
 * its source_hash recomputed, as a tuner would have written it. */
static void other_kernel(const char *line, const char *find, const char *repl, char *buf, size_t len)
{
    char changed[4096], params[2048], family[32], hash[GEN_HASH_LEN];
    replace(line, find, repl, changed, sizeof changed);
    const char *p = strstr(changed, " DTYPE="), *end = strstr(changed, " median_ms=");
    assert_true(p && end);
    snprintf(params, sizeof params, "%.*s", (int)(end - p), p);
    assert_int_equal(sscanf(strstr(changed, "family=") + 7, "%31s", family), 1);
    gen_config c;
    gen_config_init(&c, gen_family_find(family));
    char why[256];
    if (gen_config_parse(&c, params, why, sizeof why) != 0)
        fail_msg("%s", why);
    char *source = gen_expand(&c);
    assert_non_null(source);
    gen_source_hash(source, hash);
    free(source);
    const char *old = strstr(changed, "source_hash=") + 12;
    char swapped[4096];
    snprintf(swapped, sizeof swapped, "%.*s%s%s", (int)(old - changed), changed, hash, old + 16);
    snprintf(buf, len, "%s", swapped);
}

/* line with median_ms set to ms (and no tflops), into buf. */
static void with_time(const char *line, double ms, char *buf, size_t len)
{
    const char *at = strstr(line, " median_ms=");
    assert_non_null(at);
    snprintf(buf, len, "%.*s median_ms=%g", (int)(at - line), line, ms);
}

static int import(db *d, const char *line, const db_import_options *opt, db_import_counts *n, char *err, size_t len)
{
    char text[8192];
    snprintf(text, sizeof text, "flashtune winners format 1\n%s\n", line);
    return db_import_text(d, "x.txt", text, opt, n, err, len);
}

/* ---- every kernel through the generator, every workload as the space loader ----------- */

static void generator_refuses_what_it_would_not_build(void **state)
{
    fixture *f = *state;
    char fwd[4096], bwd[4096], bwd8[4096];
    shipped_line("op=fwd", fwd, sizeof fwd);
    shipped_line("op=bwd", bwd, sizeof bwd);
    /* 8 warps: tiles that also suit bwd_mma (the case of another family's parameters). */
    shipped_line_with("op=bwd", "NUM_WARPS=8 NUM_STAGES=1", bwd8, sizeof bwd8);
    static const struct {
        const char *name;
        int backward;               /* the shipped line changed: 0 the forward, 1 the backward one, 2 a
                                     * backward one with 8 warps */
        const char *find, *repl;
        const char *expected;
    } cases[] = {
        { "a family that does not exist", 1, "family=bwd_wgmma", "family=bwd_nope",
          "x.txt:2: field 'family': 'bwd_nope' is not a family (fwd_mma, " },
        { "a forward family on op=bwd", 0, "op=fwd", "op=bwd", "x.txt:2: field 'family': fwd_wgmma is a forward "
          "family, but op=bwd" },
        { "a family of the other direction", 1, "family=bwd_wgmma", "family=fwd_mma",
          "field 'family': fwd_mma is a forward family, but op=bwd" },
        { "BLOCK_M=7", 1, "BLOCK_M=128", "BLOCK_M=7", "x.txt:2: kernel bwd_wgmma on sm_90: BLOCK_M=7" },
        { "NUM_WARPS=-1", 1, "NUM_WARPS=12", "NUM_WARPS=-1", "x.txt:2: kernel bwd_wgmma on sm_90: NUM_WARPS=-1" },
        { "NUM_STAGES=2147483647", 1, "NUM_STAGES=2", "NUM_STAGES=2147483647",
          "x.txt:2: kernel bwd_wgmma on sm_90: NUM_STAGES=2147483647" },
        { "a hash of other parameters", 1, "source_hash=", "source_hash=0123456789abcdef",
          "x.txt:2: field 'source_hash': 0123456789abcdef" },
        { "another family's parameters under a good hash", 2, "family=bwd_wgmma", "family=bwd_mma",
          "x.txt:2: field 'source_hash': " },
        { "arch=abc", 1, "arch=sm_90", "arch=abc", "x.txt:2: field 'arch': 'abc' is not an arch" },
        { "an arch not the compute capability's", 1, "cc=9.0", "cc=8.0",
          "x.txt:2: field 'arch': 'sm_90' is not the arch of cc=8.0 (sm_80)" },
        { "a wgmma kernel on sm_80", 0, "arch=sm_90 cc=9.0", "arch=sm_80 cc=8.0",
          "x.txt:2: field 'family': family fwd_wgmma needs a GPU of arch sm_90a" },
        { "driver=\"13?0\"", 1, "driver=13.0", "driver=\"13?0\"",
          "x.txt:2: field 'driver': '13?0' is not MAJOR.MINOR" },
        { "nvrtc=13", 1, "nvrtc=13.0", "nvrtc=13", "x.txt:2: field 'nvrtc': '13' is not MAJOR.MINOR" },
        { "cc=+9.-0", 1, "cc=9.0", "cc=+9.-0", "x.txt:2: field 'cc': '+9.-0' is not MAJOR.MINOR" },
        { "cc=99999999999.0", 1, "cc=9.0", "cc=99999999999.0", "x.txt:2: field 'cc': '99999999999.0' is not" },
        { "cc=0x9.0", 1, "cc=9.0", "cc=0x9.0", "x.txt:2: field 'cc': '0x9.0' is not MAJOR.MINOR" },
        { "median_ms in hex", 1, "median_ms=", "median_ms=0x1p-2 old_median_ms=",
          "x.txt:2: field 'median_ms': '0x1p-2' is not a non-negative number" },
        { "tflops=infinity", 1, "tflops=", "tflops=infinity old_tflops=",
          "x.txt:2: field 'tflops': 'infinity' is not a non-negative number" },
        { "batch=2147483647", 1, "batch=1 ", "batch=2147483647 ",
          "x.txt:2: workload: batch*heads = 68719476704 is more than 65535" },
        { "heads=2147483647", 1, "heads=32", "heads=2147483647", "x.txt:2: workload: batch*heads = 2147483647" },
        { "seqlen_q=2147483647", 1, "seqlen_q=16384", "seqlen_q=2147483647",
          "x.txt:2: workload: seqlen_q + seqlen_k = 2147500031 must be below 2^31" },
        { "EVEN_N=1 for a seqlen_k no tile divides", 1, "seqlen_k=16384", "seqlen_k=16010",
          "x.txt:2: field 'EVEN_N': 1, but seqlen_k=16010 and BLOCK_N=128 give 0" },
    };
    db *d = open_ok(f->path, DB_OPEN_CREATE);
    int shipped;
    char **texts = shipped_texts(&shipped);
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        char line[4096], err[1024] = "";
        replace(cases[i].backward == 2 ? bwd8 : cases[i].backward ? bwd : fwd, cases[i].find, cases[i].repl, line,
                sizeof line);
        if (!strcmp(cases[i].find, "source_hash="))   /* the new hash in place of the old one */
            memmove(strstr(line, "0123456789abcdef") + 16, strstr(line, "0123456789abcdef") + 32,
                    strlen(strstr(line, "0123456789abcdef") + 32) + 1);
        db_import_counts n = { -1, -1, -1 };
        const long long before = count_rows(d);
        int rc = import(d, line, &checked, &n, err, sizeof err);
        if (rc != -1 || !strstr(err, cases[i].expected))
            fail_msg("case '%s': rc %d, expected '%s', got '%s'", cases[i].name, rc, cases[i].expected, err);
        assert_int_equal(n.added + n.replaced + n.kept, 0);
        assert_int_equal(count_rows(d), before);
        /* db_import_check says the same without a database. */
        char text[8192], again[1024] = "";
        snprintf(text, sizeof text, "flashtune winners format 1\n%s\n", line);
        assert_int_equal(db_import_check("x.txt", text, &checked, NULL, again, sizeof again), -1);
        assert_string_equal(again, err);
        /* The shipped winners still import (they were refused after one such import). */
        for (int t = 0; t < shipped; t++)
            if (db_import_text(d, "shipped", texts[t], &checked, &n, err, sizeof err) != 0)
                fail_msg("after case '%s': the shipped winners do not import: %s", cases[i].name, err);
    }
    /* The unchanged lines pass. */
    db_import_counts n;
    char err[1024] = "";
    assert_int_equal(import(d, fwd, &checked, &n, err, sizeof err), 0);
    assert_int_equal(import(d, bwd, &checked, &n, err, sizeof err), 0);
    free_texts(texts, shipped);
    db_close(d);
}

/* ---- a failed import creates no database; the input's reasons ---------------------------- */

static int run_db(int argc, const char *const *args)
{
    char *argv[8];
    for (int i = 0; i < argc; i++)
        argv[i] = (char *)args[i];
    argv[argc] = NULL;
    fflush(stdout);
    return cmd_db(argc, argv);
}

static void failed_import_creates_nothing(void **state)
{
    fixture *f = *state;
    char cwd[1024], bad[160], good[160], bwd[4096], line[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(f->dir), 0);
    unsetenv("FLASHTUNE_DB");
    shipped_line("op=bwd", bwd, sizeof bwd);
    replace(bwd, "family=bwd_wgmma", "family=bwd_nope", line, sizeof line);
    snprintf(bad, sizeof bad, "%s/bad.txt", f->dir);
    FILE *out = fopen(bad, "w");
    assert_non_null(out);
    fprintf(out, "flashtune winners format 1\n%s\n", line);
    fclose(out);
    static const struct {
        int argc;
        const char *argv[4];
        int rc;
    } cases[] = {
        { 3, { "db", "import", "/nonexistent.txt" }, 1 },
        { 3, { "db", "import", "bad.txt" }, 1 },
        { 3, { "db", "import", "/" }, 1 },
        { 3, { "db", "import", "/dev/zero" }, 1 },
        { 3, { "db", "import", "--db" }, 2 },
        { 3, { "db", "--keep", "export" }, 2 },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        int rc = run_db(cases[i].argc, cases[i].argv);
        if (rc != cases[i].rc)
            fail_msg("db %s %s: exit %d, expected %d", cases[i].argv[1], cases[i].argv[2], rc, cases[i].rc);
        assert_int_equal(access("flashtune.db", F_OK), -1);
        assert_int_equal(access("--db", F_OK), -1);
    }
    /* A good file creates it. */
    snprintf(good, sizeof good, "%s/good.txt", f->dir);
    out = fopen(good, "w");
    assert_non_null(out);
    fprintf(out, "flashtune winners format 1\n%s\n", bwd);
    fclose(out);
    const char *import_good[] = { "db", "import", "good.txt" };
    assert_int_equal(run_db(3, import_good), 0);
    assert_int_equal(access("flashtune.db", F_OK), 0);
    assert_int_equal(chdir(cwd), 0);
}

static void input_is_capped_and_errors_say_why(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *path;
        const char *expected;
    } cases[] = {
        { "/dev/zero",
          "cannot read winners file /dev/zero: it is larger than 64 MiB, the most a winners file may have" },
        { "/", "cannot read winners file /: Is a directory" },
        { "/nonexistent/w.txt", "cannot read winners file /nonexistent/w.txt: No such file or directory" },
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        char *text = (char *)1, err[512] = "";
        const clock_t start = clock();
        assert_int_equal(db_import_read(cases[i].path, &text, err, sizeof err), -1);
        assert_null(text);
        assert_string_equal(err, cases[i].expected);
        /* Not the 8 GB it read before: well under a second of CPU. */
        assert_true(clock() - start < CLOCKS_PER_SEC);
    }
    /* A NUL byte: not a text file. */
    char path[160], *text;
    snprintf(path, sizeof path, "%s/nul.txt", f->dir);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    fwrite("flashtune\0", 1, 10, out);
    fclose(out);
    char err[512] = "";
    assert_int_equal(db_import_read(path, &text, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not a text file (it holds NUL bytes)"));
}

/* ---- a faster winner replaces the stored one; --keep never ------------------------------ */

static void faster_winner_replaces_unless_keep(void **state)
{
    fixture *f = *state;
    create_shipped_db(f->path);
    db *d = open_ok(f->path, 0);
    char bwd[4096], slower[4096], faster[4096], other[4096], err[1024] = "";
    shipped_line("op=bwd", bwd, sizeof bwd);
    char *before = fixture_export(d);
    /* The same workload with another kernel (one stage), slower, then faster than stored. */
    other_kernel(bwd, "NUM_STAGES=2", "NUM_STAGES=1", other, sizeof other);
    const double stored = strtod(strstr(bwd, "median_ms=") + 10, NULL);
    with_time(other, stored * 2, slower, sizeof slower);
    with_time(other, stored / 2, faster, sizeof faster);

    static const struct {
        const char *name;
        int line;            /* 0 slower, 1 faster, 2 the shipped line */
        int keep;
        int added, replaced, kept;
        int changed;         /* 1: the export differs from the shipped one after it */
    } steps[] = {
        { "slower", 0, 0, 0, 0, 1, 0 },
        { "faster, --keep", 1, 1, 0, 0, 1, 0 },
        { "faster", 1, 0, 0, 1, 0, 1 },
        { "faster, again", 1, 0, 0, 0, 1, 1 },
        { "the shipped one, slower now", 2, 0, 0, 0, 1, 1 },
    };
    for (int i = 0; i < ARRAY_LEN(steps); i++) {
        const char *line = steps[i].line == 0 ? slower : steps[i].line == 1 ? faster : bwd;
        db_import_options opt = checked;
        opt.keep = steps[i].keep;
        db_import_counts n = { -1, -1, -1 };
        if (import(d, line, &opt, &n, err, sizeof err) != 0)
            fail_msg("step '%s': %s", steps[i].name, err);
        if (n.added != steps[i].added || n.replaced != steps[i].replaced || n.kept != steps[i].kept)
            fail_msg("step '%s': added %d replaced %d kept %d, expected %d %d %d", steps[i].name, n.added, n.replaced,
                     n.kept, steps[i].added, steps[i].replaced, steps[i].kept);
        char *now = fixture_export(d);
        assert_int_equal(strcmp(now, before) != 0, steps[i].changed);
        if (steps[i].changed)
            assert_non_null(strstr(now, faster));
        free(now);
    }
    /* A new device: added. */
    char elsewhere[4096];
    db_import_counts n;
    replace(bwd, "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", elsewhere, sizeof elsewhere);
    assert_int_equal(import(d, elsewhere, &checked, &n, err, sizeof err), 0);
    assert_int_equal(n.added, 1);
    free(before);
    db_close(d);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        CASE(generator_refuses_what_it_would_not_build),
        CASE(failed_import_creates_nothing),
        CASE(input_is_capped_and_errors_say_why),
        CASE(faster_winner_replaces_unless_keep),
    };
    const struct CMUnitTest fuzz[] = {
        CASE(fuzz_winners_text),
    };
    if (argc > 1 && !strcmp(argv[1], "fuzz"))
        return cmocka_run_group_tests_name("test_db_fuzz", fuzz, NULL, NULL);
    return cmocka_run_group_tests_name("test_db_import", tests, NULL, NULL);
}
