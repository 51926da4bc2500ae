-- test_lesson_check.lua: the pure parts of lesson_check.lua (what checks
-- see as `expect`): findings read from error messages and noted by checks,
-- their order and the hint they choose, refused tags, and the integer
-- generator that leaves math.random alone. The parts that launch kernels are
-- exercised by --verify-lessons, whose wrong answers must fail through them.

local lc = require "lesson_check"

test("findings come from what a check noted, then from the words of its error", function()
  lc.begin()
  checkeq(lc.findings("out-of-bounds global load of 4 bytes at address 0x10"), { "bounds" })
  checkeq(lc.findings("shared-memory race: warp 4 writes shared address 0x200"), { "race" })
  checkeq(lc.findings("__shfl_sync with mask 0x0000ffff, but lanes 0xffff0000 run it without their own bit in the mask"),
    { "shuffle" })
  checkeq(lc.findings("compile error\nkernel.cu:1: error: x"), { "compile" })
  checkeq(lc.findings("the values are wrong"), {})
  checkeq(lc.findings("dbl(float *a, int n, int m) takes 3 arguments, got 2"), { "params" })
  checkeq(lc.findings("on n = 100: argument 1 (int *a): got cuda.Array<f32>[4], but the kernel expects an array of i32"),
    { "params" })
  local ok, msg = lc.fail("on n = 1000, a[3] is 1, want 2", "tail", "value")
  checkeq(ok, false); checkeq(msg, "on n = 1000, a[3] is 1, want 2")
  checkeq(lc.findings("on n = 1000: out-of-bounds global store"), { "tail", "value", "bounds" },
    "noted tags first (the shape's, then the kind), then the message's, without repeats")
  lc.begin()
  checkeq(lc.findings("x"), {}, "begin() forgets the last check's findings")
  lc.fail("on a shape with no tag", nil, "value")
  checkeq(lc.findings("x"), { "value" }, "a shape without a tag still gives the kind")
end)

test("a tag that is not a finding is a bug in the check, and says so", function()
  checkerr("lesson_check: unknown finding 'racy'", lc.note, "racy")
  checkerr("lesson_check: unknown finding 'oob'", lc.fail, "why", "oob")
  for tag, words in pairs(lc.FINDINGS) do
    check(type(words) == "string" and words ~= "", "finding " .. tag .. " says what it means")
  end
end)

test("the engine picks the hint of the first finding that has one", function()
  local L = require "lessons"
  local s = { hint_for = { race = "sync", value = "look at the index" } }
  checkeq(L.finding_hint(s, { "tail", "race", "value" }), "sync")
  checkeq(select(2, L.finding_hint(s, { "tail", "value" })), "value")
  checkeq(L.finding_hint(s, { "bounds" }), nil)
  checkeq(L.finding_hint(s, nil), nil)
end)

