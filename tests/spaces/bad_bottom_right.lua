-- Test fixture: a bottom-right diagonal on equal lengths moves nothing.
return {
  space{
    name = "aligned",
    template = "fwd_mma",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 1, heads = 8, causal = true,
                    bottom_right = true } },
  },
}
