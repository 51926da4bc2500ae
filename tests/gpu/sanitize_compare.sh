#!/bin/sh
# tests/gpu/sanitize_compare.sh BIN [OUTDIR]: cuda.sanitize's init and sync checks beside
# compute-sanitizer's initcheck and synccheck, kernel by kernel. Each case is a small kernel with
# a planted bug (or the same kernel fixed), written once as kernel.cu; cudalab runs it on the
# simulator with the check on, and on a machine with a GPU, nvcc builds it into a small program
# (main.cu includes kernel.cu, so both tools name the same file and lines) that compute-sanitizer
# runs. The table gives the line each tool names ("-" for nothing found).
#   judged cases: the simulator must name the expected line (or nothing, fixed), and on a GPU
#     compute-sanitizer must name the same one;
#   other cases are printed for the record, not judged: initcheck looks at global memory only
#     (not at the shared-memory halo), and whether synccheck reports threads that returned before
#     a barrier, or two different __syncthreads(), is what the table is there to show.
# Without a GPU, nvcc or compute-sanitizer, only the simulator half runs and the comparisons are
# skipped (ok ... # SKIP). Logs go to OUTDIR.
BIN=$1
OUT=${2:-.}
mkdir -p "$OUT" || { echo "cannot make the log folder $OUT"; exit 1; }
. tests/shlib.sh
plan 8 # four judged cases: the simulator's line, then compute-sanitizer's agreement
export CUDALAB_CLEAN_EXIT=1
export XDG_CACHE_HOME="$tmp/cache" # a cache of its own, sealed with the key of $tmp's state
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
find_tool() { command -v "$1" 2>/dev/null || { [ -x "$CUDA_HOME/bin/$1" ] && echo "$CUDA_HOME/bin/$1"; }; }
SAN=$(find_tool compute-sanitizer)
NVCC=$(find_tool nvcc)
gpu=0
if [ -n "$SAN" ] && [ -n "$NVCC" ] && command -v nvidia-smi >/dev/null 2>&1 &&
   nvidia-smi -L 2>/dev/null | grep -q GPU; then gpu=1; fi

# case NAME CHECK JUDGED EXPECTED: reads kernel.cu from stdin up to a line "--main", then main()'s
# body up to "--lua", then the Lua launch (the kernel is `k`, the check is on) up to "--end".
case_dir() { echo "$tmp/$1"; }
new_case() {
  d=$(case_dir "$1")
  mkdir -p "$d"
  echo "$1 $2 $3 $4" >>"$tmp/cases"
  awk -v d="$d" '/^--main$/{f="main"; next} /^--lua$/{f="lua"; next} /^--end$/{exit}
    { if (!f) print > (d "/kernel.cu"); else print > (d "/" f ".part") }'
  # printf, not echo: dash's echo would turn the \n below into a newline
  { printf '%s\n' '#include <cstdio>' '#include "kernel.cu"' 'int main() {'
    cat "$d/main.part"
    printf '%s\n' '  cudaDeviceSynchronize();' '  printf("ran\n");' '  return 0;' '}'; } >"$d/main.cu"
  { echo "local k = cuda.kernel(io.open('$d/kernel.cu'):read('a'))"
    echo "cuda.simopts{threads = 1}"
    echo "cuda.sanitize{$2 = true}"
    cat "$d/lua.part"
    echo 'cuda.sync()'; echo 'print("ran")'; } >"$d/run.lua"
}

new_case init_rowsum init yes 3 <<'EOF'
__global__ void rowsum(const float *a, float *sums, int cols) {
  int r = threadIdx.x;
  for (int c = 0; c < cols; c++) sums[r] += a[r * cols + c];
}
--main
  float h[128], *a, *sums;
  for (int i = 0; i < 128; i++) h[i] = 1;
  cudaMalloc(&a, sizeof h); cudaMalloc(&sums, 32 * sizeof(float));
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  rowsum<<<1, 32>>>(a, sums, 4);
--lua
k[{1, 32}](cuda.ones(128), cuda.empty(32), 4)
--end
EOF

new_case init_rowsum_fixed init yes - <<'EOF'
__global__ void rowsum(const float *a, float *sums, int cols) {
  int r = threadIdx.x;
  float s = 0;
  for (int c = 0; c < cols; c++) s += a[r * cols + c];
  sums[r] = s;
}
--main
  float h[128], *a, *sums;
  for (int i = 0; i < 128; i++) h[i] = 1;
  cudaMalloc(&a, sizeof h); cudaMalloc(&sums, 32 * sizeof(float));
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  rowsum<<<1, 32>>>(a, sums, 4);
--lua
k[{1, 32}](cuda.ones(128), cuda.empty(32), 4)
--end
EOF

new_case init_counter init no 3 <<'EOF'
__global__ void tally(const int *in, int *counter, int n) {
  int i = threadIdx.x;
  if (i < n && in[i] > 0) atomicAdd(counter, 1);
}
--main
  int h[4] = {1, 2, -3, 4}, *in, *counter;
  cudaMalloc(&in, sizeof h); cudaMalloc(&counter, sizeof(int));
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  tally<<<1, 32>>>(in, counter, 4);
--lua
k[{1, 32}](cuda.array({1, 2, -3, 4}, "i32"), cuda.empty(1, "i32"), 4)
--end
EOF

