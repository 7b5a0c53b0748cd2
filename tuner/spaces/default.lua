-- The sweep `make tune` runs: forward and backward, bf16 and f16, head dims 64 and 128, causal and
-- not, sequence lengths 512 to 16384 with 16384 tokens per batch and hidden size 2048 (the
-- FlashAttention papers' benchmark shapes: batch = 16384 / seqlen, heads = 2048 / head_dim).
--
-- Budget: a handful of candidates per workload, pruned by hand with the measurements cited at
-- each rule (the constraints below), each timed (bench below) and the best re-timed in rotation.
-- The lengths are powers of two, so the lengths of a shape share most of their kernels. The
-- counts are printed, not written here: `flashtune tune --compile-only` gives the spaces,
-- workloads, candidates and distinct kernels, then compiles them without timing.
--
-- wide.lua holds the same workloads over every configuration the families' checks accept,
-- searched by the guided strategy under a budget. On an H200 (bench/RESULTS.md, 2026-11-30),
-- with no table to start its searches from, a sweep of it within 565 s picked forwards 9 % slower
-- than this space's (timed side by side in rotation); starting from the shipped table's winners
-- it matched them. A GPU model's first sweep has no table, so this space is the default.

local shapes = grid{
  dtype = {"bf16", "f16"}, head_dim = {64, 128}, causal = {0, 1},
  seqlen = pow2(512, 16384), tokens = 16384, hidden = 2048,
}

-- The Hopper families also take head dims 96, 192 over 128 (DeepSeek's MLA), 192 over 192 and 256,
-- tuned at two lengths of 16 heads (the runtime takes the nearest tuned length; a head-dim pair
-- without a tuned winner runs a built-in default), and the papers' head dims 64 and 128 on grids
-- too small to fill the GPU (a batch of one, 256 to 2048 tokens: at head dim 128 and 512 keys 64
-- tiles of 128 for 132 SMs). Served the winners of full grids there, the backward ran at 0.72x
-- FlashAttention-4, and the forward 7-22 % slower than the kernels tuned for these shapes
-- (bench/RESULTS.md, 2026-11-30): a full grid's tiles leave SMs idle. At 256 tokens, which the
-- table lacked, the nearest lengths' winners ran 1.07-1.28x the fastest (notes/tuning.md, section 14).
local wide_head_dims = grid{ dtype = {"bf16", "f16"}, head_dim = {96, 256}, causal = {0, 1}, seqlen = {1024, 4096},
                             tokens = 16384, heads = {16} }
local head_dims_192 = grid{ dtype = {"bf16", "f16"}, head_dim = {192}, head_dim_v = {128, 192}, causal = {0, 1},
                            seqlen = {1024, 4096}, tokens = 16384, heads = {16} }
local small_grid = grid{ dtype = {"bf16", "f16"}, head_dim = {64, 128}, causal = {0, 1},
                         seqlen = {256, 512, 1024, 2048}, batch = {1}, hidden = 2048 }
-- A batch of eight at 256 tokens: between the batch of one's fraction of a wave and the papers'
-- grid's many waves, where batches of 3 and 6 at 256 tokens (0.7-2.9 waves) were served the batch
-- of one's winners, 1.11-1.29x the fastest (notes/tuning.md, sections 15 and 18).
local small_grid_8 = grid{ dtype = {"bf16", "f16"}, head_dim = {64, 128}, causal = {0, 1},
                           seqlen = {256}, batch = {8}, hidden = 2048 }
local hopper_forward_shapes = { shapes, wide_head_dims, head_dims_192, small_grid, small_grid_8 }
local hopper_backward_shapes = { shapes, wide_head_dims, small_grid, small_grid_8 }   -- head dim 192: bwd_mla below

-- Decode: one query row a sequence over a long key/value cache, 32 query heads over 8 key/value
-- heads, head dim 128, batch 1 to 8 (bench/decode.py's shapes, in both 16-bit types). The runtime
-- serves decode shapes (at most 16 query rows) only from winners tuned on them, and the others
-- only from the rest.
local decode_shapes = grid{
  dtype = {"bf16", "f16"}, head_dim = 128, causal = 0,
  seqlen_q = 1, seqlen_k = {8192, 32768, 131072}, batch = {1, 2, 4, 8}, heads = 32, heads_k = 8,
}

-- Speculative decoding: a draft's 16 tokens checked at once over the cache, causal with the
-- diagonal bottom-right (the last query row sees every key), the same heads. 16 rows of each of a
-- group's 4 query heads make 64 rows a group, so the tiles that pay are not those of one row
-- (bench/features.py's shape is batch 8 over 4096 keys).
local spec_decode_shapes = grid{
  dtype = {"bf16", "f16"}, head_dim = 128, causal = 1, bottom_right = 1,
  seqlen_q = 16, seqlen_k = {4096, 16384}, batch = {1, 8}, heads = 32, heads_k = 8,
}

-- Float32 forwards on the tensor cores (fwd_mma, each product three TF32 products): the papers'
-- head dims and masks at three lengths. A warp's registers hold O and a key tile's own
-- accumulators, so 128-row tiles take 8 warps; SPLIT_SMEM splits K and V once a tile for every
-- warp, which paid at some tiles and cost at others (notes/fp32.md).
local f32_shapes = grid{
  dtype = {"f32"}, head_dim = {64, 128}, causal = {0, 1},
  seqlen = {1024, 4096, 16384}, tokens = 16384, hidden = 2048,
}

-- The same with TF32 allowed (the caller's allow_tf32: one TF32 product a product, validated at
-- TF32's threshold).
local tf32_shapes = grid{
  dtype = {"f32"}, head_dim = {64, 128}, causal = {0, 1},
  seqlen = {1024, 4096, 16384}, tokens = 16384, hidden = 2048, tf32 = {1},
}

-- Float32 at head dim 96, forward only (fwd_wgmma's TF32 forms take it; no backward family takes
-- 96 unpadded, and a tuned kernel pads none), at two lengths of 16 heads as the 16-bit head dims
-- beyond the grid's.
local f32_shapes_96 = grid{ dtype = {"f32"}, head_dim = {96}, causal = {0, 1}, seqlen = {1024, 4096}, tokens = 16384,
                            heads = {16} }
local tf32_shapes_96 = grid{ dtype = {"f32"}, head_dim = {96}, causal = {0, 1}, seqlen = {1024, 4096}, tokens = 16384,
                             heads = {16}, tf32 = {1} }

-- Timing: at the largest shape a forward pass takes about 2 ms, so 50 ms gives 25 repetitions.
local bench = { warmup_ms = 10, rep_ms = 50, timeout_s = 10 }

-- Under load a GPU's clocks settle over about a second, so candidates timed one after another in
-- 50 ms windows differ by a few percent for no reason of their own: on an H200 the same kernels
-- timed in two sweeps differed by 2-3.5 % (notes/tuning.md, section 6), as much as a workload's
-- best few lie apart. So on the Hopper spaces the best eight within 10 % are timed four times
-- more in rotation and each keeps the median of its times. Replayed against an exhaustive sweep
-- (bench/strategy_replay.c), that took the winners from within 2 % of the optimum in 80 % of
-- searches (three finalists, two rounds) to 91 %.
local confirm = { top = 8, within = 0.10, rounds = 4 }

local spaces = {
  -- Float32 backwards on the tensor cores (bwd_mma, each product three TF32 products, the small
  -- two apart): the forward's shapes, and the same with TF32 allowed (one product). dQ by
  -- atomics only: its own kernel (DQ_MODE separate) recomputes the scores and was the slower at
  -- every shape benched (notes/fp32.md); the deterministic mode still makes a winner separate.
  -- SPLIT_QUERIES (a key slab's two warps each making S^T and dP^T for half of the queries, P^T and
  -- dS^T exchanged through shared memory; the family's check takes it where 8 warps share 64
  -- keys) cuts a step's products by a third: every head-dim-128 winner of the H200 takes it.
  -- SPLIT_SMEM (Q and dO split into TF32 parts once a step, in shared memory, not by every warp as
  -- it reads them) ran most three-product forms 5-13 % faster and others up to 7 % slower
  -- (bench/RESULTS.md, 2026-11-30). Pruned by the H200's sweep before them (the same section):
  -- 16-row query tiles (27 % or more behind at every workload; kept where shared memory is too
  -- small for 32), 32 x 128 (6 % or more) and 32 x 64 tiles of 8 warps without the split (27 %).
  -- 128-row query tiles, which fit one TF32 product at head dim 128 since its dK and dV add into
  -- the sums directly, ran 8 % behind the H200's winner there (bench_kernels' tf32 rows, thirtieth
  -- session): left out.
  space{
    name = "bwd_f32",
    template = "bwd_mma",
    fixed = { CAUSAL_SKIP = 1, DQ_MODE = "atomic" },
    params = {
      BLOCK_M = {16, 32, 64},
      BLOCK_N = {64, 128},
      NUM_WARPS = {4, 8},
      NUM_STAGES = {1, 2},
      SPLIT_QUERIES = {0, 1},
      SPLIT_SMEM = {0, 1},
    },
    where = function(p, dev)
      if p.BLOCK_M == 16 and dev.smem_per_block >= 160 * 1024 then
        return false, "16-row query tiles: never within 26 % where 32 fit"
      end
      if p.BLOCK_M == 32 and p.BLOCK_N == 128 then
        return false, "32 x 128: never within 6 % of the fastest"
      end
      if p.BLOCK_M == 32 and p.NUM_WARPS == 8 and p.SPLIT_QUERIES == 0 then
        return false, "32 x 64 of 8 warps without the queries split: never within 27 %"
      end
      return true
    end,
    workloads = { f32_shapes, tf32_shapes },
    bench = bench,
    confirm = confirm,
  },
  -- The decode forward splits each query tile's keys over SPLITS blocks (a combine kernel weighs
  -- their results) and packs a group's query heads into one tile (PACK_GQA): 4 rows of a 16-row
  -- tile instead of 1 of 128, each K/V tile read once a group. The splits that pay depend on the
  -- batch and the cache length (too few leave SMs idle, too many a last partial wave), so they are
  -- searched per workload. A wider search on the H100 (larger key tiles, more and fewer stages and
  -- splits; notes/kernels.md, "Decode shapes") found every winner within 1% among those below.
  space{
    name = "decode",
    template = "fwd_mma",
    fixed = { CAUSAL_SKIP = 1, PACK_GQA = 1, NUM_STAGES = 3 },
    params = {
      BLOCK_M = {16, 32, 64},
      NUM_WARPS = {1, 2, 4},
      BLOCK_N = {32, 64},
      SPLITS = {4, 8, 16, 32},
    },
    where = function(p)
      if p.BLOCK_M ~= 16 * p.NUM_WARPS then
        return false, "a warp per 16 query rows"
      end
      return true
    end,
    workloads = { decode_shapes, spec_decode_shapes },
    bench = { warmup_ms = 5, rep_ms = 30, timeout_s = 10 },
  },
}

-- The mma.sync families where no Hopper family runs. On an H100 and an H200 fwd_wgmma won every
-- dense forward, the float32 ones too (bench/RESULTS.md, 2026-11-29), and bwd_wgmma every 16-bit
-- backward (the sweep of 28 November 2026, where bwd_mma took a third of the backward's sweep for
-- no winner), so a sweep there does not spend its time on them (decode and the float32 backward
-- stay on the mma.sync families everywhere: the Hopper ones take no SPLITS and no f32 backward).
if device.cc ~= 90 then
  table.insert(spaces, space{
    name = "fwd",
    template = "fwd_mma",
    fixed = { CAUSAL_SKIP = 1 },
    params = {
      BLOCK_M = {64, 128},
      BLOCK_N = {32, 64, 128},
      NUM_WARPS = {4, 8},
      NUM_STAGES = {1, 2},
    },
    -- Two blocks per SM let one block's loads hide behind the other's math; a tile that leaves
    -- room for one block only is seldom the fastest at these sizes.
    where = function(p, dev)
      if 2 * smem_bytes(p) > dev.smem_per_block then
        return false, "room for one block per SM only"
      end
      return true
    end,
    workloads = shapes,
    bench = bench,
  })
  table.insert(spaces, space{
    name = "fwd_f32",
    template = "fwd_mma",
    fixed = { CAUSAL_SKIP = 1 },
    params = {
      BLOCK_M = {64, 128},
      BLOCK_N = {32, 64},
      NUM_WARPS = {4, 8},
      NUM_STAGES = {1, 2},
      SPLIT_SMEM = {0, 1},
    },
    workloads = f32_shapes,
    bench = bench,
    confirm = confirm,
  })
  table.insert(spaces, space{
    name = "bwd",
    template = "bwd_mma",
    -- Two stages: the next Q/dO tile loads while this one is used; one stage stalls on every
    -- load, and a third does not fit beside the K/V tiles at head dim 128.
    fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2 },
    params = {
      BLOCK_M = {32, 64},
      BLOCK_N = {64, 128},
      NUM_WARPS = {4, 8},
      DQ_MODE = {"atomic", "separate"},
    },
    workloads = shapes,
    bench = bench,
  })
end

-- Hopper only (wgmma, compiled for sm_90a). The forward: a consumer warpgroup owns 64 query rows,
-- so NUM_WARPS is BLOCK_M/16, or that + 4 where a producer warpgroup loads Q, K and V for one to
-- three consumers; with a producer, OVERLAP (softmax under the previous tile's P V), for two or
-- three consumers PINGPONG (turns at the tensor cores), and PERSISTENT (resident blocks looping
-- over the tiles); the other pairings are refused by the family's check (three consumers have
-- 160 registers a thread: 128-key tiles at head dim 64, or at 96 and 128 with P_SMEM).
if device.cc == 90 then
  table.insert(spaces, 1, space{
    name = "fwd_hopper",
    template = "fwd_wgmma",
    fixed = { CAUSAL_SKIP = 1 },
    params = {
      BLOCK_M = {64, 128, 192},
      NUM_WARPS = {4, 8, 12, 16},
      BLOCK_N = {64, 80, 128, 144, 160, 176, 192},
      NUM_STAGES = {1, 2},
      OVERLAP = {0, 1},
      PINGPONG = {0, 1},
      PERSISTENT = {0, 1},
      MULTICAST = {0, 1},
      P_SMEM = {0, 1},
    },
    -- The inline pipeline won only with one or two warpgroups (64 or 128 rows, short or causal
    -- sequences); a producer's ring wants its two stages, and without OVERLAP lost to it at every
    -- shape (bench_kernels, H100, 2026-11-25: 569 against 660 TFLOP/s at head dim 128, N 4096), so
    -- it is kept only in its plainest form. The family's check refuses the rest.
    where = function(p, dev)
      local producer = p.NUM_WARPS == p.BLOCK_M / 16 + 4
      if not producer and p.BLOCK_M == 192 then
        return false, "three inline warpgroups: never the fastest"
      end
      -- Nor at head dim 128 without a mask: no inline winner there in the H100's or the H200's
      -- table (db/tuned); the clusters' candidates (below) take their place.
      if not producer and p.HEAD_DIM == 128 and p.CAUSAL == 0 then
        return false, "inline warpgroups at head dim 128 without a mask: never the fastest"
      end
      if not producer and p.BLOCK_M == 128 and (p.BLOCK_N ~= 64 or p.NUM_STAGES ~= 2) then
        return false, "two inline warpgroups: 64-key tiles in two stages only"
      end
      if producer and p.NUM_STAGES ~= 2 then
        return false, "a producer's ring of one stage"
      end
      if producer and p.OVERLAP == 0 and (p.PINGPONG == 1 or p.PERSISTENT == 1) then
        return false, "a producer without OVERLAP: plain only"
      end
      -- A consumer warpgroup for each 64 of 192 rows, measured on the H100 by bench_kernels
      -- (2026-11-26): at head dim 64 on 128 keys with OVERLAP and
      -- PINGPONG, 427 TFLOP/s causal at N 4096 against two consumers' 385, and 514 against 492
      -- non-causal (without PINGPONG 415, 496); on 64 keys at head dim 128, 642 against 663 and 505
      -- against 604 causal.
      -- P read from shared memory (P_SMEM) frees P's registers, which is what refuses three
      -- consumers at head dims 96 and 128 (FlashAttention-4 takes 192 rows so at 96). On the H200
      -- (bench_kernels' fpsmem set, 2026-12-01) three consumers so led the shipped 128 x 128 by
      -- 4.5 % at head dim 96 and 1-1.5 % at 128 without a mask, and trailed it by 10-20 % under
      -- the causal mask: offered there, without a mask, with turns or persistent blocks (at 128
      -- with turns: persistent without them spills 4 bytes there).
      if p.P_SMEM == 1 and (p.BLOCK_M ~= 192 or (p.HEAD_DIM ~= 96 and p.HEAD_DIM ~= 128) or p.CAUSAL == 1 or
                            p.PINGPONG + p.PERSISTENT == 0 or (p.HEAD_DIM == 128 and p.PINGPONG == 0)) then
        return false, "P from shared memory: three consumers at head dims 96 and 128 without a mask"
      end
      -- At head dim 96 the family lays Q, K and V in narrow panels (64-byte rows, traits'
      -- fwd_wgmma_narrow), which leaves room for 144 keys with P in shared memory in two stages:
      -- FlashAttention-4's tile there (its _tile_size_fwd_sm90: turns, one block a tile), offered
      -- in that form. On the H200 (bench_kernels' fd96 set, 2026-12-01) it led 192 x 128 by 1 %
      -- at N 16384 and trailed it by 2 % at N 4096, and the guarded d96 sweep kept every stored
      -- winner. To keep that workload within its cap, 128 keys with turns and persistent blocks
      -- both go (the H200's sweeps took the other two forms).
      if p.P_SMEM == 1 and p.HEAD_DIM == 96 and
         ((p.BLOCK_N == 144 and (p.PINGPONG == 0 or p.PERSISTENT == 1)) or
          (p.BLOCK_N == 128 and p.PINGPONG + p.PERSISTENT == 2)) then
        return false, "P from shared memory at head dim 96: 144 keys with turns, one block a tile; 128 keys not both"
      end
      local three_keys = p.BLOCK_N == 128 or (p.BLOCK_N == 144 and p.HEAD_DIM == 96 and p.P_SMEM == 1)
      if producer and p.BLOCK_M == 192 and
         (not three_keys or p.OVERLAP == 0 or (p.PINGPONG == 0 and p.P_SMEM == 0)) then
        return false, "three consumers: 128 keys (144 at head dim 96 with P_SMEM), OVERLAP and PINGPONG only"
      end
      -- Clusters of two blocks sharing each K/V tile's load (MULTICAST; the family takes them
      -- only for one block a tile without a mask), for the head dim 128 forward, on the
      -- two-consumer OVERLAP schedules that win there: its L2 served each K/V sector to 1.1-1.5
      -- blocks where FlashAttention-4's reached 2.6 (measured in notes/kernels.md). The H200's
      -- first sweep with them (bench/RESULTS.md, 2026-11-30): within 1 % of the fastest at N 8192
      -- and 16384, 7-47 % behind at 512 to 4096; no winner.
      -- None has been declared a winner yet. The nearest were 128 and 176 keys (at N 16384 the
      -- fastest of the H200's rerun of 2026-12-01, the stored winner kept within the interval;
      -- 64, 160 and 192 keys 2-17 % behind them: bench/results/fwd-rerun-candidates-h200-353f2da.txt),
      -- so the others are left out, to make room for P_SMEM's candidates (above).
      if p.MULTICAST == 1 and not (producer and p.BLOCK_M == 128 and p.OVERLAP == 1 and p.PINGPONG == 0 and
                                   p.HEAD_DIM == 128 and (p.BLOCK_N == 128 or p.BLOCK_N == 176)) then
        return false, "clusters: head dim 128, two consumers beside a producer, OVERLAP, no turns, 128 or 176 keys"
      end
      -- Key tiles that are not powers of two, measured on an H200 by bench_kernels' fkeys set
      -- (2026-11-29): 80 keys at head dim 256 (where 128 do not fit) 746 TFLOP/s against 64 keys'
      -- 708; 160-192 at head dim 128 716 against 693 causal at N 16384, even or behind at N 1024
      -- to 4096; behind 128 keys at head dims 64, 96 and 192/128. So each only where it won, on
      -- two consumers beside a producer with OVERLAP (the wide ones one block a tile, in order).
      if p.BLOCK_N ~= 64 and p.BLOCK_N ~= 128 and not (p.BLOCK_M == 192 and p.BLOCK_N == 144) then
        if p.BLOCK_N == 144 then
          return false, "144 keys: three consumers at head dim 96 with P_SMEM only"
        end
        if not (producer and p.BLOCK_M == 128 and p.OVERLAP == 1) then
          return false, "keys beyond powers of two: two consumers beside a producer, OVERLAP"
        end
        if p.BLOCK_N == 80 and p.HEAD_DIM ~= 256 then
          return false, "80 keys: head dim 256 only"
        end
        if p.BLOCK_N > 128 and (p.HEAD_DIM ~= 128 or p.PINGPONG + p.PERSISTENT > 0) then
          return false, "160 to 192 keys: head dim 128, one block a tile, no turns"
        end
      end
      return true
    end,
    workloads = hopper_forward_shapes,
    bench = bench,
    confirm = confirm,
  })
  -- Float32 forwards on the TF32 forms of wgmma (three products a product): a producer always
  -- (its warps split K and write V transposed as each tile lands) beside two consumers, the key
  -- tiles shared memory allows (a stage holds 2.5 times a 16-bit stage's bytes; the family's
  -- check refuses what does not fit). On the H200 (bench_kernels, seventeenth session,
  -- notes/fp32.md) one consumer (64 rows) lost at both head dims, and the best row at head dim
  -- 128 ran one stage without OVERLAP, so both stay; PERSISTENT only beside OVERLAP, as above.
  -- BF16_PARTS 1: each float as three bfloat16 parts, six 16-bit products a product (6 bytes an
  -- element: two stages of 32 keys at head dim 128, no V^T); the family refuses it at head dim 96,
  -- and at 64 TF32's three products won every workload of its sweep (notes/fp32.md, forty-first
  -- session), so the parts stay at 128.
  table.insert(spaces, space{
    name = "fwd_f32_hopper",
    template = "fwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, BLOCK_M = 128, NUM_WARPS = 12 },
    params = {
      BLOCK_N = {32, 64},
      NUM_STAGES = {1, 2},
      OVERLAP = {0, 1},
      PINGPONG = {0, 1},
      PERSISTENT = {0, 1},
      BF16_PARTS = {0, 1},
    },
    where = function(p)
      if p.OVERLAP == 0 and p.PERSISTENT == 1 and p.BF16_PARTS == 0 then
        return false, "PERSISTENT beside OVERLAP only (the parts, which take no OVERLAP at 128, both ways)"
      end
      if p.BF16_PARTS == 1 and p.HEAD_DIM ~= 128 then
        return false, "bfloat16 parts at head dim 128 only"
      end
      return true
    end,
    workloads = { f32_shapes, f32_shapes_96 },
    bench = bench,
    confirm = confirm,
  })
  -- With TF32 allowed a K/V stage holds one plane of each operand, not two, and P V goes into O
  -- directly (one product: no accumulator apart), so key tiles to 128 fit at head dim 64 and at
  -- 128 32 keys in one stage or two, 64 and 96 in one (shared memory). PERSISTENT, which won the
  -- float32 forward at the shortest length only, at head dim 128 in the schedule its N 1024
  -- winners took in the sweep at c7bda46 (turns without OVERLAP; no winner there took OVERLAP); it
  -- then won N 1024 and causal N 4096 (d9f22e1).
  table.insert(spaces, space{
    name = "fwd_tf32_hopper",
    template = "fwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, BLOCK_M = 128, NUM_WARPS = 12 },
    params = {
      BLOCK_N = {32, 64, 96, 128},
      NUM_STAGES = {1, 2},
      OVERLAP = {0, 1},
      PINGPONG = {0, 1},
      PERSISTENT = {0, 1},
    },
    where = function(p)
      if p.BLOCK_N == 32 and p.HEAD_DIM == 64 then
        return false, "32-key tiles at head dim 64: 23 % behind 64 keys with one product, 20-30 % with three"
      end
      if p.PERSISTENT == 1 and (p.HEAD_DIM ~= 128 or p.OVERLAP == 1 or p.PINGPONG == 0) then
        return false, "PERSISTENT at head dim 128 with turns, without OVERLAP, only"
      end
      return true
    end,
    workloads = { tf32_shapes, tf32_shapes_96 },
    bench = bench,
    confirm = confirm,
  })
  -- The float32 backward on the TF32 forms of wgmma (bwd_wgmma_f32): 64 keys beside a producer,
  -- a consumer warpgroup for each 64 of the head dim (8 warps at 64, 12 at 128, which takes one
  -- TF32 product only), every operand in shared memory in planes, so query tiles of 32 rows with
  -- three products and of 64 with one at head dim 64 (the family's check refuses the rest). Its
  -- workloads are bwd_f32's at head dim 64 and with TF32 at 128, which bwd_mma's candidates meet
  -- there too. dQ by each thread's atomics, into dq_accum (zeroed before, converted after) or
  -- straight into dQ (DQ_MODE direct: float32 is the accumulator's type, so neither pass runs).
  -- Staged in shared memory and added by one bulk reduction a step (DQ_BULK) ran level at best on
  -- the H200 (two slots, non-causal) and up to 4 % behind elsewhere (notes/fp32.md, thirty-second
  -- session), so the wide space alone tries it, but for the parts. BF16_PARTS (float32 at head dim
  -- 128 without TF32: three bfloat16 parts, six 16-bit products, every operand read as it lies)
  -- takes the float32 shapes at 128, in 32-query tiles of one slot or two: 1.6-1.7x bwd_mma's
  -- three-product winners there on an H200, and with DQ_BULK in one slot from 3.5 % behind (causal)
  -- to 2 % ahead of two slots without (bench_kernels' bparts set, notes/fp32.md, forty-second
  -- session). With TF32
  -- allowed the parts are two and the products three (more accurate than one TF32 product):
  -- correct, but 4-7 % behind one TF32 product at every tparts shape on an H200 (best rows 131-132
  -- against 139-141 TFLOP/s non-causal at N 4096-16384; notes/fp32.md, forty-third session), so wide.lua alone offers it.
  table.insert(spaces, space{
    name = "bwd_f32_hopper",
    template = "bwd_wgmma_f32",
    fixed = { CAUSAL_SKIP = 1, BLOCK_N = 64 },
    params = {
      NUM_WARPS = {8, 12},
      BLOCK_M = {32, 64},
      NUM_STAGES = {1, 2, 3},
      DQ_MODE = {"atomic", "direct"},
      DQ_BULK = {0, 1},
      BF16_PARTS = {0, 1},
    },
    where = function(p)
      if p.DQ_BULK == 1 and p.BF16_PARTS == 0 then
        return false, "DQ_BULK with TF32 products: level at best, up to 4 % behind (the wide space tries it)"
      end
      if p.BF16_PARTS == 1 and p.ALLOW_TF32 == 1 then
        return false, "two bfloat16 parts with TF32: 4-7 % behind one TF32 product (the wide space tries it)"
      end
      return true
    end,
    workloads = { f32_shapes, tf32_shapes },
    bench = bench,
    confirm = confirm,
  })
  -- The Hopper backward: a consumer warpgroup owns 64 keys, so BLOCK_N gives the consumers and
  -- NUM_WARPS whether a producer warpgroup loads for them (BLOCK_N/16 + 4) or not (BLOCK_N/16);
  -- query tiles of 64 rows, or at head dim 64 of 128 beside two consumers (each then makes dQ
  -- for 64 of the rows). At head dims 192 and 256 two consumers split the columns of 64 keys
  -- beside a producer (12 warps), so only the stages vary there (the family's check refuses the
  -- rest). Beside a producer the order of a tile's products varies too: dQ's product before dK's
  -- (DQ_FIRST), and with it dV's before dP's wait (DV_EARLY). Pruned by measurement on the H100
  -- (notes/kernels.md, "the order of a tile's products"): DV_EARLY alone gained little, dK from
  -- shared memory (DK_SS) lost in every pairing, so it stays 0, and with one stage DQ_FIRST lost
  -- 15-25 % in a sweep (the ring slot is freed only after dK's product); with one consumer
  -- (64 keys) the reorder gained nothing on the H200. PERSISTENT blocks (beside a producer, the
  -- keys split) took 4-8 % on short and causal lengths from one block a key tile and lost 1-4 %
  -- on long non-causal ones (bench_kernels on an H200, notes/kernels.md, "persistent blocks"):
  -- the sweep decides. L_EARLY (L and delta as the starting values of S^T's and dP^T's products)
  -- was even to 6 % slower at bench_kernels' early set on an H200, as was its first form (L held in
  -- registers; notes/kernels.md, "L early"), so it stays 0. DQ_INIT store (a query tile's first
  -- dQ share stored, so dq_accum is not zeroed first: a pass over 4 bytes a query row and column,
  -- as long as the delta pass) is the producer's dQ warp's, so it varies beside a producer.
  -- 80-row query tiles (head dim 128 only, dQ transposed: FlashAttention-4's non-causal tile) came
  -- within 0-3 % of the 64-row tiles on an H200 (bench_kernels' e80 set, notes/kernels.md), in
  -- the plain order and with DQ_FIRST: those two, one block a key tile (persistent, they spill more).
  -- PRODUCER_REGS 32 (the producer keeps 32 registers, the consumers 232): at head dim 96 the
  -- producer's 24 spilled 12-16 bytes where persistent blocks walk a causal grid, and 32 none
  -- (NVRTC); at 128 and with 64's 128-row tiles the consumers need their 240 (the family refuses
  -- 32 there: 232 spilled 164 bytes at 128 rows), 64's 64-row tiles are pruned above, and at 256
  -- neither split spilled: so only there.
  -- STAGGER 1 (a head's key tiles walk its query tiles from staggered places): on an H200
  -- (bench_kernels' stagger set, notes/kernels.md) even where dQ's shares are added, and with the
  -- first share stored 0.99-1.04x at head dim 128 (non-causal, where storing alone lost to the
  -- waits for the first share); so beside DQ_INIT store there, in the shipped order (DQ_FIRST), 64-row
  -- tiles one block a key tile (persistent, the staggered producer spilled 16 bytes).
  table.insert(spaces, space{
    name = "bwd_hopper",
    template = "bwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, DQ_MODE = "atomic", DK_SS = 0, L_EARLY = 0 },
    params = {
      BLOCK_M = {64, 80, 128},
      NUM_WARPS = {4, 8, 12},
      BLOCK_N = {64, 128},
      NUM_STAGES = {1, 2, 3},
      DQ_FIRST = {0, 1},
      DV_EARLY = {0, 1},
      PERSISTENT = {0, 1},
      DQ_INIT = {0, 1},
      PRODUCER_REGS = {0, 32},
      STAGGER = {0, 1},
    },
    where = function(p)
      if p.PRODUCER_REGS == 32 and (p.HEAD_DIM ~= 96 or p.PERSISTENT == 0 or p.CAUSAL == 0) then
        return false, "the register split: a causal walk's producer at head dim 96"
      end
      if p.STAGGER == 1 and (p.CAUSAL == 1 or p.HEAD_DIM ~= 128 or p.BLOCK_M ~= 64) then
        return false, "staggered walks: non-causal, head dim 128, 64-row tiles"
      end
      if p.STAGGER == 1 and (p.DQ_INIT == 0 or p.PERSISTENT == 1 or p.DQ_FIRST == 0) then
        return false, "staggered walks: the first dQ share stored, DQ_FIRST, one block a key tile"
      end
      if p.BLOCK_M == 80 and (p.DV_EARLY == 1 or p.PERSISTENT == 1) then
        return false, "80 rows: the plain order or DQ_FIRST, one block a key tile"
      end
      if p.DV_EARLY == 1 and p.DQ_FIRST == 0 then
        return false, "DV_EARLY only beside DQ_FIRST"
      end
      if p.DQ_INIT == 1 and p.NUM_WARPS ~= p.BLOCK_N // 16 + 4 then
        return false, "the first dQ share stored: by a producer's dQ warp"
      end
      -- Pruned by the H200 sweep of 29 November 2026 (notes, "the first dQ share stored"): at
      -- head dim 64 no 64-row tile beside a producer came within 3 % of a workload's best.
      if p.HEAD_DIM == 64 and p.BLOCK_M == 64 and p.NUM_WARPS == 12 then
        return false, "head dim 64 beside a producer: 128-row query tiles"
      end
      if p.PERSISTENT == 1 and (p.NUM_WARPS ~= 12 or p.BLOCK_N ~= 128) then
        return false, "persistent blocks: a producer beside two consumers splitting the keys"
      end
      -- Pruned by the H100 sweep of 28 November 2026 (notes, section "sustained load"):
      -- none of these came within 3 % of a workload's best.
      if p.BLOCK_N == 128 and p.NUM_WARPS == 12 and p.NUM_STAGES ~= 2 then
        return false, "a producer beside two consumers: two stages"
      end
      if p.BLOCK_N == 64 and p.NUM_WARPS == 8 then
        return false, "one consumer beside a producer"
      end
      if p.BLOCK_M == 128 and p.DQ_FIRST == 1 and p.DV_EARLY == 0 then
        return false, "128 rows: DQ_FIRST with DV_EARLY only"
      end
      if p.DQ_FIRST == 1 and p.NUM_STAGES == 1 then
        return false, "DQ_FIRST holds the one slot until dK is done"
      end
      if p.DQ_FIRST == 1 and p.BLOCK_N == 64 then
        return false, "one consumer: no partner in step to stall beside it"
      end
      return true
    end,
    workloads = hopper_backward_shapes,
    bench = bench,
    confirm = confirm,
  })
  -- The Hopper backward at head dims 192 over 128 (DeepSeek's MLA) and over 192: two consumers split the
  -- columns of 64 keys, or (the wide keys) the keys of 128 with S^T and dP^T issued one after the
  -- other. There dK's product from the dS^T tile in shared memory (DK_SS) frees the registers that
  -- dS's fragments held: on an H200 (bench_kernels' wide set, notes/kernels.md) it took the wide
  -- keys from 469 to 571 TFLOP/s (N 4096) where at the smaller head dims it lost, so it varies here
  -- only.
  table.insert(spaces, space{
    name = "bwd_mla",
    template = "bwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, DQ_MODE = "atomic", BLOCK_M = 64, NUM_WARPS = 12, L_EARLY = 0 },
    params = {
      BLOCK_N = {64, 128},
      NUM_STAGES = {1, 2, 3},
      DQ_FIRST = {0, 1},
      DV_EARLY = {0, 1},
      DK_SS = {0, 1},
      PERSISTENT = {0, 1},
      DQ_INIT = {0, 1},
    },
    where = function(p)
      if p.DV_EARLY == 1 and p.DQ_FIRST == 0 then
        return false, "DV_EARLY only beside DQ_FIRST"
      end
      if p.BLOCK_N == 64 and (p.DQ_FIRST + p.DK_SS + p.PERSISTENT > 0) then
        return false, "the columns split: one order, one block a key tile"
      end
      if p.BLOCK_N == 128 and p.NUM_STAGES ~= 2 then
        return false, "the wide keys: two stages (one held the slot, three do not fit)"
      end
      -- Pruned by the H200 sweep of 29 November 2026: no wide-keys kernel reading dS from
      -- registers came within 3 % of a workload's best.
      if p.BLOCK_N == 128 and p.DK_SS == 0 then
        return false, "the wide keys: dK from the dS^T tile"
      end
      return true
    end,
    workloads = head_dims_192,
    bench = bench,
    confirm = confirm,
  })
end

return spaces
