-- debugger.lua: the prompt of k:debug (repl/bind/bind_debugger.c), "(cuda-debug) ",
-- and what its commands print.
--
-- The C side runs the launch on the simulator and calls three functions here:
-- stop(s) at each stop, which reads commands until one says how to go on
-- ("continue", "step" or "quit"); cond(s, bp, block, warp, lanes), which says
-- for which lanes of a warp a breakpoint's condition holds; and finish(s, how)
-- once the launch is over. complete(s, word) answers Tab. `s` is the debugger object:
-- its methods look at the paused launch (where, warps, read, names, focus)
-- and set breakpoints; lines come from s:readline, through the console.
--
-- Design stance: commands are cuda-gdb's names and shapes (break, continue,
-- step, print, thread, block, where, list, info break, delete, quit), so that
-- what a learner learns here carries over to a GPU; what they print is said in
-- the kernel's own terms (its lines, its threads' coordinates, its variables'
-- names). Conditions and print take C expressions (cexpr.lua), evaluated per
-- thread. Every bad command says what was wrong, and the prompt comes back.

local ipairs, math, pairs, pcall, print = ipairs, math, pairs, pcall, print
local setmetatable = setmetatable
local string, table, tonumber, tostring, type = string, table, tonumber, tostring, type

local cexpr = require "cexpr"
local ctype = require "ctype"
local term = require "term"

local debugger = {}

-- Where the debugger's text goes: print, unless a test collects it. Lines longer than the
-- terminal are broken at spaces, as the prompt's results are, so no word is split.
debugger.out = print
local function say(...) debugger.out(term.fit(table.concat({ ... }, "\t"))) end

debugger.PROMPT = "(cuda-debug) "

-- Per debugged launch (keyed by its debugger object): breakpoints, the source's lines, the last
-- command.
local states = setmetatable({}, { __mode = "k" })

