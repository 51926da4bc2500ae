-- textures.lua: cuda.texture and the tex instructions. On every backend: each bad option and
-- its message. Without a GPU or simulator (none): the refusal. On the simulator: fetches of
-- every filter and address mode against a CPU reference written here (point: the texel at
-- floor(x); linear: x - 0.5 split into a texel and a weight in 1/256ths, each corner weighed by
-- the alphas' products held to 8 bits, as an H200 does, summed in double, x fastest, and rounded
-- to f32 once), edges, negative and out-of-range
-- coordinates, normalized coordinates and reads, integer elements, channels, 3-D, the copy a
-- texture holds, and use after free, a handle that is no texture and the parameter checks.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local SIM = cuda.backend() == "sim"
local NONE = cuda.backend() == "none"
T.plan(4 + (NONE and 1 or 0) + (SIM and 12 or 0))

local function f32(v) return (string.unpack("f", string.pack("f", v))) end
-- numbers as text that says 1 for 1.0, for comparing lists
local function join(t)
  local out = {}
  for i, v in ipairs(t) do out[i] = ("%.9g"):format(v) end
  return table.concat(out, " ")
end

test("bad options name the option and what it takes", function()
  local a = cuda.array(12)
  checkerr('cuda.texture: filter must be "point" or "linear", got "nearest"',
    cuda.texture, a, {filter = "nearest"})
  checkerr('cuda.texture: address must be "clamp", "wrap", "mirror" or "border", got "repeat"',
    cuda.texture, a, {address = "repeat"})
  checkerr('cuda.texture: address must be "clamp", "wrap", "mirror" or "border", got number',
    cuda.texture, a, {address = {3}})
  checkerr("address as a table gives one mode per dimension: this texture has 2, the table 1",
    cuda.texture, a, {width = 4, height = 3, address = {"wrap"}})
  checkerr('cuda.texture: read must be "element" or "normalized", got "float"',
    cuda.texture, a, {read = "float"})
  checkerr("cuda.texture: channels must be 1, 2 or 4, got 3", cuda.texture, a, {channels = 3})
  checkerr("cuda.texture: width must be a whole number of texels, at least 1, got 0",
    cuda.texture, a, {width = 0})
  checkerr("cuda.texture: height must be a whole number of texels, at least 1, got 2.5",
    cuda.texture, a, {width = 4, height = 2.5})
  checkerr("cuda.texture: normalized must be true or false, got string",
    cuda.texture, a, {normalized = "yes"})
  checkerr("cuda.texture: unknown option 'filtre' (the options: width, height, depth, channels, "
           .. "filter, address, normalized, read)", cuda.texture, a, {filtre = "linear"})
  checkerr("cuda.texture: a 2-D texture needs its width", cuda.texture, a, {height = 3})
  checkerr("cuda.texture: a 3-D texture (depth) needs its height too", cuda.texture, a,
    {width = 2, depth = 3})
  checkerr("bad argument #2 to 'cuda.texture' (table of options expected, got number)",
    cuda.texture, a, 5)
end)

test("sizes, element types and what linear filtering and normalized reads need", function()
  local a = cuda.array(12)
  checkerr("cuda.texture: width * height * channels = 5 * 3 * 1 = 15, but the array has 12 "
           .. "elements", cuda.texture, a, {width = 5, height = 3})
  checkerr("cuda.texture: width * channels = 5 * 2 = 10, but the array has 12 elements",
    cuda.texture, a, {width = 5, channels = 2})
  checkerr("width * height * depth * channels = 2 * 2 * 2 * 1 = 8, but the array has 12",
    cuda.texture, a, {width = 2, height = 2, depth = 2})
  checkerr("the array's 10 elements are not a whole number of texels of 4 channels",
    cuda.texture, cuda.array(10), {channels = 4})
  checkerr("cuda.texture: a texture cannot hold f64 elements: CUDA textures hold f32, i32, u32, "
           .. "i16, u16, i8 or u8", cuda.texture, cuda.array(4, "f64"))
  checkerr('filter = "linear" needs float results: an f32 array, or an 8- or 16-bit integer '
           .. 'one with read = "normalized"; this one is i32', cuda.texture, cuda.array(4, "i32"),
    {filter = "linear"})
  checkerr('read = "normalized" is for 8- and 16-bit integer arrays (u8, i8, u16, i16), which '
           .. "it reads as floats in [0, 1] or [-1, 1]; this one is f32", cuda.texture, a,
    {read = "normalized"})
  checkerr("cuda.texture: the array is empty", cuda.texture, cuda.array(0))
  checkerr("cuda.texture's array", cuda.texture, 7)
  local h = cuda.host(4, "f32")
  checkerr("is in host memory; make the texture from a device array", cuda.texture, h)
  local freed = cuda.array(4)
  freed:free()
  checkerr("freed", cuda.texture, freed)
end)

