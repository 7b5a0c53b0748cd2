/* Reading a space table into a spec (tune_space_parse.c), and the template names it checks;
 * built on tune_space_values.c. Used only by tuner/tune_space*.c. */
#ifndef FT_TUNE_SPACE_PARSE_INTERNAL_H
#define FT_TUNE_SPACE_PARSE_INTERNAL_H

#include <stddef.h>

#include <lua.h>

#include "tune_space.h"

/* A space read from Lua, before enumeration. */
typedef struct tune_spec {
    tune_space space;           /* name, defined_at, family, searched, strategy, bench */
    gen_param_set fixed_mask;   /* the parameters in fixed (GEN_BIT of each) */
    int fixed[GEN_PARAM_COUNT];
    int *values[GEN_PARAM_COUNT];   /* searched parameters: their lists; malloc'ed */
    int value_count[GEN_PARAM_COUNT];
    int has_where;              /* where() is the user value of the spec's userdata */
    db_workload *workloads;   /* malloc'ed */
    int workload_count;
} tune_spec;

/* Parameters a workload decides (the table's problem role); a space may neither fix nor search them. */
#define TUNE_WORKLOAD_PARAMS gen_param_mask(GEN_ROLE_PROBLEM)

/* "fwd_mma, fwd_exact, ...": every family's name. */
void tune_family_names(char *buf, size_t len);
/* The family of that name, or NULL with "unknown template 'x' (known: ...)" in err. */
const gen_family *tune_family_find(const char *name, char *err, size_t len);

/* Pushes a new, empty spec: a userdata whose finalizer frees what it holds, so a Lua error
 * (out of memory) midway leaks nothing. Its user value holds where(). */
tune_spec *tune_spec_push(lua_State *L);
/* Reads the space table at idx into the spec at spec_idx (label names the space in errors until
 * its name is read). Returns 0, or -1 with a message without position in err. */
int tune_spec_read(lua_State *L, int idx, int spec_idx, const char *label, char *err, size_t len);

#endif
