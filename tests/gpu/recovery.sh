#!/bin/sh
# tests/gpu/recovery.sh BIN: the recovery paths on a real GPU. An illegal address poisons the
# CUDA context for the whole process; the console must replace the engine and carry on. A kernel
# that never ends must give the prompt back after Ctrl-C.
BIN=$1
. tests/shlib.sh
plan 10

cat >"$tmp/sticky.lua" <<'LUA'
bad = cuda.kernel[[__global__ void bad(float *a) { a[threadIdx.x + (1ll << 40)] = 1; }]]
a = cuda.array(32)
bad[{1, 32}](a)
cuda.sync()
print("alive", x)
b = cuda.ones(8)
k = cuda.kernel("inc.cu")
k[{1, 32}](b, 8)
print("fresh engine runs kernels", b[7])
LUA
start=$(date +%s%N)
"$BIN" --gpu <"$tmp/sticky.lua" >"$tmp/out" 2>&1
end=$(date +%s%N)
expect "an illegal address is reported by name" "cudaErrorIllegalAddress" "$tmp/out"
expect "the console starts a fresh engine" "started a fresh engine" "$tmp/out"
expect "and suggests the simulator" "run the launch on the simulator" "$tmp/out"
expect "the REPL goes on" "alive	nil" "$tmp/out"
expect "the fresh engine runs kernels" "fresh engine runs kernels	2.0" "$tmp/out"
echo "# sticky error recovery session: $(( (end - start) / 1000000 )) ms in all"

head -n 4 "$tmp/sticky.lua" >"$tmp/script.lua"
"$BIN" --gpu "$tmp/script.lua" >"$tmp/out" 2>&1
rc=$?
[ $rc -ne 0 ] && ok "a script that hits a sticky error exits non-zero ($rc)" || bad "script exit status 0"
expect "with the message" "cudaErrorIllegalAddress" "$tmp/out"

cat >"$tmp/spin.lua" <<'LUA'
spin = cuda.kernel[[__global__ void spin(int *flag) { while (atomicAdd(flag, 0) == 0) {} }]]
f = cuda.array(1, "i32")
spin[{1, 1}](f) print("spin" .. "ning") io.stdout:flush() cuda.sync()
LUA
# SIGINT once the kernel is in flight (its marker printed), the next lines once it is stopped
rm -f "$tmp/out"
(cat "$tmp/spin.lua"; await "$tmp/out" "interrupted"
 printf 'print("prompt is back")\nk = cuda.kernel("inc.cu") a = cuda.ones(4) k[{1, 32}](a, 4) print(a[0])\n') |
  "$BIN" --gpu >"$tmp/out" 2>&1 &
pid=$!
await "$tmp/out" "spinning"
kill -INT $pid
wait $pid
expect "Ctrl-C during a kernel that never ends" "interrupted while waiting for the GPU" "$tmp/out"
expect "gives the prompt back" "prompt is back" "$tmp/out"
expect "with a working GPU" "2.0" "$tmp/out"
exit $status
