/* Template parameters on the command line: --template, --arch, -o, --log (tune_options_parse),
 * then the PARAM=VALUE operands. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tune_params.h"

int tune_params_set(gen_config *c, const char *assignment, char *err, size_t len)
{
    if (strpbrk(assignment, " \t")) {
        snprintf(err, len, "'%s' is not PARAM=VALUE", assignment);
        return -1;
    }
    return gen_config_parse(c, assignment, err, len);
}

/* Applies the PARAM=VALUE operands to c in order; a parameter given twice is refused, naming
 * both values. Returns 0, or the usage error. *dv_given: HEAD_DIM_V was among them. */
static int apply_assignments(gen_config *c, const char *command, int count, char **args, int *dv_given)
{
    const char *given[GEN_PARAM_COUNT] = { 0 };
    char err[1024], name[64];
    *dv_given = 0;
    for (int i = 0; i < count; i++) {
        const char *eq = strchr(args[i], '=');
        if (!eq || eq == args[i] || args[i][0] == '-')
            return tune_usage_error(command, "'%s' is not PARAM=VALUE", args[i]);
        snprintf(name, sizeof name, "%.*s", (int)(eq - args[i]), args[i]);
        const int p = gen_param_lookup(name);
        if (p >= 0 && given[p])
            return tune_usage_error(command, "parameter %s given twice ('%s', then '%s')", gen_param_name((gen_param)p),
                                    strchr(given[p], '=') + 1, eq + 1);
        if (tune_params_set(c, args[i], err, sizeof err))
            return tune_usage_error(command, "%s", err);
        if (p >= 0)
            given[p] = args[i];
        *dv_given |= p == GEN_HEAD_DIM_V;
    }
    return 0;
}

int tune_cli_parse(tune_cli *cli, const char *command, int argc, char **argv)
{
    memset(cli, 0, sizeof *cli);
    const char *family_name = NULL, *arch = NULL;
    const tune_option options[] = {
        { "template", 0, &family_name, NULL }, { "arch", 0, &arch, NULL },
        { "output", 'o', &cli->output, NULL }, { "log", 0, NULL, &cli->show_log },
        { "hash", 0, NULL, &cli->show_hash },
    };
    int first;
    int rc = tune_options_parse(command, argc, argv, options, 5, &cli->help, &first);
    if (rc || cli->help)
        return rc;
    /* --log is compile's (NVRTC's log), --hash is emit's (the source's identity). */
    if (cli->show_log && strcmp(command, "compile"))
        return tune_usage_error(command, "--log belongs to 'flashtune compile'");
    if (cli->show_hash && strcmp(command, "emit"))
        return tune_usage_error(command, "--hash belongs to 'flashtune emit'");
    cli->arch = arch ? arch : "sm_90";
    if (!family_name)
        return tune_usage_error(command, "missing --template NAME");
    const gen_family *f = gen_family_find(family_name);
    if (!f) {
        char err[1024];
        int count;
        const gen_family *const *all = gen_family_list(&count);
        int n = snprintf(err, sizeof err, "unknown template '%s' (families:", family_name);
        for (int k = 0; k < count && n > 0 && (size_t)n < sizeof err; k++)
            n += snprintf(err + n, sizeof err - (size_t)n, " %s", all[k]->name);
        if (n > 0 && (size_t)n < sizeof err - 1)
            snprintf(err + n, sizeof err - (size_t)n, ")");
        return tune_usage_error(command, "%s", err);
    }
    const int smem_limit = gen_smem_limit_for_arch(cli->arch);
    char archs[128];
    gen_arch_names(0, archs, sizeof archs);
    if (smem_limit < 0)
        return tune_usage_error(command, "unknown arch '%s' (%s)", cli->arch, archs);
    gen_config_init(&cli->config, f);
    int head_dim_v_given;
    if ((rc = apply_assignments(&cli->config, command, argc - first, argv + first, &head_dim_v_given)) != 0)
        return rc;
    /* V usually has Q's head dim: HEAD_DIM=64 alone means both. */
    if (!head_dim_v_given)
        cli->config.p[GEN_HEAD_DIM_V] = cli->config.p[GEN_HEAD_DIM];
    char why[768];
    if (gen_validate(&cli->config, smem_limit, why, sizeof why) || gen_check_arch(f, cli->arch, why, sizeof why))
        return tune_usage_error(command, "invalid configuration for %s on %s: %s", f->name, cli->arch, why);
    return 0;
}

int tune_cli_write(const char *command, const char *path, const void *data, size_t size)
{
    FILE *out = path ? fopen(path, "wb") : stdout;
    int failed = !out || fwrite(data, 1, size, out) != size;
    int err = failed ? errno : 0;
    if (out && (path ? fclose(out) : fflush(out)) != 0 && !failed)
        failed = 1, err = errno;
    if (failed) {
        fprintf(stderr, "flashtune %s: writing %s failed: %s\n", command, path ? path : "standard output",
                err ? strerror(err) : "I/O error");
        return 1;
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
    char archs[128];
    gen_arch_names(0, archs, sizeof archs);
    fprintf(out, "\narchs (--arch, default sm_90): %s\n", archs);
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
