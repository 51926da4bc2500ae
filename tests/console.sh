#!/bin/sh
# tests/console.sh BIN: the console as a learner meets it: the command line, a terminal (through
# script(1), which gives the REPL a pseudo-terminal), history, completion, Ctrl-C and an engine
# that dies. Prints ok / not ok lines.
BIN=$1
. tests/shlib.sh
plan $([ "$(id -u)" = 0 ] && echo 86 || echo 84) # two tests need root

# --- command line ---
"$BIN" --help >"$tmp/out" 2>&1; expect "--help shows usage" "usage: cudalab [options] [script [args...]]" "$tmp/out"
"$BIN" -v >"$tmp/out" 2>&1; expect "-v shows the version" "cudalab 0.1.0 (Lua 5.4" "$tmp/out"
"$BIN" --frobnicate >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && ok "unknown option exits 2" || bad "unknown option exits 2 (got $rc)"
expect "unknown option is named" "unknown option '--frobnicate'" "$tmp/out"
"$BIN" -e >"$tmp/out" 2>&1; expect "-e without a chunk" "'-e' needs an argument" "$tmp/out"
"$BIN" --backend tpu -e 1 >"$tmp/out" 2>&1; expect "unknown backend" "unknown backend 'tpu' (choose cuda (or gpu), sim or none)" "$tmp/out"
# One list of backend names: what --backend takes, cuda.use takes, and both say the same.
"$BIN" --backend gpu -e 'print(cuda.backend())' >"$tmp/out" 2>&1
[ "$(cat "$tmp/out")" = "cuda" ] && ok "--backend gpu is the cuda backend, as cuda.use(\"gpu\") is" || bad "--backend gpu: $(cat "$tmp/out")"
"$BIN" --backend none -e 'print(select(2, pcall(cuda.use, "tpu")))' >"$tmp/out" 2>&1
expect "cuda.use names the same choices as --backend" "unknown backend 'tpu' (choose cuda (or gpu), sim or none)" "$tmp/out"
"$BIN" --backend none -e 'print(1 + 1)' -e 'print("two")' >"$tmp/out" 2>&1
[ "$(cat "$tmp/out")" = "$(printf '2\ntwo')" ] && ok "-e chunks run in order" || bad "-e chunks run in order: $(cat "$tmp/out")"
printf 'print(select("#", ...), arg[0], ...)\n' >"$tmp/s.lua"
"$BIN" --backend none "$tmp/s.lua" x y >"$tmp/out" 2>&1
[ "$(cat "$tmp/out")" = "$(printf '2\t%s\tx\ty' "$tmp/s.lua")" ] && ok "script gets ... and arg" || bad "script gets ... and arg: $(cat "$tmp/out")"
"$BIN" --backend none -e 'print(#arg, arg[1])' "$tmp/s.lua" x >"$tmp/out" 2>&1
expect "arg exists before -e chunks run" "$(printf '1\tx')" "$tmp/out"
"$BIN" --backend none "$tmp/missing.lua" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && ok "missing script exits 1" || bad "missing script exits 1 (got $rc)"
expect "missing script is named" "cannot open $tmp/missing.lua" "$tmp/out"
printf 'error("bad script")\n' >"$tmp/e.lua"
"$BIN" --backend none "$tmp/e.lua" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && ok "failing script exits 1" || bad "failing script exits 1 (got $rc)"
echo 'print(x)' | "$BIN" --backend none -i -e 'x = 42' >"$tmp/out" 2>&1
expect "-i enters the REPL after -e, keeping its state" "42" "$tmp/out"
"$BIN" --backend none -e 'for i = 1, 100000 do print(i) end' 2>"$tmp/err" | head -n 1 >"$tmp/out"
[ "$(cat "$tmp/out")" = "1" ] && [ ! -s "$tmp/err" ] && ok "output into a closed pipe ends quietly" || bad "SIGPIPE: $(cat "$tmp/err")"

