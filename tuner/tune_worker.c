/* The benchmark worker process and its pipe protocol (tune_worker.h): the GPU probe, forking
 * a worker child that owns the CUDA context, its lines to the parent, the watchdog's deadline
 * on reading them, and ending it. What the child measures is tune_measure.c's. */
#include "tune_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cuda_driver_internal.h"
#include "tune_measure.h"

/* Writes all of s to fd; the child dies (SIGPIPE, or here) when the parent is gone. */
static void put(int fd, const char *s)
{
    if (tune_pipe_write(fd, s, strlen(s), 0) != 0)
        _exit(5);
}

/* Signals and parent-death handling common to every child. */
static void child_init(pid_t parent)
{
    signal(SIGINT, SIG_IGN);    /* Ctrl-C reaches the whole group: the parent decides */
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
        _exit(6);
}

/* Forks a child joined to the caller by a pipe, and with cmd by a second one the other way.
 * Parent: returns the pid, *fd the read end (*cmd the write end). Child: returns 0 after
 * child_init, *fd the write end (*cmd the read end); the child must _exit. -1 (why) when a pipe
 * or the fork failed. */
static pid_t fork_child(int *fd, int *cmd, char *why, size_t len)
{
    int fds[2], cmds[2] = { -1, -1 };
    if (pipe(fds) != 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        return -1;
    }
    if (cmd && pipe(cmds) != 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, len, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        if (cmd)
            close(cmds[0]), close(cmds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        if (cmd)
            close(cmds[1]), *cmd = cmds[0];
        child_init(parent);
        *fd = fds[1];
        return 0;
    }
    close(fds[1]);
    if (cmd)
        close(cmds[0]), *cmd = cmds[1];
    *fd = fds[0];
    return pid;
}

int tune_device_check(int ordinal, int count, char *why, size_t len)
{
    if (count < 1) {
        snprintf(why, len, "no GPU here (the CUDA driver reports %d devices)", count);
        return -1;
    }
    if (ordinal >= 0 && ordinal < count)
        return 0;
    if (count == 1)
        snprintf(why, len, "this machine has 1 GPU (0)");
    else
        snprintf(why, len, "this machine has %d GPUs (0..%d)", count, count - 1);
    return -1;
}

static void probe_child(int fd, int ordinal)
{
    char why[512], line[768];
    const cu_driver *cu;
    if (cu_driver_open(&cu, why, sizeof why) != 0) {
        snprintf(line, sizeof line, "N no GPU here: %s\n", why);
        put(fd, line);
        _exit(0);
    }
    CUdevice d;
    int count = 0;
    CUresult rc = cu->DeviceGetCount(&count);
    char buf[256];
    if (rc != CUDA_SUCCESS) {
        snprintf(line, sizeof line, "N no GPU here: cuDeviceGetCount: %s\n", cu_result_str(rc, buf, sizeof buf));
        put(fd, line);
        _exit(0);
    }
    if (tune_device_check(ordinal, count, why, sizeof why) != 0) {
        snprintf(line, sizeof line, "N %s\n", why);
        put(fd, line);
        _exit(0);
    }
    if ((rc = cu->DeviceGet(&d, ordinal)) != CUDA_SUCCESS) {
        snprintf(line, sizeof line, "N cuDeviceGet(%d): %s\n", ordinal, cu_result_str(rc, buf, sizeof buf));
        put(fd, line);
        _exit(0);
    }
    char name[128] = "";
    int major = 0, minor = 0, sms = 0, smem = 0, l2 = 0, version = 0;
    if (cu->DeviceGetName(name, sizeof name, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d) != CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d) != CUDA_SUCCESS ||
        cu->DriverGetVersion(&version) != CUDA_SUCCESS) {
        snprintf(line, sizeof line, "N cuDeviceGetName/cuDeviceGetAttribute/cuDriverGetVersion failed on device %d\n",
                 ordinal);
        put(fd, line);
        _exit(0);
    }
    snprintf(line, sizeof line, "D %d %d %d %d %d %d.%d %s\n", major, minor, sms, smem, l2, version / 1000,
             (version % 1000) / 10, name);
    put(fd, line);
    _exit(0);
}

int tune_worker_probe(int ordinal, tune_gpu_info *out, double timeout_s, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    out->ordinal = ordinal;
    int fd;
    pid_t pid = fork_child(&fd, NULL, why, len);
    if (pid < 0)
        return -1;
    if (pid == 0)
        probe_child(fd, ordinal);
    tune_worker_proc w = { .pid = pid, .fd = fd, .cmd_fd = -1 };
    char line[768], how[128];
    int got = tune_worker_read_line(&w, tune_now() + timeout_s, line, sizeof line);
    tune_worker_stop(&w, how, sizeof how);
    if (got != 1) {
        snprintf(why, len, "the GPU probe %s (%s)", got == -1 ? "timed out" : got == -2 ? "was interrupted" : "died", how);
        return -1;
    }
    if (line[0] == 'N') {
        snprintf(why, len, "%s", line + 2);
        return 0;
    }
    tune_device *dev = &out->dev;
    int used = 0;
    if (sscanf(line, "D %d %d %d %d %d %15s %n", &dev->cc_major, &dev->cc_minor, &dev->sm_count,
               &dev->smem_per_block_optin, &out->l2_bytes, out->driver_version, &used) != 6 || !used) {
        snprintf(why, len, "the GPU probe answered '%.200s'", line);
        return -1;
    }
    snprintf(dev->name, sizeof dev->name, "%s", line + used);
    snprintf(dev->arch, sizeof dev->arch, "sm_%d%d", dev->cc_major, dev->cc_minor);
    dev->real = 1;
    return 1;
}

