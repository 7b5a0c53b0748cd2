-- default.lua's workloads over every configuration the families take (`flashtune tune
-- --budget 2h tuner/spaces/wide.lua`): forward and backward, bf16 and f16, head dims 64 and 128,
-- causal and not, sequence lengths 512 to 16384 with 16384 tokens per batch and hidden size 2048
-- (the FlashAttention papers' benchmark shapes); on Hopper also head dims 96, 192 over 128 and
-- 256, a grid too small to fill the GPU, decode shapes, and float32 with and without TF32.
--
-- The search: on Hopper every value the families' checks accept, with no hand pruning (the
-- families refuse what cannot run, with the reason), searched by the guided strategy: the
-- winners the database already holds for this GPU first (so each workload starts from those of
-- the workloads measured before it), then the neighbours of the best so far, one tunable apart,
-- until none is left or the workload's share of the budget is spent (without --budget, until its
-- best have no untried neighbour). Replayed against an exhaustive sweep of these families
-- (bench/strategy_replay.c, docs/PERFORMANCE.md) the guided search picked within 2 % of the best
-- in 94 % of searches at a sixth of the exhaustive search's timing; the replay charges a timing
-- its windows, and on the GPU each call of the search starts a worker process (a CUDA context,
-- the inputs, the reference), kept across the search's steps. On an H200 (bench/RESULTS.md,
-- 2026-11-30) a sweep of this space within 560 s, each search starting from the shipped table's
-- winner, picked kernels as fast as default.lua's hand-pruned table's where it reached (two
-- thirds of the workloads); with no table to start from its forwards ran 9 % slower. So it is
-- not the default: it is for a GPU model with a table, or a budget of hours. The candidate
-- counts are printed, not written here: `flashtune tune --compile-only` gives the spaces,
-- workloads, candidates and distinct kernels.

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
local hopper_shapes = { shapes, wide_head_dims, head_dims_192, small_grid, small_grid_8 }

-- Decode: one query row a sequence over a long key/value cache, 32 query heads over 8 key/value
-- heads, head dim 128, batch 1 to 8 (bench/decode.py's shapes, in both 16-bit types). The runtime
-- serves decode shapes (at most 16 query rows) only from winners tuned on them, and the others
-- only from the rest.
local decode_shapes = grid{
  dtype = {"bf16", "f16"}, head_dim = 128, causal = 0,
  seqlen_q = 1, seqlen_k = {8192, 32768, 131072}, batch = {1, 2, 4, 8}, heads = 32, heads_k = 8,
}

-- Speculative decoding: a draft's 16 tokens checked at once over the cache, causal with the
-- diagonal bottom-right, the same heads (default.lua's).
local spec_decode_shapes = grid{
  dtype = {"bf16", "f16"}, head_dim = 128, causal = 1, bottom_right = 1,
  seqlen_q = 16, seqlen_k = {4096, 16384}, batch = {1, 8}, heads = 32, heads_k = 8,
}

-- Float32 on the tensor cores (each product three TF32 products): the papers' head dims and masks
-- at three lengths; and the same with TF32 allowed (the caller's allow_tf32: one TF32 product a
-- product, validated at TF32's threshold), tuned apart.
local f32_shapes = grid{
  dtype = {"f32"}, head_dim = {64, 128}, causal = {0, 1},
  seqlen = {1024, 4096, 16384}, tokens = 16384, hidden = 2048,
}
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
-- best few lie apart. So the best eight within 10 % are timed four times more in rotation and each
-- keeps the median of its times. Replayed against an exhaustive sweep (bench/strategy_replay.c),
-- that took the winners from within 2 % of the optimum in 80 % of searches (three finalists, two
-- rounds) to 91 %.
local confirm = { top = 8, within = 0.10, rounds = 4 }

-- Every space is searched the same way: short first timings (5 + 20 ms) of the known winners, a
-- few random picks and then the best's neighbours; the best quarter timed again with `bench`; the
-- finalists confirmed in rotation.
local guided = { kind = "guided" }

local spaces = {}

-- Split-key decode (fwd_mma on every arch: the Hopper forward takes no SPLITS): each query tile's
-- keys over SPLITS blocks (a combine kernel weighs their results), a group's query heads packed
-- into one tile (PACK_GQA): 4 rows of a 16-row tile instead of 1 of 128, each K/V tile read once a
-- group. A warp owns 16 packed rows.
table.insert(spaces, space{
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
  strategy = guided,
})

if device.cc ~= 90 then
  -- The mma.sync families, where no Hopper family runs. Two blocks per SM let one block's loads
  -- hide behind the other's math; a tile that leaves room for one block only is seldom the
  -- fastest at these sizes.
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
    where = function(p, dev)
      if 2 * smem_bytes(p) > dev.smem_per_block then
        return false, "room for one block per SM only"
      end
      return true
    end,
    workloads = shapes,
    bench = bench,
    strategy = guided,
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
    strategy = guided,
  })
  -- Two stages: the next Q/dO tile loads while this one is used; one stage stalls on every load,
  -- and a third does not fit beside the K/V tiles at head dim 128.
  table.insert(spaces, space{
    name = "bwd",
    template = "bwd_mma",
    fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2 },
    params = {
      BLOCK_M = {32, 64},
      BLOCK_N = {64, 128},
      NUM_WARPS = {4, 8},
      DQ_MODE = {"atomic", "separate"},
    },
    workloads = shapes,
    bench = bench,
    strategy = guided,
  })
end

-- Float32 backwards on the tensor cores (bwd_mma, each product three TF32 products, the small two
-- apart; bwd_wgmma takes no f32), with TF32 allowed too. dQ by atomics only: its own kernel
-- (DQ_MODE separate) recomputes the scores and was the slower at every shape benched
-- (notes/fp32.md); the deterministic mode still makes a winner separate.
table.insert(spaces, space{
  name = "bwd_f32",
  template = "bwd_mma",
  fixed = { CAUSAL_SKIP = 1, DQ_MODE = "atomic" },
  params = {
    BLOCK_M = {16, 32, 64, 128},
    BLOCK_N = {32, 64, 128},
    NUM_WARPS = {2, 4, 8},
    NUM_STAGES = {1, 2},
    SPLIT_QUERIES = {0, 1},
    SPLIT_SMEM = {0, 1},
  },
  workloads = { f32_shapes, tf32_shapes },
  bench = bench,
  confirm = confirm,
  strategy = guided,
})

-- Hopper only (wgmma, compiled for sm_90a): fwd_wgmma and bwd_wgmma won every dense workload on an
-- H100 and an H200, so the mma.sync families are not searched there but for decode and the
-- float32 backward. Each list holds every value the family's check may accept; the check says
-- which pairings cannot run (a consumer warpgroup owns 64 query rows, NUM_WARPS is BLOCK_M/16, or
-- that + 4 beside a producer warpgroup; OVERLAP, PINGPONG, PERSISTENT and MULTICAST need the
-- producer, MULTICAST one block a tile, no mask, a dense batch and 16-bit, P_SMEM 16-bit, a producer and
-- whole 64-key panels; the
-- registers and shared memory bound the tiles), so no hand-written rule stands between the search
-- and a configuration that runs.
if device.cc == 90 then
  table.insert(spaces, space{
    name = "fwd_hopper",
    template = "fwd_wgmma",
    fixed = { CAUSAL_SKIP = 1 },
    params = {
      BLOCK_M = {64, 128, 192},
      NUM_WARPS = {4, 8, 12, 16},
      BLOCK_N = {64, 80, 96, 112, 128, 144, 160, 176, 192},
      NUM_STAGES = {1, 2, 3},
      OVERLAP = {0, 1},
      PINGPONG = {0, 1},
      PERSISTENT = {0, 1},
      MULTICAST = {0, 1},
      P_SMEM = {0, 1},
    },
    workloads = hopper_shapes,
    bench = bench,
    confirm = confirm,
    strategy = guided,
  })
  -- Float32 forwards on the TF32 forms of wgmma (a producer's warps split K and write V
  -- transposed as each tile lands; a stage holds 2.5 times a 16-bit stage's bytes, so the key
  -- tiles are short), with TF32 allowed on their own workloads (one plane a stage: longer tiles),
  -- or in three bfloat16 parts (BF16_PARTS: six 16-bit products; float32's accuracy only).
  table.insert(spaces, space{
    name = "fwd_f32_hopper",
    template = "fwd_wgmma",
    fixed = { CAUSAL_SKIP = 1 },
    params = {
      BLOCK_M = {64, 128, 192},
      NUM_WARPS = {4, 8, 12, 16},
      BLOCK_N = {32, 64, 96, 128},
      NUM_STAGES = {1, 2, 3},
      OVERLAP = {0, 1},
      PINGPONG = {0, 1},
      PERSISTENT = {0, 1},
      BF16_PARTS = {0, 1},
    },
    workloads = { f32_shapes, tf32_shapes, f32_shapes_96, tf32_shapes_96 },
    bench = bench,
    confirm = confirm,
    strategy = guided,
  })
  -- The float32 backward on the TF32 forms of wgmma (a consumer warpgroup of 64 keys for each 64
  -- of the head dim beside a producer; head dim 128 with one TF32 product only); shared memory
  -- bounds the query tile and the ring (the family's check refuses what does not fit); dQ by
  -- atomics into dq_accum or straight into dQ (DQ_MODE direct), or into dq_accum by bulk
  -- reductions from shared memory (DQ_BULK, which default.lua leaves out); and at head dim 128 in
  -- bfloat16 parts (BF16_PARTS: three parts and six 16-bit products, or with TF32 two and three,
  -- which default.lua leaves out until measured).
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
    workloads = { f32_shapes, tf32_shapes },
    bench = bench,
    confirm = confirm,
    strategy = guided,
  })
  -- The Hopper backward at every head-dim pair: the query tile (64 rows, 80 at head dim 128, 128
  -- beside two consumers at 64), the key tile (a consumer warpgroup owns 64 keys; at 192 and 256
  -- two consumers split the columns of 64 keys, or at 192 over 128 the keys of 128), whether a
  -- producer warpgroup loads for the consumers, the ring's stages, the order of a tile's products
  -- (DQ_FIRST, DV_EARLY, DK_SS: dK from the dS^T tile in shared memory), L and delta as the
  -- products' starting values (L_EARLY), the persistent walk, and whether a query tile's first
  -- dQ share is stored rather than added to a zeroed accumulator (DQ_INIT), and the producer's
  -- registers (PRODUCER_REGS: 24, or 32 where the consumers' 232 hold their tile), and whether a
  -- head's key tiles walk its query tiles from staggered places (STAGGER). dQ by the copy engine's
  -- reduce-add (DQ_MODE atomic); the deterministic mode makes a winner ordered.
  table.insert(spaces, space{
    name = "bwd_hopper",
    template = "bwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, DQ_MODE = "atomic" },
    params = {
      BLOCK_M = {64, 80, 128},
      NUM_WARPS = {4, 8, 12},
      BLOCK_N = {64, 128},
      NUM_STAGES = {1, 2, 3},
      DQ_FIRST = {0, 1},
      DV_EARLY = {0, 1},
      DK_SS = {0, 1},
      L_EARLY = {0, 1},
      PERSISTENT = {0, 1},
      DQ_INIT = {0, 1},
      PRODUCER_REGS = {0, 32},
      STAGGER = {0, 1},
    },
    workloads = hopper_shapes,
    bench = bench,
    confirm = confirm,
    strategy = guided,
  })
end

return spaces
