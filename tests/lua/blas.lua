-- blas.lua: cuda.blas.gemm against a CPU reference on shapes that are not square, with every
-- transpose, alpha and beta; and every bad argument with its message. On the backend without a
-- GPU (none) only the messages are checked.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local RUNS = cuda.backend() ~= "none"
-- two tests everywhere, three where kernels run, one more on the simulator, one without either
T.plan(2 + (RUNS and 3 or 1) + (cuda.backend() == "sim" and 1 or 0))

-- row-major reference: C = alpha op(A) op(B) + beta C
local function ref_gemm(A, B, C, m, n, k, o)
  o = o or {}
  local alpha, beta = o.alpha or 1, o.beta or 0
  local out = {}
  for i = 0, m - 1 do
    for j = 0, n - 1 do
      local s = 0
      for p = 0, k - 1 do
        local a = o.trans_a and A[p * m + i + 1] or A[i * k + p + 1]
        local b = o.trans_b and B[j * k + p + 1] or B[p * n + j + 1]
        s = s + a * b
      end
      out[i * n + j + 1] = alpha * s + beta * C[i * n + j + 1]
    end
  end
  return out
end

local function case(dt, m, n, k, o)
  local A, B, C = cuda.rand(m * k, dt, 1), cuda.rand(k * n, dt, 2), cuda.rand(m * n, dt, 3)
  local want = ref_gemm(A:tolist(), B:tolist(), C:tolist(), m, n, k, o)
  cuda.blas.gemm(A, B, C, m, n, k, o)
  local _, r = cuda.compare(C, want, {rtol = dt == "f32" and 1e-5 or 1e-12, atol = 1e-6})
  check(r.ok, string.format("%s %dx%dx%d %s: %s", dt, m, n, k, o and "opts" or "", tostring(r)))
end

if RUNS then
  test("gemm matches the CPU on non-square f32 and f64 shapes", function()
    for _, dt in ipairs({"f32", "f64"}) do
      case(dt, 37, 23, 19)
      case(dt, 1, 1, 1)
      case(dt, 5, 130, 2)
    end
  end)

  test("gemm honours trans_a, trans_b, alpha and beta", function()
    for _, ta in ipairs({false, true}) do
      for _, tb in ipairs({false, true}) do
        case("f32", 13, 7, 11, {trans_a = ta, trans_b = tb, alpha = 0.5, beta = -2})
        case("f64", 13, 7, 11, {trans_a = ta, trans_b = tb, alpha = 3, beta = 1})
      end
    end
  end)

  test("gemm returns c, and cuda.blas.info names the library", function()
    local a, b, c = cuda.ones(4), cuda.ones(4), cuda.array(4)
    checkeq(cuda.blas.gemm(a, b, c, 2, 2, 2), c)
    checkeq(c[3], 2.0)
    local info = cuda.blas.info()
    check(type(info.library) == "string" and info.library ~= "none", tostring(info.library))
  end)
end

if cuda.backend() == "sim" then
  test("on the simulator, cuda.time gives the modelled cuBLAS time, growing with the work", function()
    local info = cuda.blas.info()
    check(info.library:find("timed as cuBLAS on an H200", 1, true), info.library)
    check(info.model:find("bench/model/cublas.lua", 1, true), info.model)
    local function t(s)
      local a, b, c = cuda.array(s * s), cuda.array(s * s), cuda.array(s * s)
      return cuda.time(function() cuda.blas.gemm(a, b, c, s, s, s) end).median
    end
    local t64, t512 = t(64), t(512)
    checkeq(t(64), t64, "modelled time is deterministic")
    check(t512 > t64, string.format("512^3 (%g ms) should take longer than 64^3 (%g ms)", t512, t64))
  end)
end

test("bad arguments get clear messages", function()
  local a, b, c = cuda.array(6), cuda.array(6), cuda.array(4)
  checkerr("a is cuda.HostBuffer<f32>[6], a host buffer", cuda.blas.gemm, cuda.host(6), b, c, 2, 2, 3)
  checkerr("b is cuda.Array<i32>[6]; gemm multiplies f32 or f64", cuda.blas.gemm, a, cuda.array(6, "i32"), c, 2, 2, 3)
  checkerr("must have one dtype; they are f32, f64 and f32", cuda.blas.gemm, a, cuda.array(6, "f64"), c, 2, 2, 3)
  checkerr("a is cuda.Array<f32>[6], too small for a 2 x 4 matrix (8 elements)", cuda.blas.gemm, a, b, c, 2, 2, 4)
  checkerr("c is cuda.Array<f32>[4], too small for a 3 x 2 matrix", cuda.blas.gemm, cuda.array(9), b, c, 3, 2, 3)
  checkerr("k must be a whole number from 1 to 2147483647, not 0", cuda.blas.gemm, a, b, c, 2, 2, 0)
  checkerr("m must be a whole number from 1 to 2147483647, not -1", cuda.blas.gemm, a, b, c, -1, 2, 3)
  checkerr("n must be a whole number from 1 to 2147483647, not 4294967296", cuda.blas.gemm, a, b, c, 2, 1 << 32, 3)
  checkerr("number expected", cuda.blas.gemm, a, b, c, 2, "x", 3)
  checkerr("c shares memory with a or b", cuda.blas.gemm, a, b, a, 2, 2, 3)
  checkerr("option alpha must be a number", cuda.blas.gemm, a, b, c, 2, 2, 3, {alpha = "x"})
  checkerr("option beta must be a number", cuda.blas.gemm, a, b, c, 2, 2, 3, {beta = {}})
  checkerr("table expected", cuda.blas.gemm, a, b, c, 2, 2, 3, 5)
  local f = cuda.array(6)
  f:free()
  checkerr("freed", cuda.blas.gemm, f, b, c, 2, 2, 3)
  checkerr("a must be a cuda.Array or cuda.HostBuffer, got table", cuda.blas.gemm, {1, 2}, b, c, 1, 1, 1)
end)

test("an option whose metamethod frees an array is caught before the multiply", function()
  local a, b, c = cuda.array(4), cuda.array(4), cuda.array(4)
  local opts = setmetatable({}, {__index = function(_, key) if key == "beta" then c:free() end end})
  checkerr("freed", cuda.blas.gemm, a, b, c, 2, 2, 2, opts)
end)

if not RUNS then
  test("without a GPU or the simulator, gemm says what to do", function()
    checkerr('cuda.blas needs a GPU or the simulator; the none backend runs no kernels (cuda.use("sim")',
      cuda.blas.gemm, cuda.array(4), cuda.array(4), cuda.array(4), 2, 2, 2)
    checkeq(cuda.blas.info().library, "none")
  end)
end

return T.done()
