-- test_requires.lua: the modules of lua/ require each other without a loop,
-- so that they can be read (and loaded) from the bottom up. The check reads
-- the source, not a running state: every literal require "x", require 'x',
-- require("x") and require('x') outside comments counts, at load time or
-- inside a function alike, since a require in a function is a dependency all
-- the same. Modules outside lua/ (cudalab.class, the fake cuda) are not
-- edges.

-- src with its comments blanked (strings kept), so that a require named in a
-- comment is no edge and "--grade" in a string does not hide the rest of its
-- line. Knows Lua's short strings, long brackets and both kinds of comment.
local function code_of(src)
  local out, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    local level = src:match("^%[(=*)%[", i)
    if src:sub(i, i + 1) == "--" then
      local long = src:match("^%-%-%[(=*)%[", i)
      local stop
      if long then
        local _, e = src:find("]" .. long .. "]", i, true)
        stop = e or n
      else
        stop = (src:find("\n", i, true) or n + 1) - 1
      end
      out[#out + 1] = src:sub(i, stop):gsub("[^\n]", " ")
      i = stop + 1
    elseif level then
      local _, e = src:find("]" .. level .. "]", i, true)
      out[#out + 1] = src:sub(i, e or n)
      i = (e or n) + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and src:sub(j, j) ~= c and src:sub(j, j) ~= "\n" do
        j = j + (src:sub(j, j) == "\\" and 2 or 1)
      end
      out[#out + 1] = src:sub(i, j)
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

-- The modules each module requires: sources = {name = text} -> {name = {names}}, only names
-- that are keys of sources, each once, sorted.
local function edges_of(sources)
  local edges = {}
  for name, src in pairs(sources) do
    local seen, list = {}, {}
    local code = code_of(src)
    for _, pat in ipairs({ "require%s*%(?%s*\"([%w_%.]+)\"", "require%s*%(?%s*'([%w_%.]+)'" }) do
      for dep in code:gmatch(pat) do
        if sources[dep] and not seen[dep] then seen[dep] = true; list[#list + 1] = dep end
      end
    end
    table.sort(list)
    edges[name] = list
  end
  return edges
end

-- The first require loop found, as "a -> b -> a", or nil when the requires
-- form a DAG. Depth first from each module in name order, so the answer is
-- the same on every run.
local function find_loop(edges)
  local state, path = {}, {} -- state: nil unseen, 1 on the path, 2 done
  local function visit(m)
    state[m] = 1
    path[#path + 1] = m
    for _, d in ipairs(edges[m]) do
      if state[d] == 1 then
        local from
        for k, p in ipairs(path) do if p == d then from = k end end
        local loop = table.move(path, from, #path, 1, {})
        loop[#loop + 1] = d
        return table.concat(loop, " -> ")
      end
      if not state[d] then
        local found = visit(d)
        if found then return found end
      end
    end
    path[#path] = nil
    state[m] = 2
  end
  local names = {}
  for m in pairs(edges) do names[#names + 1] = m end
  table.sort(names)
  for _, m in ipairs(names) do
    if not state[m] then
      local found = visit(m)
      if found then return found end
    end
  end
  return nil
end

-- lua/'s modules, in lua/ and its folders: {name = source}, the count, and
-- {name = path}.
local function lua_sources()
  local p = assert(io.popen("ls lua/*.lua lua/*/*.lua"))
  local sources, paths, count = {}, {}, 0
  for path in p:lines() do
    local f = assert(io.open(path, "rb"))
    local name = path:match("([^/]+)%.lua$")
    sources[name] = f:read("a")
    f:close()
    count = count + 1
    paths[name] = paths[name] and paths[name] .. " and " .. path or path
  end
  p:close()
  return sources, count, paths
end

test("the loop finder sees every form of require, and no require in a comment", function()
  local edges = edges_of({
    a = 'local b = require "b"\nlocal c = require(\'c\')\n-- require "d"\n',
    b = 'if x == "--b" then return require("c").f() end',
    c = '--[==[ require "a" ]==]\nlocal s = [[ -- ]] local d = require \'d\'',
    d = 'local cls = require "cudalab.class"',
  })
  checkeq(edges.a, { "b", "c" })
  checkeq(edges.b, { "c" })
  checkeq(edges.c, { "d" })
  checkeq(edges.d, {})
  checkeq(find_loop(edges), nil)
end)

test("the loop finder names a loop, at load time or inside a function", function()
  checkeq(find_loop(edges_of({
    a = 'local b = require "b"',
    b = 'local function f() return require("c").g() end',
    c = 'local a = require("a")',
  })), "a -> b -> c -> a")
  checkeq(find_loop(edges_of({ x = 'return require "x"' })), "x -> x")
end)

test("lua/'s modules require each other without a loop", function()
  local sources, count = lua_sources()
  check(count >= 40 and sources.init and sources.grade,
    "read lua/ and its folders from the root: " .. count)
  local edges = edges_of(sources)
  check(#edges.grade > 0, "grade.lua's requires are seen")
  local loop = find_loop(edges)
  check(loop == nil, "a require loop among lua/'s modules: " .. tostring(loop))
end)

-- Modules keep plain names (require "grade") because each folder of lua/ is on
-- package.path: a name in two folders would load whichever comes first, and a
-- folder missing from the path would hide its modules.
test("each of lua/'s modules has its own name and is found on the path", function()
  local _, count, paths = lua_sources()
  local seen = 0
  for name, path in pairs(paths) do
    check(not path:find(" and ", 1, true), "two modules named " .. name .. ": " .. path)
    checkeq(package.searchpath(name, package.path), path)
    seen = seen + 1
  end
  checkeq(seen, count)
end)

test("the engine puts exactly lua/'s folders on the path", function()
  local f = assert(io.open("repl/engine/interp.c", "rb"))
  local list = assert(f:read("a"):match("LUA_FOLDERS%[%] = (%b{})"), "LUA_FOLDERS in interp.c")
  f:close()
  local engine = {}
  for folder in list:gmatch('"([^"]*)"') do engine[#engine + 1] = "lua/" .. folder end
  local p = assert(io.popen("ls -d lua/ lua/*/"))
  local here = {}
  for dir in p:lines() do here[#here + 1] = dir end
  p:close()
  table.sort(engine)
  table.sort(here)
  checkeq(engine, here)
end)
