/* The database layer's API (prefix db_): open/create/migrate a flashtune SQLite file, store
 * devices, kernels, CUBINs, workloads, sweeps and results, query winners and the rows behind the
 * CLI's tables (the tuner prints them: tune_print.c), export/import winners as text. Used by the tuner, the runtime and the tests; never
 * installed. The schema is db/schema.sql (tables, the winners view, what each column means).
 *
 * Errors: every fallible call takes err/len (a caller buffer, always NUL-terminated when
 * len > 0; err may be NULL) and returns -1 with a message that names the function and the
 * argument or file, e.g. "db_open: /x/t.db is not a flashtune database (application_id
 * 0x00000000)". 0 is success; lookups return 1 found, 0 not found.
 *
 * Durability: every write call is one transaction, committed before it returns (WAL mode,
 * synchronous=FULL), so a killed process loses only the call in flight. Several processes
 * may write one file: each waits up to DB_BUSY_TIMEOUT_MS for the others' short
 * transactions. Never use a handle across fork(); open one in the child.
 *
 * Thread safety: calls on one handle are serialized by a mutex inside it, so the tuner's
 * compile threads may share the handle. Structs returned by value are the caller's. */
#ifndef FT_DB_INTERNAL_H
#define FT_DB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct sqlite3 sqlite3;
typedef struct db db;

/* PRAGMA application_id of every flashtune database: "FTDB", so a foreign file is recognized. */
#define DB_APPLICATION_ID 0x46544442
/* How long a call waits for another process's write lock before it fails. */
#define DB_BUSY_TIMEOUT_MS 10000

/* ---- names shared with the generator, the Lua spaces and the logs (db_core.c) ---------- */

/* The template parameters are the generator's table (gen_param_table.h; db links ft_params,
 * not the generator): db_kernel.p is indexed by gen_param, and each parameter is stored as a
 * row (kernel_id, name, value) of kernel_params, so a new parameter needs no schema change.
 * Reading a kernel: a parameter the row lacks (written before the parameter existed) reads as
 * the table's default; a name this build does not know (written by a newer flashtune) is an
 * error naming the kernel and the parameter, never silently dropped: the kernel it describes
 * is not one this build can generate. */
#include "gen_param_table.h"

/* "f32", "f16", "bf16", "f64" (codes as ft_dtype and DTYPE), or NULL. */
const char *db_dtype_name(int dtype);
int db_dtype_parse(const char *name);   /* the code, or -1 */
/* "fwd"/"bwd" (DB_OP_FWD, DB_OP_BWD), or NULL. */
const char *db_op_name(int op);
int db_op_parse(const char *name);      /* the op, or -1 */

/* ---- opening (db_open.c, db_migrate.c) -------------------------------------------------- */

enum {
    DB_OPEN_READONLY = 1,   /* never writes; the file must be a current flashtune database */
    /* Create the file when missing: built complete under a temporary name beside it, then
     * linked into place, so no reader sees a half-made file and of two processes creating it
     * at once one creates it and the other opens it. An existing empty file (mktemp's) is
     * given the schema. Without this flag an empty file is refused, never written. */
    DB_OPEN_CREATE = 2,
};

/* Opens path. A missing or empty file gets the schema with DB_OPEN_CREATE, else is an error.
 * A flashtune file of an older schema is migrated in one transaction (not when read-only:
 * that is an error). Before anything is written the file is checked through a read-only
 * connection, and these are errors that leave the file byte for byte untouched: not an SQLite
 * file; an SQLite file that is not flashtune's ("is not a flashtune database (application_id
 * 0x...)"); a newer schema ("schema version 7 is newer than this flashtune's 1"); an empty
 * file without DB_OPEN_CREATE. Sets WAL (writable), the busy
 * timeout and foreign keys. A read-only handle on a WAL file may leave empty -wal and -shm
 * files beside it (SQLite's way; the next writable close removes them), except in a folder it
 * cannot write, where the file is read as immutable. OUT: *out, the handle, or NULL. */
int db_open(const char *path, int flags, db **out, char *err, size_t len);
/* Closes the handle; NULL does nothing. */
void db_close(db *d);
/* The schema version this code creates and reads. */
int db_schema_version(void);
/* The underlying connection, for tests and ad-hoc SQL. Writes through it bypass every check. */
sqlite3 *db_sqlite(db *d);

/* ---- rows (db_rows.c) --------------------------------------------------------------- */

