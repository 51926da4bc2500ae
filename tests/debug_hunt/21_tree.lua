-- 21: the sum of 0 .. 127 by a tree in shared memory.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("21_tree.cu")
x = cuda.arange(128, "i32")
out = cuda.zeros(1, "i32")
function run()
  k[{1, 128}](x, out)
  return hunt.check("out", out, {127 * 128 // 2})
end
run()
