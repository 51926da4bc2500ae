-- test_complete.lua: completion lists for the words a learner types, run in
-- a private environment so the results do not depend on this process's
-- globals; and the promise that completion never raises or runs code.

local complete = require "complete"
local fake = require "fake_cuda"

-- An environment like the engine's: the fake modules, a few values of each
-- kind, and (through __index) nothing else, so lists stay short and exact.
local function env()
  local cuda, cpu = fake.new()
  local e = {
    cuda = cuda, cpu = cpu, print = print, pairs = pairs, string = string,
    a = cuda.array(4), h = cuda.host(4), k = cuda.kernel("__global__ void inc(float *a) {}"),
    s = "text", n = 42, _hidden = 1,
    obj = setmetatable({ field = 1 }, { __index = { method = print, value = 2 } }),
    x = { y = { z = 1, zed = {} } },
  }
  return e
end

local function c(text, e) return complete.candidates(text, e or env()) end

test("complete module fields", function()
  checkeq(c("cuda.ar"), { "cuda.arange(", "cuda.array(" })
  checkeq(c("cuda.m"), { "cuda.meminfo(", "cuda.module(" })
  checkeq(c("cpu."), { "cpu.time(" })
  checkeq(c("cuda.nope"), {})
end)

test("complete hides _ names unless typed", function()
  local all = c("cuda.")
  checkeq(#all, 25) -- the fake module's public fields
  for _, w in ipairs(all) do check(not w:find("cuda._", 1, true), w) end
  checkeq(c("cuda._"), { "cuda._meta." })
  checkeq(c("_h"), { "_hidden" })
end)

test("complete globals and keywords at top level", function()
  checkeq(c("cu"), { "cuda." })
  checkeq(c("p"), { "pairs(", "print(" })
  checkeq(c("wh"), { "while" })
  checkeq(c("re"), { "repeat", "return" })
  checkeq(c("fo"), { "for" })
  checkeq(c("x.y.z"), { "x.y.z", "x.y.zed." })
end)

test("complete suffixes by type", function()
  checkeq(c("a"), { "a:", "and" })
  checkeq(c("obj"), { "obj:" })
  checkeq(c("s"), { "s", "string." })
  checkeq(c("n"), { "n", "nil", "not" })
end)

test("complete methods after a colon, functions only", function()
  checkeq(c("a:"), { "a:copyfrom(", "a:copyto(", "a:fill(", "a:free(", "a:host(", "a:tolist(" })
  checkeq(c("a:to"), { "a:tolist(" })
  checkeq(c("k:"), { "k:debug(", "k:info(", "k:ptx(" })
  checkeq(c("obj:"), { "obj:method(" })
  checkeq(c("s:up"), { "s:upper(" })
end)

test("complete dot on an object lists fields and methods", function()
  checkeq(c("obj."), { "obj.field", "obj.method(", "obj.value" })
end)

test("complete keeps the text before the word", function()
  checkeq(c("print(cuda.ar"), { "print(cuda.arange(", "print(cuda.array(" })
  checkeq(c("x = cuda.sy"), { "x = cuda.sync(" })
  checkeq(c("t[cu"), { "t[cuda." })
end)

test("complete offers nothing where names make no sense", function()
  checkeq(c('t["'), {})
  checkeq(c('print("cu'), {})
  checkeq(c("1.5"), {})
  checkeq(c("x..y"), {})
  checkeq(c("a:b:c"), {})
  checkeq(c("a:b.c"), {})
  checkeq(c("f()."), {})
  checkeq(c("n.x"), {})
end)

test("complete never calls __index functions", function()
  local called = false
  local e = { t = setmetatable({ own = 1 }, { __index = function() called = true end }) }
  checkeq(c("t.", e), { "t.own" })
  checkeq(c("t.own.x", e), {})
  checkeq(called, false)
end)

test("complete follows __index tables, with a depth limit", function()
  local base = { inherited = print }
  local mid = setmetatable({}, { __index = base })
  local e = { o = setmetatable({}, { __index = mid }) }
  checkeq(c("o:", e), { "o:inherited(" })
  local loop = {}
  setmetatable(loop, { __index = loop })
  checkeq(c("l", { l = loop }), { "l.", "local" })
  checkeq(c("l.", { l = loop }), {})
end)

test("complete reads a __methods list of names", function()
  local mt = { __index = function() end, __methods = { "run", "stop" } }
  checkeq(c("o:", { o = setmetatable({}, mt) }), { "o:run(", "o:stop(" })
end)

test("complete never raises", function()
  checkeq(complete.candidates(nil), {})
  checkeq(complete.candidates(42), {})
  local hostile = setmetatable({}, { __metatable = "locked" })
  checkeq(c("h.", { h = hostile }), {})
  local weird = setmetatable({}, { __index = setmetatable({}, { __index = error }) })
  checkeq(c("w.", { w = weird }), {})
end)

test("complete uses _G by default", function()
  with_globals({ zz_unit_test_value = {} }, function()
    checkeq(complete.candidates("zz_unit"), { "zz_unit_test_value." })
  end)
end)
