-- help_examples.lua: every example in help's manual runs as written on the simulator, against the
-- real cuda module (tests/lua_unit/test_help.lua runs a part of them against a fake one, without
-- C). The list is help's own, so a new entry is run without being named here.
local T = dofile("tests/lua/testlib.lua")
T.plan(1)

T.test("every help example runs on the simulator", function()
  local help = require "help"
  require("visual").register_help(help)
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local n, failed, ran = 0, {}, 0
  local scratch_os = setmetatable({ tmpname = function() n = n + 1; return dir .. "/" .. n end },
    { __index = os })
  local real_print = print
  print = function() end -- examples print, and so does help(), through the global print
  for _, name in ipairs(help.names()) do
    local e = help.entry(name)
    if e.example then
      local env = setmetatable({ pp = function() end, os = scratch_os }, { __index = _G })
      local chunk, err = load(e.example, "=" .. name, "t", env)
      local ok, run_err = chunk ~= nil, err
      if chunk then ok, run_err = pcall(chunk) end
      if not ok then failed[#failed + 1] = name .. ": " .. tostring(run_err) end
      ran = ran + 1
    end
  end
  print = real_print
  os.execute("rm -rf " .. dir)
  assert(ran > 50, "only " .. ran .. " examples")
  assert(#failed == 0, table.concat(failed, "\n"))
end)
os.exit(T.done() and 0 or 1)
