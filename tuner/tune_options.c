/* The flashtune command's option conventions (tune_options.h), over getopt_long. */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_param_table.h"
#include "tune_options.h"

#define MAX_OPTIONS 32
#define HELP_INDEX MAX_OPTIONS   /* getopt's return value for --help */

int tune_usage_error(const char *command, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "flashtune %s: ", command);
    vfprintf(stderr, format, ap);
    fprintf(stderr, " (see 'flashtune %s --help')\n", command);
    va_end(ap);
    return TUNE_EXIT_USAGE;
}

/* The option that argv[index] spelled, for messages: "--db" or "-o". */
static void spelled(const char *arg, char *out, size_t len)
{
    snprintf(out, len, "%.*s", (int)strcspn(arg, "="), arg);
}

int tune_options_parse(const char *command, int argc, char **argv, const tune_option *options, int count,
                       int *help, int *first_operand)
{
    struct option longs[MAX_OPTIONS + 2];
    char shorts[2 * MAX_OPTIONS + 8] = ":h";   /* leading ':' : a missing value returns ':' */
    int seen[MAX_OPTIONS] = { 0 };
    const char *first_value[MAX_OPTIONS] = { 0 };
    if (count > MAX_OPTIONS)
        return tune_usage_error(command, "internal error: %d options, at most %d", count, MAX_OPTIONS);
    size_t s = strlen(shorts);
    for (int i = 0; i < count; i++) {
        longs[i] = (struct option){ options[i].name, options[i].value ? required_argument : no_argument, NULL, i };
        if (options[i].short_name) {
            shorts[s++] = options[i].short_name;
            if (options[i].value)
                shorts[s++] = ':';
        }
    }
    shorts[s] = '\0';
    longs[count] = (struct option){ "help", no_argument, NULL, HELP_INDEX };
    longs[count + 1] = (struct option){ 0 };

    *help = 0;
    opterr = 0;
    optind = 0;   /* GNU: reinitialize, so a process may parse more than once (tests do) */
    for (;;) {
        int index = -1;
        const int c = getopt_long(argc, argv, shorts, longs, &index);
        if (c == -1)
            break;
        if (c == 'h' || c == HELP_INDEX) {
            *help = 1;
            return 0;
        }
        if (c == '?' || c == ':') {
            /* The offending argument is the last one getopt read. */
            const char *bad = argv[optind - 1 < argc ? optind - 1 : argc - 1];
            char name[64];
            if (strncmp(bad, "--", 2)) {
                if (c == ':')
                    return tune_usage_error(command, "option -%c needs a value", optopt);
                return tune_usage_error(command, "unknown option '-%c'", optopt);
            }
            spelled(bad, name, sizeof name);
            if (c == ':')
                return tune_usage_error(command, "option %s needs a value", name);
            for (int i = 0; i < count; i++)
                if (!strcmp(name + 2, options[i].name) && strchr(bad, '='))
                    return tune_usage_error(command, "option %s takes no value (got '%s')", name, bad);
            return tune_usage_error(command, "unknown option '%s'", bad);
        }
        int i = c;
        if (index < 0)   /* a short option: find its row */
            for (i = 0; i < count && options[i].short_name != c; i++)
                ;
        if (i >= count)
            return tune_usage_error(command, "unknown option '-%c'", c);
        if (seen[i]++) {
            if (options[i].value)
                return tune_usage_error(command, "option --%s given twice ('%s', then '%s')", options[i].name,
                                        first_value[i], optarg);
            return tune_usage_error(command, "option --%s given twice", options[i].name);
        }
        if (options[i].value)
            *options[i].value = first_value[i] = optarg;
        else
            *options[i].flag = 1;
    }
    *first_operand = optind;
    return 0;
}

int tune_parse_int(const char *command, const char *option, const char *text, long lo, long hi, long *out)
{
    if (gen_parse_long(text, lo, hi, out))
        return tune_usage_error(command, "%s='%s' must be an integer in %ld..%ld", option, text, lo, hi);
    return 0;
}

int tune_parse_duration(const char *command, const char *option, const char *text, long *seconds)
{
    static const struct {
        char suffix;
        long unit;
    } units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 } };
    const long most = 7 * 24 * 3600;
    const size_t n = strlen(text);
    long unit = 1;
    char digits[32];
    snprintf(digits, sizeof digits, "%s", text);
    for (size_t i = 0; n > 1 && n < sizeof digits && i < sizeof units / sizeof units[0]; i++)
        if (text[n - 1] == units[i].suffix) {
            unit = units[i].unit;
            digits[n - 1] = '\0';
        }
    long count;
    if (n >= sizeof digits || gen_parse_long(digits, 1, most / unit, &count))
        return tune_usage_error(command, "%s='%s' must be a duration: seconds, or a count with s, m or h (90, 10m, "
                                "2h), from 1 s to a week", option, text);
    *seconds = count * unit;
    return 0;
}

int tune_db_path(const char *command, const char *given, const char **path)
{
    const char *env = getenv("FLASHTUNE_DB");
    if (given) {
        if (!*given)
            return tune_usage_error(command, "--db is empty: name a database file");
        *path = given;
    } else if (env) {
        if (!*env)
            return tune_usage_error(command, "$FLASHTUNE_DB is set but empty: unset it or name a database file");
        *path = env;
    } else {
        *path = "flashtune.db";
    }
    return 0;
}

/* The default space: a checkout's tuner/spaces/default.lua (the current folder), else the one
 * installed beside this command (FT_SPACES_FROM_BIN from its folder, found through /proc/self/exe:
 * a moved install still finds its own). When neither exists the checkout's name is returned, and
 * the load says it is missing. */
const char *tune_default_space(char *buf, size_t len)
{
    static const char checkout[] = "tuner/spaces/default.lua";
    if (access(checkout, R_OK) == 0)
        return checkout;
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        if (snprintf(buf, len, "%s/%s/default.lua", exe, FT_SPACES_FROM_BIN) < (int)len && access(buf, R_OK) == 0)
            return buf;
    }
    return checkout;
}