# --- --verify-lessons: what an instructor runs the day before class ---
"$BIN" --sim --verify-lessons 01 >"$tmp/out" 2>&1; rc=$?
[ $rc = 0 ] && ok "--verify-lessons 01 passes" || bad "--verify-lessons 01 exited $rc"
expect "one line per lesson" "ok - lesson 01-welcome" "$tmp/out"
expect "and a summary" "1 passed, 0 failed" "$tmp/out"
"$BIN" --sim --verify-lessons nosuch >"$tmp/out" 2>&1; rc=$?
[ $rc = 1 ] && ok "an unknown lesson fails verification" || bad "unknown lesson exited $rc"
expect "and says why" 'there is no lesson "nosuch"' "$tmp/out"
"$BIN" --verify-lessons 'a"b' >"$tmp/out" 2>&1; rc=$?
[ $rc = 2 ] && ok "a lesson name with a quote is refused" || bad "quoted lesson name exited $rc"
expect "with a message" "'a\"b' is not a lesson name" "$tmp/out"

# --- device printf on the simulator, in order with one host thread ---
"$BIN" --sim -e 'cuda.simopts{threads = 1}' -e 'cuda.kernel[[#include <cstdio>
__global__ void hi() { printf("b%d t%d\n", blockIdx.x, threadIdx.x); }]][{2, 2}]()' >"$tmp/out" 2>&1
[ "$(cat "$tmp/out")" = "$(printf 'b0 t0\nb0 t1\nb1 t0\nb1 t1')" ] && ok "device printf prints in order" || bad "device printf: $(cat "$tmp/out")"

# --- a terminal: banner, prompt, completion, history ---
rm -f "$tmp/tty"
typein "$tmp/tty" 'cuda.versi\t' 'a = cuda.array(3)' 'a:toli\t' |
  script -qefc "$BIN --backend none" /dev/null >"$tmp/tty" 2>&1
expect "banner says there is no GPU" "no GPU found" "$tmp/tty"
expect "banner says how to start a lesson" "lessons()" "$tmp/tty"
expect "prompt" "> " "$tmp/tty"
# the banner's last line says where a lesson was left (lesson_boot.resume_note, called by the
# engine at start-up), and a class that cannot be joined is named without stopping the session
printf 'lesson(1)\nnext()\n' | XDG_STATE_HOME="$tmp/state_resume" "$BIN" --backend none >/dev/null 2>&1
rm -f "$tmp/tty_resume"
typein "$tmp/tty_resume" 'x = 1' |
  XDG_STATE_HOME="$tmp/state_resume" CUDALAB_CLASS="$tmp/no-such-class" \
  script -qefc "$BIN --backend none" /dev/null >"$tmp/tty_resume" 2>&1
expect "the banner says which lesson and step resume" "You were in lesson 01-welcome, at step 2: lesson(1) resumes it." "$tmp/tty_resume"
expect "a class that cannot be joined is named, and the session goes on" \
  "cudalab: cannot join the class in $tmp/no-such-class: there is no class folder" "$tmp/tty_resume"
# What only a completion gives: the name completed on the line, and its value printed alone on
# a line (the banner shows the version too, so "0.1.0" anywhere would pass with no Tab pressed).
expect "tab completes a module field" "> cuda.version" "$tmp/tty"
sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r//g' "$tmp/tty" | grep -qx '0\.1\.0' &&
  ok "and the completed line runs" || bad "the completed line cuda.version did not print 0.1.0"
