/* flashtune doctor: what this machine gives flashtune, for a newcomer or a bug report: the
 * versions, each GPU and whose tuned winners would serve it, the database, the CUBIN cache and
 * the search space `tune` would run. Reads only; the GPUs are described by a child process, as
 * `tune` does. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_internal.h"
#include "gen_nvrtc_internal.h"
#include "rt_internal.h"
#include "tune_options.h"
#include "tune_worker.h"

#define GPUS_MAX 64

static void help(void)
{
    printf("usage: flashtune doctor [--db FILE]\n\n"
           "Reports what this machine gives flashtune: the version and NVRTC's, the CUDA driver and\n"
           "each GPU (name, arch, SMs, shared memory) with the tuned winners that would serve it (its\n"
           "own model's, or another GPU's of its arch from the shipped tables, or the built-in\n"
           "defaults), the tuning database (--db, else $FLASHTUNE_DB, else flashtune.db), the CUBIN\n"
           "cache folder, the capture file ($FLASHTUNE_CAPTURE: the problems it holds) and the search\n"
           "space 'flashtune tune' runs by default. Reads only.\n"
           "Exit status: 0; 2 a bad option.\n");
}

/* The winners of list[0..n) tuned on GPUs of arch, counted by model and op (DB_OP_FWD,
 * DB_OP_BWD): the model named `name` first (row 0, its count 0 when it has none), then the others
 * in list order. */
#define MODELS_MAX 8
typedef struct served {
    int models;
    char name[MODELS_MAX][TUNE_NAME_LEN];
    int count[MODELS_MAX][2];
} served;

static served count_served(const db_winner *list, int n, const char *name, const char *arch)
{
    served s;
    memset(&s, 0, sizeof s);
    snprintf(s.name[0], sizeof s.name[0], "%s", name);
    s.models = 1;
    for (int i = 0; i < n; i++) {
        const db_winner *w = &list[i];
        if (strcmp(w->device.arch, arch))
            continue;
        int m = 0;
        while (m < s.models && strcmp(s.name[m], w->device.name))
            m++;
        if (m == s.models) {
            if (s.models == MODELS_MAX)
                continue;
            snprintf(s.name[s.models++], sizeof s.name[0], "%s", w->device.name);
        }
        s.count[m][w->workload.op == DB_OP_BWD]++;
    }
    return s;
}

/* One line a model with winners; 0 when there are none at all. */
static int print_served(const char *source, const served *s, const char *arch)
{
    int any = 0;
    for (int m = 0; m < s->models; m++) {
        const int total = s->count[m][0] + s->count[m][1];
        if (!total)
            continue;
        any = 1;
        printf("    %s: %d winners of %s (forward %d, backward %d)%s\n", source, total,
               m == 0 ? "this model" : s->name[m], s->count[m][0], s->count[m][1],
               m == 0 ? "" : ", same arch: for what this model lacks");
    }
    if (!any)
        printf("    %s: none for %s\n", source, arch);
    return any;
}

