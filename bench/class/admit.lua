-- bench/class/admit.lua READY GO: one learner of bench/class/admit.sh. Joined to the class (the
-- admission ran at join), it makes an array, which makes the CUDA context on the backend the
-- class gave it, and says where it runs; it leaves a file in READY, then holds the session (and
-- its slot and context) until the FIFO GO opens, so that every session is alive at once.
local ready, go = arg[1], arg[2]
local ok, err = pcall(function() local a = cuda.array(1024); a:fill(1); cuda.sync() end)
print("backend: " .. cuda.backend())
if not ok then print("error: " .. tostring(err)) end
local f = io.open(ready .. "/" .. tostring(require("cudalab.class").whoami().uid), "w")
if f then f:close() end
local g = io.open(go, "r")
if g then g:read("a"); g:close() end
