-- 17: the largest of the first 100 values (all below zero), with a block of 128.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("17_early_return.cu")
x = cuda.array(hunt.list(128, function(i) return -1 - i end), "f32")
out = cuda.zeros(1, "f32")
function run()
  k[{1, 128}](x, out, 100)
  return hunt.check("out", out, {-1})
end
run()
