-- Drafts of a few rows, causal bottom-right, and one causal row, over a key/value cache (32 query
-- heads over 8, head dim 128): the shapes the decode lookup serves with decode winners tuned
-- without a mask (notes/tuning.md, section 16). Every configuration of default.lua's decode
-- family, two stages too (the built-in choice takes two), so that the built-in choice, the served
-- winner and the fastest are timed side by side.
-- Usage (a GPU machine): ONLY=decode_drafts bash dev/gpu/sweep.sh dev/gpu/decode-drafts.lua
local drafts = {
  grid{ dtype = "bf16", head_dim = 128, causal = 1, bottom_right = 1, seqlen_q = 4, seqlen_k = 8192,
        batch = {1, 8}, heads = 32, heads_k = 8 },
  grid{ dtype = "bf16", head_dim = 128, causal = 1, bottom_right = 1, seqlen_q = 1, seqlen_k = 4096,
        batch = {8}, heads = 32, heads_k = 8 },
}
local spaces = {
  space{
    name = "decode_drafts",
    template = "fwd_mma",
    fixed = { CAUSAL_SKIP = 1, PACK_GQA = 1 },
    params = {
      BLOCK_M = {16, 32, 64},
      NUM_WARPS = {1, 2, 4},
      BLOCK_N = {32, 64},
      NUM_STAGES = {2, 3},
      SPLITS = {4, 8, 16, 32},
    },
    where = function(p)
      if p.BLOCK_M ~= 16 * p.NUM_WARPS then
        return false, "a warp per 16 query rows"
      end
      return true
    end,
    workloads = drafts,
    bench = { warmup_ms = 5, rep_ms = 30, timeout_s = 10 },
  },
}
return spaces
