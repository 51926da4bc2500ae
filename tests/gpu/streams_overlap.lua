-- streams_overlap.lua: on the GPU, the chunked pipeline of lesson 16 overlaps for real: copies in
-- one direction run while kernels and copies the other way do, so three streams beat one, and
-- pageable memory does not. It prints the GPU's timeline totals beside the simulator's model of
-- the same work ("# streams: ..."), the figures that tell whether the model's copy engines and
-- its legacy default stream schedule as the H200 does. Runs on the cuda backend only.
local T = dofile("tests/lua/testlib.lua")
T.plan(2)
local test, check, checkeq = T.test, T.check, T.checkeq

local SRC = [[
__global__ void poly(float *a, int off, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[off + i], y = 0.0f;
    for (int j = 0; j < iters; j++) y = y * x + 1.0f;
    a[off + i] = y;
  }
}]]
local N, ITERS, CHUNKS = 1 << 22, 16, 4

-- serial, pipelined (pinned) and pipelined (pageable) totals in ms on the active backend, and
-- the pinned output buffer.
local function measure()
  local poly = cuda.kernel(SRC)
  local hin, hout = cuda.host(N, "f32", {pinned = true}), cuda.host(N, "f32", {pinned = true})
  hin:copyfrom(cuda.rand(N, "f32", 7))
  local pin, pout = cuda.host(N, "f32"), cuda.host(N, "f32")
  pin:copyfrom(hin)
  local d = cuda.array(N)
  local S = {cuda.stream(), cuda.stream(), cuda.stream()}
  local function pipeline(h_in, h_out)
    local size = N // CHUNKS
    for i = 0, CHUNKS - 1 do
      local s = S[i % #S + 1]
      cuda.copy(d, h_in, {stream = s, offset = i * size, count = size})
      poly[{size // 256, 256, stream = s}](d, i * size, size, ITERS)
      cuda.copy(h_out, d, {stream = s, offset = i * size, count = size})
    end
  end
  local function serial()
    cuda.copy(d, hin); poly[{N // 256, 256}](d, 0, N, ITERS); cuda.copy(hout, d)
  end
  cuda.timeline(serial) -- warm-up: the first copies and launch pay one-time costs
  local r = {serial = cuda.timeline(serial), piped = cuda.timeline(function() pipeline(hin, hout) end),
             paged = cuda.timeline(function() pipeline(pin, pout) end)}
  return r, hin, hout
end

if cuda.backend() ~= "cuda" then
  T.skip("the pipeline overlaps on the GPU", "needs the cuda backend")
  T.skip("the pipeline's result and timeline on the GPU", "needs the cuda backend")
  return T.done()
end

local gpu, hin, hout = measure()
local old = cuda.use("sim")
local sim = measure()
cuda.use(old)
print(string.format("# streams: GPU serial %.3f ms, 3-stream pipeline %.3f ms, pageable pipeline %.3f ms",
  gpu.serial.total, gpu.piped.total, gpu.paged.total))
print(string.format("# streams: model serial %.3f ms, 3-stream pipeline %.3f ms, pageable pipeline %.3f ms",
  sim.serial.total, sim.piped.total, sim.paged.total))
print("# GPU pipeline:\n" .. tostring(gpu.piped):gsub("\n", "\n# "))

test("the pipeline overlaps on the GPU", function()
  check(gpu.piped.total < 0.8 * gpu.serial.total, "three streams do not beat one by a fifth")
  check(gpu.paged.total > gpu.piped.total, "pageable is not slower than pinned")
end)

test("the pipeline's result and timeline on the GPU", function()
  checkeq(#gpu.piped.ops, 3 * CHUNKS)
  checkeq(#gpu.piped.streams, 3)
  for _, op in ipairs(gpu.piped.ops) do check(op.stop >= op.start and op.start >= 0, "an operation's times") end
  for k = 0, 99 do
    local i = (k * 7919 * 104729) % N
    local x, y = hin[i], 0.0
    for _ = 1, ITERS do y = y * x + 1.0 end
    check(math.abs(hout[i] - y) <= 1e-4 * math.abs(y), string.format("hout[%d] is %g, want %g", i, hout[i], y))
  end
end)

return T.done()
