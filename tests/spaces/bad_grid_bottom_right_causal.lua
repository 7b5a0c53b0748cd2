-- Test fixture: a grid with a bottom-right diagonal over workloads without a causal mask.
local drafts = grid{
  dtype = "bf16", head_dim = 64, causal = {0, 1}, bottom_right = true, seqlen_q = 16, seqlen_k = 256,
  batch = 1, heads = 4,
}
return { space{ name = "drafts", template = "fwd_mma", workloads = drafts } }
