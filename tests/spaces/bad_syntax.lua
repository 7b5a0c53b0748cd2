-- Test fixture: a syntax error (a missing comma) on line 5.
return {
  space{
    name = "broken"
    template = "fwd_mma",
  },
}
