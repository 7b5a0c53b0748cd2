-- Test fixture: long but legitimate work in Lua (each step quick, the hook seeing it), as a large
-- space's enumeration is: the wall clock ends it, and the message must not blame a pattern.
local n = 0
for i = 1, 1e9 do n = n + #string.rep("x", 10000) end
return {}
