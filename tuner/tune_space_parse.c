/* Reading a space from Lua into a spec: every key checked for its type and meaning, with messages
 * that name the key and the value (the caller puts the file and line in front); and the names of
 * the templates a space may use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>

#include "tune_space_lua_internal.h"
#include "tune_space_parse_internal.h"
#include "tune_space_values_internal.h"

#define PRODUCT_MAX 1000000L   /* configurations per workload; more is a mistake, not a space */
#define WORKLOADS_MAX 10000    /* per space; keeps the duplicate check quadratic but quick */
#define SPEC_META "flashtune.spec"

/* ---- templates ------------------------------------------------------------------------------- */

void tune_family_names(char *buf, size_t len)
{
    int count = 0;
    const gen_family *const *list = gen_family_list(&count);
    buf[0] = '\0';
    for (int i = 0; i < count; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", list[i]->name);
    }
}

const gen_family *tune_family_find(const char *name, char *err, size_t len)
{
    const gen_family *f = gen_family_find(name);
    if (!f) {
        char known[256];
        tune_family_names(known, sizeof known);
        snprintf(err, len, "unknown template '%s' (known: %s)", name, known);
    }
    return f;
}

/* ---- the spec userdata ---------------------------------------------------------------------- */

static int spec_gc(lua_State *L)
{
    tune_spec *s = lua_touserdata(L, 1);
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        free(s->values[i]);
        s->values[i] = NULL;
        s->value_count[i] = 0;
    }
    free(s->workloads);
    s->workloads = NULL;
    s->workload_count = 0;
    return 0;
}

tune_spec *tune_spec_push(lua_State *L)
{
    tune_spec *s = lua_newuserdatauv(L, sizeof *s, 1);
    memset(s, 0, sizeof *s);
    if (luaL_newmetatable(L, SPEC_META)) {
        lua_pushcfunction(L, spec_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return s;
}

/* ---- fixed and params -------------------------------------------------------------------------- */

/* How a workload decides param, for the message refusing it in fixed or params. */
static const char *workload_source(gen_param param)
{
    switch (param) {
    case GEN_DTYPE: return "each workload's dtype";
    case GEN_HEAD_DIM: return "each workload's head_dim";
    case GEN_HEAD_DIM_V: return "each workload's head_dim_v";
    case GEN_CAUSAL: return "each workload's mask (causal, window_left, window_right)";
    case GEN_SOFTCAP: return "each workload's softcap";
    case GEN_DATA_DIM:
    case GEN_DATA_DIM_V: return "each workload's head dims (a tuned kernel pads none)";
    case GEN_EVEN_M: return "each workload (seqlen_q % BLOCK_M == 0)";
    case GEN_EVEN_N: return "each workload (seqlen_k % BLOCK_N == 0)";
    case GEN_VARLEN: return "each workload's varlen";
    case GEN_SINKS: return "each workload's sinks";
    case GEN_ALLOW_TF32: return "each workload's tf32";
    default: return "the workload";
    }
}

/* "BLOCK_M, BLOCK_N, ...": the parameters a space of f may fix or search. */
static void settable_params(const gen_family *f, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < GEN_PARAM_COUNT; i++)
        if ((f->params & GEN_BIT(i)) && !(TUNE_WORKLOAD_PARAMS & GEN_BIT(i))) {
            const size_t used = strlen(buf);
            snprintf(buf + used, len - used, "%s%s", used ? ", " : "", gen_param_name((gen_param)i));
        }
}

/* Checks that every key of the table at idx (fixed or params) names a parameter exactly. */
static int check_param_names(lua_State *L, int idx, const char *label, const char *table, const gen_family *f,
                             char *err, size_t len)
{
    char worst[128] = "";
    idx = lua_absindex(L, idx);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            snprintf(err, len, "%s: %s maps parameter names to %s, got a %s key", label, table,
                     strcmp(table, "params") ? "values" : "lists", luaL_typename(L, -2));
            lua_pop(L, 2);
            return -1;
        }
        const char *key = lua_tostring(L, -2);
        const int p = gen_param_lookup(key);
        if ((p < 0 || strcmp(gen_param_name((gen_param)p), key)) && (!worst[0] || strcmp(key, worst) < 0))
            snprintf(worst, sizeof worst, "%s", key);
    }
    if (!worst[0])
        return 0;
    const int p = gen_param_lookup(worst);
    char list[256];
    settable_params(f, list, sizeof list);
    if (p >= 0)
        snprintf(err, len, "%s: unknown parameter '%s' in %s (did you mean %s?)", label, worst, table,
                 gen_param_name((gen_param)p));
    else
        snprintf(err, len, "%s: unknown parameter '%s' in %s (%s takes %s)", label, worst, table, f->name, list);
    return -1;
}

