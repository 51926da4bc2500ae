-- 06: count keys per bucket of a hash (the CPU hashes in 64-bit, as the author thought C did).
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("06_hash.cu")
n = 256
keys = cuda.array(hunt.list(n, function(i) return i * 37 end), "i32")
counts = cuda.zeros(64, "i32")
want = hunt.list(64, function() return 0 end)
for i = 0, n - 1 do
  local b = (i * 37 * 2654435) % 64
  want[b + 1] = want[b + 1] + 1
end
function run()
  k[{1, 256}](keys, counts, n)
  return hunt.check("counts", counts, want)
end
run()
