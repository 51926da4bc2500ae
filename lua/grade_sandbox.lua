-- grade_sandbox.lua: the environment a learner's recorded Lua runs in when it
-- is graded, and the checks on their kernel sources. The grader runs as the
-- instructor, who can read every learner's record, so nothing a submission
-- does may reach a file, a process or the grader's own state.
--
-- What a submission may use is what a lesson step may use: the base functions
-- that compute, string, table, math, utf8 and coroutine, print, and the cuda
-- and cpu modules without the parts that touch files or the session (plot,
-- cache, use). Everything else (io, os, require, dofile, loadfile, debug,
-- package, bytecode) is absent, and naming it fails with a message that says
-- so, rather than a bare "attempt to index a nil value".
--
-- Kernel sources are checked before they are compiled: an #include may name
-- a toolkit header (<cuda_fp16.h>) or a file of the learner's own submission
-- ("helper.h"), never a path (an absolute one, or one with ..), which NVRTC
-- would read and quote in its errors; compiler options are a short list that
-- cannot add include folders.
--
-- Design stance: a whitelist, not a blacklist. A name not listed here is not
-- there, so a new function in cuda is unavailable to submissions until it is
-- judged safe and added.

local M = {}

local FORBIDDEN = {
  io = "files", os = "the operating system", require = "modules", dofile = "files",
  loadfile = "files", debug = "the debug library", package = "modules",
  loadstring = "loading code", module = "modules",
}

local CUDA_SAFE = {
  "array", "zeros", "ones", "full", "arange", "rand", "empty", "host", "kernel", "module",
  "compare", "time", "sync", "device", "meminfo", "stats", "launches", "occupancy", "sweep",
  "versus", "stream", "event", "copy", "timeline", "blas", "limits", "backend", "roofline", "last",
}

M.NOT_AVAILABLE = "is not available when grading: a submission may use only what a lesson step " ..
  "may use (no files, processes, require, load of bytecode or debug)"

local function refuse(name)
  error(name .. " " .. M.NOT_AVAILABLE, 3)
end

-- Removes comments and joins continued lines, so that an #include cannot
-- hide behind either; keeps string literals' contents as they are.
local function preprocess_view(src)
  src = src:gsub("\\\r?\n", "")
  src = src:gsub("/%*.-%*/", " ")
  src = src:gsub("//[^\n]*", "")
  return src
end

