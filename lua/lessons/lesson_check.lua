-- lesson_check.lua: what a lesson's check uses to test the learner's work
-- (seen in checks as `expect`), and what the engine learns from a failure
-- to choose the hint that answers it.
--
-- A check built on it runs the learner's kernel the way a careful reviewer
-- would: compiled from the learner's own file and by the name the task
-- asked for, over several shapes (a size that is not a multiple of the
-- block, one smaller than a block, one large, and non-square matrices where
-- the kernel takes two dimensions), on random inputs, with the simulator's
-- race checking on, and each output compared with a reference the check
-- computes on the CPU. A failure names the shape, the index, what the
-- kernel gave and what it should have given.
--
-- Design stance:
--  * Every failure carries findings: short tags ("bounds", "race",
--    "value", "launch", "compile", "name", and whatever tag the failing
--    shape carries, such as "tail"). A task's ```hint TAG block answers one
--    of them (lessons/README.md), so a missing __syncthreads() gets the race
--    hint, not the generic one. Findings come both from what this module
--    saw and from the wording of an error raised anywhere in a check, so a
--    plain assert() in a check still gets the right hint for an
--    out-of-bounds access.
--  * Checks stay short: the shapes, the launch and the comparison are here;
--    a check says what the kernel should compute.
--  * Whatever a check changes (the backend, race checking, the order the
--    simulator runs blocks in) is put back, also when the learner's kernel
--    raises.
--  * A GPU runs blocks in no promised order, the simulator in a fixed one
--    unless told otherwise: expect.orders (and orders = true in run and
--    same) runs the learner's kernel in several, so a block that clears an
--    accumulator the others add to, or reads what a later block writes,
--    fails here as it would on a GPU.
--  * Values alone cannot show that a kernel ran (an array filled by
--    cuda.full looks like one a kernel doubled), so the engine keeps
--    cuda.launches on during a task and expect.launched reads it.

local M = {}

