-- files_dirs.lua: the folder functions of require "cudalab.files" (repl/bind/bind_files.c) the
-- grader and lesson verification make their folders with: mkdtemp (private, unguessable,
-- checked), mkdir (never an existing folder), chmod (never through a link), chown and list; each bad
-- argument with its message.
local T = dofile("tests/lua/testlib.lua")
T.plan(6)
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
local files = require "cudalab.files"

local function mode_of(path)
  local p = assert(io.popen("stat -c %a '" .. path .. "'"))
  local m = p:read("l")
  p:close()
  return m
end

test("mkdtemp makes a fresh private folder each time, under TMPDIR", function()
  local a = assert(files.mkdtemp("cl-files"))
  local b = assert(files.mkdtemp("cl-files"))
  check(a ~= b, "two calls gave one folder: " .. a)
  check(a:match("^/[^\n]*/cl%-files%-%w%w%w%w%w%w$"), a)
  checkeq(mode_of(a), "700")
  os.execute("rmdir '" .. a .. "' '" .. b .. "'")
end)

test("mkdtemp refuses a prefix that is not a plain name", function()
  checkerr("the prefix must be a plain name (no '/') of at most 64 bytes", files.mkdtemp, "a/b")
  checkerr("the prefix must be a plain name", files.mkdtemp, "")
  checkerr("the prefix must be a plain name", files.mkdtemp, ("x"):rep(65))
  checkerr("string expected, got table", files.mkdtemp, {})
end)

test("mkdir never takes a folder that is there already, and says why", function()
  local d = assert(files.mkdtemp("cl-files"))
  checkeq(files.mkdir(d .. "/sub", tonumber("700", 8)), true)
  checkeq(mode_of(d .. "/sub"), "700")
  local ok, why = files.mkdir(d .. "/sub")
  checkeq(ok, nil)
  checkeq(why, "cannot make the folder " .. d .. "/sub (File exists)")
  checkerr("a mode from 0 to 07777", files.mkdir, d .. "/x", -1)
  checkerr("a mode from 0 to 07777", files.mkdir, d .. "/x", 4096)
  checkerr("number has no integer representation", files.mkdir, d .. "/x", 0.5)
  os.execute("rm -rf '" .. d .. "'")
end)

test("chmod sets a mode, and refuses a symbolic link rather than follow it", function()
  local d = assert(files.mkdtemp("cl-files"))
  checkeq(files.chmod(d, tonumber("711", 8)), true)
  checkeq(mode_of(d), "711")
  os.execute("ln -s /etc '" .. d .. "/link'")
  local ok, why = files.chmod(d .. "/link", tonumber("777", 8))
  checkeq(ok, nil)
  checkeq(why, "cannot change the mode of " .. d .. "/link (it is a symbolic link)")
  ok, why = files.chmod(d .. "/missing", 448)
  checkeq(why, "cannot change the mode of " .. d .. "/missing (No such file or directory)")
  checkerr("a mode from 0 to 07777", files.chmod, d, 99999)
  checkerr("number expected, got no value", files.chmod, d)
  os.execute("rm -rf '" .. d .. "'")
end)

test("chown gives a folder away (as root), never a link's target, and checks its ids", function()
  local d = assert(files.mkdtemp("cl-files"))
  checkerr("a user id from 0 to 4294967294", files.chown, d, -1)
  checkerr("a group id from 0 to 4294967294, or -1", files.chown, d, 0, -2)
  local p = io.popen("id -u")
  local root = p:read("l") == "0"
  p:close()
  if root then
    checkeq(files.chown(d, 65534), true)
    local q = io.popen("stat -c %u '" .. d .. "'")
    checkeq(q:read("l"), "65534")
    q:close()
  else
    local ok, why = files.chown(d, 0)
    checkeq(ok, nil)
    check(why:find("cannot give " .. d .. " to its new owner", 1, true), why)
  end
  os.execute("rm -rf '" .. d .. "'")
end)

test("list names a folder's entries, and refuses a link, a file and a missing folder", function()
  local d = assert(files.mkdtemp("cl-files"))
  os.execute("touch '" .. d .. "/a' '" .. d .. "/.hidden' && mkdir '" .. d .. "/sub'")
  local names = assert(files.list(d))
  table.sort(names)
  checkeq(table.concat(names, " "), ".hidden a sub")
  checkeq(#assert(files.list(d .. "/sub")), 0)
  os.execute("ln -s /etc '" .. d .. "/link'")
  local ok, why, errno = files.list(d .. "/link")
  checkeq(ok, nil)
  checkeq(why, "cannot list " .. d .. "/link (it is a symbolic link)")
  ok, why = files.list(d .. "/a")
  checkeq(why, "cannot list " .. d .. "/a (Not a directory)")
  ok, why, errno = files.list(d .. "/missing")
  checkeq(why, "cannot list " .. d .. "/missing (No such file or directory)")
  checkeq(errno, 2)
  checkerr("string expected, got no value", files.list)
  os.execute("rm -rf '" .. d .. "'")
end)
