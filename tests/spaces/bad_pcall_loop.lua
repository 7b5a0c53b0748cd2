-- Test fixture: pcall catches the instruction limit's error and the outer loop goes on; the budget
-- runs out in spin() (line 3).
local function spin() while true do end end
while true do pcall(spin) end
