/* Enumeration of a space for one workload: the cross product of its lists, each configuration
 * completed by the fixed values and the workload, checked by gen_validate and where(), then
 * sampled when the strategy is random. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "tune_space_enum_internal.h"
#include "tune_space_lua_internal.h"
#include "tune_space_values_internal.h"

/* "BLOCK_M=64 BLOCK_N=32 NUM_WARPS=4": the parameters of c the workload does not set. */
static void describe(const gen_config *c, char *buf, size_t len)
{
    gen_config_format(c, GEN_FORMAT_TUNABLES, buf, len);
}

/* Counts a skipped configuration under its reason; the first distinct reasons are kept. */
static void record_skip(tune_candidates *out, const char *prefix, const char *reason)
{
    char text[TUNE_REASON_LEN];
    snprintf(text, sizeof text, "%s%s", prefix, reason);
    for (int i = 0; i < out->reason_count; i++)
        if (!strcmp(out->reasons[i].reason, text)) {
            out->reasons[i].count++;
            return;
        }
    if (out->reason_count < TUNE_REASONS_KEPT) {
        tune_skip *s = &out->reasons[out->reason_count++];
        snprintf(s->reason, sizeof s->reason, "%s", text);
        s->count = 1;
    }
}

/* p as where() sees it: every parameter by name, the template and the dtype's name. */
static void push_config(lua_State *L, const gen_config *c)
{
    lua_createtable(L, 0, GEN_PARAM_COUNT + 2);
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        lua_pushinteger(L, c->p[i]);
        lua_setfield(L, -2, gen_param_name((gen_param)i));
    }
    lua_pushstring(L, c->family->name);
    lua_setfield(L, -2, "template");
    lua_pushstring(L, gen_dtype_name(c->p[GEN_DTYPE]));
    lua_setfield(L, -2, "dtype");
}

/* What where() said about c: 1 keep, 0 skip (reason recorded), -1 error in err. */
static int ask_where(lua_State *L, int spec_idx, int w_idx, const tune_spec *s, const gen_config *c,
                     const char *workload, tune_candidates *out, char *err, size_t len)
{
    const int top = lua_gettop(L);
    lua_getiuservalue(L, spec_idx, 1);
    push_config(L, c);
    tune_lua_push_device(L);
    lua_pushvalue(L, w_idx);
    const int status = lua_pcall(L, 3, 2, 0);
    char config[GEN_CONFIG_TEXT] = "";
    if (status != LUA_OK || lua_type(L, -2) != LUA_TBOOLEAN)
        describe(c, config, sizeof config);   /* for the error message */
    int rc = -1;
    const char *reason = NULL;
    if (status != LUA_OK && tune_lua_is_skip(L, -1, &reason)) {
        record_skip(out, "where: ", reason);
        rc = 0;
    } else if (status != LUA_OK) {
        /* Lua puts "file:line:" in front of its errors; error("x", 0) and error({}) have none,
         * so the position of where() itself goes in front of those. */
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        const char *src = tune_lua_ctx(L)->chunk_src;
        const size_t n = strlen(src);
        lua_Debug ar;
        lua_getiuservalue(L, spec_idx, 1);
        lua_getinfo(L, ">S", &ar);
        if (msg && n && !strncmp(msg, src, n) && msg[n] == ':')
            snprintf(err, len, "%s (in where() of space '%s', for %s, workload %s)", msg, s->space.name, config,
                     workload);
        else
            snprintf(err, len, "%s:%d: where() of space '%s' failed: %s (for %s, workload %s)", ar.short_src,
                     ar.linedefined, s->space.name, msg ? msg : luaL_typename(L, -1), config, workload);
    } else if (lua_type(L, -2) == LUA_TBOOLEAN) {
        rc = lua_toboolean(L, -2);
        if (!rc)
            record_skip(out, "where: ", lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "returned false");
    } else {
        lua_Debug ar;
        const char *got = luaL_typename(L, -2);
        lua_getiuservalue(L, spec_idx, 1);
        lua_getinfo(L, ">S", &ar);
        snprintf(err, len, "%s:%d: where() of space '%s' returned %s for %s, workload %s; return true to keep a "
                 "configuration or false, \"reason\" to skip it", ar.short_src, ar.linedefined, s->space.name,
                 lua_isnil(L, -2) ? "nothing" : got, config, workload);
    }
    lua_settop(L, top);
    return rc;
}

/* splitmix64: small, and the same sequence on every machine. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Keeps n of the candidates, in enumeration order (selection sampling). The seed alone drives
 * it, so workloads with the same candidates (one shape, other lengths) share a sample and its
 * compiled kernels. */
static void sample(tune_candidates *out, int n, unsigned long long seed)
{
    if (n >= out->count)
        return;
    uint64_t state = seed;
    int kept = 0;
    for (int i = 0; i < out->count && kept < n; i++)
        if (next_random(&state) % (uint64_t)(out->count - i) < (uint64_t)(n - kept))
            out->configs[kept++] = out->configs[i];
    out->count = kept;
}

