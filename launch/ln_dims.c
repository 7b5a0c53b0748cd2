/* Launch shape of one entry of a family (templates/README.md, "Families and entry points"):
 * the one place grids, blocks and dynamic shared memory are computed. */
#include "ln_internal.h"

int ln_entry_dims(const gen_config *c, const gen_entry *e, int seqlen_q, int seqlen_k, unsigned *grid_x,
                  unsigned *block_x, size_t *smem)
{
    if (!c || !c->family || !e || seqlen_q < 1 || seqlen_k < 1 || c->p[GEN_BLOCK_M] < 1 || c->p[GEN_BLOCK_N] < 1 ||
        c->p[GEN_NUM_WARPS] < 1)
        return -1;
    const long long rows = e->key_major ? seqlen_k : seqlen_q;
    const long long tile = e->key_major ? c->p[GEN_BLOCK_N] : c->p[GEN_BLOCK_M];
    const long long splits = e->split && (c->family->params & GEN_BIT(GEN_SPLITS)) ? c->p[GEN_SPLITS] : 1;
    *grid_x = (unsigned)((rows + tile - 1) / tile * splits);
    *block_x = (unsigned)c->p[GEN_NUM_WARPS] * 32u;
    *smem = e->smem_bytes ? e->smem_bytes(c->p) : 0;
    return 0;
}
