-- streams.lua: cuda.stream, cuda.event, cuda.copy (ranged, and queued on a stream), launches on
-- a stream and cuda.timeline. On the backend without a GPU (none): the messages, and cuda.copy's
-- ranges and bad arguments, which need no device. On the simulator: the data every copy moves,
-- and the modelled schedule: pinned copies overlap kernels and copies the other way, pageable
-- ones make the host wait, kernels never overlap, the default stream waits for every stream.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local SIM = cuda.backend() == "sim"
local NONE = cuda.backend() == "none"
T.plan(3 + (SIM and 11 or NONE and 2 or 0))

local function seq(n, f)
  local t = {}
  for i = 1, n do t[i] = f(i) end
  return t
end

test("cuda.copy copies a range, default offsets and count from the source", function()
  local h = cuda.host(seq(10, function(i) return i end), "i32")
  local d = cuda.array(10, "i32")
  cuda.copy(d, h, {offset = 2, count = 3})
  checkeq(table.concat(d:tolist(), ","), "0,0,3,4,5,0,0,0,0,0")
  local small = cuda.array(4, "i32")
  cuda.copy(small, h, {src_offset = 6})
  checkeq(table.concat(small:tolist(), ","), "7,8,9,10")
  local out = cuda.host(10, "i32")
  cuda.copy(out, small, {dst_offset = 5, count = 2})
  checkeq(table.concat(out:tolist(), ","), "0,0,0,0,0,7,8,0,0,0")
  checkeq(cuda.copy(out, h), out, "returns the destination")
  checkeq(out[9], 10)
end)

test("cuda.copy's bad arguments say what is wrong", function()
  local h, d = cuda.host(10, "f32"), cuda.array(10, "f32")
  checkerr("cuda.copy: unknown option strem (the options are stream, count, offset", cuda.copy, d, h, {strem = 1})
  checkerr("cuda.copy: the source range is elements 8 to 12, but cuda.HostBuffer<f32>[10] has 10",
    cuda.copy, d, h, {offset = 8, count = 4})
  checkerr("cuda.copy: the destination range is elements 9 to 10, but cuda.Array<f32>[4] has 4",
    cuda.copy, cuda.array(4), h, {dst_offset = 9, count = 1})
  checkerr("cuda.copy: count must be a whole number of elements, at least 0, got -1", cuda.copy, d, h, {count = -1})
  checkerr("cuda.copy: offset must be a whole number of elements, at least 0, got 1.5", cuda.copy, d, h, {offset = 1.5})
  checkerr("cannot copy cuda.HostBuffer<f32>[10] into cuda.Array<i32>[10]: the dtypes differ", cuda.copy, cuda.array(10, "i32"), h)
  checkerr("expected options like {stream = s, offset = 0, count = n}", cuda.copy, d, h, 3)
  checkerr("destination must be a cuda.Array or cuda.HostBuffer, got number", cuda.copy, 1, h)
  checkerr("cuda.copy's stream must be a cuda.Stream (from cuda.stream()), got number", cuda.copy, d, h, {stream = 1})
  local gone = cuda.array(10, "f32")
  gone:free()
  checkerr("source is a cuda.Array<f32>[10] that has been freed", cuda.copy, d, gone)
  -- an option table whose __index frees the destination: the copy must notice, not crash
  local victim = cuda.array(10, "f32")
  local hostile = setmetatable({}, {__index = function() victim:free() end})
  checkerr("destination is a cuda.Array<f32>[10] that has been freed", cuda.copy, victim, h, hostile)
end)

test("a launch configuration's stream must be a stream", function()
  local k = cuda.kernel[[__global__ void nop(int *a) {}]]
  checkerr("the launch's stream must be a cuda.Stream (from cuda.stream()), got string", function()
    return k[{1, 32, stream = "s1"}]
  end)
end)