/* The parameter may be fixed or searched in a space of f. */
static int check_settable(gen_param p, const gen_family *f, const char *label, const char *table, char *err,
                          size_t len)
{
    const char *name = gen_param_name(p);
    if (TUNE_WORKLOAD_PARAMS & GEN_BIT(p)) {
        snprintf(err, len, "%s: %s.%s: %s comes from %s; remove it from %s", label, table, name, name,
                 workload_source(p), table);
        return -1;
    }
    if (!(f->params & GEN_BIT(p))) {
        snprintf(err, len, "%s: %s.%s: %s does not use %s", label, table, name, f->name, name);
        return -1;
    }
    return 0;
}

static int read_fixed(lua_State *L, int idx, const char *label, tune_spec *s, char *err, size_t len)
{
    const int type = lua_getfield(L, idx, "fixed");
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (type != LUA_TTABLE) {
        snprintf(err, len, "%s: fixed must be a table of NAME = value, got %s", label, luaL_typename(L, -1));
        return -1;
    }
    const int t = lua_gettop(L);
    if (check_param_names(L, t, label, "fixed", s->space.family, err, len))
        return -1;
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        const char *name = gen_param_name((gen_param)i);
        if (lua_getfield(L, t, name) != LUA_TNIL) {
            char what[192];
            snprintf(what, sizeof what, "%s: fixed.%s", label, name);
            if (check_settable((gen_param)i, s->space.family, label, "fixed", err, len) ||
                tune_read_param(L, -1, (gen_param)i, what, &s->fixed[i], err, len))
                return -1;
            s->fixed_mask |= GEN_BIT(i);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

/* params.NAME at the top of the stack: a non-empty list of distinct values. */
static int read_list(lua_State *L, gen_param p, const char *label, tune_spec *s, char *err, size_t len)
{
    const char *name = gen_param_name(p);
    if (!lua_istable(L, -1)) {
        snprintf(err, len, "%s: params.%s must be a list of %s, got %s%s", label, name,
                 gen_param_get(p)->values ? "values" : "integers", luaL_typename(L, -1),
                 lua_type(L, -1) == LUA_TNUMBER ? " (put a single value in fixed)" : "");
        return -1;
    }
    const lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    if (n < 1) {
        snprintf(err, len, "%s: params.%s is an empty list", label, name);
        return -1;
    }
    if (n > PRODUCT_MAX) {
        snprintf(err, len, "%s: params.%s has %lld values (at most %ld)", label, name, (long long)n, PRODUCT_MAX);
        return -1;
    }
    s->values[p] = malloc((size_t)n * sizeof(int));
    if (!s->values[p]) {
        snprintf(err, len, "%s: out of memory", label);
        return -1;
    }
    for (lua_Integer i = 1; i <= n; i++) {
        char what[192];
        snprintf(what, sizeof what, "%s: params.%s[%lld]", label, name, (long long)i);
        lua_rawgeti(L, -1, i);
        int v;
        if (tune_read_param(L, -1, p, what, &v, err, len))
            return -1;
        lua_pop(L, 1);
        for (int j = 0; j < s->value_count[p]; j++)
            if (s->values[p][j] == v) {
                snprintf(err, len, "%s: params.%s lists %d twice", label, name, v);
                return -1;
            }
        s->values[p][s->value_count[p]++] = v;
    }
    return 0;
}

static int read_params(lua_State *L, int idx, const char *label, tune_spec *s, char *err, size_t len)
{
    const int type = lua_getfield(L, idx, "params");
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (type != LUA_TTABLE) {
        snprintf(err, len, "%s: params must be a table of NAME = {values}, got %s", label, luaL_typename(L, -1));
        return -1;
    }
    const int t = lua_gettop(L);
    if (check_param_names(L, t, label, "params", s->space.family, err, len))
        return -1;
    long product = 1;
    for (int i = 0; i < GEN_PARAM_COUNT; i++) {
        if (lua_getfield(L, t, gen_param_name((gen_param)i)) != LUA_TNIL) {
            if (check_settable((gen_param)i, s->space.family, label, "params", err, len))
                return -1;
            if (s->fixed_mask & GEN_BIT(i)) {
                snprintf(err, len, "%s: %s is both in fixed and in params", label, gen_param_name((gen_param)i));
                return -1;
            }
            if (read_list(L, (gen_param)i, label, s, err, len))
                return -1;
            s->space.searched |= GEN_BIT(i);
            product *= s->value_count[i];
            if (product > PRODUCT_MAX) {
                snprintf(err, len, "%s: params make more than %ld configurations per workload; narrow the lists",
                         label, PRODUCT_MAX);
                return -1;
            }
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

/* ---- workloads, strategy, bench ------------------------------------------------------------------ */

/* Workloads at the top of the stack: items are workloads or lists of them (from grid). */
static int read_workloads(lua_State *L, const char *label, tune_spec *s, char *err, size_t len)
{
    const int t = lua_gettop(L);
    const lua_Integer n = (lua_Integer)lua_rawlen(L, t);
    if (n == 0) {
        const int single = lua_getfield(L, t, "dtype") != LUA_TNIL;
        lua_pop(L, 1);
        if (single)
            snprintf(err, len, "%s: workloads must be a list of workloads; put the single workload in { }", label);
        else
            snprintf(err, len, "%s has no workloads (the list is empty)", label);
        return -1;
    }
    /* Count first, to allocate once. */
    long total = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, t, i);
        if (lua_istable(L, -1) && lua_rawgeti(L, -1, 1) != LUA_TNIL)
            total += (long)lua_rawlen(L, -2);
        else
            total++;
        lua_settop(L, t);
    }
    if (total > WORKLOADS_MAX) {
        snprintf(err, len, "%s has %ld workloads (at most %d)", label, total, WORKLOADS_MAX);
        return -1;
    }
    s->workloads = calloc((size_t)total, sizeof *s->workloads);
    if (!s->workloads) {
        snprintf(err, len, "%s: out of memory", label);
        return -1;
    }
    const gen_family *f = s->space.family;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, t, i);
        int nested = 0;
        if (lua_istable(L, -1)) {
            nested = lua_rawgeti(L, -1, 1) != LUA_TNIL;
            lua_pop(L, 1);
        }
        const lua_Integer m = nested ? (lua_Integer)lua_rawlen(L, -1) : 1;
        for (lua_Integer j = 1; j <= m; j++) {
            char what[192], item[96];
            if (nested) {
                lua_rawgeti(L, -1, j);
                snprintf(item, sizeof item, "workloads[%lld][%lld]", (long long)i, (long long)j);
            } else {
                lua_pushvalue(L, -1);
                snprintf(item, sizeof item, "workloads[%lld]", (long long)i);
            }
            snprintf(what, sizeof what, "%s: %s", label, item);
            db_workload *w = &s->workloads[s->workload_count];
            if (tune_read_workload(L, -1, what, w, err, len))
                return -1;
            lua_pop(L, 1);
            char desc[128];
            tune_workload_str(w, desc, sizeof desc);
            if (!(f->dtypes & (1u << w->dtype))) {
                snprintf(err, len, "%s (%s): dtype %s is not supported by %s", what, desc, gen_dtype_name(w->dtype),
                         f->name);
                return -1;
            }
            for (int k = 0; k < s->workload_count; k++)
                if (!memcmp(&s->workloads[k], w, sizeof *w)) {
                    snprintf(err, len, "%s (%s) repeats workload %d", what, desc, k + 1);
                    return -1;
                }
            s->workload_count++;
        }
        lua_settop(L, t);
    }
    return 0;
}

/* 1 when the space's own workloads have w's dtype and head dims: the captured problems a space
 * takes are of the shapes it was written for. */
static int own_shape(const tune_spec *s, const db_workload *w)
{
    for (int i = 0; i < s->workload_count; i++) {
        const db_workload *o = &s->workloads[i];
        if (o->dtype == w->dtype && o->head_dim == w->head_dim && o->head_dim_v == w->head_dim_v)
            return 1;
    }
    return 0;
}

/* With captured problems (tune_space_load_captured), the space's own workloads give way to the
 * captured ones it takes, in their order: its family's direction, decode shapes where its own
 * are all decode shapes (else none), the dtypes and head dims of its own, the features its
 * family compiles in; each problem once (a repeatable backward is tuned as the plain one).
 * None may be taken: the space is then left out of the set. 0, or -1 out of memory. */
static int take_captured(const tune_captured *cap, tune_spec *s, const char *label, char *err, size_t len)
{
    const gen_family *f = s->space.family;
    int decode = s->workload_count > 0;
    for (int i = 0; i < s->workload_count; i++)
        decode &= db_workload_decode(&s->workloads[i]);
    db_workload *list = calloc((size_t)cap->count, sizeof *list);
    if (!list) {
        snprintf(err, len, "%s: out of memory", label);
        return -1;
    }
    int n = 0;
    for (int i = 0; i < cap->count && n < WORKLOADS_MAX; i++) {
        const db_workload *w = &cap->rows[i].workload;
        const int features_ok = (!w->softcap || (f->params & GEN_BIT(GEN_SOFTCAP))) &&
                                (!w->varlen || (f->params & GEN_BIT(GEN_VARLEN))) &&
                                (!w->sinks || (f->params & GEN_BIT(GEN_SINKS))) &&
                                (!w->tf32 || (f->params & GEN_BIT(GEN_ALLOW_TF32))) &&
                                (!db_workload_masked(w) || (f->params & GEN_BIT(GEN_CAUSAL)));
        if ((w->op == DB_OP_BWD) != (f->backward != 0) || db_workload_decode(w) != decode || !own_shape(s, w) ||
            !features_ok)
            continue;
        db_workload own = *w;
        own.op = 0;   /* a space's workloads carry no direction: its template's decides (as Lua's) */
        int seen = 0;
        for (int k = 0; k < n && !seen; k++)
            seen = !memcmp(&list[k], &own, sizeof own);
        if (!seen)
            list[n++] = own;
    }
    free(s->workloads);
    s->workloads = list;
    s->workload_count = n;
    return 0;
}

static const char *const strategy_keys[] = { "kind", "n", "seed", "keep", "warmup_ms", "rep_ms", "budget_s", NULL };
static const char *const bench_keys[] = { "warmup_ms", "rep_ms", "timeout_s", NULL };
static const char *const confirm_keys[] = { "top", "within", "rounds", NULL };

static const char *const strategy_names[] = { "exhaustive", "random", "prune", "halving", "guided" };

const char *tune_strategy_name(tune_strategy_kind kind)
{
    return (unsigned)kind < sizeof strategy_names / sizeof strategy_names[0] ? strategy_names[kind] : "?";
}

int tune_strategy_takes_budget(tune_strategy_kind kind)
{
    return kind == TUNE_HALVING || kind == TUNE_GUIDED;
}

/* A key of the strategy table that its kind does not take. */
static int refuse_key(lua_State *L, int idx, const char *label, const char *key, const char *owner,
                      char *err, size_t len)
{
    const int present = lua_getfield(L, idx, key) != LUA_TNIL;
    lua_pop(L, 1);
    if (present)
        snprintf(err, len, "%s: strategy.%s is only for kind %s", label, key, owner);
    return present ? -1 : 0;
}

static int read_strategy(lua_State *L, int idx, const char *label, tune_spec *s, char *err, size_t len)
{
    tune_strategy *st = &s->space.strategy;
    *st = (tune_strategy){ .kind = TUNE_EXHAUSTIVE, .n = 20, .seed = 1, .keep = 0.25,
                           .first = { .warmup_ms = 5, .rep_ms = 20 } };
    const int type = lua_getfield(L, idx, "strategy");
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    char what[192];
    snprintf(what, sizeof what, "%s: strategy", label);
    const char *kind = NULL;
    const int t = lua_gettop(L);
    if (type == LUA_TSTRING) {
        kind = lua_tostring(L, t);
    } else if (type == LUA_TTABLE) {
        if (tune_check_keys(L, t, strategy_keys, what, err, len))
            return -1;
        if (lua_getfield(L, t, "kind") != LUA_TSTRING) {
            snprintf(err, len, "%s.kind must be \"exhaustive\", \"random\", \"prune\", \"halving\" or \"guided\", got %s", what,
                     luaL_typename(L, -1));
            return -1;
        }
        kind = lua_tostring(L, -1);   /* the strategy table holds it */
        lua_pop(L, 1);
    } else {
        snprintf(err, len, "%s must be a table {kind = ...} or a kind name, got %s", what, luaL_typename(L, t));
        return -1;
    }
    int found = -1;
    for (int i = 0; i < (int)(sizeof strategy_names / sizeof strategy_names[0]) && found < 0; i++)
        if (!strcmp(kind, strategy_names[i]))
            found = i;
    if (found < 0) {
        snprintf(err, len, "%s.kind = '%s' is unknown (exhaustive, random, prune, halving, guided)", what, kind);
        return -1;
    }
    st->kind = (tune_strategy_kind)found;
    if (type == LUA_TTABLE) {
        int seed = 1;
        const int cuts = st->kind == TUNE_PRUNE || st->kind == TUNE_HALVING || st->kind == TUNE_GUIDED;
        const int budgeted = tune_strategy_takes_budget(st->kind);
        if (st->kind != TUNE_RANDOM && refuse_key(L, t, label, "n", "\"random\"", err, len))
            return -1;
        if (st->kind != TUNE_RANDOM && !budgeted && refuse_key(L, t, label, "seed", "\"random\", \"halving\" or \"guided\"", err, len))
            return -1;
        if (!cuts && (refuse_key(L, t, label, "keep", "\"prune\", \"halving\" or \"guided\"", err, len) ||
                      refuse_key(L, t, label, "warmup_ms", "\"prune\", \"halving\" or \"guided\"", err, len) ||
                      refuse_key(L, t, label, "rep_ms", "\"prune\", \"halving\" or \"guided\"", err, len)))
            return -1;
        if (!budgeted && refuse_key(L, t, label, "budget_s", "\"halving\" or \"guided\"", err, len))
            return -1;
        if (tune_field_int(L, t, what, "n", 0, 20, 1, &st->n, err, len) ||
            tune_field_int(L, t, what, "seed", 0, 1, 0, &seed, err, len) ||
            tune_field_number(L, t, what, "keep", 0, 0, 1, &st->keep, err, len) ||
            tune_field_number(L, t, what, "warmup_ms", 0, 1, 60000, &st->first.warmup_ms, err, len) ||
            tune_field_number(L, t, what, "rep_ms", 0, 0, 60000, &st->first.rep_ms, err, len) ||
            tune_field_number(L, t, what, "budget_s", 0, 0, 7 * 86400, &st->budget_s, err, len))
            return -1;
        st->seed = (unsigned long long)seed;
    }
    lua_pop(L, 1);
    return 0;
}

/* The space's optional table field `key` (bench, confirm) pushed: 1 when it is a table (at the
 * top, its keys checked against `keys`; `what` names it for the caller's messages), 0 when
 * absent, -1 (err, naming the field and the type given) otherwise. The caller pops it. */
static int optional_table(lua_State *L, int idx, const char *label, const char *key, const char *const *keys,
                          const char *usage, char *what, size_t what_len, char *err, size_t len)
{
    const int type = lua_getfield(L, idx, key);
    snprintf(what, what_len, "%s: %s", label, key);
    if (type == LUA_TNIL)
        return 0;
    if (type != LUA_TTABLE) {
        snprintf(err, len, "%s must be a table %s, got %s", what, usage, luaL_typename(L, -1));
        return -1;
    }
    return tune_check_keys(L, lua_gettop(L), keys, what, err, len) ? -1 : 1;
}

static int read_bench(lua_State *L, int idx, const char *label, tune_spec *s, char *err, size_t len)
{
    tune_bench *b = &s->space.bench;
    *b = (tune_bench){ .warmup_ms = 25, .rep_ms = 100, .timeout_s = 10 };
    char what[192];
    const int found = optional_table(L, idx, label, "bench", bench_keys, "{warmup_ms = ..., rep_ms = ..., "
                                     "timeout_s = ...}", what, sizeof what, err, len);
    const int t = lua_gettop(L);
    if (found < 0 ||
        (found && (tune_field_number(L, t, what, "warmup_ms", 0, 1, 60000, &b->warmup_ms, err, len) ||
                   tune_field_number(L, t, what, "rep_ms", 0, 0, 60000, &b->rep_ms, err, len) ||
                   tune_field_number(L, t, what, "timeout_s", 0, 0, 3600, &b->timeout_s, err, len))))
        return -1;
    lua_pop(L, 1);
    s->space.strategy.first.timeout_s = b->timeout_s;
    return 0;
}

static int read_confirm(lua_State *L, int idx, const char *label, tune_spec *s, char *err, size_t len)
{
    tune_confirm *c = &s->space.confirm;
    *c = (tune_confirm){ .top = 4, .within = 0.05, .rounds = 0 };
    char what[192];
    const int found = optional_table(L, idx, label, "confirm", confirm_keys, "{top = ..., within = ..., "
                                     "rounds = ...}", what, sizeof what, err, len);
    const int t = lua_gettop(L);
    if (found < 0 ||
        (found && (tune_field_int(L, t, what, "top", 0, 4, 2, &c->top, err, len) ||
                   tune_field_number(L, t, what, "within", 0, 1, 1, &c->within, err, len) ||
                   tune_field_int(L, t, what, "rounds", 0, 3, 0, &c->rounds, err, len))))
        return -1;
    if (c->top > 16 || c->rounds > 16) {
        snprintf(err, len, "%s.%s = %d is out of range (at most 16)", what, c->top > 16 ? "top" : "rounds",
                 c->top > 16 ? c->top : c->rounds);
        return -1;
    }
    lua_pop(L, 1);
    return 0;
}

/* ---- the space ---------------------------------------------------------------------------------- */

static const char *const space_keys[] = {
    "name", "template", "fixed", "params", "where", "workloads", "strategy", "bench", "confirm", NULL,
};

int tune_spec_read(lua_State *L, int idx, int spec_idx, const char *label, char *err, size_t len)
{
    idx = lua_absindex(L, idx);
    spec_idx = lua_absindex(L, spec_idx);
    tune_spec *s = lua_touserdata(L, spec_idx);
    const int top = lua_gettop(L);
    char lab[TUNE_NAME_LEN + 16];
    snprintf(lab, sizeof lab, "%s", label);
    int rc = -1;
    if (!lua_istable(L, idx)) {
        snprintf(err, len, "%s must be a table, got %s", lab, luaL_typename(L, idx));
        goto out;
    }
    int type = lua_getfield(L, idx, "name");
    if (type == LUA_TSTRING) {
        const char *name = tune_plain_string(L, -1);
        if (!name) {
            snprintf(err, len, "%s: name holds a NUL byte", lab);
            goto out;
        }
        if (strlen(name) >= TUNE_NAME_LEN || !name[0]) {
            snprintf(err, len, "%s: name '%s' must have 1 to %d characters", lab, name, TUNE_NAME_LEN - 1);
            goto out;
        }
        snprintf(s->space.name, sizeof s->space.name, "%s", name);
        snprintf(lab, sizeof lab, "space '%s'", name);
    } else if (type != LUA_TNIL) {
        snprintf(err, len, "%s: name must be a string, got %s", lab, luaL_typename(L, -1));
        goto out;
    }
    lua_pop(L, 1);
    if (tune_check_keys(L, idx, space_keys, lab, err, len))
        goto out;

    type = lua_getfield(L, idx, "template");
    if (type != LUA_TSTRING) {
        char known[256];
        tune_family_names(known, sizeof known);
        if (type == LUA_TNIL)
            snprintf(err, len, "%s: template is missing (one of: %s)", lab, known);
        else
            snprintf(err, len, "%s: template must be a template name (%s), got %s", lab, known,
                     luaL_typename(L, -1));
        goto out;
    }
    char why[512];
    if (!tune_plain_string(L, -1)) {
        snprintf(err, len, "%s: template '%s' holds a NUL byte after it", lab, lua_tostring(L, -1));
        goto out;
    }
    s->space.family = tune_family_find(lua_tostring(L, -1), why, sizeof why);
    if (!s->space.family) {
        snprintf(err, len, "%s: %s", lab, why);
        goto out;
    }
    lua_pop(L, 1);

    if (read_fixed(L, idx, lab, s, err, len) || read_params(L, idx, lab, s, err, len))
        goto out;

    type = lua_getfield(L, idx, "where");
    if (type == LUA_TFUNCTION) {
        lua_setiuservalue(L, spec_idx, 1);
        s->has_where = 1;
    } else if (type != LUA_TNIL) {
        snprintf(err, len, "%s: where must be a function(p, dev, w), got %s", lab, luaL_typename(L, -1));
        goto out;
    } else {
        lua_pop(L, 1);
    }

    type = lua_getfield(L, idx, "workloads");
    if (type == LUA_TNIL) {
        snprintf(err, len, "%s has no workloads (give workloads = { {dtype = ..., ...}, ... } or grid{...})", lab);
        goto out;
    }
    if (type != LUA_TTABLE) {
        snprintf(err, len, "%s: workloads must be a list of workloads, got %s", lab, luaL_typename(L, -1));
        goto out;
    }
    if (read_workloads(L, lab, s, err, len))
        goto out;
    lua_pop(L, 1);
    const tune_captured *cap = tune_lua_ctx(L)->captured;
    if (cap && take_captured(cap, s, lab, err, len))
        goto out;

    rc = read_strategy(L, idx, lab, s, err, len) || read_bench(L, idx, lab, s, err, len) ||
                 read_confirm(L, idx, lab, s, err, len)
             ? -1
             : 0;
out:
    lua_settop(L, top);
    return rc;
}
