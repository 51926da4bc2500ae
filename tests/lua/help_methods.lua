-- help_methods.lua: every method of every object the API hands out (arrays, host buffers,
-- kernels, modules, streams, events, watches: found in the metatables C registers, not in a list
-- kept here) and every function of cuda and cpu, nested tables' too (cuda.blas.gemm), has help:
-- help(f) on the function itself, as a learner types it, finds an entry with text, never "no
-- help entry yet". A new method without help fails here.
package.path = "tests/lua/?.lua;" .. package.path
local T = require "testlib"
T.plan(4)
local help = require "help"

-- Whether help(f) gives the entry's text, and what it gave.
local function documented(f)
  local text = help.text(f)
  return not (text:find("has no help entry yet", 1, true) or text:find("^No help")), text
end

-- Every method of the object types: "cudalab.X" metatables in the registry with functions in
-- __methods, a table __index, or (not a metamethod) the metatable itself.
local function methods()
  local out, reg = {}, debug.getregistry()
  for tname, mt in pairs(reg) do
    if type(tname) == "string" and tname:match("^cudalab%.") and type(mt) == "table" then
      local seen = {}
      local function add(t)
        if type(t) ~= "table" then return end
        for k, v in pairs(t) do
          if type(k) == "string" and type(v) == "function" and not k:match("^__") and not seen[k] then
            seen[k] = true
            out[#out + 1] = { type = tname:match("^cudalab%.(.*)$"), name = k, fn = v }
          end
        end
      end
      add(rawget(mt, "__methods"))
      add(rawget(mt, "__index"))
      add(mt)
    end
  end
  table.sort(out, function(a, b) return a.type .. ":" .. a.name < b.type .. ":" .. b.name end)
  return out
end

T.test("the object types with methods are found (the enumeration itself works)", function()
  local types = {}
  for _, m in ipairs(methods()) do types[m.type] = (types[m.type] or 0) + 1 end
  for _, t in ipairs({ "Array", "HostBuffer", "Kernel", "Module", "Stream", "Event", "Watch" }) do
    assert(types[t], "no methods found for " .. t .. ": the test would pass without looking")
  end
  assert(types.Kernel >= 4, "Kernel has ptx, info, occupancy and debug: found " .. types.Kernel)
end)

T.test("every method of every object type has help, found from the function itself", function()
  local missing = {}
  for _, m in ipairs(methods()) do
    local ok, text = documented(m.fn)
    local name = m.type .. ":" .. m.name
    if not ok then missing[#missing + 1] = name .. " (" .. text:match("^[^\n]*") .. ")"
    elseif not text:find(m.name, 1, true) then missing[#missing + 1] = name .. " (wrong entry)" end
  end
  assert(#missing == 0, #missing .. " without help: " .. table.concat(missing, ", "))
end)

T.test("every function of cuda and cpu, in nested tables too, has help", function()
  local missing, count = {}, 0
  local function walk(t, prefix, depth)
    for k, v in pairs(t) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" then
        if type(v) == "function" then
          count = count + 1
          local ok, text = documented(v)
          if not ok then missing[#missing + 1] = prefix .. k .. " (" .. text:match("^[^\n]*") .. ")"
          elseif not text:find(k, 1, true) then missing[#missing + 1] = prefix .. k .. " (wrong entry)" end
        elseif type(v) == "table" and depth < 2 then
          walk(v, prefix .. k .. ".", depth + 1)
        end
      end
    end
  end
  walk(cuda, "cuda.", 1)
  walk(cpu, "cpu.", 1)
  assert(count >= 40, "only " .. count .. " functions found")
  table.sort(missing)
  assert(#missing == 0, #missing .. " without help: " .. table.concat(missing, ", "))
end)

T.test("help by name finds a method written as a learner writes it", function()
  for _, name in ipairs({ "Kernel:occupancy", "k:occupancy", "Array:tobytes", "Stream:free",
      "Event:free", "Watch:clear", "cuda.blas.gemm", "cuda.cache.clear" }) do
    k = cuda.kernel[[__global__ void k0(float *a) { a[0] = 1; }]] -- help "k:..." reads the global
    local text = help.text(name)
    assert(not text:find("^No help"), name .. ": " .. text:match("^[^\n]*"))
  end
  k = nil
end)

return T.done()
