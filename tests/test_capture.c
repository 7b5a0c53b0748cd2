/* Capture files (db/db_capture.c): made when missing, merged (calls added, served updated, new
 * problems appended, deterministic apart), refused without being touched when they do not parse,
 * shared by processes merging at once under the lock, counts saturating. No GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "db_internal.h"

typedef struct fixture {
    char dir[256], path[300];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/ft_test_capture.XXXXXX");
    if (!f || !mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/capture.txt", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static db_capture_row row(int op, int seqlen, int causal, unsigned long long calls, int served)
{
    db_capture_row r;
    memset(&r, 0, sizeof r);
    r.workload.op = op;
    r.workload.dtype = 2;
    r.workload.head_dim = r.workload.head_dim_v = 128;
    r.workload.causal = causal;
    r.workload.batch = 2;
    r.workload.heads = 16;
    r.workload.seqlen_q = r.workload.seqlen_k = seqlen;
    r.calls = calls;
    r.served = served;
    return r;
}

static char *slurp(const char *path)
{
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    static char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    buf[n] = '\0';
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    fclose(out);
}

static void merged_counts_add_up(void **state)
{
    fixture *f = *state;
    char err[512] = "";
    const db_capture_row first[] = { row(DB_OP_FWD, 4096, 1, 3, DB_SERVED_NEAREST), row(DB_OP_BWD, 4096, 1, 2, DB_SERVED_DEFAULT) };
    if (db_capture_merge(f->path, first, 2, err, sizeof err) != 0)
        fail_msg("%s", err);
    const char *text = slurp(f->path);
    assert_true(!strncmp(text, "flashtune capture format 1\n", 27));
    assert_non_null(strstr(text, "op=fwd dtype=bf16 head_dim=128 head_dim_v=128 causal=1 batch=2 heads=16 seqlen_q=4096 "
                                 "seqlen_k=4096 calls=3 served=nearest\n"));
    /* Again: the forward's calls add and its served moves on; a deterministic backward is a
     * problem of its own; a new length is appended. */
    db_capture_row det = row(DB_OP_BWD, 4096, 1, 5, DB_SERVED_DEFAULT);
    det.deterministic = 1;
    const db_capture_row second[] = { row(DB_OP_FWD, 4096, 1, 4, DB_SERVED_TUNED), det, row(DB_OP_FWD, 1024, 0, 1, DB_SERVED_TUNED) };
    if (db_capture_merge(f->path, second, 3, err, sizeof err) != 0)
        fail_msg("%s", err);
    db_capture_row *rows;
    int n;
    if (db_capture_read(f->path, &rows, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(n, 4);
    assert_int_equal(rows[0].calls, 7);
    assert_int_equal(rows[0].served, DB_SERVED_TUNED);
    assert_int_equal(rows[1].calls, 2);
    assert_int_equal(rows[1].deterministic, 0);
    assert_int_equal(rows[2].calls, 5);
    assert_int_equal(rows[2].deterministic, 1);
    assert_int_equal(rows[3].workload.seqlen_q, 1024);
    assert_int_equal(rows[3].workload.causal, 0);
    free(rows);
    /* Counts saturate rather than wrap. */
    const db_capture_row huge[] = { row(DB_OP_FWD, 4096, 1, ~0ull - 1, DB_SERVED_TUNED) };
    if (db_capture_merge(f->path, huge, 1, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (db_capture_read(f->path, &rows, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(rows[0].calls == ~0ull);
    free(rows);
}

/* A file that does not parse is named with its line and left as it was; nothing is written. */
static void bad_files_are_refused_untouched(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *text, *why;
    } cases[] = {
        { "op=fwd dtype=bf16 head_dim=64 batch=1 heads=1 seqlen_q=1 seqlen_k=1 calls=1 served=tuned\n",
          ":1: not a capture file" },
        { "flashtune capture format 1\nop=fwd dtype=bf16 head_dim=64 batch=1 heads=1 seqlen_q=1 seqlen_k=1 "
          "served=tuned\n", ":2: missing field 'calls'" },
        { "flashtune capture format 1\n# c\nop=fwd dtype=bf16 head_dim=64 batch=1 heads=1 seqlen_q=1 seqlen_k=1 "
          "calls=0 served=tuned\n", ":3: field 'calls': '0' is not a positive integer" },
        { "flashtune capture format 1\nop=fwd dtype=bf16 head_dim=64 batch=1 heads=1 seqlen_q=1 seqlen_k=1 "
          "calls=-2 served=tuned\n", "'-2' is not a positive integer" },
        { "flashtune capture format 1\nop=fwd dtype=bf16 head_dim=64 batch=1 heads=1 seqlen_q=1 seqlen_k=1 "
          "calls=2 served=fast\n", "field 'served': 'fast' is not tuned, nearest or default" },
        { "flashtune capture format 1\nop=fwd dtype=bf16 head_dim=64 batch=1 heads=1 seqlen_q=1 seqlen_k=1 "
          "calls=2 served=tuned colour=red\n", "unknown field 'colour'" },
        { "flashtune capture format 1\nop=fwd dtype=bf16 batch=1 heads=1 seqlen_q=1 seqlen_k=1 calls=2 "
          "served=tuned\n", "missing field 'head_dim'" },
        { "flashtune capture format 1\nop=fwd dtype=bf16 head_dim=64 batch=1 heads=1 seqlen_q=1 seqlen_k=1 "
          "calls=2 served=tuned deterministic=2\n", "deterministic" },
    };
    const db_capture_row add[] = { row(DB_OP_FWD, 512, 0, 1, DB_SERVED_TUNED) };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(f->path, cases[i].text);
        char err[512] = "";
        if (db_capture_merge(f->path, add, 1, err, sizeof err) != -1 || !strstr(err, cases[i].why) ||
            !strstr(err, f->path))
            fail_msg("case %zu: expected an error with '%s', got '%s'", i, cases[i].why, err);
        assert_string_equal(slurp(f->path), cases[i].text);
    }
    /* Not a text file, and a folder in the file's place. */
    write_text(f->path, "flashtune capture format 1\n");
    FILE *out = fopen(f->path, "ab");
    fputc('\0', out);
    fclose(out);
    char err[512] = "";
    assert_int_equal(db_capture_merge(f->path, add, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a text file"));
    unlink(f->path);
    mkdir(f->path, 0755);
    assert_int_equal(db_capture_merge(f->path, add, 1, err, sizeof err), -1);
    rmdir(f->path);
    assert_int_equal(db_capture_merge(NULL, add, 1, err, sizeof err), -1);
    assert_int_equal(db_capture_merge("", add, 1, err, sizeof err), -1);
    assert_int_equal(db_capture_merge(f->path, NULL, 1, err, sizeof err), -1);
}

/* Processes merging into one file at once: every call is there (the lock serializes them). */
static void processes_share_a_file(void **state)
{
    fixture *f = *state;
    enum { CHILDREN = 6, MERGES = 40 };
    for (int c = 0; c < CHILDREN; c++) {
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            const db_capture_row add[] = { row(DB_OP_FWD, 2048, 0, 1, DB_SERVED_TUNED),
                                           row(DB_OP_BWD, 256 * (c + 1), 1, 2, DB_SERVED_DEFAULT) };
            for (int m = 0; m < MERGES; m++)
                if (db_capture_merge(f->path, add, 2, NULL, 0) != 0)
                    _exit(1);
            _exit(0);
        }
    }
    for (int c = 0; c < CHILDREN; c++) {
        int status;
        assert_true(wait(&status) > 0);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    db_capture_row *rows;
    int n;
    char err[512];
    if (db_capture_read(f->path, &rows, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(n, 1 + CHILDREN);
    unsigned long long fwd = 0, bwd = 0;
    for (int i = 0; i < n; i++)
        *(rows[i].workload.op == DB_OP_FWD ? &fwd : &bwd) += rows[i].calls;
    assert_int_equal(fwd, CHILDREN * MERGES);
    assert_int_equal(bwd, 2 * CHILDREN * MERGES);
    free(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(merged_counts_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_files_are_refused_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(processes_share_a_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
