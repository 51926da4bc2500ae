-- 22: a 16-bin histogram of 512 bytes.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("22_histogram.cu")
n = 512
data = cuda.array(hunt.list(n, function(i) return (i * 7) % 256 end), "u8")
bins = cuda.zeros(16, "i32")
want = hunt.list(16, function() return 0 end)
for i = 0, n - 1 do
  local b = ((i * 7) % 256) % 16
  want[b + 1] = want[b + 1] + 1
end
function run()
  k[{4, 128}](data, bins, n)
  return hunt.check("bins", bins, want)
end
run()
