-- versus.lua: cuda.versus{...}: the same job on the CPU and on the GPU, end to
-- end, with the GPU's time split into copy in, kernel and copy out.
--
--   cuda.versus{
--     cpu    = function() ... return result end,     -- table, host buffer or array
--     h2d    = function() x:copyfrom(hx) end,         -- host to device copies
--     kernel = function() k[{g, 256}](x, y, n) end,
--     d2h    = function() y:copyto(hy); return hy end, -- its return value is the GPU's result
--     check  = {rtol = 1e-6},                          -- or false to skip the comparison
--   }
--
-- Design stance: the lesson is the transfer bottleneck, so the printout puts
-- the two totals one above the other on one scale, the GPU's as a stacked
-- bar whose copy segments dwarf a thin kernel segment, and then says both
-- ratios in words: end to end, and kernel only. Each stage is timed on its
-- own with cuda.time (GPU events; the copies are synchronous, so events
-- bracket them exactly) and the GPU total is the sum of the stage medians:
-- timing the whole pipeline at once would hide which part costs what, and
-- the sum of medians is what the stacked bar shows. The CPU side uses
-- cpu.time. The result check compares the CPU function's last result with
-- one more, untimed, pass of the GPU pipeline (copy in, kernel, copy out):
-- the timed passes ran each stage many times on its own, which an in-place
-- kernel would have applied over and over.
--
-- On the simulator cuda.time gives modelled GPU time (clock "model"): the
-- GPU side, copies over PCIe included, is what an H200 would take, while the
-- CPU side stays this machine's real time, and the note under the chart says
-- so. The model is deterministic, so cuda.time's default there is one rep.

local error, ipairs, math, rawget, rawset, select = error, ipairs, math, rawget, rawset, select
local setmetatable, string, table, tostring, type = setmetatable, string, table, tostring, type

local format = require "format"
local model = require "model"

local versus = {}

local SIG = "cuda.versus{cpu = f, kernel = f [, h2d = f, d2h = f, check = {rtol, atol}]}"

local STAGES = { "h2d", "kernel", "d2h" }
local STAGE_NAMES = { h2d = "copy in", kernel = "kernel", d2h = "copy out" }

local function fail(msg) error(SIG .. ": " .. msg, 3) end

-- a / b when both times are positive and the quotient is a number, else nil:
-- a clock that measured 0 ms (or a time that is no time) gives no ratio, and
-- the printout says so instead of showing nan or inf.
local function ratio(a, b)
  local r = type(a) == "number" and type(b) == "number" and a > 0 and b > 0 and a / b
  return r and r == r and r > 0 and r < math.huge and 1 / r < math.huge and r or nil
end

function versus.versus(t)
  if type(t) ~= "table" then fail("give one table of functions, got " .. type(t)) end
  if type(t.cpu) ~= "function" then fail("cpu must be the CPU function, got " .. type(t.cpu)) end
  if type(t.kernel) ~= "function" then
    fail("kernel must be the function that launches the kernel, got " .. type(t.kernel))
  end
  for _, s in ipairs({ "h2d", "d2h" }) do
    if t[s] ~= nil and type(t[s]) ~= "function" then
      fail(s .. " must be a function, got " .. type(t[s]))
    end
  end
  local cuda, cpu = rawget(_G, "cuda"), rawget(_G, "cpu")
  local res = setmetatable({ title = t.title, partial = true, stages = {} }, versus.mt)
  rawset(cuda, "last", res)
  local opts = { warmup = t.warmup, reps = t.reps }
  local cpu_out, gpu_out
  res.cpu = cpu.time(function() cpu_out = t.cpu() end,
    { warmup = t.cpu_warmup or 1, reps = t.cpu_reps or t.reps or 5 })
  local total = 0
  for _, s in ipairs(STAGES) do
    if t[s] then
      local tm = cuda.time(t[s], opts)
      res.stages[#res.stages + 1] = { name = s, label = STAGE_NAMES[s],
        median = tm.median, time = tm,
        model = tm.model }
      res.clock, res.device = tm.clock, tm.device or res.device
      total = total + tm.median
      if s == "kernel" then res.kernel = tm.median end
    end
  end
  res.gpu = total
  -- one more pass, untimed, for the result: timing ran each stage many times
  -- over, and an in-place kernel (a[i] += 1) would have piled those up
  if t.h2d then t.h2d() end
  gpu_out = t.kernel()
  if t.d2h then gpu_out = t.d2h() end
  if t.result then gpu_out = t.result() end
  if t.check ~= false and cpu_out ~= nil and gpu_out ~= nil then
    local tolerance = type(t.check) == "table" and t.check or nil
    res.compare = select(2, cuda.compare(gpu_out, cpu_out, tolerance))
  elseif t.check ~= false then
    res.compare_note = "results not compared: " .. (cpu_out == nil and "cpu" or
      "d2h (or result)") ..
      " returned nothing"
  end
  res.speedup = ratio(res.cpu.median, total)
  res.speedup_kernel = res.kernel and ratio(res.cpu.median, res.kernel)
  res.partial = nil
  return res
