-- help_overview.lua: help() names every function and table of the real cuda module (read from
-- the module itself, so that a new function without a place in the overview fails here) and has
-- an entry of its own; and the lists help derives from C's tables (element types,
-- timing-model parameters) are whole.
package.path = "tests/lua/?.lua;" .. package.path
local T = require "testlib"
T.plan(4)
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
T.test("every function and table of cuda has a help entry with a signature and an example",
  function()
  local help, missing = require("help"), {}
  for k, v in pairs(cuda) do
    if type(k) == "string" and k:sub(1, 1) ~= "_" and (type(v) == "function" or type(v) == "table") then
      local e = help.entry("cuda." .. k)
      if not (e and e.sig and e.text and e.example) then missing[#missing + 1] = "cuda." .. k end
    end
  end
  table.sort(missing)
  assert(#missing == 0, "no help entry (with a signature, text and an example) for " ..
    table.concat(missing, ", "))
end)

T.test("help lists every element type, from cuda.dtypes", function()
  local text = require("help").text("cuda.array")
  assert(#cuda.dtypes >= 12, "cuda.dtypes has " .. #cuda.dtypes .. " rows")
  for _, d in ipairs(cuda.dtypes) do
    assert(text:find("%f[%w]" .. d.name .. "%f[^%w]"), "help \"cuda.array\" does not name " .. d.name)
  end
end)
T.test("help describes every timing-model parameter, from cuda.perf_params", function()
  local text = require("help").text("cuda.perf_params")
  assert(#cuda.perf_params >= 30, "cuda.perf_params has " .. #cuda.perf_params .. " rows")
  for _, p in ipairs(cuda.perf_params) do
    assert(text:find(p.name .. " (" .. p.unit .. "): ", 1, true), "no line for " .. p.name)
  end
  local names = {}
  for k in pairs(cuda.simopts().perf) do names[#names + 1] = k end
  assert(#names == #cuda.perf_params, #names .. " values in simopts().perf")
end)
return T.done()