local function state(s)
  local S = states[s]
  if not S then
    local info = s:info()
    local lines = {}
    local src = (info.source or ""):gsub("\n$", "")
    for l in (src .. "\n"):gmatch("(.-)\r?\n") do lines[#lines + 1] = l end
    S = { info = info, lines = lines, bps = {}, order = {} }
    states[s] = S
  end
  return S
end

-- ---- coordinates ----

local function dims3(lin, d)
  return lin % d.x, (lin // d.x) % d.y, lin // (d.x * d.y)
end

local function xyz(x, y, z) return ("(%d,%d,%d)"):format(x, y, z) end

local function block_text(S, b) return xyz(dims3(b, S.info.grid)) end
local function thread_text(S, t) return xyz(dims3(t, S.info.block)) end

local function hex(mask) return ("0x%08x"):format(mask) end

local function popcount(m)
  local n = 0
  while m ~= 0 do
    m = m & (m - 1)
    n = n + 1
  end
  return n
end

-- ---- values ----

local function dim_table(x, y, z) return { x = x, y = y, z = z } end

-- A variable as s:read gives it (value, C spelling of its type, kind, count), as a value and
-- its type (ctype.lua); raises with the debugger's message when it has none.
local function typed(name, v, ty, kind, count)
  if kind == nil then error(ty, 0) end
  if kind == "other" then error(("%s is a %s, which print cannot show"):format(name, ty), 0) end
  local t = ctype.parse(ty) or ctype.INT
  if type(v) == "table" then
    v.n = count
    if t.k ~= "a" then t = ctype.array(t, count) end
  end
  if type(v) == "boolean" then v = v and 1 or 0 end
  if t.k == "i" and math.type(v) == "integer" then v = ctype.wrap(v, t) end
  return v, t
end

-- The type of __shared__ variable `name` of `bytes` bytes, from its declaration in the source
-- (NVRTC's debug information leaves shared variables out): "__shared__ float tile[16][17]". A
-- size the source gives by a name (TILE) is worked out from the bytes when it is the only one;
-- else the array is shown flat. Nil when the source has no such declaration.
local function shared_type(S, name, bytes)
  local src = table.concat(S.lines, "\n")
  for decl in src:gmatch("__shared__([^;]*);") do
    local before, rest = decl:match("^(.-)%f[%w_]" .. name .. "%f[^%w_](.*)$")
    if before and not before:find("[%[=]") then
      local base = ctype.parse((before:gsub(",.*$", "")))
      if base and base.size > 0 then
        local dims, unknown = {}, 0
        for d in rest:match("^%s*([%[%]%w_%s%*%+%-]*)"):gmatch("%[(.-)%]") do
          dims[#dims + 1] = math.tointeger(tonumber(d))
          if not dims[#dims] then unknown = unknown + 1 end
        end
        local known = 1
        for i = 1, #dims do known = known * (dims[i] or 1) end
        local total = bytes // base.size
        if unknown == 1 then
          for i = 1, #dims do dims[i] = dims[i] or total // known end
        elseif unknown > 1 then
          dims = { total }
        end
        local t = base
        for i = #dims, 1, -1 do t = ctype.array(t, dims[i]) end
        return t
      end
    end
  end
end

-- The context cexpr evaluates in, for thread t of block b: the built-in coordinates, the
-- variables, and memory as that thread sees it.
local function getter(s, S, b, t)
  local info = S.info
  local builtin = {
    threadIdx = dim_table(dims3(t, info.block)),
    blockIdx = dim_table(dims3(b, info.grid)),
    blockDim = info.block,
    gridDim = info.grid,
  }
  return {
    get = function(name)
      if builtin[name] ~= nil then return builtin[name], ctype.DIM3 end
      if name == "warpSize" then return 32, ctype.INT end
      local v, ty, kind, count = s:read(name, b, t)
      if kind == nil then
        local addr, bytes = s:shared(name)
        local st = addr and shared_type(S, name, bytes)
        if st then return cexpr.load({ mem = function(a, n)
            local got, why = s:mem(a, n, b, t)
            return got or error(why, 0)
          end }, addr, st), st, addr end
      end
      return typed(name, v, ty, kind, count)
    end,
    mem = function(addr, n)
      local bytes, why = s:mem(addr, n, b, t)
      if not bytes then error(why, 0) end
      return bytes
    end,
  }
end

local function char_text(v)
  if v >= 32 and v < 127 then return ("'%s'"):format(string.char(v)) end
  local named = { [0] = "\\0", [9] = "\\t", [10] = "\\n", [13] = "\\r" }
  return named[v] and ("'%s'"):format(named[v]) or ("'\\x%02x'"):format(v & 0xff)
end

-- One value of C type t as print shows it.
local function value_text(v, t)
  if type(v) == "table" and v.x then return ("{x = %d, y = %d, z = %d}"):format(v.x, v.y, v.z) end
  if type(v) == "table" then
    local e = t and t.k == "a" and t.elem or nil
    while e and e.k == "a" do e = e.elem end
    local parts = {}
    for i = 1, #v do parts[i] = value_text(v[i], e) end
    local more = (v.n or #v) > #v and (", ... (%d in all)"):format(v.n) or ""
    return "{" .. table.concat(parts, ", ") .. more .. "}"
  end
  if type(v) == "boolean" then return tostring(v) end
  if not t then return tostring(v) end
  if t.k == "b" then return v ~= 0 and "true" or "false" end
  if t.k == "p" then return ("(%s) 0x%x"):format(t.name, v) end
  if t.k == "i" and t.size == 1 and t.name:find("char") then
    return ("%d %s"):format(v, char_text(v & 0xff))
  end
  if t.k == "i" and not t.signed and t.size == 8 then return ctype.unsigned_text(v) end
  if math.type(v) == "float" then return ("%." .. (t.size == 8 and 17 or 9) .. "g"):format(v) end
  return tostring(v)
end

-- ---- the source ----

local function source_line(S, n)
  local text = S.lines[n]
  if not text then return nil end
  return ("%4d | %s"):format(n, text)
end

local function show_line(S, n)
  local l = n and n > 0 and source_line(S, n)
  if l then say(l) end
end

-- ---- stops ----

local function focus_text(S, st)
  return ("block %s, thread %s"):format(block_text(S, st.block), thread_text(S, st.thread))
end

-- Where the thread in focus is, when the warp that stopped runs another path than its own.
local function focus_note(S, st)
  if st.focus_state == "exited" then
    return ("thread %s has exited"):format(thread_text(S, st.thread))
  elseif st.focus_line ~= st.line and st.focus_line > 0 then
    return ("thread %s waits at line %d for the other lanes of its warp"):format(
      thread_text(S, st.thread), st.focus_line)
  end
end

local function announce(s, S, st)
  local warp = st.thread // 32
  if st.reason == "start" then
    local i = S.info
    say(("Debugging %s<<<%s, %s>>> on the simulator, stopped before its first instruction."):format(
      i.kernel, xyz(i.grid.x, i.grid.y, i.grid.z), xyz(i.block.x, i.block.y, i.block.z)))
    say(("Focus: %s, line %d. Set breakpoints with 'break LINE', then 'continue'; 'help' lists "
      .. "the commands."):format(focus_text(S, st), st.focus_line))
    show_line(S, st.focus_line)
    return
  end
  if st.reason == "break" then
    local bp = S.bps[st.bp]
    if bp then bp.hits = bp.hits + 1 end
    say(("Breakpoint %d, line %d: %s (warp %d, lanes %s)"):format(st.bp, st.line,
      focus_text(S, st), warp, hex(st.lanes)))
    if bp and bp.err then
      say(("  its condition could not be evaluated: %s"):format(bp.err))
      bp.err = nil
    end
  elseif st.reason == "step" then
    say(("Line %d: %s (warp %d runs lanes %s here)"):format(st.line, focus_text(S, st), warp,
      hex(st.lanes)))
  elseif st.reason == "exited" then
    say(("The thread in focus has exited; focus moves to %s, line %d."):format(
      focus_text(S, st), st.line))
  elseif st.reason == "fault" then
    say(("The launch failed at line %d: %s (warp %d). It stops here so that you can look at "
      .. "the thread at fault (print, where, list); continue, step or quit end the launch with "
      .. "this error:"):format(st.line, focus_text(S, st), warp))
    for l in (st.fault or "(no message)"):gmatch("[^\n]+") do say("  " .. l) end
  elseif st.reason == "interrupt" then
    say(("Interrupted at line %d: %s (warp %d, lanes %s)"):format(st.line, focus_text(S, st),
      warp, hex(st.lanes)))
  end
  local note = focus_note(S, st)
  if note then say("  " .. note) end
  show_line(S, st.line)
end

-- ---- commands ----

local HELP = [[
Commands (a unique start will do; b, c, s, p, w, l and q are short for some):
  break LINE [if COND]  stop where a thread reaches LINE of the kernel's
                        source; with COND (in C: threadIdx.x == 5 && i > 100)
                        only for threads where it holds
  delete [N]            remove breakpoint N (every one, without N)
  info break            list the breakpoints
  continue              run to the next breakpoint, or to the end
  step                  run the warp in focus until it reaches another line
  print EXPR            a variable, by its name in the source, or a C
                        expression, for the thread in focus, with C's types
                        (an int overflows as the kernel's does): x[i] and
                        *p read memory, &x[i], casts, ?:, sizeof, x[0]@8
                        (8 elements), __shared__ arrays by name;
                        print EXPR @warp shows it for each lane of its warp
  thread X [Y Z]        focus on another thread of the block in focus
  block X [Y Z]         focus on another block in flight (same thread)
  where                 the warps of the blocks in flight: their lanes by line
  list [LINE]           the source around the line in focus (or LINE)
  quit                  abandon the launch: arrays keep what it wrote so far
  help                  this list
Ctrl-C while the kernel runs stops it; Ctrl-D at this prompt quits. A launch
that fails (out of bounds, a cuda.sanitize check, never finishing) stops here
at the thread at fault; going on from there ends it with the error.]]

local COMMANDS = { "break", "continue", "step", "next", "print", "thread", "block", "where",
  "list", "delete", "info", "quit", "help" }
local ALIASES = { b = "break", c = "continue", s = "step", n = "step", next = "step",
  p = "print", w = "where", bt = "where", l = "list", q = "quit", h = "help", d = "delete",
  i = "info", t = "thread", k = "quit", kill = "quit" }

-- The full name of a command word: an alias, the command itself, or its one unique start.
local function command_of(word)
  if ALIASES[word] then return ALIASES[word] end
  local found
  for _, c in ipairs(COMMANDS) do
    if c == word then return c end
    if c:sub(1, #word) == word then
      if found then return nil, ("'%s' could be %s or %s"):format(word, found, c) end
      found = c
    end
  end
  if found then return ALIASES[found] or found end
  return nil, ("unknown command '%s': 'help' lists the commands"):format(word)
end

local function complain(msg) say(msg) end

local cmd = {}

function cmd.help() say(HELP) end

function cmd.quit() return "quit" end
function cmd.continue() return "continue" end

function cmd.step(s)
  s:resume(true)
  return "step"
end

function cmd.list(s, S, args)
  local st = s:where()
  local at = st.focus_line > 0 and st.focus_line or st.line
  if args ~= "" then
    at = math.tointeger(tonumber(args))
    if not at then return complain(("list: '%s' is not a line number"):format(args)) end
  end
  if #S.lines == 0 then return complain("list: the kernel's source is not known") end
  local from = math.max(1, at - 5)
  local to = math.min(#S.lines, from + 10)
  local marks = {}
  for _, bp in pairs(S.bps) do marks[bp.line] = true end
  for n = from, to do
    local mark = n == st.focus_line and "=>" or marks[n] and " *" or "  "
    say(mark .. source_line(S, n))
  end
end

function cmd.break_(s, S, args)
  local line_word, rest = args:match("^(%S+)%s*(.-)%s*$")
  if not line_word then
    return complain("break needs a line number: break 7, or break 7 if threadIdx.x == 5")
  end
  local line = math.tointeger(tonumber(line_word))
  if not line or line < 1 then
    return complain(("break: '%s' is not a line number (lines start at 1)"):format(line_word))
  end
  local src, fn = nil, nil
  if rest ~= "" then
    src = rest:match("^if%s+(.-)$") or rest:match("^if(%(.*)$")
    if not src or src == "" then
      return complain(("break %d %s: after the line comes 'if' and a condition, as in "
        .. "break %d if threadIdx.x == 5"):format(line, rest, line))
    end
    local err
    fn, err = cexpr.compile(src)
    if not fn then return complain(("bad condition '%s': %s"):format(src, err)) end
  end
  local id, err = s:set_break(line, fn ~= nil)
  if not id then return complain("break: " .. err) end
  S.bps[id] = { id = id, line = line, src = src, cond = fn, hits = 0 }
  S.order[#S.order + 1] = id
  say(("Breakpoint %d at line %d of %s%s"):format(id, line, S.info.file,
    src and (" if " .. src) or ""))
  show_line(S, line)
end

function cmd.delete(s, S, args)
  if args == "" then
    for id in pairs(S.bps) do s:delete_break(id) end
    S.bps, S.order = {}, {}
    return say("Deleted every breakpoint.")
  end
  local id = math.tointeger(tonumber(args))
  if not id or not S.bps[id] or not s:delete_break(id) then
    return complain(("delete: there is no breakpoint '%s' (info break lists them)"):format(args))
  end
  S.bps[id] = nil
  say(("Deleted breakpoint %d."):format(id))
end

function cmd.info(_, S, args)
  if args == "" or ("breakpoints"):sub(1, #args) ~= args then
    return complain("info: try 'info break' (the breakpoints); 'where' shows the warps")
  end
  local any = false
  for _, id in ipairs(S.order) do
    local bp = S.bps[id]
    if bp then
      any = true
      say(("%3d  line %-4d %s%s"):format(id, bp.line,
        bp.src and ("if " .. bp.src .. "  ") or "", ("(hit %d time%s)"):format(bp.hits,
        bp.hits == 1 and "" or "s")))
    end
  end
  if not any then say("No breakpoints.") end
end

-- Up to three numbers: x, y and z (missing ones 0), or nil and a message.
local function coords(what, args)
  local nums = {}
  for w in args:gmatch("[^%s,()]+") do
    local v = math.tointeger(tonumber(w))
    if not v or v < 0 then return nil, ("%s: '%s' is not a coordinate"):format(what, w) end
    nums[#nums + 1] = v
  end
  if #nums > 3 then return nil, ("%s takes at most three numbers: x y z"):format(what) end
  return nums
end

local function show_focus(s, S)
  local st = s:where()
  say(("Focus: %s, %s"):format(focus_text(S, st), st.focus_state == "exited" and "exited"
    or ("line %d"):format(st.focus_line)))
  show_line(S, st.focus_state ~= "exited" and st.focus_line or nil)
end

local function refocus(s, S, what, args)
  local st = s:where()
  if args == "" then return show_focus(s, S) end
  local n, err = coords(what, args)
  if not n then return complain(err) end
  local bx, by, bz = dims3(st.block, S.info.grid)
  local tx, ty, tz = dims3(st.thread, S.info.block)
  if what == "thread" then
    tx, ty, tz = n[1], n[2] or 0, n[3] or 0
  else
    bx, by, bz = n[1], n[2] or 0, n[3] or 0
  end
  local ok, why = s:focus(bx, by, bz, tx, ty, tz)
  if not ok then return complain(why) end
  show_focus(s, S)
end

function cmd.thread(s, S, args) return refocus(s, S, "thread", args) end
function cmd.block(s, S, args) return refocus(s, S, "block", args) end

-- print EXPR @warp: the value for every lane of the warp in focus, eight to a row.
local function print_warp(s, S, src, fn, st)
  local warp = st.thread // 32
  local vals, none = {}, false
  for l = 0, 31 do
    local t = warp * 32 + l
    local ok, v = false, nil
    if t < S.info.block.x * S.info.block.y * S.info.block.z then
      local ty
      ok, v, ty = pcall(fn, getter(s, S, st.block, t))
      if ok then v = value_text(v, ty) end
    end
    vals[l] = ok and v or "?"
    none = none or not ok
  end
  local width = 1
  for l = 0, 31 do width = math.max(width, #vals[l]) end
  say(("%s for warp %d of block %s, lane by lane:"):format(src, warp, block_text(S, st.block)))
  for row = 0, 3 do
    local cells = {}
    for l = row * 8, row * 8 + 7 do cells[#cells + 1] = ("%" .. width .. "s"):format(vals[l]) end
    say(("  lanes %2d-%-2d: %s"):format(row * 8, row * 8 + 7, table.concat(cells, " ")))
  end
  if none then say("  (? : no value there: an exited thread, or not in scope at its line)") end
end

function cmd.print(s, S, args)
  local src, at = args:match("^(.-)%s*@%s*(%a+)%s*$")
  if not src then src = args end
  if at and at ~= "warp" then
    return complain(("print: '@%s' is not known; print EXPR @warp shows every lane"):format(at))
  end
  if src == "" then return complain("print needs a variable or an expression: print i") end
  local inner = src:match("^%((.*)%)$") -- print(i), as a Lua user types it, shows as i
  if inner and inner:gsub("%b()", ""):find("[()]") == nil then src = inner end
  local fn, err = cexpr.compile(src)
  if not fn then return complain(("print: bad expression '%s': %s"):format(src, err)) end
  local st = s:where()
  if at then return print_warp(s, S, src, fn, st) end
  local ok, v, ty = pcall(fn, getter(s, S, st.block, st.thread))
  if not ok then
    local name = src:match("^%s*([%a_][%w_]*)%s*$")
    return complain("print: " .. v .. (name and debugger.names_hint(s, S, st, name) or ""))
  end
  say(("%s = %s"):format(src, value_text(v, ty)))
end

-- " (in scope here: i, n, a)" after an unknown name, or "".
function debugger.names_hint(s, S, st, name)
  local names = s:names(st.block, st.thread)
  for _, n in ipairs(names) do if n == name then return "" end end
  if #names == 0 then return "" end
  table.sort(names)
  return (" (in scope here: %s)"):format(table.concat(names, ", "))
end

-- One warp's line in `where`: its state, or its groups of lanes by line.
local function warp_rows(S, w, focus_block, focus_thread)
  local rows = {}
  if w.state == "exited" or #w.groups == 0 then
    return { "exited" }
  end
  for _, g in ipairs(w.groups) do
    local row = ("line %-4d lanes %s (%d)"):format(g.line, hex(g.mask), popcount(g.mask))
    if w.state == "barrier" then row = row .. "  at __syncthreads()"
    elseif #w.groups > 1 then row = row .. (g.running and "  runs" or "  waits") end
    local lane = focus_thread - w.warp * 32
    if w.block == focus_block and lane >= 0 and lane < 32 and g.mask & (1 << lane) ~= 0 then
      row = row .. ("  <- focus: thread %s"):format(thread_text(S, focus_thread))
    end
    rows[#rows + 1] = row
  end
  return rows
end

function cmd.where(s, S)
  local st, warps = s:where(), s:warps()
  local by_block, blocks = {}, {}
  for _, w in ipairs(warps) do
    if not by_block[w.block] then
      by_block[w.block] = {}
      blocks[#blocks + 1] = w.block
    end
    table.insert(by_block[w.block], w)
  end
  local waiting = st.blocks_total - st.blocks_started
  say(("Blocks: %d finished, %d in flight, %d not started."):format(st.blocks_done,
    #blocks, waiting))
  for _, b in ipairs(blocks) do
    say(("block %s:"):format(block_text(S, b)))
    local list, i = by_block[b], 1
    while i <= #list do
      local w = list[i]
      local rows = warp_rows(S, w, st.block, st.thread)
      -- warps alike (one group, same line and lanes, focus in none) are listed as one
      local j = i
      while j < #list and #rows == 1 and not rows[1]:find("focus") do
        local r = warp_rows(S, list[j + 1], st.block, st.thread)
        if #r ~= 1 or r[1] ~= rows[1] then break end
        j = j + 1
      end
      local label = j > i and ("warps %d-%d"):format(w.warp, list[j].warp)
        or ("warp %d"):format(w.warp)
      for k, row in ipairs(rows) do
        say(("  %-12s %s"):format(k == 1 and label or "", row))
      end
      i = j + 1
    end
  end
end

-- Runs one command line; returns how to go on ("continue", "step", "quit") or nil to read
-- another line.
local function run_command(s, S, line)
  local word, args = line:match("^%s*([%a_]+)%s*(.-)%s*$")
  if not word then word, args = line:match("^%s*(%S+)%s*(.-)%s*$") end
  if not word then
    if S.last == "step" then return cmd.step(s) end
    return nil
  end
  local name, err = command_of(word)
  if not name then return complain(err) end
  S.last = name
  local f = cmd[name] or cmd[name .. "_"]
  if (name == "continue" or name == "step" or name == "quit" or name == "where"
      or name == "help") and args ~= "" then
    return complain(("%s takes nothing after it"):format(name))
  end
  return f(s, S, args)
end
debugger.run_command = run_command

-- ---- what the C side calls ----

function debugger.stop(s)
  local S = state(s)
  announce(s, S, s:where())
  while true do
    local line, why = s:readline(debugger.PROMPT)
    if line then
      local go = run_command(s, S, line)
      if go then return go end
    elseif why ~= "interrupted" then
      say("quit (end of input): abandoning the launch")
      return "quit"
    end
  end
end

function debugger.cond(s, id, block, warp, lanes)
  local S = state(s)
  local bp = S.bps[id]
  if not bp or not bp.cond then return lanes end
  local hold = 0
  for l = 0, 31 do
    if lanes & (1 << l) ~= 0 then
      local ok, v, ty = pcall(bp.cond, getter(s, S, block, warp * 32 + l))
      if ok then
        ok, v = pcall(cexpr.truth, v, ty)
      end
      if not ok then
        bp.err = v
        return lanes
      end
      if v then hold = hold | (1 << l) end
    end
  end
  return hold
end

function debugger.complete(s, word)
  local S = state(s)
  local out, seen = {}, {}
  local function add(c)
    if c:sub(1, #word) == word and not seen[c] then
      seen[c] = true
      out[#out + 1] = c
    end
  end
  for _, c in ipairs(COMMANDS) do add(c .. " ") end -- a command is followed by its arguments
  local st = s:where()
  for _, n in ipairs(s:names(st.block, st.thread)) do add(n) end
  for _, b in ipairs({ "threadIdx", "blockIdx", "blockDim", "gridDim" }) do
    for _, f in ipairs({ "x", "y", "z" }) do add(b .. "." .. f) end
  end
  add("@warp")
  table.sort(out)
  return out
end

function debugger.finish(s, how)
  local S = states[s] or { info = s:info() }
  local i = S.info
  local threads = i.grid.x * i.grid.y * i.grid.z * i.block.x * i.block.y * i.block.z
  if how == "quit" then
    say(("Launch of %s abandoned where it stood: its arrays keep what it wrote so far."):format(
      i.kernel))
  else
    say(("The launch of %s has finished: its %d threads ran to the end."):format(i.kernel,
      threads))
  end
  states[s] = nil
end

return debugger
