/* What the database tests (test_db, test_db_import) share: a temp dir per case (cmocka setup
 * and teardown) and the export as a string. */
#ifndef FT_DB_FIXTURE_H
#define FT_DB_FIXTURE_H

typedef struct fixture {
    char dir[64];
    char path[128];     /* dir/t.db, not created */
} fixture;

/* Makes the dir (/tmp/ft_test_db.XXXXXX); *state = the fixture. */
int fixture_setup(void **state);
/* Removes the dir and what it holds (files and empty folders). */
int fixture_teardown(void **state);

typedef struct db db;
/* What db_export prints, as a malloc'ed string; fails the test on an error. */
char *fixture_export(db *d);

#endif
