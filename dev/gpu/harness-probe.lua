-- A probe, not a sweep: the sweep's harness on the H200's forward winners at head dims 96 and 128,
-- N 4096 (128 x 128 tiles, two consumers, OVERLAP, two stages), persistent and not, to set beside
-- dev/gpu/forward-probe.py's reading of the same kernels through the Python package and
-- triton.testing.do_bench (compare.py's harness read them 5-16 % slower than the sweep's
-- stored medians at some of these shapes; notes/tuning.md).
local shapes = grid{
  dtype = "bf16", head_dim = {96, 128}, causal = {0, 1},
  seqlen = 4096, tokens = 16384, heads = {16},
}
return {
  space{
    name = "forward harness probe",
    template = "fwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, BLOCK_M = 128, BLOCK_N = 128, NUM_WARPS = 12, NUM_STAGES = 2, OVERLAP = 1,
              PINGPONG = 0 },
    params = { PERSISTENT = {0, 1} },
    workloads = shapes,
  },
}
