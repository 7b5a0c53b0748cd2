-- Test fixture: lists shuffled with math.random, which every interpreter seeds with 1, so a load
-- in-process and in a child process enumerate the same candidates in the same order.
local function shuffled(list)
  for i = #list, 2, -1 do
    local j = math.random(i)
    list[i], list[j] = list[j], list[i]
  end
  return list
end
return {
  space{
    name = "shuffled",
    template = "fwd_mma",
    params = { BLOCK_M = shuffled{64, 128}, BLOCK_N = shuffled{32, 64, 128}, NUM_WARPS = shuffled{4, 8} },
    workloads = { { dtype = "bf16", head_dim = 64, seqlen = 1024, batch = 2, heads = 4 } },
  },
}
