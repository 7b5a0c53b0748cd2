/* Launch dimensions of a family's entry for a problem (templates/README.md). */
#include "gen_internal.h"

int gen_launch_dims(const gen_config *c, const gen_entry *e, int batch, int heads, int seqlen_q,
                    int seqlen_k, unsigned grid[3], unsigned block[3], size_t *smem_bytes)
{
    if (!c || !c->family || !e || batch < 1 || heads < 1 || seqlen_q < 1 || seqlen_k < 1 ||
        c->p[GEN_BLOCK_M] < 1 || c->p[GEN_BLOCK_N] < 1 || c->p[GEN_NUM_WARPS] < 1)
        return -1;
    const long long rows = e->key_major ? seqlen_k : seqlen_q;
    const long long tile = e->key_major ? c->p[GEN_BLOCK_N] : c->p[GEN_BLOCK_M];
    const long long bh = (long long)batch * heads;
    if (bh > 65535)   /* CUDA's limit on grid.y */
        return -1;
    grid[0] = (unsigned)((rows + tile - 1) / tile);
    grid[1] = (unsigned)bh;
    grid[2] = 1;
    block[0] = (unsigned)c->p[GEN_NUM_WARPS] * 32u;
    block[1] = 1;
    block[2] = 1;
    *smem_bytes = e->smem_bytes ? e->smem_bytes(c->p) : 0;
    return 0;
}
