-- fake_cuda.lua: a pure-Lua stand-in for the C `cuda` and `cpu` modules.
--
-- It follows the interface the C bindings document (see lua/help.lua) closely
-- enough to run every help example and to give complete.lua and help.lua real
-- objects to look at, without a GPU or the C engine. It does not try to be
-- right about anything GPU-specific: kernels launch and do nothing, timings
-- are made up, memory is a Lua table.
--
-- Design stance: arrays are tables with a metatable rather than userdata
-- (pure Lua cannot make userdata), but the metatable has the shape we ask the
-- C side for: a function __index for a[i] and fields, the methods in a
-- __methods table, __name "cudalab.Array". fake.new() returns fresh modules
-- so tests do not share state.
--
-- The simulator's performance model: fake.new{clock = "model"} gives a
-- cuda.time that returns modelled results (clock "model", warmup 0 and reps 1
-- by default, device, sim_ms, model) the way the C side documents them, with
-- an explanation chosen by the last launch's block size (fake.explain: under
-- 64 threads block scheduling binds, otherwise DRAM bandwidth), or by
-- opts.explain(launch). cuda.simopts{model = false} turns it off as in C, and
-- cuda.stats() returns counters plus the last launch's model. The fourth
-- value of fake.new is the fake's state, where tests read what was launched
-- and with which options cuda.time was called.

local fake = {}

-- A few rows of cuda.dtypes, as the C side gives them (it lists every type).
local DTYPES = {
  { name = "f32", size = 4, c_type = "float", kind = "float", digits = 7 },
  { name = "f64", size = 8, c_type = "double", kind = "float", digits = 15 },
  { name = "i32", size = 4, c_type = "int", kind = "signed", digits = 0 },
  { name = "u32", size = 4, c_type = "unsigned int", kind = "unsigned", digits = 0 },
  { name = "i64", size = 8, c_type = "long long", kind = "signed", digits = 0 },
  { name = "u8", size = 1, c_type = "unsigned char", kind = "unsigned", digits = 0 },
  { name = "f16", size = 2, c_type = "__half", kind = "half", digits = 5 },
  { name = "u64", size = 8, c_type = "unsigned long long", kind = "unsigned", digits = 0 },
}
local SIZES = {}
for _, d in ipairs(DTYPES) do SIZES[d.name] = d.size end

