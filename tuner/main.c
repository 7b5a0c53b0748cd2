/* flashtune: the command-line front end. Each sub-command is one row of the table below. */
#include <stdio.h>
#include <string.h>

#include "cuda_driver_internal.h"

typedef struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} command;

static int run_tune(int argc, char **argv);
static int run_help(int argc, char **argv);
int cmd_emit(int argc, char **argv);      /* cmd_emit.c */
int cmd_compile(int argc, char **argv);   /* cmd_compile.c */

static const command commands[] = {
    { "tune", "run a tuning sweep from a Lua search space", run_tune },
    { "emit", "print the CUDA source of one template configuration", cmd_emit },
    { "compile", "compile one configuration with NVRTC and report its resources", cmd_compile },
    { "help", "show this help", run_help },
};

static int run_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("usage: flashtune <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    printf("\n'flashtune <command> --help' describes one command.\n");
    return 0;
}

/* Until the tuner lands (issue 4) this reports what a sweep would use and whether a GPU is here. */
static int run_tune(int argc, char **argv)
{
    const char *space = argc > 1 ? argv[1] : "tuner/spaces/default.lua";
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: flashtune tune [SPACE.lua]\n");
        return 0;
    }
    printf("flashtune tune: search space %s\n", space);
    const cu_driver *driver = NULL;
    char err[512];
    if (cu_driver_open(&driver, err, sizeof err) != 0)
        printf("flashtune tune: %s\n", err);
    else
        printf("flashtune tune: GPU driver found\n");
    printf("flashtune tune: the sweep itself is not built yet (issue 4); nothing was run\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return run_help(0, NULL), 2;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return run_help(0, NULL);
    fprintf(stderr, "flashtune: unknown command '%s' (try 'flashtune help')\n", argv[1]);
    return 2;
}
