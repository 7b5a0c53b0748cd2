/* The generator's internal API (prefix gen_): the template catalogue, parameters, validation,
 * source expansion, content hashes, NVRTC compilation to CUBIN with its resource report. Launch
 * shapes are the launch module's (launch/ln_internal.h). Used by the tuner, the runtime, the
 * launch module and the tests; never installed.
 *
 * Thread safety: every function here may be called from several threads at once; none keeps
 * global mutable state (NVRTC itself is thread-safe). Strings and tables returned as const
 * are static. Errors are written to a caller buffer (why/err, len bytes, always
 * NUL-terminated) and name the parameter and its value. */
#ifndef FT_GEN_INTERNAL_H
#define FT_GEN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gen_family_internal.h"

/* ---- catalogue (gen_catalogue.c) ------------------------------------------------------- */

/* The family of that name ("fwd_mma"), or NULL. */
const gen_family *gen_family_find(const char *name);
/* Every family of the catalogue, in a fixed order; OUT: *count, their number. */
const gen_family *const *gen_family_list(int *count);
/* Adds a family whose template is its own `source` text, found by gen_family_find from then on
 * (not listed by gen_family_list). For test-only templates; call before any thread uses the
 * catalogue. Returns 0, or -1 for a NULL or sourceless family, a taken name, or a full table. */
int gen_family_register(const gen_family *f);
/* The family's embedded template file as a NUL-terminated string, or NULL when this build did
 * not embed it (the template is not written yet). */
const char *gen_family_template(const gen_family *f);

/* ---- parameters (gen_params.c; the table and its names: gen_param_table.h) ------------- */

/* A family and one value per parameter, indexed by gen_param. */
typedef struct gen_config {
    const gen_family *family;
    int p[GEN_PARAM_COUNT];
} gen_config;

/* c = the family's defaults (a good configuration; unused parameters hold their only legal
 * value); f NULL: the table's defaults. */
void gen_config_init(gen_config *c, const gen_family *f);

/* After the problem's head dims (and dtype and ALLOW_TF32) are set in c: the family's default
 * tiles for them (its head_dim_tiles hook), where they differ from its defaults. */
void gen_config_head_dim_tiles(gen_config *c);

/* What gen_config_format writes. */
enum {
    GEN_FORMAT_FAMILY = 1,      /* the family's name first: "fwd_mma BLOCK_M=128 ..." */
    GEN_FORMAT_TUNABLES = 2,    /* only the tunables (not what the problem decides) */
};
/* The one text form of a configuration: "BLOCK_M=128 BLOCK_N=64 NUM_WARPS=8 ...", the
 * parameters c's family uses (every one when c->family is NULL) in table order, symbolic values
 * by name ("DQ_MODE=atomic"), space-separated, truncated to len. Returns buf. */
const char *gen_config_format(const gen_config *c, unsigned flags, char *buf, size_t len);
/* Room for gen_config_format's longest text (every parameter at its longest value and a
 * family's name: under 500 characters). */
#define GEN_CONFIG_TEXT 640
/* Applies space-separated NAME=VALUE assignments (names case-insensitive, values as
 * gen_param_parse takes them) to c; what gen_config_format writes parses back. Returns 0, or -1
 * with the reason in why naming the assignment (an unknown name lists the parameters). */
int gen_config_parse(gen_config *c, const char *text, char *why, size_t len);

/* ---- validation (gen_validate.c) ---------------------------------------------------- */

/* Checks c against the common rules then c->family->check, in this order: each parameter in
 * table order: one the family does not use (not in family->params) equals its default, one it
 * uses is in the table's range (gen_param_check: HEAD_DIM and HEAD_DIM_V multiples of 8 in
 * 8..256, which families narrow in their check; BLOCK_M 1..1024, NUM_STAGES 1..4, ...), and
 * DTYPE is one of the family's; then the family's check; every entry the
 * configuration launches needs at most smem_limit_bytes of dynamic shared memory
 * (smem_limit_bytes <= 0: not checked). Returns 0 when valid, else -1 with one reason in why,
 * e.g. "BLOCK_M=48 is not a multiple of 16*NUM_WARPS=64". */