expect "tab completes a method" "a:tolist(" "$tmp/tty"
hist="$XDG_STATE_HOME/cudalab/history"
expect "history is saved" "a = cuda.array(3)" "$hist"
[ "$(stat -c %a "$hist")" = 600 ] && ok "history file is private (0600)" || bad "history mode $(stat -c %a "$hist")"
[ "$(stat -c %a "$XDG_STATE_HOME/cudalab")" = 700 ] && ok "state folder is private (0700)" || bad "state folder mode"
rm -f "$tmp/tty2"
typein "$tmp/tty2" '\033[A' | script -qefc "$BIN --backend none" /dev/null >"$tmp/tty2" 2>&1
expect "history comes back in the next session (up arrow)" "> a = cuda.array(3)" "$tmp/tty2"
# a chunk typed over several lines is one entry, in the file too: after a restart the up arrow
# brings it back whole (it once came back as three entries, the up arrow giving "end" alone)
rm -f "$tmp/tty7"
typein "$tmp/tty7" 'function g()' '  return 7' 'end' | script -qefc "$BIN --backend none" /dev/null >"$tmp/tty7" 2>&1
expect "a multi-line chunk is one line of the history file" 'function g()\n  return 7\nend' "$hist"
rm -f "$tmp/tty7"
typein "$tmp/tty7" '\033[A' 'print(g() + 1)' | script -qefc "$BIN --backend none" /dev/null >"$tmp/tty7" 2>&1
sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r//g' "$tmp/tty7" >"$tmp/tty7.txt"
grep -qx '> function g()' "$tmp/tty7.txt" && grep -qx '  return 7' "$tmp/tty7.txt" && grep -qx 'end' "$tmp/tty7.txt" &&
  ok "after a restart the up arrow brings the chunk back whole" || bad "the chunk did not come back whole: $(tail -n 6 "$tmp/tty7.txt")"
grep -qx '8' "$tmp/tty7.txt" && ok "and entered again it runs (g() + 1 is 8)" || bad "the recalled chunk did not define g: $(tail -n 4 "$tmp/tty7.txt")"
# a history file readline wrote (one entry a line, 1500 of them) is read as it was, trimmed to
# the last 1000 entries and kept in the new format
mkdir -p "$tmp/state4/cudalab"; chmod 700 "$tmp/state4/cudalab"
seq 1 1500 | sed 's/^/print(#"\\n", /; s/$/)/' >"$tmp/state4/cudalab/history"; chmod 600 "$tmp/state4/cudalab/history"
rm -f "$tmp/tty8"
typein "$tmp/tty8" '\033[A' | XDG_STATE_HOME="$tmp/state4" script -qefc "$BIN --backend none" /dev/null >"$tmp/tty8" 2>&1
sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r//g' "$tmp/tty8" | grep -qxF '1	1500' &&
  ok "an older history file is read one entry a line, backslashes as written" || bad "older history: $(tail -n 3 "$tmp/tty8")"
h4="$tmp/state4/cudalab/history"
[ "$(sed -n 1p "$h4" | cut -c1-17)" = "# cudalab history" ] && [ "$(wc -l <"$h4")" = 1001 ] &&
  [ "$(sed -n 2p "$h4")" = 'print(#"\\n", 501)' ] && [ "$(tail -n 1 "$h4")" = 'print(#"\\n", 1500)' ] &&
  ok "and rewritten in the new format, its last 1000 entries" || bad "older history rewritten as: $(sed -n '1,2p;$p' "$h4")"
truncate -s 17M "$h4"
rm -f "$tmp/tty8"
typein "$tmp/tty8" 'x = 1' | XDG_STATE_HOME="$tmp/state4" script -qefc "$BIN --backend none" /dev/null >"$tmp/tty8" 2>&1
expect "a history file over 16 MiB is not read, and the learner is told" "history is not saved because $h4 is over 16 MiB; remove it" "$tmp/tty8"
[ "$(stat -c %s "$h4")" = $((17 << 20)) ] && ok "and it is left as it was" || bad "the large history file changed"

# --- a paste runs as if typed: each statement or expression in turn (bracketed paste: readline
# hands over the pasted lines as one; it was compiled as one chunk, so x = 21 and x * 2 was a
# syntax error and a function and its call printed nothing)
rm -f "$tmp/paste"
typein "$tmp/paste" '\033[200~x = 21\nx * 2\033[201~' '\033[200~function f(a)\n  return a * 3\nend\nf(5)\n\033[201~' \
  '\033[200~t = {\n  1,\n  2}\n#t + 40\nfor i = 1, 2 do\033[201~' 'print("loop", i) end' |
  script -qefc "$BIN --backend none" /dev/null >"$tmp/paste" 2>&1
sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r//g' "$tmp/paste" >"$tmp/paste.txt"
grep -qx '42' "$tmp/paste.txt" && ok "a pasted assignment and expression print 42" || bad "paste x = 21, x * 2: $(tail -n 12 "$tmp/paste.txt")"
grep -qx '15' "$tmp/paste.txt" && ok "a pasted function then its call prints the call's result" || bad "paste f: $(tail -n 12 "$tmp/paste.txt")"
grep -qx '42' "$tmp/paste.txt" && [ "$(grep -cx '42' "$tmp/paste.txt")" = 2 ] &&
  ok "a pasted table over lines, then an expression on it" || bad "paste t: $(tail -n 12 "$tmp/paste.txt")"
grep -qx 'loop	2' "$tmp/paste.txt" && ok "a paste that ends inside a loop goes on at the next line typed" || bad "paste loop: $(tail -n 6 "$tmp/paste.txt")"
grep -q 'syntax error' "$tmp/paste.txt" && bad "a paste gave a syntax error" || ok "no paste gave a syntax error"
expect "each pasted chunk is its own history entry" 'function f(a)\n  return a * 3\nend' "$hist"

# a history that is a symbolic link, or not a plain file, is left alone (one session once wrote
# through a link and cut the file it pointed to down to its last 1000 lines)
mkdir -p "$tmp/state2/cudalab"
seq 1 1500 >"$tmp/target"; cp "$tmp/target" "$tmp/target.orig"
ln -s "$tmp/target" "$tmp/state2/cudalab/history"
rm -f "$tmp/tty5"
typein "$tmp/tty5" 'x = 1' |
  XDG_STATE_HOME="$tmp/state2" script -qefc "$BIN --backend none" /dev/null >"$tmp/tty5" 2>&1
cmp -s "$tmp/target" "$tmp/target.orig" && ok "a history symlink is not written through" || bad "the file behind a history symlink changed"
expect "and the learner is told why and what to do" "history is not saved because $tmp/state2/cudalab/history is a symbolic link; remove it" "$tmp/tty5"
rm "$tmp/state2/cudalab/history"; mkfifo "$tmp/state2/cudalab/history"
rm -f "$tmp/tty5"
typein "$tmp/tty5" 'x = 1' |
  XDG_STATE_HOME="$tmp/state2" timeout 20 script -qefc "$BIN --backend none" /dev/null >"$tmp/tty5" 2>&1; rc=$?
[ $rc = 0 ] && ok "a FIFO in place of the history does not hang the REPL" || bad "history FIFO: exited $rc"
expect "and is named as not a regular file" "history is not saved because $tmp/state2/cudalab/history is not a regular file" "$tmp/tty5"
if [ "$(id -u)" = 0 ]; then # only root can give a file away
  rm "$tmp/state2/cudalab/history"; cp "$tmp/target.orig" "$tmp/state2/cudalab/history"
  chown 65534 "$tmp/state2/cudalab/history"
  rm -f "$tmp/tty5"
  typein "$tmp/tty5" 'x = 1' |
    XDG_STATE_HOME="$tmp/state2" script -qefc "$BIN --backend none" /dev/null >"$tmp/tty5" 2>&1
  cmp -s "$tmp/state2/cudalab/history" "$tmp/target.orig" && ok "someone else's history is left alone" || bad "someone else's history changed"
  expect "and is named as not owned by you" "history is not saved because $tmp/state2/cudalab/history is not owned by you" "$tmp/tty5"
fi
# --- a state folder or history that others can write is not used, and the fix is named ---
mkdir -p "$tmp/state3/cudalab"; chmod 777 "$tmp/state3/cudalab"
(sleep 0.3; printf 'x = 1\n'; sleep 0.3; printf '\004') |
  XDG_STATE_HOME="$tmp/state3" script -qefc "$BIN --backend none" /dev/null >"$tmp/tty6" 2>&1
