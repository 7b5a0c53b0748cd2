-- Test fixture: an f32 workload for a template of f16 and bf16 only.
return {
  space{
    name = "f32 on the Hopper backward",
    template = "bwd_wgmma",
    workloads = { { dtype = "f32", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
