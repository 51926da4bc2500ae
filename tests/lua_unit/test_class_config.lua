-- test_class_config.lua: what class.lua may say (lua/class/class_config.lua): sizes and
-- times as people write them, and every bad value named with its line.

local config = require "class_config"

test("sizes read as people write them", function()
  checkeq(config.parse_bytes("2 GiB"), 2 * 2^30)
  checkeq(config.parse_bytes("512MiB"), 512 * 2^20)
  checkeq(config.parse_bytes("1.5 gib"), 1.5 * 2^30 // 1)
  checkeq(config.parse_bytes("3 GB"), 3000000000)
  checkeq(config.parse_bytes(4096), 4096)
  checkeq(config.parse_bytes("2g"), 2 * 2^30)
end)

test("bad sizes say how to write one", function()
  local v, why = config.parse_bytes("lots")
  checkeq(v, nil)
  check(why:find('"lots" is not a size (write it as "2 GiB"', 1, true), why)
  v, why = config.parse_bytes("2 parsecs")
  check(why:find("is not a size", 1, true), why)
  v, why = config.parse_bytes(0)
  check(why:find("greater than zero", 1, true), why)
  v, why = config.parse_bytes(0 / 0)
  check(v == nil and why, "nan refused")
  v, why = config.parse_bytes(true)
  check(v == nil and why:find("true is not a size", 1, true), why)
end)

test("times read as people write them", function()
  checkeq(config.parse_seconds("2 s"), 2)
  checkeq(config.parse_seconds("500 ms"), 0.5)
  checkeq(config.parse_seconds("1.5 min"), 90)
  checkeq(config.parse_seconds(3), 3)
  local v, why = config.parse_seconds("-1 s")
  checkeq(v, nil)
  check(why:find("not a duration", 1, true), why)
  v, why = config.parse_seconds(1e9)
  check(why:find("between 0 and a week", 1, true), why)
end)

test("a full class.lua gives its settings", function()
  local s = assert(config.check({ title = "GPU week", lessons = { 1, 2, 7 }, lesson_dirs = { "mine" },
    backend = "sim", memory_per_learner = "1 GiB", kernel_time_limit = "2 s", gpu_sessions_max = 30,
    stuck = { attempts = 3 } }, "", "class.lua"))
  checkeq(s.title, "GPU week")
  checkeq(s.lessons, { 1, 2, 7 })
  checkeq(s.lesson_dirs, { "mine" })
  checkeq(s.backend, "sim")
  checkeq(s.memory, 2^30)
  checkeq(s.kernel_time, 2)
  checkeq(s.gpu_sessions_max, 30)
  checkeq(s.stuck, { attempts = 3, minutes = 15 })
end)

test("an empty class.lua means every default", function()
  local s = assert(config.check({}, "return {}"))
  checkeq(s.backend, "auto")
  checkeq(s.lessons, nil)
  checkeq(s.memory, nil)
  checkeq(s.stuck, { attempts = 5, minutes = 15 })
end)

test("a bad value is named with its line", function()
  local text = "return {\n  title = 'x',\n  backend = 'gpus',\n}\n"
  local s, why = config.check({ title = "x", backend = "gpus" }, text)
  checkeq(s, nil)
  checkeq(why, 'class.lua:3: backend must be "auto", "gpu" or "sim", not "gpus"')
  text = "return {\n\n  memory_per_learner = 'much',\n}"
  s, why = config.check({ memory_per_learner = "much" }, text)
  check(why:find('^class.lua:3: memory_per_learner: "much" is not a size'), why)
end)

test("an unknown key is an error, so a misspelt cap is never silently ignored", function()
  local s, why = config.check({ memory_per_leaner = "1 GiB" }, "return {\n memory_per_leaner = 1\n}")
  checkeq(s, nil)
  check(why:find('^class.lua:2: unknown key "memory_per_leaner" %(the keys are'), why)
end)

test("lessons must be a plain list of numbers", function()
  local _, why = config.check({ lessons = { 1, "two" } }, "")
  checkeq(why, "class.lua: lessons[2] is two, not a lesson number (1 to 99)")
  _, why = config.check({ lessons = { 1, [5] = 5 } }, "")
  check(why:find("plain list", 1, true), why)
  _, why = config.check({ lessons = 3 }, "")
  check(why:find("list of lesson numbers", 1, true), why)
  checkeq(config.check({ lessons = "all" }, "").lessons, nil)
end)

test("class.lua must return a table", function()
  local _, why = config.check(nil, "")
  checkeq(why, "class.lua must return a table (it returned nil)")
end)

test("gpu_sessions_max and stuck are checked", function()
  local _, why = config.check({ gpu_sessions_max = 2.5 }, "")
  check(why:find("gpu_sessions_max must be a whole number", 1, true), why)
  _, why = config.check({ stuck = { attempts = -1 } }, "")
  check(why:find("stuck.attempts must be a number greater than zero", 1, true), why)
  _, why = config.check({ stuck = { tries = 1 } }, "")
  check(why:find('stuck has an unknown key "tries"', 1, true), why)
end)

test("the template class.lua is valid Lua that checks clean", function()
  local text = config.TEMPLATE:format("Week 1")
  local f = assert(load(text, "=class.lua", "t", {}))
  local s = assert(config.check(f(), text))
  checkeq(s.title, "Week 1")
  checkeq(s.memory, 2 * 2^30)
  checkeq(s.kernel_time, 2)
end)

test("grading keys: roster, points and weights are checked", function()
  local s = assert(config.check({ roster = "people/roster.csv", points = { ["50-x/t"] = 5 },
    weights = { [50] = 2 } }, ""))
  checkeq(s.roster, "people/roster.csv")
  checkeq(s.points, { ["50-x/t"] = 5 })
  checkeq(s.weights, { [50] = 2 })
  local function fails(cfg, want)
    local r, why = config.check(cfg, "")
    checkeq(r, nil)
    check(why:find(want, 1, true), why)
  end
  fails({ roster = "../x.csv" }, "roster must be the name of a CSV file in the class folder")
  fails({ roster = "records/x.csv" }, "not under records/")
  fails({ roster = "/etc/passwd" }, "roster must be")
  fails({ points = { ["50-x/t"] = -1 } }, 'points["50-x/t"] is -1, not a number of points')
  fails({ points = 3 }, "points must be a table of task ids")
  fails({ weights = { [0] = 1 } }, "weights has a key 0 that is not a lesson number")
  fails({ weights = { [3] = "a lot" } }, "weights[3] is a lot, not a weight")
end)

test("due times, extensions and the late policy are checked", function()
  local s = assert(config.check({ due = { [3] = "2025-03-07 23:59" }, extensions = {
    alice = "2 days", bob = { [3] = "2025-03-10 12:00:30" } }, late = { per_day = 0.1, days = 3 } },
    ""))
  checkeq(s.due[3], os.time { year = 2025, month = 3, day = 7, hour = 23, min = 59, sec = 0 })
  checkeq(s.extensions.alice, { more = 2 * 86400 })
  checkeq(s.extensions.bob.due[3], os.time { year = 2025, month = 3, day = 10, hour = 12, min = 0,
    sec = 30 })
  checkeq(s.late, { per_day = 0.1, days = 3 })
  local function fails(cfg, want)
    local r, why = config.check(cfg, "")
    checkeq(r, nil)
    check(why:find(want, 1, true), why)
  end
  fails({ due = { [3] = "next friday" } }, 'due[3]: "next friday" is not a time')
  fails({ due = { [3] = "2025-02-30 10:00" } }, '"2025-02-30 10:00" is not a date and time')
  fails({ extensions = { ["a b"] = "1 day" } }, "not an account name")
  fails({ late = { per_day = 2 } }, "late.per_day must be a share of the points from 0 to 1")
  fails({ late = { penalty = 1 } }, 'late has an unknown key "penalty"')
end)

test("challenge names a task by its id; anything else is refused with its line", function()
  local s = assert(config.check({ challenge = { task = "54-c/fast" } }, ""))
  checkeq(s.challenge, { task = "54-c/fast" })
  local r, why = config.check({ challenge = "54-c/fast" }, "return {\n  challenge = 'x',\n}")
  checkeq(r, nil)
  checkeq(why, "class.lua:2: challenge must be a table naming a task by its id, such as " ..
    "{task = \"50-warmup/square-every-element\"}")
  r, why = config.check({ challenge = { task = "" } }, "")
  check(r == nil and why:find("challenge must be a table naming a task", 1, true), why)
  r, why = config.check({ challenge = { task = "a/b", by = "gpu" } }, "")
  check(r == nil and why:find('challenge has an unknown key "by" (task)', 1, true), why)
end)

test("a session on the simulator for want of a GPU slot asks again with cuda.use(\"gpu\")",
  function()
  local free, used = false, {}
  local cuda = { use = function(name) used[#used + 1] = name; return "sim" end,
    gpu_admit = function(req)
      check(req.key == "class-key" and req.sessions_max == 3, "the class's request")
      if free then return { ok = true } end
      return { ok = false, why = "all 3 GPU sessions of this class are taken" }
    end }
  require("classroom").retry_gpu(cuda, { key = "class-key", sessions_max = 3 })
  checkerr("cuda.use: no GPU session is free for this class yet (all 3 GPU sessions of this " ..
    "class are taken): kernels stay on the simulator; try again later", cuda.use, "gpu")
  checkeq(#used, 0)
  cuda.use("sim")
  free = true
  cuda.use("gpu")
  checkeq(used, { "sim", "cuda" })
end)
