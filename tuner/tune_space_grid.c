/* grid{...}: the workloads of a cross product of dtypes, head dims, causal flags and lengths, with
 * batch and heads given or derived from a token count and a hidden size (the papers' shapes). */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "tune_space_grid_internal.h"
#include "tune_space_values_internal.h"

#define GRID_MAX 64         /* values per grid key */
#define GRID_TOTAL 10000    /* workloads per grid, as per space */

/* A grid key: a scalar or a list of at most GRID_MAX values, read as parameter param (names
 * and booleans allowed) or, for param < 0, as plain integers. Returns the count, 0 when absent. */
static int grid_values(lua_State *L, const char *key, int param, int values[GRID_MAX])
{
    char what[64], err[512];
    int n = 0, single = 0;
    const int type = lua_getfield(L, 1, key);
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (type != LUA_TTABLE) {
        lua_createtable(L, 1, 0);   /* a scalar: a list of one */
        lua_rotate(L, -2, 1);
        lua_rawseti(L, -2, 1);
        single = 1;
    }
    const lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
    if (len < 1 || len > GRID_MAX)
        return luaL_error(L, "grid: %s must list 1 to %d values, got %I", key, GRID_MAX, len);
    for (int i = 1; i <= (int)len; i++) {
        lua_rawgeti(L, -1, i);
        if (single)
            snprintf(what, sizeof what, "grid: %s", key);
        else
            snprintf(what, sizeof what, "grid: %s[%d]", key, i);
        const int rc = param >= 0 ? tune_read_param(L, -1, (gen_param)param, what, &values[n], err, sizeof err)
                                  : tune_read_int(L, -1, what, &values[n], err, sizeof err);
        if (rc)
            return luaL_error(L, "%s", err);
        if (param < 0 && values[n] < 1)
            return luaL_error(L, "%s = %d must be at least 1", what, values[n]);
        n++;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

/* A scalar grid key (tokens, hidden); 0 when absent. */
static int grid_scalar(lua_State *L, const char *key)
{
    char what[64], err[512];
    int v = 0;
    if (lua_getfield(L, 1, key) != LUA_TNIL) {
        snprintf(what, sizeof what, "grid: %s", key);
        if (tune_read_int(L, -1, what, &v, err, sizeof err))
            return luaL_error(L, "%s", err);
        if (v < 1)
            return luaL_error(L, "grid: %s = %d must be at least 1", key, v);
    }
    lua_pop(L, 1);
    return v;
}

static const char *const grid_keys[] = {
    "dtype", "head_dim", "head_dim_v", "causal", "seqlen", "seqlen_q", "seqlen_k",
    "batch", "heads", "tokens", "hidden", "heads_k", "softcap", "sinks", "tf32", "bottom_right", NULL,
};

/* Every workload of the cross product, dtype outermost and heads (then heads_k) innermost; softcap
 * turns inside causal, sinks inside softcap, tf32 inside sinks; bottom_right the same on all. */
int tune_lua_grid(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    char err[512];
    if (tune_check_keys(L, 1, grid_keys, "grid", err, sizeof err))
        return luaL_error(L, "%s", err);
    int v_dt[GRID_MAX], v_hd[GRID_MAX], v_hdv[GRID_MAX], v_ca[GRID_MAX], v_s[GRID_MAX], v_sq[GRID_MAX],
        v_sk[GRID_MAX], v_b[GRID_MAX], v_h[GRID_MAX], v_hk[GRID_MAX], v_sc[GRID_MAX], v_si[GRID_MAX], v_tf[GRID_MAX];
    const int n_dt = grid_values(L, "dtype", GEN_DTYPE, v_dt);
    const int n_hd = grid_values(L, "head_dim", -1, v_hd);
    const int n_hdv = grid_values(L, "head_dim_v", -1, v_hdv);
    int n_ca = grid_values(L, "causal", GEN_CAUSAL, v_ca);
    const int n_s = grid_values(L, "seqlen", -1, v_s);
    int n_sq = grid_values(L, "seqlen_q", -1, v_sq);
    const int n_sk = grid_values(L, "seqlen_k", -1, v_sk);
    const int n_b = grid_values(L, "batch", -1, v_b);
    const int n_h = grid_values(L, "heads", -1, v_h);
    const int n_hk = grid_values(L, "heads_k", -1, v_hk);   /* each must divide every heads (tune_read_workload) */
    int n_sc = grid_values(L, "softcap", GEN_SOFTCAP, v_sc);
    int n_si = grid_values(L, "sinks", GEN_SINKS, v_si);
    int n_tf = grid_values(L, "tf32", GEN_ALLOW_TF32, v_tf);
    /* One diagonal for the whole grid (a grid of both is two grids), and only where it moves one:
     * a causal mask on every workload (unequal lengths are checked per workload, as for a table). */
    int v_br[GRID_MAX];
    const int n_br = grid_values(L, "bottom_right", GEN_CAUSAL, v_br);
    if (n_br > 1)
        return luaL_error(L, "grid: bottom_right takes one value for every workload, got %d (two grids for both)",
                          n_br);
    int all_causal = n_ca > 0;
    for (int i = 0; i < n_ca; i++)
        all_causal = all_causal && v_ca[i];
    if (n_br && v_br[0] && !all_causal)
        return luaL_error(L, "grid: bottom_right = true needs causal = 1 on every workload (it moves the causal "
                             "diagonal)");
    const int tokens = grid_scalar(L, "tokens"), hidden = grid_scalar(L, "hidden");
    if (!n_dt || !n_hd)
        return luaL_error(L, "grid: dtype and head_dim are required");
    if (n_s && (n_sq || n_sk))
        return luaL_error(L, "grid: give seqlen, or seqlen_q and seqlen_k, not both");
    if (!n_s && !n_sq)
        return luaL_error(L, "grid: seqlen (or seqlen_q) is required");
    if (!!n_b == !!tokens)
        return luaL_error(L, "grid: give batch, or tokens (batch = tokens / seqlen_q), exactly one of them");
    if (!!n_h == !!hidden)
        return luaL_error(L, "grid: give heads, or hidden (heads = hidden / head_dim), exactly one of them");
    if (n_s) {
        memcpy(v_sq, v_s, sizeof v_sq);
        n_sq = n_s;
    }
    if (!n_ca) {
        v_ca[0] = 0;
        n_ca = 1;
    }
    if (!n_sc) {
        v_sc[0] = 0;
        n_sc = 1;
    }
    if (!n_si) {
        v_si[0] = 0;
        n_si = 1;
    }
    if (!n_tf) {
        v_tf[0] = 0;
        n_tf = 1;
    }
    /* head_dim_v absent: equal to head_dim (n_hdv 0 below); seqlen_k absent: equal to seqlen_q. */
    const int flags = n_ca * n_sc * n_si * n_tf;   /* causal, softcap, sinks, tf32: the last turning fastest */
    const long total = (long)n_dt * n_hd * (n_hdv ? n_hdv : 1) * flags * n_sq * (n_sk ? n_sk : 1) *
                       (n_b ? n_b : 1) * (n_h ? n_h : 1) * (n_hk ? n_hk : 1);
    if (total > GRID_TOTAL)
        return luaL_error(L, "grid: %d workloads (at most %d)", (int)total, GRID_TOTAL);
    lua_createtable(L, (int)total, 0);
    int count = 0;
    for (int a = 0; a < n_dt; a++)
        for (int b = 0; b < n_hd; b++)
            for (int c = 0; c < (n_hdv ? n_hdv : 1); c++)
                for (int d = 0; d < flags; d++)
                    for (int e = 0; e < n_sq; e++)
                        for (int f = 0; f < (n_sk ? n_sk : 1); f++)
                            for (int g = 0; g < (n_b ? n_b : 1); g++)
                                for (int h = 0; h < (n_h ? n_h : 1) * (n_hk ? n_hk : 1); h++) {
                                    db_workload w = {
                                        .dtype = v_dt[a], .head_dim = v_hd[b],
                                        .head_dim_v = n_hdv ? v_hdv[c] : v_hd[b],
                                        .causal = v_ca[d / (n_sc * n_si * n_tf)],
                                        .softcap = v_sc[d / (n_si * n_tf) % n_sc], .sinks = v_si[d / n_tf % n_si],
                                        .tf32 = v_tf[d % n_tf], .seqlen_q = v_sq[e],
                                        .seqlen_k = n_sk ? v_sk[f] : v_sq[e],
                                        .heads_k = n_hk ? v_hk[h % n_hk] : 0,
                                        .bottom_right = n_br ? v_br[0] : 0,
                                    };
                                    if (tokens && tokens % w.seqlen_q)
                                        return luaL_error(L, "grid: tokens = %d is not a multiple of seqlen_q = %d",
                                                          tokens, w.seqlen_q);
                                    if (hidden && hidden % w.head_dim)
                                        return luaL_error(L, "grid: hidden = %d is not a multiple of head_dim = %d",
                                                          hidden, w.head_dim);
                                    w.batch = tokens ? tokens / w.seqlen_q : v_b[g];
                                    w.heads = hidden ? hidden / w.head_dim : v_h[h / (n_hk ? n_hk : 1)];
                                    tune_push_workload(L, &w);
                                    lua_rawseti(L, -2, ++count);
                                }
    return 1;
}
