/* The interpreter a space file runs in: the data libraries only, limits on memory and
 * instructions (sticky, so pcall cannot swallow them), setmetatable without __gc, and the helpers
 * spaces use (device, space, range, pow2, smem_bytes, skip; grid is in tune_space_grid.c). */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "tune_space_grid_internal.h"
#include "tune_space_lua_internal.h"
#include "tune_space_parse_internal.h"
#include "tune_space_values_internal.h"

#define HOOK_EVERY 1000                 /* instructions between count-hook events */
#define LIST_MAX 1000000                /* items range() and pow2() may build */

/* Registry keys. */
#define KEY_SKIP "flashtune.skip"           /* metatable of what skip() throws */
#define KEY_POS "flashtune.pos"             /* space table -> "file:line" (weak keys) */
#define KEY_DECLARED "flashtune.declared"   /* list of the tables space{} made */
#define KEY_DEVICE "flashtune.device"       /* the device table */

tune_ctx *tune_lua_ctx(lua_State *L)
{
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

/* Lua's allocator with a cap, so a runaway file fails with "not enough memory", not the machine.
 * A refusal is remembered: the hook then fails every event, so pcall cannot catch it and retry. */
static void *ctx_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    tune_ctx *ctx = ud;
    if (!ptr)
        osize = 0;   /* then osize tells the type of object, not a size */
    if (nsize == 0) {
        free(ptr);
        ctx->mem_used -= osize;
        return NULL;
    }
    if (nsize > osize && ctx->mem_used - osize + nsize > ctx->mem_limit) {
        ctx->mem_spent = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p)
        ctx->mem_used = ctx->mem_used - osize + nsize;
    return p;
}

int tune_lua_spent(const tune_ctx *ctx, char *msg, size_t len)
{
    if (ctx->mem_spent)
        snprintf(msg, len, "the space file needs more than %zu MiB of memory", ctx->mem_limit >> 20);
    else if (ctx->ticks_left <= 0)
        snprintf(msg, len, "the space file ran more than %ld%s Lua instructions (an endless loop?)",
                 ctx->instructions >= 1000000 ? ctx->instructions / 1000000 : ctx->instructions,
                 ctx->instructions >= 1000000 ? " million" : "");
    else
        return 0;
    return 1;
}

/* Remembers the line running now (level 0) or of its caller (level 1), for the messages of limits
 * that strike inside C: a refused allocation, the wall clock. Once a budget is spent the line
 * stays where it was spent, whatever the file runs after catching the error. */
static void see_line(lua_State *L, tune_ctx *ctx, int level)
{
    lua_Debug ar;
    char msg[8];
    if (!tune_lua_spent(ctx, msg, sizeof msg) && lua_getstack(L, level, &ar) && lua_getinfo(L, "l", &ar) &&
        ar.currentline > 0)
        ctx->seen->line = ar.currentline;
}

/* Counts instructions (an endless loop ends the load), notes the line running at each count and
 * call event, and, while the chunk runs, remembers the line the main chunk returns from: errors
 * about tables it returned point there. Count, call and return hooks, not a line hook, so tight
 * loops run at full speed. Once a budget is spent the hook fires at every instruction and fails
 * each time, naming the line where it was spent: an error caught by pcall is raised again at the
 * next instruction. */
static void hook(lua_State *L, lua_Debug *ar)
{
    tune_ctx *ctx = tune_lua_ctx(L);
    ctx->seen->progress++;
    if (ar->event == LUA_HOOKCOUNT) {
        see_line(L, ctx, 0);
        if (ctx->ticks_left > 0)
            ctx->ticks_left--;
        char msg[128];
        if (tune_lua_spent(ctx, msg, sizeof msg)) {
            lua_sethook(L, hook, lua_gethookmask(L), 1);
            if (ctx->seen->line > 0)
                lua_pushfstring(L, "%s:%d: %s", ctx->chunk_src, ctx->seen->line, msg);
            else {
                luaL_where(L, 0);
                lua_pushstring(L, msg);
                lua_concat(L, 2);
            }
            lua_error(L);
        }
        return;
    }
    if (ar->event == LUA_HOOKCALL) {
        see_line(L, ctx, 1);   /* the caller's line: a C function has none */
        return;
    }
    /* The main chunk is the outermost function: nothing above it on the stack. */
    lua_Debug outer;
    if (ar->event == LUA_HOOKRET && ctx->track_lines && !lua_getstack(L, 1, &outer) &&
        lua_getinfo(L, "Sl", ar) && !strcmp(ar->what, "main")) {
        ctx->chunk_line = ar->currentline;
        snprintf(ctx->chunk_src, sizeof ctx->chunk_src, "%s", ar->short_src);
    }
}

