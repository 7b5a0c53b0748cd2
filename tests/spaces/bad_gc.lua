-- Test fixture: a __gc finalizer, which Lua runs with hooks off (line 3).
local t = {}
setmetatable(t, { __gc = function() while true do end end })
return {}
