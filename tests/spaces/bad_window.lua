-- Test fixture: a causal mask with keys right of the diagonal.
return {
  space{
    name = "window",
    template = "fwd_mma",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 1, heads = 8, causal = true,
                    window_left = 64, window_right = 8 } },
  },
}
