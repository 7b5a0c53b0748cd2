/* A temp dir per database test case, and the export as a string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_fixture.h"
#include "db_internal.h"

int fixture_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/ft_test_db.XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    *state = f;
    return 0;
}

int fixture_teardown(void **state)
{
    fixture *f = *state;
    DIR *dir = opendir(f->dir);
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char p[512];
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", f->dir, e->d_name);
            if (unlink(p) != 0)
                rmdir(p);
        }
    }
    if (dir)
        closedir(dir);
    rmdir(f->dir);
    free(f);
    return 0;
}

char *fixture_export(db *d)
{
    char *text = NULL, err[512] = "";
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    int rc = db_export(d, out, err, sizeof err);
    fclose(out);
    if (rc != 0)
        fail_msg("db_export: %s", err);
    return text;
}