-- The metatable for arrays or host buffers: tname is "Array" or "HostBuffer".
local function buffer_type(tname, cuda)
  local store = setmetatable({}, { __mode = "k" }) -- object -> {dtype, n, v = {...}}
  local methods, mt = {}, nil

  local function new(n, dtype, extra)
    assert(SIZES[dtype or "f32"], "bad dtype " .. tostring(dtype))
    local obj = setmetatable({}, mt)
    store[obj] = { dtype = dtype or "f32", n = n, v = {}, extra = extra or {} }
    for i = 0, n - 1 do store[obj].v[i] = 0 end
    return obj
  end

  -- Reads the elements of an array, host buffer or Lua table into a 0-based table.
  local function values(x)
    if type(x) == "table" and getmetatable(x) and getmetatable(x).__methods then
      return x:tolist(), #x
    end
    return x, #x
  end

  function methods.tolist(self)
    local s, t = store[self], {}
    for i = 0, s.n - 1 do t[i + 1] = s.v[i] end
    return t
  end
  function methods.host(self)
    local h = cuda.host(#self, self.dtype)
    h:copyfrom(self)
    return h
  end
  function methods.copyfrom(self, src)
    local list, n = values(src)
    assert(n == #self, "length mismatch")
    for i = 1, n do store[self].v[i - 1] = list[i] end
  end
  function methods.copyto(self, dst)
    if getmetatable(dst) and getmetatable(dst).__methods then
      dst:copyfrom(self)
    else
      for i, v in ipairs(self:tolist()) do dst[i] = v end
    end
  end
  function methods.fill(self, v)
    for i = 0, #self - 1 do store[self].v[i] = v end
  end
  function methods.free(self)
    store[self].n, store[self].v = 0, {}
  end

  mt = {
    __name = "cudalab." .. tname,
    __methods = methods,
    __len = function(self) return store[self].n end,
    __index = function(self, k)
      local s = store[self]
      if math.type(k) == "integer" then
        assert(k >= 0 and k < s.n, "index out of range")
        return s.v[k]
      end
      if k == "dtype" then return s.dtype end
      if k == "nbytes" then return s.n * SIZES[s.dtype] end
      if s.extra[k] ~= nil then return s.extra[k] end
      return methods[k]
    end,
    __newindex = function(self, k, v)
      local s = store[self]
      assert(math.type(k) == "integer" and k >= 0 and k < s.n, "index out of range")
      s.v[k] = v
    end,
    __close = function(self) methods.free(self) end,
    __tostring = function(self)
      local s = store[self]
      return string.format("cuda.%s<%s>[%d]", tname, s.dtype, s.n)
    end,
  }
  return new, mt
end

-- A kernel object: k[{grid, block}] gives a launcher, k.name its name.
local function kernel_type(cuda, state)
  local methods = {}
  function methods.ptx(self) return "// PTX of " .. self.name end
  -- the debugger needs the console's prompt: here the launch just runs
  function methods.debug(self, cfg) return self[cfg] end
  function methods.info(self)
    return setmetatable({ name = self.name, registers = 8, shared_static = 0, local_bytes = 0,
      const_bytes = 0, max_threads_per_block = 1024, params = { "float *a", "int n" } },
      cuda._meta.KernelInfo)
  end
  local names = setmetatable({}, { __mode = "k" })
  local mt = {
    __name = "cudalab.Kernel",
    __methods = methods,
    __index = function(self, k)
      if type(k) == "table" then
        assert(k[1] and k[2], "launch needs {grid, block}")
        local launch = { grid = k[1], block = k[2], kernel = names[self] }
        return function(...)
          state.launches = state.launches + 1
          state.last_launch = launch
          state.last_model = state.explain(launch)
          if state.log then
            local g, b = type(k[1]) == "table" and k[1] or { k[1] }, type(k[2]) == "table" and k[2] or { k[2] }
            state.log[#state.log + 1] = { name = names[self], kernel = self, n = select("#", ...), args = { ... },
              grid = { x = g[1], y = g[2] or 1, z = g[3] or 1 }, block = { x = b[1], y = b[2] or 1, z = b[3] or 1 } }
          end
        end
      end
      if k == "name" then return names[self] end
      return methods[k]
    end,
  }
  return function(name)
    local k = setmetatable({}, mt)
    names[k] = name
    return k
  end, mt
end

-- A module: each kernel a field, plus kernels() and ptx().
local function module_type(new_kernel)
  local methods, content = {}, setmetatable({}, { __mode = "k" })
  function methods.kernels(self) return { table.unpack(content[self].names) } end
  function methods.ptx(self) return "// PTX of a module" end
  local mt = {
    __name = "cudalab.Module",
    __methods = methods,
    __index = function(self, k) return content[self].kernels[k] or methods[k] end,
  }
  return function(names)
    local m, ks = setmetatable({}, mt), {}
    for _, n in ipairs(names) do ks[n] = new_kernel(n) end
    content[m] = { names = names, kernels = ks }
    return m
  end, mt
end

-- The __global__ function names in a CUDA source.
local function kernel_names(src)
  local names = {}
  for n in src:gmatch("__global__%s+void%s+([%w_]+)") do names[#names + 1] = n end
  return names
end

-- Times fn the way cuda.time does, with made-up but well-formed results.
local function timer(mt, clock)
  return function(fn, opts)
    opts = opts or {}
    for _ = 1, opts.warmup or 2 do fn() end
    local samples = {}
    for i = 1, opts.reps or 20 do fn(); samples[i] = 0.040 + i * 0.001 end
    return setmetatable({ median = samples[(#samples + 1) // 2], min = samples[1],
      max = samples[#samples], mean = 0.05, reps = #samples, unit = "ms",
      samples = samples, clock = clock }, mt)
  end
end

-- A complete explanation table, as C returns in t.model and cuda.stats().model,
-- for a launch bound by `limit` ("dram", "blocks", ...) taking time_ms;
-- `fields` overrides any figure.
local LIMIT_TEXT = {
  dram = "DRAM bandwidth", blocks = "block scheduling (many tiny blocks)",
  latency = "memory latency with too few warps in flight", tail = "the tail of the last wave",
  launch = "launch overhead", fp64 = "FP64 throughput", sfu = "special-function throughput",
  shared = "shared-memory bank conflicts", atomic = "atomic contention in L2",
  l2 = "L2 bandwidth", issue = "instruction issue",
}

function fake.explanation(limit, time_ms, fields)
  local m = {
    time_ms = time_ms, launch_us = 2.5, limit = limit, limit_text = LIMIT_TEXT[limit] or limit,
    why = "the fake's reason, " .. string.format("%.1f", time_ms * 1000) .. " us.",
    terms = {
      { key = limit, what = LIMIT_TEXT[limit] or limit, ms = time_ms - 0.0025 },
      { key = "latency", what = LIMIT_TEXT.latency, ms = time_ms / 2 },
      { key = "issue", what = "instruction issue", ms = time_ms / 8 },
      { key = "launch", what = "launch overhead", ms = 0.0025 },
    },
    dram_bytes = 120000000, l2_bytes = 130000000, flops = 10000000,
    achieved_gbs = 120000000 / (time_ms / 1000) / 1e9, peak_gbs = 4800,
    achieved_gflops = 10000000 / (time_ms / 1000) / 1e9, peak_gflops = 67000,
    blocks_per_sm = 8, warps_per_sm = 64, occupancy = 1, waves = 9.2,
    l2_hit_rate = 0.08, l1_hit_rate = 0,
  }
  for k, v in pairs(fields or {}) do m[k] = v end
  return m
end

-- The default explanation of a launch: tiny blocks are bound by block
-- scheduling and slow, the rest by DRAM bandwidth (as vector_add on an H200).
function fake.explain(launch)
  local b = launch.block
  local threads = type(b) == "table" and (b[1] or 1) * (b[2] or 1) * (b[3] or 1) or b
  if threads < 64 then
    return fake.explanation("blocks", 0.195, { blocks_per_sm = 32, warps_per_sm = 32,
      occupancy = 0.5, waves = 2.3 })
  end
  return fake.explanation("dram", 0.041)
end

-- cuda.time on the simulator with the model on: modelled times of what fn
-- launched (copies only: 0.25 ms), deterministic, one rep by default. With
-- the model off (cuda.simopts{model = false}) it is the plain "sim" timer.
local function model_timer(mt, state, sim_timer)
  return function(fn, opts)
    opts = opts or {}
    state.time_calls[#state.time_calls + 1] = { warmup = opts.warmup, reps = opts.reps }
    if not state.opts.model then return sim_timer(fn, opts) end
    for _ = 1, opts.warmup or 0 do fn() end
    local samples, m = {}, nil
    for i = 1, opts.reps or 1 do
      local before = state.launches
      fn()
      m = state.launches > before and state.last_model or nil
      samples[i] = m and m.time_ms or 0.25
    end
    return setmetatable({ median = samples[(#samples + 1) // 2], min = samples[1],
      max = samples[#samples], mean = samples[1], reps = #samples, unit = "ms",
      samples = samples, clock = "model", device = "NVIDIA H200",
      sim_ms = { median = 69, min = 68, max = 71 }, model = m }, mt)
  end
end

-- Fresh cuda and cpu modules, plus their metatables by type name and the
-- fake's state. opts: clock = "model" (the simulator with its performance
-- model; default "sim", the model off), explain = function(launch) -> model.
function fake.new(opts)
  opts = opts or {}
  local cuda = { _meta = { Device = {}, TimeResult = {}, CompareResult = {}, MemInfo = {},
                           KernelInfo = {}, Stats = {} } }
  local state = { launches = 0, time_calls = {}, backend = "sim", explain = opts.explain or fake.explain,
    opts = { race_check = false, threads = 0, model = opts.clock == "model",
      block_order = "forward", seed = 0,
      -- the timing-model parameters the roofline's roofs come from (C lists them all)
      perf = { dram_gbs = 4241.09, ipc_fp32 = 3.88047, ipc_fp64 = 1.98391, clock_ghz = 1.98 } } }
  local new_array, array_mt = buffer_type("Array", cuda)
  local new_host, host_mt = buffer_type("HostBuffer", cuda)
  local new_kernel, kernel_mt = kernel_type(cuda, state)
  local new_module, module_mt = module_type(new_kernel)

  local function from(n_or_table, dtype, make)
    if type(n_or_table) == "table" then
      local a = make(#n_or_table, dtype)
      a:copyfrom(n_or_table)
      return a
    end
    return make(math.tointeger(n_or_table), dtype)
  end

  function cuda.device()
    return setmetatable({ name = "Fake GPU", backend = "sim", cc = "9.0", sm_count = 132,
      max_threads_per_block = 1024, warp_size = 32 }, cuda._meta.Device)
  end
  function cuda.array(n, dtype) return from(n, dtype, new_array) end
  cuda.dtypes = DTYPES
  cuda.perf_params = { -- a few of the C side's rows
    { name = "dram_gbs", unit = "GB/s", doc = "DRAM bandwidth", zero = false, min = 1e-6, max = 1e15 },
    { name = "ipc_fp32", unit = "warp instructions/cycle/SM", doc = "the f32 pipe", zero = false,
      min = 1e-6, max = 1e15 },
  }
  function cuda.zeros(n, dtype) return new_array(n, dtype) end
  function cuda.empty(n, dtype) return new_array(n, dtype) end
  function cuda.ones(n, dtype) return cuda.full(n, 1, dtype) end
  function cuda.full(n, v, dtype)
    local a = new_array(n, dtype)
    a:fill(v)
    return a
  end
  function cuda.arange(n, dtype)
    local a = new_array(n, dtype)
    for i = 0, n - 1 do a[i] = i end
    return a
  end
  function cuda.rand(n, dtype, seed)
    math.randomseed(seed or 0)
    local a = new_array(n, dtype)
    for i = 0, math.min(n, 1000) - 1 do a[i] = math.random() end
    return a
  end
  function cuda.host(n, dtype, opts)
    local pinned = opts and opts.pinned or false
    return from(n, dtype, function(m, d) return new_host(m, d, { pinned = pinned }) end)
  end
  function cuda.kernel(src, opts)
    local names = kernel_names(src)
    return new_kernel((opts and opts.name) or names[1])
  end
  function cuda.module(src) return new_module(kernel_names(src)) end
  cuda.time = model_timer(cuda._meta.TimeResult, state, timer(cuda._meta.TimeResult, "sim"))
  function cuda.backend() return state.backend end
  function cuda.use(name)
    local old = state.backend
    state.backend = name
    return old
  end
  function cuda.simopts(o)
    for k, v in pairs(o or {}) do
      if state.opts[k] == nil then error("unknown simulator option '" .. tostring(k) .. "'") end
      state.opts[k] = v
    end
    local perf = {}
    for k, v in pairs(state.opts.perf) do perf[k] = v end
    return { race_check = state.opts.race_check, threads = state.opts.threads,
      model = state.opts.model, perf = perf, block_order = state.opts.block_order,
      seed = state.opts.seed }
  end
  function cuda.stats(o)
    if not state.last_launch then error("no kernel has run on the simulator yet") end
    local s = { warp_insts = 5120, thread_insts = 163840, ld_requests = 256, ld_sectors = 8192,
      st_requests = 32, st_sectors = 128, shared_wavefronts = 0, bank_conflicts = 0,
      divergent_branches = 0, model = state.opts.model and state.last_model or nil }
    if o and o.lines then
      s.file, s.lines = "kernel.cu", { [3] = { warp_insts = 5120, ld_sectors = 8192, st_sectors = 128 } }
    end
    return setmetatable(s, cuda._meta.Stats)
  end
  function cuda.compare(x, y, opts)
    opts = opts or {}
    local rtol, atol = opts.rtol or 1e-5, opts.atol or 1e-8
    local xs = type(x) == "table" and getmetatable(x) and x:tolist() or x
    local ys = type(y) == "table" and getmetatable(y) and y:tolist() or y
    local bad, first, xf, yf = 0, {}, {}, {}
    for i = 1, #xs do
      if math.abs(xs[i] - ys[i]) > atol + rtol * math.abs(ys[i]) then
        bad = bad + 1
        if #first < 10 then first[#first + 1], xf[#xf + 1], yf[#yf + 1] = i - 1, xs[i], ys[i] end
      end
    end
    return bad == 0, setmetatable({ ok = bad == 0, n = #xs, mismatches = bad, max_abs = 0, max_rel = 0,
      first = first, x_first = xf, y_first = yf, rtol = rtol, atol = atol },
      cuda._meta.CompareResult)
  end
  function cuda.meminfo()
    return setmetatable({ free = 3 * 2^30, total = 4 * 2^30, used = 2^30 }, cuda._meta.MemInfo)
  end
  function cuda.sync() end
  -- debugging: the checks are kept, watches see nothing (fake kernels write nothing)
  function cuda.sanitize(o)
    if o then
      state.sanitize = { nan = o.nan == true, init = o.init == true, sync = o.sync == true }
    end
    local s = state.sanitize or {}
    return { nan = s.nan or false, init = s.init or false, sync = s.sync or false }
  end
  local watch_mt = { __name = "cudalab.Watch" }
  watch_mt.__index = {
    clear = function(w) return w end,
    close = function(w) rawset(w, "watching", false) end,
  }
  watch_mt.__tostring = function(w) return "watch on element " .. w.index .. ": no writes yet" end
  function cuda.watch(a, i)
    return setmetatable({ array = a, index = i, dtype = a.dtype, writes = {}, count = 0,
      watching = true }, watch_mt)
  end
  function cuda.unwatch(w) w:close() end
  -- the launch log, as the C side keeps it (without the ring's limit)
  function cuda.launches(on)
    if on ~= nil then state.log = on and {} or nil; return end
    local out = { dropped = 0 }
    for i, l in ipairs(state.log or {}) do out[i] = l end
    return out
  end

  local cpu = { time = timer(cuda._meta.TimeResult, "cpu") }
  local types = { Array = array_mt, HostBuffer = host_mt, Kernel = kernel_mt, Module = module_mt }
  return cuda, cpu, types, state
end

-- Puts the fake types' metatables where luaL_newmetatable would, for the
-- duration of fn, so that help.lua finds them as it would in the engine.
function fake.with_registry(types, fn)
  local reg, saved = debug.getregistry(), {}
  for tname, mt in pairs(types) do
    saved[tname] = reg["cudalab." .. tname]
    reg["cudalab." .. tname] = mt
  end
  local ok, err = pcall(fn)
  for tname in pairs(types) do reg["cudalab." .. tname] = saved[tname] end
  if not ok then error(err, 0) end
end

return fake
