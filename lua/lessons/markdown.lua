-- markdown.lua: renders the Markdown of lesson text for a terminal: headings,
-- paragraphs reflowed to the terminal's width, bullet and numbered lists with
-- hanging indents, block quotes, pipe tables with aligned columns, **bold**,
-- *italics*, `inline code` and [links](url), with fenced and indented code
-- left exactly as written.
--
-- Design stance: the lessons are Markdown that must read well as files too,
-- so the renderer takes the subset they use and never guesses beyond it.
-- Inline code is opaque: nothing inside backticks is read as a link or as
-- emphasis, so `inc[{blocks, threads}](args)` keeps its brackets, and a code
-- span never breaks across lines unless it is wider than the line itself.
-- Lines break only between words. Colour and bold go through term.paint, so
-- they appear only on a terminal and never under NO_COLOR; without colour,
-- emphasis markers are dropped and code keeps its backticks, which still
-- marks what to type. (Turned down: an external renderer such as glow or
-- pandoc, which learners may not have.)

local term = require "term"

local M = {}

-- Inline text -> list of runs {text, style}; style: nil, "bold", "italic",
-- "code". Links become "text (url)". Underscores inside words (snake_case)
-- are not emphasis.
local function runs_of(s)
  local out = {}
  local function add(text, style)
    if text ~= "" then out[#out + 1] = { text = text, style = style } end
  end
  local function plain(t)
    t = t:gsub("%[([^%]]-)%]%(([^%)%s]-)%)", function(label, url)
      if label == url then return url end
      return label .. " (" .. url .. ")"
    end)
    local i = 1
    while i <= #t do
      local a, b, inner = t:find("%*%*(.-)%*%*", i)
      local c, d, it = t:find("%f[%w%*]%*([^%*%s][^%*]-)%*%f[^%w%*]", i)
      local e, f, iu = t:find("%f[%w_]_([^_%s][^_]-)_%f[^%w_]", i)
      -- the earliest marker wins
      local best, bs, be, bt = nil, #t + 1, nil, nil
      if a and a < bs then best, bs, be, bt = "bold", a, b, inner end
      if c and c < bs then best, bs, be, bt = "italic", c, d, it end
      if e and e < bs then best, bs, be, bt = "italic", e, f, iu end
      if not best then add(t:sub(i), nil) break end
      add(t:sub(i, bs - 1), nil)
      add(bt, best)
      i = be + 1
    end
  end
  local i = 1
  while i <= #s do
    local a, b, ticks = s:find("(`+)", i)
    if not a then plain(s:sub(i)) break end
    local c, d = s:find(ticks, b + 1, true)
    while c and s:sub(d + 1, d + 1) == "`" do c, d = s:find(ticks, d + 2, true) end
    if not c then plain(s:sub(i)) break end -- an unmatched backtick is text
    plain(s:sub(i, a - 1))
    local code = s:sub(b + 1, c - 1)
    if code:match("^ .* $") then code = code:sub(2, -2) end
    add(code, "code")
    i = d + 1
  end
  return out
end

-- Select Graphic Rendition codes; whether to use them is decided once, by
-- render's caller, so they are applied here without asking term again.
local SGR = { code = "36", bold = "1", italic = "3", heading = "1;4", quote = "90" }

local function sgr(text, style)
  return "\27[" .. SGR[style] .. "m" .. text .. "\27[0m"
end

local function paint(text, style, color)
  if style == "code" then return color and sgr(text, "code") or "`" .. text .. "`" end
  if style and color then return sgr(text, style) end
  return text
end

-- Runs -> words: {s = painted text, w = display width}. Spaces inside a code
-- span do not end a word, unless the span alone is wider than `room`.
local function words_of(runs, color, room)
  local words, cur, curw = {}, {}, 0
  local function flush()
    if curw > 0 or #cur > 0 then words[#words + 1] = { s = table.concat(cur), w = curw } end
    cur, curw = {}, 0
  end
  local function piece(text, style)
    if text == "" then return end
    cur[#cur + 1] = paint(text, style, color)
    curw = curw + term.len(paint(text, style, false))
  end
  for _, r in ipairs(runs) do
    local text = r.text
    if r.style == "code" and term.len(text) + 2 <= room then
      piece(text, "code")
    else
      local pieces = {}
      for sp, word in text:gmatch("(%s*)(%S*)") do
        if sp ~= "" or word ~= "" then pieces[#pieces + 1] = { sp = sp, word = word } end
      end
      for _, p in ipairs(pieces) do
        if p.sp ~= "" then flush() end
        piece(p.word, r.style) -- a code span too wide for a line breaks at its spaces
      end
    end
  end
  flush()
  return words
end

-- Greedy fill of words into lines of `width` columns; the first line starts
-- with `lead`, the others with `hang` (same display width or not).
local function fill(words, width, lead, hang)
  local lines, line, used = {}, lead, term.len(lead)
  local empty = true
  for _, w in ipairs(words) do
    if not empty and used + 1 + w.w > width then
      lines[#lines + 1] = line
      line, used, empty = hang, term.len(hang), true
    end
    if empty then
      line, used = line .. w.s, used + w.w
      empty = false
    else
      line, used = line .. " " .. w.s, used + 1 + w.w
    end
  end
  lines[#lines + 1] = line
  return lines
end

local function inline(s, color, width, lead, hang)
  local room = width - term.len(hang or lead)
  return fill(words_of(runs_of(s), color, room), width, lead, hang or lead)
end

-- The text of a table cell or heading, rendered on one line.
local function one_line(s, color)
  local parts = {}
  for _, r in ipairs(runs_of(s)) do parts[#parts + 1] = paint(r.text, r.style, color) end
  return table.concat(parts)
end

local function split_row(line)
  line = line:gsub("^%s*|", ""):gsub("|%s*$", "")
  local cells, cur, i, incode = {}, {}, 1, false
  while i <= #line do
    local ch = line:sub(i, i)
    if ch == "`" then incode = not incode end
    if ch == "\\" and line:sub(i + 1, i + 1) == "|" then
      cur[#cur + 1] = "|"
      i = i + 1
    elseif ch == "|" and not incode then
      cells[#cells + 1] = table.concat(cur):match("^%s*(.-)%s*$")
      cur = {}
    else
      cur[#cur + 1] = ch
    end
    i = i + 1
  end
  cells[#cells + 1] = table.concat(cur):match("^%s*(.-)%s*$")
  return cells
end

local function is_separator(line)
  return line ~= nil and line:match("^%s*|?[%s:|%-]+|?%s*$") ~= nil and line:find("%-%-%-") ~= nil
end

-- The widest word of a cell's text (a code span counts as one word).
local function longest_word(text)
  local w = 0
  for _, word in ipairs(words_of(runs_of(text), false, math.huge)) do w = math.max(w, word.w) end
  return w
end

-- Column widths that fit `room` columns of text: each column as wide as its
-- widest cell while they fit; else the widest column is narrowed, a column
-- at a time, down to its longest word (or an equal share of the room, if that
-- is less). A table whose columns cannot narrow enough stays wider than the
-- terminal, which wraps it.
local function fit_widths(rows, natural, room)
  local ncol, total = #natural, 0
  local widths, floor = {}, {}
  for c = 1, ncol do
    widths[c], total = natural[c], total + natural[c]
    local longest = 0
    for _, r in ipairs(rows) do longest = math.max(longest, longest_word(r[c] or "")) end
    floor[c] = math.min(natural[c], math.max(longest, 1), math.max(8, room // ncol))
    floor[c] = math.max(floor[c], math.min(natural[c], 4))
  end
  while total > room do
    local widest
    for c = 1, ncol do
      if widths[c] > floor[c] and (not widest or widths[c] > widths[widest]) then widest = c end
    end
    if not widest then break end
    widths[widest], total = widths[widest] - 1, total - 1
  end
  return widths
end

-- A pipe table with aligned columns (right-aligned where the separator says
-- ---:, and for cells that are numbers), within the terminal's width: a cell
-- wider than its column is broken at spaces onto more lines, and then a
-- blank line parts the rows, so that each row still reads as one.
local function render_table(rows, aligns, color, out, width)
  local ncol = 0
  for _, r in ipairs(rows) do ncol = math.max(ncol, #r) end
  local natural = {}
  for _, r in ipairs(rows) do
    for c = 1, ncol do
      natural[c] = math.max(natural[c] or 0, term.len(one_line(r[c] or "", false)))
    end
  end
  local widths = fit_widths(rows, natural, width - 2 - 2 * (ncol - 1))
  local cells, tall = {}, false
  for ri, r in ipairs(rows) do
    cells[ri] = {}
    for c = 1, ncol do
      local text = r[c] or ""
      local lines
      if term.len(one_line(text, false)) <= widths[c] then
        lines = { one_line(text, color and ri > 1) }
      else
        lines = inline(text, color and ri > 1, widths[c], "")
        tall = true
      end
      if ri == 1 and color then
        for k, l in ipairs(lines) do lines[k] = sgr(l, "bold") end
      end
      cells[ri][c] = lines
    end
  end
  for ri, r in ipairs(cells) do
    if tall and ri > 2 then out[#out + 1] = "" end
    local height = 1
    for c = 1, ncol do height = math.max(height, #r[c]) end
    for k = 1, height do
      local parts = {}
      for c = 1, ncol do
        local cell = r[c][k] or ""
        local pad = string.rep(" ", math.max(0, widths[c] - term.len(cell)))
        local right = aligns[c] == "right" or (ri > 1 and rows[ri][c] and
          rows[ri][c]:match("^[%d%.,%-%+x%%]+$"))
        parts[c] = right and pad .. cell or cell .. pad
      end
      out[#out + 1] = ("  " .. table.concat(parts, "  ")):gsub("%s+$", "")
    end
    if ri == 1 then
      local rule = {}
      for c = 1, ncol do rule[c] = string.rep("-", widths[c]) end
      out[#out + 1] = "  " .. table.concat(rule, "  ")
    end
  end
end

local function list_marker(line)
  local ind, m, rest = line:match("^(%s*)([%-%*%+])%s+(.*)$")
  if ind then return #ind, m == "-" and "-" or m, rest end
  ind, m, rest = line:match("^(%s*)(%d+[%.%)])%s+(.*)$")
  if ind then return #ind, m, rest end
end

-- One rendering's state: the source lines, the index of the next one to read, the lines written
-- so far (out), the paragraph being gathered (para: its lines, joined and wrapped when it ends),
-- and the options. Each kind of block below reads its lines from i on and leaves i past them.
local function new_state(text, opts)
  opts = opts or {}
  local st = { lines = {}, i = 1, out = {}, para = {}, width = opts.width or term.width(),
    color = opts.color }
  if st.color == nil then st.color = term.color() end
  for l in (text .. "\n"):gmatch("(.-)\r?\n") do st.lines[#st.lines + 1] = l end
  return st
end

local function flush_para(st)
  if #st.para == 0 then return end
  local s = table.concat(st.para, " ")
  st.para = {}
  for _, l in ipairs(inline(s, st.color, st.width, "")) do st.out[#st.out + 1] = l end
end

-- A fenced code block, indented and as written, up to the fence that closes it (a longer run
-- of the same character closes it too) or the end of the text. The fences are not shown.
local function code_fence(st, fence)
  local out, lines, line = st.out, st.lines, st.lines[st.i]
  out[#out + 1] = "    " .. line:gsub("^%s*", ""):gsub("^[`~]+.*$", ""):gsub("^$", "")
  if out[#out]:match("^%s*$") then out[#out] = nil end
  st.i = st.i + 1
  while st.i <= #lines and not lines[st.i]:match("^%s*" .. fence:sub(1, 1):rep(#fence)) do
    out[#out + 1] = "    " .. lines[st.i]
    st.i = st.i + 1
  end
  st.i = st.i + 1
end

local function heading(st, line)
  local h = line:gsub("^#+%s+", ""):gsub("%s+#*$", "")
  local shown = one_line(h, false)
  st.out[#st.out + 1] = st.color and sgr(shown, "heading") or shown
  st.i = st.i + 1
end

-- A pipe table: its header row, the separator that gives each column's alignment, then rows
-- for as long as lines start with a pipe.
local function pipe_table(st, line)
  local lines = st.lines
  local rows, aligns = { split_row(line) }, {}
  for c, spec in ipairs(split_row(lines[st.i + 1])) do
    aligns[c] = spec:match("^%-+:$") and "right" or spec:match("^:%-+:$") and "center" or "left"
  end
  st.i = st.i + 2
  while st.i <= #lines and lines[st.i]:match("^%s*|") do
    rows[#rows + 1] = split_row(lines[st.i])
    st.i = st.i + 1
  end
  render_table(rows, aligns, st.color, st.out, st.width)
end

-- A block quote: its lines, less their >, rendered as Markdown of their own two columns
-- narrower, each behind a bar.
local function quote(st)
  local lines, q = st.lines, {}
  while st.i <= #lines and lines[st.i]:match("^%s*>") do
    q[#q + 1] = lines[st.i]:gsub("^%s*>%s?", "")
    st.i = st.i + 1
  end
  local bar = st.color and sgr(term.utf8() and "│ " or "> ", "quote") or "> "
  local inner = M.render(table.concat(q, "\n"), { width = st.width - 2, color = st.color })
  for l in (inner .. "\n"):gmatch("(.-)\n") do st.out[#st.out + 1] = (bar .. l):gsub("%s+$", "") end
end

-- One list item, wrapped with a hanging indent under its bullet or number.
local function list_item(st, line)
  local lines = st.lines
  local ind, marker, rest = list_marker(line)
  local item = { rest }
  st.i = st.i + 1
  -- continuation lines: indented more than the marker, until a blank line or a new item
  while st.i <= #lines and not lines[st.i]:match("^%s*$") and not list_marker(lines[st.i])
        and lines[st.i]:match("^%s+") do
    item[#item + 1] = lines[st.i]:match("^%s*(.-)$")
    st.i = st.i + 1
  end
  local bullet = marker:match("%d") and marker or (term.utf8() and "•" or "-")
  local lead = string.rep(" ", ind + 2) .. bullet .. " "
  local hang = string.rep(" ", term.len(lead))
  for _, l in ipairs(inline(table.concat(item, " "), st.color, st.width, lead, hang)) do
    st.out[#st.out + 1] = l
  end
end

-- Reads the block that starts at line st.i. A paragraph being gathered ends at a block that
-- can interrupt it; indented code and list items cannot, so inside one they are its text.
local function render_block(st)
  local line, out = st.lines[st.i], st.out
  local fence = line:match("^%s*(```+)") or line:match("^%s*(~~~+)")
  if fence then
    flush_para(st)
    code_fence(st, fence)
  elseif line:match("^%s*$") then
    flush_para(st)
    if #out > 0 and out[#out] ~= "" then out[#out + 1] = "" end
    st.i = st.i + 1
  elseif #st.para == 0 and line:match("^    ") then
    out[#out + 1] = line -- indented code, as written
    st.i = st.i + 1
  elseif line:match("^#+%s") then
    flush_para(st)
    heading(st, line)
  elseif line:match("^%s*|") and is_separator(st.lines[st.i + 1]) then
    flush_para(st)
    pipe_table(st, line)
  elseif line:match("^%s*>") then
    flush_para(st)
    quote(st)
  elseif list_marker(line) and #st.para == 0 then
    list_item(st, line)
  else
    st.para[#st.para + 1] = line:match("^%s*(.-)%s*$")
    st.i = st.i + 1
  end
end

-- Renders Markdown text. opts: width (default: the terminal's), color
-- (default: term.color()). Returns a string without a final newline.
function M.render(text, opts)
  local st = new_state(text, opts)
  while st.i <= #st.lines do render_block(st) end
  flush_para(st)
  local out = st.out
  while out[#out] == "" do out[#out] = nil end
  while out[1] == "" do table.remove(out, 1) end
  return table.concat(out, "\n")
end

return M
