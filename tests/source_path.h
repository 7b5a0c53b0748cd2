/* Where the tests find the project's files: FT_SOURCE_DIR, or two levels above the test's source
 * (CMake compiles it by its absolute path). Header-only, for the tests that read fixtures. */
#ifndef FT_TEST_SOURCE_PATH_H
#define FT_TEST_SOURCE_PATH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* buf = the project root's rel (len bytes, NUL-terminated). */
static inline void test_source_path(char *buf, size_t len, const char *rel)
{
    const char *root = getenv("FT_SOURCE_DIR");
    if (root) {
        snprintf(buf, len, "%s/%s", root, rel);
        return;
    }
    const char *file = __FILE__, *slash = strrchr(file, '/');
    const int dir_len = slash ? (int)(slash - file) : 1;
    snprintf(buf, len, "%.*s/../%s", dir_len, slash ? file : ".", rel);
}

#endif
