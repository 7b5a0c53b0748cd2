-- Test fixture: sinks is a flag (true, false, 0 or 1), not a logit.
return {
  space{
    name = "sinks",
    template = "fwd_mma",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 8, sinks = 2 } },
  },
}
