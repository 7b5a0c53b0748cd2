-- Test fixture: a file that declares no space and returns nothing (line 3).
local unused = 1
return nil
