/* The flashtune command's conventions that C can check directly: one strict integer syntax for
 * every input, the tables as CSV and JSON, a table that stops at the first row its stream
 * refuses, and device selection (tune --device N) through the probe and the benchmark worker,
 * against a stand-in driver (tests/fake_cuda.c). tests/test_cli.sh runs the command itself. */
#define _GNU_SOURCE   /* fopencookie */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_internal.h"
#include "gen_internal.h"
#include "tune_options.h"
#include "tune_table.h"
#include "tune_worker.h"

/* ---- one integer syntax ------------------------------------------------------------------ */

typedef struct int_case {
    const char *text;
    int ok;
    long value;
} int_case;

static const int_case int_cases[] = {
    { "64", 1, 64 },     { "-3", 1, -3 },      { "0", 1, 0 },        { " 64", 0, 0 },     { "+64", 0, 0 },
    { "64 ", 0, 0 },     { "\t64", 0, 0 },     { "", 0, 0 },         { "-", 0, 0 },       { "0x10", 0, 0 },
    { "1e3", 0, 0 },     { "6 4", 0, 0 },      { "--1", 0, 0 },      { "99999999999999999999", 0, 0 },
};

static void test_strict_integers(void **state)
{
    (void)state;
    int failed = 0;
    for (size_t i = 0; i < sizeof int_cases / sizeof int_cases[0]; i++) {
        const int_case *c = &int_cases[i];
        long v = 12345;
        int value = 0;
        char why[256];
        const int gen = gen_parse_long(c->text, LONG_MIN, LONG_MAX, &v) == 0;
        /* PARAM=VALUE and the space's strings go through gen_param_parse. */
        const int param = gen_param_parse(GEN_BLOCK_M, c->text, &value, why, sizeof why) == 0;
        /* Workload text (the results command, the winners file) goes through db_workload_parse;
         * quoted, a value may hold blanks. */
        char wl[128];
        snprintf(wl, sizeof wl, "op=fwd dtype=bf16 d=64 b=\"%s\" h=1 sq=1 sk=1", c->text);
        db_workload w;
        const int workload = db_workload_parse(wl, &w, why, sizeof why) == 0;
        const int expect_workload = c->ok && c->value >= 1;
        if (gen != c->ok || (gen && v != c->value) || param != c->ok || workload != expect_workload) {
            printf("  '%s': expected %s, got gen_parse_long %d (%ld), gen_param_parse %d, db_workload_parse %d\n",
                   c->text, c->ok ? "accepted" : "refused", gen, v, param, workload);
            failed = 1;
        }
    }
    long v;
    assert_int_equal(gen_parse_long("65", 1, 64, &v), -1);
    assert_int_equal(gen_parse_long(NULL, 1, 64, &v), -1);
    assert_int_equal(failed, 0);
}

/* Durations (tune --budget): a whole count, bare or with s, m or h, 1 s to a week. */
static void test_durations(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        long seconds;   /* 0: refused */
    } cases[] = {
        { "90", 90 },   { "90s", 90 },  { "10m", 600 },  { "2h", 7200 }, { "168h", 604800 }, { "169h", 0 },
        { "0", 0 },     { "0m", 0 },    { "-5m", 0 },    { "m", 0 },     { "1.5h", 0 },      { "10 m", 0 },
        { "10M", 0 },   { "", 0 },      { "10mm", 0 },   { "1d", 0 },    { "+10s", 0 },      { "s10", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long seconds = -1;
        fflush(stderr);
        const int rc = tune_parse_duration("tune", "--budget", cases[i].text, &seconds);
        if ((rc == 0) != (cases[i].seconds != 0) || (rc == 0 && seconds != cases[i].seconds))
            fail_msg("'%s': expected %ld, got rc %d, %ld", cases[i].text, cases[i].seconds, rc, seconds);
    }
}

/* ---- tables as CSV and JSON ------------------------------------------------------------------- */

static char *write_table(const tune_table *t, tune_format f)
{
    char *text = NULL, err[256];
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(tune_table_write(t, f, out, err, sizeof err), 0);
    fclose(out);
    return text;
}

static void expect_text(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want))
        printf("  %s: expected\n%s\n  got\n%s\n", what, want, got);
    assert_string_equal(got, want);
}

