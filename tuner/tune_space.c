/* Loading a space file in this process: run it, collect its spaces, read and enumerate each one;
 * and the small helpers of tune_space.h (target descriptions, the set's destructor). The loader's
 * layers: tune_space_bound.c (the public entry, a child process with a deadline) -> tune_space.c
 * -> enum -> lua (the sandbox) -> parse, grid -> values, never back up. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "tune_space_enum_internal.h"
#include "tune_space_load_internal.h"
#include "tune_space_lua_internal.h"
#include "tune_space_parse_internal.h"

/* ---- targets and names ------------------------------------------------------------------- */

int tune_device_default(tune_device *dev, const char *arch)
{
    /* What a sweep on a machine without a GPU assumes: the arch's typical GPU (gen_arch.c). */
    const gen_arch *found = gen_arch_find(arch), *a = found ? found : gen_arch_find("sm_90");
    memset(dev, 0, sizeof *dev);
    snprintf(dev->name, sizeof dev->name, "%s (assumed)", a->typical_gpu);
    snprintf(dev->arch, sizeof dev->arch, "%s", a->name);
    dev->cc_major = a->cc_major;
    dev->cc_minor = a->cc_minor;
    dev->sm_count = a->typical_sms;
    dev->smem_per_block_optin = a->smem_limit;
    dev->real = 0;
    return found ? 0 : -1;
}

long tune_space_set_count(const tune_space_set *set)
{
    long n = 0;
    for (int i = 0; set && i < set->space_count; i++)
        for (int j = 0; j < set->spaces[i].workload_count; j++)
            n += set->spaces[i].workloads[j].count;
    return n;
}

void tune_space_set_free(tune_space_set *set)
{
    if (!set)
        return;
    for (int i = 0; i < set->space_count; i++) {
        for (int j = 0; j < set->spaces[i].workload_count; j++)
            free(set->spaces[i].workloads[j].configs);
        free(set->spaces[i].workloads);
    }
    free(set->spaces);
    free(set);
}

/* ---- loading ------------------------------------------------------------------------------ */

typedef struct load_job {
    tune_space_set *set;
    char *err;
    size_t len;
    int failed;                 /* err holds the reason */
} load_job;

/* Records the reason of a failed load; returns -1. */
static int fail(load_job *job, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(job->err, job->len, fmt, ap);
    va_end(ap);
    job->failed = 1;
    return -1;
}

/* A table space{} made, or one with a template: a space rather than a list of them. */
static int is_space(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (tune_lua_space_pos(L, idx))
        return 1;
    lua_pushstring(L, "template");
    const int has = lua_rawget(L, idx) != LUA_TNIL;
    lua_pop(L, 1);
    return has;
}

/* Appends the value at idx to the list at list: a space as itself, a list of spaces item by item
 * (lists of lists too, a few levels deep). */
static void add_spaces(lua_State *L, int list, int idx, int depth)
{
    idx = lua_absindex(L, idx);
    if (lua_istable(L, idx) && depth < 4 && !is_space(L, idx) && lua_rawlen(L, idx) > 0) {
        const lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, idx, i);
            add_spaces(L, list, -1, depth + 1);
            lua_pop(L, 1);
        }
    } else {
        lua_pushvalue(L, idx);
        lua_rawseti(L, list, (lua_Integer)lua_rawlen(L, list) + 1);
    }
}

