-- Test fixture: where() backtracks in a string pattern (line 8): the wall-clock bound covers the
-- enumeration too, not only the file's own run.
return {
  space{
    name = "slow",
    template = "fwd_mma",
    where = function(p, dev)
      local found = string.rep("a", 3000):find(".-.-.-.-b")
      return true
    end,
    params = { BLOCK_N = {32, 64} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
