-- test_init.lua: lua/init.lua as the engine runs it: with cuda and cpu
-- registered, it installs the printers, defines help and pp, returns the
-- engine's two hooks, leaves the printers, completion, help.lua, the lesson
-- engine and visual.lua unloaded until first used (their stubs in place),
-- and the hooks keep working after a learner shadows standard globals, also
-- when that comes before their first use.

local fake = require "fake_cuda"

local MODULES = { "meta", "pretty", "format", "help", "complete", "lesson_boot", "visual",
                  "lessons" }

-- Runs init.lua from scratch (modules unloaded) with fake globals; passes
-- its result and the fake modules to fn, then restores every global, and
-- the help loader init wraps.
local function with_init(fn)
  local cuda, cpu = fake.new()
  with_globals({ cuda = cuda, cpu = cpu, help = false, pp = false, next = next }, function()
    local saved, preload = {}, package.preload.help
    for _, m in ipairs(MODULES) do saved[m], package.loaded[m] = package.loaded[m], nil end
    local ok, err = pcall(function()
      local t0 = os.clock()
      local hooks = dofile("lua/init.lua")
      fn(hooks, cuda, os.clock() - t0)
    end)
    for _, m in ipairs(MODULES) do package.loaded[m] = saved[m] end
    package.preload.help = preload
    if not ok then error(err, 0) end
  end)
end

test("init returns the engine's hooks", function()
  with_init(function(hooks)
    checkeq(type(hooks.print_results), "function")
    checkeq(type(hooks.complete), "function")
    checkeq(capture(hooks.print_results, 1, { 2 }), { "1\t{2}" })
  end)
end)

test("init installs the printers", function()
  with_init(function(_, cuda)
    checkeq(tostring(cuda.meminfo()), "1 GiB used of 4 GiB (25%), 3 GiB free")
    checkeq(getmetatable(cuda.device()).__name, "cudalab.Device")
  end)
end)

test("init defines help and pp as functions", function()
  with_init(function()
    checkeq(type(help), "function")
    checkeq(type(pp), "function")
    checkeq(capture(pp, { a = 1 }), { "{a = 1}" })
    local out = capture(help, "cuda.sync")
    check(out[1]:find("^cuda%.sync%(%)"), out[1])
    checkeq(capture(help, help)[1]:match("^[^\n]*"), "help([value | name])")
  end)
end)

test("init loads help lazily", function()
  with_init(function()
    checkeq(package.loaded.help, nil, "help loaded at start-up")
    capture(help)
    check(package.loaded.help, "help not loaded on first use")
  end)
end)

test("init loads the printers and completion on first use, not at start-up", function()
  with_init(function(hooks, cuda)
    for _, m in ipairs({ "meta", "pretty", "format", "complete" }) do
      checkeq(package.loaded[m], nil, m .. " loaded at start-up")
    end
    capture(hooks.print_results, 1)
    check(package.loaded.pretty, "pretty not loaded by the first result")
    checkeq(package.loaded.meta, nil, "meta loaded before a result table was printed")
    checkeq(tostring(cuda.meminfo()), "1 GiB used of 4 GiB (25%), 3 GiB free")
    check(package.loaded.meta, "meta not loaded by the first result table printed")
    hooks.complete("cuda.sy")
    check(package.loaded.complete, "complete not loaded by the first Tab")
  end)
end)

test("init leaves the lesson engine and visual.lua for later, with stubs in place", function()
  with_init(function(_, cuda)
    for _, m in ipairs({ "lesson_boot", "visual", "lessons" }) do
      checkeq(package.loaded[m], nil, m .. " loaded at start-up")
    end
    checkeq(type(lessons), "function")
    checkeq(type(cuda.sweep), "function")
    checkeq(type(cuda.roofline.measure), "function")
    checkeq(next({ 7 }), 1, "next with arguments is Lua's")
    checkeq(next({}), nil)
    -- a stub passes its arguments on to the function it stands for
    local ok, err = pcall(cuda.plot, 42, "x.svg")
    check(not ok and tostring(err):find("result must come from cuda.sweep", 1, true), err)
    check(package.loaded.visual, "visual not loaded by the first call of a stub")
  end)
end)

