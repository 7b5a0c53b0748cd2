/* Reading Lua values for a space: integers, numbers, parameter values, tables with known keys,
 * and workloads (and their names, tune_workload_str), each error naming the key and the value. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "tune_space_values_internal.h"

/* ---- scalars --------------------------------------------------------------------------------- */


const char *tune_plain_string(lua_State *L, int idx)
{
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    return s && strlen(s) == n ? s : NULL;
}

int tune_read_int(lua_State *L, int idx, const char *what, int *out, char *err, size_t len)
{
    if (lua_type(L, idx) != LUA_TNUMBER) {
        snprintf(err, len, "%s must be an integer, got %s", what, luaL_typename(L, idx));
        return -1;
    }
    int is_int = 0;
    const lua_Integer v = lua_tointegerx(L, idx, &is_int);
    if (!is_int) {
        snprintf(err, len, "%s = %g is not an integer", what, (double)lua_tonumber(L, idx));
        return -1;
    }
    if (v < INT_MIN || v > INT_MAX) {
        snprintf(err, len, "%s = %lld is out of range", what, (long long)v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int tune_read_param(lua_State *L, int idx, gen_param param, const char *what, int *out, char *err,
                    size_t len)
{
    char why[256];
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        if (tune_read_int(L, idx, what, out, err, len))
            return -1;
        break;
    case LUA_TBOOLEAN:
        *out = lua_toboolean(L, idx);
        break;
    case LUA_TSTRING:
        if (!tune_plain_string(L, idx)) {
            snprintf(err, len, "%s: the string holds a NUL byte", what);
            return -1;
        }
        if (gen_param_parse(param, lua_tostring(L, idx), out, why, sizeof why)) {
            snprintf(err, len, "%s: %s", what, why);
            return -1;
        }
        break;
    default:
        snprintf(err, len, "%s must be %s, got %s", what,
                 gen_param_get(param)->values ? "an integer or a value's name" : "an integer",
                 luaL_typename(L, idx));
        return -1;
    }
    /* The table's range: a value no template can take is a mistake in the file, not a skip. */
    if (gen_param_check(param, *out, why, sizeof why)) {
        snprintf(err, len, "%s: %s", what, why);
        return -1;
    }
    return 0;
}

int tune_read_number(lua_State *L, int idx, const char *what, double *out, char *err, size_t len)
{
    if (lua_type(L, idx) != LUA_TNUMBER) {
        snprintf(err, len, "%s must be a number, got %s", what, luaL_typename(L, idx));
        return -1;
    }
    *out = (double)lua_tonumber(L, idx);
    return 0;
}

/* "a, b, c": the names of a NULL-terminated list. */
static void join(const char *const *names, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; names[i]; i++) {
        const size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    }
}

int tune_check_keys(lua_State *L, int idx, const char *const *known, const char *what, char *err, size_t len)
{
    char worst[128] = "";
    lua_Integer item = 0;
    idx = lua_absindex(L, idx);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            if (!item)
                item = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : -1;
            continue;
        }
        const char *key = tune_plain_string(L, -2);
        if (!key) {
            snprintf(err, len, "%s: a key holds a NUL byte ('%s\\0...')", what, lua_tostring(L, -2));
            lua_pop(L, 2);
            return -1;
        }
        int found = 0;
        for (int i = 0; known[i] && !found; i++)
            found = !strcmp(key, known[i]);
        if (!found && (!worst[0] || strcmp(key, worst) < 0))
            snprintf(worst, sizeof worst, "%s", key);
    }
    char list[256];
    join(known, list, sizeof list);
    if (worst[0]) {
        snprintf(err, len, "%s: unknown key '%s' (known: %s)", what, worst, list);
        return -1;
    }
    if (item) {
        snprintf(err, len, "%s: unexpected list item [%lld]; it takes name = value keys (%s)", what,
                 (long long)item, list);
        return -1;
    }
    return 0;
}

