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
  checkeq(c("print(cuda.ar"),
    { "print(cuda.arange", "print(cuda.arange(", "print(cuda.array", "print(cuda.array(" })
  checkeq(c("x = cuda.sy"), { "x = cuda.sync", "x = cuda.sync(" })
  checkeq(c("t[cu"), { "t[cuda", "t[cuda." })
end)

-- The console sends the word and, apart, the line's text in front of it (readline breaks words
-- at "(" and ","), as the third argument.
local function at(before, text) return complete.candidates(text, env(), before) end

test("complete offers a value alone where a value stands", function()
  checkeq(at("print(", "a"), { "a", "a:" }) -- an array in an argument: ":" not forced
  checkeq(at("cuda.compare(a, ", "h"), { "h", "h:" })
  checkeq(at("print(#", "a"), { "a", "a:" })
  checkeq(at("y = ", "x.y"), { "x.y", "x.y." })
  checkeq(at("t = {1, ", "k"), { "k", "k:" })
  checkeq(at("return ", "obj"), { "obj", "obj:" })
  checkeq(at("if a and ", "pri"), { "print", "print(" }) -- a function passed, or called
  checkeq(at("x = 1 .. ", "s"), { "s", "string", "string." })
  checkeq(at("pcall(", "print(a"), { "print(a", "print(a:" }) -- context spans both parts
end)

test("complete offers only value keywords where a value stands", function()
  checkeq(at("print(", "n"), { "n", "nil", "not" })
  checkeq(at("x = ", "f"), { "false", "function" })
  checkeq(at("x = ", "wh"), {}) -- "while" cannot start a value
  checkeq(at("", "wh"), { "while" })
end)

test("complete keeps the suffix at the start of a statement", function()
  checkeq(at("", "a"), { "a:", "and" })
  checkeq(at("x = 1; ", "a"), { "a:", "and" })
  checkeq(at("for i = 1, 2 do ", "ob"), { "obj:" })
  checkeq(at("print(", "a:to"), { "a:tolist(" }) -- after a colon only a call fits
end)

test("complete offers nothing inside a string or a comment before the word", function()
  checkeq(at('print("', "a"), {})
  checkeq(at("print('it''s ", "a"), {})
  checkeq(at("x = 1 -- the ", "a"), {})
  checkeq(at('print("x", ', "a"), { "a", "a:" }) -- a closed string is no obstacle
  checkeq(at(nil, "a"), { "a:", "and" }) -- no context: as at a statement's start
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
