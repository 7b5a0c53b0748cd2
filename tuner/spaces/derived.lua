-- What Lua adds to a search space: lists derived per head dim, a parameter that follows another,
-- constraints that read the workload and the device, spaces built in a loop, and f32 (fwd_exact,
-- bwd_exact) sampled at random beside the tensor-core bf16 kernels.
-- Run it with `flashtune tune tuner/spaces/derived.lua`.

local seqlens = pow2(1024, 8192)

-- Key tiles shrink as the head dim grows: a K/V stage holds BLOCK_N x head_dim elements and each
-- thread's accumulators grow with the head dim, so wide heads take narrow key tiles.
local function key_tiles(d)
  if d <= 64 then return {64, 128} end
  if d <= 128 then return {32, 64} end
  return {16, 32}
end

-- One warp per 16 query rows (an mma tile has 16 rows), between 4 and 8 warps.
local function warps_for(block_m)
  return math.max(4, math.min(8, block_m // 16))
end

-- A deeper pipeline is worth its shared memory only while two blocks still fit on an SM.
local function fits_twice(p, dev)
  return 2 * smem_bytes(p) <= dev.smem_per_block
end

local spaces = {}

for _, d in ipairs{64, 128, 256} do
  local shapes = grid{
    dtype = "bf16", head_dim = d, causal = {0, 1},
    seqlen = seqlens, tokens = 16384, hidden = 2048,
  }
  spaces[#spaces + 1] = space{
    name = "fwd bf16 d" .. d,
    template = "fwd_mma",
    params = {
      BLOCK_M = {64, 128},
      BLOCK_N = key_tiles(d),
      NUM_WARPS = {4, 8},
      NUM_STAGES = range(1, 3),
      CAUSAL_SKIP = {0, 1},
    },
    where = function(p, dev, w)
      if p.NUM_WARPS ~= warps_for(p.BLOCK_M) then
        return false, "NUM_WARPS follows BLOCK_M"
      end
      if w.causal == 0 and p.CAUSAL_SKIP == 0 then
        return false, "CAUSAL_SKIP changes nothing without a mask"
      end
      if p.NUM_STAGES > 1 and not fits_twice(p, dev) then
        skip("a deeper pipeline only while two blocks fit")
      end
      return true
    end,
    workloads = shapes,
    -- Time everything briefly, then the best quarter properly.
    strategy = { kind = "prune", keep = 0.25, warmup_ms = 5, rep_ms = 20 },
  }
  -- The backward kernel keeps a whole K/V tile in shared memory: at head dim 256 even the
  -- smallest tile needs more than sm_86 and sm_89 give a block, so there the space is left out.
  local smallest = smem_bytes({ BLOCK_M = 16, BLOCK_N = 64, HEAD_DIM = d, HEAD_DIM_V = d,
                                NUM_STAGES = 2, DQ_MODE = "atomic" }, "bwd_mma")
  if smallest <= device.smem_per_block then
    spaces[#spaces + 1] = space{
      name = "bwd bf16 d" .. d,
      template = "bwd_mma",
      fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2 },
      params = {
        -- Past head dim 128, pairs of warps split dK/dV and the key tile must stay at 64.
        BLOCK_M = d <= 64 and {32, 64} or d <= 128 and {32} or {16, 32},
        BLOCK_N = d <= 128 and {64, 128} or {64},
        NUM_WARPS = {4, 8},
        DQ_MODE = {"atomic", "separate"},
      },
      workloads = shapes,
    }
  end
end

-- f32 runs on CUDA cores; its kernels are slower, so the shapes are smaller, and a random
-- sample of eight per shape keeps the sweep short (the same seed gives the same sample).
local f32_shapes = grid{
  dtype = "f32", head_dim = {64, 128}, causal = {0, 1},
  seqlen = {1024, 4096}, tokens = 8192, hidden = 1024,
}
spaces[#spaces + 1] = space{
  name = "fwd f32",
  template = "fwd_exact",
  fixed = { CAUSAL_SKIP = 1 },
  params = { BLOCK_M = pow2(32, 128), BLOCK_N = pow2(16, 64), NUM_WARPS = {4, 8}, NUM_STAGES = {1, 2} },
  workloads = f32_shapes,
  strategy = { kind = "random", n = 8, seed = 7 },
}
spaces[#spaces + 1] = space{
  name = "bwd f32",
  template = "bwd_exact",
  fixed = { CAUSAL_SKIP = 1 },
  params = {
    BLOCK_M = pow2(16, 64), BLOCK_N = pow2(16, 64), NUM_WARPS = {4, 8}, NUM_STAGES = {1, 2},
    DQ_MODE = {"atomic", "separate"},
  },
  workloads = f32_shapes,
  strategy = { kind = "random", n = 8, seed = 7 },
}

return spaces