int tune_field_int(lua_State *L, int idx, const char *what, const char *key, int required, int def, int lo,
                   int *out, char *err, size_t len)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", what, key);
    const int type = lua_getfield(L, idx, key);
    int rc = 0;
    if (type == LUA_TNIL) {
        if (required) {
            snprintf(err, len, "%s is missing", name);
            rc = -1;
        }
        *out = def;
    } else if (!(rc = tune_read_int(L, -1, name, out, err, len)) && *out < lo) {
        snprintf(err, len, "%s = %d must be at least %d", name, *out, lo);
        rc = -1;
    }
    lua_pop(L, 1);
    return rc;
}

int tune_field_number(lua_State *L, int idx, const char *what, const char *key, double lo, int lo_ok,
                      double hi, double *out, char *err, size_t len)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", what, key);
    int rc = 0;
    if (lua_getfield(L, idx, key) != LUA_TNIL && !(rc = tune_read_number(L, -1, name, out, err, len)) &&
        (*out != *out || *out < lo || (*out == lo && !lo_ok) || *out > hi)) {   /* NaN too */
        snprintf(err, len, "%s = %g is out of range (%s %g, at most %g)", name, *out, lo_ok ? ">=" : ">", lo, hi);
        rc = -1;
    }
    lua_pop(L, 1);
    return rc;
}

/* ---- workloads ------------------------------------------------------------------------------ */

void tune_workload_str(const db_workload *w, char *buf, size_t len)
{
    char dv[24] = "", s[32];
    if (w->head_dim_v != w->head_dim)
        snprintf(dv, sizeof dv, " dv=%d", w->head_dim_v);
    if (w->seqlen_q == w->seqlen_k)
        snprintf(s, sizeof s, "%d", w->seqlen_q);
    else
        snprintf(s, sizeof s, "%d/%d", w->seqlen_q, w->seqlen_k);
    char hk[24] = "", win[40] = "", vl[24] = "";
    if (w->heads_k)
        snprintf(hk, sizeof hk, " hk=%d", w->heads_k);
    if (w->window)
        snprintf(win, sizeof win, " win=%d,%d", w->window_left, w->window_right);
    if (w->varlen)
        snprintf(vl, sizeof vl, " varlen=%d/8", w->varlen);
    snprintf(buf, len, "%s d=%d%s %s%s%s b=%d h=%d%s s=%s%s%s%s%s", gen_dtype_name(w->dtype), w->head_dim, dv,
             w->causal ? "causal" : "noncausal", win, w->bottom_right ? " br" : "", w->batch, w->heads, hk, s,
             w->softcap ? " softcap" : "", vl, w->sinks ? " sinks" : "", w->tf32 ? " tf32" : "");
}

static const char *const workload_keys[] = {
    "dtype", "head_dim", "head_dim_v", "causal", "batch", "heads", "seqlen", "seqlen_q", "seqlen_k", "heads_k",
    "softcap", "window_left", "window_right", "bottom_right", "varlen", "sinks", "tf32", NULL,
};

/* An optional 0/1 field of a workload (a boolean too), read as param's values: 0 when absent. */
static int read_flag(lua_State *L, int idx, const char *what, const char *key, gen_param param, int *out,
                     char *err, size_t len)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", what, key);
    if (lua_getfield(L, idx, key) != LUA_TNIL && tune_read_param(L, -1, param, name, out, err, len))
        return -1;
    lua_pop(L, 1);
    if (*out != 0 && *out != 1) {
        snprintf(err, len, "%s = %d must be 0 or 1 (or a boolean)", name, *out);
        return -1;
    }
    return 0;
}

/* varlen = fill, in (0, 1]: a variable-length batch whose tokens fill that share of batch x the
 * longest lengths, kept as its bucket (db_varlen_bucket's eighths); lengths must exist for it. */
