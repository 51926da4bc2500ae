-- contract_cases.lua: the kernels that pin down what ptxas does where PTX leaves it free
-- (sim/sim_contract.c): which products and divisions it contracts into the adds that use them,
-- and which instructions of constants it evaluates itself. Shared by tests/simulator/contract.lua
-- (each case against an explicit reference, on the simulator) and tests/gpu/contract_vs_gpu.lua
-- (each case on the GPU against the simulator, bit for bit).
--
-- A case is inline PTX in one of the templates below, with %1, %2, %3 the per-thread inputs
-- x, y, z, %4 a kernel parameter k (never a constant to ptxas) and scratch registers t u v w p:
--   body  the PTX under test, as a learner's kernel would reach ptxas;
--   ref   the same computation spelt out with nothing left to ptxas (fma.rn, mul.rn, add.rn):
--         what the GPU gives, read off ptxas's SASS;
--   alt   the other reading (run as written, or contracted where ptxas does not): the reference
--         must differ from it on some inputs, or the case could not fail;
--   k     the value of %4 (default 0).
local M = {}

local function bits(v) return string.unpack("<I4", string.pack("<f", v)) end
-- PTX's spelling of the f32 nearest to v.
local function imm(v) return string.format("0f%08X", bits(v)) end
M.imm = imm

M.templates = {
  f32 = {ctype = "float", con = "f", reg = ".f32", dtype = "f32"},
  f64 = {ctype = "double", con = "d", reg = ".f64", dtype = "f64"},
  f16 = {ctype = "unsigned short", con = "h", reg = ".b16", dtype = "u16"}, -- f16 and bf16 bits
}

function M.source(template, bodies)
  local tp = M.templates[template]
  local out = {}
  for name, body in pairs(bodies) do
    out[#out + 1] = string.format([[
extern "C" __global__ void %s(const %s *x, const %s *y, const %s *z, %s *d, %s k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  %s r;
  asm volatile("{ .reg %s t, u, v, w; .reg .pred p; %s }"
               : "=%s"(r) : "%s"(x[i]), "%s"(y[i]), "%s"(z[i]), "%s"(k));
  d[i] = r;
}
]], name, tp.ctype, tp.ctype, tp.ctype, tp.ctype, tp.ctype, tp.ctype, tp.reg, body, tp.con, tp.con,
      tp.con, tp.con, tp.con)
  end
  return table.concat(out)
end

local FMA = "fma.rn.f32 %0, %1, %2, %3;"
local SEPARATE = "mul.rn.f32 t, %1, %2; add.rn.f32 %0, t, %3;"
-- RN(1/33) and RN(1/61) differ from the special-function unit's reciprocals (0x3cf83e0f and
-- 0x3c864b8b), so a folded division tells itself apart from one by the unit.
local R33, R61 = "0f3CF83E10", "0f3C864B8A"

