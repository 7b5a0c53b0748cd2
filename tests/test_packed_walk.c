/* test_packed_walk: the packed scheduler's order (templates/traits/ft_packed.h) on the CPU. Over
 * random packed batches (empty and one-token sequences among them, lengths around and across
 * tile sizes), both masks, heads walked in groups that do and do not divide them: the walk's
 * units (tiles, or causal pairs of tiles) cover every (sequence, query tile, head) exactly once
 * and nothing else, the work of its units (the key tiles each visits) never rises, a head
 * group's blocks at work share its heads, the snake deal gives each unit to one block in rising
 * order, a block's cursor walking its own units decodes what a fresh walk decodes, and past the
 * last unit nothing is decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "traits/ft_traits.h"
#include "traits/ft_schedule.h"
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

/* The key tiles a unit of sequence s visits: a pair's T + 1 under a causal mask (the middle tile
 * of an odd count alone visits fewer: it is counted as the pair slot it takes), else a tile's T,
 * its sequence's tile count. */
static int work(const batch *b, int block_m, int causal, int s)
{
    return ft_packed_tiles(b->cu, s, block_m) + causal;
}

/* Marks the tiles of unit `unit` of (s, head): the tile, or both tiles of a causal pair. */
static int mark_unit(unsigned char (*seen)[80][5], int tiles, int causal, int s, int unit, int head)
{
    const int first = causal ? tiles - 1 - unit : unit, second = causal ? unit : first;
    if (first < 0 || first >= tiles || second < 0 || second > first || seen[s][first][head] ||
        seen[s][second][head])
        return 0;
    seen[s][first][head] = seen[s][second][head] = 1;
    return 1;
}

static void walk_covers_each_tile_once_heaviest_first(void **state)
{
    (void)state;
    static const int block_ms[] = { 64, 128, 192 };
    for (int trial = 0; trial < 400; trial++) {
        const batch b = random_batch();
        const int block_m = block_ms[draw(3)], heads = 1 + draw(5), group = 1 + draw(4), causal = trial % 2;
        int total = 0, tiles[MAX_BATCH];
        for (int s = 0; s < b.count; s++) {
            tiles[s] = ft_packed_tiles(b.cu, s, block_m);
            total += ft_packed_head_units(tiles[s], causal) * heads;
        }
        static unsigned char seen[MAX_BATCH][80][5];   /* a sequence's tiles: at most 5000 / 64 + 1 */
        memset(seen, 0, sizeof seen);
        ft_packed_cursor c = ft_packed_start(b.cu, b.count, block_m);
        int last_work = 1 << 30, last_seq = -1, last_head = -1;
        for (int u = 0; u < total; u++) {
            int s = -1, unit = -1, head = -1;   /* (set by a decode) */
            assert_int_equal(ft_packed_unit(&c, b.cu, b.count, block_m, causal, heads, group, u, &s, &unit, &head), 1);
            if (!(s >= 0 && s < b.count && head >= 0 && head < heads &&
                  mark_unit(seen, tiles[s], causal, s, unit, head))) {
                fail_msg("trial %d: unit %d decodes (%d, %d, %d): outside the batch or a tile a second time", trial,
                         u, s, unit, head);
                return;
            }
            const int w = work(&b, block_m, causal, s);
            if (w > last_work)
                fail_msg("trial %d (causal %d): unit %d's work %d rises from %d", trial, causal, u, w, last_work);
            /* Within a sequence a head group's units come together: a head differs from the one
             * before by less than the group, unless the group is done (a new first head). */
            if (s == last_seq && head != last_head && head / group != last_head / group &&
                head != last_head / group * group + group)
                fail_msg("trial %d: unit %d leaves head %d's group for head %d", trial, u, last_head, head);
            last_work = w, last_seq = s, last_head = head;
        }
        for (int s = 0; s < b.count; s++)
            for (int t = 0; t < tiles[s]; t++)
                for (int h = 0; h < heads; h++)
                    if (!seen[s][t][h])
                        fail_msg("trial %d: tile %d of sequence %d, head %d, in no unit", trial, t, s, h);
        int s = -1, unit = -1, head = -1;
        assert_int_equal(ft_packed_unit(&c, b.cu, b.count, block_m, causal, heads, group, total, &s, &unit, &head), 0);
        assert_int_equal(ft_packed_unit(&c, b.cu, b.count, block_m, causal, heads, group, total + 7, &s, &unit, &head), 0);
    }
}

/* The snake deal: over rounds, every unit number goes to exactly one block, each block's rise. */
static void the_deal_gives_each_unit_once(void **state)
{
    (void)state;
    for (int blocks = 1; blocks <= 140; blocks += 3) {
        const int rounds = 5, units = rounds * blocks;
        static unsigned char dealt[5 * 140];
        memset(dealt, 0, sizeof dealt);
        for (int b = 0; b < blocks; b++)
            for (int r = 0, last = -1; r < rounds; r++) {
                const int u = ft_packed_deal(r, b, blocks);
                if (u <= last || u >= units || dealt[u])
                    fail_msg("%d blocks: block %d's round %d gets unit %d (its last %d)", blocks, b, r, u, last);
                dealt[u] = 1, last = u;
            }
    }
    assert_int_equal(ft_packed_deal(1, 0, 132), 263);   /* the second round starts from the far end */
}

