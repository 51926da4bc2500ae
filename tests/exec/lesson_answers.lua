-- lesson_answers.lua: answers typed at the prompt of lessons 13 and 14, judged as the lessons
-- mean them.
--
-- Lesson 14 (fix the leak) judges the four arrays its loop made, from the engine's own weak
-- record of them, after a collection: every way of letting them go passes (results = nil with
-- or without collectgarbage(), replaced by {} or false, emptied in place, each freed), and the
-- engine's copy of the lesson's `results` never keeps them alive, at the prompt either; editing
-- the lesson's `tracked` or keeping the table under another name does not pass; memory held by
-- an array made since is named as what it is. Its peak_gbs, set by a file run or from a name
-- the check cannot rerun, gets a message that says so, not "typed in as a number", which a
-- number typed gets. Lesson 13 (compile ahead) gives prepare lists of
-- other lengths than three, so a prepare that compiles a fixed three does not pass.
--
-- Each session is a child cudalab on this backend, with its own workspace and state, typing as
-- a learner would: the globals it sets are the session's, as at the prompt.
local T = dofile("tests/lua/testlib.lua")
local test, check = T.test, T.check
T.plan(6)

local run = require "lesson_run"
local tmp = assert(run.tempdir(), "a temporary folder")

-- The output of a session that runs `script` (lesson commands and the learner's code).
local session_no = 0
local function session(script)
  session_no = session_no + 1
  return T.child_session(tmp .. "/s" .. session_no, script, 300)
end

-- Lesson 14 at its leak task (next() stops at a task), then `answer`, then check().
local function leak(answer)
  return session("lesson(14)\nfor _ = 1, 10 do next() end\n" .. answer .. "\ncheck()")
end

test("lesson 14: every way of letting the loop's arrays go passes", function()
  for _, answer in ipairs({
    "results = nil; collectgarbage()",
    "results = nil",
    "results = {}; collectgarbage()",
    "results = false; collectgarbage()",
    "for i = 1, #results do results[i] = nil end",
    "for _, a in ipairs(results) do a:free() end",
  }) do
    local out = leak(answer)
    check(out:find("Correct. next() goes on.", 1, true), answer .. ": " .. out)
  end
end)

test("lesson 14: the engine does not keep results' arrays alive once the learner replaced it",
  function()
  local out = leak("results = {}; collectgarbage()\n" ..
    "io.stdout:write('in use: ', (cuda.meminfo().arrays - mem_base) // MB, ' MiB\\n')")
  check(out:find("in use: 0 MiB", 1, true), out)
end)

test("lesson 14: editing tracked, or keeping the arrays elsewhere, does not pass", function()
  for answer, kept in pairs({
    ["for i = 1, 4 do tracked[i] = nil end; tracked.base = cuda.meminfo().arrays"] = 4,
    ["kept = results; results = nil; collectgarbage()"] = 4,
    ["mine = {}; for i = 1, 4 do mine[i] = results[i]; results[i] = nil end"] = 4,
    ["mine = results[2]; results = nil"] = 1,
  }) do
    local out = leak(answer)
    local where = kept == 4 and "results[1], results[2], results[3], results[4]" or "results[2]"
    check(out:find("Not yet: " .. kept .. " of the four arrays made in the loop (" .. where ..
      ") still hold their memory: something still refers to them", 1, true), answer .. ": " .. out)
  end
end)

test("lesson 14: memory an array made since holds is named as what it is", function()
  local out = leak("extra = cuda.zeros(SIZE // 4); results = nil; collectgarbage()")
  check(out:find("Not yet: the four arrays made in the loop are gone, but memory in use is " ..
    "16 MiB more than before the loop: arrays made since, not the loop's, that something " ..
    "still refers to", 1, true), out)
  out = leak("results = {cuda.zeros(SIZE // 4)}; collectgarbage()")
  check(out:find("Not yet: the four arrays made in the loop are gone, but memory in use is " ..
    "16 MiB more than before the loop: results holds 1 array of 16 MiB made since", 1, true), out)
end)

test("lesson 14: peak_gbs set where the check cannot rerun it is named, not called typed in",
  function()
  local mine = tmp .. "/mine.lua"
  -- peak_gbs: the lines typed at the task's prompt, read chunk by chunk as the REPL reads them
  local function peak(answer)
    session_no = session_no + 1
    return T.child_session(tmp .. "/s" .. session_no, "lesson(14)\nfor _ = 1, 10 do next() end\n" ..
      "skip()\nfor _ = 1, 10 do next() end\n" .. answer .. "\ncheck()", 300, true)
  end
  local function file(text)
    local f = assert(io.open(mine, "w"))
    f:write(text, "\n")
    f:close()
  end
  local formula = "peak_gbs = d.memory_clock_khz * 1000 * 2 * (d.bus_width / 8) / 1e9"
  check(peak(formula):find("Correct. next() goes on.", 1, true), "the formula typed")
  file("bw = d.bus_width")
  local out = peak("dofile('" .. mine .. "')\n" ..
    "peak_gbs = d.memory_clock_khz * 1000 * 2 * (bw / 8) / 1e9")
  check(out:find("but they read bw, which none of the lines it keeps sets", 1, true), out)
  check(not out:find("typed in as a number", 1, true), out)
  file(formula)
  out = peak("dofile('" .. mine .. "')")
  check(out:find("but none of the lines it keeps sets peak_gbs (set by a file you ran, inside " ..
    "a function, or too long ago)", 1, true), out)
  out = peak("peak_gbs = " .. cuda.device().memory_clock_khz * 2 * cuda.device().bus_width / 8e6)
  check(out:find("peak_gbs is right for this card, but typed in as a number", 1, true), out)
end)

test("lesson 13: prepare is given lists of other lengths than three", function()
  local function prepare(code)
    return session("lesson(13)\nfor _ = 1, 10 do next() end\nskip()\n" ..
      "for _ = 1, 10 do next() end\n" .. code .. "\ncheck()")
  end
  local out = prepare("function prepare(s) cuda.kernel(s[1]); cuda.kernel(s[2]); " ..
    "cuda.kernel(s[3]) end")
  local n, left = out:match("Not yet: after prepare%(list%) of (%d) sources, (%d) of them still " ..
    "had to be compiled: a later cuda.kernel%(s%) is a hit only for an entry of exactly s, " ..
    "with the same options, still in the cache")
  check(n and tonumber(n) >= 4 and tonumber(n) <= 6 and tonumber(left) == tonumber(n) - 3, out)
  -- right for the first, longer list; the second has no third source to compile again
  out = prepare("function prepare(s) for _, x in ipairs(s) do cuda.kernel(x) end; " ..
    "cuda.kernel(s[3]) end")
  n = out:match("Not yet: prepare%(list%) of (%d) sources? raised an error: [^\n]*")
  check(n and tonumber(n) <= 2, out)
  out = prepare("function prepare(sources) for _, s in ipairs(sources) do cuda.kernel(s) end end")
  check(out:find("Correct. next() goes on.", 1, true), out)
end)

run.rmdir(tmp)
return T.done()