static int append(tune_candidates *out, int *cap, const gen_config *c)
{
    if (out->count == *cap) {
        const int grown = *cap ? 2 * *cap : 64;
        gen_config *p = realloc(out->configs, (size_t)grown * sizeof *p);
        if (!p)
            return -1;
        out->configs = p;
        *cap = grown;
    }
    out->configs[out->count++] = *c;
    return 0;
}

int tune_spec_enumerate(lua_State *L, int spec_idx, int wi, tune_candidates *out, char *err, size_t len)
{
    spec_idx = lua_absindex(L, spec_idx);
    const tune_spec *s = lua_touserdata(L, spec_idx);
    const gen_family *f = s->space.family;
    const db_workload *w = &s->workloads[wi];
    const int smem_limit = tune_lua_ctx(L)->smem_limit;
    memset(out, 0, sizeof *out);
    out->workload = *w;
    char workload[128];
    tune_workload_str(w, workload, sizeof workload);

    gen_config base;
    gen_config_init(&base, f);
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        if (s->fixed_mask & GEN_BIT(i))
            base.p[i] = s->fixed[i];
    base.p[GEN_DTYPE] = w->dtype;
    base.p[GEN_HEAD_DIM] = w->head_dim;
    base.p[GEN_HEAD_DIM_V] = w->head_dim_v;
    if (f->params & GEN_BIT(GEN_CAUSAL))
        base.p[GEN_CAUSAL] = db_workload_masked(w);
    if (f->params & GEN_BIT(GEN_SOFTCAP))
        base.p[GEN_SOFTCAP] = w->softcap;
    if (f->params & GEN_BIT(GEN_VARLEN))
        base.p[GEN_VARLEN] = w->varlen != 0;
    if (f->params & GEN_BIT(GEN_SINKS))
        base.p[GEN_SINKS] = w->sinks;
    if (f->params & GEN_BIT(GEN_ALLOW_TF32))
        base.p[GEN_ALLOW_TF32] = w->tf32;
    /* A grouped backward's SPLITS is the problem's (tune_workload_splits): set where a space leaves
     * it; a candidate a space gives another is skipped (it would time a kernel that never runs). */
    const int splits = tune_workload_splits(f, w);
    if (splits && !(s->fixed_mask & GEN_BIT(GEN_SPLITS)))
        base.p[GEN_SPLITS] = splits;

    /* An odometer over the searched parameters, the last one turning fastest. */
    int searched[GEN_PARAM_COUNT], digit[GEN_PARAM_COUNT] = { 0 }, k = 0;
    long total = 1;
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        if (s->value_count[i]) {
            searched[k++] = i;
            total *= s->value_count[i];
        }
    tune_push_workload(L, w);
    const int w_idx = lua_gettop(L);
    int cap = 0, rc = 0;
    char why[TUNE_REASON_LEN];
    for (long n = 0; n < total && !rc; n++) {
        gen_config c = base;
        for (int j = 0; j < k; j++)
            c.p[searched[j]] = s->values[searched[j]][digit[j]];
        gen_config_fit_lengths(&c, w->seqlen_q, w->seqlen_k);
        out->enumerated++;
        tune_lua_ctx(L)->seen->progress++;
        if (splits && c.p[GEN_SPLITS] != splits)
            snprintf(why, sizeof why, "SPLITS=%d: this backward runs with SPLITS=%d, its group's query heads over "
                     "that many blocks a key tile, set by the problem (heads=%d heads_k=%d)", c.p[GEN_SPLITS], splits,
                     w->heads, w->heads_k);
        if ((splits && c.p[GEN_SPLITS] != splits) || gen_validate(&c, smem_limit, why, sizeof why) ||
            gen_check_arch(f, tune_lua_ctx(L)->device.arch, why, sizeof why) ||
            gen_check_problem_heads(&c, w->heads, w->heads_k, why, sizeof why)) {
            out->skipped_invalid++;
            record_skip(out, "", why);
        } else {
            const int keep = s->has_where ? ask_where(L, spec_idx, w_idx, s, &c, workload, out, err, len) : 1;
            if (keep < 0)
                rc = -1;
            else if (!keep)
                out->skipped_where++;
            else if (append(out, &cap, &c)) {
                snprintf(err, len, "%s: out of memory", s->space.defined_at);
                rc = -1;
            }
        }
        for (int j = k - 1; j >= 0; j--) {
            if (++digit[j] < s->value_count[searched[j]])
                break;
            digit[j] = 0;
        }
    }
    lua_pop(L, 1);
    if (rc)
        return -1;
    out->valid = out->count;
    if (!out->count) {
        snprintf(err, len, "%s: space '%s' has no candidate for workload %d (%s): all %ld configurations were "
                 "skipped (%ld by the template's rules, %ld by where); first reason: %s", s->space.defined_at,
                 s->space.name, wi + 1, workload, out->enumerated, out->skipped_invalid, out->skipped_where,
                 out->reason_count ? out->reasons[0].reason : "?");
        return -1;
    }
    if (s->space.strategy.kind == TUNE_RANDOM)
        sample(out, s->space.strategy.n, s->space.strategy.seed);
    return 0;
}
