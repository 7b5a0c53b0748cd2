-- Test fixture: skip() called while the file runs, not inside where().
local w = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } }
skip("too early")
return { space{ name = "early", template = "fwd_mma", workloads = w } }
