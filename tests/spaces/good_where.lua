-- Test fixture: where() refusing by returning false and by skip(), with reasons.
return {
  space{
    name = "filtered",
    template = "fwd_mma",
    params = { BLOCK_M = {64, 128}, BLOCK_N = {32, 64, 128}, NUM_WARPS = {4, 8}, NUM_STAGES = {1, 2} },
    where = function(p, dev, w)
      if p.BLOCK_N == 128 then return false, "no wide key tiles" end
      if smem_bytes(p) > 40000 then skip("over 40000 bytes") end
      assert(w.head_dim == p.HEAD_DIM and w.dtype == p.dtype and p.template == "fwd_mma")
      return true
    end,
    workloads = { { dtype = "bf16", head_dim = 64, seqlen_q = 1000, seqlen_k = 2048, batch = 2, heads = 4 } },
  },
}
