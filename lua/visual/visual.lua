-- visual.lua: cuda.sweep, cuda.occupancy, cuda.versus, cuda.roofline, cuda.plot and
-- cuda.timeline, and their entries in help. Start-up does not load it: init.lua puts stubs of
-- these functions into cuda that call visual.call, and a package.preload hook that calls
-- visual.load_help, so this file is read at the first call of one of them or when help.lua is
-- first loaded. visual.install(cuda) does both at once (tests give it a stand-in cuda).
--
-- Design stance: start-up pays for nothing here. Each function loads its
-- module (sweep.lua, occupancy.lua, versus.lua, svg.lua, and the chart and
-- terminal code they use) on first call, and help entries are added only when
-- help.lua itself is first loaded: the preload hook wraps whatever loader was
-- there (another module may have wrapped it already), so help() stays lazy and
-- still documents these functions the first time.

local assert, loadfile, package, pairs, rawget = assert, loadfile, package, pairs, rawget
local rawset, require, setmetatable, type = rawset, require, setmetatable, type

local visual = {}

-- name in cuda -> {module, function in it}; the roofline's are not fields of cuda itself
local STUBS = {
  sweep = { "sweep", "sweep" },
  occupancy = { "occupancy", "occupancy" },
  versus = { "versus", "versus" },
  plot = { "svg", "plot" },
  timeline = { "timeline", "timeline" },
}
local ROOFLINE = {
  roofline = { "roofline", "roofline" },
  ["roofline.measure"] = { "roofline", "measure" },
  ["roofline.peaks"] = { "roofline", "peaks" },
}

-- visual.call("sweep", ...): cuda.sweep(...), loading its module on the first call.
function visual.call(name, ...)
  local s = STUBS[name] or ROOFLINE[name]
  return require(s[1])[s[2]](...)
end

-- visual.HELP: the help entries of these functions, in visual_help.lua, read on first use
-- (when help.lua is loaded): their text is most of what this file would parse otherwise.
setmetatable(visual, {
  __index = function(t, k)
    if k ~= "HELP" then return nil end
    local entries = require "visual_help"
    rawset(t, "HELP", entries)
    return entries
  end,
})

-- Adds visual.HELP's entries to a freshly loaded help module.
local function register_help(help)
  local cuda = rawget(_G, "cuda")
  for name, e in pairs(visual.HELP) do
    -- "cuda.roofline.measure": walk the dotted name down from cuda
    local v = cuda
    for part in name:gmatch("[^.]+", 6) do v = type(v) == "table" and rawget(v, part) or nil end
    help.register(name, e, v)
  end
  return help
end
visual.register_help = register_help

-- help.lua loaded through previous (the preload hook that was there before, or none), with
-- visual.HELP's entries added: what the package.preload.help hook returns.
function visual.load_help(previous, name, ...)
  local mod
  if previous then
    mod = previous(name, ...)
  else
    local path = assert(package.searchpath(name, package.path))
    mod = assert(loadfile(path))(name, path)
  end
  return register_help(mod)
end

-- Installs the functions into cuda and the help hook; returns cuda.
function visual.install(cuda)
  if type(cuda) ~= "table" then return cuda end
  for name in pairs(STUBS) do
    cuda[name] = function(...) return visual.call(name, ...) end
  end
  -- cuda.roofline: a table to call (cuda.roofline(points)) that also holds measure and peaks
  cuda.roofline = setmetatable({
    measure = function(...) return visual.call("roofline.measure", ...) end,
    peaks = function(...) return visual.call("roofline.peaks", ...) end,
  }, { __call = function(_, ...) return visual.call("roofline", ...) end })
  if package.loaded.help then
    register_help(package.loaded.help)
  else
    local previous = package.preload.help
    package.preload.help = function(...) return visual.load_help(previous, ...) end
  end
  return cuda
end

return visual