typedef struct db_device {
    char name[128];            /* "NVIDIA H100 80GB HBM3" */
    char arch[16];             /* "sm_90" */
    int cc_major, cc_minor;    /* compute capability 9.0 */
    int sm_count;
    char driver_version[16];   /* "13.0" */
    char nvrtc_version[16];    /* "13.0" */
} db_device;

typedef struct db_kernel {
    char family[32];           /* "fwd_mma" */
    char source_hash[17];      /* 16 lower-case hex digits: gen_source_hash of its source */
    int p[GEN_PARAM_COUNT];    /* indexed by gen_param, as gen_config.p */
} db_kernel;

enum { DB_OP_FWD = 0, DB_OP_BWD = 1 };

typedef struct db_workload {
    int op;                    /* DB_OP_FWD or DB_OP_BWD */
    int dtype;                 /* 0 f32, 1 f16, 2 bf16, 3 f64 */
    int head_dim, head_dim_v;
    int causal;                /* 1: keys right of the diagonal hidden (ft_attention_desc's causal), else 0.
                                * The kernels' CAUSAL flag is db_workload_masked: causal or a window */
    int batch, heads, seqlen_q, seqlen_k;
    int heads_k;               /* key/value heads of grouped-query attention: 0 none (as many as heads),
                                * else fewer, dividing heads */
    int softcap;               /* 1: scores capped (c tanh(S / c); its kernels have SOFTCAP 1), else 0 */
    int varlen;                /* 0: a dense batch. 1..8: a variable-length batch of `batch` sequences at most
                                * seqlen_q, seqlen_k long, its tokens filling that many eighths of
                                * batch x the longest lengths (db_varlen_bucket); its kernels have VARLEN 1 */
    int window;                /* 1: a local window, window_left / window_right keys visible left / right of
                                * the diagonal (-1: no limit on that side); 0: none, both sides 0 */
    int window_left, window_right;
    int bottom_right;          /* 1: the mask's diagonal ends at the last query and key (FT_ALIGN_BOTTOM_RIGHT);
                                * only on a mask whose alignment matters (db_workload_set_mask) */
    /* The fields added since schema 6 (DB_WORKLOAD_EXTRA_FIELDS: stored in one column): */
    int sinks;                 /* 1: a sink logit a query head joins every row's softmax (attention sinks) */
    int tf32;                  /* 1: f32 whose products may round to TF32 (ft_attention_desc.allow_tf32);
                                * its kernels have ALLOW_TF32 1 */
} db_workload;

/* ---- a workload's kind (db_workload_kind.c) ------------------------------------------------ */

/* Every zero-initialized db_workload is a plain dense problem without a mask. A mask is stored in
 * one form only, so that equal masks are equal keys: db_workload_set_mask makes it. */

/* Sets w's mask (causal, window, window_left, window_right, bottom_right) from a problem's:
 * causal as ft_attention_desc's, sides -1 for no limit, as ft_mask_band takes them. Canonical:
 * a window whose only limit is the diagonal's right is causal, a causal mask's window is its
 * left side (window_right 0), and bottom_right is kept only where it moves the diagonal (the
 * lengths differ, or a variable-length batch's may): set w's lengths and varlen first. */
void db_workload_set_mask(db_workload *w, int causal, int bottom_right, int window_left, int window_right);
/* 1 when w has a mask at all (its kernels' CAUSAL). */
int db_workload_masked(const db_workload *w);
/* Decode shapes: a forward of at most DB_DECODE_ROWS query rows, f16 or bf16. Their kernels split
 * the keys over blocks and pack a group's query heads into one tile (fwd_mma SPLITS, PACK_GQA); a
 * winner tuned for a decode shape serves only decode shapes, and one tuned for longer queries
 * only those; a captured decode problem is tuned by the spaces of decode shapes only. 1 or 0. */
#define DB_DECODE_ROWS 16
int db_workload_decode(const db_workload *w);
/* A decode shape whose mask, if any, is the causal diagonal bottom-right (no window): over more keys
 * than its rows the diagonal hides keys of the last tile at most, so such a shape runs the same
 * work masked or not, and winners of either mask serve it (the mask's difference half a kind gap,
 * the kernel compiled with the problem's own; rt_choose falls back to a winner of the problem's
 * own mask where the other's does not fit it). A causal shape of equal lengths keeps top-left
 * (db_workload_set_mask) and is not one. */
