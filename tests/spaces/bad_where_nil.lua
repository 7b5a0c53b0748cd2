-- Test fixture: where() forgets to return (defined on line 7).
return {
  space{
    name = "silent",
    template = "fwd_mma",
    params = { BLOCK_N = {32, 64} },
    where = function(p, dev)
      local big = p.BLOCK_N > 32
    end,
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