test("randint is reproducible by seed, in range, and leaves math.random alone", function()
  local made = {}
  local fake = { array = function(t, dtype) made[#made + 1] = { t = t, dtype = dtype }; return t end }
  with_globals({ cuda = fake }, function()
    math.randomseed(42)
    local before = math.random(1000000)
    math.randomseed(42)
    local a = lc.randint(1000, 7, -5, 5)
    local b = lc.randint(1000, 7, -5, 5)
    local c = lc.randint(1000, 8, -5, 5)
    checkeq(math.random(1000000), before, "math.random's sequence is untouched")
    checkeq(a, b, "the same seed gives the same numbers")
    check(table.concat(a, ",") ~= table.concat(c, ","), "another seed gives others")
    local lo, hi, distinct = 99, -99, {}
    for _, v in ipairs(a) do
      lo, hi = math.min(lo, v), math.max(hi, v)
      distinct[v] = true
      check(math.type(v) == "integer", "integers")
    end
    checkeq(lo, -5); checkeq(hi, 5)
    checkeq(made[1].dtype, "i32", "i32 unless asked")
  end)
end)

test("a prediction passes on the right side of 1 and fails on the other, saying what was measured", function()
  local function words(r) return string.format("it is %.2f times faster", r) end
  lc.begin()
  checkeq(lc.direction(4, 1.11, words), true, "faster predicted, faster measured")
  checkeq(lc.direction(0.5, 0.8, words), true, "slower predicted, slower measured")
  local ok, msg = lc.direction(0.5, 1.11, words)
  checkeq(ok, false)
  checkeq(msg, "you predicted 0.5, but it is 1.11 times faster (modelled H200 time): the other side of 1")
  checkeq(lc.findings(msg), { "value" })
  checkeq(lc.direction(1, 1.11, words), false, "no change is a direction too")
  checkeq(select(2, lc.direction(-16, 1.11, words)),
    "the prediction should be a ratio, a number above 0: above 1 for faster, below 1 for slower")
  checkeq(lc.direction(0 / 0, 1.11, words), false, "NaN is no prediction")
end)

test("orders runs a check once per block order, names the order that fails it, and puts the learner's back", function()
  local cuda = require("fake_cuda").new()
  with_globals({ cuda = cuda }, function()
    cuda.simopts { block_order = "reverse", seed = 3, threads = 6 }
    local seen = {}
    lc.begin()
    local ok, msg = lc.orders(function()
      checkeq(cuda.simopts().threads, 1, "one host thread in every order")
      seen[#seen + 1] = cuda.simopts().block_order
      if cuda.simopts().block_order == "forward" then return true end
      return false, "sum[0] is 0, want 10"
    end)
    checkeq(table.concat(seen, ","), "forward,reverse", "stops at the first failure")
    checkeq(ok, false)
    checkeq(msg, "sum[0] is 0, want 10 (with the blocks run in reverse order)")
    checkeq(lc.findings(msg), { "order" })
    checkeq(cuda.simopts().block_order, "reverse", "the learner's order is back")
    checkeq(cuda.simopts().seed, 3, "and the seed")
    checkeq(cuda.simopts().threads, 6, "and the host threads")
    checkerr("boom (with the blocks run in a shuffled order)", lc.orders, function()
      if cuda.simopts().block_order == "shuffle" then error("boom", 0) end
      return true
    end)
    checkeq(cuda.simopts().block_order, "reverse", "put back after an error too")
    checkeq(lc.orders(function() return true end), true)
    cuda.use("cuda")
    seen = {}
    checkeq(select(2, lc.orders(function()
      seen[#seen + 1] = cuda.simopts().block_order
      return cuda.simopts().block_order == "forward", "cleared by a later block"
    end)), "cleared by a later block (with the blocks run in reverse order)",
      "on a GPU machine the simulator's launches inside the check still see every order")
    checkeq(table.concat(seen, ","), "forward,reverse")
  end)
  -- a build without a simulator: nothing to order, the check runs once, its message as it is
  local nosim = require("fake_cuda").new()
  nosim.simopts = nil
  with_globals({ cuda = nosim }, function()
    local n = 0
    checkeq(select(2, lc.orders(function() n = n + 1; return false, "once" end)), "once")
    checkeq(n, 1)
  end)
end)

test("expect.timed names the launch a challenge times, for this check only", function()
  lc.begin()
  checkeq(lc.timed_launch(), nil)
  local f = function() end
  checkeq(lc.timed(f), f)
  checkeq(lc.timed_launch(), f)
  lc.begin()
  checkeq(lc.timed_launch(), nil)
  checkerr("expect.timed: expected a function that launches the kernel to time, got number",
    lc.timed, 3)
end)

test("a wrong value near cuda.sanitize{init = true}'s poison says where it came from", function()
  local note = lc.poison_note(-875836469 + 10)
  check(note:find("near 0xcbcbcbcb", 1, true), note)
  check(note:find("cuda.sanitize{init = true}", 1, true), note)
  check(note:find("__shared__ accumulator", 1, true), note)
  check(lc.poison_note(-26711958.0 + 10.0):find("0xcbcbcbcb", 1, true), "as an f32")
  check(lc.poison_note(-1.363115719988382e57):find("0xcbcbcbcb", 1, true), "as an f64")
  checkeq(lc.poison_note(10), "", "an ordinary wrong value")
  checkeq(lc.poison_note(-875836469 + (1 << 25)), "", "an int far from it")
  checkeq(lc.poison_note(-2.0e7), "", "a float far from it")
  checkeq(lc.poison_note(nil), "", "no value")
end)

-- The chunks a learner typed, noted as the engine notes them: earlier ones (a step before the
-- task), then the task's own, all run at a prompt whose globals are env.
local function typed_in(env, earlier_chunks, task_chunks)
  lc.forget()
  for _, c in ipairs(earlier_chunks) do lc.typed(c, env) end
  lc.watch(false)
  for _, c in ipairs(task_chunks) do lc.typed(c, env) end
end

-- A made-up array of n elements, as # sees it.
local function of_size(n)
  local t = {}
  for i = 1, n do t[i] = 0 end
  return t
end

test("computed gives a formula's value for other inputs, however the learner typed it", function()
  local env = setmetatable({ c = of_size(1000) }, { __index = _G })
  local function grid_for(earlier_chunks, task_chunks)
    typed_in(env, earlier_chunks, task_chunks)
    return lc.computed("grid", { c = of_size(1025) })
  end
  checkeq(grid_for({}, { "grid = (#c + 127) // 128" }), 9, "one line")
  checkeq(grid_for({}, { "n = #c", "grid = (n + 127) // 128" }), 9, "over two lines")
  checkeq(grid_for({}, { "blocks = #c + 127", "x = 1", "grid = blocks // 128" }), 9,
    "through an intermediate, with a line between")
  checkeq(grid_for({}, { "grid, block = (#c + 127) // 128, 128" }), 9, "a multiple assignment")
  checkeq(grid_for({}, { "grid = (#c + 127) // 128; print(grid == 8)" }), 9,
    "a line that also compares")
  checkeq(grid_for({}, { "function blocks(a) return (#a + 127) // 128 end", "grid = blocks(c)" }),
    9, "a function of the learner's")
  checkeq(grid_for({ "n = #c" }, { "grid = (n + 127) // 128" }), 9,
    "a name set a step before the task, from the inputs")
  checkeq(grid_for({ "m = #c", "n = m + 127" }, { "grid = n // 128" }), 9,
    "and the names that one read, set before it")
  checkeq(grid_for({}, { "c = of_size(1000)", "grid = (#c + 127) // 128" }), 9,
    "a chunk that sets an input leaves it the made-up one")
  checkeq(grid_for({}, { "grid = 8" }), 8, "a number typed in comes back unchanged")
  checkeq(grid_for({}, { "n = 1000", "grid = (n + 127) // 128" }), 8,
    "so does a formula of a constant")
  checkeq(grid_for({ "n = 1000" }, { "grid = (n + 127) // 128" }), 8,
    "and of a constant set a step before")
  checkeq(grid_for({ "grid = (#c + 127) // 128" }, { "x = 1" }), 9, "set a step before the task")
  checkeq(grid_for({ "grid = (#c + 127) // 128" }, { "grid = 8" }), 8, "and typed in since")
  checkeq(grid_for({ "x = 1" }, { "y = 2" }), nil, "never set")
  checkeq(grid_for({}, { "grid = #c", "grid = nil" }), nil, "set, then dropped")
  checkeq(env.grid, nil, "the learner's globals are untouched")
  checkeq(#env.c, 1000)
end)

test("computed's replay runs no lesson command, and stops a loop the learner broke off", function()
  local calls = 0
  local env = setmetatable({ check = function() calls = calls + 1 end,
    print = function() calls = calls + 1 end }, { __index = _G })
  typed_in(env, {}, { "while true do end", "check()", "print('x')", "x = a * 2" })
  checkeq(lc.computed("x", { a = 3 }), 6, "the chunks after the loop still run")
  checkeq(calls, 0, "check() and print are not run")
  lc.forget()
  checkeq(lc.computed("x", { a = 3 }), nil, "forget() forgets every chunk")
end)

test("a name the rerun reads that no kept chunk sets is named, not taken for a number typed in",
  function()
  local env = setmetatable({}, { __index = _G })
  local function rerun()
    lc.watch(false)
    lc.typed("r = gpu.n * 2 + math.floor(0.5)", env)
    return lc.computed("r", { dev = { n = 5 } })
  end
  lc.forget()
  lc.typed("gpu = dev", env)
  env.gpu = { n = 3 }
  local v, unseen = rerun()
  checkeq({ v, unseen }, { 10, {} }, "set by a chunk kept: rerun with the made-up device")
  for i = 1, 250 do lc.typed("x = " .. i, env) end
  v, unseen = rerun()
  checkeq(v, 6, "the oldest chunks are dropped past 200: gpu as the prompt has it")
  checkeq(unseen, { "gpu" }, "math is start-up's; gpu was set by a chunk dropped")
  lc.forget()
  lc.typed("gpu = dev", env)
  lc.typed("pad = [[" .. string.rep("x", 150 * 1024) .. "]]", env)
  lc.typed("pad = [[" .. string.rep("y", 150 * 1024) .. "]]", env)
  checkeq(select(2, rerun()), { "gpu" }, "and past 256 KiB")
  local ok, msg = lc.unchanged("r", unseen, "r is typed in")
  checkeq(ok, false)
  checkeq(msg, "the check reruns the lines you typed to see how r was computed, but they read " ..
    "gpu, which none of the lines it keeps sets (set too long ago, or by code other than a " ..
    "line typed): set gpu again with a line of its own, then r, and check() again")
  lc.begin()
  checkeq({ lc.unchanged("r", {}, "r is typed in") }, { false, "r is typed in" })
  checkeq(lc.findings("r is typed in"), { "constant" }, "no name unseen: typed in")
  -- a name the lesson's own code set comes from no chunk typed, and is no sign of one dropped
  local engine = lc.lesson_names(function(k) return k == "gpu" end)
  checkeq(select(2, rerun()), {}, "a lesson's name")
  lc.lesson_names(engine)
  env.gpu = nil
  checkeq(select(2, rerun()), {}, "a name that holds nothing is not named")
  lc.forget()
end)

test("what was typed before lesson_check loaded reaches its reruns", function()
  local saved = package.loaded.lesson_check
  package.loaded.lesson_check = nil
  package.loaded["cudalab.early_input"] = { "gpu = dev", "lesson(1)", bytes = 20 }
  local ok, err = pcall(function()
    local fresh = require "lesson_check"
    checkeq(package.loaded["cudalab.early_input"], nil, "taken over once")
    fresh.watch(false)
    fresh.typed("r = gpu.n * 2")
    checkeq({ fresh.computed("r", { dev = { n = 5 } }) }, { 10, {} })
  end)
  package.loaded.lesson_check = saved
  if not ok then error(err, 0) end
end)
