#!/bin/sh
# bench/run.sh: measures cudalab's figures beside their anchors in one run and writes
# bench/RESULTS.md. Every figure is printed as "name: value unit".
BUILD=${BUILD:-build}
BIN=$BUILD/cudalab
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Start-up to prompt, piped input: median of 21 runs of a session that only exits.
startup=$(for i in $(seq 21); do
  s=$(date +%s%N); echo 'os.exit(0)' | "$BIN" >/dev/null 2>&1; e=$(date +%s%N)
  echo $(( (e - s) / 1000 ))
done | sort -n | sed -n 11p)
echo "startup_ms: $(echo "$startup" | awk '{printf "%.1f", $1 / 1000}') ms" | tee -a "$out"

gpu=0
if "$BIN" -e 'os.exit(cuda.backend() == "cuda" and 0 or 1)' 2>/dev/null; then gpu=1; fi
if [ $gpu = 1 ]; then "$BUILD/bench/launch_c" 100000 | tee -a "$out"; fi
"$BIN" bench/bench.lua 100000 | tee -a "$out"

# The simulator's rate, one host thread and all of them, on a vector add and a tiled matmul.
make --no-print-directory -s build/sim/test_speed >/dev/null 2>&1
if [ -x build/sim/test_speed ]; then
  build/sim/test_speed | sed -n 's|^# sim_thread_insts_per_s \([a-z0-9]*\) threads=\([0-9]*\): \([0-9.e+]*\).*|sim_thread_insts_per_s_\1_t\2: \3 /s|p' | tee -a "$out"
fi

val() { grep "^$1:" "$out" | awk '{print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
if [ $gpu = 1 ]; then
  r1=$(ratio "$(val lua_launch_empty_us)" "$(val c_launch_empty_us)")
  r2=$(ratio "$(val lua_launch_3arrays_us)" "$(val c_launch_3arrays_us)")
  echo "launch_ratio_vs_c (empty): $r1 x" | tee -a "$out"
  echo "launch_ratio_vs_c (3 arrays + int): $r2 x" | tee -a "$out"
  machine=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
else
  machine="no GPU"
fi
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
  echo "# Benchmark results"
  echo
  echo "Measured $(date -u +%Y-%m-%d) by \`make bench\` on: $machine; $cpu, $(nproc) cores."
  echo "Each figure stands beside its anchor from the same run; ratios are cudalab / anchor."
  echo
  echo "| figure | value | anchor | anchor value | ratio |"
  echo "|---|---|---|---|---|"
  echo "| startup_ms (process start to prompt, piped input) | $(val startup_ms) ms | goal | 100 ms | |"
  echo "| nvrtc_compile_ms (source to launchable kernel) | $(val nvrtc_compile_ms) ms | C, NVRTC alone | $(val c_nvrtc_compile_ms) ms | |"
  if [ $gpu = 1 ]; then
    echo "| launch, empty kernel, from Lua | $(val lua_launch_empty_us) µs | C loop of cudaLaunchKernel | $(val c_launch_empty_us) µs | $r1 |"
    echo "| launch, 3 arrays + int, from Lua | $(val lua_launch_3arrays_us) µs | C loop of cudaLaunchKernel | $(val c_launch_3arrays_us) µs | $r2 |"
    echo "| launch, 3 arrays + int, new {grid, block} table each time | $(val lua_launch_3arrays_newcfg_us) µs | C loop | $(val c_launch_3arrays_us) µs | $(ratio "$(val lua_launch_3arrays_newcfg_us)" "$(val c_launch_3arrays_us)") |"
  fi
  for f in $(grep '^sim_thread_insts_per_s' "$out" | cut -d: -f1); do
    echo "| $f (simulator, checking and counters on) | $(val "$f") thread-insts/s | goal (one thread) | 3e8 | |"
  done
} >bench/RESULTS.md
echo "wrote bench/RESULTS.md"