-- The names init installs stubs for, beside the lists they stand for (lesson_boot.COMMANDS,
-- and what visual.install puts into cuda): init keeps its own copy to stay cheap.
test("init's stubs are the lesson commands and visual's functions and cuda.export, no more, no fewer", function()
  local check, checkeq = check, checkeq -- `check` is a lesson command's name too
  local commands = {}
  for _, name in ipairs(require("lesson_boot").COMMANDS) do commands[name] = true end
  local cleared = { help = false, pp = false }
  for name in pairs(commands) do cleared[name] = false end
  cleared.next = next -- Lua's own, which init replaces: the one command that is never free
  with_globals(cleared, function()
    for name in pairs(commands) do
      if name ~= "next" then rawset(_G, name, nil) end
    end
    local before = {}
    for k, v in pairs(_G) do before[k] = v end
    with_init(function(_, cuda)
      local stubs = {}
      for k, v in pairs(_G) do
        if before[k] ~= v and k ~= "help" and k ~= "pp" and k ~= "cuda" and k ~= "cpu" then
          stubs[k] = true
        end
      end
      checkeq(stubs, commands, "the lesson commands")
      local installed = fake.new()
      local plain = {}
      for k in pairs(installed) do plain[k] = true end
      require("visual").install(installed)
      for k, v in pairs(installed) do
        if not plain[k] then
          checkeq(type(cuda[k]), type(v), "cuda." .. k)
        end
      end
      for k in pairs(cuda) do -- cuda.export is init's own stub, for export.lua
        if not plain[k] and k ~= "export" then
          check(installed[k] ~= nil, "init's cuda." .. k .. ": not visual's")
        end
      end
      checkeq(type(cuda.export), "function", "cuda.export's stub")
      checkeq(type(cuda.roofline.peaks), "function")
      checkeq(type(getmetatable(cuda.roofline).__call), "function", "cuda.roofline is called")
    end)
  end)
end)

test("help, loaded after init, documents visual's functions", function()
  with_init(function()
    local out = capture(help, "cuda.sweep")
    check(out[1]:find("^cuda%.sweep%("), out[1])
    check(package.loaded.visual, "visual loaded for help's entries")
  end)
end)

test("the hooks survive shadowed standard globals", function()
  with_init(function(hooks)
    with_globals({ table = { 1, 2 }, type = "f32", string = "s", next = 0, pairs = false },
      function()
        checkeq(capture(hooks.print_results, { 1, x = "y" }), { '{1, x = "y"}' })
        checkeq(hooks.complete("cuda.sy"), { "cuda.sync(" })
      end)
  end)
end)

-- Typed before lesson(1): a task's formula may read a name set then (gpu = cuda.device()).
test("init keeps the latest chunks typed before the lesson engine loads, for lesson_check",
  function()
  with_init(function(hooks)
    local saved = package.loaded.lesson_check
    package.loaded.lesson_check = nil
    local ok, err = pcall(function()
      local early = package.loaded["cudalab.early_input"]
      hooks.on_input("gpu = cuda.device()")
      checkeq(early[1], "gpu = cuda.device()")
      local pad = " -- " .. string.rep("-", 500)
      for i = 1, 300 do hooks.on_input("x = " .. i .. pad) end
      checkeq({ #early, early[1], early[200] }, { 200, "x = 101" .. pad, "x = 300" .. pad },
        "the latest 200, the oldest dropped first")
      hooks.on_input(string.rep("y", 257 * 1024))
      checkeq({ #early, early[200] }, { 200, "x = 300" .. pad }, "a chunk past 256 KiB is not kept")
      local big = "s = [[" .. string.rep("z", 200 * 1024) .. "]]"
      hooks.on_input(big)
      check(early.bytes <= 256 * 1024 and early[#early] == big and #early < 200,
        "older chunks dropped to keep 256 KiB at most: " .. early.bytes)
      local got = {}
      package.loaded.lesson_check = { typed = function(c) got[#got + 1] = c end }
      hooks.on_input("z = 1")
      checkeq(got, { "z = 1" }, "once lesson_check is loaded, each chunk goes to it")
      checkeq(early[#early], big, "and no longer here")
    end)
    package.loaded.lesson_check = saved
    package.loaded["cudalab.early_input"] = nil
    if not ok then error(err, 0) end
  end)
end)

test("init is cheap", function()
  with_init(function(_, _, seconds)
    check(seconds < 0.02, string.format("init took %.1f ms", seconds * 1000))
  end)
end)

test("init works without a cuda module", function()
  with_globals({ cuda = false, cpu = false, help = false, pp = false }, function()
    rawset(_G, "cuda", nil)
    local hooks = dofile("lua/init.lua")
    checkeq(type(hooks.complete), "function")
  end)
end)
