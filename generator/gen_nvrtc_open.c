/* The dlopen shim for NVRTC: finds and resolves it once per process, so that libflashtune and
 * its tools link no CUDA library at all. One build then serves NVRTC 12 and 13 (their C API is the
 * same for what flashtune calls), from the CUDA toolkit or from NVIDIA's NVRTC wheels, and starts
 * on a machine without either (only compiling needs NVRTC). Where it looks, in order:
 *   $FLASHTUNE_NVRTC (a file name or path; then nowhere else),
 *   libnvrtc.so.N for the built major N, then the other supported majors (the loader's path:
 *   LD_LIBRARY_PATH, ldconfig's cache, a library the process already loaded, such as the one the
 *   Python package preloads from a wheel),
 *   the same file in the toolkit the library was built with (FT_NVRTC_DIR). */
#include "gen_nvrtc_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FT_NVRTC_MAJOR
#define FT_NVRTC_MAJOR 13
#endif
#ifndef FT_NVRTC_DIR
#define FT_NVRTC_DIR "/usr/local/cuda/lib64"
#endif

/* The NVRTC majors whose API flashtune's calls match, newest first. */
static const int supported_majors[] = { 13, 12 };

static gen_nvrtc_api table;
static int open_status = -1;
static char open_error[1024];
static char opened_path[512];
static pthread_once_t open_once = PTHREAD_ONCE_INIT;

static int resolve(void *lib, const char *path)
{
    struct {
        void **field;
        const char *symbol;
    } entries[] = {
        { (void **)&table.Version, "nvrtcVersion" },
        { (void **)&table.GetErrorString, "nvrtcGetErrorString" },
        { (void **)&table.CreateProgram, "nvrtcCreateProgram" },
        { (void **)&table.CompileProgram, "nvrtcCompileProgram" },
        { (void **)&table.DestroyProgram, "nvrtcDestroyProgram" },
        { (void **)&table.GetProgramLogSize, "nvrtcGetProgramLogSize" },
        { (void **)&table.GetProgramLog, "nvrtcGetProgramLog" },
        { (void **)&table.GetCUBINSize, "nvrtcGetCUBINSize" },
        { (void **)&table.GetCUBIN, "nvrtcGetCUBIN" },
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        *entries[i].field = dlsym(lib, entries[i].symbol);
        if (!*entries[i].field) {
            snprintf(open_error, sizeof open_error, "NVRTC at %s lacks %s (not an NVRTC library?)", path,
                     entries[i].symbol);
            return -1;
        }
    }
    return 0;
}

/* dlopen(name); on failure appends "name (why)" to tried. */
static void *try_open(const char *name, char *tried, size_t len)
{
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        const size_t used = strlen(tried);
        snprintf(tried + used, len - used, "%s%s (%s)", used ? "; " : "", name, why ? why : "not found");
    }
    return lib;
}

static void open_nvrtc(void)
{
    char tried[768] = "";
    const char *forced = getenv("FLASHTUNE_NVRTC");
    void *lib = NULL;
    const char *path = NULL;
    char name[512];
    if (forced && *forced) {
        path = forced;
        lib = try_open(forced, tried, sizeof tried);
        if (!lib) {
            snprintf(open_error, sizeof open_error, "FLASHTUNE_NVRTC=%s: cannot open it: %s", forced, tried);
            return;
        }
    } else {
        int majors[1 + sizeof supported_majors / sizeof supported_majors[0]], n = 0;
        majors[n++] = FT_NVRTC_MAJOR;
        for (size_t i = 0; i < sizeof supported_majors / sizeof supported_majors[0]; i++)
            if (supported_majors[i] != FT_NVRTC_MAJOR)
                majors[n++] = supported_majors[i];
        for (int i = 0; i < n && !lib; i++) {
            snprintf(name, sizeof name, "libnvrtc.so.%d", majors[i]);
            lib = try_open(name, tried, sizeof tried);
        }
        if (!lib) {
            snprintf(name, sizeof name, "%s/libnvrtc.so.%d", FT_NVRTC_DIR, FT_NVRTC_MAJOR);
            lib = try_open(name, tried, sizeof tried);
        }
        path = name;
        if (!lib) {
            snprintf(open_error, sizeof open_error,
                     "no NVRTC (needed to compile kernels): tried %s. Install the CUDA toolkit (12 or 13), or "
                     "NVIDIA's NVRTC wheel (pip install nvidia-cuda-nvrtc-cu12), or name the library in "
                     "FLASHTUNE_NVRTC", tried);
            return;
        }
    }
    if (resolve(lib, path) != 0) {
        dlclose(lib);
        return;
    }
    snprintf(opened_path, sizeof opened_path, "%s", path);
    open_status = 0;
}

int gen_nvrtc_open(const gen_nvrtc_api **api, char *err, size_t len)
{
    pthread_once(&open_once, open_nvrtc);
    if (open_status != 0) {
        if (api)
            *api = NULL;
        if (err && len)
            snprintf(err, len, "%s", open_error);
        return -1;
    }
    if (api)
        *api = &table;
    return 0;
}

const char *gen_nvrtc_path(void)
{
    return gen_nvrtc_open(NULL, NULL, 0) == 0 ? opened_path : NULL;
}
