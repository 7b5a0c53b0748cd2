/* Reading Lua values for a space (tune_space_values.c): integers, numbers, parameter values,
 * tables with known keys, workloads. The bottom of the space loader: it uses no other
 * tune_space file. Used only by tuner/tune_space*.c. */
#ifndef FT_TUNE_SPACE_VALUES_INTERNAL_H
#define FT_TUNE_SPACE_VALUES_INTERNAL_H

#include <stddef.h>

#include <lua.h>

#include "tune_space.h"

/* Each returns 0, or -1 with a message naming `what` (and the key) in err. */

/* The string at idx, or NULL when it holds a NUL byte (C would read it only up to that byte: a
 * template "bwd_wgmma\0x" taken as bwd_wgmma). */
const char *tune_plain_string(lua_State *L, int idx);
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
int tune_read_workload(lua_State *L, int idx, const char *what, db_workload *w, char *err, size_t len);
/* Pushes w as a Lua table (dtype as a name, every length filled in). */
void tune_push_workload(lua_State *L, const db_workload *w);

#endif