int db_workload_decode_any_mask(const db_workload *w);
/* A backward of few K/V heads (grouped-query attention) shares each group's query heads over
 * this many blocks a key tile (SPLITS of the families that take it): the smallest divisor of the
 * group, at most DB_GROUP_SPLITS_MAX, that brings the blocks (batch * heads_k * key tiles of 128)
 * to DB_GROUP_SPLIT_BLOCKS, or under a mask over at least DB_GROUP_SPLIT_MASKED_QUERIES queries
 * to DB_GROUP_SPLIT_BLOCKS_MASKED and at least 2 (its key tiles' work differs, so the heavy-first
 * walk's tail wants more, smaller blocks: at 32/8 heads, causal, split 2 beat unsplit and split
 * 4 at N 4096 and 8192, and at 64/8 split 4 and 8; notes/kernels.md, the grouped-query split).
 * Fewer queries leave the key tiles' work nearly equal and each split's fp32 dK and dV partials
 * weigh against little work (speculative decoding, 16 queries over 4096 keys: split 2 halved its
 * backward's speed). 1 for a forward, a variable-length batch or no grouping. The problem alone
 * decides it, so that a workspace size needs no GPU, and the runtime and the tuner agree on the
 * kernel: the runtime launches a grouped backward with it whatever its winner was tuned with, and
 * the tuner compiles a grouped backward's candidates with it (tune_space_enum.c). */
#define DB_GROUP_SPLITS_MAX 8
#define DB_GROUP_SPLIT_BLOCKS 256
#define DB_GROUP_SPLIT_BLOCKS_MASKED 1024
#define DB_GROUP_SPLIT_MASKED_QUERIES 4096
int db_workload_group_splits(const db_workload *w);
/* The band's sides as ft_mask_band takes them with causal 0 (-1 no limit): OUT *left, *right. */
void db_workload_mask_sides(const db_workload *w, int *left, int *right);
/* A variable-length batch's bucket, 1..8: its tokens (total_q + total_k) over batch x (longest_q +
 * longest_k), in eighths rounded up. Only host-side sizes: the lengths themselves stay on the
 * device. */
int db_varlen_bucket(int batch, int longest_q, int longest_k, long long total_q, long long total_k);
/* The fill a bucket stands for (its middle: (bucket - 0.5) / 8): what the tuner measures it at. */
double db_varlen_fill(int bucket);

/* Each finds the row with the same key (device: name, arch, driver and NVRTC versions; kernel:
 * source_hash; workload: every field) or inserts it. OUT: *id, the row's id. Idempotent.
 * A kernel whose hash is stored with another family or parameters is an error (the hash is
 * the identity). Fields are checked: empty names, dims < 1, a dtype or op out of range, a mask
 * not in the form db_workload_set_mask makes, varlen outside 0..8. */
int db_device_upsert(db *d, const db_device *dev, int64_t *id, char *err, size_t len);
int db_kernel_upsert(db *d, const db_kernel *k, int64_t *id, char *err, size_t len);
int db_workload_upsert(db *d, const db_workload *w, int64_t *id, char *err, size_t len);
/* The id of the workload equal to w: 1 found (OUT: *id), 0 not stored, -1 error. */
int db_workload_find(db *d, const db_workload *w, int64_t *id, char *err, size_t len);
/* A row by id: 1 found (OUT: *out), 0 no such id, -1 error. */
int db_kernel_get(db *d, int64_t id, db_kernel *out, char *err, size_t len);

/* ---- the CUBIN cache (db_binaries.c) ------------------------------------------------- */

typedef struct db_binary {
    char cache_key[17];        /* gen_cache_key: hash of (source, options, arch, NVRTC version) */
    char arch[16];             /* the compile target ("sm_90a") */
    char nvrtc_version[16];
    void *cubin;               /* owned by the caller after db_binary_find (db_binary_release) */
    size_t cubin_size;         /* bytes */
    int registers, spill_store_bytes, spill_load_bytes, stack_frame_bytes, static_smem_bytes;
    double compile_seconds;
    /* The rest of what the key hashes (gen_cache_id), stored so that a lookup compares them;
     * the caller's strings, never read back (NULL after a find). */
    const char *compile_options;
    const char *source;
} db_binary;

/* Zeroes *b and sets what a CUBIN is compiled from (a gen_cache_id's fields; the strings are
 * the caller's): the key of db_binary_lookup, or of db_binary_put with the CUBIN added. */
void db_binary_init(db_binary *b, const char *cache_key, const char *arch, const char *nvrtc_version,
                    const char *compile_options, const char *source);
