-- test_help.lua: the manual in lua/help.lua is well formed (every entry has a
-- signature, text and an example), its examples run as written (against the
-- fake cuda module), and help finds entries by value and by name. That every
-- function of the real cuda module has an entry is tests/lua/help_overview.lua's.

local help = require "help"
local fake = require "fake_cuda"

-- The entries whose examples the fake cuda module can run (it imitates part of the C side). The
-- real module is checked against the manual by tests/lua/help_overview.lua, which finds every
-- function of cuda there, and tests/simulator/help_examples.lua runs every example for real.
local FAKE_RUNS = {
  "cuda", "cuda.device", "cuda.array", "cuda.zeros", "cuda.ones", "cuda.full", "cuda.arange",
  "cuda.rand", "cuda.host", "cuda.kernel", "cuda.module", "cuda.time", "cuda.compare",
  "cuda.meminfo", "cuda.sync", "cuda.launches", "cuda.stats", "cuda.simopts", "cuda.limits",
  "cuda.gpu_admit", "cuda.empty", "cuda.sanitize", "cuda.watch", "cuda.unwatch", "cuda.dtypes",
  "cuda.perf_params", "cpu", "cpu.time",
  "Array", "Array:tolist", "Array:host", "Array:copyto", "Array:copyfrom", "Array:fill",
  "Array:free", "Array.dtype", "Array.nbytes", "HostBuffer",
  "Kernel", "Kernel:launch", "Kernel:ptx", "Kernel:info", "Kernel:debug", "Kernel.name",
  "Module", "Module:kernels", "Module:ptx", "Watch", "Watch:clear", "Watch:close", "help", "pp",
}

-- Runs fn with the fake modules installed as globals and their metatables
-- in the registry, as the engine would have them.
local function with_fake(fn, opts)
  local cuda, cpu, types = fake.new(opts)
  require("meta").install(cuda)
  with_globals({ cuda = cuda, cpu = cpu }, function()
    fake.with_registry(types, function() fn(cuda, cpu, types) end)
  end)
end

