/* Template parameters: the table's rows (gen_param_table.h), names, value parsing, range checks
 * and symbolic value names; a configuration's defaults and its "NAME=VALUE ..." text form. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gen_internal.h"

static const gen_param_info table[GEN_PARAM_COUNT] = {
#define ROW(name, role, def, lo, hi, step, values, help) { #name, role, def, lo, hi, step, values, help },
    GEN_PARAM_TABLE(ROW)
#undef ROW
};

const gen_param_info *gen_param_get(gen_param param)
{
    return (unsigned)param < GEN_PARAM_COUNT ? &table[param] : NULL;
}

const char *gen_param_name(gen_param param)
{
    return (unsigned)param < GEN_PARAM_COUNT ? table[param].name : NULL;
}

int gen_param_lookup(const char *name)
{
    for (int i = 0; name && i < GEN_PARAM_COUNT; i++)
        if (!strcasecmp(table[i].name, name))
            return i;
    return -1;
}

gen_param_set gen_param_mask(gen_param_role role)
{
    gen_param_set mask = 0;
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        if (table[i].role == role)
            mask |= GEN_BIT(i);
    return mask;
}

const char *gen_dtype_name(int dtype)
{
    const char *name = gen_param_value_name(GEN_DTYPE, dtype);
    return name ? name : "?";
}

const char *gen_param_value_name(gen_param param, int value)
{
    const gen_param_info *info = gen_param_get(param);
    if (!info || !info->values || value < 0)
        return NULL;
    for (int i = 0; info->values[i]; i++)
        if (i == value)
            return info->values[i];
    return NULL;
}

const char *gen_param_format(gen_param param, int value, char *buf, size_t len)
{
    const char *name = gen_param_value_name(param, value);
    if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "%d", value);
    return buf;
}

/* "f32, f16, bf16, f64": the row's value names. */
static void value_list(const gen_param_info *info, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; info->values && info->values[i]; i++) {
        const size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", info->values[i]);
    }
}

int gen_parse_long(const char *text, long lo, long hi, long *out)
{
    if (!text)
        return -1;
    const char *p = text + (text[0] == '-');
    if (!*p)
        return -1;
    for (const char *d = p; *d; d++)
        if (*d < '0' || *d > '9')
            return -1;
    errno = 0;
    const long v = strtol(text, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int gen_param_parse(gen_param param, const char *text, int *value, char *why, size_t len)
{
    const gen_param_info *info = gen_param_get(param);
    char scratch[8];
    if (!why)
        why = scratch, len = sizeof scratch;
    if (!info) {
        snprintf(why, len, "parameter index %d is out of range", (int)param);
        return -1;
    }
    if (!text || !*text) {
        snprintf(why, len, "%s has an empty value", info->name);
        return -1;
    }
    for (int i = 0; info->values && info->values[i]; i++)
        if (!strcasecmp(info->values[i], text)) {
            *value = i;
            return 0;
        }
    long v;
    if (gen_parse_long(text, INT_MIN, INT_MAX, &v)) {
        char names[128];
        value_list(info, names, sizeof names);
        if (names[0])
            snprintf(why, len, "%s=%s is not %s or an integer %d..%d", info->name, text, names, info->min, info->max);
        else
            snprintf(why, len, "%s=%s is not an integer", info->name, text);
        return -1;
    }
    *value = (int)v;
    return 0;
}

int gen_param_check(gen_param param, int value, char *why, size_t len)
{
    const gen_param_info *info = gen_param_get(param);
    if (!info) {
        snprintf(why, len, "parameter index %d is out of range", (int)param);
        return -1;
    }
    if (value >= info->min && value <= info->max && value % info->step == 0)
        return 0;
    if (info->step > 1)
        snprintf(why, len, "%s=%d is not supported (a multiple of %d in %d..%d)", info->name, value, info->step,
                 info->min, info->max);
    else if (info->min == 0 && info->max == 1)
        snprintf(why, len, "%s=%d must be 0 or 1", info->name, value);
    else
        snprintf(why, len, "%s=%d is out of range (%d..%d)", info->name, value, info->min, info->max);
    return -1;
}

/* ---- configurations ----------------------------------------------------------------- */

void gen_config_init(gen_config *c, const gen_family *f)
{
    c->family = f;
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        c->p[i] = f ? f->defaults[i] : table[i].def;
}

void gen_config_head_dim_tiles(gen_config *c)
{
    if (c->family && c->family->head_dim_tiles)
        c->family->head_dim_tiles(c->p);
}

const char *gen_config_format(const gen_config *c, unsigned flags, char *buf, size_t len)
{
    const gen_family *f = c->family;
    const gen_param_set skip = flags & GEN_FORMAT_TUNABLES ? gen_param_mask(GEN_ROLE_PROBLEM) : 0;
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    if ((flags & GEN_FORMAT_FAMILY) && f && len)
        used = (size_t)snprintf(buf, len, "%s", f->name);
    for (int i = 0; i < GEN_PARAM_COUNT && used < len; i++) {
        if ((f && !(f->params & GEN_BIT(i))) || (skip & GEN_BIT(i)))
            continue;
        char value[32];
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", table[i].name,
                                 gen_param_format((gen_param)i, c->p[i], value, sizeof value));
    }
    return buf;
}

int gen_config_parse(gen_config *c, const char *text, char *why, size_t len)
{
    for (const char *s = text ? text : ""; *s;) {
        if (*s == ' ' || *s == '\t') {
            s++;
            continue;
        }
        const size_t n = strcspn(s, " \t");
        const char *eq = memchr(s, '=', n);
        if (!eq || eq == s) {
            snprintf(why, len, "'%.*s' is not PARAM=VALUE", (int)n, s);
            return -1;
        }
        char name[64], value[64];
        if ((size_t)(eq - s) >= sizeof name || (size_t)(s + n - eq - 1) >= sizeof value) {
            snprintf(why, len, "'%.*s' is too long", (int)n, s);
            return -1;
        }
        snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
        snprintf(value, sizeof value, "%.*s", (int)(s + n - eq - 1), eq + 1);
        const int param = gen_param_lookup(name);
        if (param < 0) {
            char list[256] = "";
            for (int i = 0; i < GEN_PARAM_COUNT; i++) {
                const size_t used = strlen(list);
                snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", table[i].name);
            }
            snprintf(why, len, "unknown parameter '%s' in '%.*s' (parameters: %s)", name, (int)n, s, list);
            return -1;
        }
        if (gen_param_parse((gen_param)param, value, &c->p[param], why, len))
            return -1;
        s += n;
    }
    return 0;
}
