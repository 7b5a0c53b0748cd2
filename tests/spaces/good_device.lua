-- Test fixture: the device the caller described, as Lua sees it (an sm_86 GPU, 99 KiB per block).
assert(device.name == "Test GPU" and device.arch == "sm_86" and device.cc == 86 and
       device.cc_major == 8 and device.cc_minor == 6 and device.sm_count == 84 and
       device.smem_per_block == 101376 and device.real == true, "not the test GPU")
return space{
  name = "small smem",
  template = "fwd_mma",
  params = { BLOCK_M = {64, 128}, BLOCK_N = {32, 64, 128}, NUM_WARPS = {4, 8}, NUM_STAGES = {1, 2, 3, 4} },
  where = function(p, dev) return dev.sm_count == 84 end,
  workloads = { { dtype = "bf16", head_dim = 128, seqlen = 4096, batch = 1, heads = 8 } },
}
