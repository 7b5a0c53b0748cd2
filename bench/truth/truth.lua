-- The ground truth for the tuner's strategies (docs/PERFORMANCE.md, "How the tuner's strategies are measured"): every
-- configuration the Hopper families take over their default space's value lists widened to every
-- value the family's check accepts, no hand pruning (`where`), swept exhaustively once on one GPU.
-- Its stored results (bench/results/truth-<dir>-<gpu>-<commit>.csv, made by dev/gpu/truth.sh) are
-- what tests/test_strategy.c replays: a strategy's pick against the best of all, and its timings
-- against all of them.
--
-- Eight workloads a direction: bf16, head dims 64 and 128, causal and not, 1024 and 8192 tokens a
-- sequence, 16384 tokens a batch and hidden size 2048 (default.lua's grid at two lengths). About
-- 440 forward and 350 backward candidates a workload; a shorter bench than default.lua's (the
-- truth is every candidate once), then the best sixteen within 15 % timed four more times in
-- rotation: one timing moves by about 2.5 % on an H200 (notes/tuning.md, section 6), as much as
-- the best few kernels of a workload lie apart.
if device.cc ~= 90 then
  error("truth.lua sweeps the Hopper families: run it on an sm_90 GPU (this one is sm_" .. device.cc .. ")")
end

local shapes = grid{ dtype = "bf16", head_dim = {64, 128}, causal = {0, 1}, seqlen = {1024, 8192},
                     tokens = 16384, hidden = 2048 }
local bench = { warmup_ms = 5, rep_ms = 30, timeout_s = 5 }
local confirm = { top = 16, within = 0.15, rounds = 4 }

local spaces = {
  space{
    name = "fwd_truth",
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
    },
    workloads = shapes,
    bench = bench,
    confirm = confirm,
  },
  space{
    name = "bwd_truth",
    template = "bwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, DQ_MODE = "atomic" },
    params = {
      BLOCK_M = {64, 80, 96, 128},
      NUM_WARPS = {4, 8, 12},
      BLOCK_N = {64, 128},
      NUM_STAGES = {1, 2, 3},
      DQ_FIRST = {0, 1},
      DV_EARLY = {0, 1},
      DK_SS = {0, 1},
      L_EARLY = {0, 1},
      PERSISTENT = {0, 1},
      DQ_INIT = {0, 1},
    },
    workloads = shapes,
    bench = bench,
    confirm = confirm,
  },
}

return spaces
