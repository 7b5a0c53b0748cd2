/* Modules: a CUBIN from memory, the database, the cache on disk or NVRTC, loaded once per CUDA context. Compiling
 * happens outside the lock, so other threads keep launching meanwhile. Every cache is found by a
 * 64-bit key and used only when what the CUBIN was compiled from matches too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_internal.h"

/* The in-memory caches: the 64-bit key finds a kernel, its configuration and compile target
 * prove it (in one process a configuration always expands to the same source). */
static int same_kernel(const rt_kernel *a, const rt_kernel *b)
{
    return !strcmp(a->key, b->key) && !strcmp(a->arch, b->arch) && a->config.family == b->config.family &&
           !memcmp(a->config.p, b->config.p, sizeof a->config.p);
}

static rt_module *find_module(rt_cuctx *cc, const rt_kernel *k)
{
    for (rt_module *m = cc->modules; m; m = m->next)
        if (same_kernel(&m->kernel, k))
            return m;
    return NULL;
}

static rt_cubin *find_cubin(ft_context *ctx, const rt_kernel *k)
{
    for (rt_cubin *b = ctx->cubins; b; b = b->next)
        if (same_kernel(&b->kernel, k))
            return b;
    return NULL;
}

int rt_cubin_load(ft_context *ctx, const gen_config *c, const char *source, const char *device_arch, rt_cubin *out)
{
    gen_cache_id id;
    if (gen_cache_id_init(c->family, source, device_arch, &id) != 0)
        return 0;
    if (!ctx->user)
        return rt_disk_cache_load(ctx->cache_dir, &id, out);
    db_binary want, b;
    db_binary_init(&want, id.key, id.arch, id.nvrtc_version, id.options, id.source);
    char err[256];
    if (db_binary_lookup(ctx->user, &want, &b, NULL, err, sizeof err) != 1)
        return rt_disk_cache_load(ctx->cache_dir, &id, out);
    out->image = b.cubin;
    out->size = b.cubin_size;
    snprintf(out->origin, sizeof out->origin, "CUBIN from the database (NVRTC %s)", b.nvrtc_version);
    return 1;
}

void rt_cubin_store(ft_context *ctx, const gen_config *c, const char *source, const char *device_arch,
                    const gen_binary *bin)
{
    gen_cache_id id;
    if (gen_cache_id_init(c->family, source, device_arch, &id) != 0)
        return;
    rt_disk_cache_store(ctx->cache_dir, &id, bin->cubin, bin->cubin_size);
    if (!ctx->user || !ctx->user_writable)
        return;
    db_kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.family, sizeof k.family, "%s", c->family->name);
    gen_source_hash(source, k.source_hash);
    memcpy(k.p, c->p, sizeof k.p);
    db_binary b;
    db_binary_init(&b, id.key, id.arch, id.nvrtc_version, id.options, id.source);
    b.cubin = bin->cubin;
    b.cubin_size = bin->cubin_size;
    b.registers = bin->registers;
    b.spill_store_bytes = bin->spill_store_bytes;
    b.spill_load_bytes = bin->spill_load_bytes;
    b.stack_frame_bytes = bin->stack_frame_bytes;
    b.static_smem_bytes = bin->static_smem_bytes;
    b.compile_seconds = bin->compile_seconds;
    int64_t kernel_id;
    char err[512];
    if (db_kernel_upsert(ctx->user, &k, &kernel_id, err, sizeof err) == 0)
        db_binary_put(ctx->user, kernel_id, &b, NULL, err, sizeof err);
}

/* The CUBIN of c (kernel k) for a GPU of device_arch: with stored_ok, from the database or the
 * cache on disk (*stored 1), else compiled for k's target and stored, replacing what was there.
 * OUT: *out (image malloc'ed). */
static ft_status obtain(ft_context *ctx, const char *func, const gen_config *c, const char *source,
                        const rt_kernel *k, const char *device_arch, int stored_ok, rt_cubin *out, int *stored)
{
    *stored = stored_ok && rt_cubin_load(ctx, c, source, device_arch, out);
    if (*stored)
        return FT_OK;
    gen_binary bin;
    char *err = malloc(RT_ERR_LEN);
    if (!err)
        return rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
    if (gen_compile(source, k->arch, &bin, err, RT_ERR_LEN) != 0) {
        ft_status s = rt_fail(ctx, FT_ERR_COMPILE, "%s: compiling %s for %s failed: %s", func, c->family->name,
                              device_arch, err);
        free(err);
        return s;
    }
    free(err);
    rt_cubin_store(ctx, c, source, device_arch, &bin);
    out->image = bin.cubin;
    out->size = bin.cubin_size;
    bin.cubin = NULL;
    snprintf(out->origin, sizeof out->origin, "compiled with NVRTC %s in %.2f s", bin.nvrtc_version,
             bin.compile_seconds);
    gen_binary_free(&bin);
    return FT_OK;
}

