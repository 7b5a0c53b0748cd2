/* When a run stops early: Ctrl-C (SIGINT), SIGTERM or the end of its --budget (an alarm) set
 * tune_sweep_interrupted, which the sweep and the compile pool poll; what was done is kept. And
 * SIGPIPE is ignored meanwhile, so a worker gone is an error to handle, not the sweep's end. */
#include <string.h>
#include <unistd.h>

#include "tune_sweep.h"

volatile sig_atomic_t tune_sweep_interrupted;
static volatile sig_atomic_t budget_spent;

static void on_signal(int sig)
{
    if (sig == SIGALRM)
        budget_spent = 1;
    tune_sweep_interrupted = 1;
}

void tune_stop_arm(tune_stop *s, long budget_s)
{
    tune_sweep_interrupted = 0;
    budget_spent = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;   /* no SA_RESTART: poll() returns so the watchdog sees it */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
    /* The budget: an alarm that stops the run as Ctrl-C does (the sweep's workers are processes
     * of their own: a fork does not inherit it). */
    sigaction(SIGALRM, &sa, &s->old_alrm);
    /* A worker that died leaves its command pipe without a reader: writing to it must fail
     * with EPIPE (tune_worker_send), not end this process. */
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &s->old_pipe);
    if (budget_s > 0)
        alarm((unsigned)budget_s);
}

int tune_stop_budget_spent(void)
{
    return budget_spent;
}

void tune_stop_disarm(tune_stop *s)
{
    alarm(0);
    sigaction(SIGINT, &s->old_int, NULL);
    sigaction(SIGTERM, &s->old_term, NULL);
    sigaction(SIGALRM, &s->old_alrm, NULL);
    sigaction(SIGPIPE, &s->old_pipe, NULL);
}