/* Stores b for kernel kernel_id. When its cache_key is stored with the same arch, NVRTC version,
 * options and source, that row is kept (same inputs, same bytes); with other inputs (a row
 * from before schema 3, or a collision) the row is replaced in place. b->cubin and the strings
 * are copied. OUT: *id (may be NULL). */
int db_binary_put(db *d, int64_t kernel_id, const db_binary *b, int64_t *id, char *err, size_t len);
/* The binary of that cache key, whatever it was compiled from (listings, tests; a cache uses
 * db_binary_lookup): 1 found (OUT: *out, its cubin malloc'ed; *id if id not NULL), 0 not
 * cached, -1 error. */
int db_binary_find(db *d, const char *cache_key, db_binary *out, int64_t *id, char *err, size_t len);
/* The binary of want's cache key only when it was compiled from want's arch, NVRTC version,
 * options and source, byte for byte (all four required): 1 found (OUT as db_binary_find), 0
 * not cached or the key stored for other inputs (a collision, a forged or pre-schema-3 row), -1
 * error. */
int db_binary_lookup(db *d, const db_binary *want, db_binary *out, int64_t *id, char *err, size_t len);
/* The newest binary of kernel kernel_id for this arch and NVRTC version (what the runtime may
 * load without compiling): 1 found, 0 none, -1 error. */
int db_binary_find_for_kernel(db *d, int64_t kernel_id, const char *arch, const char *nvrtc_version,
                              db_binary *out, int64_t *id, char *err, size_t len);
/* Frees out->cubin and zeroes *b. NULL does nothing. */
void db_binary_release(db_binary *b);

/* ---- sweeps and results (db_results.c) ---------------------------------------------- */

typedef enum db_status {
    DB_STATUS_OK,              /* validated and timed */
    DB_STATUS_INVALID,         /* ran, but its output failed validation */
    DB_STATUS_COMPILE_ERROR,
    DB_STATUS_LAUNCH_ERROR,
    DB_STATUS_CRASHED,         /* the worker died (illegal address...) */
    DB_STATUS_TIMEOUT,         /* the watchdog fired */
    DB_STATUS_SKIPPED,         /* not run (pruned by the strategy) */
    DB_STATUS_COUNT
} db_status;
/* "ok", "invalid", "compile_error", ... as stored in results.status; NULL out of range. */
const char *db_status_name(db_status s);
int db_status_parse(const char *name);   /* the db_status, or -1 */

typedef struct db_result {
    int64_t sweep_id, device_id, workload_id, kernel_id;
    int64_t binary_id;         /* 0: none (compile error, imported) */
    db_status status;          /* DB_STATUS_OK needs median_ms > 0 */
    /* NAN (or any non-finite value) is stored as NULL: not measured. */
    double median_ms, min_ms;
    double spread;             /* (p90 - p10) / median of the repetitions */
    double tflops;
    double rel_error, max_abs_error;
    const char *message;       /* why it failed, or NULL; copied */
    /* The GPU's clocks while it was timed: the least SM clock (MHz) and NVML's clock event
     * reasons seen (a bit set, tune_clocks.h; -1: the GPU did not say). Stored only where
     * sm_mhz > 0 (else both NULL: not sampled, as a zeroed struct says). */
    double sm_mhz;
    long long clock_events;
} db_result;

/* A new sweep row (started now). host NULL: this machine's hostname. OUT: *id. */
int db_sweep_begin(db *d, const char *space_file, const char *space_hash, const char *host,
                   int64_t *id, char *err, size_t len);
/* Sets the sweep's finished_at to now. */
int db_sweep_end(db *d, int64_t sweep_id, char *err, size_t len);
/* Stores r, committed before it returns; a result already stored for the same (device,
 * workload, kernel) is replaced (a re-measurement). The kernel's DTYPE and head dims must be the
 * workload's, its CAUSAL db_workload_masked's (a trigger enforces it). */
int db_result_put(db *d, const db_result *r, char *err, size_t len);
/* For resume: 1 when a sweep stored a result of (device, workload, kernel) (OUT: *status, may be
 * NULL), 0 when not (one imported from a winners file does not count: a sweep re-times it), -1
 * error. */
int db_result_get(db *d, int64_t device_id, int64_t workload_id, int64_t kernel_id,
                  db_status *status, char *err, size_t len);