static int read_varlen(lua_State *L, int idx, const char *what, db_workload *w, char *err, size_t len)
{
    double fill = 0;
    if (tune_field_number(L, idx, what, "varlen", 0, 0, 1, &fill, err, len))
        return -1;
    if (fill == 0)
        return 0;
    w->varlen = (int)ceil(8 * fill - 1e-9);
    int *lengths = malloc(2 * (size_t)w->batch * sizeof *lengths);
    char why[256];
    const int rc = lengths ? tune_varlen_lengths(w, lengths, lengths + w->batch, why, sizeof why) : -1;
    free(lengths);
    if (rc)
        snprintf(err, len, "%s.varlen = %g: %s", what, fill, lengths ? why : "out of memory");
    return rc;
}

/* The mask: causal, window_left / window_right (either makes a local window; -1 or absent: no
 * limit on that side), bottom_right; kept in the database's one form (db_workload_set_mask). */
static int read_mask(lua_State *L, int idx, const char *what, db_workload *w, char *err, size_t len)
{
    int left = -1, right = -1, br = 0;
    int window = lua_getfield(L, idx, "window_left") != LUA_TNIL;
    window |= lua_getfield(L, idx, "window_right") != LUA_TNIL;
    lua_pop(L, 2);
    if (tune_field_int(L, idx, what, "window_left", 0, -1, -1, &left, err, len) ||
        tune_field_int(L, idx, what, "window_right", 0, -1, -1, &right, err, len) ||
        read_flag(L, idx, what, "bottom_right", GEN_CAUSAL, &br, err, len))
        return -1;
    if (w->causal && right > 0) {
        snprintf(err, len, "%s.window_right = %d with causal: a causal mask sees no key right of the diagonal",
                 what, right);
        return -1;
    }
    if (window && left < 0 && right < 0) {
        snprintf(err, len, "%s: window_left and window_right are both -1: a window limits at least one side", what);
        return -1;
    }
    db_workload key;
    tune_workload_db(w, DB_OP_FWD, &key);
    db_workload_set_mask(&key, w->causal, br, left, right);
    if (br && !key.bottom_right) {
        snprintf(err, len, "%s.bottom_right with %s: it moves nothing (a mask on lengths that differ, or varlen)",
                 what, db_workload_masked(&key) ? "equal lengths" : "no mask");
        return -1;
    }
    w->causal = key.causal, w->window = key.window, w->window_left = key.window_left;
    w->window_right = key.window_right, w->bottom_right = key.bottom_right;
    return 0;
}

