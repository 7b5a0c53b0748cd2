-- Test fixture: a string pattern that backtracks for ages inside C, where the instruction hook
-- never runs (line 4): only the wall-clock bound ends it.
local s = string.rep("a", 3000)
s:find(".-.-.-.-b")
return {}