/* Reads and enumerates the space at idx as the set's next space. */
static int load_space(lua_State *L, load_job *job, int idx, int number, const char *pos)
{
    tune_space_set *set = job->set;
    char label[32], msg[2048];
    snprintf(label, sizeof label, "space %d", number);
    tune_spec *spec = tune_spec_push(L);
    const int spec_idx = lua_gettop(L);
    if (tune_spec_read(L, idx, spec_idx, label, msg, sizeof msg))
        return fail(job, "%s: %s", pos, msg);
    snprintf(spec->space.defined_at, sizeof spec->space.defined_at, "%s", pos);
    if (!spec->space.name[0])
        snprintf(spec->space.name, sizeof spec->space.name, "%s#%d", spec->space.family->name, number);
    for (int i = 0; i < set->space_count; i++)
        if (!strcmp(set->spaces[i].name, spec->space.name))
            return fail(job, "%s: two spaces are named '%s' (the other at %s)", pos, spec->space.name,
                        set->spaces[i].defined_at);
    if (!spec->workload_count) {   /* captured problems: it takes none of them (tune_space_load_captured) */
        lua_pop(L, 1);
        return 0;
    }
    tune_space *space = &set->spaces[set->space_count++];
    *space = spec->space;
    space->workloads = calloc((size_t)spec->workload_count, sizeof *space->workloads);
    space->workload_count = 0;
    if (!space->workloads)
        return fail(job, "%s: out of memory", pos);
    for (int wi = 0; wi < spec->workload_count; wi++) {
        space->workload_count++;   /* before filling, so the set's destructor frees a partial one */
        if (tune_spec_enumerate(L, spec_idx, wi, &space->workloads[wi], job->err, job->len))
            return job->failed = 1, -1;   /* err holds the reason */
    }
    lua_pop(L, 1);
    return 0;
}

/* Every space of what the chunk returned (at index 2) or declared, read and enumerated into the
 * set. Returns 0, or -1 (job->err says why). */
static int collect_spaces(lua_State *L, load_job *job)
{
    const tune_ctx *ctx = tune_lua_ctx(L);
    char where[TUNE_POS_LEN];
    snprintf(where, sizeof where, "%s:%d", ctx->chunk_src, ctx->chunk_line);
    lua_newtable(L);
    const int list = lua_gettop(L);
    if (lua_isnil(L, 2)) {
        tune_lua_push_declared(L);
        const lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, i);
            add_spaces(L, list, -1, 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        if (!lua_rawlen(L, list))
            return fail(job, "%s: the file declares no space (call space{...} or return a list of spaces)",
                        where);
    } else if (lua_istable(L, 2)) {
        lua_pushnil(L);
        if (!lua_next(L, 2))
            return fail(job, "%s: the file returns an empty list of spaces", where);
        lua_pop(L, 2);
        add_spaces(L, list, 2, 0);
    } else {
        return fail(job, "%s: the file returns a %s; return a space, a list of spaces, or nothing (and declare "
                    "them with space{...})", where, luaL_typename(L, 2));
    }
    const int n = (int)lua_rawlen(L, list);
    job->set->spaces = calloc((size_t)n, sizeof *job->set->spaces);
    if (!job->set->spaces)
        return fail(job, "%s: out of memory", where);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, list, i);
        const int idx = lua_gettop(L);
        if (!lua_istable(L, idx))
            return fail(job, "%s: item %d of the returned list is a %s, not a space", where, i,
                        luaL_typename(L, idx));
        const char *recorded = tune_lua_space_pos(L, idx);
        char pos[TUNE_POS_LEN];
        snprintf(pos, sizeof pos, "%s", recorded ? recorded : where);
        if (load_space(L, job, idx, i, pos))
            return -1;
        lua_settop(L, list);
    }
    const tune_captured *cap = tune_lua_ctx(L)->captured;
    if (cap && !job->set->space_count)
        return fail(job, "%s: no space takes any of the %d captured problems (each space takes those of its "
                    "direction, dtypes and head dims)", where, cap->count);
    return 0;
}

/* Runs protected, so an error of the Lua API (out of memory) cannot escape: arguments job (light
 * userdata) and what the chunk returned. */
static int collect(lua_State *L)
{
    collect_spaces(L, lua_touserdata(L, 1));
    return 0;
}

/* "file:line: " of the last line the hooks saw, or "file: " before the first. */
static void seen_where(const tune_ctx *ctx, char *buf, size_t len)
{
    if (ctx->seen->line > 0)
        snprintf(buf, len, "%s:%d: ", ctx->chunk_src, ctx->seen->line);
    else
        snprintf(buf, len, "%s: ", ctx->chunk_src);
}

