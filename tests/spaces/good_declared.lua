-- Test fixture: spaces declared with space{} and not returned; the second has no name.
local w = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } }
space{ name = "declared", template = "fwd_mma", workloads = w }
space{ template = "bwd_mma", workloads = w }
