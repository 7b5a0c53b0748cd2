/* flashtune: the command-line front end. Each sub-command is one row of the table below. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tune_params.h"

typedef struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} command;

static int run_help(int argc, char **argv);
int cmd_emit(int argc, char **argv);      /* cmd_emit.c */
int cmd_compile(int argc, char **argv);   /* cmd_compile.c */
int cmd_tune(int argc, char **argv);      /* cmd_tune.c */
int cmd_results(int argc, char **argv);   /* cmd_results.c */
int cmd_best(int argc, char **argv);      /* cmd_results.c */
int cmd_db(int argc, char **argv);        /* cmd_db.c */
int cmd_cache(int argc, char **argv);     /* cmd_cache.c */
int cmd_doctor(int argc, char **argv);    /* cmd_doctor.c */

static const command commands[] = {
    { "tune", "run a tuning sweep from a Lua search space into SQLite", cmd_tune },
    { "emit", "print the CUDA source of one template configuration", cmd_emit },
    { "compile", "compile one configuration with NVRTC and report its resources", cmd_compile },
    { "results", "list a workload's candidates from the database", cmd_results },
    { "best", "list the winner of every workload", cmd_best },
    { "db", "export or import the winners as text", cmd_db },
    { "cache", "compile the tuned winners' kernels into the CUBIN cache on disk", cmd_cache },
    { "doctor", "report this machine: versions, GPUs and whose winners serve them, database, cache", cmd_doctor },
    { "help", "show this help", run_help },
};

static int run_help(int argc, char **argv)
{
    /* 'help COMMAND' is that command's --help (a command's own usage is the command's to print). */
    if (argc >= 2 && strcmp(argv[1], "help")) {
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(argv[1], commands[i].name)) {
                char name[32], flag[] = "--help";
                snprintf(name, sizeof name, "%s", commands[i].name);
                char *args[] = { name, flag, NULL };
                return commands[i].run(2, args);
            }
        fprintf(stderr, "flashtune help: unknown command '%s' (try 'flashtune help')\n", argv[1]);
        return 2;
    }
    printf("usage: flashtune <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    printf("\ntemplate parameters (PARAM=VALUE for emit and compile; the keys of a search space):\n");
    tune_params_table(stdout);
    printf("\n'flashtune help <command>' (or 'flashtune <command> --help') describes one command.\n");
    return 0;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2)
        return run_help(0, NULL), 2;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return run_help(0, NULL);
    if (!strcmp(argv[1], "--version")) {
        printf("flashtune %s\n", FT_VERSION_STRING);
        return 0;
    }
    fprintf(stderr, "flashtune: unknown command '%s' (try 'flashtune help')\n", argv[1]);
    return 2;
}

int main(int argc, char **argv)
{
    int status = dispatch(argc, argv);
    /* Output that never arrived (a full disk, a closed pipe, /dev/full) is a failure, whatever
     * the command thought: stdio reports it only here, at the final flush. */
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && status == 0) {   /* else the command said why */
        fprintf(stderr, "flashtune: writing standard output failed: %s\n", errno ? strerror(errno) : "I/O error");
        status = 1;
    }
    return status;
}
