-- Test fixture: pcall catches the memory limit's error, in an endless loop; the budget runs out
-- in grow() (line 4).
local kept = {}
local function grow() kept[#kept + 1] = string.rep("x", 1 << 20) .. #kept end
while true do pcall(grow) end