expect "a state folder anyone can write is refused, with the fix" "history is not saved: $tmp/state3/cudalab can be written by anyone (mode 777); make it private with: chmod 700 $tmp/state3/cudalab" "$tmp/tty6"
[ -e "$tmp/state3/cudalab/history" ] && bad "history written into a folder anyone can write" || ok "and no history is written into it"
chmod 700 "$tmp/state3/cudalab"; : >"$tmp/state3/cudalab/history"; chmod 666 "$tmp/state3/cudalab/history"
(sleep 0.3; printf 'x = 1\n'; sleep 0.3; printf '\004') |
  XDG_STATE_HOME="$tmp/state3" script -qefc "$BIN --backend none" /dev/null >"$tmp/tty6" 2>&1
expect "a history file others can write is refused" "history is not saved because $tmp/state3/cudalab/history can be written by others (chmod 600 would fix that)" "$tmp/tty6"
[ -s "$tmp/state3/cudalab/history" ] && bad "a history others can write was written" || ok "and is left as it was"

# completion offers what fits where the word stands: in a call's arguments an array's name is a
# value, so Tab completes the name without forcing the ":" of a method call (it once gave
# print(#myarr:) and a syntax error); at a statement's start the ":" still comes
rm -f "$tmp/tty9"
typein "$tmp/tty9" 'myarr = cuda.array(3)' 'print(#myar\t)' 'myar\tfill(7) print(myarr[2])' |
  script -qefc "$BIN --backend none" /dev/null >"$tmp/tty9" 2>&1
sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r//g' "$tmp/tty9" >"$tmp/tty9.txt"
grep -qx '3' "$tmp/tty9.txt" && ! grep -q 'syntax error' "$tmp/tty9.txt" &&
  ok "Tab after an array's name in a call's arguments does not force ':'" || bad "Tab in arguments: $(tail -n 6 "$tmp/tty9.txt")"
grep -qx '7.0' "$tmp/tty9.txt" && ok "and at a statement's start it completes to the method call's ':'" || bad "Tab at statement start: $(tail -n 4 "$tmp/tty9.txt")"

# over 1 KiB of candidates (120 long names) once corrupted the engine's Lua stack and killed it
FIELDS='t = {} for i = 1, 120 do t["field_" .. string.rep("x", 40) .. i] = "value" .. i end'
rm -f "$tmp/tty4"
typein "$tmp/tty4" "$FIELDS" 't.fi\t77' |
  script -qefc "$BIN --backend none" /dev/null >"$tmp/tty4" 2>&1
expect "tab completes among 120 long names, and the engine lives on" "value77" "$tmp/tty4"
grep -q "engine stopped" "$tmp/tty4" && bad "completion stopped the engine" || ok "completion keeps the engine"

# --- a long simulated launch shows progress on a terminal, never in a pipe ---
LONG='cuda.simopts{threads = 1} n = 1 << 25 k = cuda.kernel "inc.cu" a = cuda.array(n) k[{n // 256, 256}](a, n) print("done", a[n - 1])'
rm -f "$tmp/tty3"
typein "$tmp/tty3" "$LONG" | script -qefc "$BIN --sim" /dev/null >"$tmp/tty3" 2>&1
expect "a long simulated launch draws a progress bar on a terminal" "simulating [" "$tmp/tty3"
expect "and the result follows" "done	1.0" "$tmp/tty3"
"$BIN" --sim -e "$LONG" >"$tmp/out" 2>&1
grep -q "simulating" "$tmp/out" && bad "progress bar drawn into a pipe" || ok "no progress bar in a pipe"

# --- Ctrl-C and a dying engine (piped: SIGINT is sent to the console, which forwards it) ---
# Each busy line prints a marker first (built by .., so that the echo of the line is not it),
# and the test sends SIGINT once the marker shows the engine is in the loop.
rm -f "$tmp/out"
(printf 'print("spin" .. "ning") io.stdout:flush() while true do end\n'; await "$tmp/out" "interrupted"
 printf 'print("after interrupt")\n') | "$BIN" --backend none >"$tmp/out" 2>&1 &
