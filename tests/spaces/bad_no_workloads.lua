-- Test fixture: a space with nothing to tune for.
return {
  space{
    name = "idle",
    template = "bwd_mma",
    params = { BLOCK_N = {64, 128} },
  },
}