int tune_space_load_here(const char *path, const tune_device *dev, const tune_space_limits *lim,
                         const tune_captured *captured, tune_seen *seen, tune_space_set **out, char *err, size_t len)
{
    err[0] = '\0';
    *out = NULL;
    tune_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.seen = seen;
    ctx.captured = captured && captured->count > 0 ? captured : NULL;
    if (dev)
        ctx.device = *dev;
    else
        tune_device_default(&ctx.device, "sm_90");
    ctx.smem_limit = ctx.device.smem_per_block_optin > 0 ? ctx.device.smem_per_block_optin
                                                          : gen_smem_limit_for_arch(ctx.device.arch);
    tune_space_set *set = calloc(1, sizeof *set);
    lua_State *L = set ? tune_lua_open(&ctx, lim) : NULL;
    if (!L) {
        free(set);
        snprintf(err, len, "%s: out of memory", path);
        return -1;
    }
    snprintf(set->path, sizeof set->path, "%s", path);
    set->device = ctx.device;
    load_job job = { .set = set, .err = err, .len = len };

    snprintf(ctx.chunk_src, sizeof ctx.chunk_src, "%s", path);
    int rc = luaL_loadfilex(L, path, "t");
    if (rc == LUA_OK) {
        /* Lua's name of the file, as in its messages, for ours (and a parent waiting on a child). */
        lua_Debug ar;
        lua_pushvalue(L, -1);
        if (lua_getinfo(L, ">S", &ar))
            snprintf(ctx.chunk_src, sizeof ctx.chunk_src, "%s", ar.short_src);
        memcpy(ctx.seen->src, ctx.chunk_src, sizeof ctx.seen->src);
        tune_lua_track_lines(L, 1);
        rc = lua_pcall(L, 0, 1, 0);
        tune_lua_track_lines(L, 0);
    }
    char where[TUNE_POS_LEN + 8], spent[128];
    if (rc != LUA_OK) {
        const char *reason;
        if (tune_lua_is_skip(L, -1, &reason)) {
            lua_getfield(L, -1, "where");
            fail(&job, "%sskip() may only be called inside where() (reason given: %s)", lua_tostring(L, -1),
                 reason);
        } else if (rc == LUA_ERRMEM) {
            seen_where(&ctx, where, sizeof where);
            fail(&job, "%sthe space file needs more than %zu MiB of memory", where, ctx.mem_limit >> 20);
        } else if (lua_type(L, -1) == LUA_TSTRING) {
            fail(&job, "%s", lua_tostring(L, -1));
        } else {
            seen_where(&ctx, where, sizeof where);
            fail(&job, "%sthe space file failed with a %s value (error() wants a string)", where,
                 luaL_typename(L, -1));
        }
    } else {
        lua_pushcfunction(L, collect);
        lua_pushlightuserdata(L, &job);
        lua_rotate(L, -3, 2);   /* collect, job, result */
        rc = lua_pcall(L, 2, 0, 0);
        if (rc == LUA_ERRMEM && !job.failed) {
            seen_where(&ctx, where, sizeof where);
            fail(&job, "%sout of memory while enumerating (more than %zu MiB)", where, ctx.mem_limit >> 20);
        } else if (rc != LUA_OK && !job.failed) {
            seen_where(&ctx, where, sizeof where);
            fail(&job, "%s%s", where, lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "error");
        }
    }
    /* A budget spent is a failure even when the file caught the error and returned at once. */
    if (!job.failed && tune_lua_spent(&ctx, spent, sizeof spent)) {
        seen_where(&ctx, where, sizeof where);
        fail(&job, "%s%s", where, spent);
    }
    lua_close(L);
    if (job.failed) {
        tune_space_set_free(set);
        return -1;
    }
    *out = set;
    return 0;
}
