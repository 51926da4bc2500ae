-- testlib.lua: the few assertions the Lua test files share (after Lua's own testes/). Each
-- check prints "ok - name" or "not ok - name: why"; tests/run.sh counts those lines.
--
-- A file declares how many tests it runs with T.plan(n) before the first one, which prints the
-- plan line "1..n"; tests/run.sh fails a suite that ran fewer or more, so one that stops early
-- with status 0 cannot pass. A file ends with `return T.done()`, which exits with the verdict:
-- the chunk's return value would be thrown away, so T.done ends the process itself (after
-- flushing) rather than leave the status to whoever runs the file. T.skip(name, why) reports a
-- test that could not run here; it counts towards the plan but never as a pass.
local T = {}
local passed, failed, skipped, planned = 0, 0, 0, nil

local function report(ok, name, why)
  if ok then
    passed = passed + 1
    print("ok - " .. name)
  else
    failed = failed + 1
    print("not ok - " .. name .. ": " .. tostring(why))
  end
end

-- Declares the number of tests this file runs (each T.test and T.skip is one).
function T.plan(n)
  assert(math.type(n) == "integer" and n >= 0, "T.plan wants a count of tests")
  assert(not planned, "T.plan called twice")
  planned = n
  print("1.." .. n)
end

-- Reports a test that cannot run in this build or on this machine, saying why.
function T.skip(name, why)
  skipped = skipped + 1
  print("ok - " .. name .. " # SKIP " .. tostring(why))
end

-- Runs f as a named test; an error inside fails it with the message.
function T.test(name, f)
  local ok, err = pcall(f)
  report(ok, name, err)
end

function T.check(cond, msg)
  if not cond then error(msg or "check failed", 2) end
end

function T.checkeq(got, want, msg)
  if got ~= want then
    error(string.format("%s: got %s, want %s", msg or "values differ", tostring(got), tostring(want)), 2)
  end
end

-- f(...) must raise an error whose message contains `needle` (plain text).
function T.checkerr(needle, f, ...)
  local ok, err = pcall(f, ...)
  if ok then error("expected an error containing '" .. needle .. "', got none", 2) end
  if not tostring(err):find(needle, 1, true) then
    error(string.format("error '%s' does not contain '%s'", tostring(err), needle), 2)
  end
end

-- Maximum absolute difference between two Lua sequences, for checks against CPU references.
function T.maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

-- f(...) with backend be in use (cuda.use), the one before put back whatever happens: for a test
-- that runs the same launch on the GPU and on the simulator.
function T.on(be, f, ...)
  local old = cuda.use(be)
  local res = table.pack(pcall(f, ...))
  cuda.use(old)
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- Runs f with the simulator's race check set to `on` (true is "fail"), putting the old setting
-- back whatever happens.
function T.race_check(on, f, ...)
  local before = cuda.simopts()
  cuda.simopts{race_check = on}
  local res = table.pack(pcall(f, ...))
  cuda.simopts{race_check = before.race_check}
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- This same cudalab binary, quoted for a shell command line (io.popen): CUDALAB_TEST_BIN
-- where the runners set it (tests/run.sh, and the valgrind runs, where /proc/PID/exe is
-- valgrind itself), otherwise /proc/PID/exe of the shell's parent, which is this process.
function T.self_command()
  local bin = os.getenv("CUDALAB_TEST_BIN")
  return bin and bin ~= "" and ("'" .. bin:gsub("'", "'\\''") .. "'") or '"/proc/$PPID/exe"'
end

-- The output (stdout and stderr) of `script` run by this same cudalab on this backend in a
-- child of its own: a folder dir made for it, with its own state, cache and lesson workspace
-- under it, so that nothing the script does (a lesson's progress, a replaced library) reaches
-- this test's process. columns: the terminal width the child assumes (default 200). typed: the
-- script is read from standard input chunk by chunk, as lines typed at the prompt are, rather
-- than run as one chunk.
function T.child_session(dir, script, columns, typed)
  assert(os.execute("mkdir -p '" .. dir .. "'"))
  local f = assert(io.open(dir .. "/script.lua", "w"))
  f:write(script, "\n")
  f:close()
  local p = io.popen(("COLUMNS=%d XDG_STATE_HOME='%s/state' XDG_CACHE_HOME='%s/cache' " ..
    "CUDALAB_WORKSPACE='%s/ws' %s --backend %s %s'%s/script.lua' 2>&1")
    :format(columns or 200, dir, dir, dir, T.self_command(), cuda.backend(), typed and "< " or "",
      dir))
  local out = p:read("a")
  p:close()
  return out
end

-- The size of a file in bytes, 0 when it is missing.
function T.file_size(path)
  local f = io.open(path, "rb")
  if not f then return 0 end
  local n = f:seek("end")
  f:close()
  return n
end

-- Ends the file: exits 0 when every test passed and as many ran as T.plan declared, 1
-- otherwise. Never returns.
function T.done()
  local ran = passed + failed + skipped
  local short = planned and ran ~= planned
  -- a comment line, not a test line: tests/run.sh makes its own check of the plan
  if short then print(string.format("# ran %d of %d tests", ran, planned)) end
  io.stdout:flush()
  io.stderr:flush()
  os.exit((failed == 0 and not short) and 0 or 1)
end

return T
