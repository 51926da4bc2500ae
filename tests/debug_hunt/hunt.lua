-- hunt.lua: what each bug's driver shares: where the kernels are, and the check of a result
-- against the CPU's that shows a learner something is wrong (the first element that differs).
local hunt = {}
hunt.dir = "tests/debug_hunt/"

function hunt.kernel(file, name)
  if name then return cuda.module(hunt.dir .. file)[name] end
  return cuda.kernel(hunt.dir .. file)
end

-- hunt.check(what, got, want [, tol]): got is a cuda array, want a Lua list of the CPU's values
-- (want[1] is element 0). Prints "right" or where the first difference is, and returns whether
-- they agree.
function hunt.check(what, got, want, tol)
  tol = tol or 0
  local bad, first = 0, nil
  for i = 1, #want do
    local g, w = got[i - 1], want[i]
    if not (math.abs(g - w) <= tol * math.max(1, math.abs(w))) then
      bad = bad + 1
      first = first or i - 1
    end
  end
  if bad == 0 then
    print(what .. ": right")
    return true
  end
  print(string.format("%s: WRONG, %d of %d elements differ; %s[%d] is %s, the CPU says %s", what,
    bad, #want, what, first, tostring(got[first]), tostring(want[first + 1])))
  return false
end

-- hunt.list(n, f): the Lua list {f(0), ..., f(n - 1)}, for a CPU reference or cuda.array.
function hunt.list(n, f)
  local t = {}
  for i = 0, n - 1 do t[i + 1] = f(i) end
  return t
end

return hunt