if NONE then
  test("the backend without a GPU says streams and timelines need one", function()
    checkerr("cannot use streams on the none backend: no GPU found on this machine. Start cudalab with --sim", cuda.stream)
    checkerr("cannot use streams on the none backend", cuda.timeline, function() end)
    checkerr("cuda.timeline(fn): fn must be a function", cuda.timeline, 3)
  end)
  test("the backend without a GPU says events need one", function()
    checkerr("no GPU found on this machine", cuda.event)
  end)
  return T.done()
end
if not SIM then return T.done() end -- the rest checks the simulator's model (tests/gpu: the GPU's)

local inc = cuda.kernel[[
__global__ void inc(float *a, int off, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[off + i] = a[off + i] * 2.0f + 1.0f;
}]]

test("streams print, number themselves, and say when they are freed", function()
  local s, s2 = cuda.stream(), cuda.stream()
  check(s2.id > s.id, "ids increase")
  check(tostring(s):find("^cuda%.Stream %d+ on sim$"), tostring(s))
  checkeq(s:sync(), s, "sync returns the stream")
  s:free()
  s:free() -- idempotent
  check(tostring(s):find("(freed)", 1, true), tostring(s))
  checkerr("self is cuda.Stream " .. s.id .. ", which has been freed", s.sync, s)
  checkerr("cuda.copy's stream is cuda.Stream " .. s.id .. ", which has been freed",
    cuda.copy, cuda.array(4), cuda.host(4), {stream = s})
  local launch = inc[{1, 32, stream = s2}]
  s2:free()
  checkerr("this launch is on cuda.Stream " .. s2.id .. ", which has been freed", launch, cuda.array(4), 0, 4)
  checkerr("the event to wait for must be a cuda.Event (from cuda.event()), got no value", cuda.stream().wait, cuda.stream())
  do local s3 <close> = cuda.stream() end -- __close releases it
end)

