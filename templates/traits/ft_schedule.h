/* ft_schedule.h: the scheduler part, written once for the launcher and the kernels (as the traits
 * are, ft_traits.h): how a launch's grid covers its units of work, and which unit a block takes.
 * The launcher sizes every grid with ft_schedule_grid (launch/ln_dims.c); each kernel decodes its
 * block with ft_schedule_block, or a persistent block its next unit with ft_schedule_unit, so the
 * two sides cannot disagree on the layout.
 *
 * A unit is a tile of rows of one head: query tiles, or key tiles for an entry that walks the
 * keys (gen_entry's key_major), or with SPLITS > 1 a share of one (split decoding's key ranges, a
 * group's query heads in the backward). Units are row-major: the units of head row 0 (b * heads
 * + h; b * heads_k + h for the key-major entries and the packed rows of grouped heads), tile by
 * tile and share by share within a tile, then head row 1's, ...
 * - One block a unit (the plain grid): grid.x = the units of a head row (tiles x shares), grid.y
 *   = head rows; the block at (x, y) takes head row y, tile x / splits, share x % splits. A
 *   family that runs in clusters (gen_family.cluster) has grid.x rounded up to whole clusters by
 *   the launcher (launch/ln_dims.c), so its blocks past the last unit must know it.
 * - Persistent: grid.x = as many blocks as fit the GPU at once (at most the units), grid.y = 1;
 *   block b takes units in an order of its family's (b, b + grid.x, ...; or a walk of its own,
 *   ft_schedule_grouped, heavy first under a mask, over the same unit numbers) and
 *   decodes each with ft_schedule_unit.
 * Which one a configuration runs is its family's to say (gen_family's `persistent`: PERSISTENT). */
#ifndef FT_SCHEDULE_H
#define FT_SCHEDULE_H

/* The grid of a launch of `row_units` units a head row over `rows` head rows: one block a unit,
 * or (persistent) at most `resident` blocks in one row of the grid. */
FT_TRAIT void ft_schedule_grid(long long row_units, long long rows, int persistent, long long resident,
                               unsigned *grid_x, unsigned *grid_y)
{
    if (persistent) {
        const long long units = row_units * rows;
        *grid_x = (unsigned)(units < resident ? units : resident);
        *grid_y = 1;
    } else {
        *grid_x = (unsigned)row_units;
        *grid_y = (unsigned)rows;
    }
}

/* One block a unit: the unit of the block at (x, y) of the plain grid, as its head row, tile and
 * share (splits shares a tile). Unsigned, as blockIdx is: a division by a constant is a shift. */
FT_TRAIT void ft_schedule_block(unsigned x, unsigned y, int splits, int *row, int *tile, int *part)
{
    *row = (int)y;
    *tile = (int)(splits == 1 ? x : x / (unsigned)splits);
    *part = (int)(splits == 1 ? 0 : x % (unsigned)splits);
}

/* The unit number of the block at (x, y) of the plain grid (grid_x units a head row): where a
 * family walks the plain grid's units in an order of its own (ft_schedule_grouped, heavy first). */
FT_TRAIT int ft_schedule_number(unsigned x, unsigned y, unsigned grid_x)
{
    return (int)(y * grid_x + x);
}

/* Step i of a walk over `rows` head rows x `tiles` tiles, the rows in groups of `group` (the last
 * may be short): within a group, tile 0 of each row, then tile 1 of each, ... (the heads whose K
 * and V fit L2 together: the blocks at work at once share them). */
FT_TRAIT void ft_schedule_grouped(int i, int group, int tiles, int rows, int *tile, int *row)
{
    const int first = i / (group * tiles) * group;   /* the group's first row */
    const int size = rows - first < group ? rows - first : group;
    const int r = i - first * tiles;
    *tile = r / size;
    *row = first + r % size;
}

/* Persistent: unit u (row-major, `row_units` a head row) as its head row, tile and share. */
FT_TRAIT void ft_schedule_unit(int u, int row_units, int splits, int *row, int *tile, int *part)
{
    ft_schedule_block((unsigned)(u % row_units), (unsigned)(u / row_units), splits, row, tile, part);
}

#endif
