-- bench/texture/probe.lua: how the GPU filters textures, measured beside the simulator. Run on a
-- machine with a GPU: `cudalab bench/texture/probe.lua > probe.txt`. Each probe set fetches a
-- texture on the GPU and on the simulator at the same coordinates and prints every fetch whose
-- bits differ ("DIFF", then GPU/simulator for each of the four channels), every fetch of the
-- sets named ALL-*, and a SUMMARY line per set. PROBE_ALL=1 prints every fetch; PROBE_GPU=sim
-- runs both sides on the simulator (a check of the script itself).
-- The sets: P1, a 1-D weight over one texel step in 1/2048ths (and on a large texel); P1c,
-- border addressing; P2, one lit far corner and a ramp in 2-D; P3, one lit far corner, one lit
-- near corner and ramps in 3-D; P4, the 3-D layout (point sampling, and linear at texel
-- centres); P5, tests/gpu/texture.lua's 3-D points; P6, four channels. sim/sim_tex.c's rounding
-- and corner weights were fitted to what an H200 printed here on 2026-12-06 (its comments give
-- the counts).
local SRC = [[
__global__ void f1(cudaTextureObject_t t, float4 *o, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex1D<float4>(t, x[i]);
}
__global__ void f2(cudaTextureObject_t t, float4 *o, const float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex2D<float4>(t, x[i], y[i]);
}
__global__ void f3(cudaTextureObject_t t, float4 *o, const float *x, const float *y,
                   const float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex3D<float4>(t, x[i], y[i], z[i]);
}
]]
local GPU = os.getenv("PROBE_GPU") or "cuda"
local ALL = os.getenv("PROBE_ALL")

-- f() with backend be in use, the previous one put back whatever happens.
local function on(be, f)
  local old = cuda.use(be)
  local r = table.pack(pcall(f))
  cuda.use(old)
  assert(r[1], r[2])
  return r[2]
end

-- The four channels of each fetch, as a flat list, from a texture of values (f32) made with opts.
local function fetch(be, values, opts, xs, ys, zs)
  return on(be, function()
    local m = cuda.module(SRC)
    local t = cuda.texture(cuda.array(values, "f32"), opts)
    local n = #xs
    local o = cuda.zeros(4 * n)
    local g = {(n + 127) // 128, 128}
    local x = cuda.array(xs, "f32")
    if not ys then m.f1[g](t, o, x, n)
    elseif not zs then m.f2[g](t, o, x, cuda.array(ys, "f32"), n)
    else m.f3[g](t, o, x, cuda.array(ys, "f32"), cuda.array(zs, "f32"), n) end
    return o:tolist()
  end)
end

local function run(name, values, opts, xs, ys, zs)
  local g, s = fetch(GPU, values, opts, xs, ys, zs), fetch("sim", values, opts, xs, ys, zs)
  local bad = 0
  for i = 1, #xs do
    local pairs_, differ = {}, false
    for c = 1, 4 do
      local a, b = g[4 * (i - 1) + c], s[4 * (i - 1) + c]
      differ = differ or a ~= b
      pairs_[c] = ("%.9g/%.9g"):format(a, b)
    end
    if differ then bad = bad + 1 end
    if differ or ALL or name:find("^ALL") then
      print(("%s %d x=%.9g y=%.9g z=%.9g %s %s"):format(name, i, xs[i], ys and ys[i] or 0,
        zs and zs[i] or 0, differ and "DIFF" or "same", table.concat(pairs_, " ")))
    end
  end
  print(("SUMMARY %s: %d of %d differ"):format(name, bad, #xs))
end

-- P1: the 1-D weight over one texel step, and border addressing
local xs = {}
for k = 0, 2048 do xs[#xs + 1] = 0.5 + k / 2048 end
local lin1 = {width = 2, filter = "linear"}
run("ALL-P1-weight", {0, 1}, lin1, xs)
run("P1b-weight-big", {0, 16777216}, lin1, xs)
run("P1c-border", {7, 7, 7}, {width = 3, filter = "linear", address = "border"},
  {-1, -0.5, 0, 0.25, 0.5, 1, 2, 2.75, 3, 3.5, 4})

-- P2: 2-D, one lit far corner, and a ramp (offsets below 1/256 keep weights off exact steps)
local ys
xs, ys = {}, {}
for a = 0, 32 do
  for b = 0, 32 do
    xs[#xs + 1] = 0.5 + a / 32 + (a % 3) / 4096
    ys[#ys + 1] = 0.5 + b / 32 + (b % 5) / 8192
  end
end
local lin2 = {width = 2, height = 2, filter = "linear"}
run("P2-delta2d", {0, 0, 0, 1}, lin2, xs, ys)
run("P2b-ramp2d", {0, 1, 10, 11}, lin2, xs, ys)

-- P3: 3-D, one lit far corner, one lit near corner, and ramps
local zs
xs, ys, zs = {}, {}, {}
for a = 0, 16 do
  for b = 0, 16 do
    for c = 0, 16 do
      xs[#xs + 1] = 0.5 + a / 16 + (a % 3) / 2048
      ys[#ys + 1] = 0.5 + b / 16 + (b % 5) / 4096
      zs[#zs + 1] = 0.5 + c / 16 + (c % 7) / 8192
    end
  end
end
local lin3 = {width = 2, height = 2, depth = 2, filter = "linear"}
run("P3-delta3d-111", {0, 0, 0, 0, 0, 0, 0, 1}, lin3, xs, ys, zs)
run("P3b-delta3d-000", {1, 0, 0, 0, 0, 0, 0, 0}, lin3, xs, ys, zs)
run("P3c-ramp-z", {0, 0, 0, 0, 1, 1, 1, 1}, lin3, xs, ys, zs)
run("P3d-ramp-xyz", {0, 1, 10, 11, 100, 101, 110, 111}, lin3, xs, ys, zs)

-- P4: the 3-D layout: every texel's centre, point sampled and linear
local index = {}
for i = 1, 13 * 7 * 3 do index[i] = i end
xs, ys, zs = {}, {}, {}
for z = 0, 2 do
  for y = 0, 6 do
    for x = 0, 12 do
      xs[#xs + 1], ys[#ys + 1], zs[#zs + 1] = x + 0.5, y + 0.5, z + 0.5
    end
  end
end
run("P4-layout3d", index, {width = 13, height = 7, depth = 3}, xs, ys, zs)
run("P4b-linear-centres", index, {width = 13, height = 7, depth = 3, filter = "linear"},
  xs, ys, zs)

-- P5 and P6: tests/gpu/texture.lua's values and coordinates (its coords())
local vals = {}
for i = 1, 13 * 7 * 3 do vals[i] = ((i * 2654435761) % 1000) / 37 - 9 end
local function coords(n, lo, hi, seed)
  local t, s = {}, seed
  for i = 1, n do
    s = (s * 1103515245 + 12345) % 2147483648
    t[i] = lo + (hi - lo) * s / 2147483648
  end
  for _, v in ipairs{0, 0.5, 1, -0.5, hi, lo} do t[#t + 1] = v end
  return t
end
xs, ys, zs = coords(300, -2, 16, 3), coords(306, -2, 9, 5), coords(306, -2, 5, 9)
run("P5-test3d", vals, {width = 13, height = 7, depth = 3, filter = "linear",
  address = {"border", "clamp", "border"}}, xs, ys, zs)
run("P5b-test3d-clamp", vals, {width = 13, height = 7, depth = 3, filter = "linear"},
  xs, ys, zs)
run("P6-4ch", {table.unpack(vals, 1, 24)}, {width = 6, channels = 4, filter = "linear"},
  coords(200, -3, 9, 13))
