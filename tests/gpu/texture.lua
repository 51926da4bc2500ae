-- texture.lua: texture fetches on the GPU against the simulator: point and linear filtering,
-- every address mode, unnormalized and normalized coordinates, in 1-D, 2-D and 3-D, normalized
-- reads of 8- and 16-bit integers, and the values of missing channels.
-- Bit for bit: point sampling under every address mode (wrap and mirror clamping unnormalized
-- coordinates), missing channels (0, the fourth too; the simulator had 1 there until an H100
-- said otherwise). Linear filtering: the GPU holds its weights to 8 fractional bits and does not
-- document how it rounds them or sums the corners. Measured on an H200: a 1-D weight is the
-- nearest 1/256, a half up (the simulator's, bit for bit on 2,049 points), and a 1-D result
-- differs by about an ulp; 2-D and 3-D corner weights are themselves held to 8 bits (a corner
-- weight of (8/256)^2 reads 0), which the simulator now does too (sim_tex.c's corner_weights,
-- fitted with bench/texture/probe.lua: 23 of this file's 306 3-D points still apart), and
-- normalized coordinates pass through the GPU's own fixed point. So a linear result must agree within 4 ulps where only the sum's rounding
-- differs (1-D, unnormalized, f32) and within one 1/256 of the texels' spread per dimension
-- besides, which is the precision linear filtering has on a GPU; each test prints the largest
-- difference it saw. NaN reads texel 0 (not compared). tex1Dfetch over a CUDA array returned
-- undefined values on an H100 (the simulator refuses it); a 1-D texture under linear filtering
-- with border addressing returned half of every value while its unused dimensions had border
-- addressing too (the GPU's now get clamp).
local T = dofile("tests/lua/testlib.lua")
local modes = {"clamp", "wrap", "mirror", "border"}
T.plan(2 * #modes * 2 + 4)

local on = T.on -- the launch with that backend in use

local SRC = [[
__global__ void f1(cudaTextureObject_t t, float4 *o, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex1D<float4>(t, x[i]);
}
__global__ void f2(cudaTextureObject_t t, float4 *o, const float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex2D<float4>(t, x[i], y[i]);
}
__global__ void f3(cudaTextureObject_t t, float4 *o, const float *x, const float *y, const float *z,
                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex3D<float4>(t, x[i], y[i], z[i]);
}
__global__ void fi(cudaTextureObject_t t, int4 *o, const int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex1Dfetch<int4>(t, x[i]);
}
]]

-- Coordinates: centres, quarters, weights that are no multiple of 1/256, edges, negatives, far
-- out; unnormalized ones over [-12, 24) texels, normalized ones over [-1.5, 2.5).
local function coords(n, lo, hi, seed)
  local t, s = {}, seed
  for i = 1, n do
    s = (s * 1103515245 + 12345) % 2147483648
    t[i] = lo + (hi - lo) * s / 2147483648
  end
  for _, v in ipairs{0, 0.5, 1, -0.5, hi, lo} do t[#t + 1] = v end
  return t
end

-- Runs kernel `name` on backend be with a texture of values (f32) made with opts; the bits.
local function fetch(be, name, values, opts, xs, ys, zs)
  return on(be, function()
    local m = cuda.module(SRC)
    local t = cuda.texture(cuda.array(values, "f32"), opts)
    local n = #xs
    local o = cuda.zeros(4 * n)
    local grid = {(n + 127) // 128, 128}
    if name == "f1" then m.f1[grid](t, o, cuda.array(xs, "f32"), n)
    elseif name == "f2" then m.f2[grid](t, o, cuda.array(xs, "f32"), cuda.array(ys, "f32"), n)
    else
      m.f3[grid](t, o, cuda.array(xs, "f32"), cuda.array(ys, "f32"), cuda.array(zs, "f32"), n)
    end
    return o:tobytes()
  end)
end

-- Fails at the first element that differs by more than tol (0: bit for bit; else an absolute
-- bound, with 4 ulps of the value besides), naming its coordinates (xs, and ys and zs where
-- given) and both values; prints the largest difference seen.
local function near(what, tol, gpu, sim, xs, ys, zs)
  if gpu == sim then return end
  local worst = 0
  for i = 1, #gpu // 4 do
    local g, s = string.unpack("f", gpu, 4 * i - 3), string.unpack("f", sim, 4 * i - 3)
    local d = math.abs(g - s)
    local bound = tol == 0 and 0 or tol + 4 * math.max(math.abs(g), math.abs(s)) * 2 ^ -23
    if g ~= s and not (d <= bound) then
      local e = (i - 1) // 4
      local at = {}
      for _, c in ipairs{xs, ys, zs} do at[#at + 1] = ("%.9g"):format(c[e + 1]) end
      error(("%s: element %d (coordinates %s), channel %d: GPU %.9g, simulator %.9g, %s"):format(
        what, e, table.concat(at, ", "), (i - 1) % 4, g, s,
        tol == 0 and "bits differ" or ("%.3g apart, allowed %.3g"):format(d, bound)), 2)
    end
    if d == d and d > worst then worst = d end
  end
  print(("# %s: largest difference %.3g (allowed %.3g and 4 ulps)"):format(what, worst, tol))
end

local function spread(v)
  local lo, hi = math.huge, -math.huge
  for _, x in ipairs(v) do lo, hi = math.min(lo, x), math.max(hi, x) end
  return hi - lo
end

local vals = {}
for i = 1, 13 * 7 * 3 do vals[i] = ((i * 2654435761) % 1000) / 37 - 9 end

for _, filter in ipairs{"point", "linear"} do
  for _, mode in ipairs(modes) do
    for _, norm in ipairs{false, true} do
      local what = ("1-D and 2-D, %s, %s, %s"):format(filter, mode,
        norm and "normalized" or "unnormalized")
      T.test(what, function()
        local lo, hi = norm and -1.5 or -12, norm and 2.5 or 24
        local xs, ys = coords(500, lo, hi, 7), coords(506, lo, hi, 11)
        local o1 = {width = 13, filter = filter, address = mode, normalized = norm}
        local v1 = {table.unpack(vals, 1, 13)}
        local lin = filter == "linear"
        -- 1-D: the sum's ulp, unless normalized coordinates pass through the GPU's fixed point
        local tol1 = lin and (norm and spread(v1) / 256 or 4 * 2 ^ -23) or 0
        near(what .. " (1-D)", tol1, fetch("cuda", "f1", v1, o1, xs),
          fetch("sim", "f1", v1, o1, xs), xs)
        local o2 = {width = 13, height = 7, filter = filter, address = mode, normalized = norm}
        local v2 = {table.unpack(vals, 1, 91)}
        near(what .. " (2-D)", lin and 2 * spread(v2) / 256 or 0, fetch("cuda", "f2", v2, o2, xs, ys),
          fetch("sim", "f2", v2, o2, xs, ys), xs, ys)
      end)
    end
  end
end

T.test("3-D, linear, border per dimension", function()
  local xs, ys, zs = coords(300, -2, 16, 3), coords(306, -2, 9, 5), coords(306, -2, 5, 9)
  local o = {width = 13, height = 7, depth = 3, filter = "linear",
    address = {"border", "clamp", "border"}}
  near("3-D", 3 * spread(vals) / 256, fetch("cuda", "f3", vals, o, xs, ys, zs),
    fetch("sim", "f3", vals, o, xs, ys, zs), xs, ys, zs)
end)

T.test("four channels, and one channel's missing ones", function()
  local xs = coords(200, -3, 9, 13)
  local o4 = {width = 6, channels = 4, filter = "linear"}
  local v = {table.unpack(vals, 1, 24)}
  near("4 channels", 4 * 2 ^ -23, fetch("cuda", "f1", v, o4, xs), fetch("sim", "f1", v, o4, xs),
    xs)
  local o1 = {width = 24}
  near("1 channel as float4", 0, fetch("cuda", "f1", v, o1, xs), fetch("sim", "f1", v, o1, xs),
    xs)
end)

-- On an H100, tex1Dfetch over a CUDA array returned bytes that were none of the texels: only
-- linear memory is fetched so. The simulator refuses it rather than make up values.
T.test("tex1Dfetch over a CUDA array: refused on the simulator, with tex1D in its place", function()
  local ok, err = pcall(on, "sim", function()
    local m = cuda.module(SRC)
    local t = cuda.texture(cuda.array({5, -7, 9, 1 << 20}, "i32"))
    m.fi[{1, 64}](t, cuda.zeros(16, "i32"), cuda.array({0, 1, 2, 3}, "i32"), 4)
  end)
  T.check(not ok and tostring(err):find("read texel i with tex1D(t, i + 0.5f)", 1, true),
    tostring(err))
end)

T.test("normalized reads of u8, i8, u16 and i16, linear", function()
  for _, c in ipairs{{"u8", {0, 255, 128, 7, 91}}, {"i8", {-128, 127, -3, 64, 0}},
                     {"u16", {0, 65535, 1000, 40000, 3}}, {"i16", {-32768, 32767, -5, 999, 1}}} do
    local xs = coords(200, -2, 7, 17)
    local got = {}
    for _, be in ipairs{"cuda", "sim"} do
      got[be] = on(be, function()
        local m = cuda.module(SRC)
        local t = cuda.texture(cuda.array(c[2], c[1]), {read = "normalized", filter = "linear"})
        local o = cuda.zeros(4 * #xs)
        m.f1[{2, 128}](t, o, cuda.array(xs, "f32"), #xs)
        return o:tobytes()
      end)
    end
    local range = ({u8 = 1, i8 = 2, u16 = 1, i16 = 2})[c[1]]
    -- the GPU's own conversion of the integers to [0, 1] or [-1, 1] comes on top of the sum's
    near(c[1] .. " normalized", range / 256, got.cuda, got.sim, xs)
  end
end)

return T.done()