new_case init_shared_halo init no 7 <<'EOF'
__global__ void diff(const float *in, float *out, int halo) {
  __shared__ float tile[33];
  int t = threadIdx.x, i = blockIdx.x * 32 + t;
  tile[t] = in[i];
  if (halo && t == 0) tile[32] = in[i + 32];
  __syncthreads();
  out[i] = tile[t + 1] - tile[t];
}
--main
  float h[64], *in, *out;
  for (int i = 0; i < 64; i++) h[i] = (float)i;
  cudaMalloc(&in, sizeof h); cudaMalloc(&out, sizeof h);
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  diff<<<1, 32>>>(in, out, 0);
--lua
k[{1, 32}](cuda.arange(64), cuda.array(64), 0)
--end
EOF

new_case sync_half sync yes 5 <<'EOF'
__global__ void step(float *a) {
  int t = threadIdx.x;
  if (t < 48) {
    a[t] *= 2;
    __syncthreads();
  }
  a[t] += a[(t + 1) % 64];
}
--main
  float *a;
  cudaMalloc(&a, 64 * sizeof(float)); cudaMemset(a, 0, 64 * sizeof(float));
  step<<<1, 64>>>(a);
--lua
k[{1, 64}](cuda.arange(64))
--end
EOF

new_case sync_half_fixed sync yes - <<'EOF'
__global__ void step(float *a) {
  int t = threadIdx.x;
  if (t < 48) a[t] *= 2;
  __syncthreads();
  a[t] += a[(t + 1) % 64];
}
--main
  float *a;
  cudaMalloc(&a, 64 * sizeof(float)); cudaMemset(a, 0, 64 * sizeof(float));
  step<<<1, 64>>>(a);
--lua
k[{1, 64}](cuda.arange(64))
--end
EOF

new_case sync_early_exit sync no 5 <<'EOF'
__global__ void scan(float *a, int n) {
  int t = threadIdx.x;
  if (t >= n) return;
  float v = a[t];
  __syncthreads();
  a[(t + 1) % n] = v;
}
--main
  float *a;
  cudaMalloc(&a, 64 * sizeof(float)); cudaMemset(a, 0, 64 * sizeof(float));
  scan<<<1, 64>>>(a, 40);
--lua
k[{1, 64}](cuda.arange(64), 40)
--end
EOF

new_case sync_two_barriers sync no 2 <<'EOF'
__global__ void two(int *out) {
  if (threadIdx.x < 32) { out[threadIdx.x] = 1; __syncthreads(); }
  else { __syncthreads(); out[threadIdx.x] = 2; }
}
--main
  int *out;
  cudaMalloc(&out, 64 * sizeof(int));
  two<<<1, 64>>>(out);
--lua
k[{1, 64}](cuda.array(64, "i32"))
--end
EOF

# The first line of kernel.cu a log names ("-" for none): the simulator's "at kernel.cu:N", or
# compute-sanitizer's "... in /path/kernel.cu:N" under an error.
sim_line() { sed -n 's/.*, at kernel\.cu:\([0-9][0-9]*\)$/\1/p' "$1" | head -n 1 | grep . || echo -; }
san_line() { sed -n 's/^=========  *at .* in .*kernel\.cu:\([0-9][0-9]*\).*/\1/p' "$1" | head -n 1 | grep . || echo -; }

printf '# %-18s %-10s %-9s %-8s %-18s %s\n' case tool expected cudalab compute-sanitizer judged
while read -r name check judged want; do
  d=$(case_dir "$name")
  "$BIN" --sim "$d/run.lua" >"$OUT/sim_$name.log" 2>&1
  sim=$(sim_line "$OUT/sim_$name.log")
  [ "$sim" = - ] && ! grep -q '^ran$' "$OUT/sim_$name.log" && sim=failed
  san="# SKIP"
  if [ $gpu = 1 ]; then
    san=failed
    if "$NVCC" -lineinfo -arch=native -o "$d/prog" "$d/main.cu" >"$OUT/nvcc_$name.log" 2>&1 ||
       "$NVCC" -lineinfo -o "$d/prog" "$d/main.cu" >>"$OUT/nvcc_$name.log" 2>&1; then
      ( cd "$d" && timeout 120 "$SAN" --tool "${check}check" ./prog ) >"$OUT/${check}check_$name.log" 2>&1
      san=$(san_line "$OUT/${check}check_$name.log")
    fi
  fi
  printf '# %-18s %-10s %-9s %-8s %-18s %s\n' "$name" "${check}check" "$want" "$sim" "$san" "$judged"
  [ "$judged" = yes ] || continue
  if [ "$sim" = "$want" ]; then ok "cudalab: $name: line $want"
  else bad "cudalab: $name: want line $want, got $sim"; sed 's/^/    /' "$OUT/sim_$name.log" | head -n 5; fi
  if [ $gpu = 0 ]; then ok "compute-sanitizer: $name # SKIP no GPU, nvcc or compute-sanitizer"
  elif [ "$san" = "$sim" ]; then ok "compute-sanitizer ${check}check agrees on $name: line $san"
  else bad "compute-sanitizer ${check}check on $name: line $san, cudalab: $sim"
    grep '^=========' "$OUT/${check}check_$name.log" | head -n 6 | sed 's/^/    /'; fi
done <"$tmp/cases"
exit $status
