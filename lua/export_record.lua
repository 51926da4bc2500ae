-- export_record.lua: the session record that cuda.export writes as a CUDA C++ program.
--
-- cuda.record(true) starts it; from then on every launch from Lua calls hook("before", info)
-- before it runs and hook("after") once it has (bind_kernel.c builds info: the kernel's name,
-- source and options, the configuration, and each parameter with the bytes it was marshalled
-- into and, for an array, the array whose memory it is). The record keeps what a program needs
-- to do the same work, and nothing of the session itself:
--   - each array a launch used, by its whole allocation (a view is its root at an offset);
--   - "set" events: the contents an array had before a launch whenever they differed from what
--     the program would hold there (the launch before it left), so whatever the host did in
--     between (cuda.array{...}, fill, rand, a[i] = v, a copy) becomes one upload of those bytes;
--   - "launch" events, in order; a launch that repeats the one before it exactly (same kernel,
--     configuration and arguments, nothing uploaded in between: a loop, cuda.time's reps)
--     counts as a repetition of it rather than a new event;
--   - each array's contents after the last launch that used it: the results to check.
-- Because it holds bytes and not arrays, an array freed before the export is still exported.
-- It never keeps an array alive: arrays are weak keys.
--
-- Stance: compare contents rather than instrument every way the host can change an array.
-- Instrumenting cuda.array, fill, rand, copies, a[i] = v, the blas calls and whatever comes
-- next would miss the next one added; copying a launch's arrays to the host before and after
-- it misses nothing, at a cost paid only while recording (two copies per array per launch).
-- The record is bounded (MAX_BYTES of contents, MAX_EVENTS events); past a bound it stops
-- growing and says why, and cuda.export refuses with that reason rather than write half a
-- session.

local M = {}

local MAX_BYTES = 64 * 1024 * 1024 -- contents kept: uploads, each array's latest, variables
local MAX_EVENTS = 4096            -- uploads plus distinct launches

M.MAX_BYTES, M.MAX_EVENTS = MAX_BYTES, MAX_EVENTS

local rec -- the current record, nil before the first cuda.record(true)

local function new_record()
  return {
    on = true,
    sources = {},   -- {source =, options =, file =}, in the order first launched
    source_of = {}, -- source .. options -> index in sources
    arrays = {},    -- {id =, dtype =, n =, name =, last = bytes}, in the order first used
    array_of = setmetatable({}, { __mode = "k" }), -- root Array -> its entry
    events = {},    -- {kind = "set", array =, bytes =} | {kind = "launch", ...}
    launches = 0,   -- launches recorded, repetitions included
    set_bytes = 0,  -- bytes held by "set" events
    last_bytes = 0, -- bytes held by the arrays' latest contents
    notes = {},     -- what the program does differently, for its header (set: text -> true)
    constants = {}, -- source index .. "\0" .. name -> the bytes the program last gave it
    device_after = {}, -- the same key -> a __device__ or __managed__ variable's bytes after the
                       -- last launch
    device_bytes = 0, -- bytes held by device_after
    problem = nil,  -- why the record cannot be exported, once it cannot
    pending = nil,  -- the launch between its "before" and its "after"
  }
end

-- Whether global name a is preferred to b as an array's name: one without a leading _ (the
-- prompt's own, a learner's scratch), then the shorter (`x` before `orig` in `orig = x`), then
-- the first in byte order.
local function preferred(a, b)
  local ua, ub = a:sub(1, 1) == "_", b:sub(1, 1) == "_"
  if ua ~= ub then return ub end
  if #a ~= #b then return #a < #b end
  return a < b
end

-- The name the program gives the array root, for its variable (d_NAME): of the globals holding
-- it, the one `preferred` puts first; nil where none does (a local). The rule reads the names
-- alone, never the order a traversal of _G finds them in, which Lua's hash seed changes from
-- process to process: one session typed again always gives the same program, byte for byte.
-- Turned down: the name the array was first assigned to, which would take a hook on every
-- global assignment (and a __newindex on _G sees only new keys). The traversal is raw (next),
-- so a __pairs the session set on _G runs no code here.
local function global_name(root)
  local best
  for k, v in next, _G do
    if rawequal(v, root) and type(k) == "string" and k:match("^[A-Za-z_][A-Za-z0-9_]*$") and
      (not best or preferred(k, best)) then
      best = k
    end
  end
  return best
