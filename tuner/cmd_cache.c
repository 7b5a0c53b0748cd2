/* flashtune cache warm: compiles the tuned winners' kernels into the per-user CUBIN cache on disk
 * (runtime/rt_disk_cache.c), so that the first call of a process finds them there instead of
 * compiling (seconds a kernel). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_internal.h"
#include "rt_internal.h"
#include "tune_options.h"
#include "tune_space.h"
#include "tune_sweep_compile_internal.h"

static void help(void)
{
    char archs[128];
    gen_arch_names(0, archs, sizeof archs);
    printf("usage: flashtune cache warm [--arch ARCH] [--db FILE] [--threads N]\n\n"
           "Compiles the kernels of the tuned winners for ARCH (default sm_90) into the CUBIN cache on\n"
           "disk that libflashtune reads: $FLASHTUNE_CACHE_DIR, else $XDG_CACHE_HOME/flashtune, else\n"
           "~/.cache/flashtune. The winners are those shipped inside the library, and the database's\n"
           "with --db, each in the forms the library compiles for other lengths too (tiles that divide\n"
           "the lengths or not). Kernels already in the cache are kept; nothing runs on a GPU.\n\n"
           "  --arch ARCH   the GPU architecture to compile for (%s)\n"
           "  --db FILE     also this database's winners\n"
           "  --threads N   compile on N threads (default: every core)\n", archs);
}

/* Adds the kernels of the winners in d tuned on arch to ks, each with EVEN_M and EVEN_N both ways
 * (the library fits them to each problem's lengths); those that do not fit the arch are left out.
 * Returns how many winners were seen, or -1 (err). */
static int add_winners(db *d, const tune_device *dev, tune_kernel_set *ks, char *err, size_t len)
{
    db_winner *list;
    int count;
    if (db_winners_list(d, &list, &count, err, len) != 0)
        return -1;
    int seen = 0;
    for (int i = 0; i < count; i++) {
        const gen_family *f = gen_family_find(list[i].kernel.family);
        if (!f || strcmp(list[i].device.arch, dev->arch) != 0)
            continue;
        seen++;
        for (int even = 0; even < 4; even++) {
            gen_config c;
            gen_config_init(&c, f);
            memcpy(c.p, list[i].kernel.p, sizeof c.p);
            if (f->params & GEN_BIT(GEN_EVEN_M))
                c.p[GEN_EVEN_M] = (even & 1) && !c.p[GEN_VARLEN];
            if (f->params & GEN_BIT(GEN_EVEN_N))
                c.p[GEN_EVEN_N] = (even >> 1) && !c.p[GEN_VARLEN];
            char why[256];
            if (gen_validate(&c, dev->smem_per_block_optin, why, sizeof why) == 0 &&
                gen_check_arch(f, dev->arch, why, sizeof why) == 0 && tune_kernels_add(ks, &c) < 0) {
                free(list);
                snprintf(err, len, "out of memory, or a template missing from this build");
                return -1;
            }
        }
    }
    free(list);
    return seen;
}

static int warm(const char *arch, const char *db_path, int threads)
{
    const char *cmd = "flashtune cache warm";
    char dir[RT_PATH_LEN], err[1024];
    rt_disk_cache_dir(dir, sizeof dir);
    if (!dir[0]) {
        fprintf(stderr, "%s: the cache is off (FLASHTUNE_CACHE_DIR is empty or 0) or has no folder (no HOME)\n", cmd);
        return 1;
    }
    tune_device dev;
    char archs[128];
    gen_arch_names(0, archs, sizeof archs);
    if (tune_device_default(&dev, arch) != 0)
        return tune_usage_error("cache", "--arch=%s is not a target of the generator (%s)", arch, archs);
    tune_kernel_set ks = { 0 };
    db *sources[2] = { NULL, NULL };
    int rc = rt_shipped_open(&sources[0], err, sizeof err);
    if (rc == 0 && db_path)
        rc = db_open(db_path, DB_OPEN_READONLY, &sources[1], err, sizeof err);
    int winners = 0;
    for (int s = 0; s < 2 && rc == 0; s++) {
        const int n = sources[s] ? add_winners(sources[s], &dev, &ks, err, sizeof err) : 0;
        rc = n < 0 ? -1 : 0;
        winners += n > 0 ? n : 0;
    }
    db_close(sources[0]);
    db_close(sources[1]);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        tune_kernels_free(&ks);
        return 1;
    }
    /* What the cache holds already stays; the rest is compiled and stored. */
    tune_kernel_job **todo = malloc((size_t)(ks.count ? ks.count : 1) * sizeof *todo);
    gen_cache_id *ids = malloc((size_t)(ks.count ? ks.count : 1) * sizeof *ids);
    int n_todo = 0, cached = 0;
    for (int i = 0; todo && ids && i < ks.count; i++) {
        rt_cubin have;
        if (gen_cache_id_init(ks.jobs[i].config.family, ks.jobs[i].source, dev.arch, &ids[n_todo]) != 0)
            continue;
        if (rt_disk_cache_load(dir, &ids[n_todo], &have)) {
            free(have.image);
            cached++;
            continue;
        }
        todo[n_todo++] = &ks.jobs[i];
    }
    if (!todo || !ids) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        free(todo);
        free(ids);
        tune_kernels_free(&ks);
        return 1;
    }
    printf("%s: %d winners on %s, %d kernels: %d in %s already, %d to compile\n", cmd, winners, dev.arch, ks.count,
           cached, dir, n_todo);
    const double seconds = n_todo ? tune_compile_all(todo, n_todo, dev.arch, threads) : 0;
    int stored = 0, failed = 0;
    for (int i = 0; i < n_todo; i++) {
        if (!todo[i]->ready) {
            fprintf(stderr, "%s: %s\n", cmd, todo[i]->error);
            failed++;
            continue;
        }
        rt_disk_cache_store(dir, &ids[i], todo[i]->binary.cubin, todo[i]->binary.cubin_size);
        rt_cubin back;
        if (rt_disk_cache_load(dir, &ids[i], &back)) {   /* stored, as a later process will read it */
            free(back.image);
            stored++;
        } else {
            fprintf(stderr, "%s: %s could not be written\n", cmd, dir);
            failed++;
        }
    }
    printf("%s: %d compiled and stored in %.1f s, %d failed\n", cmd, stored, seconds, failed);
    free(todo);
    free(ids);
    tune_kernels_free(&ks);
    return failed ? 1 : 0;
}

int cmd_cache(int argc, char **argv)
{
    const char *arch = "sm_90", *db_path = NULL, *threads_text = NULL;
    int show_help, first;
    const tune_option options[] = { { "arch", 0, &arch, NULL }, { "db", 0, &db_path, NULL },
                                    { "threads", 0, &threads_text, NULL } };
    int rc = tune_options_parse("cache", argc, argv, options, 3, &show_help, &first);
    if (rc || show_help) {
        if (show_help)
            help();
        return rc;
    }
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads_text && tune_parse_int("cache", "--threads", threads_text, 1, 256, &threads))
        return TUNE_EXIT_USAGE;
    if (first >= argc || strcmp(argv[first], "warm") != 0 || argc - first != 1)
        return tune_usage_error("cache", "expected 'warm'%s%s", first < argc ? ", got " : "",
                                first < argc ? argv[first] : "");
    return warm(arch, db_path, (int)threads);
}
