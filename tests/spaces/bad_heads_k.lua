-- Test fixture: key/value heads that do not divide the query heads.
return {
  space{
    name = "gqa",
    template = "fwd_mma",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 8, heads_k = 3 } },
  },
}