/* setmetatable without __gc: Lua runs finalizers with hooks off, out of reach of the limits (an
 * endless loop in one would hang the load, or lua_close). The base function, upvalue 1, does
 * the rest. */
static int l_setmetatable(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "setmetatable: a metatable with __gc is not allowed in a space file (Lua runs "
                              "finalizers outside the instruction limit)");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* ---- skip(reason) ----------------------------------------------------------------------- */

/* Throws a marked table: where()'s caller tells it from an error, and a helper function several
 * calls deep inside where() can skip too. */
static int l_skip(lua_State *L)
{
    const char *reason = luaL_optstring(L, 1, "skip() without a reason");
    lua_createtable(L, 0, 2);
    lua_pushstring(L, reason);
    lua_setfield(L, -2, "reason");
    luaL_where(L, 1);   /* "file:line: " of the call, for a skip() outside where() */
    lua_setfield(L, -2, "where");
    luaL_setmetatable(L, KEY_SKIP);
    return lua_error(L);
}

int tune_lua_is_skip(lua_State *L, int idx, const char **reason)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx))
        return 0;
    luaL_getmetatable(L, KEY_SKIP);
    const int is_skip = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (is_skip) {
        lua_getfield(L, idx, "reason");
        *reason = lua_tostring(L, -1);   /* the table holds it */
        lua_pop(L, 1);
        if (!*reason)
            *reason = "skip()";
    }
    return is_skip;
}

/* ---- range(a, b [, step]) and pow2(a, b) --------------------------------------------------- */

/* Bounds of range() and pow2(), far from overflow and far above any tile or length. */
#define LIST_BOUND ((lua_Integer)1 << 40)

static int l_range(lua_State *L)
{
    const lua_Integer a = luaL_checkinteger(L, 1), b = luaL_checkinteger(L, 2);
    const lua_Integer step = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, step != 0, 3, "range: step must not be 0");
    if (a < -LIST_BOUND || a > LIST_BOUND || b < -LIST_BOUND || b > LIST_BOUND)
        return luaL_error(L, "range(%I, %I): bounds must lie within +-2^40", a, b);
    const lua_Integer n = (b - a) / step >= 0 ? (b - a) / step + 1 : 0;
    if (n > LIST_MAX)
        return luaL_error(L, "range(%I, %I, %I) would have %I items (at most %d)", a, b, step, n, LIST_MAX);
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 0; i < n; i++) {
        lua_pushinteger(L, a + i * step);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int l_pow2(lua_State *L)
{
    const lua_Integer a = luaL_checkinteger(L, 1), b = luaL_checkinteger(L, 2);
    if (a < 1 || (a & (a - 1)))
        return luaL_error(L, "pow2(%I, %I): %I is not a power of two", a, b, a);
    if (b > LIST_BOUND)
        return luaL_error(L, "pow2(%I, %I): the end must be at most 2^40", a, b);
    lua_newtable(L);
    int n = 0;
    for (lua_Integer v = a; v <= b; v *= 2) {
        lua_pushinteger(L, v);
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

/* ---- smem_bytes(p [, template]) --------------------------------------------------------- */

static int l_smem_bytes(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *name = luaL_optstring(L, 2, NULL);
    if (!name) {
        lua_getfield(L, 1, "template");
        name = lua_tostring(L, -1);
        if (!name)
            return luaL_error(L, "smem_bytes: p.template is missing (or pass the template as the second argument)");
    }
    char err[512];
    const gen_family *f = tune_family_find(name, err, sizeof err);
    if (!f)
        return luaL_error(L, "smem_bytes: %s", err);
    gen_config c;
    gen_config_init(&c, f);
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const char *pname = gen_param_name((gen_param)i);
        if (lua_getfield(L, 1, pname) != LUA_TNIL) {
            char what[64];
            snprintf(what, sizeof what, "smem_bytes: p.%s", pname);
            if (tune_read_param(L, -1, (gen_param)i, what, &c.p[i], err, sizeof err))
                return luaL_error(L, "%s", err);
        }
        lua_pop(L, 1);
    }
    lua_Integer most = 0, sum = 0;
    for (int i = 0; i < f->entry_count; i++) {
        const gen_entry *e = &f->entries[i];
        if (!gen_entry_used(&c, e) || !e->smem_bytes)
            continue;
        const lua_Integer bytes = (lua_Integer)e->smem_bytes(c.p);
        sum += bytes;
        if (bytes > most)
            most = bytes;
    }
    lua_pushinteger(L, most);
    lua_pushinteger(L, sum);
    return 2;
}

/* ---- space{...} ---------------------------------------------------------------------------- */

/* Checks the space at once, so its errors point at this call, then declares it. */
static int l_space(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    char err[1024];
    tune_spec_push(L);   /* index 2; the collector frees it */
    if (tune_spec_read(L, 1, 2, "space", err, sizeof err))
        return luaL_error(L, "%s", err);
    lua_Debug ar;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0)
        lua_pushfstring(L, "%s:%d", ar.short_src, ar.currentline);
    else
        lua_pushstring(L, "?");
    lua_getfield(L, LUA_REGISTRYINDEX, KEY_POS);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_getfield(L, LUA_REGISTRYINDEX, KEY_DECLARED);
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_settop(L, 1);
    return 1;
}

const char *tune_lua_space_pos(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    lua_getfield(L, LUA_REGISTRYINDEX, KEY_POS);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    const char *pos = lua_tostring(L, -1);   /* the weak table holds it while the space lives */
    lua_pop(L, 2);
    return pos;
}

void tune_lua_push_declared(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, KEY_DECLARED);
}

