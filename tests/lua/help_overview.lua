-- help_overview.lua: help() names every function and table of the real cuda module (read from
-- the module itself, so that a new function without a place in the overview fails here).
package.path = "tests/lua/?.lua;" .. package.path
local T = require "testlib"
T.plan(1)
T.test("help()'s overview names everything in cuda", function()
  local text = require("help").text()
  local missing = {}
  for k, v in pairs(cuda) do
    if type(k) == "string" and k:sub(1, 1) ~= "_" and (type(v) == "function" or type(v) == "table") then
      if not text:find("%f[%w_]" .. k .. "%f[^%w_]") then missing[#missing + 1] = k end
    end
  end
  table.sort(missing)
  assert(#missing == 0, "help() does not name cuda." .. table.concat(missing, ", cuda."))
end)
return T.done()
