-- tensor_vs_gpu.lua: mma.sync on random inputs, on the GPU and on the simulator, compared bit
-- for bit: every shape and type the simulator models (f16 and bf16 with k16, f16 with k8, tf32
-- with k8 and k4, f32 and f16 accumulators), 16,384 results each. The inputs are random bit
-- patterns whose exponents lie in a narrow band, with zeros and f16 subnormals, so that the
-- alignment of terms, cancellation, the products' exponents and the final rounding all vary:
-- what sim_tensor.c's model of the tensor cores' addition must get right.
local T = dofile("tests/lua/testlib.lua")
T.plan(6)
local WARPS = 128

-- Each warp reads its own fragments (a, b and c words per lane, in the registers' order) and
-- writes its d words. The kernels are written out from one template per register shape (the
-- kernel list is read from the source, so a C macro would hide them).
local AT = "#define AT(n, i) ((((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * 32 + (threadIdx.x & 31)) * (n) + (i))\n"
local HEAD = 'extern "C" __global__ void %s(const unsigned *A, const unsigned *B, const unsigned *C, unsigned *D) {\n'
local C4 = [["f"(__uint_as_float(C[AT(4, 0)])), "f"(__uint_as_float(C[AT(4, 1)])),
    "f"(__uint_as_float(C[AT(4, 2)])), "f"(__uint_as_float(C[AT(4, 3)]))]]
local F32_OUT = [[  float d[4];
  asm volatile("mma.sync.aligned.%s {%%0,%%1,%%2,%%3}, %s;"
    : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : %s, ]] .. C4 .. [[);
  for (int i = 0; i < 4; i++) D[AT(4, i)] = __float_as_uint(d[i]);
}
]]
-- 4 a, 2 b registers (m16n8k16 f16 and bf16, m16n8k8 tf32) or 2 a, 1 b (m16n8k8 f16, m16n8k4 tf32)
local A4 = {'{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13}',
            '"r"(A[AT(4, 0)]), "r"(A[AT(4, 1)]), "r"(A[AT(4, 2)]), "r"(A[AT(4, 3)]), "r"(B[AT(2, 0)]), "r"(B[AT(2, 1)])'}
local A2 = {'{%4,%5}, {%6}, {%7,%8,%9,%10}', '"r"(A[AT(4, 0)]), "r"(A[AT(4, 1)]), "r"(B[AT(2, 0)])'}
local function f32_kernel(name, shape, regs)
  return HEAD:format(name) .. F32_OUT:format(shape, regs[1], regs[2])
end
local src = AT
  .. f32_kernel("f16f32", "m16n8k16.row.col.f32.f16.f16.f32", A4)
  .. f32_kernel("bf16f32", "m16n8k16.row.col.f32.bf16.bf16.f32", A4)
  .. f32_kernel("tf32k8", "m16n8k8.row.col.f32.tf32.tf32.f32", A4)
  .. f32_kernel("f16k8", "m16n8k8.row.col.f32.f16.f16.f32", A2)
  .. f32_kernel("tf32k4", "m16n8k4.row.col.f32.tf32.tf32.f32", A2)
  .. HEAD:format("f16f16") .. [[
  unsigned d[2]; /* f16 accumulators: 2 c and 2 d registers of two halves each */
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
    : "=r"(d[0]), "=r"(d[1])
    : "r"(A[AT(4, 0)]), "r"(A[AT(4, 1)]), "r"(A[AT(4, 2)]), "r"(A[AT(4, 3)]), "r"(B[AT(2, 0)]), "r"(B[AT(2, 1)]),
      "r"(C[AT(4, 0)]), "r"(C[AT(4, 1)]));
  for (int i = 0; i < 4; i++) D[AT(4, i)] = i < 2 ? d[i] : 0;
}
]]

-- Random words whose 16-bit halves (or the whole word, for 32-bit types) have exponents in a
-- narrow band around 1, so that products overlap and the alignment matters, with some zeros.
local function bits16(u, kind)
  local sign = u[1] < 0.5 and 0 or 0x8000
  if u[2] < 0.05 then return sign end -- a zero
  if kind == "f16" then
    local e = 15 + math.floor(u[3] * 13) - 6           -- 2^-6 .. 2^6
    if u[2] < 0.08 then e = 0 end                     -- a subnormal
    return sign | e << 10 | math.floor(u[4] * 1024)
  end
  local e = 127 + math.floor(u[3] * 13) - 6
  return sign | e << 7 | math.floor(u[4] * 128)
end
local function bits32(u)
  local sign = u[1] < 0.5 and 0 or 0x80000000
  if u[2] < 0.05 then return sign end
  local e = 127 + math.floor(u[3] * 17) - 8
  return sign | e << 23 | math.floor(u[4] * 8388608)
end

local mod
local n = WARPS * 32

-- Inputs as host tables of u32 words: a and b in the instruction's element type, c in its
-- accumulator's.
local function inputs(et, ct, seed)
  local r = cuda.rand(n * 10 * 8, "f64", seed):tolist()
  local at = 0
  local function u4() local t = {r[at + 1], r[at + 2], r[at + 3], r[at + 4]} at = at + 4 return t end
  local function word(t)
    if t == "tf32" or t == "f32" then return bits32(u4()) end
    return bits16(u4(), t) | bits16(u4(), t) << 16
  end
  local A, B, Cw = {}, {}, {}
  for i = 1, n * 4 do A[i] = word(et) end
  for i = 1, n * 2 do B[i] = word(et) end
  for i = 1, n * 4 do Cw[i] = word(ct) end
  return A, B, Cw
end

local kinds = {
  {"f16f32", "f16", "f32", "m16n8k16 f32.f16.f16.f32"},
  {"bf16f32", "bf16", "f32", "m16n8k16 f32.bf16.bf16.f32"},
  {"f16k8", "f16", "f32", "m16n8k8 f32.f16.f16.f32"},
  {"f16f16", "f16", "f16", "m16n8k16 f16.f16.f16.f16"},
  {"tf32k8", "tf32", "f32", "m16n8k8 f32.tf32.tf32.f32"},
  {"tf32k4", "tf32", "f32", "m16n8k4 f32.tf32.tf32.f32"},
}
for i, kd in ipairs(kinds) do
  local name, et, ct, label = kd[1], kd[2], kd[3], kd[4]
  T.test("mma.sync " .. label .. ": random inputs, the same bits as the GPU", function()
    local A, B, Cw = inputs(et, ct, 1000 + i)
    local out = {}
    for _, be in ipairs{"cuda", "sim"} do
      local old = cuda.use(be)
      local D = cuda.array(n * 4, "u32")
      mod = cuda.module(src)
      mod[name][{WARPS, 32}](cuda.array(A, "u32"), cuda.array(B, "u32"), cuda.array(Cw, "u32"), D)
      out[be] = D:tolist()
      cuda.use(old)
    end
    local differ, first = 0, nil
    for j = 1, #out.cuda do
      if out.cuda[j] ~= out.sim[j] then
        differ = differ + 1
        first = first or string.format("word %d: GPU 0x%08x, simulator 0x%08x", j - 1, out.cuda[j], out.sim[j])
      end
    end
    T.check(differ == 0, string.format("%d of %d results differ; first at %s", differ, #out.cuda, first))
  end)
end
