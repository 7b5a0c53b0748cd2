/* The template parameters: ONE table, and everything that is derived from it. Each row gives a
 * parameter's name (the template macro, the Lua space key, the database's kernel_params.name and
 * the text export's field), its role, its default, its range, a one-line meaning and, where they
 * exist, symbolic names of its values. The gen_param enum, the name and value tables, the common
 * range checks of gen_validate, `flashtune help`, the Lua space's checks and the database all
 * come from here, so adding a parameter is one row below (plus its use in templates and
 * families). Rows keep their order: it is the order in which parameters are printed, emitted
 * and exported, and the families index their defaults by the enum.
 *
 * Included by the generator and by db/ (the names and values only; db links ft_params, which is
 * gen_params.c alone, no NVRTC). */
#ifndef FT_GEN_PARAM_TABLE_H
#define FT_GEN_PARAM_TABLE_H

#include <stddef.h>

/* Who chooses a parameter's value. */
typedef enum gen_param_role {
    GEN_ROLE_PROBLEM,   /* the problem decides it (dtype, head dims, mask, divisibility) */
    GEN_ROLE_TUNABLE,   /* a search space may fix or search it; changes speed, never results */
} gen_param_role;

/* Symbolic value names, indexed by value from 0; NULL-terminated. */
#define GEN_VALUES(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define GEN_NO_VALUES NULL

/* X(NAME, role, default, min, max, step, value names, meaning). A value is valid when it is in
 * min..max and a multiple of step. 1024 bounds the tiles so that every derived size stays far
 * from overflow. DTYPE's codes are ft_dtype's in flashtune.h. */
