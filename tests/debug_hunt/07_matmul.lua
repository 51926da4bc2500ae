-- 07: a tiled matrix product, 32 x 32.
local hunt = dofile("tests/debug_hunt/hunt.lua")
k = hunt.kernel("07_matmul.cu")
n = 32
A = cuda.array(hunt.list(n * n, function(i) return i % 7 end), "f32")
B = cuda.array(hunt.list(n * n, function(i) return (i // n) == (i % n) and 1 or 0 end), "f32")
B[1] = 2 -- not quite the identity, so that a swapped index shows
C = cuda.zeros(n * n, "f32")
want = {}
for r = 0, n - 1 do
  for c = 0, n - 1 do
    local s = 0
    for j = 0, n - 1 do s = s + A[r * n + j] * B[j * n + c] end
    want[r * n + c + 1] = s
  end
end
function run()
  k[{{2, 2}, {16, 16}}](A, B, C, n)
  return hunt.check("C", C, want, 1e-5)
end
run()
