/* flashtune emit: print the standalone CUDA source of one template configuration. */
#include <stdio.h>
#include <stdlib.h>

#include "tune_params.h"

static void help(void)
{
    printf("usage: flashtune emit --template NAME [--arch ARCH] [-o FILE] [PARAM=VALUE ...]\n\n"
           "Prints the CUDA source that NVRTC compiles for this configuration (to FILE with -o).\n"
           "The set is validated first, shared memory against ARCH's limit.\n\n");
    tune_params_help(stdout);
}

int cmd_emit(int argc, char **argv)
{
    tune_cli cli;
    const int rc = tune_cli_parse(&cli, "emit", argc, argv);
    if (rc || cli.help)
        return cli.help ? (help(), 0) : rc;
    char *source = gen_expand(&cli.config);
    if (!source) {
        fprintf(stderr, "flashtune emit: template %s is not embedded in this build (or out of memory)\n",
                cli.config.family->file);
        return 1;
    }
    FILE *out = cli.output ? fopen(cli.output, "w") : stdout;
    if (!out) {
        perror(cli.output);
        free(source);
        return 1;
    }
    int failed = fputs(source, out) < 0;
    failed |= cli.output ? fclose(out) != 0 : fflush(out) != 0;
    free(source);
    if (failed) {
        fprintf(stderr, "flashtune emit: writing %s failed\n", cli.output ? cli.output : "stdout");
        return 1;
    }
    return 0;
}
