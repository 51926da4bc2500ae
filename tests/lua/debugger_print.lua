-- debugger_print.lua: what k:debug's print, x and conditions show of real kernels on the
-- simulator, each value checked against what the kernel itself computes (its output array after
-- the launch) or against a CPU reference: C's unsigned 64-bit arithmetic and literals, typedefs
-- and enums, local arrays of one and two dimensions and of any length, local structures and
-- CUDA's vector types, __half, dynamic and multiply declared __shared__ arrays, x's formats and
-- sizes, the stops around a step onto a return and out of a function, a lambda's name, a
-- condition that fails at one lane, until LINE, up and down on a thread that has exited, and an
-- expression nested too deep. The commands are given as commands = {...}, so no console is
-- needed; tests/debugger.sh drives the console.
local T = dofile("tests/lua/testlib.lua")
T.plan(14)
local test, check, checkeq = T.test, T.check, T.checkeq

if cuda.backend() == "none" then
  for _ = 1, 14 do T.skip("print on the simulator", "the none backend runs no kernel") end
  return T.done()
end

local dbg = require "debugger"
require("term").width_override = 1000 -- whole lines, to look for

-- Everything the debugger says while kernel k runs under it with configuration cfg, arguments
-- args and the commands cmds, one string.
local function session(k, cfg, args, cmds)
  local said, out = {}, dbg.out
  dbg.out = function(text) said[#said + 1] = text end
  cfg.commands = cmds
  local ok, err = pcall(function() k:debug(cfg)(table.unpack(args)) end)
  dbg.out = out
  if not ok then error(err, 0) end
  return table.concat(said, "\n")
end

-- text holds line as a whole line of its own.
local function has(text, line)
  check(("\n" .. text .. "\n"):find("\n" .. line .. "\n", 1, true),
    ("no line '%s' in:\n%s"):format(line, text))
end

local function hasnt(text, part)
  check(not text:find(part, 1, true), ("'%s' in:\n%s"):format(part, text))
end

-- The value a line "EXPR = VALUE" of text gives EXPR.
local function value(text, expr)
  local start = ("\n" .. text):find("\n" .. expr .. " = ", 1, true)
  check(start, ("no '%s = ' in:\n%s"):format(expr, text))
  return text:sub(start + #expr + 3):match("^[^\n]*")
end

local M = cuda.module([[
#include <cuda_fp16.h>
typedef unsigned int uint;
typedef float real;
enum Color { RED, GREEN = 5, BLUE };
struct P { float x; int n; double w; };
__global__ void ce(const int *in, int *out, int n, unsigned long long big)
{
  int t = threadIdx.x;
  out[t] = in[t] + n + (int)(big % 10) + (int)(big / 1000000000000000000ull);
}
__global__ void td(int *out, size_t n)
{
  uint q = threadIdx.x * 3u;
  real r = q * 0.5f;
  Color c = (threadIdx.x % 2) ? GREEN : BLUE;
  unsigned long long big = 1ull << 40;
  out[threadIdx.x] = (int)(q + r) + c + (int)(big >> 38) + (int)n;
}
__global__ void loc(int *out)
{
  int m[4][5];
  int arr[40];
  int t = threadIdx.x;
  for (int k = 0; k < 20; k++) m[k / 5][k % 5] = k * t;
  for (int k = 0; k < 40; k++) arr[k] = k * 10 + t;
  out[t] = m[3][0] + m[3][4] + arr[t + 8] + arr[39];
}
__global__ void vec(const P *ps, float *out, const double2 *dd)
{
  int t = threadIdx.x;
  P p = ps[t];
  float4 q = make_float4(1, 2, 3, t);
  int2 v2 = make_int2(5, t);
  __half h = __float2half(1.5f + t);
  double2 d2 = dd[t];
  out[t] = p.x * p.n + (float)p.w + q.w + v2.y + __half2float(h) + (float)d2.y;
}
__global__ void sh(float *out, int *o2)
{
  extern __shared__ float dyn[];
  __shared__ int a1[8], a2[8];
  int t = threadIdx.x;
  dyn[t] = t + 7.0f;
  if (t < 8) {
    a1[t] = t;
    a2[t] = 100 + t;
  }
  __syncthreads();
  out[t] = dyn[(t + 1) % blockDim.x];
  o2[t] = a1[7 - t % 8] + a2[7 - t % 8];
}
__device__ int twice(int v)
{
  int r = v * 2;
  return r;
}
__global__ void flow(int *out)
{
  int t = threadIdx.x;
  if (t & 1) {
    out[t] = twice(t);
    return;
  }
  auto sq = [](int x) {
    int y = x * x;
    return y + 1;
  };
  out[t] = sq(t) + 100 / (32 - t);
}
]])

test("unsigned long long arithmetic is C's in print and in conditions, literals too", function()
  local big = -1 -- 2^64 - 1, as its bits
  local i, o = cuda.arange(32, "i32"), cuda.zeros(32, "i32")
  local out = session(M.ce, { 1, 32 }, { i, o, 4, big }, { "break 9 if big % 10 == 5", "continue",
    "print big % 10", "print big / 10", "print big / 1000000000000000000ull", "print 010",
    "print 0x10 + 0b11", "print 18446744073709551615ull", "print in[1]@n",
    "print in[t] + n + (int)(big % 10) + (int)(big / 1000000000000000000ull)", "continue" })
  has(out, "Breakpoint 1, line 9: block (0,0,0), thread (0,0,0) (warp 0, lanes 0xffffffff)")
  -- 18446744073709551615 = 1844674407370955161 * 10 + 5 = 18 * 10^18 + 446744073709551615
  has(out, "big % 10 = 5")
  has(out, "big / 10 = 1844674407370955161")
  has(out, "big / 1000000000000000000ull = 18")
  has(out, "010 = 8")
  has(out, "0x10 + 0b11 = 19")
  has(out, "18446744073709551615ull = 18446744073709551615")
  has(out, "in[1]@n = {1, 2, 3, 4}")
  checkeq(tonumber(value(out, "in[t] + n + (int)(big % 10) + (int)(big / 1000000000000000000ull)")),
    o[0], "print agrees with the kernel")
  checkeq(o[0], 0 + 4 + 5 + 18)
end)

test("typedef'd scalars and enums compute in expressions and conditions", function()
  local o = cuda.zeros(64, "i32")
  local out = session(M.td, { 1, 64 }, { o, 7 }, { "break 17 if q == 99", "continue", "print q",
    "print q + 1", "print r * 2", "print c", "print c + 1", "print c == GREEN", "print BLUE",
    "print (uint)-1", "print sizeof(real)",
    "print (int)(q + r) + c + (int)(big >> 38) + (int)n", "continue" })
  hasnt(out, "could not be evaluated")
  -- thread 33: q = 99, r = 49.5, c = GREEN (5), big >> 38 = 4, n = 7
  has(out, "Breakpoint 1, line 17: block (0,0,0), thread (33,0,0) (warp 1, lanes 0x00000002)")
  has(out, "q = 99")
  has(out, "q + 1 = 100")
  has(out, "r * 2 = 99")
  has(out, "c = GREEN")
  has(out, "c + 1 = 6")
  has(out, "c == GREEN = 1")
  has(out, "BLUE = BLUE")
  has(out, "(uint)-1 = 4294967295")
  has(out, "sizeof(real) = 4")
  checkeq(tonumber(value(out, "(int)(q + r) + c + (int)(big >> 38) + (int)n")), o[33])
  checkeq(o[33], 148 + 5 + 4 + 7)
end)

test("local arrays index as C's: rows of two dimensions, every element of a long one", function()
  local o = cuda.zeros(32, "i32")
  local out = session(M.loc, { 1, 32 }, { o }, { "break 26 if t == 12", "continue", "print m[3]",
    "print m[3][4]", "print sizeof(m[3])", "print sizeof(m)", "print m[1]", "print arr[t + 8]",
    "print arr[39]", "print arr[2]@3", "print &arr[5] - &arr[0]", "print *(&arr[0] + 30)",
    "print m[3][0] + m[3][4] + arr[t + 8] + arr[39]", "print m[4]", "continue" })
  -- thread 12: m[r][c] = (5r + c) * 12, arr[k] = 10k + 12
  has(out, "m[3] = {180, 192, 204, 216, 228}")
  has(out, "m[3][4] = 228")
  has(out, "sizeof(m[3]) = 20")
  has(out, "sizeof(m) = 80")
  has(out, "m[1] = {60, 72, 84, 96, 108}")
  has(out, "arr[t + 8] = 212")
  has(out, "arr[39] = 402")
  has(out, "arr[2]@3 = {32, 42, 52}")
  has(out, "&arr[5] - &arr[0] = 5")
  has(out, "*(&arr[0] + 30) = 312")
  has(out, "print: index 4 is outside the array (0 to 3)")
  checkeq(tonumber(value(out, "m[3][0] + m[3][4] + arr[t + 8] + arr[39]")), o[12])
  checkeq(o[12], 180 + 228 + 212 + 402)
end)

test("local structures, CUDA's vector types and __half print by their members", function()
  local ps = cuda.zeros(64, "f64") -- 32 P of 16 bytes: x = 0.5 + t, n = t, w = 2t
  local bytes = {}
  for t = 0, 31 do bytes[#bytes + 1] = string.pack("<fid", 0.5 + t, t, 2.0 * t) end
  local raw = table.concat(bytes)
  for j = 0, 63 do ps[j] = string.unpack("<d", raw, 8 * j + 1) end
  local dd, o = cuda.arange(64, "f64"), cuda.zeros(32)
  local out = session(M.vec, { 1, 32 }, { ps, o, dd }, { "break 36 if t == 3", "continue",
    "print p", "print p.n * 2", "print q", "print q.w + q.x", "print v2", "print h", "print h * 2",
    "print d2", "print dd[3].y", "print sizeof(q) + sizeof(v2) + sizeof(d2)", "print &q.y - &q.x",
    "print p.x * p.n + (float)p.w + q.w + v2.y + (float)h + (float)d2.y", "continue" })
  has(out, "p = {x = 3.5, n = 3, w = 6}")
  has(out, "p.n * 2 = 6")
  has(out, "q = {x = 1, y = 2, z = 3, w = 3}")
  has(out, "q.w + q.x = 4")
  has(out, "v2 = {x = 5, y = 3}")
  has(out, "h = 4.5")
  has(out, "h * 2 = 9")
  has(out, "d2 = {x = 6, y = 7}")
  has(out, "dd[3].y = 7")
  has(out, "sizeof(q) + sizeof(v2) + sizeof(d2) = 40")
  has(out, "&q.y - &q.x = 1")
  -- 3.5 * 3 + 6 + 3 + 3 + 4.5 + 7
  checkeq(tonumber(value(out, "p.x * p.n + (float)p.w + q.w + v2.y + (float)h + (float)d2.y")),
    o[3])
  checkeq(o[3], 34.0)
end)

test("extern __shared__ arrays have the launch's size; a1[8], a2[8] are both known", function()
  local o, o2 = cuda.zeros(32), cuda.zeros(32, "i32")
  local out = session(M.sh, { 1, 32, 32 * 4 }, { o, o2 }, { "break 50 if t == 2", "continue",
    "print dyn[3]", "print sizeof(dyn)", "print dyn[(t + 1) % blockDim.x]", "print a2[2]",
    "print a2", "print a1[7 - t % 8] + a2[7 - t % 8]", "print dyn[32]", "continue" })
  has(out, "dyn[3] = 10")
  has(out, "sizeof(dyn) = 128")
  checkeq(tonumber(value(out, "dyn[(t + 1) % blockDim.x]")), o[2])
  has(out, "a2[2] = 102")
  has(out, "a2 = {100, 101, 102, 103, 104, 105, 106, 107}")
  checkeq(tonumber(value(out, "a1[7 - t % 8] + a2[7 - t % 8]")), o2[2])
  checkeq(o2[2], 5 + 105)
  has(out, "print: index 32 is outside the array (0 to 31)")
end)

test("x: a size letter alone shows hex of that size, d and u numbers, many values", function()
  local i, o = cuda.arange(32, "i32"), cuda.zeros(32, "i32")
  local out = session(M.ce, { 1, 32 }, { i, o, 4, -1 }, { "break 9", "continue",
    "x/4b in + 1", "x/4ub in + 1", "x/2g in", "x/2dh in", "x/4096d in", "quit" })
  check(out:find("\n0x%x+:  0x01  0x00  0x00  0x00\n"), out)
  hasnt(out, "'\\x")                                    -- numbers, not characters
  check(out:find("\n0x%x+:  1  0  0  0\n"), out)        -- in[1]'s bytes
  check(out:find("\n0x%x+:  0x0000000100000000  0x0000000300000002\n"), out)
  check(out:find("\n0x%x+:  0  0\n"), out)              -- the low halves of 0 and 1
  hasnt(out, "debugger.lua")
  hasnt(out, "bad argument")
  check(out:find("x: address 0x%x+ %(16384 bytes%) is not in any array of the launch"), out)
end)

test("x: a double pointer's g shows its bits, f shows its values", function()
  local dd, o = cuda.arange(64, "f64"), cuda.zeros(32)
  local ps = cuda.zeros(64, "f64")
  local out = session(M.vec, { 1, 32 }, { ps, o, dd }, { "break 36", "continue", "x/2g dd",
    "x/2fg dd", "x/3f &q", "quit" })
  check(out:find("\n0x%x+:  0x0000000000000000  0x3ff0000000000000\n"), out)
  check(out:find("\n0x%x+:  0  1\n"), out)
  check(out:find("\n0x2%x+:  1  2  3\n"), out) -- a local's address, in local memory
end)

test("a step onto return stops at its line, and the thread is not said to wait", function()
  local o = cuda.zeros(32, "i32")
  local out = session(M.flow, { 1, 32 }, { o }, { "break 61 if t == 5", "continue", "next",
    "where", "quit" })
  has(out, "Line 62: block (0,0,0), thread (5,0,0) (warp 0 runs lanes 0xaaaaaaaa here)")
  hasnt(out, "waits at line")
  check(out:find("line 62%s+lanes 0xaaaaaaaa %(16%)%s+runs  <%- focus: thread %(5,0,0%)"), out)
end)

test("next out of a function stops once at its return line, then at the caller's", function()
  local o = cuda.zeros(32, "i32")
  local out = session(M.flow, { 1, 32 }, { o }, { "break 54", "continue", "next", "next", "next",
    "quit" })
  local lines = {}
  for l in out:gmatch("\nLine (%d+)") do lines[#lines + 1] = l end
  checkeq(table.concat(lines, " "), "55 61 62")
end)

test("a lambda is named as one, in the function that defines it", function()
  local o = cuda.zeros(32, "i32")
  local out = session(M.flow, { 1, 32 }, { o }, { "break 65", "continue", "bt", "print x",
    "quit" })
  check(out:find("\n#0  lambda in flow at line 65 of [^\n]+  <%- selected\n"), out)
  hasnt(out, "_ZZ")
  has(out, "x = 0")
end)

test("a condition that fails at one lane stops there and names it", function()
  local o = cuda.zeros(32, "i32")
  local out = session(M.flow, { 1, 32 }, { o }, { "break 68 if 100 / (t - 4) > 50", "continue",
    "print t", "quit" })
  has(out, "Breakpoint 1, line 68: block (0,0,0), thread (4,0,0) (warp 0, lanes 0x00000010)")
  has(out, "  its condition could not be evaluated at thread (4,0,0): division by zero")
  has(out, "t = 4")
end)

test("until LINE says until, and leaves no breakpoint behind wherever it stops", function()
  -- the warp runs its even lanes' path first (to the end), then the odd lanes' call of twice
  local o = cuda.zeros(32, "i32")
  local out = session(M.flow, { 1, 32 }, { o }, { "until 99", "until 68 if t", "break 61",
    "until 68", "info break", "until 55", "info break", "continue" })
  check(out:find("\nuntil: line 99 of [^\n]+ has no code; the nearest line that has some is"), out)
  has(out, "until 68 if t: until takes a line and nothing after it, as in until 68")
  hasnt(out, "tbreak")
  hasnt(out, "Temporary breakpoint")
  hasnt(out, "once")
  has(out, "Line 68: block (0,0,0), thread (0,0,0) (warp 0, lanes 0x55555555)")
  check(out:find("\n%(cuda%-debug%) info break\n  1  line 61 +%(hit 0 times%)\n%(cuda"), out)
  -- until 55 is not reached before breakpoint 1, and that stop ends it
  has(out, "Breakpoint 1, line 61: block (0,0,0), thread (1,0,0) (warp 0, lanes 0xaaaaaaaa)")
  check(out:find("\n%(cuda%-debug%) info break\n  1  line 61 +%(hit 1 time%)\n%(cuda"), out)
  hasnt(out, "Line 55")
  has(out, "The launch of flow has finished: its 32 threads ran to the end.")
end)

test("up and down on a thread that has exited say so", function()
  local o = cuda.zeros(64, "i32") -- warp 0 runs to its end before warp 1 begins
  local out = session(M.loc, { 1, 64 }, { o }, { "break 26 if t == 40", "continue", "thread 0",
    "up", "down", "quit" })
  has(out, "Focus: block (0,0,0), thread (0,0,0), exited")
  has(out, "up: the thread in focus has exited; it has no frames")
  has(out, "down: the thread in focus has exited; it has no frames")
  hasnt(out, "#-1")
end)

test("a huge expression is refused in a line, not echoed whole", function()
  local o = cuda.zeros(32, "i32")
  local deep = ("("):rep(100000) .. "t" .. (")"):rep(100000)
  local out = session(M.flow, { 1, 32 }, { o }, { "break 68", "continue", "print " .. deep,
    "quit" })
  has(out, "print: bad expression '" .. ("("):rep(57) .. "...': the expression nests more than "
    .. "200 deep")
  hasnt(out, "stack overflow")
end)

return T.done()