test("sizes past the device's largest CUDA array are refused, as cudaMallocArray does", function()
  local d = cuda.device()
  checkeq(type(d.max_texture_1d), "number", "cuda.device().max_texture_1d")
  local a = cuda.array(16)
  checkerr(("cuda.texture: a 2-D texture is at most %d texels in width on the %s, got %d")
    :format(d.max_texture_2d[1], d.name, 1 << 40), cuda.texture, a, {width = 1 << 40, height = 1})
  checkerr(("a 3-D texture is at most %d texels in depth on the %s, got %d")
    :format(d.max_texture_3d[3], d.name, d.max_texture_3d[3] + 1), cuda.texture, a,
    {width = 1, height = 1, depth = d.max_texture_3d[3] + 1})
  -- sizes whose product overflows 64 bits: each is refused on its own, never multiplied
  checkerr("a 3-D texture is at most", cuda.texture, a, {width = 1 << 21, height = 1 << 21,
    depth = 1 << 21})
  -- a width taken from the array's length
  checkerr(("cuda.texture: a 1-D texture holds at most %d texels on the %s, and its width would "
    .. "be %d; give a height to make it 2-D"):format(d.max_texture_1d, d.name,
    d.max_texture_1d + 4), cuda.texture, cuda.array(d.max_texture_1d + 4))
end)

test("an option's __index runs before the array is looked at", function()
  local a = cuda.array(8)
  local opts = setmetatable({}, {__index = function(_, k)
    if k == "filter" then a:free() end
  end})
  checkerr("freed", cuda.texture, a, opts)
end)

if NONE then
  test("the backend without a GPU refuses, naming the simulator", function()
    checkerr('cannot make a texture: no GPU found on this machine. Start cudalab with --sim',
      cuda.texture, cuda.array(4))
  end)
end

if not SIM then return T.done() end

-- ---- the CPU reference ------------------------------------------------------------------------

local function address(i, n, mode, normalized)
  if not normalized and (mode == "wrap" or mode == "mirror") then mode = "clamp" end
  if i >= 0 and i < n then return i end
  if mode == "border" then return nil end
  if mode == "wrap" then return i % n end
  if mode == "mirror" then
    local m = i % (2 * n)
    return m < n and m or 2 * n - 1 - m
  end
  return i < 0 and 0 or n - 1
end

