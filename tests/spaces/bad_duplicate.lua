-- Test fixture: two spaces with the same name.
local w = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } }
return {
  space{ name = "twin", template = "fwd_mma", workloads = w },
  space{ name = "twin", template = "fwd_mma", workloads = w },
}
