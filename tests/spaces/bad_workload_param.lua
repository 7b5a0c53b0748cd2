-- Test fixture: DTYPE fixed in the space although each workload sets it.
return {
  space{
    name = "dtype",
    template = "fwd_mma",
    fixed = { DTYPE = "bf16" },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
