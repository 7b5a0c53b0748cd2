/* `flashtune db export`: the winners as stable, diffable text, one line per (device, workload),
 * so a tuned database can be reviewed and committed. db_import.c reads it back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_core_internal.h"

/* Bare when it is a plain token, else quoted, so the reader splits it back exactly. */
static void write_text(FILE *out, const char *value)
{
    if (!*value || strpbrk(value, " \t\r\n\"\\"))
        db_write_quoted(out, value);
    else
        fputs(value, out);
}

int db_export(db *d, FILE *out, char *err, size_t len)
{
    const char *func = "db_export";
    if (!d || !out)
        return db_fail(err, len, "%s: %s is NULL", func, d ? "out" : "db");
    db_winner *list;
    int count;
    if (db_winners_list(d, &list, &count, err, len) != 0)
        return -1;
    fprintf(out, "flashtune winners format %d\n", DB_TEXT_FORMAT);
    fprintf(out, "# One line per (device, workload): its declared winner, a valid kernel (the fastest, or one "
                 "within the\n# timing noise of it). Written by 'flashtune db export', read by 'flashtune db "
                 "import'. Fields\n# are NAME=VALUE; text with spaces is double-quoted.\n");
    for (int i = 0; i < count; i++) {
        const db_winner *w = &list[i];
        char buf[64], wl[256];
        fputs("device=", out);
        db_write_quoted(out, w->device.name);
        fputs(" arch=", out);
        write_text(out, w->device.arch);
        fprintf(out, " cc=%d.%d sm_count=%d driver=", w->device.cc_major, w->device.cc_minor, w->device.sm_count);
        write_text(out, w->device.driver_version);
        fputs(" nvrtc=", out);
        write_text(out, w->device.nvrtc_version);
        fprintf(out, " %s family=", db_workload_format(&w->workload, wl, sizeof wl));
        write_text(out, w->kernel.family);
        fprintf(out, " source_hash=%s", w->kernel.source_hash);
        for (int p = 0; p < GEN_PARAM_COUNT; p++)
            fprintf(out, " %s=%s", gen_param_name((gen_param)p), gen_param_format((gen_param)p, w->kernel.p[p], buf,
                                                                                   sizeof buf));
        fprintf(out, " median_ms=%.6g", w->median_ms);
        if (isfinite(w->tflops))
            fprintf(out, " tflops=%.6g", w->tflops);
        fputc('\n', out);
    }
    free(list);
    if (fflush(out) != 0 || ferror(out))
        return db_fail(err, len, "%s: writing the text failed", func);
    return 0;
}
