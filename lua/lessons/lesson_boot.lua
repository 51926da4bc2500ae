-- lesson_boot.lua: the names of the lesson commands (which the lesson engine,
-- a class and the grader read), and where the learner was, for the start-up
-- banner.
--
-- Design stance: start-up stays cheap. It does not read this file: init.lua
-- installs the commands (the names below) as stubs that load the lesson
-- engine (lessons.lua) on first use, and the engine loads this file only to
-- print the banner, on a terminal. The progress file is peeked at only when
-- the banner asks where the learner was (resume_note), and only when it is
-- small, so that a fresh start can say which lesson and step continue without
-- loading the lesson engine, the parser or the lesson files.

local M = {}

M.COMMANDS = { "lessons", "lesson", "next", "back", "hint", "check", "skip", "reset", "bye", "edit",
               "workfile" }

-- Where the learner was when the progress was last saved: lesson name and
-- step, or nil. Filled by the first resume_note, unless set before.
M.current, M.step = nil, nil
local peeked = false

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
  local resume = number and string.format("lesson(%d)", number)
    or string.format("lesson %q", M.current)
  return string.format("You were in lesson %s, at step %d: %s resumes it.", M.current,
    M.step or 1, resume)
end

return M
