/* What the tune_space*.c files share: the load context, a parsed space (spec) and the steps of
 * a load. Used only by tuner/tune_space*.c. */
#ifndef FT_TUNE_SPACE_INTERNAL_H
#define FT_TUNE_SPACE_INTERNAL_H

#include <lua.h>

#include "tune_space.h"

/* One load's state; the Lua allocator's user data, so every helper can reach it. */
typedef struct tune_ctx {
    tune_device device;
    int smem_limit;             /* bytes, for gen_validate */
    size_t mem_used, mem_limit; /* bytes the interpreter holds, and its cap */
    long ticks_left;            /* instruction-count hook events left before "ran too long" */
    int track_lines;            /* 1 while the chunk runs: remember where it returns */
    int chunk_line;             /* the line the main chunk returned from (0: it did not) */
    char chunk_src[TUNE_POS_LEN - 24];   /* the chunk's short source name, as in Lua's messages */
} tune_ctx;

/* A space read from Lua, before enumeration. */
typedef struct tune_spec {
    tune_space space;           /* name, defined_at, family, searched, strategy, bench */
    unsigned fixed_mask;        /* GEN_BIT mask of the parameters in fixed */
    int fixed[GEN_PARAM_COUNT];
    int *values[GEN_PARAM_COUNT];   /* searched parameters: their lists; malloc'ed */
    int value_count[GEN_PARAM_COUNT];
    int has_where;              /* where() is the user value of the spec's userdata */
    tune_workload *workloads;   /* malloc'ed */
    int workload_count;
} tune_spec;

/* Parameters a workload decides (the table's problem role); a space may neither fix nor search them. */
#define TUNE_WORKLOAD_PARAMS gen_param_mask(GEN_ROLE_PROBLEM)

/* ---- the interpreter (tune_space_lua.c) ------------------------------------------------- */

/* A fresh interpreter for ctx: the data libraries, the helpers and `device`; NULL when out of
 * memory. Close it with lua_close. */
lua_State *tune_lua_open(tune_ctx *ctx);
tune_ctx *tune_lua_ctx(lua_State *L);
/* on: count instructions and remember the line the main chunk returns from; off: count only. */
void tune_lua_track_lines(lua_State *L, int on);
/* grid{...}: the list of workloads of a cross product (tune_space_grid.c). */
int tune_lua_grid(lua_State *L);
/* "fwd_mma, fwd_exact, ...": every family's name. */
void tune_family_names(char *buf, size_t len);
/* The family of that name, or NULL with "unknown template 'x' (known: ...)" in err. */
const gen_family *tune_family_find(const char *name, char *err, size_t len);
/* Pushes the `device` table made at open. */
void tune_lua_push_device(lua_State *L);
/* 1 when the value at idx is what skip() throws; *reason, its reason (valid while it is). */
int tune_lua_is_skip(lua_State *L, int idx, const char **reason);
/* "file:line" recorded by space{} for the table at idx, or NULL when space{} did not make it. */
const char *tune_lua_space_pos(lua_State *L, int idx);
/* Pushes the list of tables space{} declared, in call order. */
void tune_lua_push_declared(lua_State *L);

/* ---- reading Lua values (tune_space_values.c) ------------------------------------------- */

/* Each returns 0, or -1 with a message naming `what` (and the key) in err. */

/* The integer at idx (an integer, or a float with an integral value). */
int tune_read_int(lua_State *L, int idx, const char *what, int *out, char *err, size_t len);
/* The number at idx. */
int tune_read_number(lua_State *L, int idx, const char *what, double *out, char *err, size_t len);
/* The value of parameter param at idx: an integer, a name gen_param_parse knows ("bf16"), or a
 * boolean (1, 0). */
int tune_read_param(lua_State *L, int idx, gen_param param, const char *what, int *out, char *err,
                    size_t len);
/* Every key of the table at idx is a string in known (NULL-terminated); the alphabetically first
 * unknown key is reported, so the message does not depend on Lua's hash order. */
int tune_check_keys(lua_State *L, int idx, const char *const *known, const char *what, char *err, size_t len);
/* Integer field key of the table at idx: def when absent (an error when required), at least lo. */
int tune_field_int(lua_State *L, int idx, const char *what, const char *key, int required, int def, int lo,
                   int *out, char *err, size_t len);
/* Optional number field key: unchanged when absent; > lo (>= lo when lo_ok), at most hi. */
int tune_field_number(lua_State *L, int idx, const char *what, const char *key, double lo, int lo_ok,
                      double hi, double *out, char *err, size_t len);
/* The workload table at idx; what names it in errors ("workloads[3]"). */
int tune_read_workload(lua_State *L, int idx, const char *what, tune_workload *w, char *err, size_t len);
/* Pushes w as a Lua table (dtype as a name, every length filled in). */
void tune_push_workload(lua_State *L, const tune_workload *w);

/* ---- reading a space (tune_space_parse.c) ------------------------------------------------- */

/* Pushes a new, empty spec: a userdata whose finalizer frees what it holds, so a Lua error
 * (out of memory) midway leaks nothing. Its user value holds where(). */
tune_spec *tune_spec_push(lua_State *L);
/* Reads the space table at idx into the spec at spec_idx (label names the space in errors until
 * its name is read). Returns 0, or -1 with a message without position in err. */
int tune_spec_read(lua_State *L, int idx, int spec_idx, const char *label, char *err, size_t len);

/* ---- enumeration (tune_space_enum.c) ---------------------------------------------------- */

/* The candidates of the spec at spec_idx for its workload wi: cross product, gen_validate,
 * where(), strategy. Returns 0, or -1 with "file:line: message" in err (a where() that failed,
 * no candidate left). */
int tune_spec_enumerate(lua_State *L, int spec_idx, int wi, tune_candidates *out, char *err,
                        size_t len);

#endif
