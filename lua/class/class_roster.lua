-- class_roster.lua: who is in a class, whether or not they ever joined: the
-- members of the class's group, or the roster file class.lua names (a CSV of
-- the instructor's: account,name,id,email). The report and the grades give
-- every learner on it a row, so that a learner who never joined is seen (and
-- graded 0) rather than missing, and the CSV carries the id and e-mail an
-- LMS matches rows by.
--
-- Design stance:
--  * Who a learner is stays their Unix account: the roster only adds a
--    name, an id and an e-mail to an account, and lists accounts that have
--    no record yet. A record whose account is not on the roster is kept
--    (and said), never dropped: a roster out of date must not lose work.
--  * Accounts are looked up with getent (the system's own name service,
--    LDAP included), one call for the group and one for the accounts; an
--    account name is checked against the POSIX form before it reaches a
--    command line.
--  * parse() is pure, so that the file's format is unit-tested; load()
--    reads the file and asks the name service.

local record = require "class_record"

local M = {}

M.COLUMNS = { "account", "name", "id", "email" }
M.MAX_BYTES = 4 * 2^20
M.MAX_ROWS = 20000

-- A POSIX account name (letters, digits, . _ -, not starting with - or .),
-- as useradd takes it.
function M.valid_account(s)
  return type(s) == "string" and #s <= 64 and s:match("^[%w_][%w_.%-]*%$?$") ~= nil
end

