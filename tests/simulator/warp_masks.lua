-- warp_masks.lua: the warp-synchronous calls with a membermask when the lanes of one warp pass
-- different masks (sim/sim_warpsync.c): each case of warp_masks_cases.lua against its CPU
-- reference, and what the PTX ISA leaves undefined reported with the lanes named.
local T = dofile("tests/lua/testlib.lua")
local K = dofile("tests/simulator/warp_masks_cases.lua")
local test, check, checkerr, checkeq = T.test, T.check, T.checkerr, T.checkeq
T.plan(#K.cases + 10)

for i, c in ipairs(K.cases) do
  test(c.name, function()
    local got, want = K.run(c, K.kernel(c), 40 + i)
    local d = K.differ(got, want)
    check(not d, d)
  end)
end

-- A kernel of one warp on 32 elements whose body is `body` (x its element, lane its lane, r
-- what it writes), run on 0 .. 31: the message of its failure.
local function fails(needle, body)
  local k = cuda.kernel([[
__global__ void f(int *o) {
  unsigned lane = threadIdx.x & 31;
  int x = o[threadIdx.x], r = -1;
  ]] .. body .. [[
  o[threadIdx.x] = r;
}]])
  local o = cuda.arange(32, "i32")
  checkerr(needle, k[{1, 32}], o)
  -- the failing warp wrote nothing
  local l = o:tolist()
  for i = 1, 32 do check(l[i] == i - 1, "element " .. (i - 1) .. " was written") end
end

test("lanes of a mask that skip the call are named (a divergent vote, match, reduction)", function()
  fails("__ballot_sync with mask 0xffffffff, but lanes 0xffff0000 of that mask are not executing it (a divergent vote)",
        "if (lane < 16) r = __ballot_sync(0xffffffffu, x & 1);")
  fails("__match_all_sync with mask 0x0000ffff, but lanes 0x0000fff0 of that mask are not executing it (a divergent match)",
        "int p; if (lane < 4 || lane >= 16) r = __match_all_sync(lane < 16 ? 0xffffu : 0xffff0000u, x, &p);")
  fails("__reduce_or_sync with mask 0x49249249, but lanes 0x49249248 of that mask are not executing it (a divergent reduction)",
        "if (lane < 2 || lane % 3 != 0) r = __reduce_or_sync(0x49249249u << (lane % 3), x);")
end)

test("a lane outside its own mask is named, for every call that takes one", function()
  fails("__reduce_max_sync with mask 0x0000ffff, but lanes 0xffff0000 run it without their own bit",
        "r = __reduce_max_sync(0xffffu, x);")
  fails("__any_sync with mask 0x00000001, but lanes 0xfffffffe run it without their own bit",
        "r = __any_sync(1u, x > 3);")
  fails("__match_any_sync with mask 0xfffffffe, but lanes 0x00000001 run it without their own bit",
        "r = __match_any_sync(0xfffffffeu, x);")
  fails("__syncwarp with mask 0x0000ffff, but lanes 0xffff0000 run it without their own bit",
        "__syncwarp(0xffffu); r = x;")
end)

test("lanes of one group that pass different masks are named", function()
  fails("__reduce_add_sync: lane 0 passes mask 0xffffffff, but lane 1 of that mask passes 0x92492492 "
        .. "(the lanes that synchronise together must pass the same mask)",
        "r = __reduce_add_sync(lane == 0 ? 0xffffffffu : 0x49249249u << (lane % 3), x);")
  fails("__shfl_sync: lane 3 passes mask 0x0000000f, but lane 0 of that mask passes 0x00000001",
        "r = __shfl_sync(lane < 3 ? 1u << lane : lane < 4 ? 0xfu : 0xfffffff0u, x, 0);")
end)

test("__syncwarp() of a whole warp may be met at two places, one per path (Volta's rule)", function()
  local k = cuda.kernel[[
__global__ void f(int *o) {
  __shared__ int s[32];
  unsigned lane = threadIdx.x & 31;
  if (lane & 1) { s[lane] = o[lane] * 2; __syncwarp(); }
  else { s[lane] = o[lane] + 100; __syncwarp(); }
  o[lane] = lane < 31 ? s[lane + 1] : s[0];
}]]
  local o = cuda.arange(32, "i32")
  k[{1, 32}](o)
  local got = o:tolist()
  local function v(j) return j & 1 == 1 and j * 2 or j + 100 end
  for l = 0, 31 do check(got[l + 1] == v((l + 1) % 32), "lane " .. l .. ": " .. got[l + 1]) end
end)

test("lanes that return leave every group: a reduction and a __syncthreads() after `if (t >= n) return`", function()
  local k = cuda.kernel[[
__global__ void f(const int *v, int *o, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = __reduce_add_sync(0xffffffffu, v[t]);
  __syncthreads();
  o[t] = s[t] + s[0];
}]]
  local n = 45
  local v, vs = K.ints(n, 5, -1000, 1000)
  local o = cuda.array(64, "i32")
  k[{1, 64}](v, o, n)
  local got = o:tolist()
  local lo, hi = 0, 0
  for i = 1, 32 do lo = lo + vs[i] end
  for i = 33, n do hi = hi + vs[i] end
  for t = 0, 63 do
    local want = t < 32 and 2 * lo or t < n and hi + lo or 0
    check(got[t + 1] == want, "thread " .. t .. ": " .. got[t + 1] .. ", want " .. want)
  end
end)

test("a shuffle that reads a lane which has returned is told where the value is used: a " ..
     "warning at the prompt, a failure under race_check = \"fail\", nothing with race_check = " ..
     "false", function()
  -- in a child cudalab, so that the warning on stderr can be read
  local code = [=[
local early = cuda.kernel[[
__global__ void center(const float *in, float *out, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  unsigned m = __activemask();
  float v = in[i], sum = v;
  for (int s = 16; s > 0; s >>= 1) sum += __shfl_xor_sync(m, sum, s);
  out[i] = v - sum / __popc(m);
}]]
local all = cuda.kernel[[
__global__ void center(const float *in, float *out, int n) {
  int i = threadIdx.x;
  float v = i < n ? in[i] : 0.0f, sum = v;
  for (int s = 16; s > 0; s >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, s);
  if (i < n) out[i] = v - sum / __popc(__ballot_sync(0xffffffffu, i < n));
}]]
local x, out = cuda.arange(20), cuda.zeros(20)
print("all:", pcall(all[{1, 32}], x, out, 20), out[19])
print("warn:", pcall(early[{1, 32}], x, out, 20))
cuda.simopts{race_check = "fail"}
print("fail:", pcall(early[{1, 32}], x, out, 20))
cuda.simopts{race_check = false}
print("off:", pcall(early[{1, 32}], x, out, 20))
]=]
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = assert(io.popen("COLUMNS=200 exec " .. T.self_command() .. " --sim '" .. path ..
    "' 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  local flat = out:gsub("\n +", " ")
  check(flat:find("all:\ttrue\t9.5", 1, true), "every lane running the shuffle: " .. out)
  local _, warnings = flat:gsub("warning:", "")
  checkeq(warnings, 1, "one warning, for the kernel that returns early: " .. out)
  -- lane 8 read lane 24 at the first step; lane 0 got that sum from lane 8 at the second, and
  -- is the first lane to store it
  check(flat:find("warning: __shfl_xor_sync (shfl.sync.bfly.b32) at kernel.cu:6 gave lane 8 the " ..
    "value of lane 24, which had returned: it left the kernel before the shuffle (the lanes " ..
    "that ran it were 0x000fffff); on a GPU that value is undefined. Lane 0 uses it here (it " ..
    "came from lane 8 by another shuffle), through what kernel.cu:6 computed from it, as the " ..
    "value st.global writes to memory", 1, true), out)
  check(flat:find("warn:\ttrue", 1, true), "the launch is kept at the prompt: " .. out)
  check(flat:find("fail:\tfalse\t__shfl_xor_sync (shfl.sync.bfly.b32) at kernel.cu:6 gave lane 8",
    1, true), out)
  check(flat:find("in kernel center, block (0,0,0), thread (0,0,0), at kernel.cu:7", 1, true), out)
  check(flat:find("off:\ttrue", 1, true), out)
end)

-- The case of the multi-warp tile, by its name.
local function tile_case()
  for _, c in ipairs(K.cases) do
    if c.name:find("tiled_partition<128>", 1, true) then return c end
  end
end

test("a multi-warp tile runs under the race check and the init and sync checks: the system's "
     .. "barriers in the reserved region are neither races nor unwritten reads", function()
  local c = tile_case()
  cuda.simopts{race_check = "fail"}
  cuda.sanitize{init = true, sync = true}
  local ok, got, want = pcall(K.run, c, K.kernel(c), 9)
  cuda.sanitize{}
  cuda.simopts{race_check = true}
  check(ok, tostring(got))
  if ok then
    local d = K.differ(got, want)
    check(not d, d)
  end
end)

test("without the reserved registers a kernel's shared memory starts at 0, and below it is out of bounds",
     function()
  local k = cuda.kernel[[
__global__ void f(int *o, int k) {
  __shared__ int s[64];
  o[0] = (int)__cvta_generic_to_shared(s);
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  o[1] = s[threadIdx.x + k];
}]]
  local o = cuda.array(2, "i32")
  k[{1, 64}](o, 0)
  check(o[0] == 0, "the first __shared__ variable at " .. o[0])
  checkerr("out-of-bounds shared load", k[{1, 64}], o, -1)
end)

-- elect.sync (cg::invoke_one): per the PTX ISA the leader is one lane of the mask, the same for
-- the same mask every time; it is the lowest lane still running (a GPU's choice, and a mask's
-- exited lanes take no part, as in every call with a membermask).
test("cg::invoke_one and elect.sync: the lowest running lane of each mask leads", function()
  local k = cuda.kernel[[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ unsigned elect(unsigned mask, unsigned *p) {
  unsigned d, q;
  asm volatile("{ .reg .pred e; elect.sync %0|e, %2; selp.u32 %1, 1, 0, e; }"
               : "=r"(d), "=r"(q) : "r"(mask));
  *p = q;
  return d;
}
__global__ void k(int *total, int *bcast, int *tiles, unsigned *o) {
  auto w = cg::tiled_partition<32>(cg::this_thread_block());
  bcast[threadIdx.x] = cg::invoke_one_broadcast(w, [&]() { return atomicAdd(total, 1); });
  auto t = cg::tiled_partition<8>(cg::this_thread_block());
  cg::invoke_one(t, [&]() { atomicAdd(tiles, 1); });
  unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5, p = 0, d = 99;
  if (wid == 0 && lane % 3 == 1) {
    cg::invoke_one(cg::coalesced_threads(), [&]() { atomicAdd(tiles + 1, 1 + (int)lane); });
  }
  if (wid == 1 && (lane & 4)) d = elect(0xf0f0f0f0u, &p);
  if (wid == 2) {
    if (lane < 5 || lane == 9) return;
    if (0xfcfu >> lane & 1) d = elect(0xfcfu, &p);
  }
  if (wid == 3) d = elect(lane < 16 ? 0xffffu : 0xffff0000u, &p);
  o[2 * threadIdx.x] = d;
  o[2 * threadIdx.x + 1] = p;
}]]
  local total, bcast, tiles = cuda.zeros(1, "i32"), cuda.zeros(128, "i32"), cuda.zeros(2, "i32")
  local o = cuda.full(256, 7, "u32")
  k[{1, 128}](total, bcast, tiles, o)
  checkeq(total[0], 4, "one atomicAdd a warp")
  local seen = {}
  for wv = 0, 3 do
    local v = bcast[32 * wv]
    for l = 1, 31 do checkeq(bcast[32 * wv + l], v, "warp " .. wv .. " broadcasts one value") end
    check(not seen[v] and v >= 0 and v < 4, "each warp its own ticket, got " .. v)
    seen[v] = true
  end
  checkeq(tiles[0], 16, "one atomicAdd a tile of 8")
  checkeq(tiles[1], 2, "lane 1 leads the coalesced lanes 1, 4, 7, ...")
  -- the CPU reference: lane, mask of its group, or nil where it does not run elect
  local function want(t)
    local wid, lane = t // 32, t % 32
    if wid == 1 and lane & 4 ~= 0 then return 4 end
    if wid == 2 and not (lane < 5 or lane == 9) and (0xfcf >> lane) & 1 == 1 then return 6 end
    if wid == 3 then return lane < 16 and 0 or 16 end
  end
  for t = 32, 127 do
    local leader = want(t)
    local wid = t // 32
    if wid == 2 and (t % 32 < 5 or t % 32 == 9) then
      checkeq(o[2 * t], 7, "thread " .. t .. " returned")
    elseif leader then
      checkeq(o[2 * t], leader, "thread " .. t .. "'s leader")
      checkeq(o[2 * t + 1], t % 32 == leader and 1 or 0, "thread " .. t .. " is the leader")
    else
      checkeq(o[2 * t], 99, "thread " .. t .. " did not elect")
    end
  end
end)

test("an elect.sync that lanes of its mask skip, or outside their mask, is named", function()
  local src = [[
__global__ void f(int *o, unsigned mask, int upto) {
  unsigned lane = threadIdx.x & 31, d = 0;
  if (lane < upto) asm volatile("{ .reg .pred e; elect.sync %0|e, %1; }" : "=r"(d) : "r"(mask));
  o[threadIdx.x] = d;
}]]
  local k, o = cuda.kernel(src), cuda.zeros(32, "i32")
  checkerr("elect.sync (cg::invoke_one) with mask 0xffffffff, but lanes 0xffff0000 of that mask "
           .. "are not executing it (a divergent election)", k[{1, 32}], o, 0xffffffff, 16)
  checkerr("elect.sync (cg::invoke_one) with mask 0x0000ffff, but lanes 0xffff0000 run it without "
           .. "their own bit", k[{1, 32}], o, 0xffff, 32)
end)

T.done()
