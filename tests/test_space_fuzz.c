/* Fuzzing the space loader: the shipped and good test spaces, mutated (bytes deleted, duplicated,
 * swapped, replaced; numbers made hostile; Lua fragments inserted, the known hangs among them),
 * must load or be refused with a message naming the file, within a bounded time, and never crash
 * the process that loads them. Deterministic: the same seed gives the same cases on every machine.
 * FT_FUZZ_CASES and FT_FUZZ_SEED run more or other cases locally. No GPU needed. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "source_path.h"
#include "tune_space.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define CASES 300
#define SEED 14
#define TIMEOUT_S 1.0           /* per load; only C-side hangs (patterns) reach it */
#define SLACK_S 4.0             /* a load may take this much over TIMEOUT_S on a slow machine */
#define TEXT_MAX (256 * 1024)

/* Snippets a careless or hostile author might write: the hangs of issue 14, errors of every
 * kind, limits, and values the loader must refuse. */
static const char *const fragments[] = {
    "while true do end",
    "while true do pcall(function() while true do end end) end",
    "local t = {} while true do pcall(function() t[#t + 1] = string.rep('x', 1 << 20) end) end",
    "local s = string.rep('a', 3000); s:find('.-.-.-.-b')",
    "setmetatable({}, {__gc = function() while true do end end})",
    "setmetatable({}, {__gc = true})",
    "local mt = {} setmetatable({}, mt) mt.__gc = function() while true do end end",
    "xpcall(function() while true do end end, function() while true do end end)",
    "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
    "coroutine.wrap(function() while true do end end)()",
    "local function f() return f() end f()",
    "local function f() f() end f()",
    "for i = 1, math.huge do end",
    "string.rep('x', 1 << 30)",
    "pcall(string.rep, 'x', 1 << 30)",
    "local s = ('x'):rep(1 << 20):gsub('.', '%0%0')",
    "collectgarbage('stop')",
    "collectgarbage()",
    "error('boom')",
    "error({})",
    "error()",
    "error(setmetatable({}, {__tostring = function() while true do end end}))",
    "skip('outside')",
    "return nil",
    "return 1",
    "return {{}}",
    "return {1, 2, 3}",
    "local a = {} a[1] = a return a",
    "return setmetatable({}, {__index = function() while true do end end})",
    "setmetatable(_G, {__index = function() while true do end end})",
    "getmetatable('').__index = function() while true do end end",
    "table.sort({3, 2, 1, 5, 4, 9, 8, 7, 6}, function() return true end)",
    "space{}",
    "space{template = 'fwd_mma'}",
    "space{template = 'fwd_mma', params = {BLOCK_M = range(1, 1 << 40)}}",
    "grid{seqlen = pow2(1, 1 << 40)}",
    "range(1, 1 << 40)",
    "pow2(1, 1 << 62)",
    "smem_bytes({})",
    "smem_bytes({template = 'fwd_mma', BLOCK_M = -1})",
    "device = nil",
    "string = nil",
    "math.randomseed(os and os.time() or 0)",
    "print = nil",
    "utf8.char(0x7FFFFFFF)",
    "string.format('%099999d', 1)",
};

/* Numbers to replace one in the file with. */
static const char *const numbers[] = {
    "0", "-1", "1", "3", "7", "2147483647", "2147483648", "-2147483648", "9223372036854775807", "1e308",
    "-1e308", "0/0", "1/0", "0.5", "65536", "1 << 40", "math.huge", "nil", "'64'", "{}",
};

/* Bytes to write over one in the file. */
static const char punct[] = "{}()[]=,.;:\"'-\n \\#~<>+*/%^&|0123456789abcxyz_";

/* splitmix64. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t below(uint64_t *rng, size_t n)
{
    return n ? (size_t)(next_random(rng) % n) : 0;
}

typedef struct text {
    char *s;
    size_t len;
} text;

/* Replaces len bytes at at with the n bytes of with (within TEXT_MAX). */
static void splice(text *t, size_t at, size_t len, const char *with, size_t n)
{
    if (at > t->len)
        at = t->len;
    if (len > t->len - at)
        len = t->len - at;
    if (t->len - len + n >= TEXT_MAX)
        return;
    char *tmp = malloc(n + 1);
    assert_non_null(tmp);
    memcpy(tmp, with, n);   /* with may point into t */
    memmove(t->s + at + n, t->s + at + len, t->len - at - len);
    memcpy(t->s + at, tmp, n);
    free(tmp);
    t->len = t->len - len + n;
    t->s[t->len] = '\0';
}

/* Start of a random line of t. */
static size_t line_start(uint64_t *rng, const text *t)
{
    size_t at = below(rng, t->len + 1);
    while (at > 0 && t->s[at - 1] != '\n')
        at--;
    return at;
}

static void mutate(uint64_t *rng, text *t)
{
    const size_t span = 1 + below(rng, 24);
    const size_t at = below(rng, t->len + 1);
    switch (below(rng, 7)) {
    case 0:   /* delete */
        splice(t, at, span, "", 0);
        break;
    case 1:   /* duplicate */
        if (at + span <= t->len)
            splice(t, at, 0, t->s + at, span);
        break;
    case 2: { /* swap two ranges */
        const size_t other = below(rng, t->len + 1);
        const size_t a = at < other ? at : other, b = at < other ? other : at;
        if (b + span <= t->len && a + span <= b) {
            char tmp[32];
            memcpy(tmp, t->s + a, span);
            memcpy(t->s + a, t->s + b, span);
            memcpy(t->s + b, tmp, span);
        }
        break;
    }
    case 3: { /* overwrite a byte */
        const char c = punct[below(rng, sizeof punct - 1)];
        splice(t, at, 1, &c, 1);
        break;
    }
    case 4: { /* replace a number */
        size_t p = at;
        while (p < t->len && !(t->s[p] >= '0' && t->s[p] <= '9'))
            p++;
        size_t end = p;
        while (end < t->len && t->s[end] >= '0' && t->s[end] <= '9')
            end++;
        const char *n = numbers[below(rng, ARRAY_LEN(numbers))];
        splice(t, p, end - p, n, strlen(n));
        break;
    }
    default: { /* insert a fragment at the start of a line (where a statement may stand) */
        char line[512];
        const int n = snprintf(line, sizeof line, "%s\n", fragments[below(rng, ARRAY_LEN(fragments))]);
        splice(t, line_start(rng, t), 0, line, (size_t)n);
        break;
    }
    }
}