/* The clocks of a sweep's valid timings on one device: how many were timed and how many of
 * those sampled the clocks, the least and greatest SM clock (NAN: none sampled), how many saw a
 * clock event reason, and every reason seen (a bit set, tune_clocks.h). */
typedef struct db_clock_summary {
    int timed, sampled, held;
    double least_mhz, most_mhz;
    long long events;
} db_clock_summary;
int db_sweep_clocks(db *d, int64_t sweep_id, int64_t device_id, db_clock_summary *out, char *err, size_t len);

/* ---- winners (db_query.c) ---------------------------------------------------------------- */

/* How a winner matched the asked device and workload, for ft_describe_choice. */
enum { DB_MATCH_EXACT = 0, DB_MATCH_NEAREST = 1 };        /* workload */
enum { DB_MATCH_SAME_GPU = 0, DB_MATCH_SAME_ARCH = 1 };   /* device */

typedef struct db_winner {
    int64_t device_id, workload_id, kernel_id, result_id;
    db_device device;
    db_workload workload;      /* the tuned workload (differs from the asked one when nearest) */
    db_kernel kernel;
    double median_ms, tflops;
    int workload_match;        /* DB_MATCH_EXACT or DB_MATCH_NEAREST */
    int device_match;          /* DB_MATCH_SAME_GPU or DB_MATCH_SAME_ARCH */
    int name_match;            /* the length of the name the winner's GPU shares with the asked one from
                                * its start ("NVIDIA H100 PCIe": 12 with "NVIDIA H100 80GB HBM3") */
    double kind_gap;           /* 0: the asked workload's kind (group ratio, softcap, mask, varlen); else how far */
    double distance;           /* the nearest-workload distance; 0 when exact */
} db_winner;

/* The best kernel for workload w on a device: name and arch filter the devices (NULL: any).
 * Candidates: the same op, dtype and head dims, and kernels of w's CAUSAL (db_workload_masked: a
 * windowed problem takes causal or windowed winners, never unmasked ones; a decode shape whose
 * mask is none or the causal diagonal bottom-right takes such decode shapes of either,
 * db_workload_decode_any_mask). Order of preference:
 * the same GPU (name and arch), then another GPU of the arch, the one whose name shares the
 * longest start with device_name first (a model's other boards before another model); within
 * those, the workloads of w's kind first (the same group ratio heads / heads_k, softcap, mask and
 * varlen bucket; else the nearest kind, kind_gap: |ln(ratio/ratio')|; plus 1 each for a softcap,
 * causal, window or bottom_right that differs (0.5 in all between two db_workload_decode_any_mask
 * shapes); for two windows, per side 0.5 when one is unlimited (-1), else
 * min(0.5, 0.25*|ln((a+1)/(b+1))|); plus 1 for dense against varlen, |a-b|/8 for two buckets),
 * then the exact workload, then the nearest. Nearest: smallest |ln(seqlen_q/q')| +
 * |ln(seqlen_k/k')| + 4*|ln(fill/fill')|, fill the grid's tiles of 128 rows in waves on the SMs
 * (the forward's query tiles, the backward's key tiles of the K/V heads; capped at 4), the
 * problem's counted on the row's SMs here and on the caller's in db_winner_find_if (decode shapes:
 * 0.5*|ln(batch*heads_k/b'h_k')|, the K/V heads, in its place), ties to the lower workload id; among rows of
 * one GPU name, the newest device row (driver/NVRTC).
 * device_match is DB_MATCH_SAME_GPU only when device_name is given and equal. The caller must
 * recompute EVEN_M/EVEN_N for its own seqlens when the match is nearest. 1 found (OUT: *out),
 * 0 none, -1 error. */
int db_winner_find(db *d, const char *device_name, const char *arch, const db_workload *w,
                   db_winner *out, char *err, size_t len);
/* The same among the winners `accept` takes (accept(candidate, ctx) nonzero, its workload and
 * kernel read; NULL: every one): the caller's own rule of what may serve w (the runtime's: a decode
 * kernel for decode shapes only; at head dims padded past the problem's, a family that pads them
 * so), applied before the nearest is chosen, so a nearer winner it refuses does not hide a farther
 * one it takes; and w's fill counted on sm_count SMs, the GPU it will run on (0: each row's own). */
int db_winner_find_if(db *d, const char *device_name, const char *arch, int sm_count, const db_workload *w,
                      int (*accept)(const db_winner *candidate, void *ctx), void *ctx, db_winner *out, char *err,
                      size_t len);