int gen_validate(const gen_config *c, int smem_limit_bytes, char *why, size_t len);
/* 1 when the entry is launched for c (its used() says so, or it has none). */
int gen_entry_used(const gen_config *c, const gen_entry *e);
/* ---- the architectures (gen_arch.c): one table ------------------------------------------ */

typedef struct gen_arch {
    const char *name;            /* NVRTC's target, "sm_90" */
    int cc_major, cc_minor;      /* the compute capability of its GPUs */
    int smem_limit;              /* opt-in dynamic shared memory per block, bytes */
    const char *runs_on;         /* NULL: a GPU's arch; else the arch whose GPUs alone run its code
                                  * ("sm_90a": "sm_90") */
    const char *typical_gpu;     /* what a sweep without a GPU assumes (tune_device_default) */
    int typical_sms;
} gen_arch;

/* The arch of that name ("sm_90"), or NULL when flashtune does not compile for it. */
const gen_arch *gen_arch_find(const char *name);
/* The table's row i (from 0), or NULL past its end: every arch in turn. */
const gen_arch *gen_arch_at(int i);
/* "sm_80, sm_86, sm_89, sm_90" (gpus_only: the archs a GPU reports) or with the arch-specific
 * targets too ("..., sm_90a"), for messages and help texts. */
void gen_arch_names(int gpus_only, char *buf, size_t len);
/* The most dynamic shared memory a block may opt in to on arch, or -1 for an arch the generator
 * does not target. The archs accepted here are exactly those gen_compile accepts. */
int gen_smem_limit_for_arch(const char *arch);

/* The arch to compile f's kernels for on a GPU of arch device_arch: device_arch itself, or the
 * family's arch-specific target ("sm_90a" for a wgmma family on an "sm_90" GPU). NULL when f
 * cannot run on that GPU or device_arch is not a target of the generator. */
const char *gen_target_arch(const gen_family *f, const char *device_arch);
/* 0 when f runs on a GPU of arch device_arch, else -1 with the reason in why. */
int gen_check_arch(const gen_family *f, const char *device_arch, char *why, size_t len);

/* The sizes of a problem the tuner takes (the space loader's rules; db import checks winners
 * with them too): each at least 1, batch*heads at most 65535 (grid.y), seqlen_q + seqlen_k
 * below 2^31. Returns 0, or -1 with the reason naming the size ("batch*heads = 70000 is more
 * than 65535 ..."). */
int gen_check_problem_sizes(int batch, int heads, int seqlen_q, int seqlen_k, char *why, size_t len);
/* 0 when c can serve a problem of `heads` query heads over heads_k K/V heads (0: as many), else
 * -1 with the reason: a backward's SPLITS shares a group's query heads over blocks, so it must
 * divide the group (the launcher refuses the launch otherwise; the tuner asks before compiling). */
int gen_check_problem_heads(const gen_config *c, int heads, int heads_k, char *why, size_t len);
/* Sets what c's parameters take from the problem's lengths, where c's family uses them:
 * EVEN_M = (seqlen_q % BLOCK_M == 0), EVEN_N = (seqlen_k % BLOCK_N == 0); both 0 with VARLEN 1 (each
 * sequence has its own lengths), EVEN_M 0 with PACK_GQA 1 (a tile's rows are a group's). */
void gen_config_fit_lengths(gen_config *c, int seqlen_q, int seqlen_k);

/* ---- expansion (gen_expand.c) ------------------------------------------------------- */

/* The standalone .cu for c, laid out as templates/README.md says: a header comment naming the
 * family and listing every parameter ("//   BLOCK_M = 64"), one "#define NAME value" per
 * parameter, then the common parts, the family's parts and its mainloop, each after a
 * "// ---- file: NAME" line. Deterministic: the same c gives byte-identical text. Does not
 * validate (call gen_validate first). Returns a malloc'ed string the caller frees, or NULL
 * when a template file is not embedded in this build or memory ran out. */
char *gen_expand(const gen_config *c);

/* ---- content hashes (gen_hash.c) --------------------------------------------------- */

/* Hashes are 64-bit FNV-1a, printed as 16 lower-case hex digits. No hash library is a
 * dependency of flashtune; these hashes index, and where a collision would matter (the CUBIN
 * cache) the full inputs are compared too. Multi-part keys hash each part with its length, so
 * parts cannot run together. */
