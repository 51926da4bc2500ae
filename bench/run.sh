#!/bin/sh
# bench/run.sh: measures cudalab's figures beside their anchors in one run and writes
# bench/RESULTS.md. Every figure is printed as "name: value unit".
BUILD=${BUILD:-build}
BIN=$BUILD/cudalab
out=$(mktemp)
scratch=$(mktemp -d)
trap 'rm -rf "$out" "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state"

# median_ms CMD...: median wall time of 11 runs of a whole command, in ms.
median_ms() {
  for i in $(seq 11); do
    s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
    echo $(( (e - s) / 1000 ))
  done | sort -n | sed -n 6p | awk '{printf "%.1f", $1 / 1000}'
}

echo "startup_ms: $(median_ms sh -c "echo 'os.exit(0)' | $BIN") ms" | tee -a "$out"
# Start-up beside an empty C program started the same way (fork, exec, wait), and where it goes:
# bench/startup.c reads the phase marks CUDALAB_STARTUP_TRACE makes cudalab write (repl/common/trace.c).
"$BUILD/bench/startup" 101 "$BUILD/bench/empty" "$BIN" --backend none -e '' | tee -a "$out"
gpu=0
"$BIN" -e 'os.exit(cuda.backend() == "cuda" and 0 or 1)' 2>/dev/null && gpu=1
if [ $gpu = 1 ]; then
  FIRST='k = cuda.kernel "inc.cu" a = cuda.array(1) k[{1, 1}](a, 1) cuda.sync()'
  "$BIN" -e "$FIRST"   # fills the kernel cache
  echo "first_launch_ms: $(median_ms "$BIN" -e "$FIRST") ms" | tee -a "$out"
  "$BUILD/bench/launch_c" 100000 | tee -a "$out"
  if python3 -c 'import cupy' 2>/dev/null; then python3 bench/cupy_anchor.py 100000 | tee -a "$out"; fi
fi
"$BIN" bench/bench.lua | tee -a "$out"
"$BIN" -e 'cuda.device() t = cpu.time(function() cuda.kernel "__global__ void bench_cached(float *a) { a[0] = 2; }" end, {warmup = 0, reps = 1}) print(string.format("cache_hit_new_process_ms: %.4g ms", t.median))' | tee -a "$out"

# The simulator: its own rate (thread instructions, one and all host threads) and threads per
# second on a vector add beside Numba's CUDA simulator on the same kernel.
# (best of 5 launches each: the first launch of a process also pays for first-touch page faults)
make --no-print-directory -s build/sim/bench_speed >/dev/null 2>&1
if [ -x build/sim/bench_speed ]; then
  build/sim/bench_speed | sed -n 's|^\([a-z0-9]*\) threads=\([0-9]*\) best \([0-9.e+]*\)/s.*|sim_thread_insts_per_s_\1_t\2: \3 /s|p' |
    sed 's/_mm16_/_matmul16_/' | tee -a "$out"
fi
"$BIN" --sim bench/bench.lua sim | tee -a "$out"
if /usr/bin/python3 -c 'import numba' 2>/dev/null; then
  /usr/bin/python3 bench/numba_sim.py 16384 2>/dev/null | tee -a "$out"
fi

