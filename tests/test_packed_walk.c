/* test_packed_walk: the packed scheduler's order (templates/traits/ft_packed.h) on the CPU. Over
 * random packed batches (empty and one-token sequences among them, lengths around and across
 * tile sizes), both masks: the walk decodes every (sequence, query tile, head) exactly once and
 * nothing else, the work of its units (the key tiles each visits) never rises, a block's
 * cursor walking its own rising units (every G-th, as resident blocks take them) decodes what a
 * fresh walk decodes, and past the last unit nothing is decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "traits/ft_traits.h"
#include "traits/ft_packed.h"

#define MAX_BATCH 40

typedef struct batch {
    int count, cu[MAX_BATCH + 1];
} batch;

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static int draw(int n)   /* 0..n-1, xorshift64 */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

/* A batch of 1..MAX_BATCH sequences: a third short (0, 1 or up to a tile), the rest up to 5000. */
static batch random_batch(void)
{
    batch b = { 1 + draw(MAX_BATCH), { 0 } };
    for (int s = 0; s < b.count; s++) {
        const int kind = draw(3), n = kind == 0 ? draw(3) : kind == 1 ? draw(200) : draw(5000);
        b.cu[s + 1] = b.cu[s] + n;
    }
    return b;
}

/* The key tiles unit (s, tile) visits: tile + 1 under a causal mask, else its sequence's. */
static int work(const batch *b, int block_m, int causal, int s, int tile)
{
    return causal ? tile + 1 : ft_packed_tiles(b->cu, s, block_m);
}

static void walk_covers_each_tile_once_heaviest_first(void **state)
{
    (void)state;
    static const int block_ms[] = { 64, 128, 192 };
    for (int trial = 0; trial < 400; trial++) {
        const batch b = random_batch();
        const int block_m = block_ms[draw(3)], heads = 1 + draw(5), causal = trial % 2;
        long long total = 0;
        int tiles[MAX_BATCH];
        for (int s = 0; s < b.count; s++)
            total += (long long)(tiles[s] = ft_packed_tiles(b.cu, s, block_m)) * heads;
        static unsigned char seen[MAX_BATCH][80][5];   /* a sequence's tiles: at most 5000 / 64 + 1 */
        memset(seen, 0, sizeof seen);
        ft_packed_cursor c = ft_packed_start(b.cu, b.count, block_m);
        int last_work = 1 << 30;
        for (long long u = 0; u < total; u++) {
            int s = -1, tile = -1, head = -1;   /* (set by a decode) */
            assert_int_equal(ft_packed_unit(&c, b.cu, b.count, block_m, causal, heads, u, &s, &tile, &head), 1);
            if (!(s >= 0 && s < b.count && tile >= 0 && tile < tiles[s] && head >= 0 && head < heads)) {
                fail_msg("trial %d: unit %lld decodes (%d, %d, %d), outside the batch", trial, u, s, tile, head);
                return;
            }
            unsigned char *mark = &seen[s][tile][head];
            if (*mark)
                fail_msg("trial %d: unit %lld decodes (%d, %d, %d) a second time", trial, u, s, tile, head);
            *mark = 1;
            const int w = work(&b, block_m, causal, s, tile);
            if (w > last_work)
                fail_msg("trial %d (causal %d): unit %lld's work %d rises from %d", trial, causal, u, w, last_work);
            last_work = w;
        }
        int s = -1, tile = -1, head = -1;
        assert_int_equal(ft_packed_unit(&c, b.cu, b.count, block_m, causal, heads, total, &s, &tile, &head), 0);
        assert_int_equal(ft_packed_unit(&c, b.cu, b.count, block_m, causal, heads, total + 7, &s, &tile, &head), 0);
    }
}

/* A resident block's units b, b + G, ... through one cursor decode as a fresh walk does each. */
static void a_blocks_cursor_agrees_with_a_fresh_walk(void **state)
{
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        const batch b = random_batch();
        const int block_m = 128, heads = 1 + draw(4), causal = trial % 2, blocks = 1 + draw(140);
        long long total = 0;
        for (int s = 0; s < b.count; s++)
            total += (long long)ft_packed_tiles(b.cu, s, block_m) * heads;
        const int block = draw(blocks);
        ft_packed_cursor mine = ft_packed_start(b.cu, b.count, block_m);
        for (long long u = block; u < total; u += blocks) {
            int s1 = -1, t1 = -1, h1 = -1, s2 = -2, t2 = -2, h2 = -2;
            ft_packed_cursor fresh = ft_packed_start(b.cu, b.count, block_m);
            assert_int_equal(ft_packed_unit(&mine, b.cu, b.count, block_m, causal, heads, u, &s1, &t1, &h1), 1);
            assert_int_equal(ft_packed_unit(&fresh, b.cu, b.count, block_m, causal, heads, u, &s2, &t2, &h2), 1);
            if (s1 != s2 || t1 != t2 || h1 != h2)
                fail_msg("trial %d: unit %lld: (%d, %d, %d) by the block's cursor, (%d, %d, %d) fresh", trial, u, s1,
                         t1, h1, s2, t2, h2);
        }
    }
}

/* The orders by hand: lengths 300, 0, 129, 1 at 128-row tiles (3, 0, 2, 1 tiles), one head. */
static void small_batch_in_order(void **state)
{
    (void)state;
    const int cu[] = { 0, 300, 300, 429, 430 };
    static const int causal_order[][2] = { { 0, 2 }, { 0, 1 }, { 2, 1 }, { 0, 0 }, { 2, 0 }, { 3, 0 } };
    static const int plain_order[][2] = { { 0, 0 }, { 0, 1 }, { 0, 2 }, { 2, 0 }, { 2, 1 }, { 3, 0 } };
    for (int causal = 0; causal < 2; causal++) {
        ft_packed_cursor c = ft_packed_start(cu, 4, 128);
        assert_int_equal(c.level, 2);
        for (int u = 0; u < 6; u++) {
            int s = -1, tile = -1, head = -1;
            assert_int_equal(ft_packed_unit(&c, cu, 4, 128, causal, 1, u, &s, &tile, &head), 1);
            const int *want = causal ? causal_order[u] : plain_order[u];
            if (s != want[0] || tile != want[1] || head != 0)
                fail_msg("causal %d, unit %d: (%d, %d), expected (%d, %d)", causal, u, s, tile, want[0], want[1]);
        }
    }
    /* An empty batch and a batch of empty sequences have no units. */
    const int empty[] = { 0, 0, 0 };
    ft_packed_cursor c = ft_packed_start(empty, 2, 64);
    int s = -1, tile = -1, head = -1;
    assert_int_equal(ft_packed_unit(&c, empty, 2, 64, 1, 4, 0, &s, &tile, &head), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_batch_in_order),
        cmocka_unit_test(walk_covers_each_tile_once_heaviest_first),
        cmocka_unit_test(a_blocks_cursor_agrees_with_a_fresh_walk),
    };
    return cmocka_run_group_tests_name("test_packed_walk", tests, NULL, NULL);
}
