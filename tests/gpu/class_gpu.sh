#!/bin/sh
# tests/gpu/class_gpu.sh BIN: the classroom on a real GPU. A session holds no GPU memory until it
# first uses the GPU (thirty learners who have only logged in must not take 500 MiB each), and a
# class's limits hold there: an array over memory_per_learner is refused with the cap, and a
# kernel that never ends is stopped at kernel_time_limit, after which the session goes on.
. "$(dirname "$0")/../shlib.sh"
BIN=$(readlink -f "${1:-${CUDALAB_TEST_BIN:-build/cudalab}}")
plan 6
if ! command -v nvidia-smi >/dev/null 2>&1; then
  for i in 1 2 3 4 5 6; do echo "ok - classroom on the GPU $i # SKIP no nvidia-smi"; done
  exit 0
fi
# the GPU memory nvidia-smi shows for any of the given pids (MiB), or nothing
gpu_mem_of() {
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits |
    awk -F', *' -v pids=" $* " 'index(pids, " " $1 " ") {s += $2; n++} END {if (n) print s}'
}
fifo=$tmp/in
mkfifo "$fifo"
"$BIN" --gpu <"$fifo" >"$tmp/idle.out" 2>&1 &
console=$!
exec 3>"$fifo"
echo 'x = 6 * 7' >&3
echo 'print("typed", x)' >&3
await "$tmp/idle.out" "typed	42"
engine=$(pgrep -P "$console" | head -n 1)
held=$(gpu_mem_of "$console" "$engine")
if [ -z "$held" ]; then ok "a session that has not used the GPU holds no GPU memory"
else bad "a session that has not used the GPU holds $held MiB"; fi
echo 'a = cuda.array(1000); a:fill(1); print("used", a[999])' >&3
await "$tmp/idle.out" "used	1.0"
held=$(gpu_mem_of "$console" "$engine")
if [ -n "$held" ] && [ "$held" -gt 0 ]; then ok "its first array makes the context ($held MiB)"
else bad "after its first array the session holds no GPU memory"; sed 's/^/    /' "$tmp/idle.out"; fi
exec 3>&-
wait "$console"

# A class on the GPU with its limits
class=$tmp/class
"$BIN" --class-init "$class" --title "GPU class" >/dev/null 2>&1
cat >"$class/class.lua" <<'EOF'
return { title = "GPU class", backend = "gpu", memory_per_learner = "256 MiB",
         kernel_time_limit = "1 s" }
EOF
printf '%s\n' 'print("on", cuda.backend())' 'a = cuda.array(128 * 2^20)' \
  'spin = cuda.kernel "__global__ void spin(volatile int *x) { while (x[0] == 0) { x[1] = x[1] + 1; } }"' \
  'spin[{1, 1}](cuda.zeros(2, "i32")); cuda.sync()' \
  'b = cuda.arange(5); print("after", b[4])' |
  timeout 120 "$BIN" --class "$class" >"$tmp/class.out" 2>&1
expect "the class runs on the GPU" "on	cuda" "$tmp/class.out"
expect "an array over memory_per_learner is refused on the GPU, naming the cap" "256 MiB" "$tmp/class.out"
expect "an endless kernel is stopped at kernel_time_limit" "kernel_time_limit" "$tmp/class.out"
expect "the session goes on in a fresh engine" "after	4.0" "$tmp/class.out"
exit $status