-- The fetch of texture description d (values: a Lua list, channels interleaved, x fastest) at
-- coordinates c (one per dimension), channel q (0-based).
local function fetch(d, values, c, q)
  local size = {d.width, d.height or 1, d.depth or 1}
  local dims, ch = #c, d.channels or 1
  local modes = type(d.address) == "table" and d.address or
    {d.address or "clamp", d.address or "clamp", d.address or "clamp"}
  local i, a = {0, 0, 0}, {0, 0, 0}
  for k = 1, dims do
    local x = f32(c[k])
    if d.normalized then x = f32(x * size[k]) end
    if d.filter == "linear" then
      local fx = math.floor(f32(x - 0.5) * 256 + 0.5) -- halves never occur in these tests
      i[k], a[k] = fx // 256, fx % 256
    else
      i[k] = math.floor(x)
    end
  end
  local lin, acc = d.filter == "linear", 0
  -- each product of two or three alphas held to the nearest 1/256 (a half up), a corner's weight
  -- made from those by inclusion and exclusion (the corner (0,0) weighs 256 - ax - ay + [ax ay])
  local held = {}
  for s = 0, (1 << dims) - 1 do
    local n, prod = 0, 1
    for k = 1, dims do
      if (s >> (k - 1)) & 1 == 1 then n, prod = n + 1, prod * a[k] end
    end
    held[s] = n == 0 and 256 or n == 1 and prod or math.floor(prod / 256 ^ (n - 1) + 0.5)
  end
  local function weight(corner)
    local low, sum = ~corner & ((1 << dims) - 1), 0
    for s = 0, (1 << dims) - 1 do
      if s & low == s then
        local bits = 0
        for k = 0, dims - 1 do bits = bits + ((s >> k) & 1) end
        sum = sum + (bits % 2 == 1 and -1 or 1) * held[corner | s]
      end
    end
    return sum / 256
  end
  for corner = 0, (lin and (1 << dims) or 1) - 1 do
    local w, idx = lin and weight(corner) or 1, {}
    for k = 1, 3 do
      local up = (corner >> (k - 1)) & 1
      if k <= dims then idx[k] = address(i[k] + up, size[k], modes[k], d.normalized) -- nil: border
      else idx[k] = 0 end
    end
    local v = 0
    if idx[1] and idx[2] and idx[3] then
      v = values[((idx[3] * size[2] + idx[2]) * size[1] + idx[1]) * ch + q + 1]
      if d.read == "normalized" then v = d.norm(v) end -- d.norm: the reference's own
    end
    acc = corner == 0 and w * v or acc + w * v
  end
  return f32(acc)
end

local k1 = cuda.kernel[[
__global__ void k1(cudaTextureObject_t t, float *o, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex1D<float>(t, x[i]);
}]]
local k2 = cuda.kernel[[
__global__ void k2(cudaTextureObject_t t, float *o, const float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = tex2D<float>(t, x[i], y[i]);
}]]

