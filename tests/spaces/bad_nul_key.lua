-- Test fixture: a key with a NUL byte after a known one ("params\0"): it would pass the key check
-- and then be read by no one.
return {
  space{
    name = "nulkey",
    template = "fwd_mma",
    ["params\0"] = { BLOCK_M = {64} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