/* Every winner, in export order (device name, arch, driver, NVRTC, then the workload fields).
 * OUT: *out (malloc'ed array, free() it; NULL when none), *count. */
int db_winners_list(db *d, db_winner **out, int *count, char *err, size_t len);

/* ---- declared winners (db_declare.c) ---------------------------------------------------- */

/* Timing the same kernels twice moves their medians by about 2 % (the tuner's ground truth,
 * bench/RESULTS.md), so a winner is declared rather than read off as the least median:
 * DB_DECLARE_MARGIN is the least interval of a tie, a fraction of the fastest's median. Spreads
 * widen it (two timings tie when their intervals overlap) up to DB_DECLARE_SPREAD_CAP. */
#define DB_DECLARE_MARGIN 0.02
#define DB_DECLARE_SPREAD_CAP 0.05

/* Why a kernel was declared: the fastest; the stored winner kept (it ties with the fastest); the
 * tied kernel that ties at the most other workloads of its kind; a winners file's line; a tied
 * kernel that spills no registers where the faster tied ones do. */
enum {
    DB_DECLARED_FASTEST,
    DB_DECLARED_KEPT,
    DB_DECLARED_HOLDS,
    DB_DECLARED_IMPORTED,
    DB_DECLARED_SPILL_FREE,
    DB_DECLARED_COUNT
};
/* "fastest", "kept", "holds", "imported", "spill_free" ("?" out of range). */
const char *db_declared_name(int reason);

typedef struct db_declared {
    int64_t kernel_id;
    int reason;                /* DB_DECLARED_* */
    double behind;             /* its median over the fastest's, less 1 (0.012: 1.2 % behind); NAN: not known */
    int neighbours;            /* at how many other workloads of its kind it ties with the fastest; -1 not known */
    int spills;                /* db_declared_get: its binary's spill bytes there (stores and loads); -1 not
                                * known (no binary stored with its result: an imported line's) */
} db_declared;

typedef struct db_declare_counts {
    int workloads;
    int by_reason[DB_DECLARED_COUNT];
    int untimed;               /* of them, those whose stored winner no sweep timed here: replaced */
} db_declare_counts;

/* Declares the winner of each workload in workload_ids[0..n) on device_id (device_id <= 0: every
 * device; n 0: every workload with timings), judged on the valid results sweeps stored there
 * (imported ones are not timings of this machine). A timing ties with the workload's fastest when
 * its median is within the wider of margin and half the two spreads (at most
 * DB_DECLARE_SPREAD_CAP) of the fastest's. Declared: the kernel declared before for the workload
 * on this GPU (this device row, else another row of its name and arch) while it ties, unless it
 * spills registers (its binary's spill bytes) and a tied kernel does not; else of the tied
 * kernels, those spilling nothing first where there are any, the one that ties at the most other
 * workloads of the kind (every field but batch, heads and lengths the same, the group ratio too;
 * one kernel: the same family and tunables), the faster at equal counts; a workload without a tie
 * gets its fastest. A declared kernel that no sweep timed here (an imported line's that was not
 * re-timed, another row's) is not kept on a figure of another run where a sweep timed its family
 * there: the workload's timings decide as if none were declared (counts->untimed); where no sweep
 * timed its family (another family's space alone) it stays while its stored figure ties with the
 * fastest. The winners view then serves the declared kernel.
 * One transaction. OUT (may be NULL): *counts. */
int db_declare_winners(db *d, int64_t device_id, const int64_t *workload_ids, int n, double margin,
                       db_declare_counts *counts, char *err, size_t len);
/* The kernel declared for (device, workload) that db_declare_winners weighs the workload's
 * timings against (the incumbent): this device row's declaration, else the newest of another row
 * of the same GPU (name and arch). 1 found (OUT: *kernel_id), 0 none declared, -1 error. */
int db_declared_incumbent(db *d, int64_t device_id, int64_t workload_id, int64_t *kernel_id, char *err, size_t len);
/* The kernel declared for (device, workload) as db_declare_winners finds it (this device row's
 * declaration, else the newest of another row of its GPU) when no sweep timed it on device_id but
 * one timed its family there, so that a declaration of the workload's timings replaces it: 1 (OUT:
 * *kernel_id), 0 none declared, or it was timed, or its family was not, -1 error. */
int db_declared_untimed(db *d, int64_t device_id, int64_t workload_id, int64_t *kernel_id, char *err, size_t len);
/* The declaration of (device, workload), with the declared kernel's spills: 1 found (OUT: *out),
 * 0 none, -1 error. */
