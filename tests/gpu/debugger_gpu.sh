#!/bin/sh
# tests/gpu/debugger_gpu.sh BIN: k:debug on the GPU backend. A GPU cannot be paused from here, so
# the debugged launch runs on the simulator, with the kernel's GPU arrays copied there and back:
# it says so in one line, stops where asked, and leaves in the GPU arrays what the kernel wrote,
# the same as an ordinary launch on the GPU computes; quitting half-way leaves what the finished
# blocks wrote. Commands come from standard input, as from a script.
BIN=$1
. tests/shlib.sh
plan 8

cat >"$tmp/split.cu" <<'EOF'
__global__ void split(int *a, const int *b, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int v = a[i] + b[i];
    if (threadIdx.x % 2 == 0) {
      v = v * 2;
    } else {
      v = v + 100;
    }
    a[i] = v;
  }
}
EOF
SETUP="k = cuda.kernel('$tmp/split.cu') b = cuda.full(128, 3, 'i32')
a = cuda.arange(128, 'i32') ref = cuda.arange(128, 'i32') k[{2, 64}](ref, b, 128) cuda.sync()
function same(x, y) for i = 0, 127 do if x[i] ~= y[i] then return false end end return true end"

printf 'break 11 if threadIdx.x == 5 && blockIdx.x == 1\ncontinue\nprint v\ncontinue\n' |
  "$BIN" --gpu -e "$SETUP" -e 'k:debug{2, 64}(a, b, 128)' \
    -e 'print("backend " .. cuda.backend(), "gpu results " .. (same(a, ref) and "match" or "differ"))' >"$tmp/out" 2>&1
expect "on the GPU, k:debug says the launch runs on the simulator" "a GPU cannot be paused from here, so this launch runs on the simulator (its arrays are copied there and back)" "$tmp/out"
expect "it stops where asked" "Breakpoint 1, line 11: block (1,0,0), thread (5,0,0)" "$tmp/out"
expect "with the values the GPU arrays held" "v = 172" "$tmp/out"
expect "the launch ends" "The launch of split has finished" "$tmp/out"
expect "the GPU arrays hold what the GPU itself computes" "gpu results match" "$tmp/out"
expect "and the backend is still the GPU" "backend cuda" "$tmp/out"

printf 'break 11 if blockIdx.x == 1\ncontinue\nquit\n' |
  "$BIN" --gpu -e "$SETUP" -e 'k:debug{2, 64}(a, b, 128)' \
    -e 'local ok = true for i = 0, 63 do ok = ok and a[i] == ref[i] end for i = 64, 127 do ok = ok and a[i] == i end print("half " .. tostring(ok))' >"$tmp/out" 2>&1
expect "quit abandons the launch" "abandoned where it stood" "$tmp/out"
expect "and the GPU array keeps what block 0 wrote, block 1 nothing" "half true" "$tmp/out"
exit $status
