/* Whole messages through the pipes between the tuner and its child processes (the space loader,
 * the compile child, the benchmark worker), and the monotonic clock their deadlines use. */
#ifndef FT_TUNE_PIPE_H
#define FT_TUNE_PIPE_H

#include <stddef.h>

/* Monotonic seconds (CLOCK_MONOTONIC). */
double tune_now(void);

/* Writes all n bytes of buf to fd. deadline_s > 0: fd may be non-blocking, and a full pipe is
 * waited on until that tune_now second. 0, or -1 (errno) when the pipe failed (EPIPE: the reader
 * is gone; the caller ignores SIGPIPE), the deadline passed (ETIMEDOUT) or a signal came while
 * waiting (EINTR). A write a signal interrupts is retried. */
int tune_pipe_write(int fd, const void *buf, size_t n, double deadline_s);

/* Reads exactly n bytes into buf; a read or wait a signal interrupts is retried. deadline_s > 0:
 * they must come before that tune_now second. 1 when they all came, 0 at end of file before the
 * first, -1 at end of file after some, on an error, or when the deadline passed (errno
 * ETIMEDOUT). */
int tune_pipe_read(int fd, void *buf, size_t n, double deadline_s);

#endif
