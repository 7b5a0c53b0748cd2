/* grid{...} for space files (tune_space_grid.c); built on tune_space_values.c. Used only by
 * tuner/tune_space*.c. */
#ifndef FT_TUNE_SPACE_GRID_INTERNAL_H
#define FT_TUNE_SPACE_GRID_INTERNAL_H

#include <lua.h>

/* grid{...}: the list of workloads of a cross product. */
int tune_lua_grid(lua_State *L);

#endif
