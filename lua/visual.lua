-- visual.lua: puts cuda.sweep, cuda.occupancy, cuda.versus, cuda.roofline and cuda.plot into
-- the cuda table, and their entries into help. Loaded by init.lua at start-up.
--
-- Design stance: start-up pays for nothing here. Each function is a stub that
-- loads its module (sweep.lua, occupancy.lua, versus.lua, svg.lua, and the
-- chart and terminal code they use) on first call, and help entries are added
-- only when help.lua itself is first loaded: a package.preload hook wraps
-- whatever loader was there (another module may have wrapped it already), so
-- help() stays lazy and still documents these functions the first time.

local assert, loadfile, package, pairs, rawget, require, type = assert, loadfile, package, pairs, rawget, require, type
local rawset, setmetatable = rawset, setmetatable

local visual = {}

-- name -> {module, function in it}
local STUBS = {
  sweep = { "sweep", "sweep" },
  occupancy = { "occupancy", "occupancy" },
  versus = { "versus", "versus" },
  plot = { "svg", "plot" },
  timeline = { "timeline", "timeline" },
}

-- visual.HELP: the help entries of these functions, in visual_help.lua, read on first use
-- (when help.lua is loaded): their text is most of what start-up would parse here otherwise.
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

-- cuda.roofline: a table to call (cuda.roofline(points)) that also holds
-- measure and peaks, each loading roofline.lua on first use.
local function roofline_stub()
  return setmetatable({
    measure = function(...) return require("roofline").measure(...) end,
    peaks = function(...) return require("roofline").peaks(...) end,
  }, { __call = function(_, ...) return require("roofline").roofline(...) end })
end

-- Installs the stubs into cuda and the help hook; returns cuda.
function visual.install(cuda)
  if type(cuda) ~= "table" then return cuda end
  for name, s in pairs(STUBS) do
    cuda[name] = function(...) return require(s[1])[s[2]](...) end
  end
  cuda.roofline = roofline_stub()
  if package.loaded.help then
    register_help(package.loaded.help)
  else
    local previous = package.preload.help
    package.preload.help = function(name, ...)
      local mod
      if previous then
        mod = previous(name, ...)
      else
        local path = assert(package.searchpath(name, package.path))
        mod = assert(loadfile(path))(name, path)
      end
      return register_help(mod)
    end
  end
  return cuda
end

return visual