#define GEN_PARAM_TABLE(X)                                                                                \
    X(DTYPE, GEN_ROLE_PROBLEM, 1, 0, 3, 1, GEN_VALUES("f32", "f16", "bf16", "f64"),                       \
      "element type of Q, K, V, O and their gradients")                                                   \
    X(HEAD_DIM, GEN_ROLE_PROBLEM, 64, 1, 256, 1, GEN_NO_VALUES, "head dimension of Q and K")              \
    X(HEAD_DIM_V, GEN_ROLE_PROBLEM, 64, 1, 256, 1, GEN_NO_VALUES, "head dimension of V and O")            \
    X(BLOCK_M, GEN_ROLE_TUNABLE, 64, 1, 1024, 1, GEN_NO_VALUES, "query rows per thread block")            \
    X(BLOCK_N, GEN_ROLE_TUNABLE, 64, 1, 1024, 1, GEN_NO_VALUES, "key rows per tile of the main loop")     \
    X(NUM_WARPS, GEN_ROLE_TUNABLE, 4, 1, 16, 1, GEN_NO_VALUES, "warps per thread block")                 \
    X(NUM_STAGES, GEN_ROLE_TUNABLE, 1, 1, 4, 1, GEN_NO_VALUES, "K/V tiles in flight (pipeline depth)")    \
    X(CAUSAL, GEN_ROLE_PROBLEM, 0, 0, 1, 1, GEN_NO_VALUES, "1: causal mask (top-left aligned)")           \
    X(CAUSAL_SKIP, GEN_ROLE_TUNABLE, 1, 0, 1, 1, GEN_NO_VALUES, "1: skip key tiles the mask hides")       \
    X(EVEN_M, GEN_ROLE_PROBLEM, 0, 0, 1, 1, GEN_NO_VALUES, "1: seqlen_q is a multiple of BLOCK_M")        \
    X(EVEN_N, GEN_ROLE_PROBLEM, 0, 0, 1, 1, GEN_NO_VALUES, "1: seqlen_k is a multiple of BLOCK_N")        \
    X(DQ_MODE, GEN_ROLE_TUNABLE, 0, 0, 3, 1, GEN_VALUES("atomic", "separate", "ordered", "direct"),       \
      "backward dQ: fp32 atomics then a convert kernel, its own kernel, atomics in a fixed order, or "    \
      "(float32) atomics straight into dQ")                                                                \
    X(OVERLAP, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                               \
      "1: a key tile's softmax runs under the previous tile's P V product (two score tiles in registers)") \
    X(PINGPONG, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                              \
      "1: the consumer warpgroups take turns at the tensor cores, one's softmax under the others' products") \
    X(PERSISTENT, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                            \
      "1: as many blocks as fit the GPU at once loop over the tiles (the next tile loads under this one)") \
    X(SOFTCAP, GEN_ROLE_PROBLEM, 0, 0, 1, 1, GEN_NO_VALUES,                                               \
      "1: scores capped to c tanh(S / c) before the softmax (c: the arguments' softcap)")                 \
    X(DATA_DIM, GEN_ROLE_PROBLEM, 0, 0, 256, 1, GEN_NO_VALUES,                                            \
      "a head dim of Q and K below HEAD_DIM, padded to it: columns past it read as zeros (0: none)")     \
    X(DATA_DIM_V, GEN_ROLE_PROBLEM, 0, 0, 256, 1, GEN_NO_VALUES,                                          \
      "a head dim of V and O below HEAD_DIM_V, padded to it: columns past it never stored (0: none)")     \
    X(VARLEN, GEN_ROLE_PROBLEM, 0, 0, 1, 1, GEN_NO_VALUES,                                                \
      "1: a variable-length batch, each sequence's rows and lengths from the arguments' prefix sums")     \
    X(SPLITS, GEN_ROLE_TUNABLE, 1, 1, 64, 1, GEN_NO_VALUES,                                               \
      "blocks that share a tile's work: a forward's query tile's keys, a backward's key tile's query heads of a group; a second step combines them") \
    X(PACK_GQA, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                              \
      "1: the query heads of a K/V group share a block, their rows packed into its tile (K/V read once a group)") \
    X(DQ_FIRST, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                              \
      "1: a backward tile's dQ product is issued before its dK product, so dQ is stored while dK runs") \
    X(DK_SS, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                                 \
      "1: a backward tile's dK product reads dS from shared memory (as dQ's does), not from registers") \
    X(DV_EARLY, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                              \
      "1: a backward tile's dV product is issued as soon as P is made, before dP is waited for")          \
    X(L_EARLY, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                               \
      "1: a backward tile's L and delta start its S and dP products' accumulators, read before the issue") \
    X(DQ_INIT, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_VALUES("zero", "store"),                                 \
      "backward dQ accumulator: zeroed before the kernel, or stored by the first key tile to reach a query tile, the others adding after it") \
    X(SINKS, GEN_ROLE_PROBLEM, 0, 0, 1, 1, GEN_NO_VALUES,                                                 \
      "1: attention sinks: a logit a query head (the arguments' sinks) joins every row's softmax as a score with no value") \
    X(ALLOW_TF32, GEN_ROLE_PROBLEM, 0, 0, 1, 1, GEN_NO_VALUES,                                            \
      "f32 on tensor cores: 0 keeps float32's accuracy (each product three TF32 products of split operands), 1 one TF32 product (the caller allowed TF32)") \
    X(SPLIT_SMEM, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                            \
      "f32 on tensor cores: 1 splits each streamed tile (the forward's K/V, the backward's Q/dO) into TF32 parts once, in shared memory, for every warp; 0 each warp splits the fragments it reads") \
    X(PRODUCER_REGS, GEN_ROLE_TUNABLE, 0, 0, 56, 8, GEN_NO_VALUES,                                        \
      "registers a thread of the producer warpgroup keeps (setmaxnreg), the consumers taking the rest: 24 to 56, or 0 for the family's choice") \
    X(STAGGER, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                               \
      "1: each key tile of a backward walks its query tiles from a place of its own (tile j of n from j/n of the way), so a head's key tiles do not add into the same dQ tile at once") \
    X(MULTICAST, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                             \
      "1: blocks run in clusters of two (adjacent query tiles of one head), each loading half of every K/V tile into both by the copy engine's multicast") \
    X(SPLIT_QUERIES, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                         \
      "f32 backward on tensor cores, two warps a key slab: 1 has each compute S^T and dP^T for half of a query tile's queries and exchange P^T and dS^T through shared memory, 0 has both compute all") \
    X(DQ_BULK, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                               \
      "f32 backward on Hopper: 1 stages each query tile's dQ in shared memory and adds it to dq_accum by one bulk reduction of the copy engine a query tile; 0 each thread adds its part by fp32 atomics") \
    X(P_SMEM, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                                \
      "16-bit Hopper forward: 1 stores each key tile's P to shared memory and reads it from there in O += P V (both operands from shared memory), which frees P's registers for wider tiles; 0 keeps P in registers") \
    X(BF16_PARTS, GEN_ROLE_TUNABLE, 0, 0, 1, 1, GEN_NO_VALUES,                                            \
      "f32 on Hopper tensor cores: 1 splits each float into three bfloat16 parts and makes each product of the six largest 16-bit part products (float32's accuracy, either operand order readable); 0 three TF32 products")

