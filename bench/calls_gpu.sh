#!/bin/sh
# bench/calls_gpu.sh [BIN]: on a machine with a GPU, measures what the simulator's calls assume
# and prints it beside what the simulator does, so the model can be set from the GPU:
#   1. how deep a recursive function goes on the GPU's default call stack (cudaLimitStackSize,
#      1 KiB) before the launch fails, and the error it fails with, for a function without locals
#      and one with a 32-byte local array; the simulator's depth for the same kernels follows.
#      If they differ, SIM_CALL_OVERHEAD (sim/sim_calls.c, bytes per activation beyond its locals)
#      is what to change: the simulator's depth is 1024 / (locals rounded to 16 + overhead).
#   2. the text a failed device assert prints on the GPU, and the simulator's.
# Each failing launch poisons the GPU's context, so every try runs in a fresh process.
BIN=${1:-build/cudalab}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/depth.lua" <<'EOF'
local src = {
  plain = [[
__device__ __noinline__ int down(int n) { if (n <= 0) return 0; return (down(n - 1) ^ n) + 1; }
__global__ void k(int *out, int d) { out[0] = down(d); }]],
  local32 = [[
__device__ int down(int n) {
  int keep[8]; for (int i = 0; i < 8; i++) keep[i] = n + i;
  if (n <= 0) return 0;
  int s = down(n - 1); volatile int *k = keep; return s + k[n & 7];
}
__global__ void k(int *out, int d) { out[0] = down(d); }]],
}
local k = cuda.kernel(src[os.getenv("VARIANT")])
local out = cuda.array(1, "i32")
k[{1, 1}](out, tonumber(os.getenv("DEPTH")))
cuda.sync()
print("ran")
EOF

# Deepest depth in [1, 8192] that runs on backend $1 for variant $2 (binary search).
deepest() {
  lo=1 hi=8192
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    if VARIANT=$2 DEPTH=$mid "$BIN" --backend "$1" "$tmp/depth.lua" >"$tmp/out" 2>&1 && grep -q '^ran' "$tmp/out"; then lo=$mid
    else hi=$mid; cp "$tmp/out" "$tmp/fail.$1.$2"; fi
  done
  echo "$lo"
}

for v in plain local32; do
  g=$(deepest cuda $v)
  s=$(deepest sim $v)
  echo "recursion ($v): GPU runs depth $g, the simulator $s"
  [ -f "$tmp/fail.cuda.$v" ] && { echo "  the GPU past it:"; sed 's/^/    /' "$tmp/fail.cuda.$v" | head -5; }
  [ -f "$tmp/fail.sim.$v" ] && { echo "  the simulator past it:"; sed 's/^/    /' "$tmp/fail.sim.$v" | head -3; }
done

cat >"$tmp/assert.lua" <<'EOF'
local k = cuda.kernel "__global__ void k(const int *x) { assert(x[threadIdx.x] >= 0); }"
k[{1, 3}](cuda.array({1, 2, -3}, "i32"))
cuda.sync()
EOF
for b in cuda sim; do
  echo "failed assert on $b:"
  "$BIN" --backend $b "$tmp/assert.lua" 2>&1 | sed 's/^/    /' | head -6
done
