-- term.lua: what the terminal that shows our charts can do: its width, UTF-8,
-- colour, and whether there is a terminal at all.
--
-- term.clean(s [, multiline]) makes text that came from someone else (a class
-- folder's file names, learners' names and messages) safe to print: the one
-- function every printer of class data calls on its way to the terminal.
--
-- Used by chart.lua, progress.lua and the printers of sweep and versus. Every
-- answer can be forced by a field (term.width_override, term.utf8,
-- term.color_override, term.tty_override), which is what tests do, so no test
-- depends on the machine it runs on.
--
-- Design stance: ask cheaply and once. The engine is a child process that
-- writes straight to the console's stdout, so "is stdout a terminal?" is
-- answered by the shell's `test -t 1`, which inherits that descriptor: one
-- fork, about a millisecond, the first time a chart or progress bar needs it
-- and never at start-up. (Turned down: a C flag set by the engine, which would
-- put a Lua-only concern into C; TERM alone, which is set even when output is
-- piped into a file.) Colour follows the no-color.org convention: NO_COLOR
-- set to anything turns it off, always; CUDALAB_COLOR=1 or 0 forces it;
-- otherwise colour goes to a terminal whose TERM is not "dumb".

local math, os, tonumber, type, utf8 = math, os, tonumber, type, utf8

local format = require "format"

local term = {}

local tty_cache -- nil until asked: true/false

-- Whether standard output is a terminal (cached after the first answer).
function term.tty()
  if term.tty_override ~= nil then return term.tty_override end
  if tty_cache == nil then
    local ok = os.execute("test -t 1")
    tty_cache = ok == true
  end
  return tty_cache
end

-- Whether text may carry ANSI colours; see the stance above.
function term.color()
  if term.color_override ~= nil then return term.color_override end
  local no = os.getenv("NO_COLOR")
  if no and no ~= "" then return false end
  local force = os.getenv("CUDALAB_COLOR")
  if force == "1" then return true end
  if force == "0" then return false end
  local t = os.getenv("TERM")
  if t == nil or t == "" or t == "dumb" then return false end
  return term.tty()
end

-- Whether block characters (█, ▏) will show; the locale decides, as for "µs".
function term.utf8()
  if term.utf8_override ~= nil then return term.utf8_override end
  return format.is_utf8()
end

-- Columns to fit in: COLUMNS when the shell exported it, else 80. Clamped to
-- 40..200 so a chart never degenerates or sprawls. (Asking the tty with
-- `stty size` would cost a fork per chart; learners who resize can export
-- COLUMNS, and 80 is what a chart meant for a handout wants anyway.)
function term.width()
  local w = term.width_override or tonumber(os.getenv("COLUMNS") or "")
  if type(w) ~= "number" then w = 80 end
  if w < 40 then w = 40 elseif w > 200 then w = 200 end
  return math.floor(w)
end

local COLORS = {
  red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36",
  gray = "90", bold = "1", dim = "2",
}

-- s wrapped in the colour's escape codes when colour is on, else s itself.
function term.paint(s, color)
  if not color or not COLORS[color] or not term.color() then return s end
  return "\27[" .. COLORS[color] .. "m" .. s .. "\27[0m"
end

-- Display width of s: code points, ignoring ANSI colour escapes. Bars and
-- labels are all single-width characters, so this is exact for our text.
function term.len(s)
  s = s:gsub("\27%[[%d;]*m", "")
  return utf8.len(s) or #s
end

-- What clean() shows for code points a terminal would obey rather than show:
-- C1 controls (U+0080..U+009F: U+009B is a CSI on some terminals) and the
-- bidirectional overrides, which reorder what is shown around them.
local function hidden(cp)
  return (cp >= 0x80 and cp <= 0x9F) or (cp >= 0x202A and cp <= 0x202E) or
    (cp >= 0x2066 and cp <= 0x2069)
end

-- One byte or character at i of s, cleaned: the text and where the next one starts.
local function clean_at(s, i, keep_newline)
  local b = s:byte(i)
  if b < 0x80 then
    if (b < 32 and not (keep_newline and b == 10)) or b == 127 then
      return string.format("\\x%02x", b), i + 1
    end
    return string.char(b), i + 1
  end
  local n = b >= 0xF0 and b < 0xF8 and 4 or b >= 0xE0 and 3 or b >= 0xC2 and b < 0xE0 and 2 or 0
  local seq = n > 0 and s:sub(i, i + n - 1) or ""
  if #seq == n and n > 0 and utf8.len(seq) == 1 then
    local cp = utf8.codepoint(seq)
    if hidden(cp) then return string.format("\\u%04x", cp), i + n end
    return seq, i + n
  end
  return string.format("\\x%02x", b), i + 1 -- not UTF-8: the byte, shown
end

-- clean(s [, multiline]) -> s made safe to print: ESC and the other C0
-- controls, DEL, C1 controls and bidirectional overrides shown as \x1b or
-- \u009b, bytes that are not UTF-8 as \xff; newlines kept when multiline.
-- Shown rather than dropped or turned into '?': a file name then reads as
-- what it is, and can be typed to remove the file. Text with nothing to
-- clean (nearly all) is returned as it is, after one find().
function term.clean(s, multiline)
  s = tostring(s)
  local unsafe = multiline and "[%z\1-\9\11-\31\127-\255]" or "[%z\1-\31\127-\255]"
  if not s:find(unsafe) then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local j = s:find(unsafe, i) or n + 1
    if j > i then out[#out + 1] = s:sub(i, j - 1) end
    if j > n then break end
    out[#out + 1], i = clean_at(s, j, multiline)
  end
  return table.concat(out)
end

-- One line longer than width broken at spaces, its continuation lines
-- indented two more than the line itself, so a terminal never splits a word.
local function fit_line(line, width)
  if term.len(line) <= width or not line:find("%S%s+%S") then return line end
  local lead = line:match("^%s*")
  local out, cur = {}, lead
  for word in line:gmatch("%S+") do
    if cur:find("%S") and term.len(cur) + 1 + term.len(word) > width then
      out[#out + 1] = cur
      cur = lead .. "  " .. word
    else
      cur = cur:find("%S") and (cur .. " " .. word) or (cur .. word)
    end
  end
  out[#out + 1] = cur
  return table.concat(out, "\n")
end

-- fit(text [, width]) -> text whose lines longer than width (the terminal's)
-- are broken at spaces; shorter lines, and their spacing, are left as they are.
function term.fit(text, width)
  width = width or term.width()
  return (tostring(text):gsub("[^\n]+", function(line) return fit_line(line, width) end))
end

return term