end

local function fail(text)
  rec.problem = rec.problem or text
  rec.pending = nil
end

-- The bytes the record holds: uploads and constants given, arrays' latest contents, and the
-- snapshots of __device__ and __managed__ variables it compares the next launch's against.
local function held_bytes() return rec.set_bytes + rec.last_bytes + rec.device_bytes end

local function check_bounds()
  if held_bytes() > MAX_BYTES then
    fail(("the record holds more than %d MiB of array and variable contents, its bound: " ..
      "record a smaller session (smaller arrays and variables, fewer uploads)")
      :format(MAX_BYTES // (1024 * 1024)))
  elseif #rec.events > MAX_EVENTS then
    fail(("the record has more than %d uploads and launches, its bound: record fewer " ..
      "(repeated identical launches count once)"):format(MAX_EVENTS))
  end
end

-- The entry of the array root, made the first time a launch uses it.
local function entry_of(root)
  local a = rec.array_of[root]
  if a then return a end
  a = { id = #rec.arrays + 1, dtype = root.dtype, n = #root, name = global_name(root) }
  rec.arrays[a.id] = a
  rec.array_of[root] = a
  return a
end

local function source_index(info)
  local key = info.source .. "\0" .. table.concat(info.options, "\0")
  local i = rec.source_of[key]
  if not i then
    rec.sources[#rec.sources + 1] = { source = info.source, options = info.options,
      file = info.file }
    i = #rec.sources
    rec.source_of[key] = i
  end
  return i
end

-- One argument of the launch as the program passes it; nil and a reason when it cannot.
local function argument(p, i)
  local what = ("argument %d%s"):format(i, p.text and (" (" .. p.text .. ")") or "")
  if p.root then
    if p.holds_ptrs then
      return nil, what .. " is an array of device addresses (cuda.ptrs): a program's " ..
        "addresses differ from the session's, so export cannot write it"
    end
    return { kind = "array", array = entry_of(p.root), first = p.first, type = p.type,
      dtype = p.dtype, array_dtype = p.array_dtype, text = p.text }
  end
  if p.texture then
    return nil, what .. " is a texture (cuda.texture), which export cannot write yet"
  end
  if p.kind == "pointer" then return { kind = "null", type = p.type, text = p.text } end
  if p.kind == "aggregate" then
    return nil, what .. " is a struct or vector passed by value, which export cannot write yet"
  end
  return { kind = "scalar", ptx = p.ptx, bytes = p.bytes, dtype = p.dtype, type = p.type,
    is_bool = p.kind == "bool", text = p.text }
end

-- What makes two launches the same launch: kernel, configuration, arguments.
local function launch_key(ev)
  local parts = { ev.source, ev.name, ev.grid.x, ev.grid.y, ev.grid.z, ev.block.x, ev.block.y,
    ev.block.z, ev.shared, ev.cooperative and "cooperative" or "" }
  for _, a in ipairs(ev.args) do
    if a.kind == "array" then parts[#parts + 1] = "a" .. a.array.id .. "+" .. a.first
    elseif a.kind == "null" then parts[#parts + 1] = "null"
    else parts[#parts + 1] = "s" .. a.ptx .. ":" .. a.bytes:gsub(".", function(c)
      return ("%02x"):format(c:byte()) end) end
  end
  return table.concat(parts, "|")
end

-- The contents of the array root now, compared with what the program holds there: a "set"
-- event when they differ.
local function sync_contents(root, a)
  local bytes = root:tobytes()
  if a.last ~= bytes then
    rec.events[#rec.events + 1] = { kind = "set", array = a, bytes = bytes }
    rec.set_bytes = rec.set_bytes + #bytes
    rec.last_bytes = rec.last_bytes - (a.last and #a.last or 0) + #bytes
    a.last = bytes
  end
end

-- The module's variables, as m:variables reads the source (the reader m:constant uses, so a
-- comment, a string, a macro's text or another namespace's variable is never taken for one),
-- with their contents now. Only those the compiled module holds.
local function variables(kernel)
  local out = {}
  for _, v in ipairs(kernel:variables({ contents = true })) do
    if v.contents then out[#out + 1] = v end
  end
  return out
end

-- Whether the program can give variable v its contents as bytes: numbers (a vector's
-- components too), never a pointer (the session's addresses) or a struct the reader does not
-- lay out.
local function numbers(v) return v.dtype ~= nil end

local function give(src, name, bytes, space)
  rec.events[#rec.events + 1] = { kind = "constant", source = src, name = name, bytes = bytes,
    managed = space == "__managed__" or nil }
  rec.set_bytes = rec.set_bytes + #bytes
  rec.constants[src .. "\0" .. name] = bytes
end

-- The module's __constant__ contents as the launch finds them (vars: variables()), each a
-- "constant" event when they differ from what the program last gave it, so a program sets
-- them as the session did (m:constant), before the launch. Returns nil and why when one cannot
-- be written.
local function sync_constants(vars, src)
  for _, v in ipairs(vars) do
    if v.space == "__constant__" then
      if not numbers(v) then
        return nil, ("its module's __constant__ %s (%s) cannot be written in a program yet")
          :format(v.name, v.type)
      end
      if rec.constants[src .. "\0" .. v.name] ~= v.contents then
        give(src, v.name, v.contents, v.space)
      end
    end
  end
  return true
end

-- The module's __device__ and __managed__ variables of numbers: kernels write them as well as
-- m:constant (and, for a __managed__ one, the host), so a "constant" event is made only for
-- what the session changed between launches (the contents differ from those the last launch
-- left), and at the first launch for contents that are not all zero (set before the record
-- began, or the source's initializer, which the program repeats harmlessly). A variable of
-- another type is not followed. Returns the names of those followed, read again after the
-- launch.
local function sync_devices(vars, src)
  local followed = {}
  for _, v in ipairs(vars) do
    if v.space ~= "__constant__" and numbers(v) then
      followed[#followed + 1] = v.name
      local after = rec.device_after[src .. "\0" .. v.name]
      if (after and v.contents ~= after) or (not after and v.contents:find("[^\0]")) then
        give(src, v.name, v.contents, v.space)
      end
    end
  end
  return followed
end

local function before(info)
  rec.pending = nil -- a launch that raised never reached "after": it did no work to record
  if info.captured then
    -- Nothing runs during a capture, and a replay runs the graph's launches where no hook sees
    -- them: a program without them would do other work. Said before any array is read, which a
    -- capture refuses.
    return fail(("launch %d (%s) was captured in a cuda.graph, which export cannot write yet: " ..
      "record the session's launches without a graph"):format(rec.launches + 1, info.name))
  end
  local ev = { kind = "launch", name = info.name, lowered = info.lowered,
    source = source_index(info), grid = info.grid, block = info.block, shared = info.shared,
    cooperative = info.cooperative or nil, args = {}, reps = 1 }
  local roots = {}
  for i, p in ipairs(info.params) do
    local arg, why = argument(p, i)
    if not arg then
      return fail(("launch %d (%s): %s"):format(rec.launches + 1, info.name, why))
    end
    ev.args[i] = arg
    if p.root and not roots[p.root] then
      roots[p.root] = arg.array
      roots[#roots + 1] = p.root
    end
  end
  if info.stream then
    rec.notes["launches the session queued on a stream run here on the default stream, " ..
      "in the order the session issued them"] = true
  end
  local vars = variables(info.kernel)
  local consts, why = sync_constants(vars, ev.source)
  if not consts then
    return fail(("launch %d (%s): %s"):format(rec.launches + 1, info.name, why))
  end
  local devices = sync_devices(vars, ev.source)
  for _, root in ipairs(roots) do sync_contents(root, roots[root]) end
  ev.key = launch_key(ev)
  rec.pending = { ev = ev, roots = roots, kernel = info.kernel, devices = devices }
end

local function after()
  local p = rec.pending
  if not p then return end
  rec.pending = nil
  rec.launches = rec.launches + 1
  local last = rec.events[#rec.events]
  if last and last.kind == "launch" and last.key == p.ev.key then
    last.reps = last.reps + 1
  else
    rec.events[#rec.events + 1] = p.ev
  end
  for _, root in ipairs(p.roots) do
    local a = p.roots[root]
    local bytes = root:tobytes()
    rec.last_bytes = rec.last_bytes - (a.last and #a.last or 0) + #bytes
    a.last = bytes
  end
  if #p.devices > 0 then
    local now = {}
    for _, v in ipairs(variables(p.kernel)) do now[v.name] = v.contents end
    for _, name in ipairs(p.devices) do
      local key = p.ev.source .. "\0" .. name
      local old = rec.device_after[key]
      rec.device_bytes = rec.device_bytes - (old and #old or 0) + #(now[name] or "")
      rec.device_after[key] = now[name]
    end
  end
end

-- The hook bind_kernel.c calls: ("before", info) or ("after").
function M.hook(phase, info)
  if not rec or not rec.on or rec.problem then return end
  if phase == "before" then before(info) else after() end
  if not rec.problem then check_bounds() end
end

function M.start() rec = new_record() end

function M.stop()
  if rec then
    rec.on = false
    rec.pending = nil
  end
end

-- Runs f with the record paused (a lesson's check launches the learner's kernel on inputs of
-- its own, which are no part of the session) and returns what f returns; raises what f raises,
-- the record resumed either way.
function M.paused(f)
  local was = rec and rec.on
  if was then rec.on = false end
  local r = table.pack(pcall(f))
  if was then rec.on = true end
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

-- The record as it stands (nil before the first cuda.record(true)), for export.lua.
function M.current() return rec end

-- string.unpack's format for a scalar argument of each PTX type. PTX spells int and unsigned
-- alike (.u32): a 32- or 64-bit integer is read signed, as the program writes it.
local SCALAR = { f32 = "<f", f64 = "<d", s32 = "<i4", u32 = "<i4", b32 = "<i4", s64 = "<i8",
  u64 = "<i8", b64 = "<i8", s16 = "<i2", u16 = "<I2", b16 = "<I2", s8 = "<i1", u8 = "<I1",
  b8 = "<I1" }

local function read_arg(a)
  if a.kind == "array" then return { array = a.array.id, first = a.first } end
  if a.kind == "null" then return { null = true } end
  if a.is_bool then return { value = a.bytes:byte(1) ~= 0, bytes = a.bytes } end
  local fmt = SCALAR[a.ptx]
  local ok = fmt and string.packsize(fmt) == #a.bytes
  return { value = ok and (string.unpack(fmt, a.bytes)) or nil, bytes = a.bytes }
end

-- The record as a lesson's check reads it, or nil before the first cuda.record(true):
-- {arrays = {{n =, dtype =, given =, last =}, ...}, launches = {{name =, grid =, block =,
-- shared =, reps =, args = {...}}, ...}, launched = launches with repetitions, problem =}.
-- An array argument is {array = i, first = k}: i indexes arrays, the record's own numbering
-- (the order launches first used them), so that a check tells the arrays a launch got apart by
-- what they are and what they held, never by the names the session or the program gave them;
-- given is the contents an array had when a launch first used it, last those after the last
-- launch that used it. A scalar is {value =, bytes =} (value a number, a boolean for a bool,
-- nil for a type read only as bytes), a null pointer {null = true}. Fresh tables: nothing a
-- check does to them reaches the record.
function M.read()
  if not rec then return nil end
  local out = { arrays = {}, launches = {}, launched = rec.launches, problem = rec.problem }
  for i, a in ipairs(rec.arrays) do
    out.arrays[i] = { n = a.n, dtype = a.dtype, last = a.last }
  end
  for _, ev in ipairs(rec.events) do
    if ev.kind == "set" and not out.arrays[ev.array.id].given then
      out.arrays[ev.array.id].given = ev.bytes
    elseif ev.kind == "launch" then
      local l = { name = ev.name, shared = ev.shared, reps = ev.reps, args = {},
        grid = { x = ev.grid.x, y = ev.grid.y, z = ev.grid.z },
        block = { x = ev.block.x, y = ev.block.y, z = ev.block.z } }
      for i, a in ipairs(ev.args) do l.args[i] = read_arg(a) end
      out.launches[#out.launches + 1] = l
    end
  end
  return out
end

-- cuda.record(): what the record holds.
function M.summary()
  if not rec then return { on = false, launches = 0, arrays = 0, sources = 0, bytes = 0 } end
  return { on = rec.on, launches = rec.launches, arrays = #rec.arrays, sources = #rec.sources,
    events = #rec.events, bytes = held_bytes(), problem = rec.problem }
end

return M