-- The fields of one CSV line: commas split, "quoted" fields may hold commas
-- and doubled quotes. Returns the list, or nil, why.
function M.csv_fields(line)
  local out, i, n = {}, 1, #line
  while true do
    if line:sub(i, i) == '"' then
      local buf, j = {}, i + 1
      while true do
        local q = line:find('"', j, true)
        if not q then return nil, "a quoted field is not closed" end
        buf[#buf + 1] = line:sub(j, q - 1)
        if line:sub(q + 1, q + 1) == '"' then
          buf[#buf + 1] = '"'
          j = q + 2
        else
          i = q + 1
          break
        end
      end
      out[#out + 1] = table.concat(buf)
      local c = line:sub(i, i)
      if c == "," then i = i + 1
      elseif i > n then return out
      else return nil, "text after a quoted field's closing quote" end
    else
      local comma = line:find(",", i, true)
      out[#out + 1] = line:sub(i, (comma or n + 1) - 1)
      if not comma then return out end
      i = comma + 1
    end
  end
end

local function trim(s)
  return (s:gsub("^[ \t]+", ""):gsub("[ \t]+$", ""))
end

-- parse(text, name) -> {{account, name, id, email}, ...} | nil, why. The
-- first line names the columns (account is needed; name, id and email may
-- be left out, in any order); every row names an account once. why names
-- the file and line.
function M.parse(text, name)
  name = name or "roster"
  if type(text) ~= "string" then return nil, name .. ": not a text" end
  if #text > M.MAX_BYTES then
    return nil, string.format("%s: larger than %d MiB", name, M.MAX_BYTES >> 20)
  end
  text = text:gsub("^\239\187\191", "") -- a spreadsheet's byte-order mark
  local rows, cols, seen, n = {}, nil, {}, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    line = line:gsub("\r$", "")
    local function fail(fmt, ...) return nil, string.format("%s:%d: " .. fmt, name, n, ...) end
    if line:find("%S") then
      local f, why = M.csv_fields(line)
      if not f then return fail("%s", why) end
      for k, v in ipairs(f) do
        v = trim(v)
        if v:find("%c") then return fail("a field holds a control character") end
        f[k] = v
      end
      if not cols then
        cols = {}
        for k, v in ipairs(f) do
          local c = v:lower():gsub("[%s_%-]", "")
          if c == "email" or c == "mail" then c = "email" end
          if c == "account" or c == "name" or c == "id" or c == "email" then
            if cols[c] then return fail("the column %s is named twice", c) end
            cols[c] = k
          end
        end
        if not cols.account then
          return fail("the first line must name the columns, account among them " ..
            "(account,name,id,email)")
        end
      else
        local acc = f[cols.account] or ""
        if not M.valid_account(acc) then
          return fail("%q is not an account name", acc)
        end
        if seen[acc] then return fail("%s is on the roster twice (line %d)", acc, seen[acc]) end
        seen[acc] = n
        if #rows >= M.MAX_ROWS then return fail("more than %d learners", M.MAX_ROWS) end
        local row = { account = acc }
        for _, c in ipairs({ "name", "id", "email" }) do
          local v = cols[c] and f[cols[c]] or ""
          if #v > 200 then return fail("the %s is longer than 200 characters", c) end
          row[c] = v
        end
        rows[#rows + 1] = row
      end
    end
  end
  if not cols then return nil, name .. ": empty (the first line names the columns: " ..
    "account,name,id,email)" end
  return rows
end

-- Runs a getent query; its output lines, or {} when it found nothing.
local function getent(db, keys)
  local args = {}
  for _, k in ipairs(keys) do args[#args + 1] = "'" .. k .. "'" end
  local p = io.popen("getent " .. db .. " " .. table.concat(args, " ") .. " 2>/dev/null")
  if not p then return {} end
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

-- The uids of the accounts (a list of valid names): {name = uid}.
function M.uids(names)
  local out = {}
  for first = 1, #names, 200 do
    local batch = {}
    for i = first, math.min(#names, first + 199) do batch[#batch + 1] = names[i] end
    for _, line in ipairs(getent("passwd", batch)) do
      local user, uid = line:match("^([^:]*):[^:]*:(%d+):")
      if user then out[user] = tonumber(uid) end
    end
  end
  return out
end

-- The members of the group (by name and gid): those it lists, and the
-- accounts whose own group it is. {{account}, ...} in name order.
function M.group_members(group, gid)
  if not M.valid_account(group) then return {} end
  local names = {}
  for _, line in ipairs(getent("group", { group })) do
    local members = line:match("^[^:]*:[^:]*:%d+:(.*)$")
    for m in (members or ""):gmatch("[^,%s]+") do names[m] = true end
  end
  -- the accounts whose primary group it is: getent passwd lists every account the name
  -- service enumerates
  for _, line in ipairs(getent("passwd", {})) do
    local user, g = line:match("^([^:]*):[^:]*:%d+:(%d+):")
    if user and tonumber(g) == gid then names[user] = true end
  end
  local out = {}
  for n in pairs(names) do
    if M.valid_account(n) then out[#out + 1] = { account = n, name = "", id = "", email = "" } end
  end
  table.sort(out, function(a, b) return a.account < b.account end)
  return out
end

-- load(cls) -> roster | nil (no roster: anyone may join), why-or-nil. The
-- roster file class.lua names, else the class's group's members, less the
-- instructor; each entry with its uid where the account exists.
function M.load(cls)
  local rows
  local info = cls.handle:info()
  if cls.settings.roster then
    local path = cls.dir .. "/" .. cls.settings.roster
    -- the class folder is the instructor's and only records/ is the learners' (which
    -- class_config refuses as a roster's place), so no learner can put a file here
    local f, ferr = io.open(path, "rb")
    if not f then return nil, "cannot read the roster " .. cls.settings.roster .. ": " ..
      tostring(ferr) end
    local text = f:read(M.MAX_BYTES + 1)
    f:close()
    local why
    rows, why = M.parse(text or "", cls.settings.roster)
    if not rows then return nil, why end
  elseif info.restricted and info.group then
    rows = M.group_members(info.group, info.gid)
  else
    return nil
  end
  local names, out = {}, {}
  for _, r in ipairs(rows) do
    if r.account ~= info.owner then
      names[#names + 1] = r.account
      out[#out + 1] = r
    end
  end
  local uids = M.uids(names)
  for _, r in ipairs(out) do r.uid = uids[r.account] end
  return out
end

-- merge(records, roster) -> records, not_on_roster. Gives each record its
-- roster entry (record.roster = {name, id, email}) and adds, for every
-- account on the roster without a record, an empty record marked absent.
-- not_on_roster lists the accounts with a record the roster lacks.
function M.merge(records, roster)
  if not roster then return records, {} end
  local by_user, out, extra = {}, {}, {}
  for _, r in ipairs(roster) do by_user[r.account] = r end
  local seen = {}
  for _, rec in ipairs(records) do
    local r = by_user[rec.user]
    if r then
      rec.roster, seen[rec.user] = { name = r.name, id = r.id, email = r.email }, true
    else
      extra[#extra + 1] = rec.user
    end
    out[#out + 1] = rec
  end
  for _, r in ipairs(roster) do
    if not seen[r.account] then
      local rec = record.new(r.uid, r.account)
      rec.updated, rec.absent = nil, true
      rec.roster = { name = r.name, id = r.id, email = r.email }
      out[#out + 1] = rec
    end
  end
  table.sort(out, function(a, b)
    if a.user ~= b.user then return a.user < b.user end
    return (a.uid or -1) < (b.uid or -1)
  end)
  table.sort(extra)
  return out, extra
end

return M
