/* flashtune compile: compile one template configuration with NVRTC and report its resources. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_params.h"

static void help(void)
{
    printf("usage: flashtune compile --template NAME [--arch ARCH] [-o FILE.cubin] [--log] [PARAM=VALUE ...]\n\n"
           "Compiles the configuration to CUBIN with NVRTC (no GPU needed) and prints registers,\n"
           "spills, stack and shared memory per entry and the compile time. -o writes the CUBIN;\n"
           "--log prints NVRTC's full log. Exit status: 0 compiled, 1 compile error, 2 usage.\n\n");
    tune_params_help(stdout);
}

/* The family's entry of that symbol, or NULL. */
static const gen_entry *family_entry(const gen_family *f, const char *name)
{
    for (int i = 0; i < f->entry_count; i++)
        if (!strcmp(f->entries[i].name, name))
            return &f->entries[i];
    return NULL;
}

static void report(const tune_cli *cli, const char *source, const gen_binary *b)
{
    const gen_config *c = &cli->config;
    char source_hash[GEN_HASH_LEN], key[GEN_HASH_LEN];
    gen_source_hash(source, source_hash);
    gen_cache_key(source, b->arch, key);
    printf("%s for %s: compiled in %.2f s (NVRTC %s, %s)\n", c->family->name, b->arch,
           b->compile_seconds, b->nvrtc_version, gen_compile_options());
    printf("source hash %s, cache key %s, cubin %zu bytes\n\n", source_hash, key, b->cubin_size);
    printf("%-24s %5s %9s %9s %6s %12s %13s\n", "entry", "regs", "spill st", "spill ld", "stack",
           "static smem", "dynamic smem");
    for (int i = 0; i < b->entry_count; i++) {
        const gen_resources *r = &b->entries[i];
        const gen_entry *e = family_entry(c->family, r->name);
        char dynamic[32];
        if (e && !gen_entry_used(c, e))
            snprintf(dynamic, sizeof dynamic, "not launched");
        else
            snprintf(dynamic, sizeof dynamic, "%zu", e && e->smem_bytes ? e->smem_bytes(c->p) : (size_t)0);
        printf("%-24s %5d %9d %9d %6d %12d %13s\n", r->name, r->registers, r->spill_store_bytes,
               r->spill_load_bytes, r->stack_frame_bytes, r->static_smem_bytes, dynamic);
    }
    if (b->spill_store_bytes || b->spill_load_bytes)
        printf("\nwarning: registers spill (%d bytes stored, %d loaded)\n", b->spill_store_bytes,
               b->spill_load_bytes);
}

int cmd_compile(int argc, char **argv)
{
    tune_cli cli;
    const int rc = tune_cli_parse(&cli, "compile", argc, argv);
    if (rc || cli.help)
        return cli.help ? (help(), 0) : rc;
    char *source = gen_expand(&cli.config);
    if (!source) {
        fprintf(stderr, "flashtune compile: template %s is not embedded in this build (or out of memory)\n",
                cli.config.family->file);
        return 1;
    }
    gen_binary b;
    char err[8192];
    if (gen_compile(source, gen_target_arch(cli.config.family, cli.arch), &b, err, sizeof err)) {
        fprintf(stderr, "flashtune compile: %s\n", err);
        free(source);
        return 1;
    }
    if (cli.show_log)
        fprintf(stderr, "%s", b.log);
    report(&cli, source, &b);
    int status = 0;
    if (cli.output) {
        status = tune_cli_write("compile", cli.output, b.cubin, b.cubin_size);
        if (status == 0)
            printf("cubin written to %s\n", cli.output);
    }
    gen_binary_free(&b);
    free(source);
    return status;
}
