/* ft_traits.h: how a family's traits are written once for both compilers. A traits header
 * (traits/<family>.h) holds the family's derived constants, shared-memory bytes, register
 * estimate and rules as functions in the common subset of C11 and C++17: the host's generator
 * calls them to validate and launch (generator/family_<family>.c), and the template computes
 * its constants and static_asserts from the same functions, so the two cannot disagree.
 * A rule function returns 0 when the parameters are acceptable, else the number of the first
 * rule they break; the host turns that number into a message, the template has one
 * static_assert per rule. No includes: it is part of every expanded source. */
#ifndef FT_TRAITS_H
#define FT_TRAITS_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)   /* NVRTC, or nvcc on an emitted .cu */
#define FT_TRAIT static constexpr __host__ __device__
#else
#define FT_TRAIT static inline
#endif

/* The most dynamic shared memory any supported GPU gives one block (sm_90: 227 KiB); the
 * generator checks each arch's own limit (gen_smem_limit_for_arch). */
#define FT_SMEM_MAX_BYTES 232448

/* DQ_MODE's values (generator/gen_param_table.h): how a backward adds up dQ over the key tiles.
 * Atomic: every key tile adds its share into fp32 dq_accum as it comes, in whatever order the
 * blocks run (fastest; the sums may differ in the last bits run to run). Separate: a second
 * kernel computes dQ per query tile, no accumulation across blocks. Ordered: as atomic, but each
 * query tile's shares are added in a fixed order of key tiles. Direct (float32 only, where dQ
 * has the accumulator's type): as atomic, but each share, scaled, goes straight into dQ, which
 * the delta pass zeroes, so neither the accumulator's zeroing nor the convert pass runs.
 * Separate and ordered give bitwise identical results on every run. */
enum ft_dq_mode { FT_DQ_ATOMIC = 0, FT_DQ_SEPARATE = 1, FT_DQ_ORDERED = 2, FT_DQ_DIRECT = 3 };

/* Whether a DQ_MODE gives the same bits on every run (the deterministic mode takes only these). */
FT_TRAIT int ft_dq_mode_repeatable(int dq_mode)
{
    return dq_mode == FT_DQ_SEPARATE || dq_mode == FT_DQ_ORDERED;
}

/* DQ_INIT's values: how the fp32 dq_accum of an atomic or ordered backward starts. Zero: the
 * launcher zeroes it before the backward (a pass over B*H*N*D*4 bytes, as long as the delta
 * pass at short lengths). Store: the first key tile to reach a query tile stores its share
 * there and the others add theirs after that store has landed; the launcher zeroes only the
 * per-tile counters (the order area), and a query tile no key tile reached converts to zeros. */
enum ft_dq_init { FT_DQ_INIT_ZERO = 0, FT_DQ_INIT_STORE = 1 };

FT_TRAIT int ft_imin(int a, int b)
{
    return a < b ? a : b;
}

FT_TRAIT int ft_is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* 16-bit units an element takes in a shared tile of the tensor-core families: 2 in f32 (DTYPE 0,
 * on TF32 tensor cores; the mma.sync families lay it out as a 16-bit tile of twice the
 * columns), else 1. */
FT_TRAIT int ft_tile_units(int dtype)
{
    return dtype == 0 ? 2 : 1;
}

/* Columns a tile of `cols` elements of `units` 16-bit units (ft_tile_units) takes in shared
 * memory in the Hopper families: whole panels of the 128-byte swizzle, 64 16-bit columns or 32
 * floats (head dim 96 in 16-bit: two panels, the second half unused; the copy engine fills what
 * lies past the tensor with zeros, and no product reads it). ft_panel_cols: 16-bit elements. */
FT_TRAIT int ft_panel_cols_of(int cols, int units)
{
    const int per = 64 / units;
    return (cols + per - 1) / per * per;
}
FT_TRAIT int ft_panel_cols(int cols)
{
    return ft_panel_cols_of(cols, 1);
}

/* Registers each of `threads` threads may hold with one block per SM: 65536 / threads, at most
 * 255. */
FT_TRAIT int ft_register_cap(int threads)
{
    return 65536 / threads > 255 ? 255 : 65536 / threads;
}

#endif
