/* A template family as the generator sees it: its file, dtypes, entry points, shared memory
 * and constraints. One family per generator/family_<name>.c, owned with its template. */
#ifndef FT_GEN_FAMILY_INTERNAL_H
#define FT_GEN_FAMILY_INTERNAL_H

#include <stddef.h>

/* Every template parameter (enum gen_param, GEN_DTYPE ... GEN_PERSISTENT, GEN_PARAM_COUNT), generated
 * from the one parameter table. */
#include "gen_param_table.h"


/* A family's list of parts: FT_PARTS("traits/fwd_mma.h", "arch/sm80.cuh"). */
#define FT_PARTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The operation an entry belongs to. GEN_OP_FAMILY (0, what an initializer that leaves it out
 * gets): the family's direction (its `backward` flag). The ref family, which holds both
 * directions and the tuner's utilities, names each entry's. */
typedef enum gen_entry_op { GEN_OP_FAMILY, GEN_OP_FORWARD, GEN_OP_BACKWARD, GEN_OP_UTILITY } gen_entry_op;

/* One kernel of a family. */
typedef struct gen_entry {
    const char *name;                       /* extern "C" symbol, e.g. "ft_fwd" */
    int key_major;                          /* 1: grid.x = ceil(seqlen_k / BLOCK_N); 0: seqlen_q / BLOCK_M */
    size_t (*smem_bytes)(const int *p);     /* dynamic shared memory for this entry */
    int (*used)(const int *p);              /* NULL: always launched; else 1 when launched for p */
    gen_entry_op op;                        /* which operation launches it (0: the family's own) */
    /* 1: a forward's main kernel that takes SPLITS and PACK_GQA: grid.x is its query tiles times
     * SPLITS, and with PACK_GQA the tiles are of the packed rows (seqlen_q * heads / heads_k) and
     * grid.y counts K/V heads (ln_launch). 0: a plain entry. */
    int split;
    /* 1: the entry the family's persistent() makes persistent (its main kernel); 0: one block a
     * tile always (the helpers around it). */
    int persists;
} gen_entry;

/* Features of a problem beyond plain attention, which a family's kernels take or not
 * (gen_family.features): grouped K/V heads (heads_k < heads in the argument blocks) and a
 * softcap. The launcher refuses a problem needing one its family does not take. */
#define GEN_FEATURE_GROUPS 1u
#define GEN_FEATURE_SOFTCAP 2u
#define GEN_FEATURE_VARLEN 4u   /* a variable-length batch (cu_seqlens_q, cu_seqlens_k; VARLEN 1) */
#define GEN_FEATURE_SINKS 8u    /* attention sinks: a logit a query head joins every row's softmax */

/* What every family takes of the problem, so that a new feature of it is added here once, not
 * to each family's descriptor: the features (GEN_FEATURES_ALL: every family, the reference's
 * included, takes each so far), and the switches of the problem the fused families compile in
 * (GEN_FUSED_PROBLEM_PARAMS: the head dims' padding, the softcap, sinks, a packed batch; the
 * reference takes all but VARLEN at run time). A family that lacks one names its own set. */
#define GEN_FEATURES_ALL (GEN_FEATURE_GROUPS | GEN_FEATURE_SOFTCAP | GEN_FEATURE_VARLEN | GEN_FEATURE_SINKS)
#define GEN_FUSED_PROBLEM_PARAMS                                                                                  \
    (GEN_BIT(GEN_SOFTCAP) | GEN_BIT(GEN_SINKS) | GEN_BIT(GEN_DATA_DIM) | GEN_BIT(GEN_DATA_DIM_V) |             \
     GEN_BIT(GEN_VARLEN))
/* The switches among them that stand for a feature: a kernel compiled with one on takes only the
 * problems that have the feature, with it off only those without (ln_plan_make). X(param,
 * feature) for each. */
#define GEN_SWITCH_FEATURES(X)                                                                                    \
    X(GEN_SOFTCAP, GEN_FEATURE_SOFTCAP) X(GEN_SINKS, GEN_FEATURE_SINKS) X(GEN_VARLEN, GEN_FEATURE_VARLEN)

