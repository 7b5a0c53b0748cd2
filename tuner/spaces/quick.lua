-- A sweep of a few minutes, to try the tuner end to end: one shape, causal and not, forward and
-- backward, a few candidates each (`flashtune tune` prints how many before it times them).

local shapes = grid{
  dtype = "bf16", head_dim = 128, causal = {0, 1},
  seqlen = 4096, tokens = 16384, hidden = 2048,
}

local bench = { warmup_ms = 10, rep_ms = 50, timeout_s = 10 }

return {
  space{
    name = "fwd quick",
    template = "fwd_mma",
    fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2 },
    params = { BLOCK_M = {64, 128}, BLOCK_N = {32, 64}, NUM_WARPS = {4, 8} },
    workloads = shapes,
    bench = bench,
  },
  space{
    name = "bwd quick",
    template = "bwd_mma",
    fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2, NUM_WARPS = 8, DQ_MODE = "atomic" },
    params = { BLOCK_M = {32, 64}, BLOCK_N = {64, 128} },
    workloads = shapes,
    bench = bench,
  },
}