M.cases = {
  -- products and sums in f32
  {name = "mul then add: one fma", body = "mul.f32 t, %1, %2; add.f32 %0, t, %3;", ref = FMA, alt = SEPARATE},
  {name = "add with the product second", body = "mul.f32 t, %1, %2; add.f32 %0, %3, t;", ref = FMA, alt = SEPARATE},
  {name = "product minus x: the addend negated", body = "mul.f32 t, %1, %2; sub.f32 %0, t, %3;",
   ref = "neg.f32 u, %3; fma.rn.f32 %0, %1, %2, u;", alt = "mul.rn.f32 t, %1, %2; sub.rn.f32 %0, t, %3;"},
  {name = "x minus product: the product negated", body = "mul.f32 t, %1, %2; sub.f32 %0, %3, t;",
   ref = "neg.f32 u, %1; fma.rn.f32 %0, u, %2, %3;", alt = "mul.rn.f32 t, %1, %2; sub.rn.f32 %0, %3, t;"},
  {name = "add.rn: not contracted", body = "mul.f32 t, %1, %2; add.rn.f32 %0, t, %3;", ref = SEPARATE, alt = FMA},
  {name = "mul.rn: not contracted", body = "mul.rn.f32 t, %1, %2; add.f32 %0, t, %3;", ref = SEPARATE, alt = FMA},
  {name = "two adds use the product: both contracted",
   body = "mul.f32 t, %1, %2; add.f32 u, t, %3; add.f32 w, t, %1; mul.rn.f32 %0, u, w;",
   ref = "fma.rn.f32 u, %1, %2, %3; fma.rn.f32 w, %1, %2, %1; mul.rn.f32 %0, u, w;",
   alt = "mul.rn.f32 t, %1, %2; add.rn.f32 u, t, %3; add.rn.f32 w, t, %1; mul.rn.f32 %0, u, w;"},
  {name = "the product also used by a mul: not contracted",
   body = "mul.f32 t, %1, %2; add.f32 u, t, %3; mul.rn.f32 %0, u, t;",
   ref = "mul.rn.f32 t, %1, %2; add.rn.f32 u, t, %3; mul.rn.f32 %0, u, t;",
   alt = "mul.rn.f32 t, %1, %2; fma.rn.f32 u, %1, %2, %3; mul.rn.f32 %0, u, t;"},
  {name = "mul.ftz then add: not contracted (.ftz differs)", body = "mul.ftz.f32 t, %1, %2; add.f32 %0, t, %3;",
   ref = SEPARATE, alt = FMA},
  {name = "mul.ftz then add.ftz: fma.ftz", body = "mul.ftz.f32 t, %1, %2; add.ftz.f32 %0, t, %3;",
   ref = "fma.rn.ftz.f32 %0, %1, %2, %3;", alt = "mul.rn.ftz.f32 t, %1, %2; add.rn.ftz.f32 %0, t, %3;"},
  {name = "add.sat: fma.sat", body = "mul.f32 t, %1, %2; add.sat.f32 %0, t, %3;",
   ref = "fma.rn.sat.f32 %0, %1, %2, %3;", alt = "mul.rn.f32 t, %1, %2; add.rn.sat.f32 %0, t, %3;"},
  {name = "mul.sat: not contracted", body = "mul.sat.f32 t, %1, %2; add.f32 %0, t, %3;",
   ref = "mul.rn.sat.f32 t, %1, %2; add.rn.f32 %0, t, %3;", alt = "mul.rn.sat.f32 t, %1, %2; fma.rn.f32 %0, %1, %2, %3;"},
  {name = "sum of two products: the first is contracted",
   body = "mul.f32 t, %1, %2; mul.f32 u, %3, %1; add.f32 %0, u, t;",
   ref = "mul.rn.f32 t, %1, %2; fma.rn.f32 %0, %3, %1, t;", alt = "mul.rn.f32 u, %3, %1; fma.rn.f32 %0, %1, %2, u;"},
  {name = "difference of two products: the first is contracted",
   body = "mul.f32 t, %1, %2; mul.f32 u, %3, %1; sub.f32 %0, t, u;",
   ref = "mul.rn.f32 u, %3, %1; neg.f32 u, u; fma.rn.f32 %0, %1, %2, u;",
   alt = "mul.rn.f32 t, %1, %2; neg.f32 v, %3; fma.rn.f32 %0, v, %1, t;"},
  {name = "the add in another basic block: not contracted",
   body = "mul.f32 t, %1, %2; mov.f32 u, %1; setp.gt.f32 p, %3, 0f00000000; @!p bra L1; add.f32 u, t, %3; L1: mov.f32 %0, u;",
   ref = "mul.rn.f32 t, %1, %2; mov.f32 u, %1; setp.gt.f32 p, %3, 0f00000000; @!p bra L1; add.rn.f32 u, t, %3; L1: mov.f32 %0, u;",
   alt = "mov.f32 u, %1; setp.gt.f32 p, %3, 0f00000000; @!p bra L1; fma.rn.f32 u, %1, %2, %3; L1: mov.f32 %0, u;"},
  {name = "a guarded add: contracted under its guard",
   body = "mul.f32 t, %1, %2; mov.f32 u, %1; setp.gt.f32 p, %3, 0f00000000; @p add.f32 u, t, %3; mov.f32 %0, u;",
   ref = "mov.f32 u, %1; setp.gt.f32 p, %3, 0f00000000; @p fma.rn.f32 u, %1, %2, %3; mov.f32 %0, u;",
   alt = "mul.rn.f32 t, %1, %2; mov.f32 u, %1; setp.gt.f32 p, %3, 0f00000000; @p add.rn.f32 u, t, %3; mov.f32 %0, u;"},
  {name = "bar.sync between mul and add: contracted", body = "mul.f32 t, %1, %2; bar.sync 0; add.f32 %0, t, %3;",
   ref = FMA, alt = SEPARATE},
  {name = "the product's register reused after the add: contracted",
   body = "mul.f32 t, %1, %2; add.f32 u, t, %3; mul.f32 t, %3, %3; add.f32 w, t, %1; mul.rn.f32 %0, u, w;",
   ref = "fma.rn.f32 u, %1, %2, %3; fma.rn.f32 w, %3, %3, %1; mul.rn.f32 %0, u, w;",
   alt = "mul.rn.f32 t, %1, %2; add.rn.f32 u, t, %3; mul.rn.f32 t, %3, %3; add.rn.f32 w, t, %1; mul.rn.f32 %0, u, w;"},
  -- what ptxas expands with branches of its own (div.rn.f32: a slow path through a subroutine)
  -- or keeps as a fence splits the block: NVIDIA's BlackScholes sample hits the first
  {name = "a div.rn between the mul and the add: not contracted",
   body = "mul.f32 t, %1, %2; div.rn.f32 w, %3, %4; add.f32 u, t, %3; mul.rn.f32 %0, u, w;",
   ref = "mul.rn.f32 t, %1, %2; div.rn.f32 w, %3, %4; add.rn.f32 u, t, %3; mul.rn.f32 %0, u, w;",
   alt = "div.rn.f32 w, %3, %4; fma.rn.f32 u, %1, %2, %3; mul.rn.f32 %0, u, w;", k = 3},
  {name = "a fence between the mul and the add: not contracted",
   body = "mul.f32 t, %1, %2; fence.sc.gpu; add.f32 %0, t, %3;", ref = SEPARATE, alt = FMA},
  {name = "two products, a div.rn after the first: the second is contracted",
   body = "mul.f32 t, %1, %2; div.rn.f32 w, %3, %4; mul.f32 u, %3, %1; sub.f32 v, t, u; mul.rn.f32 %0, v, w;",
   ref = "mul.rn.f32 t, %1, %2; div.rn.f32 w, %3, %4; neg.f32 u, %3; fma.rn.f32 v, u, %1, t; mul.rn.f32 %0, v, w;",
   alt = "mul.rn.f32 u, %3, %1; div.rn.f32 w, %3, %4; neg.f32 u, u; fma.rn.f32 v, %1, %2, u; mul.rn.f32 %0, v, w;",
   k = 3},
  -- div.approx and div.full
  {name = "div.approx.ftz then add.ftz: MUFU.RCP and one fma", body = "div.approx.ftz.f32 t, %1, %2; add.ftz.f32 %0, t, %3;",
   ref = "rcp.approx.ftz.f32 t, %2; fma.rn.ftz.f32 %0, %1, t, %3;",
   alt = "rcp.approx.ftz.f32 t, %2; mul.rn.ftz.f32 u, %1, t; add.rn.ftz.f32 %0, u, %3;"},
  {name = "div.approx then add", body = "div.approx.f32 t, %1, %2; add.f32 %0, t, %3;",
   ref = "rcp.approx.ftz.f32 t, %2; fma.rn.f32 %0, %1, t, %3;",
   alt = "rcp.approx.ftz.f32 t, %2; mul.rn.f32 u, %1, t; add.rn.f32 %0, u, %3;"},
  {name = "div.full.ftz then sub.ftz", body = "div.full.ftz.f32 t, %1, %2; sub.ftz.f32 %0, %3, t;",
   ref = "rcp.approx.ftz.f32 t, %2; neg.f32 u, %1; fma.rn.ftz.f32 %0, u, t, %3;",
   alt = "rcp.approx.ftz.f32 t, %2; mul.rn.ftz.f32 u, %1, t; sub.rn.ftz.f32 %0, %3, u;"},
  {name = "div.approx.ftz then add (.ftz differs): not contracted", body = "div.approx.ftz.f32 t, %1, %2; add.f32 %0, t, %3;",
   ref = "rcp.approx.ftz.f32 t, %2; mul.rn.ftz.f32 u, %1, t; add.rn.f32 %0, u, %3;",
   alt = "rcp.approx.ftz.f32 t, %2; fma.rn.f32 %0, %1, t, %3;"},
  {name = "division also used by a mul: not contracted",
   body = "div.approx.ftz.f32 t, %1, %2; add.ftz.f32 u, t, %3; mul.rn.f32 %0, u, t;",
   ref = "rcp.approx.ftz.f32 v, %2; mul.rn.ftz.f32 t, %1, v; add.rn.ftz.f32 u, t, %3; mul.rn.f32 %0, u, t;",
   alt = "rcp.approx.ftz.f32 v, %2; mul.rn.ftz.f32 t, %1, v; fma.rn.ftz.f32 u, %1, v, %3; mul.rn.f32 %0, u, t;"},
  -- constants
  {name = "division by the constant 33: times RN(1/33)", body = "div.approx.ftz.f32 %0, %1, 0f42040000;",
   ref = "mul.rn.ftz.f32 %0, %1, " .. R33 .. ";", alt = "div.approx.ftz.f32 %0, %1, %4;", k = 33},
  {name = "division by a register holding 33", body = "mov.f32 u, 0f42040000; div.approx.f32 %0, %1, u;",
   ref = "mul.rn.f32 %0, %1, " .. R33 .. ";", alt = "div.approx.f32 %0, %1, %4;", k = 33},
  {name = "division by a register set to 33 or 34: the unit's reciprocal",
   body = "mov.f32 u, 0f42040000; setp.gt.f32 p, %3, 0f00000000; @p mov.f32 u, 0f42080000; div.approx.f32 %0, %1, u;",
   ref = "mov.f32 u, %4; setp.gt.f32 p, %3, 0f00000000; @p mov.f32 u, 0f42080000; div.approx.f32 %0, %1, u;",
   alt = "mul.rn.f32 %0, %1, " .. R33 .. ";", k = 33},
  {name = "division by a register set to 33 on both paths: times RN(1/33)",
   body = "mov.f32 u, 0f42040000; setp.gt.f32 p, %3, 0f00000000; @p mov.f32 u, 0f42040000; div.approx.f32 %0, %1, u;",
   ref = "mul.rn.f32 %0, %1, " .. R33 .. ";", alt = "div.approx.f32 %0, %1, %4;", k = 33},
  {name = "division by the constant 61, then add: fma with RN(1/61)",
   body = "div.approx.ftz.f32 t, %1, 0f42740000; add.ftz.f32 %0, t, %3;",
   ref = "fma.rn.ftz.f32 %0, %1, " .. R61 .. ", %3;", alt = "div.approx.ftz.f32 t, %1, %4; add.ftz.f32 %0, t, %3;", k = 61},
  {name = "div.full by the constant 33", body = "div.full.f32 %0, %1, 0f42040000;",
   ref = "mul.rn.f32 %0, %1, " .. R33 .. ";", alt = "div.full.f32 %0, %1, %4;", k = 33},
  {name = "rcp.approx of 33: RN(1/33)", body = "rcp.approx.ftz.f32 %0, 0f42040000;",
   ref = "mov.f32 %0, " .. R33 .. ";", alt = "rcp.approx.ftz.f32 %0, %4;", k = 33},
  {name = "ex2.approx of -0.5: RN(2^-0.5)", body = "mov.f32 u, " .. imm(-0.5) .. "; ex2.approx.ftz.f32 %0, u;",
   ref = "mov.f32 %0, " .. imm(2 ^ -0.5) .. ";",
   alt = "ex2.approx.ftz.f32 %0, %4;", k = -0.5},
  {name = "ex2.approx of a constant computed from constants: folded too",
   body = "mov.f32 u, 0f3F000000; mul.f32 v, u, 0fBF800000; ex2.approx.ftz.f32 %0, v;",
   ref = "mov.f32 %0, " .. imm(2 ^ -0.5) .. ";", alt = "ex2.approx.ftz.f32 %0, %4;", k = -0.5},
  {name = "a product of constants then add: folded, not contracted",
   body = "mov.f32 u, 0f40400000; mul.f32 t, u, 0f3DCCCCCD; add.f32 %0, t, %3;",
   ref = "add.rn.f32 %0, %3, " .. imm(3 * string.unpack("<f", string.pack("<f", 0.1))) .. ";",
   alt = "fma.rn.f32 %0, %4, 0f3DCCCCCD, %3;", k = 3},
}