static void test_table_formats(void **state)
{
    (void)state;
    static const char *const head[] = { "name", "n", "flag", "note" };
    static const char *const rows[][4] = {
        { "a,b", "12", "*", "say \"hi\"" },
        { "line\nbreak", "-", "", "\xff bad byte, tab\t, \xc3\xa9" },
        { "x", "3/5", "*", "" },
        { "y", "1.5e-03", "", "-" },
    };
    tune_table t;
    tune_table_init(&t, 4, head, "lrbl");
    for (int r = 0; r < 4; r++)
        tune_table_add(&t, rows[r]);
    char *csv = write_table(&t, TUNE_FORMAT_CSV);
    const char *want_csv = "name,n,flag,note\r\n"
                           "\"a,b\",12,true,\"say \"\"hi\"\"\"\r\n"
                           "\"line\nbreak\",,false,\"\xff bad byte, tab\t, \xc3\xa9\"\r\n"
                           "x,3/5,true,\r\n"
                           "y,1.5e-03,false,\r\n";
    expect_text("CSV", csv, want_csv);
    char *json = write_table(&t, TUNE_FORMAT_JSON);
    const char *want_json = "[\n"
                            "  {\"name\": \"a,b\", \"n\": 12, \"flag\": true, \"note\": \"say \\\"hi\\\"\"},\n"
                            "  {\"name\": \"line\\nbreak\", \"n\": null, \"flag\": false, "
                            "\"note\": \"\\ufffd bad byte, tab\\t, \xc3\xa9\"},\n"
                            "  {\"name\": \"x\", \"n\": \"3/5\", \"flag\": true, \"note\": null},\n"
                            "  {\"name\": \"y\", \"n\": 1.5e-03, \"flag\": false, \"note\": null}\n"
                            "]\n";
    expect_text("JSON", json, want_json);
    free(csv);
    free(json);
    tune_table_free(&t);

    tune_table empty;
    tune_table_init(&empty, 4, head, "lrbl");
    json = write_table(&empty, TUNE_FORMAT_JSON);
    assert_string_equal(json, "[]\n");
    free(json);
    tune_table_free(&empty);

    tune_format f;
    assert_int_equal(tune_format_parse("json", &f), 0);
    assert_int_equal(f, TUNE_FORMAT_JSON);
    assert_int_equal(tune_format_parse("JSON", &f), -1);
    assert_int_equal(tune_format_parse("xml", &f), -1);
}

/* ---- a refused stream stops the table -------------------------------------------------------- */

static int write_calls;

static ssize_t refuse_write(void *cookie, const char *buf, size_t size)
{
    (void)cookie, (void)buf, (void)size;
    write_calls++;
    errno = ENOSPC;
    return -1;
}

static void test_table_stops_on_write_failure(void **state)
{
    (void)state;
    static const char *const head[] = { "id", "text" };
    tune_table t;
    tune_table_init(&t, 2, head, "rl");
    for (int r = 0; r < 2000; r++) {
        char id[16];
        snprintf(id, sizeof id, "%d", r);
        const char *row[] = { id, "a row long enough that a few of them fill a small stdio buffer" };
        tune_table_add(&t, row);
    }
    for (int f = TUNE_FORMAT_TEXT; f <= TUNE_FORMAT_JSON; f++) {
        FILE *out = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = refuse_write });
        assert_non_null(out);
        static char buf[256];
        setvbuf(out, buf, _IOFBF, sizeof buf);
        write_calls = 0;
        /* Text also through tune_table_print, the call the tables used before formats. */
        char err[256] = "writing the output failed: No space left on device";
        const int rc = f == TUNE_FORMAT_TEXT ? tune_table_print(&t, out)
                                             : tune_table_write(&t, (tune_format)f, out, err, sizeof err);
        if (rc != -1 || !strstr(err, "No space left on device") || write_calls > 8)
            printf("  format %d: rc %d, err '%s', %d writes tried for 2000 rows\n", f, rc, err, write_calls);
        assert_int_equal(rc, -1);
        assert_non_null(strstr(err, "writing the output failed: No space left on device"));
        assert_true(write_calls <= 8);   /* it stopped, rather than formatting every row */
        fclose(out);
    }
    tune_table_free(&t);
}

/* A table wider than TUNE_TABLE_MAX_COLS is an error, never a table cut short (the winners' JSON
 * once lost its last columns that way). */
static void test_table_too_wide_is_an_error(void **state)
{
    (void)state;
    enum { COLS = TUNE_TABLE_MAX_COLS + 1 };
    const char *head[COLS], *row[COLS];
    char names[COLS][8], align[COLS + 1];
    for (int c = 0; c < COLS; c++) {
        snprintf(names[c], sizeof names[c], "c%d", c);
        head[c] = names[c];
        row[c] = "1";
        align[c] = 'r';
    }
    align[COLS] = '\0';
    tune_table t;
    tune_table_init(&t, COLS, head, align);
    tune_table_add(&t, row);
    for (int f = TUNE_FORMAT_TEXT; f <= TUNE_FORMAT_JSON; f++) {
        char *text = NULL, err[256] = "";
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        assert_non_null(out);
        assert_int_equal(tune_table_write(&t, (tune_format)f, out, err, sizeof err), -1);
        fclose(out);
        assert_int_equal(size, 0);   /* nothing written */
        char want[64];
        snprintf(want, sizeof want, "more than %d columns (TUNE_TABLE_MAX_COLS)", TUNE_TABLE_MAX_COLS);
        assert_non_null(strstr(err, want));
        free(text);
    }
    tune_table_free(&t);
}

