#!/bin/sh
# tests/startup.sh BIN: what start-up loads, and the compiler's child process. NVRTC (libnvrtc,
# over 100 MB) is loaded only by the child that compiles, never by the console or the engine,
# read from /proc/PID/maps; a missing or broken NVRTC is named at the first compile and the
# REPL goes on; the compile's child dies with the REPL, and Ctrl-C stops a compile. GNU
# Readline is loaded only by a console on a terminal; without it the prompt works and says
# what is missing. The lesson engine and lua/visual/visual.lua wait for their first use; the banner
# still says where the learner was. Prints ok / not ok lines.
BIN=$1
. tests/shlib.sh
plan 42
export XDG_CACHE_HOME="$tmp/cache" # every compile here is a real one, never a cache hit

# maps PID: PID maps libnvrtc (fails for a process that is gone)
maps() { grep -q libnvrtc "/proc/$1/maps" 2>/dev/null; }
# alive PID: running (a zombie waiting to be reaped counts as gone)
alive() { case $(ps -o stat= -p "$1") in "" | Z*) return 1 ;; esac; }
gone() { ! alive "$1"; }
# compiling PID: PID has a child that has loaded NVRTC (it is in the middle of a compile); the
# child's pid is left in $tmp/child
compiling() {
  for c in $(pgrep -P "$1"); do
    maps "$c" && echo "$c" >"$tmp/child" && return 0
  done
  return 1
}

# A kernel NVRTC takes tens of seconds over (each level of the template doubles the calls it
# inlines), so a test has all the time it needs to find the compile under way.
cat >"$tmp/slow.cu" <<'EOF'
template <int N> struct R {
  __device__ static float f(float x) { return R<N - 1>::f(x * 1.0001f + N) + R<N - 1>::f(x - N) * 0.5f; }
};
template <> struct R<0> { __device__ static float f(float x) { return x; } };
__global__ void slow(float *a) { a[threadIdx.x] = R<24>::f(a[threadIdx.x]); }
EOF
SLOW="print(\"compil\" .. \"ing\") io.stdout:flush() k = cuda.kernel \"$tmp/slow.cu\""
QUICK='k = cuda.kernel "__global__ void quick(float *a) { a[0] = 1; }" print("comp" .. "iled", k ~= nil)'

# start ARGS...: cudalab ARGS reading lines from the FIFO $tmp/in (held open on fd 3), output in
# $tmp/out; $console and, once it answers a first line, $engine are its processes.
start() {
  rm -f "$tmp/in" "$tmp/out"
  mkfifo "$tmp/in"
  "$BIN" "$@" <"$tmp/in" >"$tmp/out" 2>&1 &
  console=$!
  exec 3>"$tmp/in"
  echo 'print("rea" .. "dy")' >&3
  await "$tmp/out" "ready"
  engine=$(pgrep -P "$console")
}
# finish: ends the input and waits for the console
finish() {
  exec 3>&-
  wait "$console" 2>/dev/null
}
# cleanup PID: a child a failed test left compiling is stopped here, not left to the machine
cleanup() { alive "$1" && kill -9 "$1" 2>/dev/null; }

# --- the console and the engine never map NVRTC: at the prompt, and after a compile ---
for be in none sim; do
  start --backend "$be"
  if [ -z "$engine" ]; then
    bad "--backend $be: no engine process found under the console: $(tail -n 3 "$tmp/out")"
    bad "--backend $be: (skipped: no engine)"; bad "--backend $be: (skipped: no engine)"
    finish
    continue
  fi
  maps "$console" && bad "--backend $be: the console maps libnvrtc at the prompt" ||
    ok "--backend $be: the console does not map libnvrtc at the prompt"
  maps "$engine" && bad "--backend $be: the engine maps libnvrtc at the prompt" ||
    ok "--backend $be: the engine does not map libnvrtc at the prompt"
  echo "$QUICK" >&3
  await "$tmp/out" "compiled	true"
  if maps "$console" || maps "$engine"; then bad "--backend $be: libnvrtc is mapped after a compile: $(cat "$tmp/out")"
  else ok "--backend $be: after a compile neither maps libnvrtc (the compile's child loaded it)"; fi
  finish
done
"$BIN" -v >"$tmp/out" 2>&1
expect "the version line names NVRTC's version without loading it" "NVRTC 1" "$tmp/out"

# --- the child that compiles is the one that maps NVRTC ---
start --backend none
echo "$SLOW" >&3
if poll 30 compiling "$engine"; then
  child=$(cat "$tmp/child")
  ok "during a compile the engine's child maps libnvrtc"
  maps "$engine" && bad "the engine maps libnvrtc during a compile" || ok "and the engine does not"
else
  child=
  bad "no child of the engine loaded NVRTC within 30 s: $(tail -n 3 "$tmp/out")"
  bad "and the engine does not (skipped: no compile found)"
