-- Test fixture: tf32 (products rounded to TF32) on a 16-bit workload, which has none to round.
return {
  space{
    name = "tf32",
    template = "fwd_mma",
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 8, tf32 = true } },
  },
}
