-- init.lua: the Lua side of start-up, run by the engine once `cuda` and `cpu`
-- are registered and before the first prompt.
--
-- It installs the printers of cuda's result tables, defines the learner's
-- globals `help` and `pp`, and returns the hooks the engine keeps:
--   print_results(...)      prints the values of an expression typed at the prompt
--   complete(text, before) -> list  tab-completion candidates for the word under the cursor,
--                                   before: the line's text in front of it
--   on_input(chunk)         each chunk typed at the prompt (a class records it)
--
-- Design stance: start-up runs before the prompt appears, so it loads nothing
-- the prompt does not need. The printers (meta, pretty, format and what they
-- use), completion and help are loaded on first use: the first result
-- printed, the first Tab, the first help() call; so are the lesson engine and
-- visual.lua (cuda.sweep and the like), whose stubs are here: this is the one
-- file start-up reads. Those modules capture the standard functions (`table`,
-- `type`, `next`) when they load, and by then a learner may have named a
-- variable `table`, and the lesson stub has replaced `next`; so they are loaded
-- with the globals of start-up put back for the length of the load
-- (load_standard below). What is left here takes a fraction of a millisecond.

-- Captured now, like the modules' own: a learner may shadow them later.
local error, package, pairs, pcall, rawget = error, package, pairs, pcall, rawget
local rawset, require, select, setmetatable = rawset, require, select, setmetatable
local tostring, type = tostring, type
local remove = table.remove

-- The globals and libraries as start-up left them (the engine keeps them once this file has
-- run, before any learner code: repl/bind/bind_standard.c); with(f, ...) runs f with them in
-- place and the learner's own put back after, error or not.
local function with_standard(f, ...)
  return require("cudalab.standard").with(f, ...)
end

-- require(name) with the globals of start-up in place while it loads.
local function load_standard(name)
  local mod = package.loaded[name]
  if mod ~= nil then return mod end
  return with_standard(require, name)
end

local cuda = rawget(_G, "cuda")

-- cuda's result tables (cuda._meta, whose __name C sets) print through
-- meta.lua: each __tostring is a stub that installs the real printers on its
-- first call, then prints with them.
if type(cuda) == "table" and type(rawget(cuda, "_meta")) == "table" then
  local metas = cuda._meta
  for _, mt in pairs(metas) do
    local stub
    stub = function(v)
      load_standard("meta").install(cuda)
      if rawget(mt, "__tostring") == stub then mt.__tostring = nil end -- meta has none for it
      -- the real printers are what checks see from now on
      local keep = require("cudalab.standard").set
      for _, m in pairs(metas) do keep(m, "__tostring", rawget(m, "__tostring")) end
      return tostring(v)
    end
    mt.__tostring = stub
  end
end

-- help(...) loads help.lua on its first call. A plain function rather than
-- the module table, so that `help` completes as `help(` and help(help) finds
-- itself in the reverse map.
function help(...)
  return load_standard("help").help(...)
end

-- pp(value): the pretty printer, loaded on its first use.
function pp(...)
  return load_standard("pretty").print(...)
end

-- The lesson commands (lesson_boot.COMMANDS, which the lesson engine and a class read) are
-- stubs that load the lesson engine on first use; each is installed only where the name is
-- free, so a script's own `check` or `reset` wins. `next` is always taken, by Lua's own: its
-- stub behaves as Lua's next when given arguments and as the lesson command without (Lua's
-- next without arguments is an error anyway). The banner's note on where the learner was is
-- lesson_boot.lua's, which the engine loads only to print the banner.
--
-- A command runs with the standard library in place (with_standard): a lesson's text, its
-- examples and its verdicts are not at the mercy of a string.format the learner replaced.
local builtin_next = next
local function command(name, ...)
  return with_standard(function(...) return require("lessons").commands[name](...) end, ...)
end
for name in ("lessons lesson back hint check skip reset bye edit workfile"):gmatch("%S+") do
  if rawget(_G, name) == nil then
    rawset(_G, name, function(...) return command(name, ...) end)
  end
end
rawset(_G, "next", function(...)
  if select("#", ...) > 0 then return builtin_next(...) end
  return command("next")
end)

-- cuda.sweep, occupancy, versus, plot, timeline and roofline: stubs that load visual.lua on
-- their first call (visual.call loads the function's own module). help.lua, whenever it is
-- first loaded (help(), the lesson engine), loads visual.lua too, for these functions' entries.
if type(cuda) == "table" then
  local function visual(name)
    return function(...) return load_standard("visual").call(name, ...) end
  end
  for name in ("sweep occupancy versus plot timeline"):gmatch("%S+") do
    cuda[name] = visual(name)
  end
  local roofline = visual("roofline")
  cuda.roofline = setmetatable({ measure = visual("roofline.measure"),
    peaks = visual("roofline.peaks") }, { __call = function(_, ...) return roofline(...) end })
  -- cuda.export: loads export.lua on its first call (cuda.record, in C, loads the recorder).
  cuda.export = function(path) return load_standard("export").export(path) end
  local previous = package.preload.help
  package.preload.help = function(...) return load_standard("visual").load_help(previous, ...) end
end

-- The chunks typed before the lesson engine loads (lesson(1) loads it), which lesson_check
-- takes over when it loads: a task's formula may read a name typed first thing, `gpu =
-- cuda.device()`, and a check that reruns it must rerun that line too. The latest EARLY_CHUNKS,
-- at most EARLY_BYTES in all, the oldest dropped first; a chunk larger than that is not kept. A
-- list and a count here, rather than loading lesson_check on the first chunk typed: what the
-- prompt does not need stays unloaded.
local EARLY_CHUNKS, EARLY_BYTES = 200, 256 * 1024
local early = { bytes = 0 }
package.loaded["cudalab.early_input"] = early

local function keep_early(chunk)
  if #chunk > EARLY_BYTES then return end
  early[#early + 1] = chunk
  early.bytes = early.bytes + #chunk
  while #early > EARLY_CHUNKS or early.bytes > EARLY_BYTES do
    early.bytes = early.bytes - #remove(early, 1)
  end
end

-- on_input(chunk): each chunk typed at the prompt, for a class's record of the
-- learner's submission (classroom.lua is loaded only in a class) and for
-- checks that look at how a value was computed (lesson_check.computed).
local function on_input(chunk)
  local c = package.loaded.classroom
  if c then c.on_input(chunk) end
  local check = package.loaded.lesson_check
  if check then check.typed(chunk)
  elseif type(chunk) == "string" then keep_early(chunk) end
end

return {
  -- the values of what the learner types, broken at spaces to the terminal's width
  print_results = function(...) return load_standard("pretty").fitted(...) end,
  complete = function(text, before)
    return load_standard("complete").candidates(text, nil, before)
  end,
  on_input = on_input,
}
