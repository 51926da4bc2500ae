-- init.lua: the Lua side of start-up, run by the engine once `cuda` and `cpu`
-- are registered and before the first prompt.
--
-- It installs the printers of cuda's result tables, defines the learner's
-- globals `help` and `pp`, and returns the hooks the engine keeps:
--   print_results(...)      prints the values of an expression typed at the prompt
--   complete(text) -> list  tab-completion candidates for the word under the cursor
--   on_input(chunk)         each chunk typed at the prompt (a class records it)
--
-- Design stance: start-up runs before the prompt appears, so it loads only
-- what is on the interactive path: the printers (meta, pretty, format; the
-- first result needs them) and completion (the first Tab does). Loading them
-- now also means they capture the standard functions before a learner can
-- shadow `table` or `type` with a variable of that name. All of it takes well
-- under a millisecond. help.lua, the largest file and the one least often
-- used, is loaded on the first help() call through the stub below.

local meta = require "meta"
local pretty = require "pretty"
local complete = require "complete"

local cuda = rawget(_G, "cuda")
if type(cuda) == "table" then meta.install(cuda) end

-- help(...) loads help.lua on its first call. A plain function rather than
-- the module table, so that `help` completes as `help(` and help(help) finds
-- itself in the reverse map.
function help(...)
  return require("help").help(...)
end

pp = pretty.print

-- The lesson commands (lessons, lesson, next, check, ...) are stubs that load the lesson
-- engine on first use; lesson_boot also peeks at the progress file, so a restarted engine
-- knows which lesson and step continue.
require("lesson_boot").install(_G)

-- cuda.sweep, occupancy, versus, plot: stubs that load their modules on first call.
if type(cuda) == "table" then require("visual").install(cuda) end

-- on_input(chunk): each chunk typed at the prompt, for a class's record of the
-- learner's submission (classroom.lua is loaded only in a class) and for
-- checks that look at how a value was computed (lesson_check.computed).
local function on_input(chunk)
  local c = package.loaded.classroom
  if c then c.on_input(chunk) end
  local check = package.loaded.lesson_check
  if check then check.typed(chunk) end
end

return {
  print_results = pretty.fitted,
  complete = complete.candidates,
  on_input = on_input,
}
