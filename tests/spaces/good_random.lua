-- Test fixture: the same space exhaustive, sampled with two seeds, and with each strategy that cuts.
local function make(name, strategy)
  return space{
    name = name,
    template = "bwd_mma",
    params = { BLOCK_M = {32, 64}, BLOCK_N = {64, 128}, NUM_WARPS = {4, 8}, NUM_STAGES = {1, 2},
               DQ_MODE = {"atomic", "separate"} },
    workloads = grid{ dtype = "f16", head_dim = 64, causal = {0, 1}, seqlen = 2048, batch = 2, heads = 8 },
    strategy = strategy,
  }
end
return {
  make("all", "exhaustive"),
  make("seed 3", { kind = "random", n = 5, seed = 3 }),
  make("seed 4", { kind = "random", n = 5, seed = 4 }),
  make("pruned", { kind = "prune", keep = 0.5, warmup_ms = 2, rep_ms = 8 }),
  make("halving", { kind = "halving", budget_s = 30, seed = 9 }),
  make("guided", { kind = "guided", keep = 0.3, budget_s = 2.5 }),
}