int db_declared_get(db *d, int64_t device_id, int64_t workload_id, db_declared *out, char *err, size_t len);

/* ---- text forms (db_text.c) -------------------------------------------------------- */

/* "op=fwd dtype=f16 head_dim=128 head_dim_v=128 causal=0 batch=4 heads=16 seqlen_q=4096
 * seqlen_k=4096", then only those set of " heads_k=N softcap=1 window=1 window_left=N
 * window_right=N bottom_right=1 varlen=N" (a plain workload prints as before they existed).
 * Returns buf. */
const char *db_workload_format(const db_workload *w, char *buf, size_t len);
/* Those of " heads_k=N softcap=1 window=1 window_left=N window_right=N bottom_right=1 varlen=N"
 * that w has ("" for a plain workload): its kind, as db_workload_format ends. Returns buf. */
const char *db_workload_kind_format(const db_workload *w, char *buf, size_t len);
/* Parses space-separated NAME=VALUE fields: op, dtype, head_dim, batch, heads, seqlen_q,
 * seqlen_k are required; head_dim_v defaults to head_dim, causal, heads_k, softcap, window,
 * window_left, window_right, bottom_right and varlen to 0; also accepts the short names d, dv, b,
 * h, sq, sk, hk. The mask must be in its stored form (as db_workload_set_mask makes it). For the
 * CLI's workload arguments. */
int db_workload_parse(const char *text, db_workload *w /* OUT */, char *err, size_t len);

/* ---- capture files (db_capture.c) ------------------------------------------------------ */

/* What chose a captured problem's kernel: a winner tuned for exactly it, the nearest tuned one,
 * or the built-in choice. */
enum { DB_SERVED_TUNED, DB_SERVED_NEAREST, DB_SERVED_DEFAULT };

/* One problem an application ran: its workload, whether it was a repeatable (deterministic)
 * backward, how many calls, and what served it last. */
typedef struct db_capture_row {
    db_workload workload;
    int deterministic;
    unsigned long long calls;
    int served;                 /* DB_SERVED_* */
} db_capture_row;

/* "tuned", "nearest", "default" ("?" out of range). */
const char *db_served_name(int served);
/* The rows of a capture file's text (path names it in messages): a first line "flashtune capture
 * format 1", then one problem a line, "#" comments and blank lines skipped. OUT: *rows
 * (malloc'ed, NULL when none), *count. 0, or -1 with "path:line: why". */
int db_capture_parse(const char *path, const char *text, db_capture_row **rows, int *count, char *err, size_t len);
/* db_capture_parse of the file at path (at most 64 MiB). */
int db_capture_read(const char *path, db_capture_row **rows, int *count, char *err, size_t len);
/* Adds rows to the file at path, under an exclusive lock of path.lock: a problem already there
 * (or in an earlier row) gets its calls added (saturating) and the new served; a new one is
 * appended; the file is made
 * when missing and replaced by rename, so a crash leaves the old one. A file that does not parse
 * is left as it is: -1 naming its line, nothing written. 0, or -1 with the reason. */
int db_capture_merge(const char *path, const db_capture_row *rows, int n, char *err, size_t len);

/* ---- export / import of winners (db_export.c, db_import.c) ------------------------------ */

/* The text format version db_export writes and the highest db_import reads. */
#define DB_TEXT_FORMAT 1
/* The largest winners file db_import_read reads: far above any real one (the shipped H100 file
 * is 50 KB), so that /dev/zero or a wrong file fails at once rather than after gigabytes. */
#define DB_IMPORT_MAX_BYTES (64 << 20)

/* Writes every winner as text: the line "flashtune winners format 1", comment lines, then one
 * line per winner in db_winners_list's order, NAME=VALUE fields: the device (name quoted),
 * the workload, family, source_hash, every parameter, median_ms and tflops (%.6g). The same
 * database always gives the same bytes. */
int db_export(db *d, FILE *out, char *err, size_t len);

/* Checks one parsed winner beyond the form of its text: whether this build generates that
 * kernel for that workload on that device. db/ links only the generator's parameter table (no
 * NVRTC, no templates), so the check is the caller's: db_import_check_generated (ft_db_check,
 * db_import_check.c) asks the generator. 0, or -1 with the reason in why (no line prefix). */
typedef int (*db_import_check_fn)(const db_device *dev, const db_workload *w, const db_kernel *k, char *why,
                                  size_t len);

