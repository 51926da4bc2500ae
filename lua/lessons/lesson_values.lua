-- lesson_values.lua: the values a lesson's own code assigned, as the lesson engine keeps them:
-- so that its checks see the lesson's values and never a learner's replacement, and free play
-- that replaced one is undone at the next step; and so that the engine is never what keeps a
-- learner's device memory alive.
--
-- Design stance:
--  * A value that holds arrays (an array, or a table with arrays in it) is held weakly: the
--    learner's global is what keeps it alive. Replacing it (`results = {}`, `results = false`)
--    or dropping it (`results = nil`) lets its memory go at the next collection, the learner's
--    own collectgarbage() included, and the engine forgets the name: a check then reads nil
--    under it, never the learner's value, and the next step does not put it back. Holding
--    every value strongly, as the engine once did, kept a learner's fix of a leak from freeing
--    anything; holding every value weakly would lose a CPU reference or a function of the
--    lesson's that the learner replaced, which checks must still see and the next step puts
--    back. Values that hold no arrays stay held strongly (keep).
--  * Whether a value holds arrays is told after each block of lesson code has run (settle),
--    since a table is often filled after it is assigned (`results = {}`, then a loop): a raw
--    walk (no metamethod runs) of its keys and values, nested tables included, of at most WALK
--    entries. A table larger than that (a CPU reference of millions of numbers) is taken to
--    hold none, as before; so is a function, whose upvalues are not walked (a lesson's examples
--    keep no locals).
--  * The arrays in each value the lesson's examples assign are recorded too, weakly, as the
--    block that assigned it left them (arrays): a check that judges whether the learner let
--    them go reads that record, which the learner cannot change, and not a table of the
--    lesson's, whose contents the learner can (and to which they may add arrays of their own).

local M = {}

-- The standard functions as this file was loaded: the walk runs after lesson code, in the
-- learner's Lua state, where a global `next` or `type` may be anyone's.
local next, type, getmetatable, rawget, setmetatable, pairs, ipairs, tostring =
  next, type, getmetatable, rawget, setmetatable, pairs, ipairs, tostring
local math_type, string_format, table_sort = math.type, string.format, table.sort

local WALK = 4096 -- the most keys and values walked in one value
local DEPTH = 8   -- the most nested tables walked into
local WEAK_VALUES, WEAK_KEYS = { __mode = "v" }, { __mode = "k" }

-- The marker of a lesson value the learner freed: a check reads nil under its name.
M.DROPPED = setmetatable({}, { __name = "dropped" })

-- new() -> a store for one open lesson.
function M.new()
  return {
    record = setmetatable({}, WEAK_VALUES), -- name -> value lesson code assigned (examples and
                                            -- solutions): what the next step puts back
    truth = setmetatable({}, WEAK_VALUES),  -- name -> value the lesson's examples assigned: what
                                            -- checks see under that name (M.DROPPED once freed)
    named = {},  -- name -> true: a name the examples last assigned a value, which checks see
                 -- as nil once it is gone from truth (collected)
    keep = {},   -- value -> true: the values in record or truth that hold no arrays, held here
    arrays = {}, -- name -> {array -> where} (weak keys): every array found under the value of
                 -- that name the lesson's examples set, after they ran, and where ("results[2]")
    seen = {},   -- name -> how many arrays were ever recorded under it
    assigned = {}, -- name -> true: assigned by the examples since the last settle
  }
end

-- writer(store) -> the table the examples' assignments go to (lesson_run.env's `also`): each
-- sets the lesson's value (truth) and marks the name assigned, for settle. A name the examples
-- set to nil is no lesson value: checks read the globals under it, as they always did.
function M.writer(store)
  return setmetatable({}, {
    __newindex = function(_, k, v)
      store.truth[k] = v
      store.assigned[k] = true
      store.named[k] = v ~= nil or nil
    end,
    __index = store.truth,
  })
end

-- Whether v is one of cudalab's arrays or host buffers: userdata, or a table carrying their
-- metatable's name (what a pure-Lua stand-in for the C module makes).
local function is_memory(v)
  local t = type(v)
  if t ~= "userdata" and t ~= "table" then return false end
  local mt = getmetatable(v)
  local name = type(mt) == "table" and rawget(mt, "__name")
  return name == "cudalab.Array" or name == "cudalab.HostBuffer"
end

