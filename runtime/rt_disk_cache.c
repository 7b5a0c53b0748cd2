/* The per-user CUBIN cache on disk: what NVRTC compiled in one process, the next one loads instead
 * of compiling again (seconds a kernel). One file a kernel, named by its cache key and target, in
 * $FLASHTUNE_CACHE_DIR, else $XDG_CACHE_HOME/flashtune, else ~/.cache/flashtune; the variable set
 * to "" or "0" turns the cache off. A file holds what its CUBIN was compiled from (NVRTC version,
 * target, options, the whole source), so a key that collides, or a file from another version, is
 * never used. Files appear whole or not at all (written aside, then renamed), so processes may
 * share the folder; a file that does not read back as written (its CUBIN's hash included) is
 * passed over, and so is anything not a regular file of this user's that only they may write, in a
 * folder the same (a FIFO or a link planted at a kernel's name, a file others could have swapped).
 * Best effort throughout: a cache that cannot be read or written costs a compile, never a failure. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"

#define MAGIC "flashtune cubin cache 2\n"

/* The header after MAGIC: the lengths of the three parts that follow (options, source, CUBIN),
 * the CUBIN's hash (gen_bytes_hash) and the two short strings, fixed-width. */
typedef struct file_header {
    uint64_t options_len, source_len, cubin_len, cubin_hash;
    char nvrtc_version[16];
    char arch[16];
} file_header;

void rt_disk_cache_dir(char *dir, size_t len)
{
    dir[0] = '\0';
    const char *env = getenv("FLASHTUNE_CACHE_DIR");
    if (env) {
        if (strcmp(env, "0") != 0)
            snprintf(dir, len, "%s", env);   /* "" stays "": off */
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')   /* the XDG rule: a relative value is ignored */
        snprintf(dir, len, "%s/flashtune", xdg);
    else if (home && home[0])
        snprintf(dir, len, "%s/.cache/flashtune", home);
}

/* dir and its parents, as mkdir -p (owner only where made). 0, or -1. */
static int make_dirs(const char *dir)
{
    char path[RT_PATH_LEN];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -1;
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static int file_name(const char *dir, const gen_cache_id *id, char *path, size_t len)
{
    return snprintf(path, len, "%s/%s-%s.cubin", dir, id->key, id->arch) < (int)len ? 0 : -1;
}

/* Reads n bytes at f's position into a fresh buffer: NULL when fewer are there. */
static void *read_part(FILE *f, uint64_t n)
{
    if (n > ((uint64_t)1 << 32))   /* no part is near 4 GiB: a damaged header */
        return NULL;
    void *buf = malloc(n ? n : 1);
    if (buf && fread(buf, 1, n, f) != n) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

/* Whether st is this user's and no one else may write it. */
static int private_entry(const struct stat *st)
{
    return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* path for reading, or NULL: opened without blocking (a FIFO would wait for a writer forever) and
 * without following a link, then kept only when a private regular file in a private folder. */
static FILE *open_entry(const char *dir, const char *path)
{
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || !private_entry(&st))
        return NULL;
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    FILE *f = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && private_entry(&st))
        f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

int rt_disk_cache_load(const char *dir, const gen_cache_id *id, rt_cubin *out)
{
    char path[RT_PATH_LEN];
    if (!dir[0] || file_name(dir, id, path, sizeof path) != 0)
        return 0;
    FILE *f = open_entry(dir, path);
    if (!f)
        return 0;
    char magic[sizeof MAGIC - 1];
    file_header h;
    int found = 0;
    void *options = NULL, *source = NULL, *cubin = NULL;
    if (fread(magic, 1, sizeof magic, f) == sizeof magic && !memcmp(magic, MAGIC, sizeof magic) &&
        fread(&h, sizeof h, 1, f) == 1 && !strncmp(h.nvrtc_version, id->nvrtc_version, sizeof h.nvrtc_version) &&
        !strncmp(h.arch, id->arch, sizeof h.arch) && h.options_len == strlen(id->options) &&
        h.source_len == strlen(id->source) && (options = read_part(f, h.options_len)) &&
        !memcmp(options, id->options, h.options_len) && (source = read_part(f, h.source_len)) &&
        !memcmp(source, id->source, h.source_len) && h.cubin_len > 0 && (cubin = read_part(f, h.cubin_len)) &&
        gen_bytes_hash(cubin, h.cubin_len) == h.cubin_hash && fgetc(f) == EOF) {
        out->image = cubin;
        out->size = h.cubin_len;
        snprintf(out->origin, sizeof out->origin, "CUBIN from the cache %s (NVRTC %.15s)", dir, h.nvrtc_version);
        cubin = NULL;
        found = 1;
    }
    fclose(f);
    free(options);
    free(source);
    free(cubin);
    return found;
}

void rt_disk_cache_store(const char *dir, const gen_cache_id *id, const void *cubin, size_t size)
{
    char path[RT_PATH_LEN], tmp[RT_PATH_LEN];
    if (!dir[0] || !size || file_name(dir, id, path, sizeof path) != 0 || make_dirs(dir) != 0)
        return;
    /* Aside under a name of this process and moment, then renamed over the final name: a reader
     * sees the old file or the new one, never half of one. */
    if (snprintf(tmp, sizeof tmp, "%s/.%s-%s.%ld.%lx.tmp", dir, id->key, id->arch, (long)getpid(),
                 (unsigned long)(uintptr_t)&tmp) >= (int)sizeof tmp)
        return;
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    file_header h;
    memset(&h, 0, sizeof h);
    h.options_len = strlen(id->options);
    h.source_len = strlen(id->source);
    h.cubin_len = size;
    h.cubin_hash = gen_bytes_hash(cubin, size);
    snprintf(h.nvrtc_version, sizeof h.nvrtc_version, "%s", id->nvrtc_version);
    snprintf(h.arch, sizeof h.arch, "%s", id->arch);
    const int ok = fwrite(MAGIC, 1, sizeof MAGIC - 1, f) == sizeof MAGIC - 1 && fwrite(&h, sizeof h, 1, f) == 1 &&
                   fwrite(id->options, 1, h.options_len, f) == h.options_len &&
                   fwrite(id->source, 1, h.source_len, f) == h.source_len && fwrite(cubin, 1, size, f) == size;
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}
