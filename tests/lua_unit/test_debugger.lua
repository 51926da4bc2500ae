-- test_debugger.lua: the debugger's prompt (lua/debug/debugger.lua) against a fake
-- debugger object that stands in for the paused launch of repl/bind/bind_debugger.c: the
-- commands and their abbreviations, what they print, the message for every
-- bad command (the prompt goes on after each), conditions per lane, and
-- completion. The end-to-end test on the simulator is tests/debugger.sh.

local debugger = require "debugger"

local SOURCE = "__global__ void split(int *a, int n)\n{\n" ..
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) {\n"

-- A launch paused with thread (3,0,0) of block (0,0,0) in focus, warp 0 split across lines 7
-- and 9; i is the thread's linear index in the grid. lines are what readline hands out.
local function fake(lines)
  local s = { lines = lines or {}, breaks = {}, at = { block = 0, thread = 3 }, resumed = nil }
  function s:info()
    return { kernel = "split", file = "split.cu", grid = { x = 2, y = 1, z = 1 },
      block = { x = 64, y = 1, z = 1 }, source = SOURCE }
  end
  function s:where()
    return { reason = "break", bp = 1, lanes = 8, line = 6, block = self.at.block,
      thread = self.at.thread, focus_line = 6, focus_state = "runs", blocks_done = 0,
      blocks_started = 1, blocks_total = 2 }
  end
  function s:warps()
    return {
      { block = 0, warp = 0, state = "runs", live = 0xffffffff, groups = {
        { line = 7, mask = 0x55555555, running = false },
        { line = 9, mask = 0xaaaaaaaa, running = true } } },
      { block = 0, warp = 1, state = "runs", live = 0xffffffff,
        groups = { { line = 3, mask = 0xffffffff, running = true } } },
    }
  end
  function s:read(name, b, t)
    if name == "i" then return b * 64 + t, "int", "int", 1 end
    if name == "loc" then return { 1, 2, 3 }, "int[4]", "int", 4 end
    if name == "p" then return 0x1000, "float *", "pointer", 1 end
    if name == "c" then return 97, "char", "char", 1 end
    return nil, ("no variable '%s' at line 6"):format(name)
  end
  function s:names() return { "n", "i", "a" } end
  function s:shared() return nil end
  function s:global() return nil end -- no __constant__ or __device__ variable in this kernel
  function s:mem(a) return nil, ("address 0x%x is not in any array of the launch"):format(a) end
  function s:set_break(line, has_cond)
    if line == 8 then return nil, "line 8 of split.cu has no code" end
    self.breaks[#self.breaks + 1] = { line = line, cond = has_cond }
    return #self.breaks
  end
  function s:delete_break(id) return self.breaks[id] ~= nil end
  function s:focus(bx, by, bz, tx, ty, tz)
    if tx >= 64 or ty > 0 or tz > 0 then
      return nil, ("thread (%d,%d,%d) does not exist: blocks are (64,1,1)"):format(tx, ty, tz)
    end
    if bx ~= 0 then return nil, ("block (%d,%d,%d) is not in flight"):format(bx, by, bz) end
    self.at = { block = 0, thread = tx }
    return true
  end
  function s:resume(how) self.resumed = how end
  function s:frames() return { { func = "split", line = 6, kernel = true } } end
  function s:select(n)
    if n ~= 0 then return nil, ("there is no frame %d: the thread in focus has 1"):format(n) end
    return true
  end
  function s:func_line(name) return name == "split" and 3 or nil end
  function s:readline()
    local l = table.remove(self.lines, 1)
    if l then return l end
    return nil, "eof"
  end
  return s
end

-- Runs one stop of s with the given lines; returns what it printed (one string) and how it
-- went on.
-- Everything the debugger says while fn runs, one string.
local function said(fn, width)
  local out, saved, term = {}, debugger.out, require "term"
  debugger.out = function(...) out[#out + 1] = table.concat({ ... }, "\t") end
  term.width_override = width or 200
  local ok, err = pcall(fn)
  term.width_override = nil
  debugger.out = saved
  if not ok then error(err, 0) end
  return table.concat(out, "\n")
end

local function one_stop(lines, s)
  s = s or fake(lines)
  local how
  local out = said(function() how = debugger.stop(s) end)
  return out, how, s
end

local function has(out, text) check(out:find(text, 1, true), "no '" .. text .. "' in:\n" .. out) end

test("debugger: a stop is announced with the focus and its line of source", function()
  local out = one_stop({ "continue" })
  has(out, "Breakpoint 1, line 6: block (0,0,0), thread (3,0,0) (warp 0, lanes 0x00000008)")
end)

test("debugger: continue, step and quit say how the launch goes on", function()
  local _, how = one_stop({ "c" })
  checkeq(how, "continue")
  local _, how2, s = one_stop({ "s" })
  checkeq(how2, "step")
  checkeq(s.resumed, "step")
  local _, how5, s5 = one_stop({ "n" })
  checkeq(how5, "step")
  checkeq(s5.resumed, "next") -- n is next, which runs a call to its end, not step
  local _, _, s6 = one_stop({ "until" })
  checkeq(s6.resumed, "until")
  local _, how3 = one_stop({ "quit" })
  checkeq(how3, "quit")
  local out, how4 = one_stop({})
  checkeq(how4, "quit")
  has(out, "quit (end of input): abandoning the launch")
end)

test("debugger: every bad command says what is wrong, and the prompt goes on", function()
  local out, how = one_stop({ "break", "break x", "break 8", "break 6 foo", "break 6 if i >",
    "thread 99999", "block 1", "frobnicate", "print nosuchvar", "print", "print i +",
    "delete 9", "info", "continue now", "thread -1", "c" })
  checkeq(how, "continue")
  has(out, "break needs a line number: break 7, or break 7 if threadIdx.x == 5")
  has(out, "break: the kernel's module has no function 'x'")
  has(out, "break: line 8 of split.cu has no code")
  has(out, "break 6 foo: after the line comes 'if' and a condition")
  has(out, "bad condition 'i >': an operand is missing at the end")
  has(out, "thread (99999,0,0) does not exist: blocks are (64,1,1)")
  has(out, "block (1,0,0) is not in flight")
  has(out, "unknown command 'frobnicate': 'help' lists the commands")
  has(out, "print: no variable 'nosuchvar' at line 6 (in scope here: a, i, n)")
  has(out, "print needs a variable or an expression: print i")
  has(out, "print: bad expression 'i +': an operand is missing at the end")
  has(out, "delete: there is no breakpoint '9'")
  has(out, "info: try 'info break'")
  has(out, "continue takes nothing after it")
  has(out, "thread: '-1' is not a coordinate")
end)

test("debugger: print shows variables and expressions for the thread in focus", function()
  local out = one_stop({ "print i", "p i * 2 + threadIdx.x", "print loc", "print p", "print c",
    "thread 5", "print i", "print i @warp", "print i @lane", "c" })
  has(out, "i = 3")
  has(out, "i * 2 + threadIdx.x = 9")
  has(out, "loc = {1, 2, 3, ... (4 in all)}")
  has(out, "p = (float *) 0x1000")
  has(out, "c = 97 'a'")
  has(out, "Focus: block (0,0,0), thread (5,0,0), line 6")
  has(out, "i = 5")
  has(out, "i for warp 0 of block (0,0,0), lane by lane:")
  has(out, "lanes  8-15:  8  9 10 11 12 13 14 15")
  has(out, "print: '@lane' is not known")
end)

test("debugger: where shows each warp's lanes by line, with the focus", function()
  local out = one_stop({ "where", "c" })
  has(out, "Blocks: 0 finished, 1 in flight, 1 not started.")
  has(out, "  warp 0       line 7    lanes 0x55555555 (16)  waits")
  has(out, "line 9    lanes 0xaaaaaaaa (16)  runs  <- focus: thread (3,0,0)")
  has(out, "  warp 1       line 3    lanes 0xffffffff (32)")
end)

test("debugger: breakpoints are set, listed and deleted", function()
  local out, _, s = one_stop({ "b 4 if threadIdx.x == 3", "info break", "d 1", "info b", "c" })
  checkeq(s.breaks[1], { line = 4, cond = true })
  has(out, "Breakpoint 1 at line 4 of split.cu if threadIdx.x == 3")
  has(out, "  1  line 4    if threadIdx.x == 3  (hit 0 times)")
  has(out, "Deleted breakpoint 1.")
  has(out, "No breakpoints.")
end)

test("debugger: a condition holds for the lanes whose values satisfy it", function()
  local s = fake({ "break 4 if threadIdx.x % 2 == 1 && i > 40", "c" })
  one_stop(nil, s)
  checkeq(debugger.cond(s, 1, 0, 1, 0xffffffff), 0xaaaaaa00) -- odd lanes from 9: i = 32 + lane
  checkeq(debugger.cond(s, 1, 1, 0, 0x0f), 0x0a)             -- block 1: i = 64 + lane
end)

test("debugger: a condition that cannot be evaluated stops, and says why", function()
  local s = fake({ "break 4 if nosuch > 1", "c" })
  one_stop(nil, s)
  checkeq(debugger.cond(s, 1, 0, 0, 0x3), 0x1)
  local out = one_stop({ "c" }, s)
  has(out, "its condition could not be evaluated at thread (0,0,0): no variable 'nosuch' at line 6")
end)

test("debugger: a condition that fails at one lane stops at that lane and names it", function()
  -- i is 3 at lane 3 of warp 0: 100 / (i - 3) divides by zero there, and holds at lane 1 before
  local s = fake({ "break 4 if i == 1 || 100 / (i - 3) > 1000", "c" })
  one_stop(nil, s)
  checkeq(debugger.cond(s, 1, 0, 0, 0xff), 0xa) -- lanes 1 (it holds) and 3 (it fails)
  local out = one_stop({ "c" }, s)
  has(out, "its condition could not be evaluated at thread (3,0,0): division by zero")
end)

test("debugger: Tab completes commands, variables and coordinates", function()
  local s = fake()
  checkeq(debugger.complete(s, "br"), { "break " })
  checkeq(debugger.complete(s, "i"), { "i", "info " })
  checkeq(debugger.complete(s, "threadIdx."), { "threadIdx.x", "threadIdx.y", "threadIdx.z" })
end)

test("debugger: at 80 columns long messages are broken at spaces", function()
  local s = fake({ "break 6 foo", "c" })
  local out = said(function() debugger.stop(s) end, 80)
  for line in out:gmatch("[^\n]+") do check(#line <= 80, "too long: " .. line) end
  has(out, "break 6 foo: after the line comes 'if' and a condition, as in break 6 if\n")
end)

test("debugger: the end of the launch is announced", function()
  local s = fake()
  local out = said(function() debugger.finish(s, "done") end)
  has(out, "The launch of split has finished: its 128 threads ran to the end.")
  out = said(function() debugger.finish(s, "quit") end)
  has(out, "Launch of split abandoned where it stood: its arrays keep what it wrote so far.")
end)
