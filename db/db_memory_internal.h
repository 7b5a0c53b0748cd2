/* An in-memory flashtune database (db_memory.c): the runtime opens the shipped winners as one
 * (a packed image, db_pack_winners.c). Same handle and calls as a file; gone at db_close. */
#ifndef FT_DB_MEMORY_INTERNAL_H
#define FT_DB_MEMORY_INTERNAL_H

#include <stddef.h>

#include "db_internal.h"

/* A fresh database with the current schema, in memory. OUT: *out. 0, or -1 (err). */
int db_open_memory(db **out, char *err, size_t len);
/* A database in memory made from image (size bytes of sqlite3_serialize output, copied), which
 * must have this build's schema version. OUT: *out. 0, or -1 (err). */
int db_open_memory_image(const void *image, size_t size, db **out, char *err, size_t len);

#endif
