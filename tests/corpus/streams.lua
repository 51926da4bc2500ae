-- streams.lua: corpus cases for work queued on streams: ranged asynchronous copies in and out of
-- pinned memory, launches on several streams, pageable copies on a stream, and a kernel that
-- waits, through an event, for a copy on another stream. On a GPU these go through
-- cudaMemcpyAsync, launches on a cudaStream_t and cudaStreamWaitEvent; every result is
-- independent of how the streams interleave, provided their order is kept, so the bits are
-- reproducible.
local C = dofile("tests/corpus/corpus.lua")

local POLY = [[
__global__ void poly(float *a, int off, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[off + i], y = 0.0f;
    for (int j = 0; j < iters; j++) y = fmaf(y, x, 1.0f);
    a[off + i] = y;
  }
}]]

-- The CPU's poly: Horner's rule with fused multiply-adds in f32. Lua has no fmaf, so the check
-- allows the difference of f64 evaluation rounded once.
local function poly_ref(xs, iters)
  local out = {}
  for i, x in ipairs(xs) do
    local y = 0.0
    for _ = 1, iters do y = y * x + 1.0 end
    out[i] = y
  end
  return out
end

-- The chunked pipeline of lesson 16: chunk i's copy in, kernel and copy out on stream i % #S.
local function pipeline(k, hin, hout, d, chunks, S, iters)
  local n = #d
  local size = (n + chunks - 1) // chunks
  for i = 0, chunks - 1 do
    local s, first = S[i % #S + 1], i * size
    local count = math.min(size, n - first)
    if count > 0 then
      cuda.copy(d, hin, {stream = s, offset = first, count = count})
      k[{(count + 127) // 128, 128, stream = s}](d, first, count, iters)
      cuda.copy(hout, d, {stream = s, offset = first, count = count})
    end
  end
  for _, s in ipairs(S) do s:sync() end
end

C.case{
  name = "streams: a chunked pipeline on three streams, pinned, n not a multiple of the chunks",
  src = POLY,
  run = function(k)
    local n = 100003
    local _, xs = C.uniform(n, 301, -1, 1)
    local hin, hout = cuda.host(xs, "f32", {pinned = true}), cuda.host(n, "f32", {pinned = true})
    pipeline(k, hin, hout, cuda.array(n), 7, {cuda.stream(), cuda.stream(), cuda.stream()}, 12)
    C.s = xs
    return {cuda.array(hout)}
  end,
  check = function(outs) C.same(outs[1], poly_ref(C.s, 12), {rtol = 1e-5, atol = 1e-6}) end,
}

C.case{
  name = "streams: the same pipeline from pageable memory, two streams, chunks smaller than a block",
  src = POLY,
  run = function(k)
    local n = 1000
    local _, xs = C.uniform(n, 302, -1, 1)
    local hin, hout = cuda.host(xs, "f32"), cuda.host(n, "f32")
    pipeline(k, hin, hout, cuda.array(n), 13, {cuda.stream(), cuda.stream()}, 9)
    C.s = xs
    return {cuda.array(hout)}
  end,
  check = function(outs) C.same(outs[1], poly_ref(C.s, 9), {rtol = 1e-5, atol = 1e-6}) end,
}

C.case{
  name = "streams: a kernel on one stream waits for a copy on another through an event",
  src = POLY,
  run = function(k)
    local n = 65536
    local _, xs = C.uniform(n, 303, -1, 1)
    local hin = cuda.host(xs, "f32", {pinned = true})
    local hout = cuda.host(n, "f32", {pinned = true})
    local d = cuda.array(n)
    local a, b = cuda.stream(), cuda.stream()
    cuda.copy(d, hin, {stream = a})
    local copied = cuda.event(a)
    b:wait(copied)
    k[{n // 256, 256, stream = b}](d, 0, n, 5)
    local done = cuda.event(b)
    a:wait(done)
    cuda.copy(hout, d, {stream = a})
    a:sync()
    C.s = xs
    return {cuda.array(hout)}
  end,
  check = function(outs) C.same(outs[1], poly_ref(C.s, 5), {rtol = 1e-5, atol = 1e-6}) end,
}

return C.done()