local function run1(tex, xs)
  local o = cuda.zeros(#xs)
  k1[{(#xs + 63) // 64, 64}](tex, o, cuda.array(xs, "f32"), #xs)
  return o:tolist()
end

local function agree(what, got, d, values, coords)
  for i, c in ipairs(coords) do
    local want = fetch(d, values, c, 0)
    if got[i] ~= want then
      error(("%s at (%s): got %.9g, want %.9g"):format(what, table.concat(c, ", "), got[i],
        want), 2)
    end
  end
end

local vals = {}
for i = 1, 10 do vals[i] = (i * 37 % 11) - 3.25 end
local xs_un = {0, 0.5, 0.99, 1, 3.7, 9.5, 9.999, 10, 10.5, 25, -0.01, -1.5, -7, 1e9, -1e9}
local xs_no = {0, 0.05, 0.31, 0.999, 1, 1.25, 2.73, -0.01, -0.3, -1.6, 5.5, 0.5}

test("point filtering: the texel at floor(x), every address mode, unnormalized and normalized",
  function()
  local a = cuda.array(vals, "f32")
  local t = cuda.texture(a)
  checkeq(join(run1(t, {0.5, 1.0, 1.99, -3, 42})),
    join({f32(vals[1]), f32(vals[2]), f32(vals[2]), f32(vals[1]), f32(vals[10])}),
    "clamp by default, hand-checked")
  for _, mode in ipairs{"clamp", "wrap", "mirror", "border"} do
    for _, norm in ipairs{false, true} do
      local d = {width = 10, address = mode, normalized = norm}
      local xs = norm and xs_no or xs_un
      local coords = {}
      for i, x in ipairs(xs) do coords[i] = {x} end
      agree(mode .. (norm and " normalized" or ""), run1(cuda.texture(a, d), xs), d, vals, coords)
    end
  end
end)

test("linear filtering: 8-bit weights, every address mode, edges and far coordinates", function()
  local a = cuda.array(vals, "f32")
  local t = cuda.texture(a, {filter = "linear"})
  local got = run1(t, {1.5, 1.75, 0.2, 10.2})
  checkeq(got[1], f32(vals[2]), "a texel centre reads the texel")
  checkeq(got[2], f32(0.75 * vals[2] + 0.25 * vals[3]), "a quarter past the centre")
  checkeq(got[3], f32(vals[1]), "clamped below the first centre")
  checkeq(got[4], f32(vals[10]), "clamped past the last centre")
  -- a weight that is no multiple of 1/256 is rounded to one: x = 1.5 + 0.3 weighs 77/256
  checkeq(run1(t, {1.8})[1], f32((179 / 256) * vals[2] + (77 / 256) * vals[3]), "alpha 77/256")
  for _, mode in ipairs{"clamp", "wrap", "mirror", "border"} do
    for _, norm in ipairs{false, true} do
      local d = {width = 10, address = mode, normalized = norm, filter = "linear"}
      local xs = norm and xs_no or xs_un
      local coords = {}
      for i, x in ipairs(xs) do coords[i] = {x} end
      agree(mode .. " linear" .. (norm and " normalized" or ""), run1(cuda.texture(a, d), xs), d,
        vals, coords)
    end
  end
end)

test("2-D: bilinear with an address mode per dimension, against hand values and the reference",
  function()
  local img = {}
  for i = 1, 12 do img[i] = i end
  local a = cuda.array(img, "f32")
  local t = cuda.texture(a, {width = 4, height = 3, filter = "linear"})
  local o = cuda.zeros(3)
  k2[{1, 32}](t, o, cuda.array({1.0, 2.25, -3}, "f32"), cuda.array({1.0, 1.75, 0.5}, "f32"), 3)
  checkeq(join(o:tolist()), "3.5 7.75 1", "hand-checked")
  -- one lit corner: its weight is the product of the alphas held to 8 bits, as an H200 gives it
  -- ((8/256)^2 reads 0, not 1/1024; (16/256)(8/256) is half a step, read as 1/256)
  local lit = cuda.texture(cuda.array({0, 0, 0, 1}, "f32"), {width = 2, height = 2,
    filter = "linear"})
  k2[{1, 32}](lit, o, cuda.array({0.5 + 8 / 256, 0.5 + 16 / 256, 0.5 + 24 / 256}, "f32"),
    cuda.array({0.5 + 8 / 256, 0.5 + 8 / 256, 0.5 + 24 / 256}, "f32"), 3)
  checkeq(join(o:tolist()), join{0, 1 / 256, 2 / 256}, "a lit corner's held weight")
  local d = {width = 4, height = 3, filter = "linear", normalized = true,
    address = {"wrap", "border"}}
  local xs, ys, coords = {}, {}, {}
  for i = 0, 47 do
    xs[i + 1] = (i * 0.173) % 2.2 - 0.6
    ys[i + 1] = (i * 0.291) % 1.9 - 0.45
    coords[i + 1] = {xs[i + 1], ys[i + 1]}
  end
  local out = cuda.zeros(48)
  k2[{1, 64}](cuda.texture(a, d), out, cuda.array(xs, "f32"), cuda.array(ys, "f32"), 48)
  agree("wrap x border", out:tolist(), d, img, coords)
end)

test("3-D: point and trilinear", function()
  local v = {}
  for i = 1, 27 do v[i] = (i * 7 % 13) * 0.5 end
  local a = cuda.array(v, "f32")
  local k3 = cuda.kernel[[
  __global__ void k3(cudaTextureObject_t t, float *o, float x, float y, float z) {
    o[threadIdx.x] = tex3D<float>(t, x + threadIdx.x * 0.37f, y, z);
  }]]
  for _, filter in ipairs{"point", "linear"} do
    local d = {width = 3, height = 3, depth = 3, filter = filter}
    local o = cuda.zeros(8)
    k3[{1, 8}](cuda.texture(a, d), o, -0.2, 1.3, 2.1)
    local coords = {}
    for i = 0, 7 do coords[i + 1] = {f32(-0.2 + f32(i * f32(0.37))), 1.3, 2.1} end
    agree("3-D " .. filter, o:tolist(), d, v, coords)
  end
end)

test("integer elements read as elements, and 8- and 16-bit ones read normalized", function()
  local ki = cuda.kernel[[
  __global__ void ki(cudaTextureObject_t t, int *o) { o[threadIdx.x] = tex1D<int>(t, (int)threadIdx.x - 2 + 0.5f); }
  ]]
  local o = cuda.zeros(8, "i32")
  ki[{1, 8}](cuda.texture(cuda.array({-5, 7, 1 << 30, -1}, "i32")), o)
  checkeq(table.concat(o:tolist(), " "), "-5 -5 -5 7 1073741824 -1 -1 -1",
    "texel centres read their texels, clamped")
  ki[{1, 8}](cuda.texture(cuda.array({200, 3}, "u8")), o)
  checkeq(table.concat(o:tolist(), " "), "200 200 200 3 3 3 3 3", "u8 zero-extended")
  ki[{1, 8}](cuda.texture(cuda.array({-100, 3}, "i8")), o)
  checkeq(o[0], -100, "i8 sign-extended")
  for _, c in ipairs{{"u8", {0, 255, 128, 7}, function(x) return x / 255 end},
                     {"i8", {-128, 127, -3, 64}, function(x) return math.max(x / 127, -1) end},
                     {"u16", {0, 65535, 1000, 40000}, function(x) return x / 65535 end},
                     {"i16", {-32768, 32767, -5, 999}, function(x) return math.max(x / 32767, -1) end}} do
    local d = {width = 4, read = "normalized", filter = "linear"}
    local xs = {0.5, 1.5, 2.5, 3.5, 1.1, 2.9, -1, 9}
    local coords = {}
    for i, x in ipairs(xs) do coords[i] = {x} end
    local got = run1(cuda.texture(cuda.array(c[2], c[1]), d), xs)
    d.norm = c[3]
    agree(c[1] .. " normalized", got, d, c[2], coords)
  end
end)

test("channels: float4 reads all four, missing ones read 0 (the fourth too, as on a GPU)", function()
  local k4 = cuda.kernel[[
  __global__ void k4(cudaTextureObject_t t, float4 *o, float x) { o[threadIdx.x] = tex1D<float4>(t, x + threadIdx.x); }
  ]]
  local o = cuda.zeros(8)
  k4[{1, 2}](cuda.texture(cuda.array({1, 2, 3, 4, 5, 6, 7, 8}, "f32"), {channels = 4}), o, 0.5)
  checkeq(join(o:tolist()), "1 2 3 4 5 6 7 8", "four channels")
  k4[{1, 2}](cuda.texture(cuda.array({1, 2, 3, 4}, "f32"), {channels = 2, filter = "linear"}), o,
    0.75)
  checkeq(join(o:tolist()), "1.5 2.5 0 0 3 4 0 0", "two channels, linear")
end)

test("a texture holds a copy: writing the array afterwards changes nothing it reads", function()
  local a = cuda.array({1, 2, 3}, "f32")
  local t = cuda.texture(a)
  a:fill(9)
  checkeq(join(run1(t, {0.5, 1.5, 2.5})), "1 2 3")
  checkeq(t.width, 3)
  checkeq(t.dims, 1)
  checkeq(t.dtype, "f32")
  checkeq(t.filter, "point")
  checkeq(t.address[1], "clamp")
  check(tostring(t):find("cuda.Texture %d+: f32%[3%], point, clamp on sim"), tostring(t))
end)

test("a freed texture is refused at launch; free is idempotent", function()
  local t = cuda.texture(cuda.array({1, 2}, "f32"))
  t:free()
  t:free()
  check(t.freed, "t.freed")
  check(tostring(t):find("%(freed%)"), tostring(t))
  checkerr("argument 1 (cudaTextureObject_t t): cuda.Texture " .. t.id .. " has been freed",
    k1[{1, 1}], t, cuda.zeros(1), cuda.zeros(1), 1)
  do
    local c <close> = cuda.texture(cuda.array({1, 2}, "f32"))
    t = c
  end
  check(t.freed, "freed by <close>")
end)

test("parameters: a texture only for cudaTextureObject_t, not for a pointer", function()
  local a = cuda.array({1, 2}, "f32")
  local t = cuda.texture(a)
  checkerr("argument 1 (cudaTextureObject_t t): expected a texture (cuda.texture(array, {...}) "
           .. "makes one), got cuda.Array<f32>[2]", k1[{1, 1}], a, a, a, 1)
  checkerr("argument 1 (cudaTextureObject_t t): expected a texture", k1[{1, 1}], 3, a, a, 1)
  checkerr("argument 2 (float *o): got a texture (cuda.Texture), but this parameter is a "
           .. "pointer: a texture goes to a cudaTextureObject_t parameter", k1[{1, 1}], t, t, a, 1)
end)

test("a handle that is no texture, or the wrong geometry, fails the launch with thread and line",
  function()
  local kh = cuda.kernel[[
  __global__ void kh(unsigned long long t, float *o) {
    o[threadIdx.x] = tex1D<float>(t, 0.5f);
  }]]
  local o = cuda.zeros(4)
  checkerr("texture fetch (tex.1d) from 0x2a, which is not a live texture object: pass the "
           .. "handle that cuda.texture made", kh[{1, 4}], 42, o)
  -- the learner's line: the fetch is inlined from NVRTC's texture header, whose own line the
  -- learner never wrote
  checkerr("in kernel kh, block (0,0,0), thread (0,0,0), at kernel.cu:2", kh[{1, 4}], 42, o)
  local t2 = cuda.texture(cuda.array(4), {width = 2, height = 2})
  checkerr("tex1D (tex.1d) on a 2-D texture (2 x 2 x 1 texels): fetch it with tex2D", kh[{1, 4}],
    t2, o)
  kh[{1, 4}](cuda.texture(cuda.array({5, 6}, "f32")), o)
  checkeq(o[3], 5, "an unsigned long long parameter takes a texture")
end)

test("texture memory counts against the session's memory in use", function()
  local before = cuda.limits().memory_in_use
  local t = cuda.texture(cuda.array(1024, "f32"))
  local mid = cuda.limits().memory_in_use
  checkeq(mid - before, 2 * 4096, "the array and the texture's copy")
  t:free()
  checkeq(cuda.limits().memory_in_use, mid - 4096)
  -- under a class's cap, a texture's copy is refused as an array past it is (the last test:
  -- a limit is never raised again)
  local a = cuda.zeros(200000)
  local held = cuda.limits().memory_in_use
  cuda.limits{memory = held + 500000}
  checkerr("device memory limit", cuda.texture, a, {width = 1000, height = 200})
  -- (a collection may free earlier garbage meanwhile, never add)
  check(cuda.limits().memory_in_use <= held, "the refused copy holds nothing: " ..
    cuda.limits().memory_in_use .. " in use, " .. held .. " before")
end)

if cuda.backend() == "sim" then
  test("tex1Dfetch on cuda.texture's textures is refused, with what reads a texel instead", function()
    local kf = cuda.kernel[[
    __global__ void kf(cudaTextureObject_t t, int *o) { o[threadIdx.x] = tex1Dfetch<int>(t, threadIdx.x); }
    ]]
    checkerr("tex1Dfetch (integer coordinates) reads a texture over linear memory, and " ..
             "cuda.texture makes textures over CUDA arrays, from which a GPU's tex1Dfetch " ..
             "returns undefined values: read texel i with tex1D(t, i + 0.5f)",
      kf[{1, 4}], cuda.texture(cuda.array({1, 2, 3, 4}, "i32")), cuda.zeros(4, "i32"))
  end)
end

return T.done()
