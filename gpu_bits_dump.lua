-- temporary: the GPU's results for the edge conversions and f64 math, written as Lua for offline comparison
local out = assert(os.getenv("OUT")) .. "/gpu_bits.lua"
local f = assert(io.open(out, "w"))
local EDGES = { 0 / 0, -(0 / 0), math.huge, -math.huge, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5,
  127.5, 128.0, -128.5, -129.0, 255.5, 256.0, 32767.5, 32768.0, -32768.5, -32769.0, 65535.5,
  65536.0, 2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0, 4294967295.0, 4294967296.0,
  9.2233720368547758e18, 9.3e18, -9.2233720368547758e18, -9.3e18, 1.8446744073709552e19, 2e19,
  1e30, -1e30, 3.4e38, -3.4e38, 1e-30, -1e-30, 1e300, -1e300 }
local TYPES = { { "signed char", "i8", "i8" }, { "unsigned char", "u8", "u8" },
  { "short", "i16", "i16" }, { "unsigned short", "u16", "u16" }, { "int", "i32", "i32" },
  { "unsigned", "u32", "u32" }, { "long long", "i64", "i64" }, { "unsigned long long", "i64", "u64" } }
local parts = {}
for _, from in ipairs({ "float", "double" }) do
  for _, t in ipairs(TYPES) do
    parts[#parts + 1] = string.format(
      "extern \"C\" __global__ void cvt_%s_%s(const %s *x, %s *y, int n) {\n" ..
      "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = (%s)x[i];\n}\n",
      from, t[3], from, t[2] == "i64" and "long long" or t[1], t[1])
  end
end
parts[#parts + 1] = [[
extern "C" __global__ void f64_math(const double *x, const double *y, double *h, double *e,
                                    double *l, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { h[i] = hypot(x[i], y[i]); e[i] = exp(x[i]); l[i] = log1p(x[i]); }
}]]
local m = cuda.module(table.concat(parts))
f:write("return {\n cvt = {\n")
for _, from in ipairs({ { "float", "f32" }, { "double", "f64" } }) do
  local n = #EDGES
  local x = cuda.host(n, from[2])
  for i = 1, n do x[i - 1] = EDGES[i] end
  for _, t in ipairs(TYPES) do
    local y = cuda.zeros(n, t[2])
    m["cvt_" .. from[1] .. "_" .. t[3]][{ 1, 64 }](cuda.array(x), y, n)
    local h = y:host()
    local row = {}
    for i = 0, n - 1 do row[#row + 1] = string.format("{%q, %d}", string.pack("d", x[i]):gsub(".", function(c) return string.format("%02x", c:byte()) end), h[i]) end
    f:write(string.format("  [\"%s %s\"] = {%s},\n", from[1], t[1], table.concat(row, ",")))
  end
end
f:write(" },\n math = {\n")
local n = 20000
local x, y = cuda.host(n, "f64"), cuda.host(n, "f64")
local rx, ry = cuda.rand(n, "f64", 7):host(), cuda.rand(n, "f64", 8):host()
for i = 0, n - 1 do
  x[i] = (rx[i] - 0.5) * 10 ^ ((i % 13) - 6) * 1.4
  y[i] = (ry[i] - 0.5) * 10 ^ ((i % 7) - 3)
end
local h, e, l = cuda.zeros(n, "f64"), cuda.zeros(n, "f64"), cuda.zeros(n, "f64")
m.f64_math[{ (n + 255) // 256, 256 }](cuda.array(x), cuda.array(y), h, e, l, n)
h, e, l = h:host(), e:host(), l:host()
local function hex(v) return (string.pack("<d", v):gsub(".", function(c) return string.format("%02x", c:byte()) end)) end
for i = 0, n - 1 do
  f:write(string.format("  {%q,%q,%q,%q,%q},\n", hex(x[i]), hex(y[i]), hex(h[i]), hex(e[i]), hex(l[i])))
end
f:write(" },\n}\n")
f:close()
print("wrote " .. out)
