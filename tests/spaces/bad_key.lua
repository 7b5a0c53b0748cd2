-- Test fixture: a misspelt key of the space ("param").
return {
  space{
    name = "key",
    template = "fwd_mma",
    param = { BLOCK_M = {64} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
