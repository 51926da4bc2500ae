#!/bin/sh
# tests/layers.sh: checks which folder includes which, as ARCHITECTURE.md draws it, for every C
# file of the project (sim/'s stages among them), and that the files of repl/bind/ call each other
# in no circle. The first
# test is the project itself ("ok - ..." or "not ok - ..." followed by each include that crosses
# a boundary it should not, with its file and line, and each circle with its files); the others
# plant one crossing each in a copy of the sources and check that it is caught and named, so that
# a rule that has stopped matching anything cannot pass unseen. Exits 1 on a failure. Run from
# the repository root: sh tests/layers.sh
. tests/shlib.sh
plan 10

# crossing "why" pattern files... : prints the files' matching include lines, with a reason
crossing() {
  why=$1 pattern=$2
  shift 2
  hits=$(grep -Hn -E "$pattern" "$@" 2>/dev/null)
  [ -z "$hits" ] && return
  echo "    $why:" >>"$report"
  echo "$hits" | sed 's/^/      /' >>"$report"
  bad=1
}
except() { for f in "$@"; do case " $EXCEPT " in *" $f "*) ;; *) echo "$f" ;; esac; done; }
# headers_of FOLDER...: the names of the headers in those folders, as an -E alternation (a .def
# file, one X-macro table, is a header too)
headers_of() {
  for d in "$@"; do ls "$d"/*.h "$d"/*.def 2>/dev/null; done | sed 's|.*/||; s|\.|\\.|' |
    paste -sd'|' -
}
# only FOLDER "why" ALLOWED...: FOLDER's files include project headers of ALLOWED folders only
# (include/ is everyone's; ALSO names single headers allowed besides, as an -E alternation)
only() {
  folder=$1 why=$2
  shift 2
  allowed="$(headers_of include "$folder" "$@")${ALSO:+|$ALSO}"
  hits=$(grep -Hn -E '#include "' "$folder"/*.c "$folder"/*.h 2>/dev/null |
    grep -v -E "#include \"($allowed)\"")
  [ -z "$hits" ] && return
  echo "    $why:" >>"$report"
  echo "$hits" | sed 's/^/      /' >>"$report"
  bad=1
}

# bind_circle: the functions each file of repl/bind/ defines for others (not static, at the start
# of a line), who names them outside comments, and tsort(1) over those arrows, which names the
# files of a circle. Names rather than includes, because bindings.h declares many files' functions
# and so says nothing of who calls whom.
bind_circle() {
  defs=$(awk 'FNR == 1 { n = split(FILENAME, p, "/"); f = p[n] }
    /^[a-zA-Z_][a-zA-Z0-9_ *]*[ *][a-z_][a-z0-9_]*\(/ && !/^(static|typedef|extern) / && !/;[ ]*$/ {
      s = $0; sub(/\(.*/, "", s); sub(/.*[ *]/, "", s); print f, s }' repl/bind/*.c)
  arrows=$(for c in repl/bind/*.c; do
    sed -e 's|/\*.*\*/||g' -e 's|^ *\*.*||' -e 's|/\*.*||' "$c" |
      grep -owE '[a-z_][a-z0-9_]*' | sort -u |
      awk -v me="${c##*/}" -v defs="$defs" 'BEGIN { n = split(defs, d, "\n")
        for (i = 1; i <= n; i++) { split(d[i], w, " "); owner[w[2]] = w[1] } }
        ($0 in owner) && owner[$0] != me { print me, owner[$0] }' | sort -u
  done)
  loop=$(echo "$arrows" | tsort 2>&1 >/dev/null | sed -n 's/^tsort: //p' |
    grep -v 'input contains' | sort -u)
  [ -z "$loop" ] && return
  echo "    files of repl/bind/ that call each other in a circle:" >>"$report"
  echo "$loop" | paste -sd' ' - | sed 's/^/      /' >>"$report"
  in_loop="($(echo "$loop" | sed 's/\./\\./' | paste -sd'|' -))"
  echo "$arrows" | grep -E "^$in_loop $in_loop\$" |
    sed 's/^/      arrow: /' >>"$report"
  bad=1
}

# only_these "why" ALLOWED FILES...: FILES include project headers of ALLOWED (an -E
# alternation) only
only_these() {
  why=$1 allowed=$2
  shift 2
  hits=$(grep -Hn -E '#include "' "$@" 2>/dev/null | grep -v -E "#include \"($allowed)\"")
  [ -z "$hits" ] && return
  echo "    $why:" >>"$report"
  echo "$hits" | sed 's/^/      /' >>"$report"
  bad=1
}

