-- Test fixture: a list written as a string.
local shapes = grid{ dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 }
return {
  space{
    name = "typed",
    template = "fwd_mma",
    params = { BLOCK_M = "64", BLOCK_N = {64} },
    workloads = shapes,
  },
}