/* ---- seeds ------------------------------------------------------------------------------- */

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    char *buf = malloc(TEXT_MAX + 1);
    assert_non_null(buf);
    *len = fread(buf, 1, TEXT_MAX, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

typedef struct seeds {
    char *text[64];
    size_t len[64];
    char name[64][160];
    int count;
} seeds;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shipped spaces and tests/spaces/good_*.lua, in name order (the same cases everywhere). */
static void load_seeds(seeds *s)
{
    static const char *const shipped[] = { "tuner/spaces/default.lua", "tuner/spaces/quick.lua",
                                           "tuner/spaces/derived.lua" };
    char path[1024];
    for (int i = 0; i < ARRAY_LEN(shipped); i++) {
        test_source_path(path, sizeof path, shipped[i]);
        s->text[s->count] = read_text(path, &s->len[s->count]);
        snprintf(s->name[s->count++], sizeof s->name[0], "%s", shipped[i]);
    }
    test_source_path(path, sizeof path, "tests/spaces");
    DIR *d = opendir(path);
    assert_non_null(d);
    char *names[64];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < ARRAY_LEN(names);) {
        const size_t l = strlen(e->d_name);
        if (!strncmp(e->d_name, "good_", 5) && l > 4 && !strcmp(e->d_name + l - 4, ".lua"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n && s->count < ARRAY_LEN(s->text); i++) {
        char rel[160];
        snprintf(rel, sizeof rel, "tests/spaces/%.120s", names[i]);
        test_source_path(path, sizeof path, rel);
        s->text[s->count] = read_text(path, &s->len[s->count]);
        snprintf(s->name[s->count++], sizeof s->name[0], "%s", rel);
        free(names[i]);
    }
    assert_true(s->count >= 8);
}

/* ---- the test ---------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    char *end;
    const long n = v ? strtol(v, &end, 10) : 0;
    return v && *v && !*end && n > 0 ? n : fallback;
}

static void mutated_spaces_load_or_fail_plainly(void **state)
{
    (void)state;
    seeds *s = calloc(1, sizeof *s);
    assert_non_null(s);
    load_seeds(s);
    char dir[] = "/tmp/ft_space_fuzz_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const long cases = env_long("FT_FUZZ_CASES", CASES);
    uint64_t rng = (uint64_t)env_long("FT_FUZZ_SEED", SEED);
    const tune_space_limits lim = { .instructions = 2000000, .memory = (size_t)32 << 20, .timeout_s = TIMEOUT_S };
    text t = { malloc(TEXT_MAX + 1), 0 };
    assert_non_null(t.s);
    int loaded = 0, refused = 0, timed_out = 0;
    double slowest = 0;
    const double start = now_s();
    for (long c = 0; c < cases; c++) {
        const int from = (int)below(&rng, (size_t)s->count);
        memcpy(t.s, s->text[from], s->len[from] + 1);
        t.len = s->len[from];
        const int mutations = 1 + (int)below(&rng, 3);
        for (int m = 0; m < mutations; m++)
            mutate(&rng, &t);

        char name[64], path[256], err[4096] = "";
        snprintf(name, sizeof name, "case_%04ld.lua", c);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(t.s, 1, t.len, f), t.len);
        assert_int_equal(fclose(f), 0);

        tune_space_set sentinel, *set = &sentinel;
        const double t0 = now_s();
        const int rc = tune_space_load_limited(path, NULL, &lim, &set, err, sizeof err);
        const double took = now_s() - t0;
        slowest = took > slowest ? took : slowest;
        const char *why = NULL;
        if (rc == 0 && !set)
            why = "returned 0 without a set";
        else if (rc != 0 && (rc != -1 || set))
            why = "failed without clearing the set";
        else if (rc != 0 && !strstr(err, name))
            why = "refused without naming the file";
        else if (rc != 0 && strstr(err, "the process loading the space file"))   /* crashed, killed, no result */
            why = "the loading process died";
        else if (took > TIMEOUT_S + SLACK_S)
            why = "too slow";
        if (why)
            fail_msg("case %ld (seed %s, %d mutations): %s in %.2f s: %s\n  kept as %s", c, s->name[from], mutations,
                     why, took, err, path);
        if (rc == 0)
            loaded++, tune_space_set_free(set);
        else
            refused++, timed_out += strstr(err, "did not finish within") != NULL;
        unlink(path);
    }
    print_message("%ld cases in %.1f s: %d loaded, %d refused (%d at the wall clock); slowest %.2f s\n", cases,
                  now_s() - start, loaded, refused, timed_out, slowest);
    assert_true(loaded > 0 && refused > 0);   /* the mutations neither break nothing nor everything */
    rmdir(dir);
    free(t.s);
    for (int i = 0; i < s->count; i++)
        free(s->text[i]);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mutated_spaces_load_or_fail_plainly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