# sim/'s stages, bottom up (ARCHITECTURE.md, "The simulator's stages"): the base (sim.h, sim_int.h,
# sim_bits.h, sim_base.c), the lexer and parser (ptx_*: text to a decoded module), the load-time
# passes (sim_cfg.c, sim_contract.c, sim_mark.c), the loader that runs the parser and then the
# passes (sim_load.c), and above them the executor and the timing model (sim_run.h and the rest).
# sim_stages: each stage's files include headers of the stages below it only.
SIM_BASE='sim\.h|sim_int\.h|sim_bits\.h|launch_bounds\.h|h200\.h|ptx_opcodes\.def|perf_params\.def'
sim_stages() {
  only_these "the simulator's base includes a stage's header" "$SIM_BASE" \
    sim/sim.h sim/sim_int.h sim/sim_bits.h sim/sim_base.c
  only_these "the lexer or parser includes a header of the passes, the loader or the executor" \
    "$SIM_BASE|ptx_[a-z_]*\.h" sim/ptx_*.c sim/ptx_*.h
  only_these "a load-time pass includes the parser's, the loader's or the executor's header" \
    "$SIM_BASE" sim/sim_cfg.c sim/sim_contract.c sim/sim_mark.c
  only_these "the loader includes more of the parser than its entry, or the executor" \
    "$SIM_BASE|sim_load\.h|ptx_parse\.h" sim/sim_load.c sim/sim_load.h
  crossing "a file outside the parser includes the parser's headers (the loader: ptx_parse.h)" \
    '#include "ptx_[a-z_]*\.h"' $(ls sim/*.c sim/*.h | grep -v -E '^sim/(ptx_[a-z_]*\.[ch]|sim_load\.c)$')
  crossing "the loader's header outside sim_device.c (its caller) and the loader" \
    '#include "sim_load\.h"' $(ls sim/*.c sim/*.h | grep -v -E '^sim/(sim_device|sim_load)\.c$')
}

# check_tree: the checks, in the current folder; the report of what crosses goes to $report.
# Fails (and sets $bad to 1) when anything crosses.
check_tree() {
  bad=0
  : >"$report"
  # Every C file has a room: sim/, include/, a folder of repl/, or repl/main.c, which wires the
  # console to the engine and so may include any of them.
  stray=$(ls repl/*.c repl/*.h 2>/dev/null | grep -v '^repl/main\.c$')
  [ -n "$stray" ] && { echo "    files of repl/ outside its folders: $stray" >>"$report"; bad=1; }
  for d in repl/*/; do
    case $d in repl/console/|repl/engine/|repl/common/|repl/bind/|repl/backend/|repl/compile/|repl/class/) ;;
    *) echo "    a folder ARCHITECTURE.md does not draw: $d" >>"$report"; bad=1 ;;
    esac
  done

  # sim/ is a plain C library: no Lua, no CUDA, nothing of repl/; from include/ only the two
  # headers that include nothing of the project: h200.h (the modelled device) and launch_bounds.h
  # (the launch-bounds reader and checks the REPL shares).
  crossing "sim/ includes Lua or CUDA" '#include <(lua|lauxlib|lualib|cuda|nvrtc)' sim/*.c sim/*.h
  only sim "sim/ includes a header of repl/"
  crossing "sim/ includes a header of include/ other than h200.h and launch_bounds.h" \
    "#include \"($(ls include/*.h | sed 's|.*/||' | grep -v -E '^(h200|launch_bounds)\.h$' |
      sed 's|\.|\\.|' | paste -sd'|' -))\"" \
    sim/*.c sim/*.h
  sim_stages
  # include/ is shared by everyone and depends on no one.
  crossing "include/ includes a module's header" '#include "[^"]*"' \
    $(ls include/*.h | grep -v 'include/backend.h')
  crossing "backend.h includes more than device.h" '#include "[^d][^"]*"' include/backend.h
  # Only the cuda backend, NVRTC and its include-path finder talk to the toolkit.
  EXCEPT="repl/backend/backend_cuda.c repl/compile/nvrtc.c repl/compile/includes.c repl/compile/nvrtc_headers.c"
  crossing "CUDA headers outside the cuda backend and NVRTC" '#include <(cuda|nvrtc|cublas)' \
    $(except repl/main.c repl/*/*.c repl/*/*.h)
  # The folders of repl/, from the bottom up. common/ is what every layer shares.
  crossing "common/ holds a Lua state" '#include <(lua|lauxlib|lualib)' repl/common/*
  only repl/common "common/ includes a layer's header"
  # The classroom's C side (the class folder's files and permissions) needs nothing but common/.
  crossing "class/ holds a Lua state" '#include <(lua|lauxlib|lualib)' repl/class/*
  only repl/class "class/ includes a layer's header" repl/common
  # Compiling: NVRTC in a child process, the include scan, the cache, the kernels' signatures.
  crossing "compile/ holds a Lua state" '#include <(lua|lauxlib|lualib)' repl/compile/*
  only repl/compile "compile/ includes a header of the engine, the bindings or the console" \
    repl/common
  # Backends never call into Lua, and reach compile/ only for the cache of simulator modules.
  crossing "a backend includes Lua" '#include <(lua|lauxlib|lualib)' repl/backend/*
  only repl/backend "a backend includes a header of the engine, the bindings or the console" \
    repl/common repl/compile sim
  crossing "a backend other than the simulator's includes sim/" '#include "(sim|sim_[a-z_]*)\.h"' \
    $(ls repl/backend/* | grep -v -E 'backend_sim\.c|sim_module_memo\.[ch]')
  # The console never holds a Lua state or a backend: it speaks to the engine over a pipe.
  crossing "the console holds a Lua state" '#include <(lua|lauxlib|lualib)' repl/console/*
  # It starts the engine (engine.h: engine_main, plain C) in the process it forks.
  ALSO='engine\.h' only repl/console "the console reaches past the engine's pipe" repl/common
  # Bindings and the engine reach the device through backend.h only: what they need of the
  # simulator (cuda.stats, cuda.simopts, the timing model, the Ctrl-C flag) is in cl_backend's
  # optional `sim` operations, in cudalab's own types. Only backend_sim.c sees sim/'s structs.
  crossing "a binding includes a backend's own header or sim/" \
    '#include "(backend_cuda|backend_sim|sim|sim_[a-z_]*)\.h"' repl/bind/bind_*.c
  # The bindings sit below the engine: the runtime they share (runtime.h) is theirs, and the engine
  # only wires it, so no header of the engine or the console is theirs to include.
  only repl/bind "a binding includes a header of the engine or the console" repl/common \
    repl/compile repl/backend repl/class
  # Nor do the bindings' own files form a circle: a file that others use names nothing of theirs
  # (a method one file adds to another's type is added by bind_cuda.c, above both).
  bind_circle
  crossing "the engine includes a backend's own header or sim/" \
    '#include "(backend_cuda|backend_sim|sim|sim_[a-z_]*)\.h"' repl/engine/*
  only repl/engine "the engine includes the console's header" repl/common repl/compile \
    repl/backend repl/bind
  [ $bad = 0 ]
}

report="$tmp/report"
check_tree
if [ $bad = 0 ]; then
  ok "every include stays within the layers ARCHITECTURE.md draws, and repl/bind/ has no circle"
else
  bad "includes cross the layers ARCHITECTURE.md draws, or repl/bind/ has a circle"
  cat "$report"
fi

# planted NAME WANT FILE LINE: a copy of the sources with LINE appended to FILE fails the checks,
# and the report names FILE under the rule WANT.
planted() {
  rm -rf "$tmp/tree"
  mkdir "$tmp/tree"
  cp -R repl sim include "$tmp/tree/"
  printf '%s\n' "$4" >>"$tmp/tree/$3"
  report="$tmp/report-planted"
  if (cd "$tmp/tree" && check_tree); then
    bad "$1: not caught"
  elif grep -qF -- "$2" "$report" && grep -qF -- "${3##*/}" "$report"; then ok "$1"
  else bad "$1: the report does not name '$2' and ${3##*/}:"; sed 's/^/    /' "$report"; fi
}
TO_ENGINE="a binding includes a header of the engine or the console"
planted "a binding that includes the engine's interpreter is caught" \
  "$TO_ENGINE" repl/bind/runtime.c '#include "interp.h"'
