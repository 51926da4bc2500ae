-- 02: reverse each block of 128 through shared memory.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("02_reverse.cu")
n = 512
a = cuda.arange(n, "i32")
out = cuda.zeros(n, "i32")
want = {}
for i = 0, n - 1 do want[i + 1] = (i // 128) * 128 + 127 - i % 128 end
function run()
  k[{n // 128, 128}](a, out)
  return hunt.check("out", out, want)
end
run()
