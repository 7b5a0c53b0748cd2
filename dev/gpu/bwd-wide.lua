-- The Hopper backward's whole space (tuner/spaces/wide.lua's bwd_hopper: every value bwd_wgmma's
-- checks accept, none of default.lua's hand pruning) at the points where it trails
-- FlashAttention-4 most: bf16, head dim 128 at N 4096 and 16384 and head dim 96 at N 4096, causal
-- and not (`bwd_dense`); and kinds.lua's packed batch of 23 sequences, causal and not
-- (`bwd_packed`). The wide sweeps under a budget never reached these workloads (notes/tuning.md,
-- section 10: the backward's were the sweep's last). Searched by the guided strategy from the
-- shipped winner (`GUARD=db/tuned/h200-sm90.txt`: it is re-timed and stays declared unless beaten
-- beyond the interval):
--   GUARD=db/tuned/h200-sm90.txt BUDGET=420 ONLY=bwd_dense bash dev/gpu/sweep.sh dev/gpu/bwd-wide.lua
local dense = {
  grid{ dtype = "bf16", head_dim = 128, causal = {0, 1}, seqlen = {4096, 16384}, tokens = 16384, hidden = 2048 },
  grid{ dtype = "bf16", head_dim = 96, causal = {0, 1}, seqlen = 4096, tokens = 16384, heads = {16} },
}
local packed = {
  { dtype = "bf16", head_dim = 128, causal = 0, batch = 23, heads = 16, seqlen = 8192, varlen = 0.375 },
  { dtype = "bf16", head_dim = 128, causal = 1, batch = 23, heads = 16, seqlen = 8192, varlen = 0.375 },
}
local function wide_bwd(name, workloads)
  return space{
    name = name,
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
    workloads = workloads,
    bench = { warmup_ms = 10, rep_ms = 50, timeout_s = 10 },
    confirm = { top = 8, within = 0.10, rounds = 4 },
    strategy = { kind = "guided" },
  }
end
local spaces = { wide_bwd("bwd_dense", dense), wide_bwd("bwd_packed", packed) }
return spaces
