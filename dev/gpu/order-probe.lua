-- A probe, not a sweep: the sweep's harness on the product orders of bwd_wgmma's d128 tile
-- (notes/kernels.md, "the order of a tile's products"), to compare with bench_kernels' "order" rows.
-- dev/gpu/order-probe.sh runs it with the values listed both ways and a long timing window.
local shapes = grid{
  dtype = "bf16", head_dim = 128, causal = {0, 1},
  seqlen = 4096, tokens = 16384, hidden = 2048,
}
return {
  space{
    name = "bwd order probe",
    template = "bwd_wgmma",
    fixed = { CAUSAL_SKIP = 1, DQ_MODE = "atomic", DK_SS = 0, BLOCK_M = 64, NUM_WARPS = 12, BLOCK_N = 128,
              NUM_STAGES = 2 },
    params = { DQ_FIRST = {0, 1}, DV_EARLY = {0, 1} },
    where = function(p)
      if p.DV_EARLY == 1 and p.DQ_FIRST == 0 then
        return false, "DV_EARLY only beside DQ_FIRST"
      end
      return true
    end,
    workloads = shapes,
    bench = { warmup_ms = 50, rep_ms = 400, timeout_s = 20 },
  },
}