typedef struct gen_family {
    const char *name;                       /* "fwd_mma" */
    const char *file;                       /* the mainloop, below templates/: "families/fwd_mma.cu" */
    /* The parts it is assembled from, below templates/, in order, NULL-terminated (FT_PARTS):
     * its traits header, arch helpers, common steps. Every family also gets the kernel
     * argument blocks, the mask, traits/ft_traits.h and common/ft_types.cuh first. */
    const char *const *parts;
    int backward;                           /* 0 forward (ft_fwd_args), 1 backward (ft_bwd_args) */
    unsigned dtypes;                        /* bit mask of 1 << DTYPE */
    gen_param_set params;                   /* the parameters that matter here (GEN_BIT of each) */
    int defaults[GEN_PARAM_COUNT];          /* a good configuration; also the value of unused params */
    const gen_entry *entries;
    int entry_count;
    /* Family-specific constraints beyond the common ones (dtype, head dims, shared memory).
     * Returns 0 when p is acceptable, else -1 with the reason in why, naming the parameter. */
    int (*check)(const int *p, char *why, size_t why_len);
    /* The template text itself, for a family registered at run time (gen_family_register);
     * NULL for the catalogue's families, whose template is the embedded `file`. */
    const char *source;
    /* NULL: compiled for the GPU's own arch. Else the arch-specific target the family needs
     * ("sm_90a" for wgmma); it then runs only on GPUs of that arch ("sm_90"). */
    const char *target_arch;
    /* NULL: its kernels read no tensor maps. Else, given p, the rows of the boxes of the maps
     * its main kernel reads through the copy engine, which the launcher encodes for each launch
     * (64 columns a box), or 0 where p reads none: a backward's Q and dO (ft_bwd_args q_map,
     * do_map), a forward's K and V (ft_fwd_args k_map, v_map). */
    int (*map_rows)(const int *p);
    /* NULL: its forward reads Q as plain loads. Else, given p, the rows of the box of the map of
     * Q (ft_fwd_args q_map, 64 columns a box) its forward reads through the copy engine, or 0
     * where p reads none. */
    int (*q_map_rows)(const int *p);
    /* NULL: its output is written with plain stores. Else, given p, the rows of the boxes of the
     * maps of the output its main kernel writes through the copy engine (64 columns a box), or 0:
     * a forward's O (ft_fwd_args o_map), a backward's dK and dV (ft_bwd_args dk_map, dv_map; the
     * backward then reads K and V through k_map and v_map too). */
    int (*o_map_rows)(const int *p);
    /* NULL: the boxes of those maps are 128 bytes a row (128-byte swizzle). Else, given p, their
     * bytes a row: 128, or 64 (32 16-bit columns, 64-byte swizzle: fwd_wgmma's narrow panels). */
    int (*map_row_bytes)(const int *p);
    /* NULL: one block per tile (grid.x the tiles of a head, grid.y batch*heads). Else, given p,
     * 1 where the operation's main kernel (its entry's `persists`) is persistent: the launcher
     * starts as many blocks as fit the GPU at once (cuOccupancyMaxActiveBlocksPerMultiprocessor
     * x SMs), at most one per tile, in grid.x alone, and each block loops over tiles gridDim.x
     * apart. */
    int (*persistent)(const int *p);
    /* NULL: blocks launch alone. Else, given p, the blocks of a cluster along grid.x that its
     * main kernel (its entry's `persists`) runs in (the kernel's __cluster_dims__, so a plain
     * launch forms them): the launcher rounds that grid.x up to a multiple, and the kernel gives
     * the block past the last tile no rows to store. */
    int (*cluster)(const int *p);
    /* NULL: its persistent walk is the dense batch's over the longest sequence, and a packed batch
     * runs one block a tile (runtime/rt_lookup.c). Else, given p, 1 where its persistent main
     * kernel walks a variable-length batch's own tiles (query tiles, or key tiles for a key-major
     * entry), heaviest first (traits/ft_packed.h), so a packed batch runs a dense winner
     * persistent as it is. */
    int (*packed_walk)(const int *p);
    /* NULL: a deterministic dQ mode keeps the configuration's tiles. Else, given p with DQ_MODE
     * ordered, moves it to the tiles the family adds dQ in order fastest with (the caller then
     * refits EVEN_M/EVEN_N and validates). */
    void (*repeatable)(int *p);
    /* NULL: the defaults' tiles suit every head dim the family takes (a caller that finds them
     * too large for an arch searches smaller ones). Else, given p with the problem's head dims,
     * dtype and ALLOW_TF32, moves the tiles (and tunables that only suit those tiles) to the
     * family's default configuration for that problem. */
    void (*head_dim_tiles)(int *p);
    /* 0: it compiles head dims as small as the runtime's (32). Else its smallest HEAD_DIM (and
     * HEAD_DIM_V): the runtime's built-in default runs a problem of smaller head dims on it padded
     * to this (DATA_DIM) where it is faster than a family that compiles them, that is where the
     * larger of the problem's head dims is at least pad_from (the Hopper families at 64 against
     * mma.sync at 32: notes/kernels.md, "Head dims no kernel compiles"). */
    int min_head_dim, pad_from;
    /* GEN_FEATURE_* bits: the problem features its kernels take (0: none). A family that takes
     * grouped heads launches its key-major entries over the K/V heads (grid.y batch*heads_k). */
    unsigned features;
    /* The runtime's built-in choice (runtime/rt_defaults.c) among the families of a direction
     * that take a problem's dtype and run on its GPU: the lowest rank whose configuration fits
     * first. 0: never a built-in default (the reference, test families). */
    int default_rank;
} gen_family;

#endif
