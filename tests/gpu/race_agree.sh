#!/bin/sh
# tests/gpu/race_agree.sh BIN [OUTDIR]: the simulator's race checker beside NVIDIA's, kernel by
# kernel. Each case is a small shared-memory kernel with a known verdict: a race between warps, a
# race between lanes of one warp (which the simulator's lockstep warps hide from the values), or
# clean. The simulator must give every verdict; on a GPU, compute-sanitizer's racecheck runs the
# same launch, and must find hazards in every racy kernel between warps and none in a clean one.
# Its verdict on the races between lanes of one warp is printed beside the simulator's, for the
# record: it says whether NVIDIA's tool is as strict as the simulator about a missing
# __syncwarp(). Without compute-sanitizer (or a GPU) only the simulator half runs.
BIN=$1
OUT=${2:-.}
. tests/shlib.sh
plan 14 # seven kernels: the simulator's verdict and compute-sanitizer's for each
export CUDALAB_CLEAN_EXIT=1
cat >"$tmp/cases.lua" <<'LUA'
-- Each case: kind ("warps", "lanes" or "clean") and a launch. `cases.lua list` lists them;
-- `cases.lua NAME` compiles and launches one. The simulator's verdict is its strict one, as in
-- a lesson check: at the prompt a warp's lockstep accesses are let pass.
cuda.simopts{race_check = "fail"}
local function go(src, grid, block, ...) cuda.kernel(src)[{grid, block}](...) end
local C = {}
C.warp_reduce_no_syncwarp = {"lanes", function() go([[
__global__ void reduce(const float *in, float *out) {
  volatile __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = in[t]; s[t + 32] = in[t + 32];
  __syncwarp();
  s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8]; s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];
  if (t == 0) out[0] = s[0];
}]], 1, 32, cuda.rand(64, "f32", 1), cuda.array(1)) end}
C.warp_reduce_syncwarp = {"clean", function() go([[
__global__ void reduce(const float *in, float *out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = in[t]; s[t + 32] = in[t + 32];
  __syncwarp();
  float v = s[t];
  for (int off = 32; off > 0; off >>= 1) {
    if (t < off) v += s[t + off];
    __syncwarp();
    s[t] = v;
    __syncwarp();
  }
  if (t == 0) out[0] = s[0];
}]], 1, 32, cuda.rand(64, "f32", 1), cuda.array(1)) end}
C.block_reduce = {"clean", function() go([[
__global__ void block_sum(const float *in, float *out) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int h = 128; h > 0; h >>= 1) {
    if (t < h) s[t] += s[t + h];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, s[0]);
}]], 4, 256, cuda.rand(1024, "f32", 2), cuda.array(1)) end}
C.reverse_no_syncthreads = {"warps", function() go([[
__global__ void reverse(float *a) {
  __shared__ float buf[64];
  buf[threadIdx.x] = a[threadIdx.x];
  a[threadIdx.x] = buf[63 - threadIdx.x];
}]], 1, 64, cuda.arange(64)) end}
C.two_lanes_one_word = {"lanes", function() go([[
__global__ void last_wins(int *out) {
  __shared__ int w;
  w = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = w;
}]], 1, 32, cuda.array(32, "i32")) end}
C.shuffle_is_no_barrier = {"lanes", function() go([[
__global__ void pass_on(int *out) {
  __shared__ int box[32];
  int t = threadIdx.x;
  box[t] = t;
  t += __shfl_sync(0xffffffffu, 0, 0);
  out[t] = box[(t + 1) % 32];
}]], 1, 32, cuda.array(32, "i32")) end}
C.histogram_atomics = {"clean", function() go([[
__global__ void histogram(const int *in, int *out, int n) {
  __shared__ int bins[8];
  if (threadIdx.x < 8) bins[threadIdx.x] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&bins[in[i] & 7], 1);
  __syncthreads();
  if (threadIdx.x < 8) out[threadIdx.x] = bins[threadIdx.x];
}]], 1, 128, cuda.arange(1000, "i32"), cuda.array(8, "i32"), 1000) end}
if arg[1] == "list" then
  local names = {}
  for name in pairs(C) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do print(name .. " " .. C[name][1]) end
  return
end
C[arg[1]][2]()
cuda.sync()
print("ran " .. arg[1])
LUA
gpu=0
if command -v compute-sanitizer >/dev/null 2>&1 &&
   "$BIN" -e 'os.exit(cuda.backend() == "cuda" and 0 or 1)' >/dev/null 2>&1; then gpu=1; fi
"$BIN" --sim "$tmp/cases.lua" list >"$tmp/list" 2>&1 || { bad "cannot list the cases"; cat "$tmp/list"; exit 1; }
while read -r name kind; do
  "$BIN" --sim "$tmp/cases.lua" "$name" >"$tmp/sim.log" 2>&1
  sim=clean
  grep -q "shared-memory race between warps" "$tmp/sim.log" && sim=warps
  grep -q "shared-memory race between lanes of one warp" "$tmp/sim.log" && sim=lanes
  [ $sim = clean ] && ! grep -q "^ran $name" "$tmp/sim.log" && sim=failed
  [ "$sim" = "$kind" ] && ok "simulator: $name is $kind" ||
    { bad "simulator: $name is $kind, the checker says $sim"; sed 's/^/    /' "$tmp/sim.log" | head -n 5; }
  [ $gpu = 1 ] || continue
  compute-sanitizer --tool racecheck --racecheck-report hazard --target-processes all \
    "$BIN" --gpu "$tmp/cases.lua" "$name" >"$OUT/racecheck_$name.log" 2>&1
  n=$(sed -n 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$OUT/racecheck_$name.log" | head -n 1)
  echo "# $name: simulator $sim, racecheck ${n:-?} hazards"
  case $kind in
    warps) [ "${n:-0}" -gt 0 ] && ok "racecheck agrees: $name races" || bad "racecheck finds no hazard in $name" ;;
    clean) [ "$n" = 0 ] && ok "racecheck agrees: $name is clean" || bad "racecheck: ${n:-?} hazards in $name" ;;
    lanes) [ "${n:-0}" -gt 0 ] && ok "racecheck agrees: $name races between lanes of one warp" ||
             bad "racecheck finds no hazard in $name, which the simulator calls a race between lanes" ;;
  esac
done <"$tmp/list"
[ $gpu = 1 ] || ok "# SKIP racecheck: no GPU or no compute-sanitizer; the simulator half ran"
exit $status