/* A resident block's dealt units through one cursor decode as a fresh walk decodes each. */
static void a_blocks_cursor_agrees_with_a_fresh_walk(void **state)
{
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        const batch b = random_batch();
        const int block_m = 128, heads = 1 + draw(4), group = 1 + draw(3), causal = trial % 2, blocks = 1 + draw(140);
        int total = 0;
        for (int s = 0; s < b.count; s++)
            total += ft_packed_head_units(ft_packed_tiles(b.cu, s, block_m), causal) * heads;
        const int block = draw(blocks);
        ft_packed_cursor mine = ft_packed_start(b.cu, b.count, block_m);
        for (int r = 0, u; (u = ft_packed_deal(r, block, blocks)) < total; r++) {
            int s1 = -1, t1 = -1, h1 = -1, s2 = -2, t2 = -2, h2 = -2;
            ft_packed_cursor fresh = ft_packed_start(b.cu, b.count, block_m);
            assert_int_equal(ft_packed_unit(&mine, b.cu, b.count, block_m, causal, heads, group, u, &s1, &t1, &h1), 1);
            assert_int_equal(ft_packed_unit(&fresh, b.cu, b.count, block_m, causal, heads, group, u, &s2, &t2, &h2), 1);
            if (s1 != s2 || t1 != t2 || h1 != h2)
                fail_msg("trial %d: unit %d: (%d, %d, %d) by the block's cursor, (%d, %d, %d) fresh", trial, u, s1,
                         t1, h1, s2, t2, h2);
        }
    }
}

/* The orders by hand: lengths 300, 0, 129, 1, 260 at 128-row tiles (3, 0, 2, 1, 3 tiles), two
 * heads walked one at a time (group 1) or together (group 2). Causal units are pairs: (tile 2 with
 * tile 0), then tile 1 alone, of a sequence of three; tile 1 with tile 0 of one of two. */
static void small_batch_in_order(void **state)
{
    (void)state;
    const int cu[] = { 0, 300, 300, 429, 430, 690 };
    static const int plain_one[][3] = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 0, 1 }, { 0, 1, 1 }, { 0, 2, 1 },
                                        { 4, 0, 0 }, { 4, 1, 0 }, { 4, 2, 0 }, { 4, 0, 1 }, { 4, 1, 1 }, { 4, 2, 1 },
                                        { 2, 0, 0 }, { 2, 1, 0 }, { 2, 0, 1 }, { 2, 1, 1 }, { 3, 0, 0 }, { 3, 0, 1 } };
    static const int causal_two[][3] = { { 0, 0, 0 }, { 0, 0, 1 }, { 0, 1, 0 }, { 0, 1, 1 }, { 4, 0, 0 }, { 4, 0, 1 },
                                         { 4, 1, 0 }, { 4, 1, 1 }, { 2, 0, 0 }, { 2, 0, 1 }, { 3, 0, 0 }, { 3, 0, 1 } };
    for (int causal = 0; causal < 2; causal++) {
        ft_packed_cursor c = ft_packed_start(cu, 5, 128);
        assert_int_equal(c.level, 2);
        const int count = causal ? 12 : 18, group = causal ? 2 : 1;
        for (int u = 0; u < count; u++) {
            int s = -1, unit = -1, head = -1;
            assert_int_equal(ft_packed_unit(&c, cu, 5, 128, causal, 2, group, u, &s, &unit, &head), 1);
            const int *want = causal ? causal_two[u] : plain_one[u];
            if (s != want[0] || unit != want[1] || head != want[2])
                fail_msg("causal %d, unit %d: (%d, %d, %d), expected (%d, %d, %d)", causal, u, s, unit, head, want[0],
                         want[1], want[2]);
        }
        int s = -1, unit = -1, head = -1;
        assert_int_equal(ft_packed_unit(&c, cu, 5, 128, causal, 2, group, count, &s, &unit, &head), 0);
    }
    /* An empty batch and a batch of empty sequences have no units. */
    const int empty[] = { 0, 0, 0 };
    ft_packed_cursor c = ft_packed_start(empty, 2, 64);
    int s = -1, unit = -1, head = -1;
    assert_int_equal(ft_packed_unit(&c, empty, 2, 64, 1, 4, 2, 0, &s, &unit, &head), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_batch_in_order),
        cmocka_unit_test(walk_covers_each_tile_once_heaviest_first),
        cmocka_unit_test(the_deal_gives_each_unit_once),
        cmocka_unit_test(a_blocks_cursor_agrees_with_a_fresh_walk),
    };
    return cmocka_run_group_tests_name("test_packed_walk", tests, NULL, NULL);
}
