-- microbench.lua: helpers shared by calibrate.lua: timing, least squares,
-- result checks, float rounding, a random cycle for pointer chasing, and
-- writing the results as a Lua chunk.
--
-- Design stance: every figure comes from cuda.time's median (GPU events on
-- the GPU), never the mean, so one preempted rep cannot move it. Checks do
-- not raise: a failed check is recorded and the figure is set aside in the
-- output's `failed` list, so one broken benchmark costs one number, not the
-- whole run, and a broken number can never pass as a measurement.

local M = {}

local opts = { warmup = 2, reps = 10 }
M.failed = {} -- measurement key -> why its check failed

-- Quick mode (the simulator, to prove the script runs): fewer reps.
function M.set_quick(q)
  if q then opts = { warmup = 1, reps = 1 } end
end

-- Median time of fn in ms.
function M.ms(fn)
  return cuda.time(fn, opts).median
end

-- Least-squares line through (xs[i], ys[i]): returns intercept, slope.
function M.fit(xs, ys)
  local n, sx, sy, sxx, sxy = #xs, 0, 0, 0, 0
  for i = 1, n do
    sx, sy = sx + xs[i], sy + ys[i]
    sxx, sxy = sxx + xs[i] * xs[i], sxy + xs[i] * ys[i]
  end
  local b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
  return (sy - b * sx) / n, b
end

-- The x where ys, falling from its plateau, first crosses `level`, by linear
-- interpolation between the two sizes around the crossing; nil if it never does.
function M.crossing(xs, ys, level)
  for i = 2, #xs do
    if ys[i - 1] >= level and ys[i] < level then
      local f = (ys[i - 1] - level) / (ys[i - 1] - ys[i])
      return xs[i - 1] + f * (xs[i] - xs[i - 1])
    end
  end
end

-- Records a check; `what` is the measurement key it guards, or a list of keys.
function M.check(what, ok, detail)
  if ok then return true end
  for _, k in ipairs(type(what) == "table" and what or { what }) do M.failed[k] = detail end
  print("  CHECK FAILED " .. (type(what) == "table" and table.concat(what, ", ") or what) .. ": " .. detail)
  return false
end

-- Compares got against want within a relative tolerance (0 = exact).
function M.near(what, got, want, rtol)
  local err = math.abs(got - want)
  return M.check(what, err <= (rtol or 0) * math.abs(want),
    string.format("got %.9g, expected %.9g", got, want))
end

-- v rounded to the nearest float (f32), as the GPU stores it.
function M.f32(v)
  return (string.unpack("f", string.pack("f", v)))
end

-- A random order of 0 .. m-1 (Fisher-Yates with a fixed seed): the cycle that
-- the pointer chase walks is order[1] -> order[2] -> ... -> order[m] -> order[1].
function M.random_order(m, seed)
  math.randomseed(seed)
  local order = {}
  for i = 1, m do order[i] = i - 1 end
  for i = m, 2, -1 do
    local j = math.random(i)
    order[i], order[j] = order[j], order[i]
  end
  return order
end

-- Serialises plain data (tables, numbers, strings, booleans) as Lua source,
-- keys sorted so two runs diff cleanly.
local function ser(v, indent)
  local t = type(v)
  if t == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    if v ~= v or v == math.huge or v == -math.huge then return "0/0" end
    return string.format("%.6g", v)
  elseif t == "string" then
    return string.format("%q", v)
  elseif t ~= "table" then
    return tostring(v)
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  local pad, out = indent .. "  ", {}
  for _, k in ipairs(keys) do
    local key = math.type(k) == "integer" and "" or
      (k:match("^[%a_][%w_]*$") and k .. " = " or "[" .. string.format("%q", k) .. "] = ")
    out[#out + 1] = pad .. key .. ser(v[k], pad) .. ","
  end
  if #out == 0 then return "{}" end
  return "{\n" .. table.concat(out, "\n") .. "\n" .. indent .. "}"
end

function M.write(path, t)
  local f = assert(io.open(path, "w"))
  f:write("-- written by ", arg and arg[0] or "bench/model", "\nreturn ", ser(t, ""), "\n")
  f:close()
end

M.serialize = function(t) return ser(t, "") end

-- The unit a key's suffix names, for the printed table.
local UNITS = {
  { "_us$", "us" }, { "_ns$", "ns" }, { "^block_ns_", "ns" }, { "_gbs$", "GB/s" }, { "_ginst_s$", "G warp inst/s" },
  { "_wf_s$", "wavefronts/s" }, { "_sector_s$", "sectors/s" }, { "_gops$", "Gops/s" },
  { "_mb$", "MB" },
}
function M.unit(key)
  for _, u in ipairs(UNITS) do
    if key:find(u[1]) then return u[2] end
  end
  return ""
end

function M.print_table(meas)
  local keys = {}
  for k in pairs(meas) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    print(string.format("  %-24s %14.5g  %s", k, meas[k], M.unit(k)))
  end
end

return M