void tune_lua_push_device(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, KEY_DEVICE);
}

/* ---- opening -------------------------------------------------------------------------------- */

static void make_device(lua_State *L, const tune_device *d)
{
    lua_createtable(L, 0, 8);
    lua_pushstring(L, d->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, d->arch);
    lua_setfield(L, -2, "arch");
    lua_pushinteger(L, d->cc_major * 10 + d->cc_minor);
    lua_setfield(L, -2, "cc");
    lua_pushinteger(L, d->cc_major);
    lua_setfield(L, -2, "cc_major");
    lua_pushinteger(L, d->cc_minor);
    lua_setfield(L, -2, "cc_minor");
    lua_pushinteger(L, d->sm_count);
    lua_setfield(L, -2, "sm_count");
    lua_pushinteger(L, tune_lua_ctx(L)->smem_limit);
    lua_setfield(L, -2, "smem_per_block");
    lua_pushboolean(L, d->real);
    lua_setfield(L, -2, "real");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, KEY_DEVICE);
    lua_setglobal(L, "device");
}

/* Runs inside lua_pcall: a failure to allocate is an error, not a panic. */
static int open_protected(lua_State *L)
{
    static const luaL_Reg libs[] = {
        { LUA_GNAME, luaopen_base },           { LUA_TABLIBNAME, luaopen_table },
        { LUA_STRLIBNAME, luaopen_string },    { LUA_MATHLIBNAME, luaopen_math },
        { LUA_UTF8LIBNAME, luaopen_utf8 },
    };
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    /* A data language: no file access, and no binary chunks through load. */
    static const char *const removed[] = { "dofile", "loadfile", "load" };
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed[i]);
    }
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, l_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    /* Lua 5.4 seeds math.random from the clock; a space must enumerate the same way every run. */
    lua_getglobal(L, LUA_MATHLIBNAME);
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, 1);
    lua_call(L, 1, 0);
    lua_pop(L, 1);

    static const luaL_Reg helpers[] = {
        { "space", l_space }, { "grid", tune_lua_grid },      { "range", l_range },
        { "pow2", l_pow2 },   { "smem_bytes", l_smem_bytes }, { "skip", l_skip },
    };
    for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++) {
        lua_pushcfunction(L, helpers[i].func);
        lua_setglobal(L, helpers[i].name);
    }
    luaL_newmetatable(L, KEY_SKIP);
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, KEY_POS);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, KEY_DECLARED);
    make_device(L, &tune_lua_ctx(L)->device);
    return 0;
}

void tune_lua_track_lines(lua_State *L, int on)
{
    tune_ctx *ctx = tune_lua_ctx(L);
    char msg[8];
    ctx->track_lines = on;
    lua_sethook(L, hook, LUA_MASKCOUNT | LUA_MASKCALL | (on ? LUA_MASKRET : 0),
                tune_lua_spent(ctx, msg, sizeof msg) ? 1 : HOOK_EVERY);
}

lua_State *tune_lua_open(tune_ctx *ctx, const tune_space_limits *lim)
{
    ctx->mem_limit = lim->memory;
    ctx->instructions = lim->instructions;
    ctx->ticks_left = lim->instructions / HOOK_EVERY > 0 ? lim->instructions / HOOK_EVERY : 1;
    if (!ctx->seen)
        ctx->seen = &ctx->own_seen;
    lua_State *L = lua_newstate(ctx_alloc, ctx);
    if (!L)
        return NULL;
    lua_pushcfunction(L, open_protected);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        lua_close(L);
        return NULL;
    }
    tune_lua_track_lines(L, 0);
    return L;
}
