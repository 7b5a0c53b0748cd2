-- Test fixture: where() indexes a parameter that does not exist (line 8).
return {
  space{
    name = "thrower",
    template = "fwd_mma",
    params = { BLOCK_N = {32, 64} },
    where = function(p, dev)
      return p.BLOK_N > 32
    end,
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
