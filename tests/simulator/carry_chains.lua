-- carry_chains.lua: the carry flag of add.cc, sub.cc, addc and subc, and the 128-bit integer
-- arithmetic NVRTC builds from them, against a CPU reference. The GPU keeps one carry flag for
-- additions and subtractions (a subtraction is a + ~b + carry-in, and its flag is set when nothing
-- was borrowed), which only a chain that mixes the two shows: NVRTC's 128-bit division is one.
-- tests/gpu/carry_vs_gpu.lua compares the same kernels with the GPU.
local T = dofile("tests/lua/testlib.lua")
T.plan(4)
local test, check = T.test, T.check

local C = dofile("tests/simulator/carry_chains_cases.lua")
local M32, PAIRS, KERNELS = C.M32, C.PAIRS, C.KERNELS
local divmod128, sdivmod128, sub128, mul128 = C.divmod128, C.sdivmod128, C.sub128, C.mul128
local pairs_input, hex, chains_want = C.pairs_input, C.hex, C.chains_want

test("unsigned 128-bit division, remainder, difference and product: the exact values", function()
  local m, n = cuda.module(KERNELS, { "--device-int128" }), #PAIRS
  local r = cuda.zeros(8 * n, "u64")
  m.u128[{ 1, 64 }](cuda.array(pairs_input("u64")), r, n)
  local got, bad = r:host(), {}
  for i, p in ipairs(PAIRS) do
    local q, rem = divmod128(p[1], p[2])
    local want = { q, rem, sub128(p[1], p[2]), mul128(p[1], p[2]) }
    for k, name in ipairs({ "/", "%", "-", "*" }) do
      local g = { got[8 * (i - 1) + 2 * (k - 1)], got[8 * (i - 1) + 2 * (k - 1) + 1] }
      if g[1] ~= want[k][1] or g[2] ~= want[k][2] then
        bad[#bad + 1] = string.format("%s %s %s = %s, want %s", hex(p[1]), name, hex(p[2]), hex(g), hex(want[k]))
      end
    end
  end
  check(#bad == 0, #bad .. " wrong: " .. table.concat(bad, "; ", 1, math.min(#bad, 4)))
end)

test("signed 128-bit division and remainder: C's truncation, the exact values", function()
  local m, n = cuda.module(KERNELS, { "--device-int128" }), #PAIRS
  local r = cuda.zeros(4 * n, "i64")
  m.s128[{ 1, 64 }](cuda.array(pairs_input("i64")), r, n)
  local got, bad = r:host(), {}
  for i, p in ipairs(PAIRS) do
    local q, rem = sdivmod128(p[1], p[2])
    for k, want in ipairs({ q, rem }) do
      local g = { got[4 * (i - 1) + 2 * (k - 1)], got[4 * (i - 1) + 2 * (k - 1) + 1] }
      if g[1] ~= want[1] or g[2] ~= want[2] then
        bad[#bad + 1] = string.format("%s %s %s = %s, want %s", hex(p[1]), k == 1 and "/" or "%",
          hex(p[2]), hex(g), hex(want))
      end
    end
  end
  check(#bad == 0, #bad .. " wrong: " .. table.concat(bad, "; ", 1, math.min(#bad, 4)))
end)

test("add.cc, sub.cc, addc and subc mixed in one chain: one carry flag, a subtraction's set " ..
  "when nothing was borrowed", function()
  local quads = C.QUADS
  local n = #quads
  local x = cuda.host(4 * n, "u32")
  for i, q in ipairs(quads) do for k = 1, 4 do x[4 * (i - 1) + k - 1] = q[k] end end
  local r = cuda.zeros(8 * n, "u32")
  cuda.module(KERNELS, { "--device-int128" }).chains[{ 1, 64 }](cuda.array(x), r, n)
  local got, bad = r:host(), {}
  for i, q in ipairs(quads) do
    local want = chains_want(q[1], q[2], q[3], q[4])
    for k = 1, 8 do
      local g = got[8 * (i - 1) + k - 1]
      if g ~= want[k] then
        bad[#bad + 1] = string.format("chain %d on %08x %08x %08x %08x: %08x, want %08x", k,
          q[1], q[2], q[3], q[4], g, want[k])
      end
    end
  end
  check(#bad == 0, #bad .. " wrong: " .. table.concat(bad, "; ", 1, math.min(#bad, 4)))
end)

test("subc after a carry-free add.cc: 0 - 0 with the flag clear is 0xffffffff", function()
  local k = cuda.kernel([[__global__ void t(unsigned *o) {
    unsigned r, s;
    asm("add.cc.u32 %0, 0, 0;\n\tsubc.u32 %1, 0, 0;" : "=r"(s), "=r"(r));
    o[0] = r; o[1] = s; }]])
  local o = cuda.zeros(2, "u32")
  k[{ 1, 1 }](o)
  check(o[0] == M32 and o[1] == 0, string.format("%08x %08x", o[0], o[1]))
end)

return T.done()
