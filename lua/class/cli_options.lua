-- cli_options.lua: the command-line options of the instructor's commands
-- (class_cli.lua, grade.lua), each command naming the kinds of its own.

local M = {}

-- Parses args[first..] as options: spec = {["--x"] = "value"|"flag"|"optional number"|
-- "int"|"int0"} (whole numbers of 1 or more, of 0 or more; "-j4" is "-j 4"). Returns opts,
-- positional arguments; or nil, why.
function M.parse(args, first, spec)
  local opts, pos = {}, {}
  local i = first
  while i <= #args do
    local a = args[i]
    local short, digits = a:match("^(%-%a)(%d+)$")
    if short and spec[short] == "int" then
      opts[short] = tonumber(digits)
    elseif a == "-h" or a == "--help" then
      opts.help = true
    elseif a:sub(1, 1) == "-" and #a > 1 then
      local kind = spec[a]
      if not kind then return nil, "unknown option '" .. a .. "'" end
      if kind == "flag" then
        opts[a] = true
      elseif kind == "value" then
        i = i + 1
        if not args[i] then return nil, "'" .. a .. "' needs a value" end
        opts[a] = args[i]
      elseif kind == "int" or kind == "int0" then
        i = i + 1
        local v = math.tointeger(tonumber(args[i]))
        local least = kind == "int" and 1 or 0
        if not v or v < least or v > 100000 then
          return nil, string.format("'%s' needs a whole number of %d or more", a, least)
        end
        opts[a] = v
      elseif kind == "optional number" then
        opts[a] = true
        if args[i + 1] and tonumber(args[i + 1]) then
          i = i + 1
          opts[a] = tonumber(args[i])
        end
      end
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  return opts, pos
end

return M
