-- Test fixture: a value that is not one.
return {
  space{
    name = "value",
    template = "fwd_mma",
    params = { BLOCK_N = {64, "wide"} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
