-- class_store.lua: require "cudalab.class" (repl/bind/bind_class.c, repl/class/classdir.c) by one account:
-- the class.lua sandbox (its limits, what it leaves out, its messages), making a class folder and
-- the modes it gets, the trust checks of class.open, lesson files, the learner's own record and
-- the instructor's view of records/, with files planted where an attacker would plant them (a
-- link, a FIFO, a forged name, a file too large). What takes several accounts (a learner who
-- cannot read another's record) is tests/class_accounts.sh's.
local T = dofile("tests/lua/testlib.lua")
T.plan(39)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local class = require "cudalab.class"

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local function sh(cmd)
  local ok = os.execute(cmd)
  if not ok then error("command failed: " .. cmd, 2) end
end
local function out(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("a")
  p:close()
  return (s:gsub("%s+$", ""))
end
local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end
local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
-- r must be nil and msg contain needle (plain text).
local function refused(needle, r, msg)
  if r ~= nil then error("expected a refusal containing '" .. needle .. "', got " .. tostring(r), 2) end
  if not tostring(msg):find(needle, 1, true) then
    error(string.format("message '%s' does not contain '%s'", tostring(msg), needle), 2)
  end
end

local ME = class.whoami()
local MYGROUP = out("id -gn")
local ROOT = ME.uid == 0
local CONFIG = 'return {title = "GPU 101", lesson_dirs = {"lessons"}}\n'

-- Every folder made here is under one scratch folder, removed at the end.
local SCRATCH = os.tmpname()
os.remove(SCRATCH)
sh("mkdir -m 755 " .. q(SCRATCH))
local made = 0
local function new_path()
  made = made + 1
  return SCRATCH .. "/class" .. made
end
-- A new class folder (group: optional), or nil and why.
local function fresh(group)
  local dir = new_path()
  local ok, why = class.init(dir, group, CONFIG)
  if not ok then return nil, why end
  return dir
end
-- Whether this account's primary group is its own: init refuses to make a class otherwise.
local PROBE, PROBE_WHY = fresh()
local function needs_class(name, f)
  if not PROBE then T.skip(name, "class.init refused here: " .. tostring(PROBE_WHY)) return end
  test(name, f)
end

-- 1. who

test("whoami is the process's account: uid, name and primary group", function()
  checkeq(ME.uid, tonumber(out("id -u")), "uid")
  checkeq(ME.user, out("id -un"), "user")
  checkeq(ME.gid, tonumber(out("id -g")), "gid")
end)

test("bad argument types raise", function()
  checkerr("bad argument #1 to 'cudalab.class.open' (string expected, got nil)", class.open, nil)
  checkerr("bad argument #1 to 'cudalab.class.init' (string expected, got table)", class.init, {}, nil, "")
  checkerr("bad argument #3 to 'cudalab.class.init' (string expected, got no value)", class.init, "/x", nil)
  checkerr("bad argument #2 to 'cudalab.class.init' (string expected, got table)", class.init, "/x", {}, "")
  checkerr("bad argument #1 to 'cudalab.class.eval_config' (string expected, got nil)", class.eval_config, nil)
end)

-- 2. the class.lua sandbox

local eval = class.eval_config

test("eval_config returns a plain copy of the table, nested, with every kind of key", function()
  local t = assert(eval([[
    local base = 2
    return {title = string.format("%s %d", "GPU", 101), n = base ^ 3, i = 7, on = true,
            list = {"a", "b", {deep = {x = 1}}}, [1.5] = "half", [true] = "yes",
            upper = ("x"):upper() .. string.rep("y", 3, "-"), len = #("abc"), big = math.maxinteger}
  ]]))
  checkeq(t.title, "GPU 101")
  checkeq(t.n, 8.0)
  checkeq(math.type(t.i), "integer")
  checkeq(t.on, true)
  checkeq(t.list[3].deep.x, 1)
  checkeq(t[1.5], "half")
  checkeq(t[true], "yes")
  checkeq(t.upper, "Xy-y-y")
  checkeq(t.len, 3)
  checkeq(t.big, math.maxinteger)
end)

test("what reaches outside the state, and the pattern matcher, are not there", function()
  for _, name in ipairs {"load", "loadfile", "dofile", "require", "print", "collectgarbage",
                         "setmetatable", "getmetatable", "xpcall", "io", "os", "debug", "package",
                         "coroutine", "utf8"} do
    local t = assert(eval("return {kind = type(" .. name .. ")}"))
    checkeq(t.kind, "nil", name)
  end
  refused("class.lua:2: attempt to call a nil value (global 'load')", eval("local x = 1\nload('x')"))
  refused("class.lua:1: attempt to index a nil value (global 'os')", eval("os.execute('true')"))
  refused("class.lua:1: attempt to call a nil value (method 'find')", eval("return ('a'):find('a')"))
  refused("class.lua:1: attempt to call a nil value (field 'gsub')", eval("string.gsub('a', 'a', 'b')"))
  refused("class.lua:1: attempt to call a nil value (field 'dump')", eval("string.dump(pairs)"))
  refused("class.lua:1: attempt to call a nil value (field 'move')", eval("table.move({}, 1, 2, 3)"))
end)

test("bytecode is refused: text chunks only", function()
  refused("class.lua: attempt to load a binary chunk (mode is 't')", eval("\27Lua\84\0"))
end)

test("errors keep the chunk's name and line", function()
  refused("class.lua:3: attempt to perform arithmetic on a nil value (global 'y')",
          eval("local x = 1\n\nreturn {z = x + y}"))
  refused("class.lua:3: '}' expected (to close '{' at line 1) near 'b'",
          eval("return {\n  a = 1\n  b = 2}"))
  refused("course.lua:1: boom", eval("error('boom')", "course.lua"))
  refused("course.lua: no position", eval("error('no position', 0)", "course.lua"))
  refused("course.lua must return a table (it returned nil)", eval("local x = 1", "course.lua"))
end)

test("it must return a table", function()
  refused("class.lua must return a table (it returned nil)", eval(""))
  refused("class.lua must return a table (it returned number)", eval("return 3"))
  refused("class.lua must return a table (it returned string)", eval("return 'x'"))
end)

-- The bound is on this process's CPU time, not the wall clock's: on a loaded machine the wall
-- clock runs on while the test waits for a core, and the caps count instructions, not seconds.
test("an endless loop is stopped, even one that catches the error", function()
  local t0 = os.clock()
  refused("class.lua: runs too long (an endless loop?)", eval("while true do end"))
  refused("class.lua: runs too long (an endless loop?)",
          eval("while true do pcall(function() while true do end end) end"))
  refused("class.lua: runs too long (an endless loop?)",
          eval("local function f() return f() end return f()"))
  refused("class.lua: runs too long (an endless loop?)",
          eval("local function f() pcall(f) while true do end end f()"))
  check(os.clock() - t0 < 60, ("the loops took %.1f s of CPU"):format(os.clock() - t0))
end)

test("memory is capped at 4 MiB, and a caught failure stays inside", function()
  refused("class.lua: uses more than 4 MiB of memory", eval("return {s = string.rep('x', 5 << 20)}"))
  refused("class.lua: uses more than 4 MiB of memory",
          eval("local t = {} for i = 1, 1e7 do t[i] = i end return t"))
  refused("class.lua: uses more than 4 MiB of memory",
          eval("local s = 'x' while true do s = s .. s end"))
  refused("class.lua: uses more than 4 MiB of memory",
          eval("local ok, e = pcall(string.rep, 'x', 1 << 30) error(e)"))
  local t = assert(eval("local ok = pcall(string.rep, 'x', 1 << 30) return {ok = ok}"))
  checkeq(t.ok, false)
  -- within the cap is fine
  checkeq(#assert(eval("return {s = string.rep('x', 1 << 20)}")).s, 1 << 20)
end)

test("string.rep of nothing does not loop for ever", function()
  checkeq(assert(eval("return {s = (''):rep(math.maxinteger)}")).s, "")
  checkeq(assert(eval("return {s = string.rep('', math.maxinteger, '')}")).s, "")
  refused("class.lua:1: bad argument #2 to 'rep'", eval("return {s = string.rep('x', 'many')}"))
end)

test("deep recursion and deep nesting end in an error, not a crash", function()
  local r, msg = eval("local function f() return 1 + f() end return {f()}")
  checkeq(r, nil)
  check(msg:find("^class%.lua") and (msg:find("stack overflow") or msg:find("4 MiB")), msg)
  r, msg = eval("return " .. string.rep("(", 10000) .. "1" .. string.rep(")", 10000))
  checkeq(r, nil)
  check(msg:find("^class%.lua:.*overflow"), msg)
  r, msg = eval("return " .. string.rep("{", 5000) .. string.rep("}", 5000))
  checkeq(r, nil)
  check(msg:find("^class%.lua:.*overflow"), msg)
end)

test("error objects that are not messages", function()
  refused("class.lua: raised an error that is not a message (a table)", eval("error({code = 1})"))
  refused("class.lua: raised an error that is not a message (a nil)", eval("error()"))
  refused("class.lua: raised an error that is not a message (a boolean)", eval("error(false)"))
end)

test("only plain data comes back: functions and tables as keys are named", function()
  refused("class.lua: the value at lessons[2].check is a function",
          eval("return {lessons = {1, {check = function() end}}}"))
  refused("class.lua: the value at f is a function", eval("return {f = pairs}"))
  refused("class.lua: a table is used as a key in x", eval("return {x = {[{}] = 1}}"))
  refused('class.lua: the value at ["a b"] is a function', eval("return {['a b'] = next}"))
end)

test("tables nest at most 8 deep; a table that holds itself is refused", function()
  local eight = "return " .. string.rep("{", 8) .. "1" .. string.rep("}", 8)
  checkeq(assert(eval(eight))[1][1][1][1][1][1][1][1], 1)
  refused("class.lua: tables nest deeper than 8 levels at [1][1][1][1][1][1][1][1]",
          eval("return " .. string.rep("{", 9) .. "1" .. string.rep("}", 9)))
  refused("class.lua: tables nest deeper than 8 levels at me.me.me.me.me.me.me.me",
          eval("local t = {} t.me = t return t"))
end)

test("at most 10000 values in all", function()
  checkeq(#assert(eval("local t = {} for i = 1, 10000 do t[i] = i end return t")), 10000)
  refused("class.lua: returns more than 10000 values",
          eval("local t = {} for i = 1, 10001 do t[i] = i end return t"))
  refused("class.lua: returns more than 10000 values",
          eval("local t = {} for i = 1, 100 do t[i] = {} for j = 1, 101 do t[i][j] = j end end return t"))
end)

test("a shared subtable is copied, not referenced across states", function()
  local t = assert(eval("local s = {1} return {a = s, b = s}"))
  checkeq(t.a[1], 1)
  checkeq(t.b[1], 1)
end)

-- 3. init

needs_class("init lays the folder out: owner, groups and modes", function()
  local dir = PROBE
  checkeq(out("stat -c '%a %u %g' " .. q(dir)), "755 " .. ME.uid .. " " .. ME.gid, "DIR")
  checkeq(out("stat -c '%a %g' " .. q(dir .. "/class.lua")), "644 " .. ME.gid, "class.lua")
  checkeq(out("stat -c '%a %g' " .. q(dir .. "/lessons")), "755 " .. ME.gid, "lessons")
  checkeq(out("stat -c '%a %u %g' " .. q(dir .. "/records")), "3773 " .. ME.uid .. " " .. ME.gid,
          "records")
  checkeq(read(dir .. "/class.lua"), CONFIG)
end)

needs_class("init with a group: the folder is the group's alone", function()
  local dir = assert(fresh(MYGROUP))
  checkeq(out("stat -c '%a %G' " .. q(dir)), "750 " .. MYGROUP, "DIR")
  checkeq(out("stat -c '%a %G' " .. q(dir .. "/class.lua")), "640 " .. MYGROUP, "class.lua")
  checkeq(out("stat -c '%a %G' " .. q(dir .. "/lessons")), "750 " .. MYGROUP, "lessons")
  checkeq(out("stat -c '%a %g' " .. q(dir .. "/records")), "3773 " .. ME.gid, "records")
  local h <close> = assert(class.open(dir))
  checkeq(h:info().restricted, true)
  checkeq(h:info().group, MYGROUP)
end)

needs_class("init refuses a folder that is not empty, and takes an empty one of yours", function()
  refused("exists and is not empty; init makes a class in a new folder", class.init(PROBE, nil, "x"))
  local dir = new_path()
  sh("mkdir -m 700 " .. q(dir))
  assert(class.init(dir, nil, CONFIG))
  checkeq(out("stat -c '%a' " .. q(dir)), "755")
  local link = new_path()
  sh("ln -s " .. q(dir) .. " " .. q(link))
  refused("exists and is not a folder (a symbolic link or a file?)", class.init(link, nil, CONFIG))
  refused("cannot make the folder " .. SCRATCH .. "/none/x", class.init(SCRATCH .. "/none/x", nil, ""))
end)

needs_class("init refuses an unknown group, and one the caller is not in", function()
  refused("there is no group named 'cltest_no_such_group'",
          class.init(new_path(), "cltest_no_such_group", CONFIG))
  if not ROOT and not out("id -Gn"):find("%f[%w]root%f[%W]") then
    refused("you (" .. ME.user .. ") are not a member of the group root",
            class.init(new_path(), "root", CONFIG))
  end
  refused("class.lua's text is larger than 64 KiB", class.init(new_path(), nil, string.rep("-", 65537)))
end)

-- 4. open and its trust checks

needs_class("open: info and the course", function()
  local h = assert(class.open(PROBE .. "//"))
  local i = h:info()
  checkeq(i.dir, PROBE)
  checkeq(i.owner_uid, ME.uid)
  checkeq(i.owner, ME.user)
  checkeq(i.gid, ME.gid)
  checkeq(i.restricted, false)
  checkeq(h:read_config(), CONFIG)
  check(tostring(h):find("cudalab.ClassDir (" .. PROBE .. ")", 1, true), tostring(h))
  h:close()
end)

needs_class("open refuses what is not a class folder", function()
  refused("there is no class folder at " .. SCRATCH .. "/nothing", class.open(SCRATCH .. "/nothing"))
  local dir = new_path()
  sh("mkdir " .. q(dir))
  refused(dir .. " has no class.lua, so it is not a class folder", class.open(dir))
  write(dir .. "/class.lua", "return {}")
  refused(dir .. "/records is missing", class.open(dir))
  sh("mkdir " .. q(dir .. "/records"))
  refused(dir .. "/records has no sticky bit (mode 0755)", class.open(dir))
  refused(dir .. "/records has no sticky bit", class.open(dir))
  check(select(2, class.open(dir)):find("chmod +t " .. dir .. "/records", 1, true))
end)

needs_class("open refuses a class.lua or DIR that others can write, naming the fix", function()
  local dir = assert(fresh())
  sh("chmod o+w " .. q(dir .. "/class.lua"))
  refused(dir .. "/class.lua can be written by anyone (mode 0646)", class.open(dir))
  refused("chmod go-w " .. dir .. "/class.lua", class.open(dir))
  sh("chmod 644 " .. q(dir .. "/class.lua") .. " && chmod g+w " .. q(dir))
  refused(dir .. " can be written by its group (mode 0775)", class.open(dir))
  sh("chmod 755 " .. q(dir) .. " && chmod 777 " .. q(dir .. "/lessons"))
  refused(dir .. "/lessons can be written by anyone (mode 0777)", class.open(dir))
  sh("chmod 755 " .. q(dir .. "/lessons"))
  assert(class.open(dir))
end)

needs_class("open refuses a class.lua that is a link, a FIFO or too large, without hanging", function()
  local dir = assert(fresh())
  local cfg = dir .. "/class.lua"
  sh("mv " .. q(cfg) .. " " .. q(dir .. "/real.lua") .. " && ln -s real.lua " .. q(cfg))
  refused(cfg .. " is a symbolic link, which is never followed", class.open(dir))
  sh("rm " .. q(cfg) .. " && mkfifo -m 644 " .. q(cfg))
  refused(cfg .. " is not a regular file (a FIFO, a device or a folder?)", class.open(dir))
  sh("rm " .. q(cfg))
  write(cfg, string.rep("-", 65537))
  refused(cfg .. " is larger than 64 KiB (65537 bytes)", class.open(dir))
  write(cfg, string.rep("-", 65536))
  assert(class.open(dir))
end)

needs_class("records/ must be a real folder of the instructor's", function()
  local dir = assert(fresh())
  sh("mv " .. q(dir .. "/records") .. " " .. q(dir .. "/elsewhere") .. " && ln -s elsewhere " ..
     q(dir .. "/records"))
  refused(dir .. "/records is not a folder (a symbolic link?)", class.open(dir))
  if ROOT then
    sh("rm " .. q(dir .. "/records") .. " && mv " .. q(dir .. "/elsewhere") .. " " ..
       q(dir .. "/records") .. " && chown 65534 " .. q(dir .. "/records"))
    refused(dir .. "/records belongs to uid 65534", class.open(dir))
  end
end)

needs_class("read_config checks class.lua again when it reads it", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  sh("chmod 666 " .. q(dir .. "/class.lua"))
  refused(dir .. "/class.lua can be written by anyone (mode 0666)", h:read_config())
  sh("chmod 644 " .. q(dir .. "/class.lua"))
  checkeq(h:read_config(), CONFIG)
  if ROOT then
    sh("chown 65534 " .. q(dir .. "/class.lua"))
    refused(dir .. "/class.lua belongs to uid 65534", h:read_config())
    refused("not to the class's instructor (uid 0", h:read_config())
  end
end)

-- 5. lesson files

needs_class("lesson_files: the NN-name.md files, sorted, bad ones skipped with a warning", function()
  local dir = assert(fresh())
  local L = dir .. "/lessons/"
  write(L .. "02-more.md", "# more\n")
  write(L .. "01-intro.md", "# intro\n")
  write(L .. "10-a_b-c.md", "# ten\n")
  write(L .. "notes.txt", "not a lesson")
  write(L .. "3-short.md", "not a lesson")
  write(L .. "04-dot.x.md", "not a lesson")
  write(L .. "secret", "the instructor's")
  sh("ln -s secret " .. q(L .. "03-link.md"))
  sh("mkfifo -m 644 " .. q(L .. "05-fifo.md"))
  write(L .. "06-big.md", string.rep("x", (1 << 20) + 1))
  write(L .. "07-open.md", "anyone's")
  sh("chmod 666 " .. q(L .. "07-open.md"))
  local files, warnings = assert(dir and class.open(dir)):lesson_files("lessons")
  checkeq(#files, 3, "files")
  checkeq(files[1].name, "01-intro.md")
  checkeq(files[1].text, "# intro\n")
  checkeq(files[2].name, "02-more.md")
  checkeq(files[3].name, "10-a_b-c.md")
  checkeq(files[3].text, "# ten\n")
  local w = table.concat(warnings, "\n")
  checkeq(#warnings, 4, w)
  check(w:find(L .. "03-link.md is a symbolic link, which is never followed", 1, true), w)
  check(w:find(L .. "05-fifo.md is not a regular file", 1, true), w)
  check(w:find(L .. "06-big.md is larger than 1 MiB (1048577 bytes)", 1, true), w)
  check(w:find(L .. "07-open.md can be written by anyone (mode 0666)", 1, true), w)
  check(w:find("chmod go-w " .. L .. "07-open.md", 1, true), w)
end)

needs_class("lesson_files: relative paths stay inside the class folder", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  sh("mkdir -p " .. q(dir .. "/lessons/extra") .. " && mkdir -m 755 " .. q(dir .. "/outside"))
  write(dir .. "/lessons/extra/01-x.md", "x")
  checkeq(h:lesson_files("lessons/extra")[1].text, "x")
  checkeq(h:lesson_files("./lessons/./extra")[1].text, "x")
  checkeq(#h:lesson_files("lessons"), 0)
  refused("the lesson folder '../outside' goes up with '..'", h:lesson_files("../outside"))
  refused("the lesson folder 'lessons/../..' goes up with '..'", h:lesson_files("lessons/../.."))
  refused("the lesson folder 'lessons//extra' has an empty component", h:lesson_files("lessons//extra"))
  refused("the lesson folder 'lessons/' has an empty component", h:lesson_files("lessons/"))
  refused("the lesson folder's path is empty", h:lesson_files(""))
  refused(dir .. "/nope does not exist", h:lesson_files("nope"))
  sh("ln -s " .. q(SCRATCH) .. " " .. q(dir .. "/linked"))
  refused(dir .. "/linked is a symbolic link, which is never followed inside a class folder",
          h:lesson_files("linked"))
  sh("chmod 777 " .. q(dir .. "/lessons/extra"))
  refused(dir .. "/lessons/extra can be written by anyone (mode 0777)", h:lesson_files("lessons/extra"))
  checkerr("bad argument #2 to '?' (string expected, got no value)", h.lesson_files, h)
end)

needs_class("lesson_files: an absolute path is used as given, its files checked", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  local shared = new_path()
  sh("mkdir -m 755 " .. q(shared))
  write(shared .. "/01-shared.md", "shared")
  sh("ln -s 01-shared.md " .. q(shared .. "/02-link.md"))
  local files, warnings = assert(h:lesson_files(shared))
  checkeq(#files, 1)
  checkeq(files[1].text, "shared")
  checkeq(#warnings, 1)
  check(warnings[1]:find(shared .. "/02-link.md is a symbolic link", 1, true), warnings[1])
  -- a link to the folder is the instructor's to write
  sh("ln -s " .. q(shared) .. " " .. q(shared .. "-link"))
  checkeq(#h:lesson_files(shared .. "-link/"), 1)
  sh("chmod 777 " .. q(shared))
  refused(shared .. " can be written by anyone (mode 0777)", h:lesson_files(shared))
end)

-- 6. the learner's own record

needs_class("write_record and read_own_record: none, then the latest, private", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  checkeq(h:read_own_record(), false)
  assert(h:write_record('{"n": 1}'))
  checkeq(h:read_own_record(), '{"n": 1}')
  assert(h:write_record('{"n": 2}'))
  checkeq(h:read_own_record(), '{"n": 2}')
  local file = dir .. "/records/" .. ME.uid .. ".json"
  checkeq(read(file), '{"n": 2}')
  checkeq(out("stat -c '%a %u %g' " .. q(file)), "640 " .. ME.uid .. " " .. ME.gid)
  -- no temporary left behind
  checkeq(out("ls -A " .. q(dir .. "/records")), ME.uid .. ".json")
  assert(h:write_record(""))
  checkeq(h:read_own_record(), "")
  checkerr("bad argument #2 to '?' (string expected, got nil)", h.write_record, h, nil)
end)

needs_class("a record larger than 8 MiB is refused, 8 MiB is not", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  refused("a record is at most 8 MiB (this one is 8388609 bytes)", h:write_record(string.rep("x", (8 << 20) + 1)))
  checkeq(h:read_own_record(), false)
  assert(h:write_record(string.rep("x", 8 << 20)))
  checkeq(#h:read_own_record(), 8 << 20)
end)

-- A folder group other than the writer's own shows whether setgid is at work: root may give
-- records/ any group.
if ROOT then
  needs_class("records/ without its setgid bit: the record is not written", function()
    local dir = assert(fresh())
    sh("chgrp 65534 " .. q(dir .. "/records") .. " && chmod g-s " .. q(dir .. "/records"))
    local h <close> = assert(class.open(dir))
    refused("its setgid bit is missing?), so your record would not be private", h:write_record("x"))
    refused("chmod g+s " .. dir .. "/records", h:write_record("x"))
    checkeq(out("ls -A " .. q(dir .. "/records")), "", "temporary removed")
    sh("chmod 3773 " .. q(dir .. "/records"))
    assert(h:write_record("x"))
    checkeq(out("stat -c '%a %g' " .. q(dir .. "/records/0.json")), "640 65534")
  end)
else
  T.skip("records/ without its setgid bit: the record is not written",
         "needs root to give records/ a group other than the caller's")
end

-- 7. the instructor's view

needs_class("records: the instructor's list, by owner, with planted entries flagged", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  assert(h:write_record("mine"))
  local R = dir .. "/records/"
  write(R .. "99999.json", "claims to be uid 99999")
  sh("ln -s /etc/passwd " .. q(R .. "1.json"))
  sh("mkfifo " .. q(R .. "2.json"))
  write(R .. "notes.txt", "junk")
  local list, skipped = assert(h:records())
  local by = {}
  for _, r in ipairs(list) do by[r.file] = r end
  checkeq(#list, 4, "notes.txt is counted, not listed")
  checkeq(by[ME.uid .. ".json"].text, "mine")
  checkeq(by[ME.uid .. ".json"].uid, ME.uid)
  checkeq(by[ME.uid .. ".json"].user, ME.user)
  checkeq(by["99999.json"].text, nil)
  checkeq(by["99999.json"].uid, ME.uid, "the owner, not the name")
  check(by["99999.json"].problem:find("owned by uid " .. ME.uid .. " (" .. ME.user .. "), not uid 99999", 1, true),
        by["99999.json"].problem)
  check(by["99999.json"].problem:find(": ignored$"), by["99999.json"].problem)
  checkeq(by["1.json"].text, nil)
  check(by["1.json"].problem:find("symbolic link", 1, true), by["1.json"].problem)
  check(by["2.json"].problem:find("not a regular file", 1, true), by["2.json"].problem)
  checkeq(skipped.names, 1, "notes.txt: not a record's name")
  checkeq(skipped.total, 1)
  for i = 2, #list do
    check(list[i - 1].uid < list[i].uid or (list[i - 1].uid == list[i].uid and list[i - 1].file < list[i].file),
          "sorted by uid then name")
  end
end)

needs_class("records: temporaries are not listed; a day-old one is swept", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  local R = dir .. "/records/"
  write(R .. ".12345.999999.0123456789abcdef.tmp", "old")
  sh("touch -d '2 days ago' " .. q(R .. ".12345.999999.0123456789abcdef.tmp"))
  write(R .. ".12345.999998.0123456789abcdee.tmp", "fresh")
  checkeq(#assert(h:records()), 0)
  checkeq(read(R .. ".12345.999999.0123456789abcdef.tmp"), nil, "the old one is gone")
  checkeq(read(R .. ".12345.999998.0123456789abcdee.tmp"), "fresh", "a fresh one stays")
  -- the caller's own, of a dead process, after a minute
  local own = R .. "." .. ME.uid .. ".999997.00000000000000ab.tmp"
  write(own, "killed")
  sh("touch -d '5 minutes ago' " .. q(own))
  assert(h:write_record("x"))
  checkeq(read(own), nil, "own dead temporary swept by a write")
end)

needs_class("records: a record larger than 8 MiB is flagged, not read", function()
  local dir = assert(fresh())
  local h <close> = assert(class.open(dir))
  write(dir .. "/records/" .. ME.uid .. ".json", string.rep("x", (8 << 20) + 1))
  local r = assert(h:records())[1]
  checkeq(r.text, nil)
  check(r.problem:find("larger than 8 MiB (8388609 bytes): ignored", 1, true), r.problem)
  sh("chmod 666 " .. q(dir .. "/records/" .. ME.uid .. ".json"))
  write(dir .. "/records/" .. ME.uid .. ".json", "x")
  r = assert(h:records())[1]
  check(r.problem:find("writable by anyone (mode 0666)", 1, true), r.problem)
end)

if ROOT then
  test("a squatted record name: the learner moves to <uid>.1.json, the squatter is flagged", function()
    local dir = assert(fresh())
    local h <close> = assert(class.open(dir))
    local R = dir .. "/records/"
    write(R .. "0.json", "forged")
    sh("chown 65534 " .. q(R .. "0.json"))
    checkeq(h:read_own_record(), false, "the squatted file is not the learner's")
    assert(h:write_record("real"))
    checkeq(read(R .. "0.1.json"), "real")
    checkeq(read(R .. "0.json"), "forged")
    checkeq(h:read_own_record(), "real")
    assert(h:write_record("again"))
    checkeq(read(R .. "0.1.json"), "again", "stays in the same slot")
    local list = assert(h:records())
    checkeq(#list, 2)
    checkeq(list[1].file, "0.1.json")
    checkeq(list[1].text, "again")
    checkeq(list[2].uid, 65534)
    check(list[2].problem:find("owned by uid 65534", 1, true) and list[2].problem:find("not uid 0 (root): ignored", 1, true),
          list[2].problem)
  end)
else
  T.skip("a squatted record name: the learner moves to <uid>.1.json, the squatter is flagged",
         "needs root to plant another account's file (tests/class_accounts.sh does it with accounts)")
end

if ROOT then
  T.skip("records() is refused when records/ cannot be listed",
         "root can list any folder (tests/class_accounts.sh checks it as a learner)")
else
  needs_class("records() is refused when records/ cannot be listed", function()
    local dir = assert(fresh())
    local h <close> = assert(class.open(dir))
    sh("chmod 3333 " .. q(dir .. "/records"))
    refused("only the class's instructor can read its records (" .. dir ..
            "/records cannot be listed by " .. ME.user .. ")", h:records())
  end)
end

-- 8. the handle

needs_class("the handle closes once, on close(), <close> or collection", function()
  local h = assert(class.open(PROBE))
  h:close()
  h:close()
  check(tostring(h):find("(closed)", 1, true), tostring(h))
  checkerr("attempt to use a closed class folder", h.read_config, h)
  checkerr("attempt to use a closed class folder", h.records, h)
  checkerr("attempt to use a closed class folder", h.info, h)
  checkerr("bad argument #1 to '?' (cudalab.ClassDir expected, got table)", h.info, {})
  local kept
  do
    local h2 <close> = assert(class.open(PROBE))
    kept = h2
  end
  check(tostring(kept):find("(closed)", 1, true), "closed at the end of its scope")
  for _ = 1, 200 do class.open(PROBE) end -- left to the collector: no descriptor leaks
  collectgarbage()
  assert(class.open(PROBE)):close()
end)

-- What the class module leaks is a descriptor into the class folder (the folder itself, a
-- record, a lesson, a temporary file), so that is what is counted: descriptors of this process
-- whose target lies in the folder, before and after. Counting all of them once failed on a
-- loaded machine (9, want 8): other threads of the engine open files of their own meanwhile.
needs_class("no descriptors into the class folder are left open", function()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("n")
  f:close()
  local dir = assert(fresh())
  local real = out("realpath " .. q(dir))
  local function held() -- the targets of this process's descriptors that lie in the folder
    local list = out("cd /proc/" .. pid .. "/fd && for d in *; do readlink \"$d\"; done")
    local inside = {}
    for target in list:gmatch("[^\n]+") do
      if target == real or target:sub(1, #real + 1) == real .. "/" then inside[#inside + 1] = target end
    end
    return inside
  end
  write(dir .. "/lessons/01-a.md", "a")
  do -- the count can see a descriptor the module holds
    local h <close> = assert(class.open(dir))
    local open = held()
    check(#open >= 1, "an open class folder holds a descriptor into it: " .. table.concat(open, ", "))
  end
  checkeq(#held(), 0, "closed, none")
  for _ = 1, 50 do
    local h <close> = assert(class.open(dir))
    assert(h:write_record("x"))
    assert(h:read_own_record())
    assert(h:records())
    assert(h:lesson_files("lessons"))
    assert(h:read_config())
    h:lesson_files("../x")
  end
  for _ = 1, 50 do class.open(dir .. "/nothing") end
  collectgarbage()
  local left = held()
  checkeq(#left, 0, "left open: " .. table.concat(left, ", "))
end)

sh("rm -rf " .. q(SCRATCH))
return T.done()