int tune_read_workload(lua_State *L, int idx, const char *what, db_workload *w, char *err, size_t len)
{
    idx = lua_absindex(L, idx);
    memset(w, 0, sizeof *w);
    if (!lua_istable(L, idx)) {
        snprintf(err, len, "%s must be a workload table {dtype = ..., head_dim = ..., ...}, got %s", what,
                 luaL_typename(L, idx));
        return -1;
    }
    if (tune_check_keys(L, idx, workload_keys, what, err, len))
        return -1;
    char name[256];
    snprintf(name, sizeof name, "%s.dtype", what);
    if (lua_getfield(L, idx, "dtype") == LUA_TNIL) {
        snprintf(err, len, "%s is missing", name);
        return -1;
    }
    if (tune_read_param(L, -1, GEN_DTYPE, name, &w->dtype, err, len))
        return -1;
    lua_pop(L, 1);
    if (w->dtype < 0 || w->dtype > 3) {
        snprintf(err, len, "%s = %d is not a dtype (f32, f16, bf16, f64)", name, w->dtype);
        return -1;
    }
    if (tune_field_int(L, idx, what, "head_dim", 1, 0, 1, &w->head_dim, err, len) ||
        tune_field_int(L, idx, what, "head_dim_v", 0, w->head_dim, 1, &w->head_dim_v, err, len) ||
        tune_field_int(L, idx, what, "batch", 1, 0, 1, &w->batch, err, len) ||
        tune_field_int(L, idx, what, "heads", 1, 0, 1, &w->heads, err, len))
        return -1;
    if (read_flag(L, idx, what, "causal", GEN_CAUSAL, &w->causal, err, len) ||
        read_flag(L, idx, what, "softcap", GEN_SOFTCAP, &w->softcap, err, len) ||
        read_flag(L, idx, what, "sinks", GEN_SINKS, &w->sinks, err, len) ||
        read_flag(L, idx, what, "tf32", GEN_ALLOW_TF32, &w->tf32, err, len))
        return -1;
    if (w->tf32 && w->dtype != 0) {
        snprintf(err, len, "%s.tf32 = 1 with dtype %s: only f32 has products to round to TF32", what,
                 gen_dtype_name(w->dtype));
        return -1;
    }
    /* Grouped-query attention: heads_k key/value heads dividing heads (as many: none, stored 0). */
    if (tune_field_int(L, idx, what, "heads_k", 0, 0, 0, &w->heads_k, err, len))
        return -1;
    if (w->heads_k < 0 || w->heads_k > w->heads || (w->heads_k && w->heads % w->heads_k)) {
        snprintf(err, len, "%s.heads_k = %d must divide heads = %d (0 or heads: no grouping)", what, w->heads_k,
                 w->heads);
        return -1;
    }
    if (w->heads_k == w->heads)
        w->heads_k = 0;
    int seqlen = 0;
    if (tune_field_int(L, idx, what, "seqlen", 0, 0, 1, &seqlen, err, len) ||
        tune_field_int(L, idx, what, "seqlen_q", !seqlen, seqlen, 1, &w->seqlen_q, err, len) ||
        tune_field_int(L, idx, what, "seqlen_k", 0, w->seqlen_q, 1, &w->seqlen_k, err, len))
        return -1;
    if (seqlen && (w->seqlen_q != seqlen || w->seqlen_k != seqlen)) {
        snprintf(err, len, "%s: give seqlen, or seqlen_q and seqlen_k, not both", what);
        return -1;
    }
    char why[160];
    if (gen_check_problem_sizes(w->batch, w->heads, w->seqlen_q, w->seqlen_k, why, sizeof why)) {
        snprintf(err, len, "%s: %s", what, why);
        return -1;
    }
    return read_varlen(L, idx, what, w, err, len) || read_mask(L, idx, what, w, err, len) ? -1 : 0;
}

void tune_push_workload(lua_State *L, const db_workload *w)
{
    lua_createtable(L, 0, 14);
    lua_pushstring(L, gen_dtype_name(w->dtype));
    lua_setfield(L, -2, "dtype");
    const struct {
        const char *key;
        int value;
    } fields[] = {
        { "head_dim", w->head_dim }, { "head_dim_v", w->head_dim_v }, { "causal", w->causal },
        { "batch", w->batch },       { "heads", w->heads },           { "seqlen_q", w->seqlen_q },
        { "seqlen_k", w->seqlen_k }, { "heads_k", w->heads_k },       { "softcap", w->softcap },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        lua_pushinteger(L, fields[i].value);
        lua_setfield(L, -2, fields[i].key);
    }
    /* The rest only where set, as tune_read_workload reads them back. */
    if (w->window) {
        lua_pushinteger(L, w->window_left);
        lua_setfield(L, -2, "window_left");
        lua_pushinteger(L, w->window_right);
        lua_setfield(L, -2, "window_right");
    }
    if (w->bottom_right) {
        lua_pushinteger(L, 1);
        lua_setfield(L, -2, "bottom_right");
    }
    if (w->varlen) {
        lua_pushnumber(L, db_varlen_fill(w->varlen));
        lua_setfield(L, -2, "varlen");
    }
    if (w->sinks) {
        lua_pushinteger(L, 1);
        lua_setfield(L, -2, "sinks");
    }
    if (w->tf32) {
        lua_pushinteger(L, 1);
        lua_setfield(L, -2, "tf32");
    }
}
