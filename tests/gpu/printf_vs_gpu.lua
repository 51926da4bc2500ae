-- printf_vs_gpu.lua: device printf's '*' widths, h, and %p in a width, on the GPU and on
-- the simulator: each case must print the same text on both, and that text must be the C
-- library's (the GPU's driver formats with it). A '*' precision and hh, which an H100's printf
-- got wrong (the conversion printed as written; another value, and the arguments after it read
-- from the wrong place), the simulator refuses: tests/sim/test_printf.c. Device printf writes to the process's
-- stdout, out of Lua's reach, so each launch runs in a child (this same binary) whose output is
-- read back. The cases where the simulator refuses a format (a width over 1 MiB, %d with no
-- argument) have no GPU counterpart to compare: tests/sim/test_printf.c checks their messages.
local T = dofile("tests/lua/testlib.lua")

-- {name, the kernel's printf call, the text C prints}
local CASES = {
  {"%*d takes its width", [[printf("[%*d]\n", 6, 42);]], "[    42]\n"},
  {"a negative * width left-justifies", [[printf("[%*d]\n", -6, 42);]], "[42    ]\n"},
  {"* keeps the offsets of the 8-byte arguments after it",
   [[printf("%*d|%lld|%.2f|%-*s|%*.2e|%d\n", 7, 1, 1234567890123ll, 3.14159, 7, "abc", 9,
            3.14159, 9);]],
   "      1|1234567890123|3.14|abc    | 3.14e+00|9\n"},
  {"h converts to short", [[printf("%hd %hx\n", 0x1ff41, 0x1ff41);]], "-191 ff41\n"},
  {"%20p and %-20p pad the pointer",
   [[printf("[%20p][%-20p]\n", (const void *)0xabc123, (const void *)0xabc123);]],
   "[            0xabc123][0xabc123            ]\n"},
}
T.plan(#CASES + 1)

-- The text a one-thread launch of a kernel making call prints on backend ("gpu" or "sim"),
-- followed by the chunk after (Lua, none by default). The script ends with no cuda.sync(): the
-- GPU keeps device printf's text until a blocking wait, which the end of a run must make.
local function printed(backend, call, after)
  local code = "cuda.kernel[=[#include <cstdio>\n__global__ void p() { " .. call ..
               " }]=][{1, 1}]() " .. (after or "")
  assert(not code:find("'", 1, true), "the chunk is quoted with ' for the shell")
  local p = assert(io.popen("exec " .. T.self_command() .. " --" .. backend .. " -e '" .. code ..
                            "' 2>&1"))
  local out = p:read("a")
  p:close()
  return out
end

-- cuda.sync() waits by polling (so that Ctrl-C can stop it), and a poll never printed the
-- kernel's text: it came out at the end of the run, after everything the script printed.
T.test("a kernel's printf comes out at cuda.sync(), before what the script prints next",
  function()
  local call, after = [[printf("from the kernel\n");]], [[cuda.sync() print("after the sync")]]
  local want = "from the kernel\nafter the sync\n"
  T.checkeq(printed("gpu", call, after), want, "on the GPU")
  T.checkeq(printed("sim", call, after), want, "on the simulator")
end)

for _, c in ipairs(CASES) do
  T.test(c[1], function()
    T.checkeq(printed("gpu", c[2]), c[3], "the GPU's text")
    T.checkeq(printed("sim", c[2]), c[3], "the simulator's text")
  end)
end
