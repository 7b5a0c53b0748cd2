/* An in-memory flashtune database (db_memory.c): the runtime loads the shipped winners into
 * one. Same handle and calls as a file; gone at db_close. */
#ifndef FT_DB_MEMORY_INTERNAL_H
#define FT_DB_MEMORY_INTERNAL_H

#include <stddef.h>

#include "db_internal.h"

/* A fresh database with the current schema, in memory. OUT: *out. 0, or -1 (err). */
int db_open_memory(db **out, char *err, size_t len);

#endif
