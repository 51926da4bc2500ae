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

local cdecl = require "cdecl"
local cexpr = require "cexpr"
local ctype = require "ctype"
local debugger_warp = require "debugger_warp"
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
    cdecl.declare(src) -- p->x, casts and enums' values: the types the source declares
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

-- The bytes of memory at addr, n of them, as thread t of block b sees it; raises with the
-- reason when they cannot be read (s:mem reads at most MEM_MAX bytes at once).
local MEM_MAX = 1 << 20
local function read_mem(s, b, t, addr, n)
  if n > MEM_MAX then
    error(("%d bytes at once are more than the debugger reads (1 MiB)"):format(n), 0)
  end
  local got, why = s:mem(addr, n, b, t)
  if not got then error(why, 0) end
  return got
end

-- v, a flat list of an array's first elements, as the rows of type t (int m[4][5]: {{0, 1, 2,
-- 3, 4}, {5, ...}, ...}), as cexpr.load gives an array in memory.
local function rows(v, t)
  if t.elem.k ~= "a" then return v end
  local leaf = t.elem
  while leaf.k == "a" do leaf = leaf.elem end
  local per, out = t.elem.size // math.max(1, leaf.size), { n = t.n }
  for r = 1, t.n do
    if (r - 1) * per >= #v then break end
    out[r] = rows(table.move(v, (r - 1) * per + 1, math.min(#v, r * per), 1, { n = t.elem.n }),
      t.elem)
  end
  return out
end

-- A variable as s:read gives it (value, C spelling of its type, kind, count, address, size) as
-- a value, its type (ctype.lua) and its address: one in memory (an array, a structure, a local
-- the kernel keeps in local memory) is read whole through its address; a small structure in a
-- register, from its bits. Raises with the debugger's message when it has none.
local function typed(ctx, name, v, spelled, kind, count, addr, size)
  if kind == nil then error(spelled, 0) end
  local t = ctype.of_variable(spelled, kind, size)
  if not t or kind == "none" then
    error(("%s is a %s, which print cannot show"):format(name, spelled), 0)
  end
  if count > 1 and t.k ~= "a" then t = ctype.array(t, count) end
  if addr and (t.k == "a" or t.k == "s" or t.size == 2) then
    return cexpr.load(ctx, addr, t), t, addr
  end
  if t.k == "s" or (t.k == "f" and t.size == 2) then -- its bits, laid out by its type
    if math.type(v) ~= "integer" then
      error(("%s is a %s, which print cannot show"):format(name, spelled), 0)
    end
    local bits = string.pack("<i8", v)
    return cexpr.load({ mem = function(a, n) return bits:sub(a + 1, a + n) end }, 0, t), t
  end
  if type(v) == "table" then
    v.n = count
    v = rows(v, t)
  end
  if type(v) == "boolean" then v = v and 1 or 0 end
  if t.k == "i" and math.type(v) == "integer" then v = ctype.wrap(v, t) end
  return v, t, addr
end

-- The integer constants the source names: #define TILE 16, const int N = 8, constexpr int, and
-- its enums' values.
local function constants(src)
  local c = {}
  for n, v in src:gmatch("#%s*define%s+([%a_][%w_]*)%s+%(?(%d+)%)?%s*\n") do c[n] = tonumber(v) end
  for n, v in src:gmatch("const%s+[%w_ ]-int%s+([%a_][%w_]*)%s*=%s*(%d+)%s*;") do
    c[n] = tonumber(v)
  end
  for n, e in pairs(ctype.enumerators) do c[n] = c[n] or e.v end
  return c
end

-- The value of an array's size as the source writes it: 16, TILE, TILE + 1; nil when it is
-- not made of numbers and named constants alone.
local function size_of(d, consts)
  local e = d:gsub("[%a_][%w_]*", function(n) return consts[n] and tostring(consts[n]) or nil end)
  if not e:match("^[%d%s%+%-%*/%%%(%)]+$") then return nil end
  e = e:gsub("//", "/"):gsub("/", "//") -- C's division of ints
  local f = load("return " .. e, "=size", "t", {})
  local ok, v = pcall(f or error)
  return ok and math.tointeger(v) or nil
end

-- The declarators of a declaration's text after __shared__, "int a1[8], a2[8]" or
-- "__align__(16) float tile[TILE][TILE + 1]": the type its specifiers name (as ctype.parse
-- takes it) and for each declarator {name, stars, dims = the text of each [...]}; nil when it
-- is not plainly one.
local function declarators(decl)
  decl = decl:gsub("__align__%s*%b()", " "):gsub("alignas%s*%b()", " ")
    :gsub("__attribute__%s*%b()", " ")
  local parts, depth, from = {}, 0, 1
  for i = 1, #decl + 1 do
    local c = decl:sub(i, i)
    if c == "[" or c == "(" then depth = depth + 1
    elseif c == "]" or c == ")" then depth = depth - 1
    elseif (c == "," and depth == 0) or i > #decl then
      parts[#parts + 1] = decl:sub(from, i - 1)
      from = i + 1
    end
  end
  local first = parts[1] or ""
  local head, dims1 = first:match("^(.-)%s*(%[.*)$")
  if not head then head, dims1 = first:gsub("%s*=.*$", ""), "" end
  local spec, stars, name = head:match("^(.-)%s*(%**)%s*([%a_][%w_]*)%s*$")
  if not spec or spec:find("^%s*$") then return nil end
  local out = { { name = name, stars = #stars, dims = dims1 } }
  for k = 2, #parts do
    local st, nm, dims = parts[k]:match("^%s*(%**)%s*([%a_][%w_]*)%s*(.-)%s*$")
    if not nm then return nil end
    out[#out + 1] = { name = nm, stars = #st, dims = dims }
  end
  return spec, out
end

-- The type of __shared__ variable `name` of `bytes` bytes, from its declaration in the source
-- (NVRTC's debug information leaves shared variables out): "__shared__ float tile[16][17]",
-- or [TILE][TILE + 1] with TILE a #define or a const int of the file, "__shared__ int a1[8],
-- a2[8]". A size the source gives otherwise ([] of extern __shared__ float dyn[], whose bytes
-- are the launch's dynamic shared memory) is worked out from the bytes when it is the only
-- one; else the array is shown flat. Nil when the source has no such declaration. qual (default
-- __shared__) reads a __constant__ or __device__ variable's declaration instead, its
-- initializer left out.
local function shared_type(S, name, bytes, qual)
  local src = table.concat(S.lines, "\n")
  S.consts = S.consts or constants(src .. "\n")
  local consts = S.consts
  for text, c in cdecl.statements(src) do
    -- an initializer's { ends the statement's text there: = {1, 2} of a __constant__ table
    local ends = c == ";" or (qual and c == "{" and text:find("=%s*$"))
    local decl = ends and text:match((qual or "__shared__") .. "(.*)$")
    if decl and qual then decl = decl:gsub("=%s*%b{}", ""):gsub("=[^,]*", "") end
    local spec, list
    if decl then spec, list = declarators(decl) end
    for _, d in ipairs(list or {}) do
      local base = d.name == name and ctype.parse(spec .. (" *"):rep(d.stars))
      if base and base.size > 0 then
        local dims, unknown, n = {}, 0, 0
        for text in d.dims:gmatch("%[(.-)%]") do
          n = n + 1
          dims[n] = size_of(text, consts)
          if not dims[n] then unknown = unknown + 1 end
        end
        local known = 1
        for i = 1, n do known = known * (dims[i] or 1) end
        local total = bytes // base.size
        if unknown == 1 then
          for i = 1, n do dims[i] = dims[i] or total // known end
        elseif unknown > 1 then
          dims, n = { total }, 1
        end
        local t = base
        for i = n, 1, -1 do t = ctype.array(t, dims[i]) end
        return t
      end
    end
  end
end

-- The context cexpr evaluates in, for thread t of block b: the built-in coordinates, the
-- variables (those of the debug information, then the __shared__ ones, then the enums'
-- values), and memory as that thread sees it.
local function getter(s, S, b, t)
  local info = S.info
  local builtin = {
    threadIdx = dim_table(dims3(t, info.block)),
    blockIdx = dim_table(dims3(b, info.grid)),
    blockDim = info.block,
    gridDim = info.grid,
  }
  local ctx = { mem = function(addr, n) return read_mem(s, b, t, addr, n) end }
  ctx.get = function(name)
    if builtin[name] ~= nil then return builtin[name], ctype.DIM3 end
    if name == "warpSize" then return 32, ctype.INT end
    local v, ty, kind, count, addr, size = s:read(name, b, t)
    if kind == nil then
      local saddr, bytes = s:shared(name)
      S.shared = S.shared or {} -- the declarations' types, worked out once a launch
      if saddr and S.shared[name] == nil then
        S.shared[name] = shared_type(S, name, bytes) or false
      end
      local st = saddr and S.shared[name]
      if st then return cexpr.load(ctx, saddr, st), st, saddr end
      local gaddr, gbytes, qual = s:global(name) -- a module's __constant__ or __device__ one
      if gaddr then
        st = shared_type(S, name, gbytes, qual)
          or qual == "__device__" and shared_type(S, name, gbytes, "__managed__")
        if st then return cexpr.load(ctx, gaddr, st), st, gaddr end
        error(("%s is a %s variable (%d bytes) whose declaration print cannot read in the "
          .. "source"):format(name, qual, gbytes), 0)
      end
      local e = ctype.enumerators[name]
      if e then return e.v, e.t end
    end
    return typed(ctx, name, v, ty, kind, count, addr, size)
  end
  return ctx
end

debugger.getter = getter

local function char_text(v)
  if v >= 32 and v < 127 then return ("'%s'"):format(string.char(v)) end
  local named = { [0] = "\\0", [9] = "\\t", [10] = "\\n", [13] = "\\r" }
  return named[v] and ("'%s'"):format(named[v]) or ("'\\x%02x'"):format(v & 0xff)
end

-- One value of C type t as print shows it.
local function value_text(v, t)
  if type(v) == "table" and v.members then -- a structure: {x = 1.5, n = 3}
    local parts = {}
    for i, nm in ipairs(v.members) do
      parts[i] = nm .. " = " .. value_text(v[nm], t and t.fields and t.fields[nm].t)
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  if type(v) == "table" and v.x then return ("{x = %d, y = %d, z = %d}"):format(v.x, v.y, v.z) end
  if type(v) == "table" then
    local e = t and t.k == "a" and t.elem or nil -- a row, for an array of arrays
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
  if t.names and t.names[v] then return t.names[v] end -- an enum's value, by its name
  if t.k == "i" and not t.signed and t.size == 8 then return ctype.unsigned_text(v) end
  if math.type(v) == "float" then -- the digits that tell the type's values apart
    return ("%." .. (t.size == 8 and 17 or t.size == 4 and 9 or 5) .. "g"):format(v)
  end
  return tostring(v)
end

-- ---- the source ----

local function basename(path) return (path:match("([^/\\]+)$") or path) end

-- The lines of `file`, an #include'd header the simulator names by its path (nil: the kernel's
-- own source), read once; nil when it cannot be read (NVRTC's own headers are not on disk).
local function lines_of(S, file)
  if not file then return S.lines end
  S.files = S.files or {}
  if S.files[file] == nil then
    local f, lines = io and io.open(file, "r"), {}
    if f then
      for l in f:lines() do lines[#lines + 1] = l end
      f:close()
    end
    S.files[file] = f and lines or false
  end
  return S.files[file] or nil
end

-- The name a line's file goes by: the header's own, or the kernel's file.
local function file_name(S, file) return file and basename(file) or S.info.file end

-- " of helper.cuh" after a line of a header; "" after one of the kernel's file.
local function of_file(file) return file and " of " .. basename(file) or "" end

local function source_line(S, n, file)
  local text = (lines_of(S, file) or {})[n]
  if not text then return nil end
  return ("%4d | %s"):format(n, text)
end

local function show_line(S, n, file)
  local l = n and n > 0 and source_line(S, n, file)
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
    return ("thread %s waits at line %d%s for the other lanes of its warp"):format(
      thread_text(S, st.thread), st.focus_line, of_file(st.focus_file))
  end
end

-- Where the thread in focus is in its calls: "" in the kernel, " in helper" in a device
-- function, and for one without source (libdevice's __nv_sinf) where it was called from.
local function in_text(s, S)
  local fr = s:frames()
  local top = fr[1]
  if not top or top.kernel then return "" end
  if top.line == 0 then
    local caller = fr[2]
    return (" in %s (no source%s)"):format(top.func,
      caller and caller.line > 0 and (", called from line %d"):format(caller.line) or "")
  end
  return " in " .. top.func
end

-- "line 6", "line 6 of helper.cuh in hscale" or, where the warp runs code without source, what
-- in_text says instead.
local function at_text(s, S, line, file)
  local where = in_text(s, S)
  if line == 0 and where ~= "" then return where:sub(2) end
  return ("line %d%s%s"):format(line, of_file(file), where)
end

local function announce(s, S, st)
  local warp = st.thread // 32
  if st.reason == "start" then
    local i = S.info
    say(("Debugging %s<<<%s, %s>>> on the simulator, stopped before its first instruction."):format(
      i.kernel, xyz(i.grid.x, i.grid.y, i.grid.z), xyz(i.block.x, i.block.y, i.block.z)))
    say(("Focus: %s, line %d. Set breakpoints with 'break LINE', then 'continue'; 'help' lists "
      .. "the commands."):format(focus_text(S, st), st.focus_line))
    show_line(S, st.focus_line, st.focus_file)
    return
  end
  if st.reason == "break" and S.bps[st.bp] and S.bps[st.bp].hidden then -- until LINE got there
    local at = at_text(s, S, st.line, st.file)
    say(("%s: %s (warp %d, lanes %s)"):format(at:sub(1, 1):upper() .. at:sub(2),
      focus_text(S, st), warp, hex(st.lanes)))
  elseif st.reason == "break" then
    local bp = S.bps[st.bp]
    if bp then bp.hits = bp.hits + 1 end
    say(("%s %d, %s: %s (warp %d, lanes %s)"):format(bp and bp.temp and "Temporary breakpoint"
      or "Breakpoint", st.bp, at_text(s, S, st.line, st.file), focus_text(S, st), warp,
      hex(st.lanes)))
    if bp and bp.temp then
      s:delete_break(st.bp)
      S.bps[st.bp] = nil
    end
    if bp and bp.err then
      say(("  its condition could not be evaluated at thread %s: %s"):format(
        thread_text(S, bp.err_thread), bp.err))
      bp.err = nil
    end
  elseif st.reason == "step" then
    local at = at_text(s, S, st.line, st.file)
    say(("%s: %s (warp %d runs lanes %s here)"):format(at:sub(1, 1):upper() .. at:sub(2),
      focus_text(S, st), warp, hex(st.lanes)))
  elseif st.reason == "exited" then
    say(("The thread in focus has exited; focus moves to %s, line %d%s."):format(
      focus_text(S, st), st.line, of_file(st.file)))
  elseif st.reason == "fault" then
    local at = at_text(s, S, st.line, st.file)
    say(("The launch failed %s: %s (warp %d). It stops here so that you can look at "
      .. "the thread at fault (print, where, list); continue, step or quit end the launch with "
      .. "this error:"):format(at:match("^line") and "at " .. at or at, focus_text(S, st), warp))
    for l in (st.fault or "(no message)"):gmatch("[^\n]+") do say("  " .. l) end
  elseif st.reason == "interrupt" then
    say(("Interrupted at %s: %s (warp %d, lanes %s)"):format(at_text(s, S, st.line, st.file),
      focus_text(S, st), warp, hex(st.lanes)))
  end
  local note = focus_note(S, st)
  if note then say("  " .. note) end
  show_line(S, st.line, st.file)
end

-- ---- commands ----

local HELP = [[
Commands (a unique start will do; b, c, s, p, w, l and q are short for some):
  break LINE [if COND]  stop where a thread reaches LINE of the kernel's
                        source; with COND (in C: threadIdx.x == 5 && i > 100)
                        only for threads where it holds; also break FILE:LINE
                        and break FUNCTION (its first line)
  tbreak ...            the same, once: deleted when it is hit
  delete [N]            remove breakpoint N (every one, without N)
  info break            list the breakpoints
  info locals           the variables in scope and their values
  continue              run to the next breakpoint, or to the end
  step [N]              run the warp in focus until it reaches another line
                        (into a call); N times
  next [N]              the same, running a call to its end
  until [LINE]          next, but a loop's jump back does not stop; with LINE,
                        run to LINE (once)
  finish                run until the selected frame returns
  backtrace (bt)        the calls of the thread in focus, innermost first
  up [N], down [N]      select the caller's frame, or back; frame N selects #N:
                        print then sees that frame's variables
  display EXPR          print EXPR at every stop; undisplay [N] stops it
  x/NF EXPR             N values of memory from the address EXPR gives; F is
                        f (float), d (int), u (unsigned), x (hex) or c (char),
                        with b, h, w or g for 1, 2, 4 or 8 bytes (a size
                        alone shows hex): x/8f x
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

local COMMANDS = { "break", "tbreak", "continue", "step", "next", "until", "finish", "print",
  "thread", "block", "where", "backtrace", "up", "down", "frame", "display", "undisplay", "x",
  "list", "delete", "info", "quit", "help" }
local ALIASES = { b = "break", c = "continue", s = "step", n = "next", u = "until",
  p = "print", w = "where", bt = "backtrace", l = "list", q = "quit", h = "help", d = "delete",
  i = "info", t = "thread", k = "quit", kill = "quit", f = "frame", fin = "finish" }

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

-- src as a message quotes it: a long one cut short.
local function quoted(src)
  return #src > 60 and src:sub(1, 57) .. "..." or src
end


local cmd = {}

function cmd.help() say(HELP) end

function cmd.quit() return "quit" end
function cmd.continue() return "continue" end

-- step [N], next [N]: how = "step" or "next"; the N - 1 stops after the first are passed
-- through without a prompt (a breakpoint or Ctrl-C ends them).
local function stepping(s, S, how, args)
  local n = 1
  if args ~= "" then
    n = math.tointeger(tonumber(args))
    if not n or n < 1 then
      return complain(("%s: '%s' is not a count: %s 3 runs it three times"):format(how, args, how))
    end
  end
  S.again = n > 1 and { how = how, n = n - 1 } or nil
  s:resume(how)
  return "step"
end

function cmd.step(s, S, args) return stepping(s, S, "step", args) end
function cmd.next(s, S, args) return stepping(s, S, "next", args) end

-- list shows the file the thread in focus is in: the kernel's, or a header it #includes.
function cmd.list(s, S, args)
  local st = s:where()
  local at = st.focus_line > 0 and st.focus_line or st.line
  local file = st.focus_line > 0 and st.focus_file or st.file
  if args ~= "" then
    at = math.tointeger(tonumber(args))
    if not at then return complain(("list: '%s' is not a line number"):format(args)) end
  end
  local lines = lines_of(S, file)
  if not lines then
    return complain(("list: the thread in focus is in %s, which cannot be read here (%s)")
      :format(basename(file), file))
  end
  if #lines == 0 then return complain("list: the kernel's source is not known") end
  local from = math.max(1, at - 5)
  local to = math.min(#lines, from + 10)
  local marks = {}
  if not file then -- breakpoints are lines of the kernel's file
    for _, bp in pairs(S.bps) do marks[bp.line] = true end
  end
  if file then say(("%s:"):format(basename(file))) end
  for n = from, to do
    local mark = n == st.focus_line and "=>" or marks[n] and " *" or "  "
    say(mark .. source_line(S, n, file))
  end
end

-- The line a breakpoint's place names: LINE, FILE:LINE (FILE the kernel's), or FUNCTION (its
-- first line); nil and a message.
local function place_line(s, S, what, word)
  local file, n = word:match("^(.-):(%d+)$")
  if file then
    if file ~= "" and basename(file) ~= basename(S.info.file) then
      return nil, ("%s: the kernel's source is %s, not %s"):format(what, S.info.file, file)
    end
    word = n
  end
  local line = math.tointeger(tonumber(word))
  if line then
    if line < 1 then
      return nil, ("%s: '%s' is not a line number (lines start at 1)"):format(what, word)
    end
    return line
  end
  if not word:match("^[%a_][%w_:]*$") then
    return nil, ("%s: '%s' is not a line number, FILE:LINE or a function's name"):format(what, word)
  end
  local fline = s:func_line(word)
  if not fline then
    return nil, ("%s: the kernel's module has no function '%s'"):format(what, word)
  end
  if fline == 0 then
    return nil, ("%s: %s has no source lines (a library function): break at the line that "
      .. "calls it"):format(what, word)
  end
  return fline, word
end

local set_break

function cmd.tbreak(s, S, args) set_break(s, S, args, "tbreak") end
function cmd.break_(s, S, args) set_break(s, S, args, "break") end

-- break, tbreak and until LINE (`what`): the breakpoint's number, or nil once the learner has
-- been told why not. until's is one of its own, which no list shows and the next stop removes,
-- wherever that stop is.
function set_break(s, S, args, what)
  local line_word, rest = args:match("^(%S+)%s*(.-)%s*$")
  if not line_word then
    return complain(("%s needs a line number: %s 7, or %s 7 if threadIdx.x == 5"):format(what,
      what, what))
  end
  local line, fname = place_line(s, S, what, line_word)
  if not line then return complain(fname) end
  local src, fn = nil, nil
  if rest ~= "" and what == "until" then
    return complain(("until %s %s: until takes a line and nothing after it, as in until %d")
      :format(line_word, rest, line))
  end
  if rest ~= "" then
    src = rest:match("^if%s+(.-)$") or rest:match("^if(%(.*)$")
    if not src or src == "" then
      return complain(("%s %d %s: after the line comes 'if' and a condition, as in "
        .. "%s %d if threadIdx.x == 5"):format(what, line, rest, what, line))
    end
    local err
    fn, err = cexpr.compile(src)
    if not fn then return complain(("bad condition '%s': %s"):format(quoted(src), err)) end
  end
  local id, err = s:set_break(line, fn ~= nil)
  if not id then return complain(what .. ": " .. err) end
  S.bps[id] = { id = id, line = line, src = src, cond = fn, hits = 0, temp = what ~= "break",
    hidden = what == "until" }
  if what == "until" then
    S.until_bp = id
    return id
  end
  S.order[#S.order + 1] = id
  say(("%s %d at line %d of %s%s%s"):format(what == "tbreak" and "Temporary breakpoint"
    or "Breakpoint", id, line, S.info.file, fname and (" (function %s)"):format(fname) or "",
    src and (" if " .. src) or ""))
  show_line(S, line)
  return id
end

function cmd.until_(s, S, args)
  if args == "" then
    s:resume("until")
    return "step"
  end
  if set_break(s, S, args, "until") then return "continue" end
end

-- ---- frames ----

local function frame_text(S, fr, i)
  local where
  if fr.line == 0 then where = "(no source)"
  else where = ("at line %d of %s"):format(fr.line, file_name(S, fr.file)) end
  return ("#%d  %s%s %s"):format(i, fr.func, fr.kernel and " (the kernel)" or "", where)
end

function cmd.backtrace(s, S, args)
  if args ~= "" then return complain("backtrace takes nothing after it") end
  local fr = s:frames()
  if #fr == 0 then return complain("backtrace: the thread in focus has exited") end
  local st = s:where()
  say(("Calls of thread %s, block %s, innermost first:"):format(thread_text(S, st.thread),
    block_text(S, st.block)))
  for i, f in ipairs(fr) do
    say(frame_text(S, f, i - 1) .. (i - 1 == (S.frame or 0) and "  <- selected" or ""))
  end
end

local function select_frame(s, S, n)
  local ok, why = s:select(n)
  if not ok then return complain("frame: " .. why) end
  S.frame = n
  local fr = s:frames()[n + 1]
  say(frame_text(S, fr, n))
  show_line(S, fr.line, fr.file)
end

local function frame_count(what, args)
  if args == "" then return 1 end
  local n = math.tointeger(tonumber(args))
  if not n or n < 0 then return nil, ("%s: '%s' is not a number of frames"):format(what, args) end
  return n
end

function cmd.up(s, S, args)
  local n, err = frame_count("up", args)
  if not n then return complain(err) end
  local top = #s:frames() - 1
  if top < 0 then return complain("up: the thread in focus has exited; it has no frames") end
  if (S.frame or 0) + n > top then
    return complain(("up: frame #%d is the kernel, the outermost; there is nothing above it")
      :format(top))
  end
  return select_frame(s, S, (S.frame or 0) + n)
end

function cmd.down(s, S, args)
  local n, err = frame_count("down", args)
  if not n then return complain(err) end
  if #s:frames() == 0 then
    return complain("down: the thread in focus has exited; it has no frames")
  end
  if (S.frame or 0) - n < 0 then
    return complain("down: frame #0 is the innermost; there is nothing below it")
  end
  return select_frame(s, S, (S.frame or 0) - n)
end

function cmd.frame(s, S, args)
  if args == "" then return select_frame(s, S, S.frame or 0) end
  local n = math.tointeger(tonumber(args))
  if not n then
    return complain(("frame: '%s' is not a frame number (bt lists them)"):format(args))
  end
  return select_frame(s, S, n)
end

function cmd.finish(s, S, args)
  if args ~= "" then return complain("finish takes nothing after it") end
  local fr = s:frames()
  local sel = S.frame or 0
  if not fr[sel + 1] then return complain("finish: the thread in focus has exited") end
  if fr[sel + 1].kernel then
    return complain(("finish: frame #%d is the kernel, which no call returns from; continue "
      .. "runs it to the end"):format(sel))
  end
  say("Run till exit from " .. frame_text(S, fr[sel + 1], sel))
  s:resume("finish")
  return "step"
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

local function info_locals(s, S)
  local st = s:where()
  local names = s:names(st.block, st.thread)
  if #names == 0 then return say("No variables are known here.") end
  table.sort(names)
  for _, n in ipairs(names) do
    local fn = cexpr.compile(n)
    local ok, v, ty = pcall(fn, debugger.getter(s, S, st.block, st.thread))
    say(("%s = %s"):format(n, ok and value_text(v, ty) or ("<" .. tostring(v) .. ">")))
  end
end

local function info_display(S)
  if not S.displays or #S.displays == 0 then return say("No expressions are displayed.") end
  for _, d in ipairs(S.displays) do say(("%d: %s"):format(d.id, d.src)) end
end

function cmd.info(s, S, args)
  if args ~= "" and ("locals"):sub(1, #args) == args then return info_locals(s, S) end
  if args ~= "" and ("display"):sub(1, #args) == args then return info_display(S) end
  if args == "" or ("breakpoints"):sub(1, #args) ~= args then
    return complain("info: try 'info break' (the breakpoints), 'info locals' (the variables) or "
      .. "'info display'; 'where' shows the warps")
  end
  local any = false
  for _, id in ipairs(S.order) do
    local bp = S.bps[id]
    if bp then
      any = true
      say(("%3d  line %-4d %s%s%s"):format(id, bp.line, bp.temp and "once  " or "",
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
    or ("line %d%s"):format(st.focus_line, of_file(st.focus_file))))
  show_line(S, st.focus_state ~= "exited" and st.focus_line or nil, st.focus_file)
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

function cmd.thread(s, S, args)
  S.frame = 0
  return refocus(s, S, "thread", args)
end
function cmd.block(s, S, args)
  S.frame = 0
  return refocus(s, S, "block", args)
end

-- ---- display and x ----

local function show_display(s, S, d)
  local st = s:where()
  local ok, v, ty = pcall(d.fn, getter(s, S, st.block, st.thread))
  if ok then say(("%d: %s = %s"):format(d.id, d.src, value_text(v, ty)))
  else say(("%d: %s: not available here (%s)"):format(d.id, d.src, v)) end
end

function cmd.display(s, S, args)
  if args == "" then
    for _, d in ipairs(S.displays or {}) do show_display(s, S, d) end
    return
  end
  local fn, err = cexpr.compile(args)
  if not fn then
    return complain(("display: bad expression '%s': %s"):format(quoted(args), err))
  end
  S.displays = S.displays or {}
  S.next_display = (S.next_display or 0) + 1
  local d = { id = S.next_display, src = args, fn = fn }
  S.displays[#S.displays + 1] = d
  show_display(s, S, d)
end

function cmd.undisplay(_, S, args)
  if args == "" then
    S.displays = {}
    return say("No expression is displayed any more.")
  end
  local id = math.tointeger(tonumber(args))
  for i, d in ipairs(S.displays or {}) do
    if d.id == id then
      table.remove(S.displays, i)
      return say(("Display %d removed."):format(id))
    end
  end
  complain(("undisplay: there is no display '%s' (info display lists them)"):format(args))
end

-- x/NF: the element type format F and a size letter give (a size alone shows hex, as gdb's
-- first x does), or nil (the pointer's own type will do). d and u show numbers, bytes too.
local X_SIZES = { b = 1, h = 2, w = 4, g = 8 }
local function x_type(fmt, size)
  if fmt == "f" then
    return size == 2 and ctype.parse("__half") or size == 8 and ctype.DOUBLE or ctype.FLOAT
  end
  if fmt == "c" then return ctype.parse("char") end
  local bits = { [1] = "int8_t", [2] = "short", [4] = "int", [8] = "long long" }
  if fmt == "d" then return ctype.parse(bits[size or 4]) end
  if fmt == "u" or fmt == "x" then
    return size == 1 and ctype.parse("uint8_t") or ctype.parse("unsigned " .. bits[size or 4])
  end
end

function cmd.x(s, S, args)
  local n, letters, src = args:match("^/(%d*)(%a*)%s+(.-)$")
  if not n then
    n, letters, src = "", "", args
    if args:sub(1, 1) == "/" then src = "" end
  end
  if src == "" then
    return complain("x needs an address: x/8f x shows 8 floats from where x points")
  end
  local count = n == "" and 1 or math.tointeger(tonumber(n))
  if not count or count < 1 or count > 4096 then
    return complain(("x: '%s' is not a count from 1 to 4096"):format(n))
  end
  local fmt, size
  for c in letters:gmatch(".") do
    if X_SIZES[c] then size = X_SIZES[c]
    elseif ("fduxc"):find(c, 1, true) and not fmt then fmt = c
    else return complain(("x: '%s' is not a format: f, d, u, x or c, and b, h, w or g for the "
      .. "size"):format(c)) end
  end
  if fmt == "f" and size == 1 then
    return complain("x: a float is 2 (h), 4 (w) or 8 (g) bytes")
  end
  if size and not fmt then fmt = "x" end
  local fn, err = cexpr.compile(src)
  if not fn then return complain(("x: bad expression '%s': %s"):format(quoted(src), err)) end
  local st = s:where()
  local ctx = getter(s, S, st.block, st.thread)
  local ok, v, ty, addr = pcall(fn, ctx)
  if not ok then return complain("x: " .. v) end
  local elem = fmt and x_type(fmt, size) or nil
  if ty.k == "a" and addr then -- an array in memory: from its first element, as gdb's x
    v, ty = addr, ctype.pointer(ty.elem)
  end
  if not (ty.k == "p" or ty.k == "i") then
    return complain(("x: %s is a %s, not an address: x/4f &a[0] or x/4f p"):format(src, ty.name))
  end
  if not elem then
    elem = ty.k == "p" and ty.to.size > 0 and ty.to.k ~= "s" and ty.to or ctype.INT
  end
  local got, why = pcall(ctx.mem, v, count * elem.size)
  if not got then return complain("x: " .. why) end
  local bytes = why
  local row = {}
  for i = 0, count - 1 do
    local e = ctype.decode(bytes:sub(i * elem.size + 1, (i + 1) * elem.size), elem)
    local text = fmt == "x" and ("0x%0" .. 2 * elem.size .. "x"):format(e) or value_text(e, elem)
    row[#row + 1] = text
    if #row == 4 or i == count - 1 then
      local at = v + (i - #row + 1) * elem.size
      say(("0x%x:  %s"):format(at, table.concat(row, "  ")))
      row = {}
    end
  end
end

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
  if at ~= "warp" then src, at = args, at and "@" .. at end -- x[0]@n: gdb's @, n elements
  local warp = at == "warp"
  if src == "" then return complain("print needs a variable or an expression: print i") end
  local inner = src:match("^%((.*)%)$") -- print(i), as a Lua user types it, shows as i
  if inner and inner:gsub("%b()", ""):find("[()]") == nil then src = inner end
  local fn, err = cexpr.compile(src)
  if not fn then return complain(("print: bad expression '%s': %s"):format(quoted(src), err)) end
  local st = s:where()
  if warp then return print_warp(s, S, src, fn, st) end
  local ok, v, ty = pcall(fn, getter(s, S, st.block, st.thread))
  if not ok then
    if at and v:find("'" .. at:sub(2) .. "'", 1, true) then -- print i @lane: a word, not a count
      return complain(("print: '%s' is not known; print EXPR @warp shows every lane"):format(at))
    end
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
    local at = g.file and ("%s:%-4d"):format(basename(g.file), g.line) -- a header's line
      or ("line %-4d"):format(g.line)
    local row = ("%s lanes %s (%d)"):format(at, hex(g.mask), popcount(g.mask))
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
    if S.last == "step" or S.last == "next" then return stepping(s, S, S.last, "") end
    return nil
  end
  local name, err = command_of(word)
  if not name then return complain(err) end
  S.last = name
  local f = cmd[name] or cmd[name .. "_"]
  if (name == "continue" or name == "quit" or name == "where" or name == "help") and args ~= "" then
    return complain(("%s takes nothing after it"):format(name))
  end
  return f(s, S, args)
end
debugger.run_command = run_command

-- ---- what the C side calls ----

-- A stop inside code without source (atomicAdd's body, libdevice's sinf) selects the innermost
-- frame that has some, as if 'up' had been typed, so that print reads the learner's variables
-- at the line of the call rather than finding none at line 0.
local function source_frame(s, S)
  local fr = s:frames()
  if not fr[1] or fr[1].line ~= 0 then return end
  for i = 2, #fr do
    if fr[i].line > 0 then
      if s:select(i - 1) then
        S.frame = i - 1
        say(("%s has no source: frame #%d selected, where it was called ('down' goes back)")
          :format(fr[1].func, i - 1))
        say(frame_text(S, fr[i], i - 1))
        show_line(S, fr[i].line, fr[i].file)
      end
      return
    end
  end
end

function debugger.stop(s)
  local S = state(s)
  local st = s:where()
  S.frame = 0
  S.prog = nil -- the next continue's rate is its own
  if S.again and st.reason == "step" and S.again.n > 0 then -- step N: a stop on the way
    S.again.n = S.again.n - 1
    s:resume(S.again.how)
    return "step"
  end
  S.again = nil
  announce(s, S, st)
  if S.until_bp then -- until LINE ends here, at its line or wherever something stopped first
    s:delete_break(S.until_bp)
    S.bps[S.until_bp], S.until_bp = nil, nil
  end
  source_frame(s, S)
  for _, d in ipairs(S.displays or {}) do show_display(s, S, d) end
  while true do
    local line, why = s:readline(debugger.PROMPT)
    if why == "script" then say(debugger.PROMPT .. line) end -- commands = {...}: shown as typed
    if line then
      local go = run_command(s, S, line)
      if go then return go end
    elseif why ~= "interrupted" then
      say("quit (end of input): abandoning the launch")
      return "quit"
    end
  end
end

-- The first times breakpoint bp is reached: its condition lowered to the program the simulator
-- evaluates over a whole warp (debugger_warp.lua), typed by the variables as they are at its line,
-- so that later warps do not come here at all. A few tries (a variable may have no value yet at
-- the first), then the Lua evaluator alone.
local function compile_for_warp(s, S, bp, block, t)
  bp.tries = (bp.tries or 0) + 1
  local cx = { info = S.info, type_of = function(name)
    local _, ty, kind, count, _, size = s:read(name, block, t)
    if not kind or kind == "other" or count ~= 1 then return nil end
    return ctype.of_variable(ty, kind, size), ty
  end }
  local ok, done = pcall(function()
    local prog = debugger_warp.lower(bp.cond, cx)
    return prog and s:set_cond(bp.id, prog)
  end)
  bp.compiled = ok and done or nil
end

function debugger.cond(s, id, block, warp, lanes)
  local S = state(s)
  local bp = S.bps[id]
  if not bp or not bp.cond then return lanes end
  if not bp.compiled and (bp.tries or 0) < 3 and lanes ~= 0 then
    local first = 0
    while lanes & (1 << first) == 0 do first = first + 1 end
    compile_for_warp(s, S, bp, block, warp * 32 + first)
  end
  local hold = 0
  for l = 0, 31 do
    if lanes & (1 << l) ~= 0 then
      local ok, v, ty = pcall(bp.cond, getter(s, S, block, warp * 32 + l))
      if ok then
        ok, v = pcall(cexpr.truth, v, ty)
      end
      if not ok then -- stops at that lane (and those before it the condition holds for)
        bp.err, bp.err_thread = v, warp * 32 + l
        return hold | (1 << l)
      end
      if v then hold = hold | (1 << l) end
    end
  end
  return hold
end

-- About once a second while the launch runs between stops: where it is, so that a long
-- continue, or one into an endless loop, is not silent.
-- From the second line on, a launch whose blocks are finishing (a huge grid, not an endless
-- loop) gets an estimate of the time left at the rate since the first line of this continue.
function debugger.progress(s, block, warp, line)
  local S = state(s)
  local st = s:where()
  local now, left = os.time(), ""
  if not S.prog then S.prog = { t = now, done = st.blocks_done } end
  local dt, db = now - S.prog.t, st.blocks_done - S.prog.done
  if dt >= 2 and db > 0 then
    local secs = (st.blocks_total - st.blocks_done) * dt / db
    left = secs < 90 and (", about %d s left"):format(math.ceil(secs))
      or secs < 5400 and (", about %d min left"):format(math.ceil(secs / 60))
      or (", about %.1f hours left"):format(secs / 3600)
  end
  say(("  ... running: %d of %d blocks done%s; block %s, warp %d is at line %d (Ctrl-C stops it)")
    :format(st.blocks_done, st.blocks_total, left, block_text(S, block), warp, line))
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
