/* Parallel compilation for the GPU tests and the benchmarks: configurations validated for the
 * session's GPU, compiled on a few threads (NVRTC is thread-safe) and loaded with
 * ln_module_load. Identical sources are compiled once per cache. (The tuner has its own pool,
 * the runtime its module caches.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ln_internal.h"

#define MAX_THREADS 64

struct ln_cached {
    char hash[GEN_HASH_LEN];
    ln_built *built;
};

typedef struct compile_job {
    ln_built **todo;
    int count;
    int next;
    const char *arch;
    pthread_mutex_t lock;
} compile_job;

static void *compile_worker(void *arg)
{
    compile_job *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next++;
        pthread_mutex_unlock(&job->lock);
        if (i >= job->count)
            return NULL;
        ln_built *k = job->todo[i];
        char *src = gen_expand(&k->config);
        if (!src) {
            snprintf(k->error, sizeof k->error, "gen_expand failed for family %s", k->config.family->name);
            continue;
        }
        gen_compile(src, gen_target_arch(k->config.family, job->arch), &k->binary, k->error, sizeof k->error);
        free(src);
    }
}

/* The cached build of hash, or NULL. */
static ln_built *find(const ln_build_cache *cache, const char *hash)
{
    for (int j = 0; j < cache->count; j++)
        if (!strcmp(cache->entries[j].hash, hash))
            return cache->entries[j].built;
    return NULL;
}

/* A fresh entry for c in the cache, validated for s (its error says why not); NULL when out of
 * memory. */
static ln_built *add(ln_session *s, ln_build_cache *cache, const gen_config *c, const char *hash)
{
    struct ln_cached *grown = realloc(cache->entries, (size_t)(cache->count + 1) * sizeof *grown);
    ln_built *k = calloc(1, sizeof *k);
    if (grown)
        cache->entries = grown;
    if (!grown || !k) {
        free(k);
        return NULL;
    }
    k->config = *c;
    char why[512];
    if (gen_validate(c, s->smem_limit, why, sizeof why) != 0 ||
        gen_check_arch(c->family, s->arch, why, sizeof why) != 0)
        snprintf(k->error, sizeof k->error, "invalid: %s", why);
    memcpy(cache->entries[cache->count].hash, hash, GEN_HASH_LEN);
    cache->entries[cache->count++].built = k;
    return k;
}

int ln_build(ln_session *s, ln_build_cache *cache, const gen_config *configs, ln_built **built, int count,
             int threads)
{
    ln_built **todo = calloc((size_t)(count > 0 ? count : 1), sizeof *todo);
    if (!todo)
        return count;
    int todo_count = 0, failed = 0;
    for (int i = 0; i < count; i++) {
        char *src = gen_expand(&configs[i]);
        char hash[GEN_HASH_LEN] = "";
        if (src)
            gen_source_hash(src, hash);
        free(src);
        built[i] = find(cache, hash);
        if (built[i])
            continue;
        built[i] = add(s, cache, &configs[i], hash);
        if (built[i] && !built[i]->error[0])
            todo[todo_count++] = built[i];
    }
    compile_job job = { todo, todo_count, 0, s->arch, PTHREAD_MUTEX_INITIALIZER };
    if (threads < 1)
        threads = 1;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    while (started < threads && started < MAX_THREADS && started < todo_count &&
           pthread_create(&tid[started], NULL, compile_worker, &job) == 0)
        started++;
    if (started == 0)
        compile_worker(&job);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < todo_count; i++) {
        ln_built *k = todo[i];
        if (k->error[0])
            continue;
        char buf[256];
        const char *what;
        CUresult rc = ln_module_load(s->cu, &k->config, k->binary.cubin, &k->module, &what);
        if (rc != CUDA_SUCCESS)
            snprintf(k->error, sizeof k->error, "%s: %s", what, cu_result_str(rc, buf, sizeof buf));
    }
    free(todo);
    for (int i = 0; i < count; i++)
        failed += !built[i] || built[i]->error[0] != 0;
    return failed;
}

void ln_build_cache_free(ln_session *s, ln_build_cache *cache)
{
    for (int i = 0; i < cache->count; i++) {
        ln_built *k = cache->entries[i].built;
        if (k->module)
            s->cu->ModuleUnload(k->module);
        gen_binary_free(&k->binary);
        free(k);
    }
    free(cache->entries);
    cache->entries = NULL;
    cache->count = 0;
}