-- f64 and 16-bit floats: the same contraction (DFMA, HFMA2).
M.cases64 = {
  {name = "f64: mul then add: one fma", body = "mul.f64 t, %1, %2; add.f64 %0, t, %3;",
   ref = "fma.rn.f64 %0, %1, %2, %3;", alt = "mul.rn.f64 t, %1, %2; add.rn.f64 %0, t, %3;"},
  {name = "f64: x minus product", body = "mul.f64 t, %1, %2; sub.f64 %0, %3, t;",
   ref = "neg.f64 u, %1; fma.rn.f64 %0, u, %2, %3;", alt = "mul.rn.f64 t, %1, %2; sub.rn.f64 %0, %3, t;"},
  {name = "f64: mul.rn: not contracted", body = "mul.rn.f64 t, %1, %2; add.f64 %0, t, %3;",
   ref = "mul.rn.f64 t, %1, %2; add.rn.f64 %0, t, %3;", alt = "fma.rn.f64 %0, %1, %2, %3;"},
}
M.cases16 = {
  {name = "f16: mul then add: one fma", body = "mul.f16 t, %1, %2; add.f16 %0, t, %3;",
   ref = "fma.rn.f16 %0, %1, %2, %3;", alt = "mul.rn.f16 t, %1, %2; add.rn.f16 %0, t, %3;"},
  {name = "f16: x minus product", body = "mul.f16 t, %1, %2; sub.f16 %0, %3, t;",
   ref = "neg.f16 u, %1; fma.rn.f16 %0, u, %2, %3;", alt = "mul.rn.f16 t, %1, %2; sub.rn.f16 %0, %3, t;"},
  {name = "f16: mul.rn (__hmul_rn): not contracted", body = "mul.rn.f16 t, %1, %2; add.f16 %0, t, %3;",
   ref = "mul.rn.f16 t, %1, %2; add.rn.f16 %0, t, %3;", alt = "fma.rn.f16 %0, %1, %2, %3;"},
  {name = "bf16: mul then add: one fma", body = "mul.bf16 t, %1, %2; add.bf16 %0, t, %3;",
   ref = "fma.rn.bf16 %0, %1, %2, %3;", alt = "mul.rn.bf16 t, %1, %2; add.rn.bf16 %0, t, %3;", bf16 = true},
}

