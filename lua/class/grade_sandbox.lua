-- grade_sandbox.lua: the environment a learner's recorded Lua runs in when it
-- is graded, and the checks on their kernel sources. The grader runs as the
-- instructor, who can read every learner's record, so nothing a submission
-- does may reach a file, a process or the grader's own state.
--
-- What a submission may use is what a lesson step may use: the base functions
-- that compute, string, table, math, utf8 and coroutine, print, and every
-- cuda and cpu function a lesson's steps show (a reference solution that
-- uses cuda.watch or cuda.graph must pass here as it did at the prompt).
-- Those that write a file (cuda.export, cuda.plot) write only into the
-- submission's own folder, by a plain name, and never through a symbolic
-- link; cuda.use moves only between the simulator and the backend grading
-- runs on. Everything else (io, os, require, dofile, loadfile, debug,
-- package, bytecode, the rest of cuda) is absent, and naming it fails with a
-- message that says so, rather than a bare "attempt to index a nil value".
--
-- Kernel sources are checked before they are compiled: an #include may name
-- a toolkit header (<cuda_fp16.h>) or a file of the learner's own submission
-- ("helper.h"), never a path (an absolute one, or one with ..), which NVRTC
-- would read and quote in its errors; compiler options are a short list that
-- cannot add include folders. The source check is C (cudalab.sandbox's
-- check_source) reading the text as the preprocessor does: a pattern that
-- strips comments was fooled by comment marks inside strings. The options
-- and the kernel's name reach the compiler as a plain copy, checked there.
--
-- Design stance: a whitelist, not a blacklist. A name not listed here is not
-- there, so a new function in cuda is unavailable to submissions until it is
-- judged safe and added.

local guard = require "cudalab.sandbox"

local M = {}

local FORBIDDEN = {
  io = "files", os = "the operating system", require = "modules", dofile = "files",
  loadfile = "files", debug = "the debug library", package = "modules",
  loadstring = "loading code", module = "modules",
}