ft_status rt_module_get(ft_context *ctx, const char *func, const cu_driver *cu, rt_cuctx *cc, const gen_config *c,
                        const rt_module **out)
{
    char *source = gen_expand(c);
    if (!source)
        return rt_fail(ctx, FT_ERR_INTERNAL, "%s: the %s template is not embedded in this build", func,
                       c->family->name);
    gen_cache_id id;
    if (gen_cache_id_init(c->family, source, cc->info.arch, &id) != 0) {
        free(source);
        return rt_fail(ctx, FT_ERR_INTERNAL, "%s: family %s does not run on %s", func, c->family->name,
                       cc->info.arch);
    }
    rt_kernel k = { .config = *c };
    memcpy(k.key, id.key, sizeof k.key);
    memcpy(k.arch, id.arch, sizeof k.arch);

    pthread_mutex_lock(&ctx->lock);
    rt_module *m = find_module(cc, &k);
    rt_cubin cubin = { .image = NULL };
    const rt_cubin *kept = m ? NULL : find_cubin(ctx, &k);
    if (kept) {   /* compiled for another context of this process: copy, the lock is dropped next */
        cubin = *kept;
        cubin.image = malloc(kept->size);
        if (cubin.image)
            memcpy(cubin.image, kept->image, kept->size);
        snprintf(cubin.origin, sizeof cubin.origin, "%.70s, for another context", kept->origin);
    }
    pthread_mutex_unlock(&ctx->lock);
    if (m) {
        free(source);
        *out = m;
        return FT_OK;
    }
    if (kept && !cubin.image) {
        free(source);
        return rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
    }
    int stored = 0;
    ft_status s = kept ? FT_OK : obtain(ctx, func, c, source, &k, cc->info.arch, 1, &cubin, &stored);
    if (s != FT_OK) {
        free(source);
        return s;
    }

    rt_module *fresh = calloc(1, sizeof *fresh);
    if (!fresh) {
        free(source);
        free(cubin.image);
        return rt_fail(ctx, FT_ERR_OUT_OF_MEMORY, "%s: out of memory", func);
    }
    const char *what;
    CUresult rc = ln_module_load(cu, c, cubin.image, &fresh->module, &what);
    if (rc != CUDA_SUCCESS && stored) {
        /* A stored CUBIN the driver refuses (damaged, or of a driver it no longer takes): compiled
         * again and stored in its place, so that it does not fail every later process too. */
        free(cubin.image);
        cubin.image = NULL;
        s = obtain(ctx, func, c, source, &k, cc->info.arch, 0, &cubin, &stored);
        if (s != FT_OK) {
            free(source);
            free(fresh);
            return s;
        }
        rc = ln_module_load(cu, c, cubin.image, &fresh->module, &what);
    }
    free(source);
    if (rc != CUDA_SUCCESS) {
        free(fresh);
        free(cubin.image);
        return rt_fail_cuda(ctx, func, what, rc);
    }
    fresh->kernel = k;
    snprintf(fresh->origin, sizeof fresh->origin, "%s", cubin.origin);

    pthread_mutex_lock(&ctx->lock);
    m = find_module(cc, &k);
    if (!m) {   /* ours is the one: publish it, and keep the CUBIN for other contexts */
        fresh->next = cc->modules;
        cc->modules = fresh;
        m = fresh;
        fresh = NULL;
        rt_cubin *b = find_cubin(ctx, &k) ? NULL : malloc(sizeof *b);
        if (b) {
            *b = cubin;
            b->kernel = k;
            b->next = ctx->cubins;
            ctx->cubins = b;
            cubin.image = NULL;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    if (fresh) {   /* another thread loaded the same module meanwhile */
        cu->ModuleUnload(fresh->module);
        free(fresh);
    }
    free(cubin.image);
    *out = m;
    return FT_OK;
}

void rt_modules_free(ft_context *ctx, const cu_driver *cu)
{
    for (rt_cuctx *c = atomic_load(&ctx->contexts); c;) {
        rt_cuctx *next = atomic_load(&c->next);
        int pushed = cu && c->modules && cu->CtxPushCurrent(c->context) == CUDA_SUCCESS;
        for (rt_module *m = c->modules; m;) {
            rt_module *mn = m->next;
            if (pushed)
                cu->ModuleUnload(m->module);
            free(m);
            m = mn;
        }
        if (pushed) {
            CUcontext popped;
            cu->CtxPopCurrent(&popped);
        }
        free(c);
        c = next;
    }
    atomic_store(&ctx->contexts, NULL);
    for (rt_cubin *b = ctx->cubins; b;) {
        rt_cubin *next = b->next;
        free(b->image);
        free(b);
        b = next;
    }
    ctx->cubins = NULL;
}