-- check_source(text) -> true | nil, why. Looks at every include directive
-- (#include, %:include, with spaces or comments between).
function M.check_source(src)
  if type(src) ~= "string" then return true end
  local view = preprocess_view(src)
  for line in (view .. "\n"):gmatch("([^\n]*)\n") do
    local rest = line:match("^%s*#%s*(.*)$") or line:match("^%s*%%:%s*(.*)$")
    if rest then
      local word = rest:match("^(%a+)")
      if word == "include" or word == "include_next" or word == "import" or word == "embed" then
        local arg = rest:sub(#word + 1):match("^%s*(.-)%s*$")
        local angled = arg:match("^<([^>]*)>$")
        local quoted = arg:match('^"([^"]*)"$')
        local name = angled or quoted
        if word ~= "include" or not name then
          return nil, "#" .. word .. " " .. arg .. ": only #include <header> of the toolkit or " ..
            "#include \"file\" of the submission may be used when grading"
        end
        if name:sub(1, 1) == "/" or name:find("..", 1, true) or name:find("\\", 1, true) or
           (quoted and name:find("/", 1, true)) or not name:match("^[%w_%-%./]+$") then
          return nil, "#include " .. arg .. " names a path: when grading a kernel may include " ..
            "the toolkit's headers and its own files only"
        end
      end
    end
  end
  return true
end

local OPTION_OK = {
  "^%-%-?use_fast_math$", "^%-D[%a_][%w_]*$", "^%-D[%a_][%w_]*=[%w_%.%-%+]*$",
  "^%-%-?std=c%+%+%d+$", "^%-%-?ftz=%a+$", "^%-%-?prec%-div=%a+$", "^%-%-?prec%-sqrt=%a+$",
  "^%-%-?fmad=%a+$", "^%-lineinfo$", "^%-%-?maxrregcount=%d+$",
}

local function option_ok(o)
  if type(o) ~= "string" then return false end
  for _, pat in ipairs(OPTION_OK) do if o:match(pat) then return true end end
  return false
end

-- The source a cuda.kernel / cuda.module call compiles: the string, or the
-- file it names inside the workdir (or among cudalab's own kernels).
local function checked_compile(real, workdir)
  return function(src, opts, ...)
    if type(src) == "string" and not src:find("\n") and src:match("%.cuh?$") then
      local name = src
      if name:sub(1, #workdir + 1) == workdir .. "/" then name = name:sub(#workdir + 2) end
      if not name:match("^[%w_%-%.]+$") or name:find("..", 1, true) then
        error("cuda.kernel(\"" .. src .. "\"): when grading a kernel file must be one of the " ..
          "submission's own (a plain name such as \"square.cu\")", 2)
      end
      local f = io.open(workdir .. "/" .. name, "rb")
      if f then
        local text = f:read("a")
        f:close()
        local ok, why = M.check_source(text)
        if not ok then error(why, 2) end
        src = workdir .. "/" .. name
      end
    else
      local ok, why = M.check_source(src)
      if not ok then error(why, 2) end
    end
    if type(opts) == "table" then
      for k, v in pairs(opts) do
        if math.type(k) == "integer" and not option_ok(v) then
          error("the compiler option " .. tostring(v) .. " is not available when grading", 2)
        elseif k ~= "name" and math.type(k) ~= "integer" then
          error("the option " .. tostring(k) .. " is not available when grading", 2)
        end
      end
    elseif type(opts) == "string" and not option_ok(opts) then
      error("the compiler option " .. opts .. " is not available when grading", 2)
    end
    return real(src, opts, ...)
  end
end

-- A read-only proxy of a table inside cuda (cuda.blas, cuda.roofline, cuda.last): its fields
-- read through, tables again as proxies, and a call goes to it; nothing can be assigned, so a
-- submission cannot replace a function the check will call.
local function readonly(real, label)
  return setmetatable({}, {
    __index = function(_, k)
      local v = real[k]
      if type(v) == "table" then return readonly(v, label .. "." .. tostring(k)) end
      return v
    end,
    __newindex = function(_, k) error("cannot change " .. label .. "." .. tostring(k) ..
      " when grading", 2) end,
    __call = function(_, ...) return real(...) end,
    __len = function() return #real end,
    __pairs = function() return next, real, nil end,
    __metatable = false,
  })
end

-- A read-only view of a module: the listed functions, nothing to assign.
local function view(real, names, wrap, label)
  local t = {}
  for _, k in ipairs(names) do
    local v = real[k]
    if type(v) == "table" then v = readonly(v, label .. "." .. k) end
    if v ~= nil then t[k] = wrap and wrap[k] or v end
  end
  return setmetatable({}, {
    __index = function(_, k)
      local v = t[k]
      if v == nil and real[k] ~= nil then refuse(label .. "." .. tostring(k)) end
      return v
    end,
    __newindex = function(_, k) error("cannot change " .. label .. "." .. tostring(k) ..
      " when grading", 2) end,
    __metatable = false,
  })
end

local function copy(lib, except)
  local t = {}
  for k, v in pairs(lib) do if not (except and except[k]) then t[k] = v end end
  return t
end

-- new(opts) -> env. opts.workdir: the folder of the submission's kernel
-- files; opts.fallback: a function(name) giving the values lesson code made
-- (the examples and solutions of earlier steps), or nil.
function M.new(opts)
  local workdir = opts.workdir
  local cuda = rawget(_G, "cuda")
  local safe = {
    assert = assert, error = error, ipairs = ipairs, pairs = pairs, pcall = pcall,
    xpcall = xpcall, print = print, select = select, tonumber = tonumber, tostring = tostring,
    type = type, rawequal = rawequal, rawlen = rawlen, rawget = rawget, rawset = rawset,
    setmetatable = setmetatable, pp = rawget(_G, "pp"),
    -- strings share one metatable: a submission must not reach it and change string methods
    -- for the grader's own check
    getmetatable = function(v) if type(v) == "table" then return getmetatable(v) end end,
    string = copy(string, { dump = true }), table = copy(table), math = copy(math),
    utf8 = copy(utf8), coroutine = copy(coroutine),
    collectgarbage = function(what, ...)
      if what == nil or what == "collect" or what == "count" or what == "step" then
        return collectgarbage(what, ...)
      end
      error("collectgarbage(\"" .. tostring(what) .. "\") " .. M.NOT_AVAILABLE, 2)
    end,
    -- the lesson commands a learner typed in the step are part of what was recorded; when
    -- grading there is no lesson to drive, so they do nothing (next with arguments is Lua's)
    next = function(...) if select("#", ...) > 0 then return next(...) end end,
    workfile = function(name)
      if type(name) ~= "string" or not name:match("^[%w_%-%.]+$") then
        error("workfile takes a kernel file's name, such as workfile \"double.cu\"", 2)
      end
      return workdir .. "/" .. name
    end,
  }
  for _, name in ipairs(require("lesson_boot").COMMANDS) do
    if safe[name] == nil then safe[name] = function() end end
  end
  if type(cuda) == "table" then
    local compile = { kernel = checked_compile(cuda.kernel, workdir),
                      module = checked_compile(cuda.module, workdir) }
    safe.cuda = view(cuda, CUDA_SAFE, compile, "cuda")
  end
  if type(rawget(_G, "cpu")) == "table" then safe.cpu = view(cpu, { "time" }, nil, "cpu") end
  local env = {}
  safe.load = function(chunk, name, mode, e)
    if mode ~= nil and mode ~= "t" then error("load: only text chunks when grading", 2) end
    if type(chunk) == "string" and chunk:byte(1) == 27 then
      error("load: bytecode " .. M.NOT_AVAILABLE, 2)
    end
    return load(chunk, name, "t", e or env)
  end
  safe._G = env
  return setmetatable(env, {
    __index = function(_, k)
      local v = safe[k]
      if v ~= nil then return v end
      if FORBIDDEN[k] then refuse(k) end
      if opts.fallback then return opts.fallback(k) end
      return nil
    end,
    __metatable = false,
  })
end

return M