fi

# --- the compile's child dies with the REPL, killed mid-compile with SIGKILL ---
kill -9 "$console"
wait "$console" 2>/dev/null # the shell would say "Killed"
exec 3>&-
if [ -z "$child" ]; then bad "kill -9 of the console: no compile to watch"
elif poll 1 gone "$child"; then ok "kill -9 of the console mid-compile: its compile's child is gone within 1 s"
else bad "kill -9 of the console left the compile's child $child running"; cleanup "$child"; fi
poll 1 gone "$engine" || cleanup "$engine"

# and killed engine: the console starts a new one, the compile's child is gone all the same
start --backend none
echo "$SLOW" >&3
if poll 30 compiling "$engine"; then
  child=$(cat "$tmp/child")
  kill -9 "$engine"
  if poll 1 gone "$child"; then ok "kill -9 of the engine mid-compile: its compile's child is gone within 1 s"
  else bad "kill -9 of the engine left the compile's child $child running"; cleanup "$child"; fi
else
  bad "kill -9 of the engine: no compile found under way: $(tail -n 3 "$tmp/out")"
fi
echo 'print("fresh" .. " engine", 1 + 1)' >&3
await "$tmp/out" "fresh engine	2"
expect "and the REPL goes on with a fresh engine" "fresh engine	2" "$tmp/out"
finish

# --- SIGINT sent to the console alone (as kill or a test does) stops a compile: the console
# forwards it to the engine, which kills and reaps the child; the engine keeps its state ---
start --backend none
echo 'x = 41' >&3
echo "$SLOW" >&3
if poll 30 compiling "$engine"; then
  child=$(cat "$tmp/child")
  kill -INT "$console"
  if await "$tmp/out" "compile interrupted" && poll 1 gone "$child"; then
    ok "SIGINT to the console stops a compile, and its child is gone"
  else bad "SIGINT did not stop the compile: $(tail -n 3 "$tmp/out")"; cleanup "$child"; fi
else
  bad "SIGINT: no compile found under way: $(tail -n 3 "$tmp/out")"
fi
echo 'print("after", x + 1)' >&3
await "$tmp/out" "after	42"
expect "the engine keeps its variables after an interrupted compile" "after	42" "$tmp/out"
grep -q "started a fresh engine" "$tmp/out" && bad "the interrupt restarted the engine" ||
  ok "and no fresh engine was needed"
finish

# --- Ctrl-C typed at a terminal during a compile: back at the prompt with the message, within a
# second, and the next line works. The terminal's SIGINT reaches the console, the engine and
# the compile's child (one process group). ---
rm -f "$tmp/tty" "$tmp/engine.pid" "$tmp/t0" "$tmp/t1" "$tmp/child"
(await "$tmp/tty" "> " 1 && printf 'os.execute("echo $PPID > %s/engine.pid")\n' "$tmp"
 await "$tmp/tty" "> " 2 && printf '%s\n' "$SLOW"
 poll 5 test -s "$tmp/engine.pid" && poll 30 compiling "$(cat "$tmp/engine.pid")"
 date +%s%N >"$tmp/t0"
 printf '\003'
 await "$tmp/tty" "compile interrupted" && date +%s%N >"$tmp/t1"
 await "$tmp/tty" "> " 3 && printf 'print("after" .. " ctrl-c", 2 + 2)\n'
 await "$tmp/tty" "after ctrl-c	4"; printf '\004') |
  timeout 120 script -qefc "$BIN --backend none" /dev/null >"$tmp/tty" 2>&1
child=$(cat "$tmp/child" 2>/dev/null)
expect "Ctrl-C at a terminal stops a compile, with a message" "compile interrupted (Ctrl-C): the kernel was not compiled" "$tmp/tty"
if [ -s "$tmp/t0" ] && [ -s "$tmp/t1" ]; then
  ms=$((($(cat "$tmp/t1") - $(cat "$tmp/t0")) / 1000000))
  [ "$ms" -lt 1000 ] && ok "and the message comes within a second (${ms} ms)" ||
    bad "the message came ${ms} ms after Ctrl-C"
else
  bad "the message never came after Ctrl-C: $(tr -d '\r' <"$tmp/tty" | tail -n 5)"
fi
expect "and the next line works" "after ctrl-c	4" "$tmp/tty"
[ -n "$child" ] && gone "$child" && ok "and the compile's child is gone" ||
  { bad "the compile's child ${child:-(none found)} outlived Ctrl-C"; [ -n "$child" ] && cleanup "$child"; }

