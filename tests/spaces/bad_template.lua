-- Test fixture: a template that does not exist.
return {
  space{
    name = "typo",
    template = "fwd_mmx",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