-- Every cuda function a lesson step shows (lessons/*.md), and the tables of facts (dtypes,
-- version). export, plot and use are wrapped (safe_writers, confined_use below).
local CUDA_SAFE = {
  "array", "zeros", "ones", "full", "arange", "rand", "empty", "host", "kernel", "module",
  "compare", "time", "sync", "device", "meminfo", "stats", "launches", "occupancy", "sweep",
  "versus", "stream", "event", "copy", "timeline", "blas", "limits", "backend", "roofline", "last",
  "managed", "graph", "watch", "unwatch", "sanitize", "record", "export", "plot", "use", "cache",
  "dtypes", "version",
}

M.NOT_AVAILABLE = "is not available when grading: a submission may use only what a lesson step " ..
  "may use (no files, processes, require, load of bytecode or debug)"

local function refuse(name)
  error(name .. " " .. M.NOT_AVAILABLE, 3)
end

-- check_source(text) -> true | nil, why. The preprocessor's own reading of
-- the text, in C (repl/compile/src_guard.c through cudalab.sandbox): every
-- spelling of an include is found, whatever comments, strings, raw strings
-- or splices surround it, and why names the line. Anything but a string is
-- left to cuda.kernel, which refuses it.
function M.check_source(src)
  if type(src) ~= "string" then return true end
  return guard.check_source(src)
end

-- Compiler options a submission may pass: none reads a file or adds an
-- include folder (-I, --include-path, -include, --pre-include), a -D value is
-- one word (no quote, no newline), and the language is C++11 or later, whose
-- raw strings the source check reads as C++ does.
local OPTION_OK = {
  "^%-%-?use_fast_math$", "^%-D[%a_][%w_]*$", "^%-D[%a_][%w_]*=[%w_%.%-%+]*$",
  "^%-%-?std=c%+%+1[147]$", "^%-%-?std=c%+%+20$", "^%-%-?ftz=%a+$", "^%-%-?prec%-div=%a+$",
  "^%-%-?prec%-sqrt=%a+$", "^%-%-?fmad=%a+$", "^%-lineinfo$", "^%-%-?maxrregcount=%d+$",
}

local function option_ok(o)
  if type(o) ~= "string" then return false end
  for _, pat in ipairs(OPTION_OK) do if o:match(pat) then return true end end
  return false
end

-- v for a message: a string quoted with its control characters escaped.
local function shown(v)
  if type(v) ~= "string" then return tostring(v) end
  return (string.format("%q", v):gsub("\\\n", "\\n"))
end

-- The options of a cuda.kernel / cuda.module call, copied with raw reads into
-- a plain table that is what gets compiled: a metatable's __pairs or __index
-- could otherwise show this check one list and the compiler another.
local function checked_options(opts)
  if opts == nil then return nil end
  if type(opts) ~= "table" then
    error("the options of cuda.kernel must be a table such as {\"-use_fast_math\", " ..
      "name = \"k\"}, got " .. type(opts), 3)
  end
  local clean = {}
  for k, v in next, opts do
    if math.type(k) == "integer" then
      if not option_ok(v) then
        error("the compiler option " .. shown(v) .. " is not available when grading", 3)
      end
      clean[k] = v
    elseif k == "name" then
      clean.name = v
    else
      error("the option " .. shown(k) .. " is not available when grading", 3)
    end
  end
  return clean
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
      local elsewhere = not f and io.open(name, "rb") -- the grader's folder, not the learner's
      if elsewhere then
        elsewhere:close()
        error("cuda.kernel(\"" .. src .. "\"): when grading a kernel file must be one of the " ..
          "submission's own (a plain name such as \"square.cu\")", 2)
      end
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
    opts = checked_options(opts)
    return real(src, opts, ...)
  end
end

-- The path a file-writing function (cuda.export, cuda.plot) may write when
-- grading: a plain name ("saxpy.cu"), or workdir/name as workfile gives it,
-- inside the submission's folder; anything else (an absolute path elsewhere,
-- "..", a folder, a leading dot) raises, naming the call.
local function confined_path(fn, path, workdir)
  local name = type(path) == "string" and path or ""
  if name:sub(1, #workdir + 1) == workdir .. "/" then name = name:sub(#workdir + 2) end
  if not name:match("^[%w_%-][%w_%-%.]*$") or name:find("..", 1, true) then
    error(fn .. "(" .. shown(path) .. "): when grading a file may be written only in the " ..
      "submission's own folder, by a plain name such as workfile \"saxpy.cu\"", 3)
  end
  return workdir .. "/" .. name
end

-- Writes text at path as a new file renamed into place (cudalab.files.write_atomic: the
-- temporary is made with O_EXCL and O_NOFOLLOW), so a symbolic link planted under that name
-- is replaced, never written through. Raises as the call fn.
local function write_new(fn, path, text)
  local ok, why = require("cudalab.files").write_atomic(path, text)
  if not ok then error(fn .. ": " .. tostring(why), 0) end
end

-- cuda.export and cuda.plot as grading allows them: the files they write, in the workdir.
local function safe_writers(workdir)
  return {
    export = function(path)
      local p = confined_path("cuda.export", path, workdir)
      local res = require("export").export(p, function(file, text)
        write_new("cuda.export", file, text)
      end)
      return res
    end,
    plot = function(res, file, opts)
      local p = confined_path("cuda.plot", file, workdir)
      write_new("cuda.plot", p, require("svg").render(res, opts))
      return file
    end,
  }
end

-- cuda.use when grading: the simulator, "none", and the backend grading runs on (graded) are
-- the learner's to move between, as at the prompt; a GPU asked for while grading runs on the
-- simulator is not made (the grade must not depend on the grader's machine having one): the
-- session stays where it is, and the call returns the backend in use, as a move would.
local function confined_use(real_use, backend, graded)
  return function(name, ...)
    if (name == "cuda" or name == "gpu") and graded ~= "cuda" then return backend() end
    return real_use(name, ...)
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

-- The names a submission finds before its own and the session's: the base functions, the
-- libraries, the lesson commands (doing nothing), and cuda and cpu as grading allows them.
local function safe_names(opts)
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
    local wrapped = safe_writers(workdir)
    wrapped.kernel = checked_compile(cuda.kernel, workdir)
    wrapped.module = checked_compile(cuda.module, workdir)
    wrapped.use = confined_use(cuda.use, cuda.backend, opts.backend or cuda.backend())
    safe.cuda = view(cuda, CUDA_SAFE, wrapped, "cuda")
  end
  if type(rawget(_G, "cpu")) == "table" then safe.cpu = view(cpu, { "time" }, nil, "cpu") end
  return safe
end

-- new(opts) -> env. opts.workdir: the folder of the submission's kernel
-- files; opts.globals: the table the submission's globals live in (the
-- grading process's _G, where the lesson's code and its check find them, as
-- at the prompt: `results = nil` drops the lesson's `results`), except the
-- names in the set opts.keep (the standard library, cuda, the lesson
-- commands), which a submission may shadow in its own environment but never
-- replace for the check; without opts.globals the submission's names stay in
-- env and opts.fallback, a function(name), gives the values it reads that it
-- did not set; opts.backend: the backend grading runs on (default: the one in
-- use now).
function M.new(opts)
  local safe, env = safe_names(opts), {}
  safe.load = function(chunk, name, mode, e)
    if mode ~= nil and mode ~= "t" then error("load: only text chunks when grading", 2) end
    if type(chunk) == "string" and chunk:byte(1) == 27 then
      error("load: bytecode " .. M.NOT_AVAILABLE, 2)
    end
    return load(chunk, name, "t", e or env)
  end
  safe._G = env
  -- Where a name lives: with opts.globals, every name but the sandbox's own and those
  -- opts.keep lists is the session's global, read and written there as at the prompt; the
  -- rest (and everything without opts.globals) is the submission's own, in env.
  local globals, keep = opts.globals, opts.keep or {}
  local function shared(k)
    return globals ~= nil and safe[k] == nil and not FORBIDDEN[k] and not keep[k]
  end
  -- rawget and rawset on the sandbox's _G reach the globals, as they do at the prompt
  safe.rawget = function(t, k)
    if rawequal(t, env) and shared(k) then return rawget(globals, k) end
    return rawget(t, k)
  end
  safe.rawset = function(t, k, v)
    if rawequal(t, env) and shared(k) then rawset(globals, k, v); return t end
    return rawset(t, k, v)
  end
  return setmetatable(env, {
    __index = function(_, k)
      local v = safe[k]
      if v ~= nil then return v end
      if FORBIDDEN[k] then refuse(k) end
      if shared(k) then return rawget(globals, k) end
      if opts.fallback then return opts.fallback(k) end
      return nil
    end,
    __newindex = function(t, k, v)
      if shared(k) then rawset(globals, k, v) else rawset(t, k, v) end
    end,
    __metatable = false,
  })
end

return M
