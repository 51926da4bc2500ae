-- proc.lua: require "cudalab.proc" (repl/bind/bind_proc.c), the runner the grader starts learners'
-- work with: parallelism, timeouts that kill a whole process group, big input and output
-- through poll, truncation, statuses and signals, exec failures, bad arguments, env and cwd,
-- on_done, and cleaning up after an error or Ctrl-C without leaving a child behind; then the
-- confinement the grader puts around learners' work (repl/bind/confine.c): become, limits,
-- landlock, no_new_privs, mark_timeout, proc.mark and proc.cpu_budget. Tests that need root
-- (become) or a kernel with Landlock are skipped elsewhere, saying so.
local T = dofile("tests/lua/testlib.lua")
T.plan(27)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local proc = require "cudalab.proc"

local SH = "/bin/sh"

local function sh(script, extra)
  local job = {argv = {SH, "-c", script}}
  for k, v in pairs(extra or {}) do job[k] = v end
  return job
end

local function run1(job, opts) return proc.run({job}, opts)[1] end

-- Seconds since boot, with a 10 ms grain (os.time's grain of 1 s is too coarse here).
local function now()
  local f = assert(io.open("/proc/uptime"))
  local t = tonumber(f:read("a"):match("^(%S+)"))
  f:close()
  return t
end

local function my_pid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = tonumber(f:read("a"):match("^(%d+)"))
  f:close()
  return pid
end

-- The state letter of process pid ("S", "Z", ...) or nil when it is gone.
local function state_of(pid)
  local f = io.open("/proc/" .. pid .. "/stat")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s and s:match("%) (%a)")
end

-- Whether pid is gone (or dead, waiting for init to reap it), waiting up to 2 s for that.
local function gone(pid)
  for _ = 1, 200 do
    local st = state_of(pid)
    if st == nil or st == "Z" or st == "X" then return true end
    run1({argv = {"/bin/sleep", "0.01"}})
  end
  return false
end

-- The processes whose parent is this engine, as "pid comm state" strings. Listed by a child
-- shell, which leaves itself out (it prints its own pid first).
local function my_children()
  local me = my_pid()
  local r = run1(sh('echo $$; cat /proc/[0-9]*/stat 2>/dev/null'), {max_output = 64 << 20})
  local lister = tonumber(r.stdout:match("^(%d+)"))
  local found = {}
  for line in r.stdout:gmatch("[^\n]+") do
    local pid, comm, state, ppid = line:match("^(%d+) %((.*)%) (%a) (%d+)")
    if pid and tonumber(ppid) == me and tonumber(pid) ~= lister then
      found[#found + 1] = pid .. " " .. comm .. " " .. state
    end
  end
  return found
end

local function tmpname()
  local name = os.tmpname()
  os.remove(name)
  return name
end

-- 1. parallelism, shown by timing (behaviour, not a benchmark: the margins are seconds)

local function sleepers(n)
  local jobs = {}
  for i = 1, n do jobs[i] = {argv = {"/bin/sleep", "1"}} end
  return jobs
end

-- Times in these tests prove an order of events, never a speed: a bound on a wall-clock time
-- separates what the test asserts from its alternative by a wide margin (killed at 0.5 s rather
-- than left to sleep 100 s), so that a machine loaded many times over passes as an idle one does.

test("4 jobs with jobs = 4 run at once: each starts before any ends", function()
  local jobs = {}
  for i = 1, 4 do jobs[i] = sh("cat /proc/uptime; sleep 2; cat /proc/uptime") end
  local res = proc.run(jobs, {jobs = 4})
  checkeq(#res, 4, "results")
  local last_start, first_end = 0, math.huge
  for i = 1, 4 do
    checkeq(res[i].status, 0, "status of " .. i)
    check(res[i].seconds >= 1.9, "seconds " .. res[i].seconds)
    local t1, t2 = res[i].stdout:match("^(%S+).-\n(%S+)")
    t1, t2 = tonumber(t1), tonumber(t2)
    check(t1 and t2, "the job's times: " .. res[i].stdout)
    last_start, first_end = math.max(last_start, t1), math.min(first_end, t2)
  end
  check(last_start < first_end, string.format("the last job started at %.2f, after the first " ..
    "ended at %.2f: they ran one after another", last_start, first_end))
end)

test("4 x sleep 1 with jobs = 1 run one after another (>= 4 s)", function()
  local t0 = now()
  local res = proc.run(sleepers(4))
  local took = now() - t0
  check(took >= 3.95, "took " .. took .. " s") -- /proc/uptime has a 10 ms grain
  for i = 1, 4 do checkeq(res[i].status, 0, "status of " .. i) end
end)

-- 2. timeouts kill the whole group

test("a timeout kills the job's group, grandchild included", function()
  local t0 = now()
  local r = run1(sh("sleep 100 & echo $!; sleep 100", {timeout = 0.5}))
  local took = now() - t0
  check(took < 50, "took " .. took .. " s: the job was left to sleep")
  checkeq(r.timed_out, true, "timed_out")
  checkeq(r.status, nil, "status")
  checkeq(r.signal, 9, "signal")
  checkeq(r.signame, "SIGKILL", "signame")
  check(r.seconds >= 0.45 and r.seconds < 50, "seconds " .. r.seconds)
  local grandchild = tonumber(r.stdout:match("^(%d+)"))
  check(grandchild, "the grandchild's pid in " .. r.stdout)
  check(gone(grandchild), "the grandchild " .. grandchild .. " still runs")
end)

test("when the leader exits, what is left of its group is killed", function()
  local t0 = now()
  local r = run1(sh("sleep 100 & echo $!"))
  check(now() - t0 < 50, "took " .. (now() - t0) .. " s: the group was waited for")
  checkeq(r.status, 0, "status")
  checkeq(r.timed_out, false, "timed_out")
  local bg = tonumber(r.stdout:match("^(%d+)"))
  check(bg and gone(bg), "the background sleep still runs")
end)

-- 3. big input and output, through poll

test("8 MiB of stdin comes back through cat intact", function()
  local parts = {}
  for i = 1, 8 * 1024 do parts[i] = string.format("%06d", i) .. string.rep("x", 1017) .. "\n" end
  local input = table.concat(parts)
  checkeq(#input, 8 << 20, "input size")
  local r = run1({argv = {"/bin/cat"}, stdin = input}, {max_output = 16 << 20})
  checkeq(r.status, 0, "status")
  checkeq(#r.stdout, #input, "output size")
  check(r.stdout == input, "output differs from input")
  checkeq(r.truncated, false, "truncated")
end)

test("big stdout and stderr at once do not deadlock", function()
  local r = run1(sh("head -c 3000000 /dev/zero; head -c 2000000 /dev/zero >&2; " ..
                    "head -c 3000000 /dev/zero"), {max_output = 8 << 20})
  checkeq(r.status, 0, "status")
  checkeq(#r.stdout, 6000000, "stdout size")
  checkeq(#r.stderr, 2000000, "stderr size")
  checkeq(r.truncated, false, "truncated")
end)

test("output past max_output is dropped and flagged, the child still finishes", function()
  local r = run1(sh("head -c 100000 /dev/zero; echo err >&2"), {max_output = 1000})
  checkeq(r.status, 0, "status")
  checkeq(#r.stdout, 1000, "stdout kept")
  checkeq(r.stderr, "err\n", "stderr within the limit")
  checkeq(r.truncated, true, "truncated")
  r = run1(sh("head -c 100 /dev/zero"), {max_output = 0})
  checkeq(r.stdout, "", "max_output = 0")
  checkeq(r.truncated, true, "truncated at 0")
  r = run1({argv = {"/bin/cat"}}) -- no stdin: /dev/null, so cat ends at once
  checkeq(r.stdout, "", "cat of /dev/null")
  checkeq(r.status, 0, "status of cat")
  r = run1({argv = {"/bin/true"}, stdin = string.rep("y", 1 << 20)}) -- never reads it
  checkeq(r.status, 0, "a child that ignores its stdin")
end)

-- 4. statuses, signals, failures to start

test("exit statuses and signals", function()
  local res = proc.run({sh("exit 3"), sh("kill -TERM $$"), sh("kill -SEGV $$"), sh("exit 0")},
                       {jobs = 4})
  checkeq(res[1].status, 3, "exit 3")
  checkeq(res[1].signal, nil, "no signal")
  checkeq(res[2].status, nil, "no status after a signal")
  checkeq(res[2].signal, 15, "SIGTERM's number")
  checkeq(res[2].signame, "SIGTERM", "SIGTERM's name")
  checkeq(res[2].timed_out, false, "not a timeout")
  checkeq(res[3].signame, "SIGSEGV", "SIGSEGV's name")
  checkeq(res[4].status, 0, "exit 0")
  check(math.type(res[4].pid) == "integer" and res[4].pid > 0, "pid")
end)

test("a program that cannot be run gets 127 and says why", function()
  local res = proc.run({{argv = {"/nonexistent/prog", "x"}}, {argv = {"no-such-program-here"}},
                        {argv = {"/etc/passwd"}}, sh("exit 127"),
                        {argv = {"/bin/pwd"}, cwd = "/nonexistent-dir"},
                        {argv = {"sh", "-c", "exit 5"}}})
  checkeq(res[1].status, 127, "status")
  checkeq(res[1].stderr, "cannot run /nonexistent/prog (No such file or directory)\n", "stderr")
  checkeq(res[1].error, "cannot run /nonexistent/prog (No such file or directory)", "error")
  checkeq(res[2].error, "cannot run no-such-program-here (not found in PATH)", "PATH")
  checkeq(res[3].error, "cannot run /etc/passwd (Permission denied)", "not executable")
  checkeq(res[4].status, 127, "a program's own 127")
  checkeq(res[4].error, nil, "a program's own 127 is no failure to start")
  checkeq(res[5].status, 127, "bad cwd")
  checkeq(res[5].error, "cannot run /bin/pwd in /nonexistent-dir (No such file or directory)",
          "bad cwd")
  checkeq(res[6].status, 5, "a bare name is looked up in PATH")
end)

-- 5. the child's environment

test("env adds, overrides and removes; cwd is the child's folder", function()
  local path = os.getenv("PATH")
  local r = run1(sh('echo "$CUDALAB_T1|$HOME|$PATH|${USER-unset}"; pwd',
                    {env = {CUDALAB_T1 = "one two", HOME = "/elsewhere", USER = false},
                     cwd = "/tmp"}))
  checkeq(r.stdout, "one two|/elsewhere|" .. path .. "|unset\n/tmp\n", "env and cwd")
  r = run1(sh('echo "${CUDALAB_T1-unset}"'))
  checkeq(r.stdout, "unset\n", "env is the job's own")
  r = run1({argv = {"true-or-not"}, env = {PATH = "/nonexistent"}})
  checkeq(r.error, "cannot run true-or-not (not found in PATH)", "the job's PATH is searched")
end)

test("the child has only 0, 1 and 2 open, default signals, its own group", function()
  local held = assert(io.open("tests/lua/proc.lua")) -- a descriptor without CLOEXEC
  local r = run1({argv = {"/bin/ls", "/proc/self/fd"}})
  held:close()
  -- ls itself holds the folder it lists open as 3
  checkeq(r.stdout, "0\n1\n2\n3\n", "descriptors")
  -- the programs read their own state: a shell blocks signals while it waits for a command
  r = run1({argv = {"/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"}})
  -- signals 32 and 33 are the C library's own (NPTL): no program can set them, and what the
  -- test runner inherited there is not ours to judge; the standard signals 1..31 must be clean
  local function standard(hex) return string.format("%08x", tonumber(hex, 16) & 0x7fffffff) end
  checkeq(standard(r.stdout:match("SigBlk:%s*(%x+)")), "00000000", "blocked signals")
  checkeq(standard(r.stdout:match("SigIgn:%s*(%x+)")), "00000000", "ignored signals")
  r = run1({argv = {"/bin/cut", "-d", " ", "-f1,5", "/proc/self/stat"}})
  local pid, pgid = r.stdout:match("^(%d+) (%d+)\n$")
  check(pid and pid == pgid, "process group: " .. r.stdout)
  checkeq(tonumber(pid), r.pid, "pid")
end)

-- 6. on_done

test("on_done is called in completion order; results stay in job order", function()
  local order, seen = {}, {}
  local res = proc.run({sh("sleep 1.1; echo a"), sh("sleep 0.1; echo b"), sh("sleep 0.6; echo c")},
                       {jobs = 3, on_done = function(i, r)
                         order[#order + 1] = i
                         seen[i] = r
                       end})
  checkeq(table.concat(order, ","), "2,3,1", "completion order")
  checkeq(res[1].stdout .. res[2].stdout .. res[3].stdout, "a\nb\nc\n", "results in job order")
  check(seen[1] == res[1] and seen[2] == res[2], "on_done sees the result tables")
end)

test("an error in on_done kills the other jobs and reaps them", function()
  local before = #my_children()
  local t0 = now()
  local ok, err = pcall(proc.run,
                        {sh("exit 0"), sh("sleep 100 & sleep 100"), {argv = {"/bin/sleep", "100"}},
                         {argv = {"/bin/sleep", "100"}}},
                        {jobs = 3, on_done = function(i) error("stop at " .. i) end})
  check(not ok and tostring(err):find("stop at 1", 1, true), "error: " .. tostring(err))
  check(now() - t0 < 50, "took " .. (now() - t0) .. " s: the other jobs were waited for")
  checkeq(before, 0, "no children before")
  local left = my_children()
  checkeq(#left, 0, "children left: " .. table.concat(left, "; "))
end)

test("on_done may change the jobs table without harm", function()
  -- strings made at run time, not constants of this chunk, so that nothing else keeps them
  local function fresh(s) return (s .. string.rep(" ", 2)):sub(1, -3) end
  local jobs = {sh(fresh("sleep 0.1; echo one")),
                sh(fresh("sleep 0.2; echo $0"), {env = {X = fresh("1")}}),
                sh(fresh("echo three"))}
  local res = proc.run(jobs, {jobs = 1, on_done = function()
    for _, j in ipairs(jobs) do
      if j.argv then j.argv[3] = nil end
      j.argv, j.env = nil, nil
    end
    collectgarbage()
    collectgarbage()
  end})
  checkeq(res[1].stdout .. res[2].stdout .. res[3].stdout, "one\n/bin/sh\nthree\n", "outputs")
end)

-- 7. Ctrl-C, in a child cudalab: after an interrupt the hook stays armed for the whole request,
-- so it cannot be caught and tested in this one

test("Ctrl-C while waiting kills the children's groups, reaps them, raises interrupted", function()
  local pidfile = tmpname()
  local code = string.format([[
local proc = require "cudalab.proc"
proc.run({{argv = {"/bin/sh", "-c", "sleep 100 & echo $! > %s; kill -INT $PPID; wait"}},
          {argv = {"/bin/sleep", "100"}}}, {jobs = 2})
print("not interrupted")]], pidfile)
  local t0 = now()
  local r = run1({argv = {proc.self(), "--backend", "none", "-e", code}, timeout = 60})
  check(now() - t0 < 50, "took " .. (now() - t0) .. " s")
  checkeq(r.timed_out, false, "the child cudalab timed out: " .. r.stderr)
  checkeq(r.status, 1, "exit status of the child cudalab (" .. r.stderr .. ")")
  check(r.stderr:find("interrupted", 1, true), "stderr: " .. r.stderr)
  check(not r.stdout:find("not interrupted", 1, true), "stdout: " .. r.stdout)
  local f = assert(io.open(pidfile))
  local bg = tonumber(f:read("a"))
  f:close()
  os.remove(pidfile)
  check(bg and gone(bg), "the job's background sleep still runs")
end)

-- 8. bad arguments

test("bad arguments raise with clear messages", function()
  local ok = {argv = {"/bin/true"}}
  checkerr("bad argument #1 to 'cudalab.proc.run' (table expected, got no value)", proc.run)
  checkerr("table expected, got number", proc.run, {ok}, 5)
  checkerr("job 2: a table expected, got string", proc.run, {ok, "ls"})
  checkerr("job 1: argv must be a non-empty list of strings, got nil", proc.run, {{}})
  checkerr("job 1: argv must be a non-empty list of strings, got an empty table", proc.run,
           {{argv = {}}})
  checkerr("job 1: argv[2] must be a string, got number", proc.run, {{argv = {"/bin/echo", 1}}})
  checkerr("job 1: argv[2] must be a string, got table", proc.run, {{argv = {"/bin/echo", {}}}})
  checkerr("job 1: argv[2] contains a NUL byte", proc.run, {{argv = {"/bin/echo", "a\0b"}}})
  checkerr("job 1: argv[1] is empty", proc.run, {{argv = {""}}})
  checkerr("job 1: timeout must be a positive number of seconds, got -1", proc.run,
           {{argv = {"/bin/true"}, timeout = -1}})
  checkerr("job 1: timeout must be a positive number of seconds, got ", proc.run,
           {{argv = {"/bin/true"}, timeout = 0 / 0}})
  checkerr("job 1: timeout must be a positive number of seconds, got 0", proc.run,
           {{argv = {"/bin/true"}, timeout = 0}})
  checkerr("job 1: timeout must be a positive number of seconds, got string", proc.run,
           {{argv = {"/bin/true"}, timeout = "5"}})
  checkerr("job 1: stdin must be a string, got number", proc.run,
           {{argv = {"/bin/cat"}, stdin = 5}})
  checkerr("job 1: cwd must be a string, got boolean", proc.run,
           {{argv = {"/bin/pwd"}, cwd = true}})
  checkerr("job 1: cwd contains a NUL byte", proc.run, {{argv = {"/bin/pwd"}, cwd = "/\0"}})
  checkerr("job 1: env must be a table of NAME = \"value\", got string", proc.run,
           {{argv = {"/bin/true"}, env = "A=1"}})
  checkerr("job 1: env names must be strings, got number", proc.run,
           {{argv = {"/bin/true"}, env = {"x"}}})
  checkerr("job 1: env name 'A=B' is not valid (empty, or with '=' or NUL)", proc.run,
           {{argv = {"/bin/true"}, env = {["A=B"] = "1"}}})
  checkerr("job 1: env.A must be a string or false, got true", proc.run,
           {{argv = {"/bin/true"}, env = {A = true}}})
  checkerr("job 1: env.A contains a NUL byte", proc.run, {{argv = {"/bin/true"}, env = {A = "\0"}}})
  checkerr("job 1: unknown field 'args' (argv, stdin, timeout, env, cwd, become, limits, " ..
           "no_new_privs, landlock, mark_timeout)", proc.run,
           {{argv = {"/bin/true"}, args = {}}})
  checkerr("jobs must be an integer from 1 to 1024, got 0", proc.run, {ok}, {jobs = 0})
  checkerr("jobs must be an integer from 1 to 1024, got 2.5", proc.run, {ok}, {jobs = 2.5})
  checkerr("jobs must be an integer from 1 to 1024, got string", proc.run, {ok}, {jobs = "4"})
  checkerr("max_output must be an integer from 0 to 1073741824 (bytes per stream), got -1",
           proc.run, {ok}, {max_output = -1})
  checkerr("on_done must be a function, got number", proc.run, {ok}, {on_done = 1})
  checkerr("opts: unknown field 'job' (jobs, max_output, on_done)", proc.run, {ok}, {job = 2})
  checkerr("bad argument #1", proc.run, {{argv = {"/bin/echo", 1}}})
  -- a bad job anywhere in the list stops the run before anything starts
  local marker = tmpname()
  checkerr("job 2: argv must be", proc.run, {sh("touch " .. marker), {argv = "x"}})
  checkeq(io.open(marker), nil, "job 1 ran before job 2 was checked")
end)

-- 9. the rest of the module

test("proc.self, proc.nproc and an empty list", function()
  local self = proc.self()
  check(self:sub(1, 1) == "/" and self:match("cudalab$"), self)
  local r = run1({argv = {self, "--backend", "none", "-e", "print(1 + 1)"}})
  checkeq(r.stdout, "2\n", "a copy of cudalab runs")
  local n = proc.nproc()
  check(math.type(n) == "integer" and n >= 1, "nproc " .. tostring(n))
  checkeq(#proc.run({}), 0, "no jobs, no results")
end)

test("many short jobs in parallel, each result its own", function()
  local jobs = {}
  for i = 1, 64 do jobs[i] = sh("echo " .. i .. "; exit " .. (i % 7), {stdin = tostring(i)}) end
  local done = 0
  local res = proc.run(jobs, {jobs = 16, on_done = function() done = done + 1 end})
  checkeq(done, 64, "on_done calls")
  for i = 1, 64 do
    checkeq(res[i].stdout, i .. "\n", "stdout of " .. i)
    checkeq(res[i].status, i % 7, "status of " .. i)
  end
  checkeq(#my_children(), 0, "children left")
end)

-- 10. confinement: become, limits, landlock, no_new_privs, mark_timeout

-- This cudalab, to start again: CUDALAB_TEST_BIN where the runner sets it, else this process's.
local function cudalab()
  local bin = os.getenv("CUDALAB_TEST_BIN")
  return bin and bin ~= "" and bin or proc.self()
end

local my_uid = tonumber(run1({argv = {"/usr/bin/id", "-u"}}).stdout)
local is_root = my_uid == 0
local abi, no_landlock = proc.landlock_abi()

-- A fresh folder of its own (mode 0700 unless given), made by a child shell.
local function tmpdir(mode)
  local name = tmpname()
  local r = run1({argv = {"/bin/mkdir", "-m", mode or "700", name}})
  assert(r.status == 0, r.stderr)
  return name
end

local function rmtree(dir) run1({argv = {"/bin/rm", "-rf", dir}}) end

-- What the system commands need to run: read and execute, nothing else.
local SYSTEM = {"/usr", "/lib", "/lib64", "/bin", "/etc"}

test("bad confinement fields raise with clear messages", function()
  local function job(extra)
    local j = {argv = {"/bin/true"}}
    for k, v in pairs(extra) do j[k] = v end
    return {j}
  end
  checkerr("job 1: become must be a uid (an integer from 1 to 4294967294), got string",
           proc.run, job{become = "nobody"})
  checkerr("job 1: become must be a uid (an integer from 1 to 4294967294), got -1", proc.run,
           job{become = -1})
  checkerr("job 1: become must be a uid (an integer from 1 to 4294967294), got 1.5", proc.run,
           job{become = 1.5})
  if is_root then
    checkerr("job 1: become = 0 would keep root's rights: give the learner's uid", proc.run,
             job{become = 0})
    checkerr("job 1: become: no account has uid 3999999999", proc.run, job{become = 3999999999})
  else
    checkerr("job 1: become needs root (cudalab runs as uid " .. my_uid .. ")", proc.run,
             job{become = 1})
  end
  checkerr("job 1: limits must be a table (cpu, memory, file_size, processes, open_files), " ..
           "got number", proc.run, job{limits = 5})
  checkerr("job 1: limits: unknown field 'cpus' (cpu, memory, file_size, processes, " ..
           "open_files)", proc.run, job{limits = {cpus = 1}})
  checkerr("job 1: limits: unknown field '1' (cpu,", proc.run, job{limits = {1}})
  checkerr("job 1: limits.cpu must be a positive integer, got 0", proc.run, job{limits = {cpu = 0}})
  checkerr("job 1: limits.memory must be a positive integer, got -1", proc.run,
           job{limits = {memory = -1}})
  checkerr("job 1: limits.file_size must be a positive integer, got 2.5", proc.run,
           job{limits = {file_size = 2.5}})
  checkerr("job 1: limits.processes must be a positive integer, got string", proc.run,
           job{limits = {processes = "10"}})
  checkerr("job 1: limits.open_files must be a positive integer, got true", proc.run,
           job{limits = {open_files = true}})
  checkerr("job 1: no_new_privs must be a boolean, got number", proc.run, job{no_new_privs = 1})
  checkerr("job 1: mark_timeout must be a positive number of seconds, got 0", proc.run,
           job{mark_timeout = 0})
  checkerr("job 1: mark_timeout must be a positive number of seconds, got string", proc.run,
           job{mark_timeout = "1"})
  checkerr("job 1: landlock must be a table {read = {paths}, write = {paths}}, got string",
           proc.run, job{landlock = "/usr"})
  checkerr("job 1: landlock: unknown field 'exec' (read, write)", proc.run,
           job{landlock = {exec = {"/bin"}}})
  checkerr("job 1: landlock.read must be a list of paths, got string", proc.run,
           job{landlock = {read = "/usr"}})
  checkerr("job 1: landlock.read[2] must be a string, got number", proc.run,
           job{landlock = {read = {"/usr", 5}}})
  checkerr("job 1: landlock.write[1] must be a string, got table", proc.run,
           job{landlock = {write = {{}}}})
  checkerr("job 1: landlock.write[1] contains a NUL byte", proc.run,
           job{landlock = {write = {"/tmp\0x"}}})
  checkerr("bad argument #1 to 'cudalab.proc.cpu_budget' (seconds must be a positive " ..
           "integer, got no value)", proc.cpu_budget)
  checkerr("seconds must be a positive integer, got 0", proc.cpu_budget, 0)
  checkerr("seconds must be a positive integer, got -3", proc.cpu_budget, -3)
  checkerr("seconds must be a positive integer, got 1.5", proc.cpu_budget, 1.5)
  checkerr("seconds must be a positive integer, got string", proc.cpu_budget, "1")
  -- a bad confinement stops the run before anything starts, as any bad field does
  local marker = tmpname()
  checkerr("job 2: limits.cpu must be", proc.run, {sh("touch " .. marker), {argv = {"/bin/true"},
           limits = {cpu = -1}}})
  checkeq(io.open(marker), nil, "job 1 ran before job 2 was checked")
end)

if not is_root then
  T.skip("become runs the child as the account", "needs root (runs as uid " .. my_uid .. ")")
else
  test("become runs the child as the account, which cannot read root's files", function()
    local name = "clproc_t1"
    run1({argv = {"/usr/sbin/userdel", name}}) -- left over from a run that was killed
    -- in the group users too where there is one, so that it has a supplementary group
    local users = run1({argv = {"/usr/bin/getent", "group", "users"}}).status == 0
    local add = {"/usr/sbin/useradd", "-M", "-s", "/usr/sbin/nologin", name}
    if users then table.insert(add, 2, "-Gusers") end
    local made = run1({argv = add})
    checkeq(made.status, 0, "useradd: " .. made.stderr)
    local ok, err = pcall(function()
      local uid = tonumber(run1({argv = {"/usr/bin/id", "-u", name}}).stdout)
      check(uid and uid > 0, "uid of " .. name)
      local secret = tmpname() -- root's, mode 0600
      local f = assert(io.open(secret, "w"))
      f:write("secret\n")
      f:close()
      run1({argv = {"/bin/chmod", "600", secret}})
      local private = tmpdir("700")
      local bin = cudalab()
      local groups = run1({argv = {"/usr/bin/id", "-G", name}}).stdout
      local res = proc.run({
        {argv = {"/usr/bin/id", "-u"}, become = uid},
        {argv = {"/usr/bin/id", "-G"}, become = uid},
        -- RLIMIT_NPROC counts the account's processes: the shell is the one it may have
        sh("/bin/true & wait $!", {become = uid, limits = {processes = 1}}),
        {argv = {"/bin/cat", secret}, become = uid},
        {argv = {"/bin/pwd"}, become = uid, cwd = private},
        {argv = {"/bin/cat", secret}},
        -- a cudalab that runs as the account may not hand out accounts in turn
        {argv = {bin, "--backend", "none", "-e", [[
local ok, err = pcall(require("cudalab.proc").run, {{argv = {"/bin/true"}, become = 1}})
print(err)]]}, become = uid, env = {HOME = "/nonexistent", XDG_CACHE_HOME = "/nonexistent",
                                    XDG_STATE_HOME = "/nonexistent"}},
      }, {jobs = 4})
      os.remove(secret)
      rmtree(private)
      checkeq(res[1].stdout, uid .. "\n", "id -u in the child")
      checkeq(res[1].status, 0, "id's status")
      checkeq(res[2].stdout, groups, "id -G in the child: the account's groups")
      if users then check(groups:find("^%d+ %d+\n$"), "two groups: " .. groups) end
      check(res[3].status ~= 0 and res[3].stderr:find("fork", 1, true),
            "a second process with processes = 1: " .. tostring(res[3].status) .. res[3].stderr)
      checkeq(res[4].status, 1, "cat's status")
      check(res[4].stderr:find("Permission denied", 1, true), "cat: " .. res[4].stderr)
      checkeq(res[4].stdout, "", "what cat read")
      checkeq(res[5].error, "cannot run /bin/pwd in " .. private .. " as uid " .. uid ..
              " (Permission denied)", "a folder the account cannot enter")
      checkeq(res[6].stdout, "secret\n", "root itself reads it")
      local refused = "job 1: become needs root (cudalab runs as uid " .. uid .. ")"
      check(res[7].stdout:find(refused, 1, true),
            "the account's cudalab: " .. res[7].stdout .. res[7].stderr)
    end)
    local removed = run1({argv = {"/usr/sbin/userdel", name}})
    checkeq(removed.status, 0, "userdel: " .. removed.stderr)
    if not ok then error(err, 0) end
  end)
end

if abi == 0 then
  T.skip("landlock confines reads and writes", no_landlock)
else
  test("landlock: reads beneath read paths, writes only beneath write paths", function()
    local mine, other = tmpdir(), tmpdir()
    local f = assert(io.open(other .. "/secret", "w"))
    f:write("secret\n")
    f:close()
    local outside = tmpname()
    local read = {table.unpack(SYSTEM)}
    read[#read + 1] = "/nonexistent/toolkit" -- skipped: it does not exist
    local r = run1(sh(string.format(
      'echo written > %s/f && cat %s/f; cat %s/secret; echo x > %s; ls %s >/dev/null',
      mine, mine, other, outside, other), {landlock = {read = read, write = {mine}}}))
    checkeq(r.status, 2, "the shell's status (ls failed last): " .. r.stderr)
    checkeq(r.stdout, "written\n", "what the job wrote in its folder, read back")
    local _, denied = r.stderr:gsub("Permission denied", "")
    checkeq(denied, 3, "refusals (read, write outside, list): " .. r.stderr)
    checkeq(io.open(outside), nil, "a file written outside the write paths")
    -- a read rule on a file: that file alone, and with file rights only
    r = run1({argv = {"/bin/cat", other .. "/secret"},
              landlock = {read = {"/usr", "/lib", "/lib64", "/bin", other .. "/secret"}}})
    checkeq(r.stdout, "secret\n", "a file named as a read path: " .. r.stderr)
    -- the program itself must be reachable
    r = run1({argv = {"/bin/true"}, landlock = {read = {"/etc"}}})
    checkeq(r.error, "cannot run /bin/true (Permission denied)", "exec outside the paths")
    -- a path that exists or not, the parent cannot tell: the job fails rather than lose a rule
    local long = "/" .. string.rep("x", 5000)
    r = run1({argv = {"/bin/true"}, landlock = {read = {"/usr", long}}})
    checkeq(r.status, 127, "a path too long to open")
    checkeq(r.error, "cannot confine /bin/true with Landlock (opening " .. long ..
            ": File name too long)", "a path too long to open")
    check(math.type(abi) == "integer" and abi >= 1, "landlock_abi " .. tostring(abi))
    if abi >= 6 then -- the scopes: no signal to a process outside the job
      r = run1(sh("kill -0 $PPID; echo $?", {landlock = {read = SYSTEM}}))
      checkeq(r.stdout, "1\n", "kill -0 of the engine from inside: " .. r.stderr)
      check(r.stderr:find("not permitted", 1, true), "kill's complaint: " .. r.stderr)
      -- the shell gives a background job /dev/null for its input: without it readable, the
      -- job could fail on that (status 2) before the kill reached it
      local with_null = {table.unpack(SYSTEM)}
      with_null[#with_null + 1] = "/dev/null"
      r = run1(sh("sleep 5 & kill $!; wait $!; echo $?", {landlock = {read = with_null}}))
      checkeq(r.stdout, "143\n", "the job signals its own processes: " .. r.stderr)
    end
    rmtree(mine)
    rmtree(other)
  end)
end

test("limits: file_size stops a big write, memory a big allocation; failures are errors",
     function()
  local dir = tmpdir()
  local r = run1(sh("head -c 2000000 /dev/zero > " .. dir .. "/f",
                    {limits = {file_size = 1000000}}))
  check(r.signame == "SIGXFSZ" or (r.status or 0) ~= 0, "head was not stopped: " ..
        tostring(r.status) .. " " .. r.stderr)
  local size = run1({argv = {"/usr/bin/stat", "-c", "%s", dir .. "/f"}}).stdout
  checkeq(size, "1000000\n", "the file's size")
  rmtree(dir)
  r = run1({argv = {"/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=200M", "count=1"},
            limits = {memory = 64 << 20}})
  checkeq(r.status, 1, "dd's status")
  check(r.stderr:find("memory exhausted", 1, true), "dd: " .. r.stderr)
  r = run1({argv = {"/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=1M", "count=1"},
            limits = {memory = 64 << 20, open_files = 64, processes = 10000}})
  checkeq(r.status, 0, "dd within the limits: " .. r.stderr)
  r = run1({argv = {"/bin/sh", "-c", "ulimit -n; ulimit -Hn; ulimit -f"},
            limits = {open_files = 17, file_size = 1024 * 1024}})
  checkeq(r.stdout, "17\n17\n2048\n", "the limits a shell sees (ulimit -f: 512-byte blocks)")
  -- above the hard limit of an unprivileged account, or of the kernel: the job fails to start
  r = run1({argv = {"/bin/true"}, limits = {open_files = 1 << 40}})
  checkeq(r.status, 127, "status")
  checkeq(r.error, "cannot run /bin/true with limits.open_files = 1099511627776 (Operation " ..
          "not permitted)", "error")
end)

test("limits.cpu kills a spinning job well before its timeout", function()
  -- one second of CPU can take many of wall-clock time on a loaded machine: the timeout is far
  local r = run1(sh("while :; do :; done", {limits = {cpu = 1}, timeout = 120}))
  check(r.signame == "SIGXCPU" or r.signame == "SIGKILL", "signal " .. tostring(r.signame))
  checkeq(r.timed_out, false, "timed_out")
end)

test("mark_timeout kills a job whose marks stop, never one that keeps marking", function()
  local marker = "i=0; while [ $i -lt 15 ]; do printf x >&3; sleep 0.1; i=$((i + 1)); done; "
  -- marks 0.1 s apart against a mark_timeout of 2 s: a loaded machine may stretch a gap, not
  -- twentyfold
  local res = proc.run({sh(marker .. "sleep 100", {mark_timeout = 2, timeout = 60}),
                        sh(marker .. "echo $CUDALAB_MARK_FD", {mark_timeout = 2, timeout = 60}),
                        sh("sleep 100", {mark_timeout = 30, timeout = 0.5}),
                        sh("sleep 100", {mark_timeout = 0.05, timeout = 60})}, {jobs = 4})
  local a, b, c, d = res[1], res[2], res[3], res[4]
  checkeq(a.timed_out, true, "marks stopped: timed_out")
  checkeq(a.timeout_kind, "mark", "marks stopped: timeout_kind")
  checkeq(a.signame, "SIGKILL", "marks stopped: signal")
  check(a.marks >= 10, "marks " .. a.marks)
  check(a.seconds >= 3.4 and a.seconds < 50, "killed after " .. a.seconds .. " s: not 2 s " ..
        "after the 15th mark")
  checkeq(b.timed_out, false, "kept marking: timed_out")
  checkeq(b.timeout_kind, nil, "kept marking: timeout_kind")
  checkeq(b.status, 0, "kept marking: status")
  checkeq(b.stdout, "3\n", "CUDALAB_MARK_FD")
  checkeq(b.marks, 15, "kept marking: marks")
  checkeq(c.timeout_kind, "total", "the total timeout came first")
  checkeq(c.marks, 0, "no marks")
  check(c.seconds < 25, "the total timeout took " .. c.seconds .. " s")
  checkeq(d.timeout_kind, "mark", "no mark at all: the first deadline is start + mark_timeout")
  check(d.seconds < 25, "took " .. d.seconds .. " s")
  local r = run1({argv = {"/bin/ls", "/proc/self/fd"}, mark_timeout = 5})
  checkeq(r.stdout, "0\n1\n2\n3\n4\n", "descriptors: 0..2, the mark pipe, ls's folder")
  checkeq(run1({argv = {"/bin/ls", "/proc/self/fd"}}).stdout, "0\n1\n2\n3\n", "and without")
end)

test("proc.mark: true in a job with a mark pipe, false without one or with its reader gone",
     function()
  local bin = cudalab()
  local mark3 = [[local proc = require "cudalab.proc"
io.write(tostring(proc.mark()), " ", tostring(proc.mark()), " ", tostring(proc.mark()))]]
  local r = run1({argv = {bin, "--backend", "none", "-e", mark3}, mark_timeout = 30})
  checkeq(r.stdout, "true true true", "proc.mark in the job: " .. r.stderr)
  checkeq(r.marks, 3, "marks the parent read")
  checkeq(r.mark_data, "\n\n\n", "a mark with no text is a newline")
  -- a text marks too, and comes back whole as mark_data, apart from what the job prints
  local said = [[local proc = require "cudalab.proc"
print("not a result"); proc.mark('{"id":"a"}\n'); proc.mark(("x"):rep(100000) .. "\n")]]
  r = run1({argv = {bin, "--backend", "none", "-e", said}, mark_timeout = 30})
  checkeq(r.mark_data, '{"id":"a"}\n' .. ("x"):rep(100000) .. "\n", "mark_data: " .. r.stderr)
  checkeq(r.stdout, "not a result\n")
  checkerr("the text to mark with must not be empty", proc.mark, "")
  if not os.getenv("CUDALAB_MARK_FD") then checkeq(proc.mark(), false, "proc.mark here") end
  -- without a mark pipe the job's environment has no CUDALAB_MARK_FD, even one inherited
  r = run1({argv = {bin, "--backend", "none", "-e", mark3}})
  checkeq(r.stdout, "false false false", "without mark_timeout: " .. r.stderr)
  r = run1({argv = {bin, "--backend", "none", "-e", mark3}, env = {CUDALAB_MARK_FD = "0"}})
  checkeq(r.stdout, "false false false", "a descriptor that is no pipe for writing")
  -- a pipe whose reader has gone: EPIPE, and no SIGPIPE
  local code = [[local proc = require "cudalab.proc"
io.stderr:write(tostring(proc.mark()), "\n")]]
  r = run1({argv = {SH, "-c", '{ sleep 0.3; CUDALAB_MARK_FD=3 "$0" --backend none -e "$1" ' ..
                    '3>&1 >&2; echo "status $?" >&2; } | true', bin, code}})
  checkeq(r.stderr, "false\nstatus 0\n", "marking into a closed pipe")
end)

-- cudalab -e with no terminal on its input runs the code in its own process (no console above
-- it): that process dies of SIGXCPU, which grade.lua reads from the job's signal
test("proc.cpu_budget: a run that spins past its budget dies of SIGXCPU", function()
  local code = [[local proc = require "cudalab.proc"
print(proc.cpu_budget(1))
io.stdout:flush()
while true do end]]
  local r = run1({argv = {cudalab(), "--backend", "none", "-e", code}, timeout = 120})
  checkeq(r.timed_out, false, "timed out: " .. r.stderr)
  checkeq(r.signame, "SIGXCPU", "status " .. tostring(r.status) .. ", stderr: " .. r.stderr)
  local soft = tonumber(r.stdout)
  check(soft and soft >= 2, "the soft limit it returned: " .. r.stdout)
  check(r.seconds < 100, "took " .. r.seconds .. " s")
  -- never above the hard limit: limits.cpu sets both
  r = run1({argv = {cudalab(), "--backend", "none", "-e",
                    "print(require('cudalab.proc').cpu_budget(1000))"}, limits = {cpu = 30}})
  checkeq(r.stdout, "30\n", "capped at the hard limit: " .. r.stderr)
end)

test("no_new_privs is set in the child, and only when asked (or implied by landlock)", function()
  local function nnp(job)
    job.argv = {"/bin/grep", "NoNewPrivs", "/proc/self/status"}
    return (run1(job).stdout:match("NoNewPrivs:%s*(%d)"))
  end
  checkeq(nnp({}), "0", "by default")
  checkeq(nnp({no_new_privs = true}), "1", "asked for")
  checkeq(nnp({no_new_privs = false, limits = {cpu = 5}}), "0", "asked against")
  local read = {"/proc", table.unpack(SYSTEM)}
  if abi > 0 then checkeq(nnp({landlock = {read = read}}), "1", "implied by landlock") end
end)

return T.done()