typedef struct db_import_options {
    /* 0: a winner faster than the stored one of its (device, workload) replaces it; 1: a stored
     * winner is never replaced (its line is counted as kept). */
    int keep;
    db_import_check_fn check;   /* NULL: only the text's form and the rows' field checks */
} db_import_options;

/* What an import did, one count per winner line. */
typedef struct db_import_counts {
    int added;       /* no winner was stored for its device and workload */
    int replaced;    /* it was faster than the stored winner, which it replaced */
    int kept;        /* the stored winner stays: the same, faster, or keep was asked */
} db_import_counts;

/* Reads text written by db_export (name: shown in errors and stored in the sweep row as
 * "import:NAME"). Every line is parsed and checked first (opt->check too); a bad one rejects
 * the whole text with "NAME:LINE: reason" naming the field and value, and nothing is written.
 * Then one transaction creates the missing devices, workloads and kernels, and per line:
 * a result (status ok) when its (device, workload) has no winner; when it has one, the line's
 * kernel and time become the winner if faster (unless opt->keep), else nothing changes; a line
 * stored is declared (DB_DECLARED_IMPORTED), so the view serves it. So
 * importing the same text twice changes nothing. opt NULL: the defaults (replace, no check).
 * OUT (may be NULL): *counts. */
int db_import_text(db *d, const char *name, const char *text, const db_import_options *opt,
                   db_import_counts *counts, char *err, size_t len);
/* The first steps of db_import_text without a database: parse and check every line. For a
 * caller that creates a database only for good text. OUT (may be NULL): *count, the winners. */
int db_import_check(const char *name, const char *text, const db_import_options *opt, int *count, char *err,
                    size_t len);
/* Reads the file at path into *text (malloc'ed, NUL-terminated; the caller frees it): a
 * regular file or a stream of at most DB_IMPORT_MAX_BYTES, without NUL bytes. Errors name the
 * path and the reason ("is a directory", strerror, the size limit). */
int db_import_read(const char *path, char **text, char *err, size_t len);
/* db_import_read, then db_import_text with name = path. */
int db_import_file(db *d, const char *path, const db_import_options *opt, db_import_counts *counts, char *err,
                   size_t len);

/* ---- the rows behind the CLI's tables (db_listing.c; printed by tuner/tune_print.c) ---- */

/* Columns db_results_list sorts by: "median_ms" (default when sort is NULL), "min_ms",
 * "spread", "tflops" (largest first), "rel_error", "max_abs_error", "registers", "spills",
 * "smem", "compile_seconds", "status", "kernel", or a parameter name ("BLOCK_M"). A leading '-'
 * reverses. Rows with no value sort last. */
extern const char *const db_sort_columns[];

/* One stored result of a workload, with its device, kernel and binary. */
typedef struct db_result_row {
    int64_t device_id, kernel_id;
    db_device device;
    db_kernel kernel;
    int winner;                       /* 1: the winners view picks this result */
    db_status status;
    double median_ms, min_ms, spread, tflops, rel_error;   /* NAN: not measured */
    double sm_mhz;                    /* NAN: not sampled (db_result) */
    long long clock_events;           /* -1: not sampled */
    long long registers, spills, smem;   /* from the binary; -1: no binary stored */
    char message[256];                /* why it failed ("" when none), truncated */
} db_result_row;

/* Every result of workload w, grouped by device (name, arch, driver, NVRTC), each device's rows
 * in the order sort asks. OUT: *out (malloc'ed, free() it; NULL when none), *count. An unknown
 * sort column or workload: -1. */
int db_results_list(db *d, const db_workload *w, const char *sort, db_result_row **out, int *count,
                    char *err, size_t len);

/* One stored workload with how many results it has, how many are ok, and the best time. */
typedef struct db_workload_row {
    int64_t id;
    db_workload workload;
    int results, ok;
    double best_ms;                   /* NAN: no valid result */
} db_workload_row;

/* Every workload in order of its fields. OUT: *out (malloc'ed, free() it), *count. */
int db_workloads_list(db *d, db_workload_row **out, int *count, char *err, size_t len);
/* How many results (device, workload) has, and how many of them are ok. OUT: *total, *ok. */
int db_result_counts(db *d, int64_t device_id, int64_t workload_id, int *total, int *ok, char *err,
                     size_t len);
/* The path the handle was opened with (for messages); NULL for NULL. */
const char *db_file_path(db *d);

#endif
