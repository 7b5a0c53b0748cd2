/* Template parameters on the command line: --template, --arch, -o, --log, PARAM=VALUE. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tune_params.h"

int tune_params_set(gen_config *c, const char *assignment, char *err, size_t len)
{
    if (strpbrk(assignment, " \t")) {
        snprintf(err, len, "'%s' is not PARAM=VALUE", assignment);
        return -1;
    }
    return gen_config_parse(c, assignment, err, len);
}

/* The value of option `opt` at argv[*i]: "--opt=VALUE" or "--opt VALUE" (advancing *i).
 * NULL when argv[*i] is not that option; sets *missing when the value is absent. */
static const char *option_value(const char *opt, int argc, char **argv, int *i, int *missing)
{
    const size_t n = strlen(opt);
    if (strncmp(argv[*i], opt, n))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int usage_error(const char *command, const char *reason)
{
    fprintf(stderr, "flashtune %s: %s\n(see 'flashtune %s --help')\n", command, reason, command);
    return TUNE_EXIT_USAGE;
}

int tune_cli_parse(tune_cli *cli, const char *command, int argc, char **argv)
{
    memset(cli, 0, sizeof *cli);
    cli->arch = "sm_90";
    const char *family_name = NULL;
    char err[1024];
    /* First pass: options; the family must be known before PARAM=VALUE can apply to its defaults. */
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli->help = 1;
            return 0;
        } else if ((v = option_value("--template", argc, argv, &i, &missing))) {
            family_name = v;
        } else if ((v = option_value("--arch", argc, argv, &i, &missing))) {
            cli->arch = v;
        } else if ((v = option_value("-o", argc, argv, &i, &missing))) {
            cli->output = v;
        } else if (!strcmp(argv[i], "--log")) {
            cli->show_log = 1;
        } else if (missing) {
            snprintf(err, sizeof err, "option %s needs a value", argv[i]);
            return usage_error(command, err);
        } else if (argv[i][0] == '-' || !strchr(argv[i], '=')) {
            snprintf(err, sizeof err, "unknown argument '%s'", argv[i]);
            return usage_error(command, err);
        }
    }
    if (!family_name)
        return usage_error(command, "missing --template NAME");
    const gen_family *f = gen_family_find(family_name);
    if (!f) {
        int count;
        const gen_family *const *all = gen_family_list(&count);
        int n = snprintf(err, sizeof err, "unknown template '%s' (families:", family_name);
        for (int k = 0; k < count && n > 0 && (size_t)n < sizeof err; k++)
            n += snprintf(err + n, sizeof err - (size_t)n, " %s", all[k]->name);
        if (n > 0 && (size_t)n < sizeof err - 1)
            snprintf(err + n, sizeof err - (size_t)n, ")");
        return usage_error(command, err);
    }
    const int smem_limit = gen_smem_limit_for_arch(cli->arch);
    if (smem_limit < 0) {
        snprintf(err, sizeof err, "unknown arch '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a)", cli->arch);
        return usage_error(command, err);
    }
    gen_config_init(&cli->config, f);
    int head_dim_v_given = 0;
    for (int i = 1; i < argc; i++) {
        /* Skip option values; what is left with '=' and no leading '-' is an assignment. */
        if (!strcmp(argv[i], "--template") || !strcmp(argv[i], "--arch") || !strcmp(argv[i], "-o")) {
            i++;
            continue;
        }
        if (argv[i][0] == '-')
            continue;
        if (tune_params_set(&cli->config, argv[i], err, sizeof err))
            return usage_error(command, err);
        head_dim_v_given |= !strncasecmp(argv[i], "HEAD_DIM_V=", 11);
    }
    /* V usually has Q's head dim: HEAD_DIM=64 alone means both. */
    if (!head_dim_v_given)
        cli->config.p[GEN_HEAD_DIM_V] = cli->config.p[GEN_HEAD_DIM];
    char why[768];
    if (gen_validate(&cli->config, smem_limit, why, sizeof why) ||
        gen_check_arch(f, cli->arch, why, sizeof why)) {
        snprintf(err, sizeof err, "invalid configuration for %s on %s: %s", f->name, cli->arch, why);
        return usage_error(command, err);
    }
    return 0;
}

void tune_params_help(FILE *out)
{
    int count;
    const gen_family *const *all = gen_family_list(&count);
    fprintf(out, "families (--template NAME):\n");
    for (int k = 0; k < count; k++) {
        const gen_family *f = all[k];
        fprintf(out, "  %-10s %s; dtypes", f->name, f->backward ? "backward" : "forward");
        for (int d = 0; d < 4; d++)
            if (f->dtypes & (1u << d))
                fprintf(out, " %s", gen_dtype_name(d));
        fprintf(out, "; entries");
        for (int e = 0; e < f->entry_count; e++)
            fprintf(out, " %s", f->entries[e].name);
        fprintf(out, "%s\n", gen_family_template(f) ? "" : "  [template not in this build]");
    }
    fprintf(out, "\nparameters (PARAM=VALUE; defaults per family, '-' where the family does not use it):\n");
    fprintf(out, "  %-12s", "");
    for (int k = 0; k < count; k++)
        fprintf(out, " %10s", all[k]->name);
    fprintf(out, "\n");
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        fprintf(out, "  %-12s", gen_param_name((gen_param)i));
        for (int k = 0; k < count; k++) {
            const gen_family *f = all[k];
            const char *sym = gen_param_value_name((gen_param)i, f->defaults[i]);
            if (!(f->params & GEN_BIT(i)))
                fprintf(out, " %10s", "-");
            else if (sym)
                fprintf(out, " %10s", sym);
            else
                fprintf(out, " %10d", f->defaults[i]);
        }
        fprintf(out, "\n");
    }
    fprintf(out, "\n  HEAD_DIM_V follows HEAD_DIM unless given.\n\n");
    tune_params_table(out);
    fprintf(out, "\narchs (--arch, default sm_90): sm_80, sm_86, sm_89, sm_90, sm_90a\n");
}

void tune_params_table(FILE *out)
{
    fprintf(out, "  %-11s %-8s %-14s %s\n", "parameter", "role", "range", "meaning");
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const gen_param_info *info = gen_param_get((gen_param)i);
        char range[96];
        int n = snprintf(range, sizeof range, "%d..%d", info->min, info->max);
        if (info->step > 1)
            snprintf(range + n, sizeof range - (size_t)n, " step %d", info->step);
        fprintf(out, "  %-11s %-8s %-14s %s", info->name, info->role == GEN_ROLE_TUNABLE ? "tunable" : "problem",
                range, info->help);
        for (int v = 0; info->values && info->values[v]; v++)
            fprintf(out, "%s%d %s", v ? ", " : " (", v, info->values[v]);
        fprintf(out, "%s\n", info->values ? ")" : "");
    }
    fprintf(out, "  A tunable is fixed or searched by a search space; the problem decides the rest.\n");
}
