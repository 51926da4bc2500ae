-- progress.lua: a one-line progress bar for work made of steps (the
-- configurations of a sweep, the stages of cuda.versus).
--
-- Used by sweep.lua and versus.lua. The caller measures time (it already
-- times each step with the host's monotonic clock) and reports it with
-- p:update(done, elapsed_ms, label); this module only decides whether and
-- what to draw, so it is tested without a clock or a terminal.
--
-- Design stance:
--  * Quiet unless useful: nothing on a pipe or in a file (term.tty()), and on
--    a terminal only once the work looks like it will take over a second
--    (elapsed so far, extrapolated over the steps left). Quick sweeps print
--    exactly what a script would see.
--  * Interrupt-safe: the bar is drawn and then followed by a newline, and
--    each redraw first moves the cursor up one line (ESC [A) and clears it.
--    Ctrl-C raises "interrupted" in the running Lua code, and after that no
--    Lua code of ours runs (the engine keeps the interrupt armed), so the bar
--    must never leave the cursor mid-line for the error message to land on.
--    finish() erases the bar, so a finished sweep leaves only its table.

local io, math, setmetatable, string, utf8 = io, math, setmetatable, string, utf8

local term = require "term"

local progress = {}

progress.threshold_ms = 1000 -- show the bar when the whole job looks longer than this

local Bar = {}
Bar.__index = Bar

-- A progress bar for `total` steps of `what` ("sweep vector_add"). `hint` is
-- shown at the end of the line (how to stop and what is kept).
function progress.new(total, what, hint)
  return setmetatable({ total = total, what = what, hint = hint, shown = false,
    write = progress.write or function(s) io.stdout:write(s); io.stdout:flush() end }, Bar)
end

-- "3 s", "1 min 20 s"; whole seconds are precise enough for "time left".
local function eta(ms)
  local s = math.floor(ms / 1000 + 0.5)
  if s < 60 then return s .. " s" end
  return string.format("%d min %d s", s // 60, s % 60)
end

-- The line for `done` of the steps after `elapsed` ms, label of the current step.
function Bar:line(done, elapsed, label)
  local frac = self.total > 0 and done / self.total or 1
  local left = done > 0 and elapsed / done * (self.total - done) or 0
  local fill, empty = "█", "░"
  if not term.utf8() then fill, empty = "#", "-" end
  local n = math.floor(frac * 20 + 0.5)
  local s = string.format("%s [%s%s] %d/%d", self.what, fill:rep(n), empty:rep(20 - n),
    done, self.total)
  if label then s = s .. "  " .. label end
  if done > 0 and done < self.total then s = s .. "  ~" .. eta(left) .. " left" end
  if self.hint then s = s .. "  (" .. self.hint .. ")" end
  -- never wrap: a wrapped line would break the one-line-up redraw
  local width = term.width() - 1
  if term.len(s) > width then
    local cut = utf8.offset(s, width) or #s + 1
    s = s:sub(1, cut - 1)
  end
  return s
end

-- Reports that `done` steps are finished after `elapsed` ms; `label` names
-- the step now running. Draws when the job looks long and stdout is a terminal.
function Bar:update(done, elapsed, label)
  if not self.shown then
    local projected = done > 0 and elapsed / done * self.total or elapsed
    if done >= self.total or projected < progress.threshold_ms or not term.tty() then return end
    self.shown = true
    self.write(self:line(done, elapsed, label) .. "\n")
    return
  end
  self.write("\27[A\r\27[K" .. self:line(done, elapsed, label) .. "\n")
end

-- Erases the bar if it was drawn.
function Bar:finish()
  if self.shown then
    self.write("\27[A\r\27[K")
    self.shown = false
  end
end

return progress