-- Inputs: products and addends of one size, so that one rounding or two differ often.
function M.inputs(template, n, seed, bf16)
  local r = cuda.rand(3 * n, "f64", seed):tolist()
  local x, y, z = {}, {}, {}
  for i = 1, n do
    local a, b, c = r[i] * 4 - 2, r[n + i] * 4 - 2, r[2 * n + i] * 8 - 4
    if template == "f16" then
      local function h(v, e0)
        local s = v < 0 and 0x8000 or 0
        local m = math.floor(math.abs(v) * 1e6) % (bf16 and 128 or 1024)
        local e = e0 + math.floor(math.abs(v) * 1.5)
        return s | (e << (bf16 and 7 or 10)) | m
      end
      a, b, c = h(a, bf16 and 126 or 14), h(b, bf16 and 126 or 14), h(c, bf16 and 127 or 15)
    end
    x[i], y[i], z[i] = a, b, c
  end
  return x, y, z
end

-- Runs kernel kern of a template's module on n threads for case c: returns the outputs and the
-- inputs x, y, z (the same for the same seed on every backend).
function M.run(template, kern, c, n, seed)
  local tp = M.templates[template]
  local x, y, z = M.inputs(template, n, seed, c.bf16)
  local d = cuda.array(n, tp.dtype)
  kern[{n // 128, 128}](cuda.array(x, tp.dtype), cuda.array(y, tp.dtype), cuda.array(z, tp.dtype), d,
                        c.k or 0, n)
  return d:tolist(), x, y, z
end

-- How many elements of p and q differ (two NaNs are alike), and the first index that does.
function M.differ(p, q)
  local n, first = 0, nil
  for i = 1, #p do
    if p[i] ~= q[i] and not (p[i] ~= p[i] and q[i] ~= q[i]) then
      n = n + 1
      first = first or i
    end
  end
  return n, first
end

-- The groups of cases by template, and how many cases there are in all.
M.groups = {{"f32", M.cases}, {"f64", M.cases64}, {"f16", M.cases16}}
M.count = #M.cases + #M.cases64 + #M.cases16

return M
