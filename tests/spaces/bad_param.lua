-- Test fixture: a parameter the templates do not have.
return {
  space{
    name = "unknown",
    template = "fwd_mma",
    params = { BLOCK_M = {64}, BLOCK_K = {32, 64} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
