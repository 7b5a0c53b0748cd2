/* The wall-clock bound of a space load, and the loader's public entry. Work inside C (a string
 * pattern that backtracks, a huge gsub) escapes Lua's instruction hook, and nothing can stop it
 * safely inside this process; so the whole load runs in a child process: it sends the set (plain
 * structs and arrays) back through a pipe, or is killed at the deadline. A shared page tells the
 * parent the last line the child's hooks saw, for the message. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS (Linux and the BSDs have it; POSIX only since 2024) */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tune_pipe.h"
#include "tune_space_load_internal.h"

#define ENV_TIMEOUT "FLASHTUNE_SPACE_TIMEOUT"
#define TIMEOUT_S 10.0                  /* seconds; spaces load in milliseconds */
#define TIMEOUT_MAX_S 86400.0
#define INSTRUCTIONS 500000000L         /* seconds of Lua, never a real space */
#define MEMORY ((size_t)256 << 20)      /* bytes; a space is a few kilobytes of tables */
#define ITEMS_MAX (1L << 28)            /* counts a child may send: far above any space */

int tune_space_limits_default(tune_space_limits *lim, char *err, size_t len)
{
    lim->instructions = INSTRUCTIONS;
    lim->memory = MEMORY;
    lim->timeout_s = TIMEOUT_S;
    const char *env = getenv(ENV_TIMEOUT);
    if (!env)
        return 0;
    char *end = NULL;
    errno = 0;
    const double v = strtod(env, &end);
    if (!*env || *end || errno || !(v >= 0 && v <= TIMEOUT_MAX_S)) {
        snprintf(err, len, "%s='%s' is not a number of seconds from 0 to %.0f (0: no wall-clock bound)",
                 ENV_TIMEOUT, env, TIMEOUT_MAX_S);
        return -1;
    }
    lim->timeout_s = v;
    return 0;
}

/* ---- the child's side: the result down the pipe ----------------------------------------- */

/* The status, then the message or the set: its struct, then each space followed by each of its
 * workloads and their configurations. Pointers go as they are and the parent replaces them
 * (family pointers stay valid: the child is a fork of the same program). */
static int send_result(int fd, int rc, const tune_space_set *set, const char *err)
{
    const int32_t status = rc;
    if (tune_pipe_write(fd, &status, sizeof status, 0))
        return -1;
    if (rc) {
        const uint32_t n = (uint32_t)strlen(err);
        return tune_pipe_write(fd, &n, sizeof n, 0) || tune_pipe_write(fd, err, n, 0) ? -1 : 0;
    }
    if (tune_pipe_write(fd, set, sizeof *set, 0))
        return -1;
    for (int i = 0; i < set->space_count; i++) {
        const tune_space *s = &set->spaces[i];
        if (tune_pipe_write(fd, s, sizeof *s, 0))
            return -1;
        for (int j = 0; j < s->workload_count; j++) {
            const tune_candidates *c = &s->workloads[j];
            if (tune_pipe_write(fd, c, sizeof *c, 0) || tune_pipe_write(fd, c->configs, (size_t)c->count * sizeof *c->configs, 0))
                return -1;
        }
    }
    return 0;
}

/* Runs in the child: signals back to their defaults (a test harness's crash handler must not run
 * in the child), an alarm in case the parent is gone, the load, the result; never returns. */
_Noreturn static void child(int fd, const char *path, const tune_device *dev, const tune_space_limits *lim,
                            const tune_captured *captured, tune_seen *seen)
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGALRM, SIGPIPE };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    alarm((unsigned)ceil(lim->timeout_s < TIMEOUT_MAX_S ? lim->timeout_s : TIMEOUT_MAX_S) + 5);
    char err[4096];
    tune_space_set *set = NULL;
    const int rc = tune_space_load_here(path, dev, lim, captured, seen, &set, err, sizeof err);
    const int sent = send_result(fd, rc, set, err);
    _exit(sent ? 1 : 0);   /* no atexit handlers, no stdio flush of the parent's buffers */
}

/* ---- the parent's side --------------------------------------------------------------------- */

typedef struct reader {
    int fd;
    double deadline;            /* tune_now() */
    int timed_out;              /* 1: read_all failed for the deadline (else the pipe ended) */
} reader;

/* Reads exactly n bytes before the deadline; -1 when time ran out or the pipe ended. */
static int read_all(reader *r, void *buf, size_t n)
{
    if (tune_pipe_read(r->fd, buf, n, r->deadline) == 1)
        return 0;
    r->timed_out = errno == ETIMEDOUT;
    return -1;
}

/* Reads one space of send_result's stream into s (zeroed); counts are moved in as each part
 * arrives, so the set's destructor frees a partial one. */
static int receive_space(reader *r, tune_space *s)
{
    if (read_all(r, s, sizeof *s))
        return -1;
    const int workloads = s->workload_count;
    s->workload_count = 0;
    s->workloads = NULL;
    if (workloads < 0 || workloads > ITEMS_MAX || !(s->workloads = calloc((size_t)workloads + 1, sizeof *s->workloads)))
        return -1;
    for (int j = 0; j < workloads; j++) {
        tune_candidates *c = &s->workloads[j];
        if (read_all(r, c, sizeof *c))
            return -1;
        const int count = c->count;
        c->configs = NULL;
        c->count = 0;
        s->workload_count++;
        if (count < 0 || count > ITEMS_MAX || !(c->configs = malloc(((size_t)count + 1) * sizeof *c->configs)) ||
            read_all(r, c->configs, (size_t)count * sizeof *c->configs))
            return -1;
        c->count = count;
    }
    return 0;
}

