-- Test fixture: grid{} building the FlashAttention papers' shapes, and one with every option.
local paper = grid{
  dtype = "bf16", head_dim = {64, 128}, causal = 0,
  seqlen = pow2(512, 16384), tokens = 16384, hidden = 2048,
}
local cross = grid{
  dtype = {"f16"}, head_dim = 64, head_dim_v = {64, 128}, causal = {false, true},
  seqlen_q = 128, seqlen_k = {256, 512}, batch = {1, 2}, heads = 3,
}
return {
  space{ name = "paper", template = "fwd_mma", workloads = paper },
  space{ name = "cross", template = "fwd_mma", workloads = { cross } },
}
