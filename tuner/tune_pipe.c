/* Whole messages through the tuner's pipes (tune_pipe.h). */
#include "tune_pipe.h"

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

double tune_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int tune_pipe_write(int fd, const void *buf, size_t n, double deadline_s)
{
    const char *p = buf;
    while (n) {
        const ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && deadline_s > 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            const double left = deadline_s - tune_now();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            if (poll(&pfd, 1, (int)(left * 1e3) + 1) < 0)
                return -1;
            continue;
        }
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int tune_pipe_read(int fd, void *buf, size_t n, double deadline_s)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        if (deadline_s > 0) {   /* wait for bytes, at most a minute at a time, until the deadline */
            const double left = deadline_s - tune_now();
            if (left <= 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            struct pollfd pfd = { .fd = fd, .events = POLLIN };
            const int ready = poll(&pfd, 1, left < 60 ? (int)(left * 1e3) + 1 : 60000);
            if (ready < 0 && errno != EINTR)
                return -1;
            if (ready <= 0)
                continue;
        }
        const ssize_t k = read(fd, p + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return got == 0 && k == 0 ? 0 : -1;
        got += (size_t)k;
    }
    return 1;
}
