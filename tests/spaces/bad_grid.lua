-- Test fixture: a grid whose token count is not a multiple of a sequence length.
local shapes = grid{
  dtype = "bf16", head_dim = 128, seqlen = {1024, 3000}, tokens = 16384, hidden = 2048,
}
return { space{ name = "grid", template = "fwd_mma", workloads = shapes } }
