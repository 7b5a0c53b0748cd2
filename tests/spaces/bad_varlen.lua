-- Test fixture: one sequence always fills its batch, so half a fill cannot be made.
return {
  space{
    name = "varlen",
    template = "fwd_mma",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 1, heads = 8, varlen = 0.5 } },
  },
}