# --- a missing or broken NVRTC: the first compile says so and names the file; the REPL goes on ---
nvrtc_case() { # NAME PATH NEEDLE: CUDALAB_NVRTC=PATH, a compile, then a line that must work
  printf '%s\nprint("still" .. " here", 1 + 1)\n' "$QUICK" |
    CUDALAB_NVRTC="$2" "$BIN" --backend none >"$tmp/out" 2>&1
  expect "$1: the first compile says so" "NVRTC, the CUDA compiler, could not be" "$tmp/out"
  expect "$1: and names the file" "$3" "$tmp/out"
  expect "$1: and the REPL goes on" "still here	2" "$tmp/out"
}
nvrtc_case "a missing NVRTC" "$tmp/nowhere/libnvrtc.so.13" \
  "$tmp/nowhere/libnvrtc.so.13: cannot open shared object file"
: >"$tmp/libnvrtc.so.13"
nvrtc_case "a broken NVRTC (an empty file)" "$tmp/libnvrtc.so.13" "$tmp/libnvrtc.so.13: file too short"
CUDALAB_NVRTC="$tmp/nowhere/libnvrtc.so.13" "$BIN" -v >"$tmp/out" 2>&1
expect "without NVRTC the version line says it is unavailable" "NVRTC unavailable" "$tmp/out"

# --- NVRTC runs with the driver's compute cache off: where a GPU driver is installed, a hit there
# skips ptxas and its -v report, and k:info() knew no registers. A wrapper around the real
# libnvrtc records what the compile saw in its environment. ---
cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
mkdir -p "$tmp/wrap"
cat >"$tmp/wrap/wrap.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int nvrtcCompileProgram(void *prog, int n, const char *const *opts) {
  const char *v = getenv("CUDA_CACHE_DISABLE");
  FILE *f = fopen(getenv("WRAP_OUT"), "a");
  if (f) fprintf(f, "CUDA_CACHE_DISABLE=%s\n", v ? v : "(unset)");
  if (f) fclose(f);
  void *h = dlopen(REAL, RTLD_NOW | RTLD_LOCAL);
  int (*real)(void *, int, const char *const *) = h ? (int (*)(void *, int, const char *const *))dlsym(h, "nvrtcCompileProgram") : NULL;
  return real ? real(prog, n, opts) : 1;
}
EOF
if cc -shared -fPIC -DREAL="\"$cuda_lib/libnvrtc.so.13\"" -o "$tmp/wrap/libnvrtc.so.13" "$tmp/wrap/wrap.c" \
     -L"$cuda_lib" -Wl,--no-as-needed -lnvrtc -ldl -Wl,-rpath,"$cuda_lib" 2>"$tmp/wrap/cc.log"; then
  ln -sf "$cuda_lib"/libnvrtc-builtins.so.* "$tmp/wrap/"
  WRAP_OUT="$tmp/wrap/seen" CUDALAB_NVRTC="$tmp/wrap/libnvrtc.so.13" XDG_CACHE_HOME="$tmp/wrapcache" \
    "$BIN" --sim -e 'print("registers", cuda.kernel("sincos.cu"):info().registers)' >"$tmp/out" 2>&1
  expect "NVRTC compiles with the driver's compute cache off" "CUDA_CACHE_DISABLE=1" "$tmp/wrap/seen"
  grep -q "^registers	[1-9]" "$tmp/out" && ok "through the wrapper, k:info() has ptxas's register count" ||
    bad "through the wrapper, k:info() has no register count: $(tail -n 3 "$tmp/out")"
else
  bad "the NVRTC wrapper did not build: $(tail -n 3 "$tmp/wrap/cc.log")"
  bad "(skipped: no wrapper)"
fi

# --- GNU Readline: a console reading a pipe never loads it; one on a terminal does, and its
# engine (forked before) does not ---
# readline PID: PID is running and maps libreadline
readline() { alive "$1" && grep -q libreadline "/proc/$1/maps" 2>/dev/null; }
start --backend none
if [ -z "$engine" ]; then
  bad "a pipe: no engine process found under the console: $(tail -n 3 "$tmp/out")"
  bad "a pipe: (skipped: no engine)"
else
  alive "$console" && ! readline "$console" && ok "on a pipe the console does not map libreadline" ||
    bad "on a pipe the console maps libreadline (or is gone)"
  alive "$engine" && ! readline "$engine" && ok "nor does its engine" ||
    bad "on a pipe the engine maps libreadline (or is gone)"
fi
finish
# On a terminal: the console's pid is the engine's parent; the engine names itself through
# os.execute's shell ($PPID there is the engine).
rm -f "$tmp/tty" "$tmp/engine.pid" "$tmp/rl"
(await "$tmp/tty" "> " 1 && printf 'os.execute("echo $PPID > %s/engine.pid")\n' "$tmp"
 await "$tmp/tty" "> " 2 && poll 5 test -s "$tmp/engine.pid"
 e=$(cat "$tmp/engine.pid")
 c=$(ps -o ppid= -p "$e" | tr -d ' ')
 { readline "$c" && echo console; readline "$e" && echo engine; echo checked; } >"$tmp/rl"
 printf 'cuda.versi\t\n'
 await "$tmp/tty" "> " 3; printf '\004') |
  timeout 60 script -qefc "$BIN --backend none" /dev/null >"$tmp/tty" 2>&1
