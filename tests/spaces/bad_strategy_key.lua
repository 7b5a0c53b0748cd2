-- Test fixture: a budget given to a strategy that takes none (prune times every candidate).
return {
  space{
    name = "budget",
    template = "fwd_mma",
    params = { BLOCK_M = {64, 128} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
    strategy = { kind = "prune", budget_s = 30 },
  },
}
