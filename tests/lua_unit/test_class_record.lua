-- test_class_record.lua: a learner's record in a class (lua/class/class_record.lua):
-- events applied, everything bounded, and a hostile file read without harm.

local record = require "class_record"

local function ev(kind, extra)
  local e = { kind = kind, lesson = "50-warmup", step = 2, id = "50-warmup/2", task = true,
              title = "Square", now = 1000 }
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

test("a task's attempts, failures, hints and pass are recorded", function()
  local r = record.new(1001, "ann")
  record.apply(r, ev("step", { now = 1000 }))
  record.apply(r, ev("hint", { now = 1010 }))
  record.apply(r, ev("check", { ok = false, why = "a[3] is 6, not 9", now = 1020,
    submission = record.submission({ ["square.cu"] = "k1" }, { "x = 1" }, 1020) }))
  record.apply(r, ev("check", { ok = true, now = 1100, backend = "sim",
    submission = record.submission({ ["square.cu"] = "k2" }, { "x = 2" }, 1100) }))
  local t = r.tasks["50-warmup/2"]
  checkeq(t.attempts, 2)
  checkeq(t.hints, 1)
  checkeq(t.failures, { "a[3] is 6, not 9" })
  checkeq(t.passed, true)
  checkeq(t.passed_at, 1100)
  checkeq(t.seconds_to_pass, 100)
  checkeq(t.backend, "sim")
  checkeq(t.submission.files["square.cu"], "k2")
  checkeq(t.submission.lua, { "x = 2" })
  checkeq(r.lessons["50-warmup"].step, 2)
end)

test("a step without a task records where the learner is, and no task", function()
  local r = record.new(1, "a")
  record.apply(r, ev("step", { task = false, step = 1, id = "50-warmup/1" }))
  checkeq(r.tasks["50-warmup/1"], nil)
  checkeq(r.lessons["50-warmup"].step, 1)
end)

test("finishing a lesson on a step without a task marks the lesson done, and makes no task", function()
  local r = record.new(1, "a")
  record.apply(r, ev("done", { task = false, step = 9, id = "50-warmup/what-next" }))
  checkeq(r.tasks["50-warmup/what-next"], nil)
  checkeq(r.lessons["50-warmup"].done, true)
  checkeq(r.lessons["50-warmup"].step, 9)
end)

test("a skip is recorded and does not count as a pass", function()
  local r = record.new(1, "a")
  record.apply(r, ev("skip"))
  checkeq(r.tasks["50-warmup/2"].skipped, true)
  checkeq(r.tasks["50-warmup/2"].passed, false)
end)

