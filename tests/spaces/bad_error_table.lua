-- Test fixture: an error raised with a table value (line 3), which has no position of its own.
local why = { reason = "no" }
error(why)
