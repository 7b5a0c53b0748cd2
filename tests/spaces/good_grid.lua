-- Test fixture: grid{} building the FlashAttention papers' shapes, one with every option, and
-- grouped heads and the softcap, by grid and by a workload table; masks and variable-length
-- batches by workload tables; float32 with products rounded to TF32 by grid.
local paper = grid{
  dtype = "bf16", head_dim = {64, 128}, causal = 0,
  seqlen = pow2(512, 16384), tokens = 16384, hidden = 2048,
}
local cross = grid{
  dtype = {"f16"}, head_dim = 64, head_dim_v = {64, 128}, causal = {false, true},
  seqlen_q = 128, seqlen_k = {256, 512}, batch = {1, 2}, heads = 3,
}
local features = grid{
  dtype = "bf16", head_dim = 64, seqlen = 256, batch = 2, heads = 8, heads_k = {2, 8}, softcap = {false, true},
}
return {
  space{ name = "paper", template = "fwd_mma", workloads = paper },
  space{ name = "cross", template = "fwd_mma", workloads = { cross } },
  space{ name = "features", template = "bwd_mma",
         workloads = { features, { dtype = "f16", head_dim = 64, seqlen = 128, batch = 1, heads = 6, heads_k = 1,
                                   softcap = 1 },
                       { dtype = "bf16", head_dim = 64, seqlen = 100, batch = 2, heads = 4, causal = true,
                         sinks = true } } },
  space{ name = "sinks", template = "bwd_mma",
         workloads = grid{ dtype = "f16", head_dim = 64, seqlen = 128, batch = 1, heads = 2, softcap = {0, 1},
                           sinks = {false, true} } },
  space{ name = "splits", template = "bwd_wgmma",
         fixed = { BLOCK_M = 64, BLOCK_N = 128, NUM_WARPS = 12, NUM_STAGES = 2 }, params = { SPLITS = {1, 2} },
         workloads = { { dtype = "bf16", head_dim = 128, seqlen = 512, batch = 1, heads = 4 },
                       { dtype = "bf16", head_dim = 128, seqlen = 512, batch = 1, heads = 4, heads_k = 2 } } },
  space{ name = "tf32", template = "fwd_mma", fixed = { BLOCK_M = 64, BLOCK_N = 64, NUM_WARPS = 4, NUM_STAGES = 1 },
         workloads = grid{ dtype = "f32", head_dim = 64, seqlen = 256, batch = 1, heads = 2, sinks = {0, 1},
                           tf32 = {false, true} } },
  space{ name = "drafts", template = "fwd_mma", fixed = { BLOCK_M = 64, BLOCK_N = 64, NUM_WARPS = 4, NUM_STAGES = 2 },
         workloads = grid{ dtype = "bf16", head_dim = 128, causal = 1, bottom_right = true, seqlen_q = 16,
                           seqlen_k = {256, 1000}, batch = 2, heads = 8, heads_k = 2 } },
  space{ name = "kinds", template = "fwd_mma",
         workloads = {
           { dtype = "bf16", head_dim = 64, seqlen = 1000, batch = 2, heads = 4, window_left = 128, window_right = 64 },
           { dtype = "bf16", head_dim = 64, seqlen = 1000, batch = 2, heads = 4, causal = true, window_left = 256 },
           { dtype = "bf16", head_dim = 64, seqlen = 1000, batch = 2, heads = 4, window_right = 0 },
           { dtype = "bf16", head_dim = 64, seqlen_q = 100, seqlen_k = 1000, batch = 2, heads = 4, causal = 1,
             bottom_right = true },
           { dtype = "bf16", head_dim = 64, seqlen = 4096, batch = 16, heads = 4, causal = 1, varlen = 0.5 },
         } },
}
