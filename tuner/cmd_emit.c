/* flashtune emit: print the standalone CUDA source of one template configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_params.h"

static void help(void)
{
    printf("usage: flashtune emit --template NAME [--arch ARCH] [-o FILE] [--hash] [PARAM=VALUE ...]\n\n"
           "Prints the CUDA source that NVRTC compiles for this configuration (to FILE with -o);\n"
           "with --hash, its source_hash instead: the kernel's identity in the database and in\n"
           "winners files.\n"
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
    char hash[GEN_HASH_LEN + 1];
    if (cli.show_hash) {
        gen_source_hash(source, hash);
        strcat(hash, "\n");
    }
    const char *text = cli.show_hash ? hash : source;
    const int status = tune_cli_write("emit", cli.output, text, strlen(text));
    free(source);
    return status;
}
