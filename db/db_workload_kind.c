/* A workload's kind beyond its sizes: the one stored form of its mask, the bucket of a
 * variable-length batch, and a grouped backward's split. The tuner, the runtime and the database
 * key workloads through these. */
#include <math.h>

#include "db_internal.h"

void db_workload_set_mask(db_workload *w, int causal, int bottom_right, int window_left, int window_right)
{
    int left = window_left < 0 ? -1 : window_left;
    int right = causal ? 0 : window_right < 0 ? -1 : window_right;
    w->causal = right == 0;                       /* a window ending at the diagonal is the causal mask */
    w->window = left >= 0 || right > 0;
    w->window_left = w->window ? left : 0;
    w->window_right = w->window ? (w->causal ? 0 : right) : 0;
    /* Aligned top-left or bottom-right, a diagonal moves only where the lengths differ. */
    w->bottom_right = db_workload_masked(w) && bottom_right && (w->varlen || w->seqlen_q != w->seqlen_k);
}

int db_workload_masked(const db_workload *w)
{
    return w->causal || w->window;
}

int db_workload_decode(const db_workload *w)
{
    return w->op == DB_OP_FWD && (w->dtype == 1 || w->dtype == 2) /* f16, bf16 */ && w->seqlen_q <= DB_DECODE_ROWS;
}

int db_workload_decode_any_mask(const db_workload *w)
{
    return db_workload_decode(w) && !w->window && (!w->causal || w->bottom_right);
}

int db_workload_group_splits(const db_workload *w)
{
    const int heads_k = w->heads_k ? w->heads_k : w->heads, group = w->heads / heads_k;
    if (w->op != DB_OP_BWD || w->varlen || group < 2)
        return 1;
    const long long blocks = (long long)w->batch * heads_k * (((long long)w->seqlen_k + 127) / 128);
    /* Key tiles of unequal work: a mask over enough queries (db_internal.h). */
    const int uneven = db_workload_masked(w) && w->seqlen_q >= DB_GROUP_SPLIT_MASKED_QUERIES, least = uneven ? 2 : 1;
    const long long want = uneven ? DB_GROUP_SPLIT_BLOCKS_MASKED : DB_GROUP_SPLIT_BLOCKS;
    int splits = 1;
    for (int s = 2; s <= group && s <= DB_GROUP_SPLITS_MAX && (splits < least || blocks * splits < want); s++)
        if (group % s == 0)
            splits = s;
    return splits;
}

void db_workload_mask_sides(const db_workload *w, int *left, int *right)
{
    *left = w->window ? w->window_left : -1;
    *right = w->causal ? 0 : w->window ? w->window_right : -1;
}

int db_varlen_bucket(int batch, int longest_q, int longest_k, long long total_q, long long total_k)
{
    const double padded = (double)batch * ((double)longest_q + longest_k);
    const int bucket = padded > 0 ? (int)ceil(8.0 * (double)(total_q + total_k) / padded) : 8;
    return bucket < 1 ? 1 : bucket > 8 ? 8 : bucket;
}

double db_varlen_fill(int bucket)
{
    return (bucket - 0.5) / 8.0;
}