/* Every template parameter, in table order: GEN_DTYPE, GEN_HEAD_DIM, ... GEN_BF16_PARTS. */
typedef enum gen_param {
#define GEN_PARAM_ENUM_(name, role, def, lo, hi, step, values, help) GEN_##name,
    GEN_PARAM_TABLE(GEN_PARAM_ENUM_)
#undef GEN_PARAM_ENUM_
    GEN_PARAM_COUNT
} gen_param;

/* A set of parameters: bit p stands for gen_param p (GEN_BIT), as a family's `params` and
 * gen_param_mask give them. 64 bits: room for the table to grow past 32 rows. */
typedef unsigned long long gen_param_set;
#define GEN_BIT(param) ((gen_param_set)1 << (param))
_Static_assert(GEN_PARAM_COUNT <= 64, "gen_param_set holds 64 parameters: widen it for more");

/* One row of the table. */
typedef struct gen_param_info {
    const char *name;            /* "BLOCK_M" */
    gen_param_role role;
    int def;                     /* the value when nothing else says (a database row or text
                                  * written before the parameter existed reads as this) */
    int min, max, step;          /* valid: min..max, a multiple of step */
    const char *const *values;   /* symbolic names by value ("f32", ...), NULL-terminated; or NULL */
    const char *help;            /* one line: what it controls */
} gen_param_info;

/* ---- gen_params.c ---------------------------------------------------------------------- */

/* The row of param, or NULL out of range. */
const gen_param_info *gen_param_get(gen_param param);
/* "BLOCK_M": the name of the template macro, the Lua space key and the database's parameter
 * name. NULL for a value out of range. */
const char *gen_param_name(gen_param param);
/* The gen_param of a name (case-insensitive), or -1. */
int gen_param_lookup(const char *name);
/* GEN_BIT mask of the parameters of that role. */
gen_param_set gen_param_mask(gen_param_role role);
/* Parses one value: an integer, or one of the row's symbolic names (case-insensitive: "bf16"
 * for DTYPE, "separate" for DQ_MODE). Range checks are gen_param_check's. Returns 0, or -1 with
 * the reason in why (may be NULL). */
int gen_param_parse(gen_param param, const char *text, int *value /* OUT */, char *why, size_t len);
/* 0 when value is in the row's range and a multiple of its step, else -1 with the reason in
 * why: "NUM_STAGES=5 is out of range (1..4)", "CAUSAL=2 must be 0 or 1", "HEAD_DIM=300 is out
 * of range (1..256)". */
int gen_param_check(gen_param param, int value, char *why, size_t len);
/* The symbolic name of a value where there is one ("bf16" for DTYPE 2, "separate" for DQ_MODE
 * 1), else NULL. */
const char *gen_param_value_name(gen_param param, int value);
/* The value as text: its symbolic name, else the integer. Returns buf. */
const char *gen_param_format(gen_param param, int value, char *buf, size_t len);
/* "f32", "f16", "bf16", "f64", or "?". */
const char *gen_dtype_name(int dtype);
/* The one integer syntax of every flashtune input (PARAM=VALUE, workload text, CLI options):
 * decimal digits with an optional leading '-', nothing else (no blanks, no '+', no "0x").
 * Returns 0 with *out set when text is such an integer in lo..hi, else -1. */
int gen_parse_long(const char *text, long lo, long hi, long *out /* OUT */);

#endif