test("every entry has a signature, text and (but the modules') an example", function()
  for _, name in ipairs(help.names()) do
    local e = help.entry(name)
    check(type(e.sig) == "string" and #e.sig > 0, name .. ": no signature")
    check(type(e.text) == "string" and #e.text > 0, name .. ": no text")
    if name ~= "cuda" and name ~= "cpu" then check(e.example, name .. ": no example") end
  end
  for _, name in ipairs(FAKE_RUNS) do check(help.entry(name), "no help entry for " .. name) end
end)

-- Runs the example of each named entry in a fresh environment; returns what
-- each printed, by name. A scratch folder stands in for os.tmpname, so the
-- cuda.plot example leaves nothing behind.
local function run_examples(cuda, cpu, names)
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local n = 0
  local scratch_os = setmetatable({ tmpname = function() n = n + 1; return dir .. "/" .. n end },
    { __index = os })
  local printed = {}
  local ok, err = pcall(function()
    for _, name in ipairs(names) do
      local e = help.entry(name)
      if e.example then
        local env = setmetatable({ cuda = cuda, cpu = cpu, help = help.help, pp = function() end,
          os = scratch_os }, { __index = _G })
        local chunk, cerr = load(e.example, "=" .. name, "t", env)
        check(chunk, name .. ": example does not compile: " .. tostring(cerr))
        local run_ok, out = pcall(capture, chunk)
        check(run_ok, name .. ": example fails: " .. tostring(out))
        printed[name] = table.concat(out, "\n")
      end
    end
  end)
  os.execute("rm -rf " .. dir)
  if not ok then error(err, 0) end
  return printed
end

test("help examples run as written, each on its own", function()
  with_fake(function(cuda, cpu)
    -- what the limits' examples need of the C side, where the fake has nothing yet
    cuda.limits = cuda.limits or function() return { memory_in_use = 0 } end
    cuda.gpu_admit = cuda.gpu_admit or function() return { ok = false, why = "no GPU found" } end
    run_examples(cuda, cpu, FAKE_RUNS)
  end)
end)

test("help examples run on the simulator's model clock too, the visual ones included", function()
  local visual = require "visual"
  with_fake(function(cuda, cpu)
    visual.install(cuda)
    -- what cuda.timeline's example needs of the C side: a stream, a copy, one recorded copy
    cuda.stream = function() return { id = 1 } end
    cuda.copy = function(dst) return dst end
    cuda._timeline = function(fn)
      fn()
      return { { stream = 1, kind = "copy", dir = "H2D", bytes = 400000, pinned = true, start = 0, stop = 0.01 } }, "model"
    end
    local names = { "cuda.time", "cuda.stats", "cuda.simopts" }
    for name in pairs(visual.HELP) do names[#names + 1] = name end
    table.sort(names)
    local printed = run_examples(cuda, cpu, names)
    check(printed["cuda.time"]:find("modelled H200 time, bound by", 1, true), printed["cuda.time"])
    check(printed["cuda.stats"]:find("Modelled H200 time:", 1, true), printed["cuda.stats"])
    check(printed["cuda.stats"]:find("Bound by block scheduling", 1, true), printed["cuda.stats"])
    checkeq(printed["cuda.simopts"], "false", "the example turns the model off")
    check(printed["cuda.sweep"]:find("bound by", 1, true), printed["cuda.sweep"])
    check(printed["cuda.versus"]:find("modelled H200 time", 1, true), printed["cuda.versus"])
    check(printed["cuda.timeline"]:find("stream 1 ", 1, true), printed["cuda.timeline"])
    checkeq(cuda.simopts().model, true, "the simopts example restores the options")
  end, { clock = "model" })
end)

test("help describes the modelled clock where it applies", function()
  require("visual").register_help(help)
  for _, name in ipairs({ "cuda.time", "cuda.stats", "cuda.simopts", "cuda.sweep", "cuda.versus",
      "cuda.plot" }) do
    local text = help.text(name):gsub("%s+", " ")
    check(text:find("modelled H200 time", 1, true), name .. ": " .. text)
  end
  check(help.text("cuda.simopts"):gsub("%s+", " "):find("model = false", 1, true))
end)

test("help text fits in 78 columns", function()
  local texts = { help.text() }
  for _, name in ipairs(help.names()) do texts[#texts + 1] = help.text(name) end
  for _, text in ipairs(texts) do
    for line in text:gmatch("[^\n]+") do
      check((utf8.len(line) or #line) <= 78, "too long: " .. line)
    end
  end
end)

test("help() gives the overview", function()
  local text = help.text()
  check(text:find("lessons()", 1, true), "overview does not mention lessons()")
  check(text:find('help "cuda.array"', 1, true), "overview does not show help by name")
  check(text:find("Ctrl-D", 1, true), "overview does not say how to quit")
end)

test("help finds cuda functions by identity", function()
  with_fake(function(cuda, cpu)
    for k, f in pairs(cuda) do
      if type(f) == "function" then
        local text = help.text(f)
        -- a long signature goes on over two lines (cuda.copy, cuda.simopts)
        checkeq(text:match("^[^\n]*"), help.entry("cuda." .. k).sig:match("^[^\n]*"),
          "help(cuda." .. k .. ")")
      end
    end
    checkeq(help.text(cpu.time):match("^[^\n]*"), help.entry("cpu.time").sig)
  end)
end)

test("help finds methods through the type metatables", function()
  with_fake(function(cuda, _, types)
    local a, k = cuda.array(3), cuda.kernel("__global__ void f(float *a) {}")
    checkeq(help.text(types.Array.__methods.tolist):match("^[^\n]*"), "a:tolist() -> table")
    checkeq(help.text(types.Kernel.__methods.info):match("^[^\n]*"), "k:info() -> KernelInfo")
    checkeq(help.text(types.Module.__methods.kernels):match("^[^\n]*"), "m:kernels() -> table")
    checkeq(help.text(types.HostBuffer.__methods.fill):match("^[^\n]*"),
      "HostBuffer:fill works as Array:fill:")
    checkeq(help.text(a):match("^[^\n]*"), help.entry("Array").sig)
    checkeq(help.text(k):match("^[^\n]*"), help.entry("Kernel").sig)
  end)
end)

test("help on result tables names the function that made them", function()
  with_fake(function(cuda)
    checkeq(help.text(cuda.device()):match("^[^\n]*"), "cuda.device() -> Device")
    checkeq(help.text(cuda.meminfo()):match("^[^\n]*"), "cuda.meminfo() -> MemInfo")
    local t = cuda.time(function() end, { warmup = 0, reps = 1 })
    checkeq(help.text(t):match("^[^\n]*"), help.entry("cuda.time").sig)
  end)
end)

test("help on a module lists its functions", function()
  with_fake(function(cuda)
    local text = help.text(cuda)
    check(text:find("\n  cuda%.array%s+A device array of n zeros"), text)
    check(text:find('help "cuda.device" explains one of them.', 1, true), text)
  end)
end)

test("help by name", function()
  local first = function(s) return help.text(s):match("^[^\n]*") end
  checkeq(first("cuda.array"), "cuda.array(n | table [, dtype]) -> Array")
  checkeq(first("cuda.array()"), "cuda.array(n | table [, dtype]) -> Array")
  checkeq(first("  array "), "cuda.array(n | table [, dtype]) -> Array")
  checkeq(first("Array"), help.entry("Array").sig)
  checkeq(first("Array.tolist"), "a:tolist() -> table")
  checkeq(first("Array:dtype"), "a.dtype -> string")
  checkeq(first("launch"), "k[{grid, block [, shared = bytes, cooperative = true]}](args...)")
  checkeq(first("HostBuffer:copyto"), "HostBuffer:copyto works as Array:copyto:")
end)

test("help by name shows every match of a short name", function()
  local text = help.text("time")
  check(text:find("cuda.time(fn", 1, true) and text:find("cpu.time(fn", 1, true), text)
  local both = help.text("ARRAY")
  check(both:find("cuda.array(", 1, true) and both:find("Array  (made by", 1, true), both)
end)

test("help by a variable's name uses its type", function()
  with_fake(function(cuda)
    with_globals({ arr = cuda.array(2) }, function()
      checkeq(help.text("arr:tolist"):match("^[^\n]*"), "a:tolist() -> table")
      checkeq(help.text("arr"):match("^[^\n]*"), help.entry("Array").sig)
    end)
  end)
end)

test("help for standard Lua functions points at the manual", function()
  checkeq(help.text(print), "print is part of standard Lua; see " ..
    "https://www.lua.org/manual/5.4/manual.html#pdf-print")
  checkeq(help.text(string.format), "string.format is part of standard Lua; see " ..
    "https://www.lua.org/manual/5.4/manual.html#pdf-string.format")
end)

test("help on an undocumented cuda function names it", function()
  with_fake(function(cuda)
    cuda.frobnicate = function() end
    checkeq(help.text(cuda.frobnicate),
      'cuda.frobnicate has no help entry yet. help "cuda" lists what is documented.')
  end)
end)

test("help on unknown things says so and suggests help()", function()
  local line = debug.getinfo(1, "l").currentline + 1
  local function mine() end
  checkeq(help.text(mine), "No help for this function defined at tests/lua_unit/test_help.lua:" ..
    line .. ". Try help() for an overview, or press Tab to see the names there are.")
  checkeq(help.text("nosuch"), 'No help for "nosuch". Try help() for an overview, ' ..
    "or press Tab to see the names there are.")
  check(help.text(nil):find("^help got nil: the name you passed has no value"), help.text(nil))
  check(help.text(42):find("^No help for this number%."), help.text(42))
end)

test("help finds itself and pp through the globals", function()
  local stub = function(...) return help.help(...) end
  with_globals({ help = stub, pp = function() end }, function()
    checkeq(help.text(stub):match("^[^\n]*"), "help([value | name])")
    checkeq(help.text(pp):match("^[^\n]*"), "pp(value, ...)")
  end)
end)

test("help.help prints and returns nothing", function()
  local results
  local out = capture(function() results = table.pack(help.help("cuda.sync")) end)
  checkeq(results.n, 0)
  checkeq(#out, 1)
  check(out[1]:find("^cuda%.sync%(%)\n"), out[1])
end)

test("help.register adds an entry, found by name and by value", function()
  local fn = function() end
  help.register("lessons",
    { sig = "lessons()", text = "Lists the lessons.", example = "lessons()" }, fn)
  checkeq(help.text("lessons"):match("^[^\n]*"), "lessons()")
  checkeq(help.text(fn):match("^[^\n]*"), "lessons()")
  checkerr("help.register(name", help.register, "bad", {})
end)
