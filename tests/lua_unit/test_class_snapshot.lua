-- test_class_snapshot.lua: the snapshots that grading by a due time rests on
-- (lua/class/class_snapshot.lua): SipHash-2-4 against the specification's
-- vectors, and when a pass's claimed time is believed.

local snap = require "class_snapshot"

local KEY = ""
for i = 0, 15 do KEY = KEY .. string.char(i) end

test("class_snapshot: SipHash-2-4 gives the specification's vectors", function()
  local msg = ""
  for i = 0, 15 do msg = msg .. string.char(i) end
  checkeq(snap.siphash(KEY, ""), "726fdb47dd0e0e31", "the empty message")
  checkeq(snap.siphash(KEY, msg:sub(1, 7)), "ab0200f58b01d137", "7 bytes")
  checkeq(snap.siphash(KEY, msg:sub(1, 8)), "93f5f5799a932462", "one whole word")
  checkeq(snap.siphash(KEY, msg:sub(1, 15)), "a129ca6149be45e5", "the paper's worked example")
  checkerr("the key must be 16 bytes", snap.siphash, "short", "x")
end)

-- A record as class_load.records gives it, one task passed at the times given.
local function rec(uid, passes)
  return { uid = uid, user = "u" .. uid, tasks = { ["01-a/t"] = { passed = #passes > 0,
    passes = passes } } }
end

local function pass(at, kernel)
  return { at = at, files = { ["k.cu"] = kernel or "k" }, lua = {} }
end

test("class_snapshot: a pass a snapshot holds keeps its claimed time", function()
  local p = pass(100)
  local s = snap.build({ rec(7, { p }) }, 200, 201, KEY)
  s.key = KEY
  checkeq({ snap.prove({ s }, 7, "01-a/t", p) }, { 100 })
end)

test("class_snapshot: a backdated pass made after a snapshot is dated after it", function()
  local s = snap.build({ rec(7, {}) }, 200, 201, KEY)
  s.key = KEY
  local at, by = snap.prove({ s }, 7, "01-a/t", pass(100))
  checkeq({ at, by == s }, { 201, true }, "a second after the snapshot began")
  at, by = snap.prove({ s }, 7, "01-a/t", pass(300))
  checkeq({ at, by }, { 300, nil }, "a pass claimed after the snapshot is not moved")
end)

test("class_snapshot: an on-time pass whose work was changed afterwards is not believed", function()
  local s = snap.build({ rec(7, { pass(100, "first") }) }, 200, 201, KEY)
  s.key = KEY
  checkeq((snap.prove({ s }, 7, "01-a/t", pass(100, "first"))), 100)
  checkeq((snap.prove({ s }, 7, "01-a/t", pass(100, "better"))), 201, "same time, other work")
  checkeq((snap.prove({ s }, 8, "01-a/t", pass(100, "first"))), 201, "another learner's uid")
end)

test("class_snapshot: the snapshot that first holds a pass ends the search", function()
  local p = pass(100)
  local a = snap.build({ rec(7, {}) }, 150, 150, KEY)
  local b = snap.build({ rec(7, { p }) }, 250, 250, KEY)
  local c = snap.build({ rec(7, {}) }, 350, 350, KEY) -- the pass trimmed from the record since
  for _, s in ipairs({ a, b, c }) do s.key = KEY end
  checkeq((snap.prove({ a, b, c }, 7, "01-a/t", p)), 151, "made between the first two")
  checkeq((snap.prove({ b, c }, 7, "01-a/t", p)), 100, "a later snapshot lacking it proves nothing")
  check(snap.after({ a, b }, 250) and not snap.after({ a, b }, 251))
end)

test("class_snapshot: a record of the old form is read through its submission", function()
  local sub = pass(100)
  local r = { uid = 3, user = "x", tasks = { ["01-a/t"] = { passed = true, submission = sub } } }
  local s = snap.build({ r }, 200, 200, KEY)
  checkeq(#s.learners["3"].tasks["01-a/t"], 1)
  checkeq(s.key, "000102030405060708090a0b0c0d0e0f", "the key is kept as hex")
  checkeq(s.learners["3"].tasks["01-a/t"][1], snap.digest(KEY, sub))
end)

-- A class folder holding the snapshots given, for gradebook.prepare.
local function class_with(snaps)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir .. "/snapshots'"))
  for i, s in ipairs(snaps) do
    local f = assert(io.open(string.format("%s/snapshots/20240101-00000%d.json", dir, i), "w"))
    f:write(require("json").encode(s))
    f:close()
  end
  return { dir = dir, settings = { due = { [1] = 150 } }, tasks = { { id = "01-a/t", number = 1 } } }
end

test("gradebook.prepare: passes are dated as the snapshots allow, by a due time or not", function()
  local book = require "gradebook"
  local held, forged = pass(100, "held"), pass(120, "forged")
  local s = snap.build({ rec(7, { held }) }, 160, 161, KEY)
  local cls = class_with({ s })
  local r = rec(7, { held, forged })
  local out, notes = book.prepare(cls, { r }, {})
  local t = out[1].tasks["01-a/t"]
  checkeq({ t.submission.at, t.passes[2].at, t.passes[2].claimed_at }, { 100, 161, 120 },
    "the held pass is on time; the one made after the snapshot is dated after it")
  checkeq(notes, {}, "a snapshot after the due time: no note")
  cls.settings.due = nil
  local c = rec(7, {})
  c.tasks["01-a/t"] = { passed = true, submission = forged }
  out = book.prepare(cls, { c }, {})
  checkeq(out[1].tasks["01-a/t"].submission.at, 161, "a challenge's tie-break time too")
  cls.settings.due = { [1] = 150 }
  os.remove(cls.dir .. "/snapshots/20240101-000001.json")
  out, notes = book.prepare(cls, { rec(7, { forged }) }, {})
  checkeq(out[1].tasks["01-a/t"].submission.at, 120, "no snapshot: the record's word")
  check(notes[1] and notes[1]:find("no snapshot of the class was taken after", 1, true), notes[1])
  os.execute("rm -rf '" .. cls.dir .. "'")
end)