grep -qx console "$tmp/rl" && ok "on a terminal the console maps libreadline" ||
  bad "on a terminal the console does not map libreadline: $(cat "$tmp/rl" 2>/dev/null)"
grep -qx checked "$tmp/rl" && ! grep -qx engine "$tmp/rl" && ok "and its engine does not" ||
  bad "on a terminal the engine maps libreadline, or was not found: $(cat "$tmp/rl" 2>/dev/null)"
expect "and Tab completes a name there" "> cuda.version" "$tmp/tty"
# Without a loadable readline (empty files in its place on the library path) a terminal gets
# the plain prompt, and one line on what is missing.
mkdir -p "$tmp/norl"
: >"$tmp/norl/libreadline.so.8"
: >"$tmp/norl/libreadline.so"
rm -f "$tmp/tty"
typein "$tmp/tty" 'print("plain" .. " prompt", 6 * 7)' |
  LD_LIBRARY_PATH="$tmp/norl" timeout 60 script -qefc "$BIN --backend none" /dev/null >"$tmp/tty" 2>&1
expect "without readline a terminal is told that history and completion are off" \
  "cudalab: history and completion are off: GNU Readline could not be loaded" "$tmp/tty"
expect "with what the loader said" "$tmp/norl/libreadline.so.8: file too short" "$tmp/tty"
expect "and how to have them" "install libreadline8 to have them" "$tmp/tty"
expect "and the prompt still reads and runs lines" "plain prompt	42" "$tmp/tty"
rm -f "$tmp/tty"
(await "$tmp/tty" "> " 1 && printf 'x = \003'
 await "$tmp/tty" "> " 2 && printf 'print("after" .. " ctrl-c", x)\n'
 await "$tmp/tty" "> " 3; printf '\004') |
  LD_LIBRARY_PATH="$tmp/norl" timeout 60 script -qefc "$BIN --backend none" /dev/null >"$tmp/tty" 2>&1
expect "and Ctrl-C there drops the line being typed" "after ctrl-c	nil" "$tmp/tty"
# --- what lua/init.lua leaves for later: lesson_boot.lua (the banner's note), visual.lua and the
# lesson engine; the note on where the learner was is on a terminal's banner all the same ---
"$BIN" --backend none -e 'print("loaded:", package.loaded.lesson_boot, package.loaded.visual,
  package.loaded.lessons, type(lessons), type(cuda.sweep), type(cuda.roofline.measure))' >"$tmp/out" 2>&1
expect "start-up loads neither lesson_boot.lua, visual.lua nor the lesson engine, whose stubs are there" \
  "$(printf 'loaded:\tnil\tnil\tnil\tfunction\tfunction\tfunction')" "$tmp/out"
rm -f "$tmp/tty"
typein "$tmp/tty" 'lesson(1)' 'next()' | COLUMNS=100 timeout 60 script -qefc "$BIN --sim" /dev/null >"$tmp/tty" 2>&1
rm -f "$tmp/tty2"
typein "$tmp/tty2" | timeout 60 script -qefc "$BIN --sim" /dev/null >"$tmp/tty2" 2>&1
expect "the next start's banner says where the learner was" \
  "You were in lesson 01-welcome, at step 2: lesson(1) resumes it." "$tmp/tty2"
# --- the caps a compile runs under (the grader's): a template that expands without end is stopped
# at its CPU time, with a message that says so; an ordinary kernel compiles under them ---
printf '%s\n' 'template <int N> struct W { W<N - 1> a, b; };' 'template <> struct W<0> { char c; };' \
  '__global__ void k(char *o) { W<40> w; o[0] = sizeof(w) > 0; }' >"$tmp/bomb.cu"
CUDALAB_COMPILE_SECONDS=2 CUDALAB_COMPILE_MEMORY=1500000000 timeout 60 "$BIN" --sim -e "
  print(select(2, pcall(cuda.kernel, '$tmp/bomb.cu')))" >"$tmp/out" 2>&1
expect "a compile past CUDALAB_COMPILE_SECONDS is stopped, saying so" \
  "the compile was stopped after 2 s of CPU time" "$tmp/out"
CUDALAB_COMPILE_SECONDS=20 CUDALAB_COMPILE_MEMORY=400000000 XDG_CACHE_HOME="$tmp/capcache" \
  "$BIN" --sim -e 'print("compiled", pcall(cuda.kernel, "__global__ void k(float *a) { a[0] = 1; }"))' \
  >"$tmp/out" 2>&1
expect "an ordinary kernel compiles under the caps" "compiled	true" "$tmp/out"
exit $status