/* Reads what send_result sent. Returns 0 with *out, 1 with the child's message in err, or -1
 * (r says why when it timed out). */
static int receive(reader *r, tune_space_set **out, char *err, size_t len)
{
    int32_t status;
    if (read_all(r, &status, sizeof status))
        return -1;
    if (status) {
        uint32_t n;
        if (read_all(r, &n, sizeof n) || n > 65536)
            return -1;
        char *msg = malloc((size_t)n + 1);
        if (!msg || read_all(r, msg, n)) {
            free(msg);
            return -1;
        }
        msg[n] = '\0';
        snprintf(err, len, "%s", msg);
        free(msg);
        return 1;
    }
    tune_space_set *set = calloc(1, sizeof *set);
    if (!set || read_all(r, set, sizeof *set)) {
        free(set);
        return -1;
    }
    const int spaces = set->space_count;
    set->space_count = 0;
    set->spaces = NULL;
    int ok = spaces >= 0 && spaces <= ITEMS_MAX && (set->spaces = calloc((size_t)spaces + 1, sizeof *set->spaces));
    for (int i = 0; ok && i < spaces; i++) {
        set->space_count++;
        ok = !receive_space(r, &set->spaces[i]);
    }
    if (!ok) {
        tune_space_set_free(set);
        return -1;
    }
    *out = set;
    return 0;
}

/* Forks a child to load the file; waits for its result until the deadline, then kills it. */
static int load_bounded(const char *path, const tune_device *dev, const tune_space_limits *lim,
                        const tune_captured *captured, tune_space_set **out, char *err, size_t len)
{
    tune_seen *seen = mmap(NULL, sizeof *seen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (seen == MAP_FAILED) {
        snprintf(err, len, "%s: cannot map a page to load the space file in a child process (%s)", path,
                 strerror(errno));
        return -1;
    }
    memset(seen, 0, sizeof *seen);
    int fds[2];
    if (pipe(fds)) {
        snprintf(err, len, "%s: cannot make a pipe to load the space file in a child process (%s)", path,
                 strerror(errno));
        munmap(seen, sizeof *seen);
        return -1;
    }
    /* A program another thread starts must not hold the pipe open: a dead child is seen at once. */
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fflush(stdout);   /* else the child's print() would write the parent's buffered output again */
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], path, dev, lim, captured, seen);
    }
    close(fds[1]);
    if (pid < 0) {
        snprintf(err, len, "%s: cannot start a process to load the space file (%s)", path, strerror(errno));
        close(fds[0]);
        munmap(seen, sizeof *seen);
        return -1;
    }
    reader r = { .fd = fds[0], .deadline = tune_now() + lim->timeout_s };
    const int got = receive(&r, out, err, len);
    close(fds[0]);
    int busy = 0;   /* at the deadline: still making progress (hooks, candidates), or stuck in one C call */
    if (got < 0 && r.timed_out) {
        const unsigned long before = seen->progress;
        const struct timespec pause = { 0, 200000000 };
        nanosleep(&pause, NULL);
        busy = seen->progress != before;
    }
    if (got < 0)
        kill(pid, SIGKILL);   /* out of time, or it sent nonsense: it must not linger */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        continue;
    const char *src = seen->src[0] ? seen->src : path;
    if (got >= 0) {
        /* 0: the set; 1: the child's own message is in err. */
    } else if (r.timed_out) {
        char where[TUNE_POS_LEN + 16];
        if (seen->line > 0)
            snprintf(where, sizeof where, "%s:%d", src, seen->line);
        else
            snprintf(where, sizeof where, "%s", src);
        if (busy)   /* a large space's enumeration, or long work in Lua: it may need more time */
            snprintf(err, len, "%s: the space file did not finish within %g s, and was still running there (a "
                     "large enumeration, or long work in Lua); %s sets the seconds", where, lim->timeout_s,
                     ENV_TIMEOUT);
        else
            snprintf(err, len, "%s: the space file did not finish within %g s (a string pattern that backtracks, "
                     "or a loop inside a library function?); %s sets the seconds", where, lim->timeout_s,
                     ENV_TIMEOUT);
    } else if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const int crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
        snprintf(err, len, "%s: the process loading the space file %s (signal %d, %s)%s", src,
                 crash ? "crashed" : "was killed", sig, strsignal(sig), crash ? ": a bug in flashtune" : "");
    } else {
        snprintf(err, len, "%s: the process loading the space file ended without a result (exit status %d)", src,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    munmap(seen, sizeof *seen);
    return got == 0 ? 0 : -1;
}

int tune_space_load_captured(const char *path, const tune_device *dev, const tune_space_limits *lim,
                             const tune_captured *captured, tune_space_set **out, char *err, size_t len)
{
    char spare[8];
    if (!err || !len) {
        err = spare;
        len = sizeof spare;
    }
    err[0] = '\0';
    *out = NULL;
    if (!path) {
        snprintf(err, len, "tune_space_load: no space file given");
        return -1;
    }
    tune_space_limits defaults;
    if (!lim) {
        if (tune_space_limits_default(&defaults, err, len))
            return -1;
        lim = &defaults;
    }
    if (!(lim->timeout_s > 0))
        return tune_space_load_here(path, dev, lim, captured, NULL, out, err, len);
    return load_bounded(path, dev, lim, captured, out, err, len);
}

int tune_space_load_limited(const char *path, const tune_device *dev, const tune_space_limits *lim,
                            tune_space_set **out, char *err, size_t len)
{
    return tune_space_load_captured(path, dev, lim, NULL, out, err, len);
}

int tune_space_load(const char *path, const tune_device *dev, tune_space_set **out, char *err, size_t len)
{
    return tune_space_load_limited(path, dev, NULL, out, err, len);
}
