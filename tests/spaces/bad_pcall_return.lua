-- Test fixture: pcall swallows a refused allocation and the file returns at once (line 3); a
-- spent budget fails the load all the same.
pcall(string.rep, "x", 1 << 30)
return {
  space{
    name = "after",
    template = "fwd_mma",
    params = { BLOCK_N = {32, 64} },
    workloads = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