/* ---- the command pipe: batches of candidates for a running worker ---------------------------- */

#define BATCH_MAGIC 0x46545742u   /* "FTWB" */

/* A batch: this header, then per candidate an item_head and its CUBIN's bytes. Parent and child
 * are one program (a fork, no exec), so the structs travel as they are in memory. */
typedef struct batch_head {
    unsigned magic;
    int count;
    tune_bench bench;
} batch_head;

typedef struct item_head {
    int id;
    gen_config config;
    unsigned long long cubin_size;
} item_head;

/* A worker reads a batch as soon as it is sent (it is idle then): one that does not within this
 * long is hung, not slow. */
#define SEND_TIMEOUT_S 30.0

int tune_worker_send(tune_worker_proc *w, const tune_worker_task *task, char *why, size_t len)
{
    if (w->cmd_fd < 0) {
        snprintf(why, len, "the worker's command pipe is closed");
        return -1;
    }
    const double deadline = tune_now() + SEND_TIMEOUT_S;
    const batch_head h = { BATCH_MAGIC, task->count, task->bench };
    int rc = tune_pipe_write(w->cmd_fd, &h, sizeof h, deadline);
    for (int i = 0; i < task->count && rc == 0; i++) {
        item_head ih;
        memset(&ih, 0, sizeof ih);
        ih.id = task->items[i].id;
        ih.config = *task->items[i].config;
        ih.cubin_size = task->items[i].cubin_size;
        rc = tune_pipe_write(w->cmd_fd, &ih, sizeof ih, deadline);
        if (rc == 0)
            rc = tune_pipe_write(w->cmd_fd, task->items[i].cubin, task->items[i].cubin_size, deadline);
    }
    if (rc != 0)
        snprintf(why, len, "handing the worker %d candidates: %s", task->count, strerror(errno));
    return rc;
}

void tune_worker_batch_free(tune_worker_batch *b)
{
    for (int i = 0; b->items && i < b->count; i++)
        free((void *)b->items[i].cubin);
    free(b->items);
    free(b->configs);
    memset(b, 0, sizeof *b);
}

int tune_worker_read_batch(int fd, tune_worker_batch *b)
{
    memset(b, 0, sizeof *b);
    batch_head h;
    const int got = tune_pipe_read(fd, &h, sizeof h, 0);
    if (got <= 0)
        return got;
    if (h.magic != BATCH_MAGIC || h.count < 1 || h.count > 1 << 20)
        return -1;
    b->bench = h.bench;
    b->items = calloc((size_t)h.count, sizeof *b->items);
    b->configs = calloc((size_t)h.count, sizeof *b->configs);
    if (!b->items || !b->configs) {
        tune_worker_batch_free(b);
        return -1;
    }
    for (int i = 0; i < h.count; i++) {
        item_head ih;
        void *cubin = NULL;
        if (tune_pipe_read(fd, &ih, sizeof ih, 0) != 1 || ih.cubin_size == 0 || ih.cubin_size > (1ull << 30) ||
            !(cubin = malloc((size_t)ih.cubin_size)) || tune_pipe_read(fd, cubin, (size_t)ih.cubin_size, 0) != 1) {
            free(cubin);
            tune_worker_batch_free(b);
            return -1;
        }
        b->configs[i] = ih.config;
        b->items[i] = (tune_worker_item){ &b->configs[i], cubin, (size_t)ih.cubin_size, ih.id };
        b->count = i + 1;
    }
    return 1;
}

/* ---- the worker ----------------------------------------------------------------------------- */

/* Runs t->items[first..count) in order, each "B i" then its result line. 0, or -1 after a CUDA
 * error (the context may be dead: a fresh worker goes on). */