#define GEN_HASH_LEN 17   /* 16 hex digits and the NUL */

/* The kernel's identity: the hash of its source alone. */
void gen_source_hash(const char *source, char out[GEN_HASH_LEN]);
/* The CUBIN cache key: the hash of (source, gen_compile's options, arch, NVRTC version), so a
 * change of any of them misses the cache. */
void gen_cache_key(const char *source, const char *arch, char out[GEN_HASH_LEN]);
/* The hash of n bytes (the CUBIN cache on disk checks a CUBIN's bytes with it). */
uint64_t gen_bytes_hash(const void *data, size_t n);

/* Everything a CUBIN is compiled from, which the CUBIN cache stores beside it and compares on
 * lookup: the 64-bit key only finds the row, so a collision cannot load another kernel. */
typedef struct gen_cache_id {
    char key[GEN_HASH_LEN];      /* gen_cache_key(source, arch) */
    char arch[16];               /* the compile target (gen_target_arch): "sm_90a" for fwd_wgmma on sm_90 */
    char nvrtc_version[16];      /* "13.0" */
    const char *options;         /* gen_compile_options() */
    const char *source;          /* the caller's source, not copied */
} gen_cache_id;

/* The cache identity of source (an expansion of family f) compiled for a GPU of device_arch.
 * OUT: *out (valid while source is). 0, or -1 when f does not run on device_arch. */
int gen_cache_id_init(const gen_family *f, const char *source, const char *device_arch, gen_cache_id *out);

/* ---- NVRTC compilation (gen_nvrtc.c, gen_ptxas_log.c) ------------------------------ */

#define GEN_MAX_ENTRIES 16
#define GEN_NAME_LEN 64

/* What ptxas reported for one function. */
typedef struct gen_resources {
    char name[GEN_NAME_LEN];     /* the entry's symbol ("ft_fwd"); truncated if longer */
    int registers;               /* per thread */
    int spill_store_bytes;
    int spill_load_bytes;
    int stack_frame_bytes;
    int static_smem_bytes;       /* __shared__ arrays; dynamic shared memory comes on top */
} gen_resources;

typedef struct gen_binary {
    void *cubin;                 /* the CUBIN image (an ELF file), malloc'ed */
    size_t cubin_size;           /* bytes */
    char *log;                   /* NVRTC's full log, including ptxas -v; malloc'ed, never NULL after success */
    char arch[16];               /* "sm_90" */
    char nvrtc_version[16];      /* "13.0" */
    double compile_seconds;      /* wall time of nvrtcCompileProgram */
    /* The largest value over every function in the log (entries and called functions). */
    int registers, spill_store_bytes, spill_load_bytes, stack_frame_bytes, static_smem_bytes;
    gen_resources entries[GEN_MAX_ENTRIES];   /* one per kernel entry, in log order */
    int entry_count;
} gen_binary;

/* Options passed to NVRTC besides -arch, in order, for the cache key and reports:
 * "-std=c++17 --ptxas-options=-v -lineinfo" (no --use_fast_math: f32/f64 must stay exact). */
const char *gen_compile_options(void);
/* "13.0": NVRTC's version, major.minor. */
void gen_nvrtc_version(char *buf, size_t len);
/* 1 when gen_compile accepts arch (one of gen_arch_names(0)). */
int gen_arch_supported(const char *arch);

/* Compiles source (a standalone .cu from gen_expand, or any kernel source) for arch to CUBIN.
 * OUT: *out, filled on success (release it with gen_binary_free); zeroed on failure.
 * Returns 0, or -1 with the reason in err: an unsupported arch, or NVRTC's error and the head
 * of its log (the first compiler errors). */
int gen_compile(const char *source, const char *arch, gen_binary *out, char *err, size_t len);
/* Frees what gen_compile allocated and zeroes *b. NULL or a zeroed binary: nothing to do. */
void gen_binary_free(gen_binary *b);

/* Parses a ptxas -v log: per-entry resources into entries (at most max, in log order; OUT:
 * *entry_count) and the maxima over every function into *total (its name is empty). Lines it
 * does not know are skipped. Returns the number of entries found (may exceed max). */
int gen_ptxas_parse(const char *log, gen_resources *total, gen_resources *entries, int max,
                    int *entry_count);

#endif
