/* Parser of ptxas -v output (as NVRTC logs it): registers, spills, stack and static shared
 * memory per kernel entry, and the maxima over every function. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"

/* The integer written just before key in line ("128 bytes stack frame" -> 128), or -1. */
static int number_before(const char *line, const char *key)
{
    const char *k = strstr(line, key);
    if (!k)
        return -1;
    while (k > line && k[-1] == ' ')
        k--;
    const char *digits = k;
    while (digits > line && digits[-1] >= '0' && digits[-1] <= '9')
        digits--;
    return digits < k ? atoi(digits) : -1;
}

/* The text between the first pair of single quotes, into name. */
static void quoted(const char *s, char name[GEN_NAME_LEN])
{
    name[0] = '\0';
    const char *a = strchr(s, '\'');
    const char *b = a ? strchr(a + 1, '\'') : NULL;
    if (b)
        snprintf(name, GEN_NAME_LEN, "%.*s", (int)(b - a - 1), a + 1);
}

static void set_max(int *slot, int v)
{
    if (v > *slot)
        *slot = v;
}

/* Folds the values on one line into r (when not NULL) and the totals. */
static void take(const char *line, gen_resources *r, gen_resources *total)
{
    static const struct {
        const char *key;
        size_t offset;
    } fields[] = {
        { "bytes stack frame", offsetof(gen_resources, stack_frame_bytes) },
        { "bytes spill stores", offsetof(gen_resources, spill_store_bytes) },
        { "bytes spill loads", offsetof(gen_resources, spill_load_bytes) },
        { "registers", offsetof(gen_resources, registers) },
        { "bytes smem", offsetof(gen_resources, static_smem_bytes) },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const int v = number_before(line, fields[i].key);
        if (v < 0)
            continue;
        if (r)
            *(int *)((char *)r + fields[i].offset) = v;
        set_max((int *)((char *)total + fields[i].offset), v);
    }
}

int gen_ptxas_parse(const char *log, gen_resources *total, gen_resources *entries, int max,
                    int *entry_count)
{
    memset(total, 0, sizeof *total);
    int found = 0;
    int current = -1;        /* index of the entry being compiled, -1 before the first */
    int props_entry = 0;     /* 1: the last "Function properties" named the current entry */
    char current_name[GEN_NAME_LEN] = "";
    for (const char *p = log ? log : ""; *p;) {
        const char *nl = strchr(p, '\n');
        const size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        p += n + (nl ? 1 : 0);

        gen_resources *r = current >= 0 && current < max ? &entries[current] : NULL;
        const char *s;
        if ((s = strstr(line, "Compiling entry function"))) {
            current = found++;
            quoted(s, current_name);
            if (current < max) {
                memset(&entries[current], 0, sizeof entries[current]);
                snprintf(entries[current].name, GEN_NAME_LEN, "%s", current_name);
            }
            props_entry = 0;
        } else if ((s = strstr(line, "Function properties for "))) {
            s += strlen("Function properties for ");
            char name[GEN_NAME_LEN];
            snprintf(name, sizeof name, "%s", s);
            name[strcspn(name, " \r")] = '\0';
            props_entry = current >= 0 && !strcmp(name, current_name);
        } else if (strstr(line, "bytes stack frame")) {
            take(line, props_entry ? r : NULL, total);   /* a called function: totals only */
        } else if (strstr(line, "Used ") && strstr(line, "registers")) {
            take(line, r, total);
        }
    }
    *entry_count = found < max ? found : max;
    return found;
}
