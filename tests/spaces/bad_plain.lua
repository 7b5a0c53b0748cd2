-- Test fixture: a plain table (not space{}) with an error; reported at the return (line 3).
local w = { { dtype = "bf16", head_dim = 128, seqlen = 1024, batch = 2, heads = 4 } }
return { template = "fwd_mma", params = { NUM_STAGES = {1, 9.5} }, workloads = w }
