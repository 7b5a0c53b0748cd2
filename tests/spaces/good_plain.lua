-- Test fixture: plain tables (no space{}), in a list of lists, and the list helpers.
assert(#range(1, 10, 3) == 4 and range(1, 10, 3)[4] == 10 and #range(5, 1) == 0)
local p = pow2(16, 128)
assert(#p == 4 and p[1] == 16 and p[4] == 128)
assert(not pcall(pow2, 48, 128), "pow2 must refuse a start that is not a power of two")
assert(smem_bytes({ BLOCK_M = 64, BLOCK_N = 64, HEAD_DIM = 64, HEAD_DIM_V = 64, NUM_STAGES = 1 }, "fwd_mma")
       == (64 * 64 + 64 * 128) * 2)
local w = { { dtype = "f32", head_dim = 64, seqlen = 512, batch = 1, heads = 2, causal = true } }
return {
  { template = "fwd_exact", params = { BLOCK_M = {32, 64}, BLOCK_N = {32} }, workloads = w },
  { { name = "inner", template = "bwd_exact", fixed = { DQ_MODE = "separate" }, workloads = w } },
}
