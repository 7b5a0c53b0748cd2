/* What test_db_import.c and test_db_fuzz.c share: the shipped winners and the checked import. */
#ifndef FT_TEST_DB_IMPORT_H
#define FT_TEST_DB_IMPORT_H

#include <stddef.h>

#include "db_fixture.h"
#include "db_import_check.h"


/* The import options of `flashtune db import` (the generator's check). */
extern const db_import_options checked;

/* The shipped winners files (db/tuned/\*.txt), each malloc'ed; OUT: *count. */
char **shipped_texts(int *count);
void free_texts(char **texts, int count);
/* A database at path holding every shipped winner (imported through the check). */
void create_shipped_db(const char *path);
/* The file's bytes, malloc'ed (NUL-terminated); OUT: *size. */
char *file_bytes(const char *path, size_t *size);
void copy_file(const char *from, const char *to);

void fuzz_winners_text(void **state);

#endif
