/* NVRTC's entry points as flashtune calls them, resolved at run time (gen_nvrtc_open.c). The
 * types are the toolkit's nvrtc.h; no NVRTC library is linked. */
#ifndef FT_GEN_NVRTC_INTERNAL_H
#define FT_GEN_NVRTC_INTERNAL_H

#include <nvrtc.h>
#include <stddef.h>

typedef struct gen_nvrtc_api {
    nvrtcResult (*Version)(int *major, int *minor);
    const char *(*GetErrorString)(nvrtcResult result);
    nvrtcResult (*CreateProgram)(nvrtcProgram *prog, const char *src, const char *name, int num_headers,
                                 const char *const *headers, const char *const *include_names);
    nvrtcResult (*CompileProgram)(nvrtcProgram prog, int num_options, const char *const *options);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *prog);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char *log);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char *cubin);
} gen_nvrtc_api;

/* NVRTC, found and resolved once per process (thread-safe). Returns 0 with *api set, or -1 with
 * the reason in err: every file tried and why each failed, or FLASHTUNE_NVRTC's. */
int gen_nvrtc_open(const gen_nvrtc_api **api, char *err, size_t len);
/* The file NVRTC was opened from (as it was named to dlopen), or NULL when it could not be. */
const char *gen_nvrtc_path(void);

#endif
