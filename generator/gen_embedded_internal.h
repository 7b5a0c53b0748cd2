/* The template files embedded at build time by cmake/embed.cmake (generated gen_embedded.c). */
#ifndef FT_GEN_EMBEDDED_INTERNAL_H
#define FT_GEN_EMBEDDED_INTERNAL_H

#include <stddef.h>

/* One file of templates/: its path below templates/ ("families/fwd_mma.cu"), its bytes (NUL-terminated, so data is
 * also a C string) and its size in bytes without that NUL. */
typedef struct gen_embedded_file {
    const char *name;
    const char *data;
    size_t size;
} gen_embedded_file;

extern const gen_embedded_file gen_embedded_files[];
extern const size_t gen_embedded_count;

/* The embedded file of that path, or NULL when the build embedded none. */
const gen_embedded_file *gen_embedded_find(const char *name);

#endif
