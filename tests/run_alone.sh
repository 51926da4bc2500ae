#!/bin/sh
# tests/run_alone.sh BIN: a run with no prompt after its steps and no terminal on standard input
# (a pipeline, CI, a grading job) goes in one process, with no console and no engine forked
# (repl/console/console.c's run_alone, repl/engine/engine.c's engine_run_alone), and keeps every
# promise the console keeps for such a run: the exit status (os.exit's, 1 for a failing step,
# the steps after it not run), arg before the first chunk, files flushed, a closed pipe ending it
# quietly, Ctrl-C, the debugger's prompt read from the pipe, and make bench's start-up marks.
# A run at a terminal still has its console. Prints ok / not ok lines.
BIN=$1
. tests/shlib.sh
plan 16
export XDG_CACHE_HOME="$tmp/cache"
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac

# The process that runs Lua is the one the shell started: its pid is the shell's, after exec.
PID_CHUNK='io.write(io.open("/proc/self/stat"):read("l"):match("^%d+"))'
sh -c 'echo $$ >"$1"; exec "$2" --sim -e "$3"' sh "$tmp/shell_pid" "$BIN" "$PID_CHUNK" \
  </dev/null >"$tmp/lua_pid" 2>"$tmp/err"
if [ -s "$tmp/lua_pid" ] && [ "$(cat "$tmp/lua_pid")" = "$(cat "$tmp/shell_pid")" ]; then
  ok "piped: Lua runs in the process the shell started"
else bad "piped: Lua ran in pid $(cat "$tmp/lua_pid"), the shell started $(cat "$tmp/shell_pid")"; fi
if command -v script >/dev/null 2>&1; then
  cat >"$tmp/tty.sh" <<EOF
echo \$\$ >"$tmp/tty_shell"
exec "$BIN" --sim -e 'io.write("pid=") $PID_CHUNK'
EOF
  script -qefc "sh $tmp/tty.sh" /dev/null </dev/null >"$tmp/tty_out" 2>&1
  got=$(tr -d '\r' <"$tmp/tty_out" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
  if [ -n "$got" ] && [ "$got" != "$(cat "$tmp/tty_shell")" ]; then
    ok "at a terminal: the console forks an engine"
  else bad "at a terminal: Lua ran in pid '$got', the shell was $(cat "$tmp/tty_shell")"; fi
else ok "at a terminal: the console forks an engine # SKIP no script(1)"; fi

"$BIN" --sim -e 'os.exit(7)' </dev/null
[ $? = 7 ] && ok "os.exit(7): status 7" || bad "os.exit(7): status not 7"
"$BIN" --sim -e 'os.exit(false)' </dev/null
[ $? = 1 ] && ok "os.exit(false): status 1" || bad "os.exit(false): status not 1"

"$BIN" --sim -e 'print("first")' -e 'error("boom")' -e 'print("third")' </dev/null \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && ok "a failing chunk: status 1" || bad "a failing chunk: status $rc"
expect "a failing chunk: its message" "(command line):1: boom" "$tmp/err"
if grep -q first "$tmp/out" && ! grep -q third "$tmp/out"; then
  ok "a failing chunk: the steps before it ran, the one after did not"
else bad "a failing chunk: output was '$(cat "$tmp/out")'"; fi

printf 'io.write("script ", tostring(...), "\\n")\n' >"$tmp/s.lua"
"$BIN" --sim -e 'io.write("arg ", arg[0], " ", arg[1], "\n")' "$tmp/s.lua" x </dev/null \
  >"$tmp/out" 2>&1
if [ "$(cat "$tmp/out")" = "$(printf 'arg %s x\nscript x' "$tmp/s.lua")" ]; then
  ok "arg is set before the first chunk, and the script gets its arguments"
else bad "arg and the script: '$(cat "$tmp/out")'"; fi

"$BIN" --sim -e "f = io.open('$tmp/kept.txt', 'w') f:write('kept') error('late')" </dev/null \
  2>/dev/null
[ "$(cat "$tmp/kept.txt" 2>/dev/null)" = kept ] && ok "a file never closed is flushed at the end" ||
  bad "a file never closed lost its contents"

"$BIN" --sim -e 'for i = 1, 1e7 do print(i) end' </dev/null 2>"$tmp/err" | head -n 1 >"$tmp/out"
[ "$(cat "$tmp/out")" = 1 ] && [ ! -s "$tmp/err" ] && ok "a closed pipe ends the run quietly" ||
  bad "a closed pipe: stdout '$(cat "$tmp/out")', stderr '$(head -c 300 "$tmp/err")'"

# Ctrl-C: the first interrupts a Lua loop and ends the run with status 1.
"$BIN" --sim -e 'io.write("looping\n") io.stdout:flush() while true do end' </dev/null \
  >"$tmp/loop_out" 2>"$tmp/loop_err" &
pid=$!
await "$tmp/loop_out" looping && kill -INT $pid
wait $pid
rc=$?
[ $rc = 1 ] && ok "Ctrl-C in a Lua loop: status 1" || bad "Ctrl-C in a Lua loop: status $rc"
expect "Ctrl-C in a Lua loop: interrupted" "interrupted" "$tmp/loop_err"

# A second Ctrl-C before the first was answered (Lua blocked in C: a read from a pipe that
# never brings a line) ends the process by SIGINT, saying why.
mkfifo "$tmp/fifo"
sleep 60 >"$tmp/fifo" &
writer=$!
"$BIN" --sim -e 'io.write("reading\n") io.stdout:flush() io.read()' <"$tmp/fifo" \
  >"$tmp/read_out" 2>"$tmp/read_err" &
pid=$!
await "$tmp/read_out" reading && kill -INT $pid && sleep 0.3 && kill -INT $pid
wait $pid
rc=$?
kill $writer 2>/dev/null
[ $rc = 130 ] && ok "a second Ctrl-C unanswered: ended by SIGINT" ||
  bad "a second Ctrl-C unanswered: status $rc"
expect "a second Ctrl-C unanswered: says why" "Ctrl-C was not answered" "$tmp/read_err"

# The debugger's prompt reads its commands from the pipe.
cat >"$tmp/dbg.cu" <<'EOF'
__global__ void twice(int *o) {
  int i = threadIdx.x;
  o[i] = i * 2;
}
EOF
printf 'print i\ncontinue\n' | "$BIN" --sim -e "k = cuda.kernel('$tmp/dbg.cu') o = cuda.zeros(32, 'i32')
  k:debug{1, 32}(o) print('after ' .. o[5])" >"$tmp/out" 2>&1
expect "the debugger reads its commands from the pipe" "after 10" "$tmp/out"

# make bench's start-up phases: every mark, once each, in order.
CUDALAB_STARTUP_TRACE=1 "$BIN" --backend none -e '' </dev/null 2>"$tmp/trace" >/dev/null
marks=$(sed -n 's/^cudalab-startup: \([a-z ]*[a-z]\) [0-9.]*$/\1/p' "$tmp/trace" | paste -sd, -)
[ "$marks" = "process,engine fork,backend,lua state,modules,ready,exit" ] &&
  ok "start-up's marks, once each, in order" || bad "start-up's marks: '$marks'"

exit $status
