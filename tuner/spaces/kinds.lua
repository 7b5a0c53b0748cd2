-- Masks and variable-length batches on Hopper: the workload kinds the runtime looks up apart from
-- the dense, plainly causal ones of default.lua (`flashtune tune tuner/spaces/kinds.lua`). Without
-- them a variable-length batch runs the dense winner of its longest length (a persistent one
-- walking the batch's own tiles where the family can: not the backward's 128-row tiles), and a window
-- runs the causal winner; tuned here, each kind gets its own.
--
-- The shapes: bf16 at head dim 128, 16 heads.
--   * a variable-length batch of 23 sequences of at most 8192 tokens, filling 3/8 of the padded
--     batch (the tuner spreads the lengths log-uniformly; bench/varlen.py's batch is in the same
--     bucket), causal and not; and 16 documents of at most 4096 tokens in the same bucket
--     (bench/varlen.py --docs 16:64:4096), whose tiles are short: served the 23 sequences'
--     non-causal winner, it ran 4.9 % slower than one block a tile (notes/kernels.md);
--   * a causal sliding window of 1024 keys (Mistral's kind) over 2 x 8192 tokens;
--   * grouped-query attention, causal at 8192 tokens: Llama 3 8B's 32 query heads over 8 K/V heads
--     (batch 2) and 70B's 64 over 8 (batch 1). The lookup keeps a group's ratio apart
--     (db_query.c, kind_gap), so these serve grouped problems and the dense winners the rest
--     (a burst and the sweep ordered the backward's walks apart there: notes/tuning.md, section 19).
-- The candidates are the Hopper families' strongest forms at head dim 128 (default.lua's notes):
-- a producer warpgroup for two consumers, with and without turns and the persistent walk, and
-- (the forward, without a mask) three consumers reading P from shared memory.

local varlen = {
  { dtype = "bf16", head_dim = 128, causal = 0, batch = 23, heads = 16, seqlen = 8192, varlen = 0.375 },
  { dtype = "bf16", head_dim = 128, causal = 1, batch = 23, heads = 16, seqlen = 8192, varlen = 0.375 },
  { dtype = "bf16", head_dim = 128, causal = 0, batch = 16, heads = 16, seqlen = 4096, varlen = 0.375 },
  { dtype = "bf16", head_dim = 128, causal = 1, batch = 16, heads = 16, seqlen = 4096, varlen = 0.375 },
}
local window = {
  { dtype = "bf16", head_dim = 128, causal = 1, window_left = 1024, batch = 2, heads = 16, seqlen = 8192 },
}
local grouped = {
  { dtype = "bf16", head_dim = 128, causal = 1, batch = 2, heads = 32, heads_k = 8, seqlen = 8192 },
  { dtype = "bf16", head_dim = 128, causal = 1, batch = 1, heads = 64, heads_k = 8, seqlen = 8192 },
}
-- (The backward's candidates for them take the split of a group's query heads over blocks that the
-- runtime gives the problem, SPLITS=2 here: the tuner sets it, db_workload_group_splits.)
local bench = { warmup_ms = 10, rep_ms = 50, timeout_s = 10 }

if device.cc ~= 90 then
  error("kinds.lua tunes the Hopper families: run it on an sm_90 GPU (this one is sm_" .. device.cc .. ")")
end

-- The backward: default.lua's Hopper forms at head dim 128 (64-row query tiles, dQ added by the
-- copy engine), with the product order (DQ_FIRST, DV_EARLY) where a producer serves two consumers
-- splitting 128 keys (L read early, L_EARLY, lost there: default.lua), the first dQ share stored
-- (DQ_INIT) beside a producer, and the persistent walk (over a variable-length batch, the packed
-- batch's own key tiles, the longest sequences' first).
local function bwd_kinds(name, workloads)
  return space{
    name = name,
    template = "bwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, BLOCK_M = 64, DQ_MODE = "atomic", DK_SS = 0, L_EARLY = 0 },
    params = {
      NUM_WARPS = {4, 8, 12},
      BLOCK_N = {64, 128},
      NUM_STAGES = {2, 3},
      DQ_FIRST = {0, 1},
      DV_EARLY = {0, 1},
      PERSISTENT = {0, 1},
      DQ_INIT = {0, 1},
    },
    where = function(p)
      if p.DV_EARLY == 1 and p.DQ_FIRST == 0 then
        return false, "DV_EARLY only beside DQ_FIRST"
      end
      if p.DQ_INIT == 1 and p.NUM_WARPS ~= p.BLOCK_N // 16 + 4 then
        return false, "the first dQ share stored: by a producer's dQ warp"
      end
      local split_keys = p.NUM_WARPS == 12 and p.BLOCK_N == 128 and p.NUM_STAGES == 2
      if (p.DQ_FIRST == 1 or p.PERSISTENT == 1) and not split_keys then
        return false, "the product order and the persistent walk: a producer beside two consumers, two stages"
      end
      return true
    end,
    workloads = workloads,
    bench = bench,
  }
end

local spaces = {
  space{
    name = "fwd_kinds",
    template = "fwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2, OVERLAP = 1 },
    -- 176 keys: FA3's tile at head dim 128 (default.lua: the widest tiles won long causal rows).
    -- Three consumers (192 rows) only with P read from shared memory (P_SMEM frees P's registers;
    -- with P in registers the family refuses them at head dim 128), 128 keys, taking turns (without
    -- them the persistent form spills), and no mask: default.lua's rule, from its sweep, where
    -- 192-row tiles lost 10-20 % under the causal mask.
    params = {
      BLOCK_M = {128, 192},
      NUM_WARPS = {12, 16},
      BLOCK_N = {64, 128, 176},
      PINGPONG = {0, 1},
      PERSISTENT = {0, 1},
      P_SMEM = {0, 1},
    },
    where = function(p)
      if p.NUM_WARPS ~= p.BLOCK_M // 16 + 4 then
        return false, "a producer beside a consumer warpgroup for each 64 rows"
      end
      if (p.BLOCK_M == 192) ~= (p.P_SMEM == 1) then
        return false, "P_SMEM only for (and always with) three consumers"
      end
      if p.BLOCK_M == 192 and (p.BLOCK_N ~= 128 or p.PINGPONG == 0 or p.CAUSAL == 1) then
        return false, "three consumers: 128 keys, taking turns, no mask"
      end
      return true
    end,
    workloads = { varlen, window, grouped },
    bench = bench,
  },
  bwd_kinds("bwd_varlen", varlen),
  bwd_kinds("bwd_window", window),
  bwd_kinds("bwd_grouped", grouped),
}

return spaces
