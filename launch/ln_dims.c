/* Launch shape of one entry of a family (templates/README.md, "Families and entry points"):
 * the one place grids, blocks and dynamic shared memory are computed: an entry's for a pair of
 * lengths (ln_entry_dims, at plan time), then a step's for one launch's slice of the batch
 * (ln_step_grid: grouped heads packed into rows, persistent blocks). */
#include "ln_internal.h"
#include "traits/ft_traits.h"
#include "traits/ft_schedule.h"

/* n blocks rounded up to whole clusters of `cluster` blocks (gen_family.cluster: the kernel's
 * __cluster_dims__ along grid.x): the block past the last unit is its family's to keep idle. */
static unsigned whole_clusters(long long n, long long cluster)
{
    return (unsigned)((n + cluster - 1) / cluster * cluster);
}

unsigned ln_entry_cluster(const gen_config *c, const gen_entry *e)
{
    return e->persists && c->family->cluster ? (unsigned)c->family->cluster(c->p) : 1u;
}

int ln_entry_dims(const gen_config *c, const gen_entry *e, int seqlen_q, int seqlen_k, unsigned *grid_x,
                  unsigned *block_x, size_t *smem)
{
    if (!c || !c->family || !e || seqlen_q < 1 || seqlen_k < 1 || c->p[GEN_BLOCK_M] < 1 || c->p[GEN_BLOCK_N] < 1 ||
        c->p[GEN_NUM_WARPS] < 1)
        return -1;
    const long long rows = e->key_major ? seqlen_k : seqlen_q;
    const long long tile = e->key_major ? c->p[GEN_BLOCK_N] : c->p[GEN_BLOCK_M];
    const long long splits = e->split && (c->family->params & GEN_BIT(GEN_SPLITS)) ? c->p[GEN_SPLITS] : 1;
    *grid_x = whole_clusters((rows + tile - 1) / tile * splits, ln_entry_cluster(c, e));
    *block_x = (unsigned)c->p[GEN_NUM_WARPS] * 32u;
    *smem = e->smem_bytes ? e->smem_bytes(c->p) : 0;
    return 0;
}

void ln_step_grid(const ln_step *s, const ln_problem *p, int nb, unsigned *grid_x, unsigned *grid_y)
{
    const int heads_k = ln_heads_k(p);
    unsigned gx = s->grid_x, gy = (unsigned)(nb * (s->key_major ? heads_k : p->heads));
    if (s->pack_rows) {   /* tiles of the packed rows, over the K/V heads */
        const long long rows = (long long)p->seqlen_q * (p->heads / heads_k);
        gx = whole_clusters((rows + s->pack_rows - 1) / s->pack_rows * s->splits, s->cluster);
        gy = (unsigned)(nb * heads_k);
    }
    /* (A persistent grid is never clustered: the traits refuse the two together, since a pair
     * would have to take its units together; ln_plan_make checks it.) */
    /* One block a unit, or persistent: every unit of the slice in grid.x, at most the resident
     * blocks (the kernels decode either with the same part, traits/ft_schedule.h). */
    ft_schedule_grid(gx, gy, s->persistent, (long long)s->resident, grid_x, grid_y);
}