pid=$!
await "$tmp/out" "spinning"
kill -INT $pid
wait $pid
expect "Ctrl-C stops a Lua loop" "interrupted" "$tmp/out"
expect "the prompt works after Ctrl-C" "after interrupt" "$tmp/out"
rm -f "$tmp/out"
(printf 'print("spin" .. "ning") io.stdout:flush() ok, err = pcall(function() while true do end end)\n'
 await "$tmp/out" "interrupted"
 printf 'print("pcall could not swallow it", ok)\n') | "$BIN" --backend none >"$tmp/out" 2>&1 &
pid=$!
await "$tmp/out" "spinning"
kill -INT $pid
wait $pid
expect "pcall cannot swallow Ctrl-C" "pcall could not swallow it" "$tmp/out"
# os.execute waits with SIGINT ignored, so the engine cannot answer. Two SIGINTs sent at once
# may arrive as one, and a third would reach the fresh engine's prompt, so the second is sent
# once the first has been delivered (no SIGINT pending in /proc/PID/status any more).
rm -f "$tmp/out"
(printf 'print("block" .. "ing") io.stdout:flush() os.execute("exec sleep 8")\n'
 await "$tmp/out" "did not answer"; printf 'print("fresh engine answers")\n') | "$BIN" --backend none >"$tmp/out" 2>&1 &
pid=$!
await "$tmp/out" "blocking"
# delivered PID: PID has no SIGINT pending (bit 1 of the last hex digit of ShdPnd)
delivered() {
  pend=$(sed -n 's/^ShdPnd:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null) && [ -n "$pend" ] &&
    [ $((0x$(printf %s "$pend" | tail -c 1) & 2)) -eq 0 ]
}
kill -INT $pid
poll 10 delivered $pid
kill -INT $pid
wait $pid
expect "a second Ctrl-C stops an engine that does not answer" "did not answer Ctrl-C" "$tmp/out"
expect "and a fresh engine takes over" "fresh engine answers" "$tmp/out"
printf 'x = 5\nos.execute("kill -9 $PPID")\nprint("x is", x)\n' | "$BIN" --backend none >"$tmp/out" 2>&1
expect "a dead engine is reported" "the engine stopped (Killed)" "$tmp/out"
expect "the learner is told what was lost" "Lost: device arrays, kernels and Lua variables" "$tmp/out"
expect "and the REPL goes on with a fresh state" "x is	nil" "$tmp/out"

# --- an engine killed while the learner types: the next line goes to a fresh engine ---
# (it was once sent to the dead engine and silently dropped)
(printf 'os.execute("echo $PPID > %s/engine.pid")\n' "$tmp"
 for i in $(seq 1 50); do [ -s "$tmp/engine.pid" ] && break; sleep 0.1; done
 kill -9 "$(cat "$tmp/engine.pid")"
 # until it is dead (a zombie: the console reaps it, or finds it gone, when the line goes out)
 for i in $(seq 1 50); do case $(ps -o stat= -p "$(cat "$tmp/engine.pid")") in "" | Z*) break ;; esac; sleep 0.1; done
 printf 'print("the line after the kill ran")\n') | "$BIN" --backend none >"$tmp/out" 2>&1
expect "the line typed after the engine was killed is not lost" "the line after the kill ran" "$tmp/out"
expect "and the learner hears that the engine was replaced" "the engine stopped (Killed)" "$tmp/out"
expect "and what that cost" "started a fresh engine" "$tmp/out"