local function key_text(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return "." .. k end
  if math_type(k) == "integer" or type(k) == "string" then
    return "[" .. (type(k) == "string" and string_format("%q", k) or tostring(k)) .. "]"
  end
  return "[" .. type(k) .. "]"
end

-- Walks v (found at `where`) and calls found(array, where) for each array in it. budget is a
-- one-element table counting the entries left; returns false once it ran out.
local function walk(v, where, found, budget, seen, depth)
  if is_memory(v) then
    found(v, where)
    return true
  end
  if type(v) ~= "table" or seen[v] or depth > DEPTH then return true end
  seen[v] = true
  local k, x = next(v)
  while k ~= nil do
    budget[1] = budget[1] - 1
    if budget[1] < 0 then return false end
    if is_memory(k) then found(k, where .. "[key]") end
    if not walk(x, where .. key_text(k), found, budget, seen, depth + 1) then return false end
    k, x = next(v, k)
  end
  return true
end

-- The arrays in v (found under `name`): a list of {array, where}, or nil when v holds none or
-- is too large to tell.
local function arrays_in(v, name)
  if type(v) ~= "table" and type(v) ~= "userdata" then return nil end
  local list = {}
  local whole = walk(v, name, function(a, where) list[#list + 1] = { a, where } end, { WALK },
    {}, 0)
  if not whole or #list == 0 then return nil end
  return list
end

-- Records the arrays in v, the lesson's value `name`.
local function note_arrays(store, name, v)
  local list = arrays_in(v, name)
  if not list then return end
  local known = store.arrays[name]
  if not known then
    known = setmetatable({}, WEAK_KEYS)
    store.arrays[name] = known
  end
  for _, it in ipairs(list) do
    if known[it[1]] == nil then
      known[it[1]] = it[2]
      store.seen[name] = (store.seen[name] or 0) + 1
    end
  end
end

-- settle(store): run after each block of lesson code. Records the arrays in each value the
-- examples assigned in it, and tells which of the lesson's values hold arrays (held weakly from
-- now on) and which do not (kept).
function M.settle(store)
  for k in pairs(store.assigned) do
    local v = store.truth[k]
    if v ~= nil and v ~= M.DROPPED then note_arrays(store, k, v) end
  end
  store.assigned = {}
  local keep, walked = {}, {}
  for _, t in ipairs({ store.truth, store.record }) do
    for _, v in pairs(t) do
      local tv = type(v)
      if (tv == "table" or tv == "userdata") and v ~= M.DROPPED and walked[v] == nil then
        walked[v] = arrays_in(v, "") ~= nil
        if not walked[v] then keep[v] = true end
      elseif tv == "function" or tv == "thread" then
        keep[v] = true
      end
    end
  end
  store.keep = keep
end

-- Whether the lesson's value v is one the engine holds only weakly (it held arrays).
local function weak(store, v)
  local t = type(v)
  return (t == "table" or t == "userdata") and v ~= M.DROPPED and not store.keep[v]
end

-- forget(store, globals) -> true when something was forgotten. A name the learner set to nil
-- is forgotten (dropping a name is deliberate: freeing what it held); so is one whose value
-- held arrays and that the learner has since replaced with anything else. A replaced value
-- that held none is kept: more often a slip, which the next step puts right.
function M.forget(store, globals)
  local any = false
  for k, v in pairs(store.record) do
    local g = rawget(globals, k)
    if g == nil or (g ~= v and weak(store, v)) then
      store.record[k] = nil
      any = true
    end
  end
  for k, v in pairs(store.truth) do
    local g = rawget(globals, k)
    if v ~= M.DROPPED and (g == nil or (g ~= v and weak(store, v))) then
      store.truth[k] = M.DROPPED
      any = true
    end
  end
  return any
end

-- truth(store, k) -> true, v: the lesson's value under k (nil once freed or let go); false when
-- the lesson's examples never assigned k.
function M.truth(store, k)
  local v = store.truth[k]
  if v == M.DROPPED then return true, nil end
  if v ~= nil then return true, v end
  if store.named[k] then return true, nil end
  return false
end

-- arrays(store, name) -> list, count: the arrays recorded under the lesson's value `name` that
-- are still alive, each {array = a, where = "results[2]"} (in the order of where), and how many
-- were ever recorded under it.
function M.arrays(store, name)
  local list = {}
  for a, where in pairs(store.arrays[name] or {}) do
    list[#list + 1] = { array = a, where = where }
  end
  table_sort(list, function(x, y)
    if #x.where ~= #y.where then return #x.where < #y.where end
    return x.where < y.where
  end)
  return list, store.seen[name] or 0
end

return M