static int run_items(tune_measure *m, const tune_worker_task *t, int first, int fd)
{
    char line[1024];
    for (int i = first; i < t->count; i++) {
        snprintf(line, sizeof line, "B %d\n", t->items[i].id);
        put(fd, line);
        tune_record r;
        tune_record_init(&r, t->items[i].id);
        int rc = tune_measure_run(m, t, &t->items[i], &r);
        tune_record_format(&r, line, sizeof line);
        put(fd, line);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static void worker_child(const tune_worker_task *t, int first, int fd, int cmd)
{
    tune_measure *m;
    char why[1024], line[1024];
    if (tune_measure_open(t, &m, why, sizeof why) != 0) {
        snprintf(line, sizeof line, "E %.1000s\n", why);
        for (char *c = line + 2; *c && c[1]; c++)
            if (*c == '\n')
                *c = ' ';
        put(fd, line);
        _exit(3);
    }
    tune_ready_format(tune_measure_setup_times(m), line, sizeof line);
    put(fd, line);
    const char *no_clocks = tune_measure_no_clocks(m);
    if (no_clocks) {
        snprintf(line, sizeof line, "C %.1000s\n", no_clocks);
        put(fd, line);
    }
    if (run_items(m, t, first, fd) != 0)
        _exit(4);
    /* Then whatever the parent hands over, on the same context, inputs and reference. */
    for (;;) {
        tune_worker_batch b;
        const int got = tune_worker_read_batch(cmd, &b);
        if (got == 0)
            break;   /* the parent closed the pipe: done */
        if (got < 0)
            _exit(7);
        tune_worker_task more = *t;
        more.bench = b.bench;
        more.items = b.items;
        more.count = b.count;
        const int rc = run_items(m, &more, 0, fd);
        tune_worker_batch_free(&b);
        if (rc != 0)
            _exit(4);
    }
    tune_measure_close(m);
    _exit(0);
}

int tune_worker_start(const tune_worker_task *task, int first, tune_worker_proc *w, char *why, size_t len)
{
    memset(w, 0, sizeof *w);
    w->pid = -1;
    w->fd = -1;
    w->cmd_fd = -1;
    int fd, cmd;
    pid_t pid = fork_child(&fd, &cmd, why, len);
    if (pid < 0)
        return -1;
    if (pid == 0)
        worker_child(task, first, fd, cmd);
    w->pid = pid;
    w->fd = fd;
    w->cmd_fd = cmd;
    fcntl(cmd, F_SETFL, fcntl(cmd, F_GETFL) | O_NONBLOCK);   /* tune_worker_send's deadline */
    return 0;
}

int tune_worker_read_line(tune_worker_proc *w, double deadline, char *line, size_t len)
{
    for (;;) {
        char *nl = memchr(w->buf, '\n', w->used);
        if (nl || w->used == sizeof w->buf) {
            size_t n = nl ? (size_t)(nl - w->buf) : w->used;
            size_t keep = n < len ? n : len - 1;
            memcpy(line, w->buf, keep);
            line[keep] = '\0';
            size_t eat = nl ? n + 1 : n;
            memmove(w->buf, w->buf + eat, w->used - eat);
            w->used -= eat;
            return 1;
        }
        if (w->fd < 0)
            return 0;
        double left = deadline - tune_now();
        if (left <= 0)
            return -1;
        struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
        int ms = left > 3600 ? 3600000 : (int)(left * 1e3) + 1;
        int got = poll(&pfd, 1, ms);
        if (got < 0) {
            if (errno == EINTR)
                return -2;
            return 0;
        }
        if (got == 0)
            continue;
        ssize_t k = read(w->fd, w->buf + w->used, sizeof w->buf - w->used);
        if (k < 0 && errno == EINTR)
            return -2;
        if (k <= 0) {
            close(w->fd);
            w->fd = -1;
            w->eof = 1;
            if (w->used) {   /* a last line without its newline */
                size_t keep = w->used < len ? w->used : len - 1;
                memcpy(line, w->buf, keep);
                line[keep] = '\0';
                w->used = 0;
                return 1;
            }
            return 0;
        }
        w->used += (size_t)k;
    }
}

void tune_worker_stop(tune_worker_proc *w, char *how, size_t len)
{
    if (how && len)
        snprintf(how, len, "already reaped");
    if (w->cmd_fd >= 0) {
        close(w->cmd_fd);
        w->cmd_fd = -1;
    }
    if (w->fd >= 0) {
        close(w->fd);
        w->fd = -1;
    }
    if (w->pid <= 0)
        return;
    int status = 0;
    pid_t got = waitpid(w->pid, &status, WNOHANG);
    /* After end of file the child is exiting: give it a moment so its real status is seen. */
    for (int i = 0; got == 0 && w->eof && i < 200; i++) {
        struct timespec nap = { 0, 10 * 1000 * 1000 };
        nanosleep(&nap, NULL);
        got = waitpid(w->pid, &status, WNOHANG);
    }
    if (got == 0) {
        /* Still running (hung or we are leaving): it cannot be trusted to stop by itself. */
        kill(w->pid, SIGKILL);
        while ((got = waitpid(w->pid, &status, 0)) < 0 && errno == EINTR)
            ;
    }
    w->pid = -1;
    if (!how || !len)
        return;
    if (got < 0)
        snprintf(how, len, "waitpid: %s", strerror(errno));
    else if (WIFEXITED(status))
        snprintf(how, len, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(how, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(how, len, "wait status 0x%x", status);
}