-- The findings a ```hint tag may name, and what each means. lesson_parse
-- refuses a tag not listed here, so a misspelt tag cannot sit unused.
M.FINDINGS = {
  compile = "the learner's file does not compile",
  name = "the file has no kernel by the name the task asks for",
  params = "the kernel's parameters are not the ones the task gives",
  launch = "the kernel was not launched (or not on the task's arrays)",
  block = "the kernel ran with another block size than the task asks for",
  constant = "a figure typed in as a number where the task asks for it to be computed",
  cpu = "the result was computed on the CPU and copied to the device",
  bounds = "an out-of-bounds access",
  race = "a shared-memory race (a missing __syncthreads())",
  init = "a read of memory that nothing has written",
  shuffle = "a warp shuffle with a wrong mask or in divergent code",
  value = "a wrong value",
  sectors = "right values, but uncoalesced loads (too many sectors per request)",
  conflicts = "right values, but shared-memory bank conflicts",
  divergence = "right values, but divergent branches",
  contention = "right values, but many atomics on one address that a block could combine first",
  faults = "right values, but page faults on managed memory that a prefetch would have avoided",
  -- shapes: a check tags each shape it runs; a failure on one carries its tag
  tail = "n is not a multiple of the block size",
  small = "n is smaller than one block",
  large = "a large n",
  nonsquare = "a non-square matrix",
  grid = "a launch with a grid other than the one the lesson used",
  overflow = "a NaN or an infinity where every value should be finite",
  slow = "right values, but slower than the task allows",
  order = "a result that depends on the order blocks run in (a race between blocks)",
}

-- The findings of the check now running; the engine clears them (begin) and
-- reads them (findings) around each check.
local found = {}
-- The launch a class challenge times, as the check named it (M.timed), or nil.
local timed_fn = nil

function M.begin() found, timed_fn = {}, nil end

-- timed(fn): names what a class challenge times for this task: fn() makes the
-- launch (the learner's kernel on the full-size arrays). Without it, the
-- grader times the last launch of a kernel the check made. Returns fn.
function M.timed(fn)
  if type(fn) ~= "function" then
    error("expect.timed: expected a function that launches the kernel to time, got " ..
      type(fn), 2)
  end
  timed_fn = fn
  return fn
end

-- The function the check gave M.timed, or nil.
function M.timed_launch() return timed_fn end

-- note(tag...): records findings. Unknown tags are a bug in a check.
-- A nil tag (a shape with none) is skipped.
function M.note(...)
  for i = 1, select("#", ...) do
    local tag = select(i, ...)
    if tag and not M.FINDINGS[tag] then
      error("lesson_check: unknown finding '" .. tostring(tag) .. "'", 2)
    end
    if tag then found[#found + 1] = tag end
  end
end

-- fail(msg, tag...) -> false, msg: the way a check says what it found.
function M.fail(msg, ...)
  M.note(...)
  return false, msg
end

-- Findings read from an error's words, for errors the module did not see
-- raised (a check's own assert, a launch at the prompt inside a check).
local WORDS = {
  { "out%-of%-bounds", "bounds" }, { "shared%-memory race", "race" },
    { "own bit in the mask", "shuffle" },
  { "divergent shuffle", "shuffle" }, { "compile error", "compile" }, { "no kernel named", "name" },
  -- a read of shared memory before the thread that writes it got there: most often a missing
  -- __syncthreads(), so a lesson's race hint answers it too
  { "uninitialised read", "init" }, { "uninitialised read.-__shared__", "race" },
  { "takes %d+ arguments?, got", "params" }, { "^argument %d+ %(", "params" },
    { ": argument %d+ %(", "params" },
}

-- Whether an error is something the kernel did while it ran (so the shape
-- it ran on matters), rather than a launch refused before it ran.
local function ran_into(msg)
  return msg:find("out%-of%-bounds") or msg:find("shared%-memory race") or
    msg:find("__shfl_sync") or
    msg:find("in kernel ", 1, true) ~= nil
end

-- findings(message) -> list of tags, most specific first: what the check
-- noted, then what its message says, without repeats.
function M.findings(msg)
  local out, seen = {}, {}
  local function add(t) if not seen[t] then seen[t] = true; out[#out + 1] = t end end
  for _, t in ipairs(found) do add(t) end
  for _, w in ipairs(WORDS) do
    if type(msg) == "string" and msg:find(w[1]) then add(w[2]) end
  end
  return out
end

-- The Lua chunks the learner typed, for checks that must tell a value
-- computed from the task's inputs from the same number typed in: `typed`
-- since the current step began (a solution run by skip() or verify counts as
-- typed), `earlier` the ones before it, where a name the task's chunks read
-- (gpu = cuda.device() typed a step before) was set. Each keeps the
-- environment it ran in (the globals at the prompt, the grader's sandbox in
-- grading). Memory is bounded: `earlier` keeps the latest EARLIER_MAX chunks
-- and EARLIER_BYTES, `typed` the latest TYPED_MAX and TYPED_BYTES (what it
-- drops goes to earlier), the oldest dropped first; the rerun of a name set
-- by a dropped chunk says so (unseen in computed) rather than taking it for
-- a number typed in.
local typed, earlier = { bytes = 0 }, { bytes = 0 }
local EARLIER_MAX, EARLIER_BYTES = 200, 256 * 1024
local TYPED_MAX, TYPED_BYTES = 1000, 1024 * 1024

-- Drops list's oldest chunks past max chunks or bytes; returns them, oldest first.
local function trim(list, max, bytes)
  local n = 0
  while #list - n > max or list.bytes > bytes do
    n = n + 1
    list.bytes = list.bytes - #list[n].code
  end
  if n == 0 then return {} end
  local len = #list
  local dropped = table.move(list, 1, n, 1, {})
  table.move(list, n + 1, len, 1)
  for i = len - n + 1, len do list[i] = nil end
  return dropped
end

local function add(list, t)
  list[#list + 1] = t
  list.bytes = list.bytes + #t.code
end

-- typed(chunk [, env]): the engine notes each chunk typed at the prompt,
-- and the grader each chunk of a submission it replays, with its sandbox.
function M.typed(chunk, env)
  if type(chunk) ~= "string" then return end
  add(typed, { code = chunk, env = env })
  for _, t in ipairs(trim(typed, TYPED_MAX, TYPED_BYTES)) do add(earlier, t) end
  trim(earlier, EARLIER_MAX, EARLIER_BYTES)
end

-- What was typed at the prompt before this module loaded: start-up keeps it
-- (lua/init.lua) until then.
do
  local early = package.loaded["cudalab.early_input"]
  if type(early) == "table" then
    for _, chunk in ipairs(early) do M.typed(chunk) end
    package.loaded["cudalab.early_input"] = nil
  end
end

-- watch(): starts (and empties) the launch log, where this build has one,
-- and files what was typed before as earlier chunks.
function M.watch(on)
  for _, t in ipairs(typed) do add(earlier, t) end
  trim(earlier, EARLIER_MAX, EARLIER_BYTES)
  typed = { bytes = 0 }
  local cuda = rawget(_G, "cuda")
  local f = type(cuda) == "table" and rawget(cuda, "launches")
  if f then f(on ~= false) end
end

-- forget(): forgets every chunk typed so far, when a lesson is opened afresh
-- for verify or for the next learner a grader replays.
function M.forget() typed, earlier = { bytes = 0 }, { bytes = 0 } end

-- The engine's answer to whether lesson code (an example, a solution) set a
-- global name: such a name comes from no chunk typed, and is no sign of a
-- chunk dropped. Set by lessons.lua (lesson_names).
-- Returns the function it replaces.
local lesson_name = function() return false end
function M.lesson_names(f)
  local old = lesson_name
  lesson_name = f
  return old
end

-- How many VM instructions one chunk may take when computed replays it: a
-- loop the learner stopped with Ctrl-C must not hang every check after it.
local REPLAY_STEPS = 10000000

-- Runs f in a coroutine of its own, stopped after REPLAY_STEPS instructions;
-- its error is dropped, as the prompt went on after it. The hook that the
-- running thread has (the grader's clock) is called too: a new coroutine
-- does not run it.
local function run_bounded(f)
  local outer = debug.gethook()
  local left = REPLAY_STEPS
  local co = coroutine.create(f)
  debug.sethook(co, function(event)
    if type(outer) == "function" then outer(event) end
    left = left - 1000
    if left < 0 then error("runs too long", 0) end
  end, "", 1000)
  coroutine.resume(co)
end

-- Whether chunk text `code` may assign the global `name`: the name (not a
-- field) before an = that is not ==, before a comma (a list of targets), or
-- after `function`. It may say yes wrongly (a call's argument before a
-- comma): a chunk replayed for nothing costs only its time.
local function may_assign(code, name)
  local from = 1
  while true do
    local s, e = code:find("%f[%w_]" .. name .. "%f[^%w_]", from)
    if not s then return false end
    local before, after = code:sub(math.max(1, s - 40), s - 1), code:sub(e + 1, e + 40)
    if before:find("function%s+$") then return true end
    if not before:find("[%.:]%s*$") and (after:find("^%s*=[^=]") or after:find("^%s*=$") or
        after:find("^%s*,")) then
      return true
    end
    from = e + 1
  end
end

-- The lesson commands a replayed chunk must not run (check() typed at the
-- prompt would check again, inside the check; edit() would open an editor).
local INERT = { print = function() end }
for _, c in ipairs(require("lesson_boot").COMMANDS) do
  if c ~= "workfile" then INERT[c] = function() end end
end

-- replay(chunks, name, inputs) -> the value `name` ends with, the set of
-- names read from the chunks' own environments (not set by a replayed chunk
-- nor among inputs), and the scratch table. The chunks run in order in one
-- scratch table over the environment each first ran in, so one chunk sees
-- what an earlier one set (n = #c, then grid = (n + 127) // 128); inputs are
-- read-only there, so a chunk that sets d = cuda.device() keeps the made-up
-- device. reads[k] is true where the environment held a value, false where
-- it held none.
local function replay(chunks, name, inputs)
  local base, reads = _G, {}
  local scratch = setmetatable({}, {
    __index = function(_, k)
      if inputs[k] ~= nil then return inputs[k] end
      if INERT[k] then return INERT[k] end
      local v = base[k]
      reads[k] = reads[k] or v ~= nil
      return v
    end,
    __newindex = function(t, k, v) if inputs[k] == nil then rawset(t, k, v) end end,
  })
  for _, t in ipairs(chunks) do
    base = t.env or _G
    local f = load(t.code, "=typed", "t", scratch)
    if f then run_bounded(f) end
  end
  return rawget(scratch, name), reads, scratch
end

-- The names a replay read that held a value no chunk typed gave them: not
-- set by a replayed chunk, not of start-up's (math, cuda: the globals
-- start-up left, cudalab.standard), not set by the lesson's own code. Such a
-- name was set by a chunk typed too long ago to be kept; sorted.
local function unseen_names(reads, scratch)
  local standard = package.loaded["cudalab.standard"]
  local out = {}
  for k, held in pairs(reads) do
    if held and type(k) == "string" and rawget(scratch, k) == nil and
        not (standard and standard.global(k) ~= nil) and not lesson_name(k) then
      out[#out + 1] = k
    end
  end
  table.sort(out)
  return out
end

-- The earlier chunks that may set a name in reads, added to chosen (indices
-- into earlier); true when one was added.
local function choose(reads, chosen)
  local more = false
  for k in pairs(reads) do
    if type(k) == "string" and k:match("^[%a_][%w_]*$") then
      for i, t in ipairs(earlier) do
        if not chosen[i] and may_assign(t.code, k) then chosen[i], more = true, true end
      end
    end
  end
  return more
end

local replaying = false

-- computed(name, inputs) -> value, unseen: the value the global `name` gets
-- when the chunks typed during this task run again, in order, with `inputs`
-- (a table of globals, such as a device with other figures) in place of the
-- real ones, nil when no typed chunk sets it; and the names the rerun read
-- that no kept chunk sets (unseen_names), a list, empty when none, its field
-- unset true when no kept chunk assigns `name` itself. Every
-- chunk of the task runs, so a formula split over lines, a multiple
-- assignment and a line that also prints come back with the new figures;
-- an earlier chunk runs too, before them, where it
-- may set `name` or a name they read (gpu = cuda.device() typed a step
-- before), and so on for the names it reads. A constant typed in, or copied
-- from a name set to a constant, comes back unchanged. The chunks run in a
-- scratch table over the environment each first ran in (never the real
-- globals when that was a sandbox), so the learner's globals are untouched;
-- print and the lesson commands do nothing there. Turned down: rerunning
-- only the chunks whose text assigns `name`, which missed a formula split
-- over lines and a multiple assignment, and refused them as typed in.
function M.computed(name, inputs)
  if replaying then return nil end
  replaying = true
  local ok, value, unseen = pcall(function()
    local chosen, v, reads, scratch, chunks = {}, nil, nil, nil, nil
    choose({ [name] = true }, chosen)
    for _ = 1, 8 do -- each round adds the chunks that set what the last one read
      chunks = {}
      for i, t in ipairs(earlier) do if chosen[i] then chunks[#chunks + 1] = t end end
      table.move(typed, 1, #typed, #chunks + 1, chunks)
      v, reads, scratch = replay(chunks, name, inputs)
      if not choose(reads, chosen) then break end
    end
    local names = unseen_names(reads, scratch)
    -- no kept line assigns it: set by a file run, inside a function, or by a whole script
    names.unset = true
    for _, t in ipairs(chunks) do
      if may_assign(t.code, name) then names.unset = nil end
    end
    return v, names
  end)
  replaying = false
  if not ok then error(value, 0) end
  return value, unseen
end

-- unchanged(name, unseen, words) -> false, message: the verdict on a value
-- that computed gave back unchanged with other inputs: typed in as a number
-- (words say so, finding "constant"), unless no line kept sets `name` at all
-- (unseen.unset) or the rerun read names no chunk kept sets (unseen,
-- computed's second result): then the check cannot tell, and says which
-- names to set again rather than call the value typed in.
function M.unchanged(name, unseen, words)
  if unseen and unseen.unset then
    return M.fail(string.format("the check reruns the lines you typed to see how %s was " ..
      "computed, but none of the lines it keeps sets %s (set by a file you ran, inside a " ..
      "function, or too long ago): set %s with a line of its own at the prompt, then check() " ..
      "again", name, name, name))
  end
  if unseen and #unseen > 0 then
    local list = table.concat(unseen, ", ")
    return M.fail(string.format("the check reruns the lines you typed to see how %s was " ..
      "computed, but they read %s, which none of the lines it keeps sets (set too long ago, " ..
      "or by code other than a line typed): set %s again with a line of its own, then %s, " ..
      "and check() again", name, list, list, name))
  end
  return M.fail(words, "constant")
end

---------------------------------------------------------------- inputs --

-- rand(n, seed [, lo, hi [, dtype]]) -> a device array of n random floats
-- in [lo, hi) (default [0, 1)), reproducible by seed: inputs a kernel
-- cannot pass by echoing its index, as it can with arange.
function M.rand(n, seed, lo, hi, dtype)
  local a = cuda.rand(n, dtype or "f32", seed)
  lo, hi = lo or 0, hi or 1
  if lo == 0 and hi == 1 then return a end
  local t = a:tolist()
  for i = 1, n do t[i] = lo + (hi - lo) * t[i] end
  return cuda.array(t, dtype or "f32")
end

-- randint(n, seed, lo, hi [, dtype]) -> a device array of n integers in
-- lo..hi (dtype i32 by default), from a small generator of its own so that
-- the math.random a learner may have seeded is left alone.
function M.randint(n, seed, lo, hi, dtype)
  local x, t = (seed * 2654435761 + 12345) % 4294967296, {}
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = lo + (x >> 8) % (hi - lo + 1) -- the high bits: an LCG's low bits repeat quickly
  end
  return cuda.array(t, dtype or "i32")
end

-- rand_and_reference(n, seed, body) -> input, reference: two device arrays
-- of n f32 numbers in [0, 1) from one seed (cuda.rand's), the second with
-- `body` applied to every element by a kernel of the check's own, on the
-- device (body: CUDA C that reads and sets a float x, "x = 2.0f * x"). A
-- shape of millions is then judged whole and exactly: a list of its numbers
-- in Lua would take longer than the launch, and a sample lets a kernel that
-- skips one element in a thousand pass.
local reference_kernels = {}
function M.rand_and_reference(n, seed, body)
  local k = reference_kernels[body]
  if not k then
    k = cuda.kernel(string.format([[
__global__ void check_reference(float *a, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    %s;
    a[i] = x;
  }
}]], body), { name = "check_reference" })
    reference_kernels[body] = k
  end
  local input, reference = cuda.rand(n, "f32", seed), cuda.rand(n, "f32", seed)
  k[{ (n + 255) // 256, 256 }](reference, n)
  return input, reference
end

---------------------------------------------------------------- kernels --

local function basename(path) return (tostring(path):match("([^/]+)$")) end

-- kernel(path, name) -> kernel | false, message (findings compile, name):
-- the kernel called `name`, compiled from the learner's file `path` (a
-- template's one explicit instantiation, name<float>, counts as it).
function M.kernel(path, name)
  local ok, k = pcall(cuda.kernel, path, { name = name })
  if ok then return k end
  local msg = tostring(k)
  if msg:find("no kernel named", 1, true) then
    local instances = {}
    for q in msg:gmatch('"([^"]+)"') do
      if q:sub(1, #name + 1) == name .. "<" then instances[#instances + 1] = q end
    end
    if #instances > 1 then
      return M.fail(string.format("%s instantiates the template %s more than once (%s): the " ..
        "check launches one kernel %s, so instantiate it once, for the type the task's arrays " ..
        "hold", basename(path), name, table.concat(instances, ", "), name), "name")
    end
    return M.fail(string.format("%s has no kernel named %s: keep the name the task gives",
      basename(path), name), "name")
  end
  if msg:find("compile error", 1, true) then
    return M.fail(basename(path) .. " does not compile:\n" .. msg, "compile")
  end
  return M.fail(msg, "compile")
end

-- with(opts, f) -> f's results: runs f on the simulator (unless opts.sim
-- is false) with races failing the launch ("fail": at the prompt they only
-- warn), putting both back afterwards, also when f raises. The simulator by
-- default because it checks every access, every barrier and every shuffle
-- mask: on a GPU, a read one past the end or a missing __syncthreads() often
-- gives the right values by luck, and an illegal address would end the engine.
local function with(opts, f)
  local prev = opts.sim ~= false and cuda.use("sim") or nil
  local sim = cuda.backend() == "sim"
  local race = sim and cuda.simopts().race_check
  -- A read of shared memory no thread wrote, or a barrier only part of a block reaches, can
  -- give the right values by luck: a check refuses them as it refuses races.
  local checks = sim and rawget(cuda, "sanitize") and cuda.sanitize()
  if sim then cuda.simopts { race_check = "fail" } end
  if checks then cuda.sanitize { init = true, sync = true } end
  local res = table.pack(pcall(f))
  if checks then cuda.sanitize(checks) end
  if sim then cuda.simopts { race_check = race } end
  if prev then cuda.use(prev) end
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

---------------------------------------------------------------- block orders --

-- The orders expect.orders runs a check in, and how a failure names each.
-- The forward order is the simulator's default, so a failure in it is an
-- ordinary one and is not named. Every order runs on one host thread, so
-- that it is the order the blocks run in, not only the order several
-- workers take them in (on a machine with as many cores as the grid has
-- blocks, they would all run at once and could hide the race in every
-- order); with the shuffle's seed fixed, a check gives the same verdict on
-- every run and machine. Lesson checks' shapes are small: one thread cost
-- them no time in the lessons' checks.
M.ORDER_SEED = 20240611
local ORDERS = {
  { order = "forward" },
  { order = "reverse", words = "in reverse order" },
  { order = "shuffle", words = "in a shuffled order" },
}

-- A message with the order it came from named.
local function in_order(msg, o)
  if not o.words or type(msg) ~= "string" then return msg end
  return msg .. " (with the blocks run " .. o.words .. ")"
end

-- orders(f) -> true | false, message: runs f() once per block order, the
-- simulator set to it on one host thread (cuda.simopts{block_order =,
-- seed =, threads = 1}), and returns f's first failure with the order
-- named ("... (with the blocks run in reverse order)"), finding "order"
-- first, or true. An error f raises is
-- raised again with the order named. The learner's order, seed and host
-- threads are put back afterwards, also on error. The orders are the
-- simulator's, set whichever backend is active: a check on a GPU machine
-- runs its kernels on the simulator (run's default) inside f, and those
-- launches must see every order too. Without a simulator in the build f
-- runs once, as it is.
function M.orders(f)
  local cuda = rawget(_G, "cuda")
  local ok, before = pcall(function() return cuda.simopts() end)
  if type(cuda) ~= "table" or not rawget(cuda, "simopts") or not ok or type(before) ~= "table" then
    return f()
  end
  local function put_back()
    cuda.simopts { block_order = before.block_order, seed = before.seed,
                   threads = before.threads }
  end
  for _, o in ipairs(ORDERS) do
    cuda.simopts { block_order = o.order, seed = M.ORDER_SEED, threads = 1 }
    local res = table.pack(pcall(f))
    if not res[1] then
      put_back()
      if o.words then table.insert(found, 1, "order") end
      error(in_order(res[2], o), 0)
    end
    if not res[2] then
      put_back()
      if o.words then table.insert(found, 1, "order") end
      return false, in_order(res[3], o)
    end
  end
  put_back()
  return true
end

-- num(v): a value as a message shows it, to float precision.
function M.num(v)
  if math.type(v) == "float" then return string.format("%.7g", v) end
  return tostring(v)
end

local function dims(d)
  if type(d) == "number" then return tostring(d) end
  return table.concat(d, " x ")
end

-- A shape's words in a message: its label, then the launch.
local function where(s, c)
  return string.format("%s (grid %s, blocks of %s)", s.label or "this launch", dims(c.grid),
    dims(c.block))
end

-- Under cuda.sanitize{init = true} (which checks turn on on the simulator)
-- registers, local and shared memory start as 0xcb bytes; a wrong value near
-- what those read as (an int, an f32, an f64) was built on one that was never
-- set. The words that say so, or "".
local POISON = { -875836469, -26711958.0, -1.363115719988382e57 }
function M.poison_note(v)
  if type(v) ~= "number" then return "" end
  for _, p in ipairs(POISON) do
    local near = math.type(p) == "integer" and math.abs(v - p) < 1 << 24
      or math.abs(v - p) <= math.abs(p) * 0.01
    if near then
      return " (near 0xcbcbcbcb, what cuda.sanitize{init = true} starts registers, local " ..
        "and shared memory as: a local variable or a __shared__ accumulator is read before " ..
        "the kernel sets it)"
    end
  end
  return ""
end

-- Compares one output with its reference; false + message on the first
-- element that differs. With out.at (indices from 0), only those elements
-- are compared, want holding theirs in the same order: an array too large to
-- read whole into Lua is judged by a sample.
local function compare(s, c, out)
  local arr, want = out[1], out[2]
  if out.at then
    local got = {}
    for k, idx in ipairs(out.at) do got[k] = arr[idx] end
    arr = got
  end
  local ok, r = cuda.compare(arr, want, { rtol = out.rtol or 1e-5, atol = out.atol or 1e-6 })
  if ok then return true end
  local i = r.first and r.first[1]
  if i and out.at then i = out.at[i + 1] end
  local name = out.name or "the output"
  if not i then
    return M.fail(string.format("on %s, %s is wrong: %s", where(s, c), name, tostring(r)),
      s.tag, "value")
  end
  local msg = string.format("on %s, %s[%d] is %s, want %s", where(s, c), name, i,
    M.num(r.x_first[1]), M.num(r.y_first[1])) .. M.poison_note(r.x_first[1])
  if out.input then msg = msg .. " (" .. out.input(i) .. ")" end
  if r.mismatches > 1 then
    msg = msg .. string.format("; %d of %d elements%s are wrong", r.mismatches, r.n,
      out.at and " looked at" or "")
  end
  return M.fail(msg, s.tag, "value")
end

local function is_array(v)
  local mt = type(v) == "userdata" and getmetatable(v)
  return mt and mt.__name == "cudalab.Array"
end

-- The arrays among args that kernel k takes through a pointer to const
-- (const float *in), each {index =, array =, param =, copy =}, copied now
-- so that what the launch does to them shows: a kernel that writes its
-- input through a cast (const_cast) can give the right output and leave the
-- caller's input wrong.
local function const_inputs(k, args)
  local ok, info = pcall(k.info, k)
  local kept = {}
  for j, p in ipairs(ok and info.params or {}) do
    local a, pointee = args[j], type(p) == "string" and p:match("^(.*)%*")
    if is_array(a) and pointee and pointee:find("%f[%w_]const%f[%W]") then
      local copy = cuda.array(#a, a.dtype)
      a:copyto(copy)
      kept[#kept + 1] = { index = j, array = a, param = p, copy = copy }
    end
  end
  return kept
end

-- The first element where two lists differ, a NaN equal to a NaN, or nil.
local function first_change(x, y)
  for i = 1, #y do
    if x[i] ~= y[i] and not (x[i] ~= x[i] and y[i] ~= y[i]) then return i end
  end
end

-- Fails when the launch changed an array the kernel takes as const; frees
-- the copies.
local function inputs_kept(s, c, kept)
  local why
  for _, q in ipairs(kept) do
    if not why and not cuda.compare(q.array, q.copy, { rtol = 0, atol = 0 }) then
      local now, was = q.array:tolist(), q.copy:tolist()
      local i = first_change(now, was)
      if i then
        why = string.format("on %s, the kernel wrote to argument %d (%s), which it takes as " ..
          "const: element %d was %s and is %s. An input is only read, whatever a cast allows",
          where(s, c), q.index, q.param, i - 1, M.num(was[i]), M.num(now[i]))
      end
    end
    q.copy:free()
  end
  if why then return M.fail(why, s.tag, "value") end
  return true
end

-- run_shapes(spec, k): run's shapes, one after another, on kernel k.
local function run_shapes(spec, k)
  for _, s in ipairs(spec.shapes) do
    local c = spec.case(k, s)
    local kept = const_inputs(k, c.args)
    local ok, err = pcall(function() k[{ c.grid, c.block }](table.unpack(c.args, 1, #c.args)) end)
    if not ok then
      for _, q in ipairs(kept) do q.copy:free() end
      local msg = tostring(err):gsub("^[^\n]-:%d+: ", "")
      if ran_into(msg) then M.note(s.tag) end
      return false, "on " .. where(s, c) .. ": " .. msg
    end
    local untouched, why = inputs_kept(s, c, kept)
    if not untouched then return false, why end
    for _, out in ipairs(c.outputs or {}) do
      local good, m = compare(s, c, out)
      if not good then return false, m end
    end
    if c.stats and cuda.backend() == "sim" then
      local good, m, tag = c.stats(cuda.stats())
      if not good then return M.fail("on " .. where(s, c) .. ": " .. m, tag) end
    end
  end
  return true
end

-- run{file =, name =, shapes = {...}, case = function(k, shape) ... end,
--     sim = false, orders = true} -> true | false, message.
-- Compiles kernel `name` from `file` (findings compile, name), then for each
-- shape calls case(k, shape), which makes the inputs and returns
--   {grid =, block =, args = {...}, outputs = {{array, want, name =,
--    rtol =, atol =, input = function(i) -> words, at = {indices}}, ...},
--    stats = function(st) -> true | false, message, tag}
-- launches k[{grid, block}](args) with race checking on, and compares each
-- output with its reference (with at, only the elements at those indices,
-- from 0, want listing theirs: an array of millions judged by a sample, its
-- end among them); an array the kernel takes as const must be as it was.
-- stats, on the simulator only, judges the launch's
-- counters (cuda.stats()). A shape is
-- a table of the case's own parameters plus label (its words in a message)
-- and tag (a finding when it fails). It all runs on the simulator, whatever
-- the backend, unless sim = false (then race checking and counters apply
-- only when the backend is the simulator). With orders = true every shape
-- runs in each block order (expect.orders), on fresh inputs from case.
function M.run(spec)
  return with(spec, function()
    local k, why = M.kernel(spec.file, spec.name)
    if not k then return false, why end
    if spec.orders then
      return M.orders(function() return run_shapes(spec, k) end)
    end
    return run_shapes(spec, k)
  end)
end

-- Whether the logged launch or call l had every one of args among its arguments.
local function took_all(l, args)
  for _, want in ipairs(args or {}) do
    local has = false
    for j = 1, l.n do if rawequal(l.args[j], want) then has = true end end
    if not has then return false end
  end
  return true
end

-- launched{file =, name =, args = {a, ...}} -> the launch | false, message:
-- kernel `name`, compiled from the learner's `file` (the same PTX), was
-- launched since the task began, with each of `args` (arrays, by identity)
-- among its arguments. The latest such launch is returned, so a check can
-- look at its grid, block and arguments.
function M.launched(spec)
  local launches = rawget(cuda, "launches") and cuda.launches() or {}
  local ptx
  if spec.file then
    local k, why = M.kernel(spec.file, spec.name)
    if not k then return false, why end
    ptx = k:ptx()
  end
  local seen_name = false
  for i = #launches, 1, -1 do
    local l = launches[i]
    if l.name == spec.name and l.kernel then
      seen_name = true
      local ok = (not ptx or l.kernel:ptx() == ptx) and took_all(l, spec.args)
      if ok then return l end
    end
  end
  local what = spec.what or ("kernel " .. spec.name)
  if not seen_name then
    return M.fail(string.format("%s was never launched since this task began: launch it " ..
      "(check() looks at what ran)", what), "launch")
  end
  if ptx then
    return M.fail(string.format("%s ran, but not compiled from your %s on %s: compile it from " ..
      "your file and launch it on them",
      what, basename(spec.file), spec.args_words or "the task's arrays"), "launch")
  end
  return M.fail(string.format("%s ran, but not on %s", what, spec.args_words or
    "the task's arrays"), "launch")
end

-- called{name =, args = {arrays...}, what =, args_words =} -> the latest call of
-- the library function `name` (such as "cuda.blas.gemm") on all of args
-- since the task began, or fails with finding "cpu": values alone cannot show
-- that the library computed a result rather than the CPU, copied up.
function M.called(spec)
  local launches = rawget(cuda, "launches") and cuda.launches() or {}
  for i = #launches, 1, -1 do
    local l = launches[i]
    if l.name == spec.name and not l.kernel then
      local ok = took_all(l, spec.args)
      if ok then return l end
    end
  end
  return M.fail(string.format("%s was not called on %s since this task began: the result must " ..
    "come from %s, not be computed elsewhere and copied in", spec.name,
    spec.args_words or "the task's arrays", spec.what or spec.name), "cpu")
end

---------------------------------------------------------------- data paths --

-- The instructions of the kernel `entry` in PTX text, and of every device function (the
-- module's other kernels are left out), each {op =, dst = {registers}, src = {registers}, ops
-- = {operand texts}}: the first operand's registers are what it writes, but for the operations
-- that write none (st, bar, bra, ...); every other register is read. Predicates are left out:
-- they steer, they carry no data. One instruction per line, as NVRTC writes PTX.
local NO_DEST = { st = true, red = true, bar = true, barrier = true, bra = true, ret = true,
  exit = true, membar = true, fence = true, prefetch = true, prefetchu = true, call = true,
  trap = true, brkpt = true, cp = true, stmatrix = true, mbarrier = true, nanosleep = true,
  pmevent = true, griddepcontrol = true, discard = true, applypriority = true }

local function operands(rest)
  local out, depth, cur = {}, 0, {}
  for ch in rest:gmatch(".") do
    if ch == "{" or ch == "[" or ch == "(" then depth = depth + 1
    elseif ch == "}" or ch == "]" or ch == ")" then depth = depth - 1 end
    if ch == "," and depth == 0 then
      out[#out + 1] = table.concat(cur)
      cur = {}
    else
      cur[#cur + 1] = ch
    end
  end
  out[#out + 1] = table.concat(cur)
  return out
end

local function registers(text, into)
  for r in text:gmatch("%%[%a_][%w_]*") do
    if not r:match("^%%p%d") then into[#into + 1] = r end
  end
  return into
end

local function instructions(ptx, entry)
  local out, mine = {}, false
  for line in ptx:gmatch("[^\n]+") do
    local body = line:gsub("//.*", ""):match("^%s*(.-)%s*;%s*$")
    local name = line:match("%.entry%s+([^%s(]+)")
    if name then mine = name == entry
    elseif line:find("%.func") and not line:find("%.extern") then mine = true end
    if mine and body and not body:find("^[%.%${}]") then
      body = body:gsub("^@!?%%[%w_]+%s+", "")
      local op, rest = body:match("^([%a][%w%._]*)%s*(.*)$")
      if op then
        local ops = operands(rest)
        local ins = { op = op, dst = {}, src = {}, ops = ops }
        local first = 1
        if not NO_DEST[op:match("^[^%.]+")] and not op:find("^wmma%.store") then
          registers(ops[1] or "", ins.dst)
          first = 2
        end
        for k = first, #ops do registers(ops[k], ins.src) end
        out[#out + 1] = ins
      end
    end
  end
  return out
end

-- The state space an ld or st names: "global", "shared", "local", "param", "const", or
-- "generic" when it names none.
local function space(op)
  for _, s in ipairs({ "global", "shared", "local", "param", "const" }) do
    if op:find("%." .. s .. "%f[^%w]") then return s end
  end
  return "generic"
end

-- through_shared(k) -> true | false, words: whether every value kernel k stores to global
-- memory comes to it through shared memory: traced back in its PTX from each global (or
-- generic) store, through the arithmetic that made it, no value read from global memory
-- reaches the store without a shared-memory load between. A kernel that exchanges or tiles
-- through __shared__ passes; one that reads its input straight from global memory into the
-- output (a reverse read, a naive product) does not, also when it touches shared memory for
-- show. Only for kernels whose output is meant to come from shared memory alone: an output
-- read back and updated (b[i] += ...) comes from global memory too.
function M.through_shared(k)
  local code = instructions(k:ptx(), k.entry)
  local defs = {}
  for i, ins in ipairs(code) do
    for _, r in ipairs(ins.dst) do
      defs[r] = defs[r] or {}
      table.insert(defs[r], i)
    end
  end
  local seen = {}
  -- whether register r holds, on some path, a value loaded from global memory
  local function from_global(r)
    if seen[r] then return false end
    seen[r] = true
    for _, i in ipairs(defs[r] or {}) do
      local ins = code[i]
      if ins.op:find("^ldu?%.") or ins.op:find("^tex%.") then
        if space(ins.op) == "global" or ins.op:find("^tex%.") then return true end
      else
        for _, s in ipairs(ins.src) do if from_global(s) then return true end end
      end
    end
    return false
  end
  for _, ins in ipairs(code) do
    local sp = ins.op:find("^st%.") and space(ins.op)
    if sp == "global" or sp == "generic" then
      -- the address is the first operand, the value stored the rest
      local value = {}
      for j = 2, #ins.ops do registers(ins.ops[j], value) end
      for _, r in ipairs(value) do
        if from_global(r) then
          return false, k.name .. " stores to global memory a value it read from global " ..
            "memory without going through shared memory"
        end
      end
    end
  end
  return true
end

-- barrier_needed{file =, name =, launch = function(k) ... end} -> true | false | nil:
-- whether the learner's kernel needs its __syncthreads(). The kernel is compiled again with
-- every __syncthreads() taken out and launch(k) runs it, on the simulator with the race and
-- init checks on: a kernel whose threads exchange data through shared memory then races (or
-- reads shared memory before the thread that writes it got there), true. false when it runs
-- clean (no thread reads what another wrote: the barrier guards nothing); nil when it cannot
-- be told (the source does not compile so, or keeps a barrier of another form, such as
-- cg::this_thread_block().sync()).
function M.barrier_needed(spec)
  local src = require("lesson_run").read_file(spec.file)
  if not src then return nil end
  return with(spec, function()
    local ok, k = pcall(cuda.kernel, "#define __syncthreads() ((void)0)\n" .. src,
      { name = spec.name })
    if not ok then return nil end
    local ptx = k:ptx()
    if ptx:find("bar%.") or ptx:find("barrier%.") then return nil end
    local ran, err = pcall(spec.launch, k)
    if ran then return false end
    err = tostring(err)
    if err:find("shared-memory race", 1, true) or err:find("uninitialised read", 1, true) then
      return true
    end
    return nil
  end)
end

---------------------------------------------------------------- predictions --

-- model_time(setup) -> milliseconds: the modelled H200 time (cuda.time's
-- median) of the function setup() returns, on the simulator with its
-- performance model on, whatever the backend and the learner's simopts,
-- which are put back. setup runs on the simulator too and makes the
-- arrays and kernels; only what it returns is timed. A prediction is
-- judged against the model because it is deterministic: a GPU's run-to-run
-- noise could flip a close call.
function M.model_time(setup)
  local prev = cuda.use("sim")
  local model = cuda.simopts().model
  cuda.simopts { model = true }
  local ok, t = pcall(function() return cuda.time(setup()) end)
  cuda.simopts { model = model }
  cuda.use(prev)
  if not ok then error(t, 0) end
  return t.median
end

-- direction(predicted, measured, words) -> true | false, message: whether a
-- predicted ratio is on the same side of 1 as the measured one (finding
-- value). A prediction is a guess; its direction (faster or slower) is what
-- a learner should get right before measuring. words(r) says what a ratio r
-- means ("the tiled kernel is 1.11 times faster").
function M.direction(predicted, measured, words)
  if type(predicted) ~= "number" or predicted ~= predicted or predicted <= 0 then
    return M.fail("the prediction should be a ratio, a number above 0: above 1 for faster, " ..
      "below 1 for slower", "value")
  end
  if (predicted > 1) == (measured > 1) and (predicted == 1) == (measured == 1) then return true end
  return M.fail(string.format("you predicted %s, but %s (modelled H200 time): the other side of 1",
    M.num(predicted), words(measured)), "value")
end

-- The copies same_in_orders launches on: the log records those launches
-- too, and they are not the learner's.
local replayed = setmetatable({}, { __mode = "k" })

-- The latest launch of `kernel` the learner made (the launch log's), if its
-- arguments are all still alive (the log keeps no array alive).
local function last_launch(kernel)
  local launches = rawget(cuda, "launches") and cuda.launches() or {}
  for i = #launches, 1, -1 do
    local l = launches[i]
    local mine = rawequal(l.kernel, kernel)
    for j = 1, l.n do mine = mine and not replayed[l.args[j]] end
    if mine then
      for j = 1, l.n do if l.args[j] == nil then return nil end end
      return l
    end
  end
end

-- Launch l once more on copies of its arrays as they are now: the copies,
-- indexed by argument; raises what the launch raises.
local function relaunch(l)
  local args, copies = {}, {}
  for j = 1, l.n do
    local a = l.args[j]
    if is_array(a) then
      copies[j] = cuda.array(#a, a.dtype)
      replayed[copies[j]] = true
      a:copyto(copies[j])
      a = copies[j]
    end
    args[j] = a
  end
  local g, b = l.grid, l.block
  l.kernel[{ { g.x, g.y, g.z }, { b.x, b.y, b.z }, l.shared or 0 }](table.unpack(args, 1, l.n))
  return copies
end

-- Whether each order's copies hold what the forward order's (first) do:
-- true, or false and a message naming the first argument and element that
-- differ (finding "value").
local function same_values(copies, first, words)
  for j, c in pairs(copies) do
    local ok, r = cuda.compare(c, first[j], { rtol = 1e-5, atol = 1e-6 })
    if not ok then
      local at = r.first and r.first[1]
      return M.fail(string.format("%s's launch, run again on the same arrays, gives other " ..
        "values: argument %d%s", words, j, at and string.format("[%d] is %s, not %s as " ..
        "in the forward order", at, M.num(r.x_first[1]), M.num(r.y_first[1])) or ""), "value")
    end
  end
  return true
end

-- Frees the copies now rather than when the collector comes (a large
-- array copied once per order).
local function free_all(copies)
  for _, c in pairs(copies) do c:free() end
end

-- Whether the learner's launch l gives the same arrays in every block
-- order: it runs again on copies of its arrays as they now are, in each
-- order (expect.orders), and each order's copies are compared with the
-- forward order's. A launch that cannot run again forward (an argument
-- that no longer works there) is not judged.
local function same_in_orders(l, words)
  local first, judged = nil, true
  -- races within a block are not this function's question: race_check's
  -- warnings would print once per order
  local race = cuda.simopts().race_check
  cuda.simopts { race_check = false }
  local res = table.pack(pcall(M.orders, function()
    local ok, copies = pcall(relaunch, l)
    if not first then
      judged = ok
      first = ok and copies or {}
      return true
    end
    if not judged then return true end
    if not ok then
      return M.fail(string.format("%s's launch fails when run again: %s", words,
        (tostring(copies):gsub("^[^\n]-:%d+: ", ""))), "value")
    end
    local good, why = same_values(copies, first, words)
    free_all(copies)
    return good, why
  end))
  cuda.simopts { race_check = race }
  free_all(first or {})
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- same(kernel, file, name, words [, {orders = true}]) -> true | false,
-- message: `kernel` is kernel `name` compiled from the learner's `file` (an
-- earlier or another source does not count). With orders = true, on the
-- simulator, the learner's latest launch of it (the launch log's) also runs
-- again in each block order on copies of its arrays, and must give the same
-- values in all: a kernel whose result depends on the order its blocks run
-- in fails, with the order named (finding "order").
function M.same(kernel, file, name, words, opts)
  local ok_type = type(kernel) == "userdata" and pcall(function() return kernel.name end)
  if not ok_type then
    return M.fail(string.format("%s should be a kernel: %s = cuda.kernel(workfile %q)", words,
      words, basename(file)), "launch")
  end
  local mine, why = M.kernel(file, name)
  if not mine then return false, why end
  if kernel.name ~= name or kernel:ptx() ~= mine:ptx() then
    return M.fail(string.format("%s is kernel %s, not the %s of your %s: %s = " ..
      "cuda.kernel(workfile %q)",
      words, kernel.name, name, basename(file), words, basename(file)), "launch")
  end
  local l = opts and opts.orders and cuda.backend() == "sim" and last_launch(kernel)
  if l then return same_in_orders(l, words) end
  return true
end

return M
