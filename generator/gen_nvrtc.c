/* NVRTC compilation of a generated source to CUBIN, with ptxas's resource report. NVRTC itself
 * is opened at run time (gen_nvrtc_open.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen_internal.h"
#include "gen_nvrtc_internal.h"

/* Fixed options besides -arch. No --use_fast_math: the f32/f64 kernels must stay exact, and
 * the mma kernels call ex2.approx explicitly where they want it. -Xptxas -v puts registers,
 * spills, stack and static shared memory in the log; -lineinfo lets profilers map SASS back
 * to the source at no cost in speed. */
#define OPT_STD "-std=c++17"
#define OPT_PTXAS "--ptxas-options=-v"
#define OPT_LINEINFO "-lineinfo"

const char *gen_compile_options(void)
{
    return OPT_STD " " OPT_PTXAS " " OPT_LINEINFO;
}

void gen_nvrtc_version(char *buf, size_t len)
{
    const gen_nvrtc_api *nv;
    int major = 0, minor = 0;
    if (gen_nvrtc_open(&nv, NULL, 0) != 0 || nv->Version(&major, &minor) != NVRTC_SUCCESS)
        major = minor = 0;
    snprintf(buf, len, "%d.%d", major, minor);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The program's log, malloc'ed (empty string when NVRTC has none), or NULL without memory. */
static char *program_log(const gen_nvrtc_api *nv, nvrtcProgram prog)
{
    size_t size = 0;
    if (nv->GetProgramLogSize(prog, &size) != NVRTC_SUCCESS)
        size = 0;
    char *log = malloc(size + 1);
    if (!log)
        return NULL;
    log[0] = '\0';
    if (size && nv->GetProgramLog(prog, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    log[size] = '\0';
    return log;
}

static int fail(const gen_nvrtc_api *nv, nvrtcProgram *prog, char *log, gen_binary *out, char *err, size_t len,
                const char *what, nvrtcResult r, const char *arch)
{
    snprintf(err, len, "%s for %s failed: %s%s%s", what, arch, nv->GetErrorString(r),
             log && log[0] ? "\n" : "", log ? log : "");
    free(log);
    if (*prog)
        nv->DestroyProgram(prog);
    gen_binary_free(out);
    return -1;
}

int gen_compile(const char *source, const char *arch, gen_binary *out, char *err, size_t len)
{
    memset(out, 0, sizeof *out);
    if (!gen_arch_supported(arch)) {
        char archs[128];
        gen_arch_names(0, archs, sizeof archs);
        snprintf(err, len, "arch %s is not supported (%s)", arch ? arch : "(none)", archs);
        return -1;
    }
    if (!source) {
        snprintf(err, len, "no source to compile");
        return -1;
    }
    const gen_nvrtc_api *nv;
    if (gen_nvrtc_open(&nv, err, len) != 0)
        return -1;
    char arch_opt[32];
    snprintf(arch_opt, sizeof arch_opt, "-arch=%s", arch);
    const char *opts[] = { arch_opt, OPT_STD, OPT_PTXAS, OPT_LINEINFO };

    nvrtcProgram prog = NULL;
    nvrtcResult r = nv->CreateProgram(&prog, source, "flashtune.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return fail(nv, &prog, NULL, out, err, len, "nvrtcCreateProgram", r, arch);
    const double t0 = now_seconds();
    r = nv->CompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    out->compile_seconds = now_seconds() - t0;
    char *log = program_log(nv, prog);
    if (r != NVRTC_SUCCESS)
        return fail(nv, &prog, log, out, err, len, "NVRTC compilation", r, arch);
    if (!log)
        return fail(nv, &prog, log, out, err, len, "reading the NVRTC log", NVRTC_ERROR_OUT_OF_MEMORY, arch);

    size_t size = 0;
    r = nv->GetCUBINSize(prog, &size);
    if (r == NVRTC_SUCCESS && size == 0)
        r = NVRTC_ERROR_INVALID_PROGRAM;
    out->cubin = r == NVRTC_SUCCESS ? malloc(size) : NULL;
    if (r == NVRTC_SUCCESS && !out->cubin)
        r = NVRTC_ERROR_OUT_OF_MEMORY;
    if (r == NVRTC_SUCCESS)
        r = nv->GetCUBIN(prog, out->cubin);
    if (r != NVRTC_SUCCESS)
        return fail(nv, &prog, log, out, err, len, "nvrtcGetCUBIN", r, arch);
    nv->DestroyProgram(&prog);

    out->cubin_size = size;
    out->log = log;
    snprintf(out->arch, sizeof out->arch, "%s", arch);
    gen_nvrtc_version(out->nvrtc_version, sizeof out->nvrtc_version);
    gen_resources total;
    gen_ptxas_parse(log, &total, out->entries, GEN_MAX_ENTRIES, &out->entry_count);
    out->registers = total.registers;
    out->spill_store_bytes = total.spill_store_bytes;
    out->spill_load_bytes = total.spill_load_bytes;
    out->stack_frame_bytes = total.stack_frame_bytes;
    out->static_smem_bytes = total.static_smem_bytes;
    return 0;
}

void gen_binary_free(gen_binary *b)
{
    if (!b)
        return;
    free(b->cubin);
    free(b->log);
    memset(b, 0, sizeof *b);
}