/* ---- device selection ------------------------------------------------------------------------- */

static void test_device_check(void **state)
{
    (void)state;
    static const struct {
        int ordinal, count, ok;
        const char *why;
    } cases[] = {
        { 0, 1, 1, "" },
        { 1, 2, 1, "" },
        { 2, 2, 0, "this machine has 2 GPUs (0..1)" },
        { 1, 1, 0, "this machine has 1 GPU (0)" },
        { 0, 0, 0, "no GPU here" },
        { -1, 4, 0, "this machine has 4 GPUs (0..3)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[256] = "";
        const int rc = tune_device_check(cases[i].ordinal, cases[i].count, why, sizeof why);
        if ((rc == 0) != cases[i].ok || !strstr(why, cases[i].why))
            printf("  device %d of %d: expected %s '%s', got %d '%s'\n", cases[i].ordinal, cases[i].count,
                   cases[i].ok ? "ok" : "refused", cases[i].why, rc, why);
        assert_int_equal(rc == 0, cases[i].ok);
        assert_non_null(strstr(why, cases[i].why));
    }
}

/* The probe describes the GPU asked for, refuses one that does not exist naming the count, and
 * the worker opens the device of its task: seen through the stand-in driver's log, written by
 * the child processes. */
static void test_device_reaches_probe_and_worker(void **state)
{
    (void)state;
    char log[] = "/tmp/test_cli_fake_cuda_XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    setenv("FLASHTUNE_CUDA_DRIVER", FT_FAKE_CUDA, 1);
    setenv("FAKE_CUDA_DEVICES", "2", 1);
    setenv("FAKE_CUDA_LOG", log, 1);

    tune_gpu_info gpu;
    char why[1024] = "";
    assert_int_equal(tune_worker_probe(1, &gpu, 60, why, sizeof why), 1);
    assert_string_equal(gpu.dev.name, "Fake GPU 1");
    assert_string_equal(gpu.dev.arch, "sm_90");
    assert_int_equal(gpu.ordinal, 1);
    assert_int_equal(tune_worker_probe(2, &gpu, 60, why, sizeof why), 0);
    assert_non_null(strstr(why, "this machine has 2 GPUs (0..1)"));

    tune_worker_task task = { .workload = { .dtype = 2, .head_dim = 64, .head_dim_v = 64, .batch = 1, .heads = 1,
                                            .seqlen_q = 64, .seqlen_k = 64 },
                              .device = 1 };
    tune_worker_proc w;
    assert_int_equal(tune_worker_start(&task, 0, &w, why, sizeof why), 0);
    char line[2048] = "", how[128];
    assert_int_equal(tune_worker_read_line(&w, tune_now() + 60, line, sizeof line), 1);
    tune_worker_stop(&w, how, sizeof how);
    if (!strstr(line, "E device 1: cuDevicePrimaryCtxRetain failed: CUDA_ERROR_NOT_SUPPORTED"))
        printf("  the worker said '%s'\n", line);
    assert_non_null(strstr(line, "E device 1: cuDevicePrimaryCtxRetain failed: CUDA_ERROR_NOT_SUPPORTED"));

    FILE *f = fopen(log, "r");
    assert_non_null(f);
    char calls[1024] = "";
    size_t n = fread(calls, 1, sizeof calls - 1, f);
    calls[n] = '\0';
    fclose(f);
    unlink(log);
    /* probe 1, probe 2 (refused before cuDeviceGet), the worker */
    if (strcmp(calls, "cuDeviceGet 1\ncuDeviceGet 1\ncuDevicePrimaryCtxRetain 1\n"))
        printf("  driver calls:\n%s", calls);
    assert_string_equal(calls, "cuDeviceGet 1\ncuDeviceGet 1\ncuDevicePrimaryCtxRetain 1\n");
    unsetenv("FAKE_CUDA_LOG");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strict_integers),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_table_formats),
        cmocka_unit_test(test_table_stops_on_write_failure),
        cmocka_unit_test(test_table_too_wide_is_an_error),
        cmocka_unit_test(test_device_check),
        cmocka_unit_test(test_device_reaches_probe_and_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
