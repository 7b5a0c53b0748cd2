-- Test fixture: DQ_MODE searched for a forward template, which has no such parameter.
return {
  space{
    name = "fwd dq",
    template = "fwd_mma",
    params = { DQ_MODE = {0, 1} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
