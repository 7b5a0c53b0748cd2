-- Test fixture: a grid given both diagonals (bottom_right is one value for the whole grid).
local drafts = grid{
  dtype = "bf16", head_dim = 64, causal = 1, bottom_right = {false, true}, seqlen_q = 16, seqlen_k = 256,
  batch = 1, heads = 4,
}
return { space{ name = "drafts", template = "fwd_mma", workloads = drafts } }