end

----------------------------------------------------------------- printing --

-- "2.5" or, for a ratio only nonsense times give, "1e+297".
local function factor(r)
  return r >= 1e6 and string.format("%.3g", r) or format.short(r, 3)
end

-- "GPU is 1.2× faster end to end" or "CPU is 1.4× faster end to end"; with no
-- ratio (a side timed at 0 ms), which side took no measurable time.
local function ratio_text(res, x)
  local r = res.speedup
  if not r then
    local zero = not (res.gpu and res.gpu > 0) and "the GPU side" or "the CPU side"
    return "no ratio: " .. zero .. " took " .. format.time_ms(zero == "the GPU side" and
      res.gpu or res.cpu.median) .. ", which is no time to compare"
  end
  if r >= 1 then return "GPU is " .. factor(r) .. x .. " faster end to end" end
  return "CPU is " .. factor(1 / r) .. x .. " faster end to end"
end

-- The note under a modelled result: which side is which clock, and what
-- binds the kernel when the model explained it.
local function model_note(res)
  local gpu = model.device(res.device)
  local bound = ""
  for _, s in ipairs(res.stages) do
    local m = s.name == "kernel" and s.model
    if type(m) == "table" and (m.limit_text or m.limit) then
      bound = "; the kernel is bound by " .. tostring(m.limit_text or model.short(m.limit))
    end
  end
  return "(GPU side: " .. model.clock_words(gpu) .. ", the copies over PCIe modelled too" ..
    bound .. ". CPU side: this machine's real time.)"
end

local function tostring_versus(res)
  local chart, term = require "chart", require "term"
  local x = term.utf8() and "×" or "x"
  local cpu_ms, gpu_ms = res.cpu.median, res.gpu
  local scale = math.max(cpu_ms, gpu_ms)
  if not (scale > 0 and scale < math.huge) then scale = 1 end -- two zero times: empty bars
  local labels = { "CPU", "GPU" }
  local times = { format.time_ms(cpu_ms), format.time_ms(gpu_ms) }
  local lines = chart.columns({ { "  " .. labels[1], times[1] }, { "  " .. labels[2],
    times[2] } }, "lr")
  local prefix = term.len(lines[1])
  local width = math.max(10, term.width() - prefix - 3)
  local values = {}
  for i, s in ipairs(res.stages) do values[i] = s.median end
  local stacked, glyphs = chart.stacked(values, scale, width)
  lines[1] = lines[1] .. "  " .. chart.bar(cpu_ms / scale, width)
  lines[2] = lines[2] .. "  " .. stacked
  local legend = {}
  for i, s in ipairs(res.stages) do
    legend[i] = glyphs[i] .. " " .. s.label .. " " .. format.time_ms(s.median)
  end
  local out = { (res.title and res.title .. ": " or "") .. "CPU against GPU, end to end" }
  out[#out + 1] = table.concat(lines, "\n")
  out[#out + 1] = (" "):rep(prefix + 2) .. table.concat(legend, "   ")
  if res.compare then
    out[#out + 1] = chart.wrap((res.compare.ok and "Results agree: " or "Results DIFFER: ") ..
      tostring(res.compare), term.width() - 1)
  elseif res.compare_note then
    out[#out + 1] = "(" .. res.compare_note .. ")"
  end
  local words = ratio_text(res, x)
  if res.speedup_kernel then
    words = words .. "; " .. (res.speedup_kernel >= 1 and "the kernel alone is " ..
      factor(res.speedup_kernel) .. x .. " faster than the CPU" or
      "even the kernel alone is slower than the CPU")
  end
  local copies = res.gpu - (res.kernel or 0)
  if res.gpu > 0 and copies > 0 then
    words = words .. "; copies take " .. format.percent(copies / res.gpu) .. " of the GPU's time"
  end
  out[#out + 1] = chart.wrap(words .. ".", term.width() - 1)
  if res.clock == "sim" then
    out[#out + 1] = chart.wrap("(GPU side timed on the simulator, which runs kernels " ..
      "on the CPU: " ..
      "the ratios say nothing about a real GPU.)", term.width() - 1)
  elseif res.clock == "model" then
    out[#out + 1] = chart.wrap(model_note(res), term.width() - 1)
  end
  return table.concat(out, "\n")
end

versus.mt = { __name = "cudalab.VersusResult", __tostring = tostring_versus }

return versus