/* The entries of dir but the hidden ones (a cache file being written starts with "."), or -1 when
 * it cannot be read. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int cmd_doctor(int argc, char **argv)
{
    const char *given_db = NULL, *db_path;
    int help_wanted, first;
    const tune_option options[] = { { "db", 0, &given_db, NULL } };
    int rc = tune_options_parse("doctor", argc, argv, options, 1, &help_wanted, &first);
    if (rc || help_wanted)
        return help_wanted ? (help(), 0) : rc;
    if (first < argc)
        return tune_usage_error("doctor", "no operand expected, got '%s'", argv[first]);
    if (tune_db_path("doctor", given_db, &db_path))
        return TUNE_EXIT_USAGE;

    char nvrtc[16], nvrtc_why[1024];
    const gen_nvrtc_api *nv;
    if (gen_nvrtc_open(&nv, nvrtc_why, sizeof nvrtc_why) == 0) {
        gen_nvrtc_version(nvrtc, sizeof nvrtc);
        printf("flashtune %s, NVRTC %s (%s)\n", FT_VERSION_STRING, nvrtc, gen_nvrtc_path());
    } else {
        printf("flashtune %s, NVRTC: none (%s)\n", FT_VERSION_STRING, nvrtc_why);
    }

    char err[512] = "";
    db *shipped = NULL, *user = NULL;
    db_winner *shipped_list = NULL, *user_list = NULL;
    int shipped_n = 0, user_n = 0;
    if (rt_shipped_open(&shipped, err, sizeof err) != 0 || (shipped &&
        db_winners_list(shipped, &shipped_list, &shipped_n, err, sizeof err) != 0))
        printf("shipped tables: unreadable: %s\n", err);
    else
        printf("shipped tables: %s (%d winners)\n", rt_shipped_names()[0] ? rt_shipped_names() : "none", shipped_n);
    struct stat st;
    if (stat(db_path, &st) != 0) {
        printf("database: %s does not exist ('flashtune tune' makes it)\n", db_path);
    } else if (db_open(db_path, DB_OPEN_READONLY, &user, err, sizeof err) != 0 ||
               db_winners_list(user, &user_list, &user_n, err, sizeof err) != 0) {
        printf("database: %s: %s\n", db_path, err);
    } else {
        printf("database: %s (%d winners)\n", db_path, user_n);
    }

    /* The GPUs, one probe each (a child process: this one never touches CUDA). */
    int gpus = 0;
    for (int ordinal = 0; ordinal < GPUS_MAX; ordinal++) {
        tune_gpu_info gpu;
        char why[512] = "";
        const int got = tune_worker_probe(ordinal, &gpu, 60, why, sizeof why);
        if (got != 1) {
            if (ordinal == 0)
                printf("GPUs: none (%s)\n", why);
            break;
        }
        if (gpus++ == 0)
            printf("CUDA driver %s\n", gpu.driver_version);
        const tune_device *d = &gpu.dev;
        printf("GPU %d: %s, %s, %d SMs, %d bytes of shared memory a block\n", ordinal, d->name, d->arch,
               d->sm_count, d->smem_per_block_optin);
        if (!gen_arch_supported(d->arch)) {
            printf("    flashtune does not target %s: calls on it fail with FT_ERR_NO_DEVICE\n", d->arch);
            continue;
        }
        const served from_user = count_served(user_list, user_n, d->name, d->arch);
        const served from_shipped = count_served(shipped_list, shipped_n, d->name, d->arch);
        const int any = (user && print_served("database", &from_user, d->arch)) |
                        print_served("shipped", &from_shipped, d->arch);
        if (!any)
            printf("    so the built-in defaults run here until it is tuned ('make tune' or 'flashtune tune')\n");
    }

    char cache[RT_PATH_LEN];
    rt_disk_cache_dir(cache, sizeof cache);
    if (!cache[0]) {
        printf("CUBIN cache: off (FLASHTUNE_CACHE_DIR is empty or 0)\n");
    } else {
        const int files = count_files(cache);
        if (files < 0)
            printf("CUBIN cache: %s (not made yet)\n", cache);
        else
            printf("CUBIN cache: %s (%d files)\n", cache, files);
    }
    const char *capture = getenv("FLASHTUNE_CAPTURE");
    if (capture && *capture) {
        db_capture_row *rows;
        int count;
        if (access(capture, F_OK) != 0) {
            printf("capture: %s (not made yet: the library writes it at ft_close)\n", capture);
        } else if (db_capture_read(capture, &rows, &count, err, sizeof err) != 0) {
            printf("capture: %s\n", err);
        } else {
            int untuned = 0;
            for (int i = 0; i < count; i++)
                untuned += rows[i].served != DB_SERVED_TUNED;
            printf("capture: %s (%d problems, %d served without a winner tuned for them; 'flashtune tune "
                   "--from-capture' tunes them)\n", capture, count, untuned);
            free(rows);
        }
    }
    char installed[PATH_MAX + 64];
    const char *space = tune_default_space(installed, sizeof installed);
    printf("default search space: %s%s\n", space, access(space, R_OK) == 0 ? "" : " (missing)");

    free(shipped_list);
    free(user_list);
    db_close(shipped);
    db_close(user);
    return 0;
}
