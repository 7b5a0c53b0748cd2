/* The in-process load (tune_space.c), which tune_space_bound.c runs in a child process with a
 * deadline, or here when the deadline is off. Used only by tuner/tune_space*.c. */
#ifndef FT_TUNE_SPACE_LOAD_INTERNAL_H
#define FT_TUNE_SPACE_LOAD_INTERNAL_H

#include "tune_space_lua_internal.h"

/* tune_space_load_captured without the wall clock: the file runs in this process under lim's
 * memory and instruction limits. seen (NULL: the load's own) receives the file's name and the
 * last line the hooks saw, as the load goes. path is not NULL; err has len > 0 bytes. */
int tune_space_load_here(const char *path, const tune_device *dev, const tune_space_limits *lim,
                         const tune_captured *captured, tune_seen *seen, tune_space_set **out, char *err, size_t len);

#endif
