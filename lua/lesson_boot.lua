-- lesson_boot.lua: what start-up does for lessons: installs the lesson
-- commands as stubs that load the lesson engine (lessons.lua) on first use,
-- and notes cheaply where the learner was.
--
-- Design stance: start-up stays cheap. The engine, the parser and the
-- lesson files are read only when a lesson command is first called; the
-- progress file is peeked at only when the banner asks where the learner
-- was (resume_note), and only when it is small, so that a fresh start can
-- say which lesson and step continue without loading the lesson engine.
-- The stubs are installed only where the name is free, so a script's own
-- `check` or `reset` wins; `next` is the exception, because it is always
-- taken by Lua's own next: the replacement behaves as Lua's next when given
-- arguments and as the lesson command without, and Lua's next without
-- arguments is an error anyway.

local M = {}

M.COMMANDS = { "lessons", "lesson", "next", "back", "hint", "check", "skip", "reset", "bye", "edit",
               "workfile" }

local builtin_next = next

-- Where the learner was when the progress was last saved: lesson name and
-- step, or nil. Filled by the first resume_note, unless set before.
M.current, M.step = nil, nil
local peeked = false

function M.install(G)
  for _, name in ipairs(M.COMMANDS) do
    local old = rawget(G, name)
    if name == "next" and old == builtin_next then
      rawset(G, "next", function(...)
        if select("#", ...) > 0 then return builtin_next(...) end
        return require("lessons").commands.next()
      end)
    elseif old == nil then
      rawset(G, name, function(...) return require("lessons").commands[name](...) end)
    end
  end
end

-- Reads where the learner was from the progress file, once, unless it was
-- set before.
local function peek()
  if peeked then return end
  peeked = true
  if M.current then return end
  local ok, progress = pcall(require, "lesson_progress")
  if ok then
    local pok, cur, step = pcall(progress.peek, progress.path())
    if pok then M.current, M.step = cur, step end
  end
end

-- One line for the start-up banner: the lesson in progress and the command
-- that resumes it, or nil when no lesson is open.
function M.resume_note()
  peek()
  if not M.current then return nil end
  local number = tonumber(M.current:match("^(%d+)%-"))
  local resume = number and string.format("lesson(%d)", number) or string.format("lesson %q", M.current)
  return string.format("You were in lesson %s, at step %d: %s resumes it.", M.current, M.step or 1, resume)
end

return M