test("copies and launches on streams move the right data", function()
  local n, chunks = 1000, 3
  local h = cuda.host(seq(n, function(i) return i * 0.5 end), "f32", {pinned = true})
  local out = cuda.host(n, "f32", {pinned = true})
  local d = cuda.array(n, "f32")
  local S = {cuda.stream(), cuda.stream()}
  local c = (n + chunks - 1) // chunks
  for i = 0, chunks - 1 do
    local s, off = S[i % 2 + 1], i * c
    local cnt = math.min(c, n - off)
    cuda.copy(d, h, {stream = s, offset = off, count = cnt})
    inc[{(cnt + 127) // 128, 128, stream = s}](d, off, cnt)
    cuda.copy(out, d, {stream = s, offset = off, count = cnt})
  end
  for _, s in ipairs(S) do s:sync() end
  local want = seq(n, function(i) return i * 0.5 * 2 + 1 end)
  checkeq(T.maxdiff(out:tolist(), want), 0)
  checkerr("cuda.copy: a copy on a stream goes between host and device", cuda.copy, d, cuda.array(n, "f32"), {stream = S[1]})
  checkerr("cuda.copy: a copy on a stream goes between host and device", cuda.copy, h, out, {stream = S[1]})
end)

-- The chunked pipeline of the lesson, on `ns` streams (0: all on the default stream).
local function pipeline(ns, pinned, n, chunks)
  local h = cuda.host(n, "f32", {pinned = pinned})
  local out = cuda.host(n, "f32", {pinned = pinned})
  local d = cuda.array(n, "f32")
  local S = seq(ns, function() return cuda.stream() end)
  local c = n // chunks
  return cuda.timeline(function()
    for i = 0, chunks - 1 do
      local s = ns > 0 and S[i % ns + 1] or nil
      cuda.copy(d, h, {stream = s, offset = i * c, count = c})
      inc[{c // 256, 256, stream = s}](d, i * c, c)
      cuda.copy(out, d, {stream = s, offset = i * c, count = c})
    end
  end)
end

test("the timeline lists every operation with its stream, kind, bytes and times", function()
  local tl = pipeline(2, true, 1 << 16, 4)
  checkeq(#tl.ops, 12)
  checkeq(#tl.streams, 2)
  local first = tl.ops[1]
  checkeq(first.kind, "copy")
  checkeq(first.dir, "H2D")
  checkeq(first.bytes, (1 << 16) // 4 * 4)
  checkeq(first.pinned, true)
  checkeq(first.start, 0)
  checkeq(tl.ops[2].kind, "kernel")
  checkeq(tl.ops[2].name, "inc")
  checkeq(tl.ops[3].dir, "D2H")
  for _, op in ipairs(tl.ops) do check(op.stop > op.start, "every operation takes time") end
  checkeq(tl.clock, "model")
  local text = tostring(tl)
  check(text:find("timeline: 12 operations on 2 streams", 1, true), text)
  check(text:find("modelled H200 time", 1, true), text)
  check(text:find("stream %d+ [│|]"), text)
  local file = os.tmpname() .. ".svg"
  checkeq(cuda.plot(tl, file), file)
  local svg = io.open(file):read("a")
  os.remove(file)
  check(svg:find("<title>H2D 64 KiB (pinned)", 1, true), "the SVG names each copy")
  check(svg:find("kernel inc", 1, true), "the SVG names each kernel")
end)

test("pinned copies overlap kernels and the other direction; kernels never overlap", function()
  local tl = pipeline(3, true, 1 << 18, 6)
  local serial = pipeline(0, true, 1 << 18, 6)
  check(tl.total < serial.total * 0.8, string.format("overlapped %.4f ms against serial %.4f ms", tl.total, serial.total))
  local overlap_h2d_d2h, kernels = false, {}
  for _, a in ipairs(tl.ops) do
    if a.kind == "kernel" then kernels[#kernels + 1] = a end
    for _, b in ipairs(tl.ops) do
      if a.dir == "H2D" and b.dir == "D2H" and a.start < b.stop and b.start < a.stop then overlap_h2d_d2h = true end
    end
  end
  check(overlap_h2d_d2h, "a copy in ran while a copy out did")
  table.sort(kernels, function(a, b) return a.start < b.start end)
  for i = 2, #kernels do check(kernels[i].start >= kernels[i - 1].stop - 1e-12, "kernels overlap") end
end)

test("pageable copies make the host wait: nothing is queued behind them early", function()
  local tl = pipeline(3, false, 1 << 18, 6)
  local last_pageable_end = 0
  for _, op in ipairs(tl.ops) do -- in the order the host queued them
    check(op.start >= last_pageable_end - 1e-12, "an operation started before the host had queued it")
    if op.kind == "copy" then last_pageable_end = op.stop end
  end
  local pinned = pipeline(3, true, 1 << 18, 6)
  check(pinned.total < tl.total, "pinned beats pageable")
end)

test("with no stream, the time is the sum of the operations, as before", function()
  local serial = pipeline(0, true, 1 << 16, 4)
  local sum = 0
  for _, op in ipairs(serial.ops) do sum = sum + (op.stop - op.start) end
  check(math.abs(serial.total - sum) < 1e-9, string.format("total %.6f, sum %.6f", serial.total, sum))
  local h, d = cuda.host(1 << 16, "f32"), cuda.array(1 << 16, "f32")
  local t = cuda.time(function() d:copyfrom(h); inc[{256, 256}](d, 0, 1 << 16); d:copyto(h) end)
  local tl = cuda.timeline(function() d:copyfrom(h); inc[{256, 256}](d, 0, 1 << 16); d:copyto(h) end)
  check(math.abs(t.median - tl.total) < 1e-6, string.format("cuda.time %.6f, timeline %.6f", t.median, tl.total))
  checkeq(tl.streams[1].label, "default")
  -- a library call is work on the default stream too
  local A, B, C = cuda.rand(32 * 32, "f32", 1), cuda.rand(32 * 32, "f32", 2), cuda.zeros(32 * 32)
  local g = cuda.timeline(function() cuda.blas.gemm(A, B, C, 32, 32, 32) end)
  checkeq(#g.ops, 1)
  checkeq(g.ops[1].name, "gemm (BLAS)")
  check(g.ops[1].stop > g.ops[1].start, "the multiply takes modelled time")
  check(tostring(g):find("timeline: 1 operation on 1 stream", 1, true), tostring(g))
end)

test("events time a stream's work, and s:wait(ev) orders work across streams", function()
  local n = 1 << 16
  local h, d = cuda.host(n, "f32", {pinned = true}), cuda.array(n, "f32")
  local a, b = cuda.stream(), cuda.stream()
  local ev, after
  local tl = cuda.timeline(function()
    local e0 = cuda.event(a)
    cuda.copy(d, h, {stream = a})
    ev = cuda.event(a)
    b:wait(ev)
    inc[{n // 256, 256, stream = b}](d, 0, n)
    after = cuda.event(b)
    local ms = e0:elapsed(ev)
    check(ms > 0, "the copy took time")
  end)
  checkeq(tl.ops[2].kind, "kernel")
  check(tl.ops[2].start >= tl.ops[1].stop - 1e-12, "the kernel waited for the event")
  check(math.abs(ev:elapsed(after) - (tl.ops[2].stop - tl.ops[1].stop)) < 1e-4, "elapsed between the events")
  checkeq(ev:record(b), ev, "record returns the event")
  checkerr("the end event must be a cuda.Event (from cuda.event()), got number", ev.elapsed, ev, 5)
  ev:free()
  checkerr("self is a cuda.Event that has been freed", ev.record, ev)
end)

test("the default stream waits for every stream, and they for it", function()
  local n = 1 << 16
  local h, d = cuda.host(n, "f32", {pinned = true}), cuda.array(n, "f32")
  local s = cuda.stream()
  local tl = cuda.timeline(function()
    cuda.copy(d, h, {stream = s})
    inc[{n // 256, 256}](d, 0, n)             -- default stream
    cuda.copy(h, d, {stream = s})
  end)
  check(tl.ops[2].start >= tl.ops[1].stop - 1e-12, "the default stream's kernel waited for the stream")
  check(tl.ops[3].start >= tl.ops[2].stop - 1e-12, "the stream waited for the default stream")
end)

test("an error inside a timeline stops the recording and reaches the caller", function()
  checkerr("boom", cuda.timeline, function() error("boom") end)
  checkerr("cuda.timeline is already recording: timelines cannot nest", cuda.timeline, function()
    cuda.timeline(function() end)
  end)
  local tl = cuda.timeline(function() end)
  checkeq(#tl.ops, 0)
  check(tostring(tl):find("nothing ran on the device", 1, true), tostring(tl))
  checkerr("out-of-bounds global load", cuda.timeline, function() inc[{1, 32, stream = cuda.stream()}](cuda.array(4), 0, 32) end)
end)

test("a timeline on the simulator needs the timing model", function()
  local old = cuda.simopts()
  cuda.simopts{model = false}
  local ok, err = pcall(cuda.timeline, function() end)
  cuda.simopts(old)
  check(not ok and tostring(err):find("cuda.timeline on the simulator needs the timing model: cuda.simopts{model = true}", 1, true), tostring(err))
end)

test("streams and events of another backend are refused", function()
  local s, e = cuda.stream(), cuda.event()
  cuda.use("none")
  local ok1, err1 = pcall(s.sync, s)
  local ok2, err2 = pcall(e.record, e)
  cuda.use("sim")
  check(not ok1 and err1:find("of the sim backend, but none is active now", 1, true), tostring(err1))
  check(not ok2 and err2:find("cuda.Event of the sim backend, but none is active now", 1, true), tostring(err2))
end)

return T.done()
