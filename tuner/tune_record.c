/* The worker's result line ("R id status median min spread tflops rel_error max_abs sm_mhz
 * clock_events message", tune_worker.h): one candidate's record, written by the child and parsed by the parent;
 * and its "READY" line, with the seconds its set-up took. */
#include "tune_worker.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void tune_record_init(tune_record *r, int id)
{
    memset(r, 0, sizeof *r);
    r->id = id;
    r->status = DB_STATUS_OK;
    r->median_ms = r->min_ms = r->spread = r->tflops = r->rel_error = r->max_abs_error = r->sm_mhz = NAN;
    r->clock_events = -1;
}

void tune_record_format(const tune_record *r, char *line, size_t len)
{
    char msg[sizeof r->message];
    snprintf(msg, sizeof msg, "%s", r->message[0] ? r->message : "-");
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    snprintf(line, len, "R %d %s %.9g %.9g %.9g %.9g %.9g %.9g %.9g %lld %s\n", r->id, db_status_name(r->status),
             r->median_ms, r->min_ms, r->spread, r->tflops, r->rel_error, r->max_abs_error, r->sm_mhz, r->clock_events,
             msg);
}

int tune_record_parse(const char *line, tune_record *r)
{
    char status[32];
    int used = 0;
    tune_record_init(r, -1);
    if (sscanf(line, "R %d %31s %lf %lf %lf %lf %lf %lf %lf %lld %n", &r->id, status, &r->median_ms, &r->min_ms,
               &r->spread, &r->tflops, &r->rel_error, &r->max_abs_error, &r->sm_mhz, &r->clock_events, &used) != 10 ||
        used == 0)
        return -1;
    int s = db_status_parse(status);
    if (s < 0)
        return -1;
    r->status = (db_status)s;
    const char *msg = line + used;
    if (strcmp(msg, "-") && strcmp(msg, "-\n"))
        snprintf(r->message, sizeof r->message, "%s", msg);
    size_t n = strlen(r->message);
    while (n && (r->message[n - 1] == '\n' || r->message[n - 1] == ' '))
        r->message[--n] = '\0';
    return 0;
}

void tune_ready_format(const tune_setup_times *t, char *line, size_t len)
{
    snprintf(line, len, "READY %.4f %.4f %.4f %.4f\n", t->open_s, t->clocks_s, t->inputs_s, t->reference_s);
}

int tune_ready_parse(const char *line, tune_setup_times *t)
{
    tune_setup_times got;
    char rest[2];
    int n = sscanf(line, "READY %lf %lf %lf %lf %1s", &got.open_s, &got.clocks_s, &got.inputs_s, &got.reference_s,
                   rest);
    if (n != 4)
        return -1;
    const double v[] = { got.open_s, got.clocks_s, got.inputs_s, got.reference_s };
    for (int i = 0; i < 4; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            return -1;
    *t = got;
    return 0;
}