val() { grep "^$1:" "$out" | head -n 1 | awk '{print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b; else print "n/a" }'; }
row() { echo "| $1 | $2 | $3 | $4 | $5 |"; }
# "launch_ratio_empty: 1.0123 x (15 rounds: 0.9987 to 1.0456)" -> 15, and 0.9987 to 1.0456
rounds_of() { grep "^launch_ratio_$1:" "$out" | sed 's/.*(\([0-9]*\) rounds.*/\1/'; }
range_of() { grep "^launch_ratio_$1:" "$out" | sed 's/.*rounds: \(.*\))/\1/'; }
machine="no GPU"
[ $gpu = 1 ] && machine=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
  echo "# Benchmark results"
  echo
  echo "Measured $(date -u +%Y-%m-%d) by \`make bench\` on: $machine; $cpu, $(nproc) cores."
  echo "Each figure stands beside its anchor from the same run; a ratio is cudalab / anchor"
  echo "(for times lower is better, for rates higher is better)."
  echo
  echo "| figure | cudalab | anchor | anchor value | ratio |"
  echo "|---|---|---|---|---|"
  row "startup_ms: process start to prompt, piped input" "$(val startup_ms) ms" "goal" "100 ms" ""
  row "startup_ratio: \`cudalab --backend none -e ''\`, median of 101 runs (goal: 2x)" "$(val startup_exec_ms) ms" "empty C program, started the same way" "$(val startup_empty_c_ms) ms" "$(val startup_ratio)"
  for p in process console backend lua_state modules banner run; do
    case $p in
      process) what="process start: fork, exec, the dynamic loader" ;;
      console) what="the console, to the engine's fork" ;;
      backend) what="the engine: choosing the backend" ;;
      lua_state) what="the Lua state, its standard libraries and \`cuda\`" ;;
      modules) what="lua/init.lua and the modules it loads" ;;
      banner) what="joining a class, the banner (neither here)" ;;
      run) what="the -e chunk, and the engine's end" ;;
    esac
    row "startup phase, median: $what" "$(val startup_phase_${p}_ms) ms" "" "" ""
  done
  row "nvrtc_compile_ms: source to launchable kernel" "$(val nvrtc_compile_ms) ms" "" "" ""
  row "cache_hit_ms: source to launchable kernel, cached, same process" "$(val cache_hit_ms) ms" "goal" "1 ms" ""
  row "cache_hit_new_process_ms: the same from disk in a new process" "$(val cache_hit_new_process_ms) ms" "goal" "1 ms" ""
  row "cache_hit_ms on the simulator, same process" "$(val sim_cache_hit_ms) ms" "goal" "1 ms" ""
  if [ $gpu = 1 ]; then
    row "first_launch_ms: process start to a completed launch of a cached kernel" "$(val first_launch_ms) ms" "" "" ""
    for k in empty 3arrays; do
      what="empty kernel"; [ $k = 3arrays ] && what="3 arrays + int"
      row "launch_ratio_vs_c, $what (median of $(rounds_of $k) rounds, range $(range_of $k))" "$(val lua_launch_${k}_us) µs" "C loop of cudaLaunchKernel, same process" "$(val c_launch_${k}_us) µs" "$(val launch_ratio_$k)"
      row "launch, $what: what Lua adds (median of $(rounds_of drv_$k) rounds, range $(range_of drv_$k))" "$(val lua_launch_${k}_us) µs" "C loop of cuLaunchKernel (cudalab's own call), same process" "$(val c_drv_launch_${k}_us) µs" "$(val launch_ratio_drv_$k)"
    done
    row "launch, 3 arrays + int, new {grid, block} each time" "$(val lua_launch_3arrays_newcfg_us) µs" "C loop, same process" "$(val c_launch_3arrays_us) µs" "$(ratio "$(val lua_launch_3arrays_newcfg_us)" "$(val c_launch_3arrays_us)")"
    row "launch, empty kernel" "$(val lua_launch_empty_us) µs" "C program, separate process" "$(val c_program_launch_empty_us) µs" "$(ratio "$(val lua_launch_empty_us)" "$(val c_program_launch_empty_us)")"
    row "launch, 3 arrays + int" "$(val lua_launch_3arrays_us) µs" "C program, separate process" "$(val c_program_launch_3arrays_us) µs" "$(ratio "$(val lua_launch_3arrays_us)" "$(val c_program_launch_3arrays_us)")"
    row "launch, empty kernel" "$(val lua_launch_empty_us) µs" "CuPy RawKernel" "$(val cupy_launch_empty_us) µs" "$(ratio "$(val lua_launch_empty_us)" "$(val cupy_launch_empty_us)")"
    row "launch, 3 arrays + int" "$(val lua_launch_3arrays_us) µs" "CuPy RawKernel" "$(val cupy_launch_3arrays_us) µs" "$(ratio "$(val lua_launch_3arrays_us)" "$(val cupy_launch_3arrays_us)")"
    row "startup_ms" "$(val startup_ms) ms" "import cupy" "$(val cupy_import_ms) ms" "$(ratio "$(val startup_ms)" "$(val cupy_import_ms)")"
    row "cache_hit_new_process_ms" "$(val cache_hit_new_process_ms) ms" "CuPy RawModule load, cached" "$(val cupy_module_load_ms) ms" "$(ratio "$(val cache_hit_new_process_ms)" "$(val cupy_module_load_ms)")"
    for op in fill arange rand copy compare compare_rounded; do
      row "builtin_bw_ratio: $op, 1 GiB" "$(val ${op}_GBps) GB/s" "device-to-device copy (C)" "$(val c_d2d_copy_GBps) GB/s" "$(ratio "$(val ${op}_GBps)" "$(val c_d2d_copy_GBps)")"
    done
    row "pinned_copy_ratio: host to device, 1 GiB" "$(val pinned_h2d_GBps) GB/s" "cudaMemcpy from pinned (C)" "$(val c_pinned_h2d_GBps) GB/s" "$(ratio "$(val pinned_h2d_GBps)" "$(val c_pinned_h2d_GBps)")"
  fi
  # The simulator's own rate on a learner's default launch (checks, counters and the model on):
  # goals for one host thread, 3e9 thread instructions per second on a vector add and 2e9 on a
  # 16x16 tiled matmul; the two-thread rows show how it scales and have no goal of their own.
  for f in $(grep '^sim_thread_insts_per_s' "$out" | cut -d: -f1); do
    case $f in
      *vadd_t1) row "$f (simulator, a learner's default launch)" "$(val "$f") /s" "goal" "3e9 /s" "$(ratio "$(val "$f")" 3e9)" ;;
      *matmul16_t1) row "$f (simulator, a learner's default launch)" "$(val "$f") /s" "goal" "2e9 /s" "$(ratio "$(val "$f")" 2e9)" ;;
      *) row "$f (simulator, a learner's default launch)" "$(val "$f") /s" "" "" "" ;;
    esac
  done
  row "sim_vs_numba_ratio: threads per second, vector add" "$(val sim_threads_per_s) /s" "Numba CUDA simulator" "$(val numba_sim_threads_per_s) /s" "$(ratio "$(val sim_threads_per_s)" "$(val numba_sim_threads_per_s)")"
  # What the H200 timing model adds to a simulated launch (goal: at most 1.2x), and how close it
  # comes to the H200 (bench/MODEL.md, written by make model-check).
  for k in vadd10M matmul_tiled256; do
    r=$(grep "^sim_model_overhead_$k:" "$out" | head -n 1)
    row "sim_model_overhead, $k (median of 7 rounds, range $(echo "$r" | sed 's/.*rounds: \(.*\))/\1/'))" "$(val sim_${k}_model_on_ms) ms" "the same launch, model off" "$(val sim_${k}_model_off_ms) ms" "$(val sim_model_overhead_$k)"
  done
  # What shared-memory race checking (on by default on the simulator) adds to a launch.
  for k in matmul_tiled256 reduce_shared1M vadd10M; do
    r=$(grep "^sim_race_overhead_$k:" "$out" | head -n 1)
    row "sim_race_overhead, $k (median of 7 rounds, range $(echo "$r" | sed 's/.*rounds: \(.*\))/\1/'))" "$(val sim_${k}_race_on_ms) ms" "the same launch, race checking off" "$(val sim_${k}_race_off_ms) ms" "$(val sim_race_overhead_$k)"
  done
  # Both together, as a learner's launch has them (goal: at most 1.3x).
  for k in vadd10M matmul_tiled256 reduce_shared1M; do
    r=$(grep "^sim_checks_overhead_$k:" "$out" | head -n 1)
    row "sim_checks_overhead, $k (median of 7 rounds, range $(echo "$r" | sed 's/.*rounds: \(.*\))/\1/'))" "$(val sim_${k}_checks_on_ms) ms" "the same launch, model and race checking off" "$(val sim_${k}_checks_off_ms) ms" "$(val sim_checks_overhead_$k)"
  done
  if [ -f bench/MODEL.md ]; then
    row "timing model: median error against the H200 (bench/MODEL.md)" "$(grep -m1 '^median |model' bench/MODEL.md | sed 's/.*: \([0-9.]*%\).*/\1/')" "goal" "20%" ""
  fi
  if [ $gpu = 1 ]; then
    echo
    echo "How the launch rows are measured: 100,000 back-to-back launches per loop, timed to the"
    echo "end of the last kernel. A Lua loop, a C loop of cudaLaunchKernel and a C loop of"
    echo "cuLaunchKernel run in one process (cudalab_bench.c_launch_loop), in rounds whose order rotates;"
    echo "each ratio is the median over the rounds of the per-round ratio, and the range shows"
    echo "its spread. cudalab's own launches call cuLaunchKernel with a function looked up once"
    echo "per kernel, so \"what Lua adds\" is the Lua side alone. The \"C program\" rows time"
    echo "the same cudaLaunchKernel loop in a separate process: on a virtual machine a launch"
    echo "costs up to a third more or less from one process to the next, which is why the"
    echo "ratios come from one process."
  fi
  echo
  echo "The classroom's figures (many learners at once, grading) are in bench/CLASS.md and, on a"
  if [ "${BENCH_CLASS:-1}" = 0 ]; then
    echo "GPU, bench/class/H200.md, written by bench/class/run.sh; this run left them out"
    echo "(BENCH_CLASS=0), so those files hold an earlier run's."
  else
    echo "GPU, bench/class/H200.md, written by bench/class/run.sh in the same \`make bench\`."
  fi
} >bench/RESULTS.md
echo "wrote bench/RESULTS.md"
# The classroom: many learners at once, and grading (bench/class/run.sh; needs root). It takes
# many minutes; BENCH_CLASS=0 leaves it out (and bench/CLASS.md as it was).
if [ "${BENCH_CLASS:-1}" = 0 ]; then
  echo "class bench: left out (BENCH_CLASS=0)"
else
  sh bench/class/run.sh "$BIN"
fi