test("failure messages are bounded in number and length", function()
  local r = record.new(1, "a")
  for i = 1, 50 do record.apply(r, ev("check", { ok = false, why = ("x"):rep(5000) .. i })) end
  local f = r.tasks["50-warmup/2"].failures
  checkeq(#f, record.LIMITS.failures)
  check(#f[1] <= record.LIMITS.message + 3, "message clipped")
  checkeq(r.tasks["50-warmup/2"].attempts, 50)
end)

test("a submission keeps the latest chunks within its bounds", function()
  local chunks = {}
  for i = 1, 1000 do chunks[i] = "y = " .. i end
  local s = record.submission({}, chunks)
  checkeq(#s.lua, record.LIMITS.chunks)
  checkeq(s.lua[#s.lua], "y = 1000")
  local many = {}
  for i = 1, 10 do many[i] = string.char(64 + i):rep(60 * 1024) end
  local big = record.submission({}, many)
  checkeq(#big.lua, 4) -- 256 KiB in all holds four of 60 KiB: the latest four
  checkeq(big.lua[4]:sub(1, 1), "J")
  local huge = record.submission({ ["k.cu"] = ("q"):rep(10 * 2^20) }, { ("c"):rep(2^20) })
  check(#huge.files["k.cu"] <= record.LIMITS.file + 3, "file clipped")
  check(#huge.lua[1] <= record.LIMITS.chunk + 3, "chunk clipped")
end)

test("a record round-trips through JSON", function()
  local r = record.new(7, "bo")
  record.apply(r, ev("check", { ok = false, why = "no", submission = record.submission({ ["a.cu"] = "src" }, { "print(1)" }) }))
  local back = assert(record.decode(record.encode(r)))
  checkeq(back.tasks["50-warmup/2"].failures, { "no" })
  checkeq(back.tasks["50-warmup/2"].submission.files["a.cu"], "src")
  checkeq(back.tasks["50-warmup/2"].submission.lua, { "print(1)" })
end)

test("a hostile record is read without harm: wrong types dropped, names of files checked", function()
  local text = [[{"format": "cudalab-class-record 1", "updated": "soon", "tasks": {
    "50-warmup/2": {"attempts": -4, "failures": [1, "real", {"x": 1}], "passed": "yes",
      "hints": 1e300, "submission": {"files": {"../../etc/passwd": "x", "ok.cu": "k", "b.cu": 5},
      "lua": ["a", 7]}},
    "bad": 5}, "lessons": {"x": {"step": "two"}}}]]
  local r = assert(record.decode(text))
  local t = r.tasks["50-warmup/2"]
  checkeq(t.attempts, 0)
  checkeq(t.hints, 0)
  checkeq(t.passed, false)
  checkeq(t.failures, { "real" })
  checkeq(t.submission.files, { ["ok.cu"] = "k" })
  checkeq(t.submission.lua, { "a" })
  checkeq(r.tasks.bad, nil)
  checkeq(r.updated, 0)
  checkeq(r.lessons.x.step, 0)
end)

test("what is not a record is refused with a reason", function()
  local r, why = record.decode("{\"format\": \"other\"}")
  checkeq(r, nil)
  check(why:find("not a cudalab class record", 1, true), why)
  r, why = record.decode("[1, 2")
  checkeq(r, nil)
  check(why:find("^not JSON"), why)
end)

test("a later failed try is counted and never replaces the passing submission", function()
  local r = record.new(1001, "ann")
  record.apply(r, ev("check", { ok = true, now = 1100,
    submission = record.submission({ ["square.cu"] = "right" }, { "x = 1" }, 1100) }))
  record.apply(r, ev("check", { ok = false, why = "a[0] is 2, not 1", now = 1200,
    submission = record.submission({ ["square.cu"] = "wrong" }, { "x = 2" }, 1200) }))
  local t = r.tasks["50-warmup/2"]
  checkeq(t.attempts, 2)
  checkeq(t.passed, true)
  checkeq(t.failures, { "a[0] is 2, not 1" })
  checkeq(t.submission.files["square.cu"], "right")
  checkeq(t.submission.lua, { "x = 1" })
end)

test("a submission keeps each chunk's step, through encode and decode", function()
  local r = record.new(1, "a")
  record.apply(r, ev("check", { ok = true, submission = record.submission({},
    { "f = function() return 1 end", "y = f()" }, 5, { "define-it", "use-it" }) }))
  local back = assert(record.decode(record.encode(r)))
  local s = back.tasks["50-warmup/2"].submission
  checkeq(s.lua, { "f = function() return 1 end", "y = f()" })
  checkeq(s.steps, { "define-it", "use-it" })
  -- the latest chunks are kept with their own steps
  local many, steps = {}, {}
  for i = 1, 500 do many[i], steps[i] = "x = " .. i, "s" .. i end
  local cut = record.submission({}, many, 1, steps)
  checkeq(#cut.lua, record.LIMITS.chunks)
  checkeq(cut.lua[1], "x = " .. (501 - record.LIMITS.chunks))
  checkeq(cut.steps[1], "s" .. (501 - record.LIMITS.chunks))
  checkeq(cut.steps[#cut.steps], "s500")
end)

-- A class handle's record calls over one file held in memory: text is the
-- file (false: none yet), read_err a failure to read it, writes each write.
local function fake_handle(text, read_err)
  local h = { text = text, writes = 0 }
  function h.read_own_record(self)
    if read_err then return nil, read_err end
    return self.text
  end
  function h.write_record(self, t)
    self.text, self.writes = t, self.writes + 1
    return true
  end
  return h
end

local ME = { uid = 1001, user = "ann" }

test("update reads the record as the file holds it, applies the event and writes it", function()
  local h = fake_handle(false)
  assert(record.update(h, ME, ev("check", { ok = false, why = "wrong", now = 10 })))
  checkeq(h.writes, 1)
  -- another session wrote in between: its count stays, the new event adds to it
  local other = assert(record.decode(h.text))
  record.apply(other, ev("hint", { now = 20 }))
  h.text = record.encode(other)
  assert(record.update(h, ME, ev("check", { ok = true, now = 30 })))
  local t = assert(record.decode(h.text)).tasks["50-warmup/2"]
  checkeq({ t.attempts, t.hints, t.passed, t.failures }, { 2, 1, true, { "wrong" } })
end)

test("update takes who the learner is from the session, never from the record", function()
  local forged = record.new(0, "root")
  local h = fake_handle(record.encode(forged))
  assert(record.update(h, ME, ev("hint")))
  local raw = assert(require("json").decode(h.text))
  checkeq({ raw.uid, raw.user }, { 1001, "ann" })
end)

test("update starts afresh from a record that does not decode, leaves an unreadable one",
  function()
  local h = fake_handle("{ not json")
  assert(record.update(h, ME, ev("hint")))
  checkeq(assert(record.decode(h.text)).tasks["50-warmup/2"].hints, 1)
  local bad = fake_handle("kept", "records/1001.json: permission denied")
  local ok, why = record.update(bad, ME, ev("hint"))
  checkeq({ ok, why }, { nil, "records/1001.json: permission denied" })
  checkeq({ bad.text, bad.writes }, { "kept", 0 })
end)

test("start writes an empty record only where the learner has none", function()
  local h = fake_handle(false)
  assert(record.start(h, ME))
  local raw = assert(require("json").decode(h.text))
  checkeq({ raw.uid, raw.user, raw.format, next(raw.tasks) }, { 1001, "ann", record.FORMAT, nil })
  local old = fake_handle("old")
  assert(record.start(old, ME))
  checkeq({ old.text, old.writes }, { "old", 0 })
  local unreadable = fake_handle(nil, "no")
  assert(record.start(unreadable, ME))
  checkeq(unreadable.writes, 0)
end)
