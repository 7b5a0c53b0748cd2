-- Test fixture: a template name with a NUL byte after it (C would read "fwd_mma" alone).
return {
  space{
    name = "nul",
    template = "fwd_mma\0junk",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
