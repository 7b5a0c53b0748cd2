-- Test fixture: every configuration is refused, by the template's rules or by where().
return {
  space{
    name = "empty",
    template = "fwd_mma",
    params = { BLOCK_M = {64}, NUM_WARPS = {4, 8} },
    where = function(p) return false, "nothing suits" end,
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
