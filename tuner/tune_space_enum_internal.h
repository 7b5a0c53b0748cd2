/* Enumeration of a spec's candidates (tune_space_enum.c); it runs where() in the interpreter of
 * tune_space_lua.c. Used only by tuner/tune_space*.c. */
#ifndef FT_TUNE_SPACE_ENUM_INTERNAL_H
#define FT_TUNE_SPACE_ENUM_INTERNAL_H

#include <stddef.h>

#include <lua.h>

#include "tune_space_parse_internal.h"

/* The candidates of the spec at spec_idx for its workload wi: cross product, gen_validate,
 * where(), strategy. Returns 0, or -1 with "file:line: message" in err (a where() that failed,
 * no candidate left). */
int tune_spec_enumerate(lua_State *L, int spec_idx, int wi, tune_candidates *out, char *err,
                        size_t len);

#endif
