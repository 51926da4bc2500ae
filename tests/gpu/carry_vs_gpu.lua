-- carry_vs_gpu.lua: the carry chains and 128-bit arithmetic of tests/simulator/carry_chains.lua on
-- the GPU and on the simulator from the same operands: the GPU must give the CPU reference's
-- values (the reference of a subtraction's carry flag is what the simulator was mended to, so
-- the GPU is the judge of it), and the simulator the GPU's bits.
local T = dofile("tests/lua/testlib.lua")
T.plan(3)
local test, check = T.test, T.check
local C = dofile("tests/simulator/carry_chains_cases.lua")

-- run(module) -> host buffer of one kernel's results, on the GPU then on the simulator
local function both(run)
  local function on(be)
    return T.on(be, function() return run(cuda.module(C.KERNELS, { "--device-int128" })) end)
  end
  return on("cuda"), on("sim")
end

-- Index and values of the first elements where a and b differ (a few, in words).
local function differ(a, b, n, label)
  local bad = {}
  for i = 0, n - 1 do
    if a[i] ~= b[i] then
      bad[#bad + 1] = string.format("%s[%d]: %x against %x", label, i, a[i], b[i])
      if #bad == 4 then break end
    end
  end
  return bad
end

-- The GPU's n results g against the reference want, and the simulator's s against the GPU's.
local function verdict(g, s, want, n)
  local bad = differ(g, want, n, "GPU vs reference")
  for _, b in ipairs(differ(s, g, n, "simulator vs GPU")) do bad[#bad + 1] = b end
  check(#bad == 0, table.concat(bad, "; "))
end

test("unsigned 128-bit /, %, - and *: the GPU gives the reference, the simulator the GPU", function()
  local n = #C.PAIRS
  local g, s = both(function(m)
    local r = cuda.zeros(8 * n, "u64")
    m.u128[{ 1, 64 }](cuda.array(C.pairs_input("u64")), r, n)
    return r:host()
  end)
  local want = cuda.host(8 * n, "u64")
  for i, p in ipairs(C.PAIRS) do
    local q, rem = C.divmod128(p[1], p[2])
    for k, v in ipairs({ q, rem, C.sub128(p[1], p[2]), C.mul128(p[1], p[2]) }) do
      want[8 * (i - 1) + 2 * (k - 1)], want[8 * (i - 1) + 2 * (k - 1) + 1] = v[1], v[2]
    end
  end
  verdict(g, s, want, 8 * n)
end)

test("signed 128-bit / and %: the GPU gives the reference, the simulator the GPU", function()
  local n = #C.PAIRS
  local g, s = both(function(m)
    local r = cuda.zeros(4 * n, "i64")
    m.s128[{ 1, 64 }](cuda.array(C.pairs_input("i64")), r, n)
    return r:host()
  end)
  local want = cuda.host(4 * n, "i64")
  for i, p in ipairs(C.PAIRS) do
    local q, rem = C.sdivmod128(p[1], p[2])
    want[4 * (i - 1)], want[4 * (i - 1) + 1], want[4 * (i - 1) + 2], want[4 * (i - 1) + 3] =
      q[1], q[2], rem[1], rem[2]
  end
  verdict(g, s, want, 4 * n)
end)

test("add.cc, sub.cc, addc and subc mixed in one chain: the GPU's flag", function()
  local n = #C.QUADS
  local x = cuda.host(4 * n, "u32")
  for i, q in ipairs(C.QUADS) do for k = 1, 4 do x[4 * (i - 1) + k - 1] = q[k] end end
  local g, s = both(function(m)
    local r = cuda.zeros(8 * n, "u32")
    m.chains[{ 1, 64 }](cuda.array(x), r, n)
    return r:host()
  end)
  local want = cuda.host(8 * n, "u32")
  for i, q in ipairs(C.QUADS) do
    for k, v in ipairs(C.chains_want(q[1], q[2], q[3], q[4])) do want[8 * (i - 1) + k - 1] = v end
  end
  verdict(g, s, want, 8 * n)
end)

return T.done()
