-- Test fixture: a space file may not reach the system.
local out = io.popen("true")
return {}
