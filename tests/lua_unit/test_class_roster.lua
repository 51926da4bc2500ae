-- test_class_roster.lua: the roster file's format (lua/class/class_roster.lua) and the merge that
-- gives a learner who never joined a row of their own.

local roster = require "class_roster"

test("a roster file gives account, name, id and e-mail, columns in any order", function()
  local rows = assert(roster.parse('\239\187\191Email,Account,Name,ID\r\n' ..
    'a@x.edu,ann,"Ann, ""the"" first",S1\r\n\nb@x.edu,bob,Bob,S2\n', "r.csv"))
  checkeq(rows, { { account = "ann", name = 'Ann, "the" first', id = "S1", email = "a@x.edu" },
    { account = "bob", name = "Bob", id = "S2", email = "b@x.edu" } })
  rows = assert(roster.parse("account\ncat\n"))
  checkeq(rows, { { account = "cat", name = "", id = "", email = "" } })
end)

test("a bad roster names its line and what is wrong", function()
  local function fails(text, want)
    local r, why = roster.parse(text, "r.csv")
    checkeq(r, nil)
    check(why:find(want, 1, true), why)
  end
  fails("name,id\nann,1\n", "r.csv:1: the first line must name the columns, account among them")
  fails("account\nann\n../etc\n", 'r.csv:3: "../etc" is not an account name')
  fails("account\nann\nann\n", "r.csv:3: ann is on the roster twice (line 2)")
  fails('account,name\nann,"open\n', "r.csv:2: a quoted field is not closed")
  fails("account,name\nann,a\27[2Jb\n", "r.csv:2: a field holds a control character")
  fails("", "r.csv: empty")
  fails(("x"):rep(roster.MAX_BYTES + 1), "larger than 4 MiB")
end)

test("the merge adds the absent and keeps who is not on the roster", function()
  local recs = { { user = "bob", uid = 2, tasks = {} }, { user = "zed", uid = 9, tasks = {} } }
  local out, extra = roster.merge(recs, { { account = "ann", uid = 1, name = "Ann", id = "S1",
    email = "a@x" }, { account = "bob", uid = 2, name = "Bob", id = "S2", email = "b@x" } })
  checkeq(#out, 3)
  checkeq(out[1].user, "ann")
  checkeq(out[1].absent, true)
  checkeq(out[1].roster, { name = "Ann", id = "S1", email = "a@x" })
  checkeq(out[2].roster.id, "S2")
  checkeq(out[3].user, "zed")
  checkeq(extra, { "zed" })
  local same = roster.merge(recs, nil)
  checkeq(same, recs)
end)