# --- multi-line input costs linear time: a 2 MB chunk took minutes when every line re-parsed it
gen='local n = ... local t = {"t = {"} for i = 1, n do t[#t + 1] = ("  %d, -- padding padding padding"):format(i) end
t[#t + 1] = "}" t[#t + 1] = "print(#t)" io.write(table.concat(t, "\n"), "\n")'
printf '%s\n' "$gen" >"$tmp/gen.lua"
"$BIN" --backend none "$tmp/gen.lua" 60000 >"$tmp/big.lua"
timeout 30 "$BIN" --backend none <"$tmp/big.lua" >"$tmp/out" 2>&1; rc=$?
[ $rc = 0 ] && ok "a piped 2 MB chunk is read in linear time (under 30 s)" || bad "2 MB chunk: exited $rc"
expect "and is one chunk" "60000" "$tmp/out"
# an error deep inside a large open block is still named, and the lines after it still run
{ printf 'function f()\n'; sed -n '2,2000p' "$tmp/big.lua"; printf 'x = = 1\n'; sed -n '2000,3000p' "$tmp/big.lua"
  printf 'end\nprint("after the bad chunk")\n'; } >"$tmp/bad.lua"
timeout 30 "$BIN" --backend none <"$tmp/bad.lua" >"$tmp/out" 2>&1
expect "a syntax error inside a large unfinished chunk is named" "unexpected symbol near '='" "$tmp/out"
expect "and input goes on after it" "after the bad chunk" "$tmp/out"
printf 'x = [[\nstill open\n' | "$BIN" --backend none >"$tmp/out" 2>&1
expect "input that ends inside a long string says so" "input ended inside an unfinished chunk" "$tmp/out"

# --- Ctrl-Z at the prompt, then fg, gives back line editing at once (it once waited for Enter) --
# A job-control shell in a pseudo-terminal runs the REPL; each key waits for what it answers.
await_tz() { for i in $(seq 1 100); do grep -qF -- "$1" "$tmp/tz" && return 0; sleep 0.1; done; return 1; }
: >"$tmp/tz"
command -v bash >/dev/null || echo "ok - # SKIP Ctrl-Z and fg: no bash for a job-control shell"
command -v bash >/dev/null && (await_tz '$ ' && printf '%s --backend none\n' "$BIN" && await_tz "Type lessons()" && printf 'x = ' && sleep 0.2 &&
 printf '\032' && await_tz "Stopped" && printf 'fg\n' && await_tz "> x = " && printf 'cuda.versi\t' &&
 await_tz "x = cuda.version" && echo "completed before Enter" >"$tmp/tz.early"
 printf '\n'; printf 'print(x .. "!")\n'; await_tz '0.1.0!'; printf '\004exit\n') |
  env -i TERM=xterm PATH="$PATH" HOME="$tmp" XDG_STATE_HOME="$XDG_STATE_HOME" PS1='$ ' \
  timeout 60 script -qefc "bash --norc --noprofile -i" /dev/null >"$tmp/tz" 2>&1
command -v bash >/dev/null && { [ -s "$tmp/tz.early" ] && ok "after Ctrl-Z and fg, Tab completes before Enter" ||
  bad "after Ctrl-Z and fg, no line editing until Enter: $(tr -d '\r' <"$tmp/tz" | tail -n 5)"
expect "and the line typed before Ctrl-Z is kept" "0.1.0!" "$tmp/tz"; }

# --- the engine dies with its console, even one killed while the engine is busy ---
# alive PID: running (a zombie waiting for init to reap it counts as gone)
alive() { case $(ps -o stat= -p "$1") in "" | Z*) return 1 ;; esac; }
gone() { ! alive "$1"; }
printf 'print("bu" .. "sy") io.stdout:flush() while true do end\n' >"$tmp/busy.lua"
for sig in KILL TERM; do
  rm -f "$tmp/out"
  "$BIN" --backend none <"$tmp/busy.lua" >"$tmp/out" 2>&1 &
  pid=$!
  engine=
  if ! await "$tmp/out" "busy"; then # the engine is in the loop, or the test fails here
    bad "kill -$sig: the engine never reached its loop: $(tail -n 3 "$tmp/out")"
    kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    continue
  fi
  engine=$(pgrep -P $pid)
  kill -$sig $pid
  wait $pid 2>/dev/null # the shell would say "Killed"
  [ -n "$engine" ] && poll 5 gone "$engine"
  if [ -z "$engine" ]; then bad "kill -$sig: no engine process found under the console"
  elif alive "$engine"; then bad "kill -$sig of the console left the engine $engine running"; kill -9 "$engine"
  else ok "kill -$sig of the console ends a busy engine"; fi
done
exit $status