planted "a binding that includes engine.h is caught" \
  "$TO_ENGINE" repl/bind/bind_cuda.c '#include "engine.h"'
planted "a call from the launch log back into the launch path is caught as a circle" \
  "files of repl/bind/ that call each other in a circle" repl/bind/bind_launch_log.c \
  'void launch_log_planted(lua_State *L) { bind_kernel_launch_at(L, 1); }'
# One crossing of each of the simulator's stage rules.
planted "the base including the parser's entry is caught" \
  "the simulator's base includes a stage's header" sim/sim_base.c '#include "ptx_parse.h"'
planted "a decoder including the executor's header is caught" \
  "the lexer or parser includes a header of the passes" sim/ptx_inst.c '#include "sim_run.h"'
planted "a load-time pass including the executor's header is caught" \
  "a load-time pass includes the parser's" sim/sim_mark.c '#include "sim_run.h"'
planted "the loader including the parser's own state is caught" \
  "the loader includes more of the parser than its entry" sim/sim_load.c '#include "ptx_state.h"'
planted "the executor including a parser header is caught" \
  "a file outside the parser includes the parser's headers" sim/sim_exec.c '#include "ptx_emit.h"'
planted "the launcher including the loader's header is caught" \
  "the loader's header outside sim_device.c" sim/sim_launch.c '#include "sim_load.h"'
exit $status
