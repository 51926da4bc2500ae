#!/bin/sh
# tests/layers.sh: checks which folder includes which, as ARCHITECTURE.md draws it, for every C
# file of the project. One test ("ok - ..." or "not ok - ..." followed by each include that
# crosses a boundary it should not, with its file and line); exits 1 on a crossing. Run from the
# repository root: sh tests/layers.sh
#
# A second test plants crossings of the simulator's stages in a copy of sim/ and checks that the
# stage rule names each one, so that rule is known to be able to fail.
echo "1..2"
bad=0
report=$(mktemp)
planted=$(mktemp -d)
trap 'rm -rf "$report" "$planted"' EXIT
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
# only_these "why" ALLOWED FILES...: FILES include project headers of ALLOWED (an -E alternation) only
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
# sim_stages DIR: each stage's files include headers of the stages below it only.
SIM_BASE='sim\.h|sim_int\.h|sim_bits\.h|launch_bounds\.h|h200\.h|ptx_opcodes\.def|perf_params\.def'
sim_stages() {
  d=$1
  only_these "the simulator's base includes a stage's header" "$SIM_BASE" \
    "$d/sim.h" "$d/sim_int.h" "$d/sim_bits.h" "$d/sim_base.c"
  only_these "the lexer or parser includes a header of the passes, the loader or the executor" \
    "$SIM_BASE|ptx_[a-z_]*\.h" "$d"/ptx_*.c "$d"/ptx_*.h
  only_these "a load-time pass includes the parser's, the loader's or the executor's header" \
    "$SIM_BASE" "$d/sim_cfg.c" "$d/sim_contract.c" "$d/sim_mark.c"
  only_these "the loader includes more of the parser than its entry, or the executor" \
    "$SIM_BASE|sim_load\.h|ptx_parse\.h" "$d/sim_load.c" "$d/sim_load.h"
  crossing "a file outside the parser includes the parser's headers (the loader: ptx_parse.h only)" \
    '#include "ptx_[a-z_]*\.h"' $(ls "$d"/*.c "$d"/*.h | grep -v -E '/ptx_[a-z_]*\.[ch]$|/sim_load\.c$')
  crossing "the loader's header outside sim_device.c (its caller) and the loader" \
    '#include "sim_load\.h"' $(ls "$d"/*.c "$d"/*.h | grep -v -E '/(sim_device|sim_load)\.c$')
}
sim_stages sim
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
only repl/bind "a binding includes the console's header" repl/common repl/compile repl/backend \
  repl/engine repl/class
crossing "the engine includes a backend's own header or sim/" \
  '#include "(backend_cuda|backend_sim|sim|sim_[a-z_]*)\.h"' repl/engine/*
only repl/engine "the engine includes the console's header" repl/common repl/compile \
  repl/backend repl/bind
if [ $bad = 0 ]; then
  echo "ok - every include stays within the layers ARCHITECTURE.md draws"
else
  echo "not ok - includes cross the layers ARCHITECTURE.md draws"
  cat "$report"
fi
status=$bad

# The stage rule against a copy of sim/ with one crossing planted per stage: each must be named
# with its file, and nothing else.
cp sim/*.c sim/*.h sim/*.def "$planted"/
echo '#include "ptx_parse.h"' >>"$planted/sim_base.c"
echo '#include "sim_run.h"' >>"$planted/ptx_inst.c"
echo '#include "sim_load.h"' >>"$planted/ptx_parse.c"
echo '#include "sim_run.h"' >>"$planted/sim_mark.c"
echo '#include "ptx_state.h"' >>"$planted/sim_load.c"
echo '#include "ptx_emit.h"' >>"$planted/sim_exec.c"
echo '#include "sim_load.h"' >>"$planted/sim_launch.c"
: >"$report"
bad=0
sim_stages "$planted"
missing=""
for f in sim_base.c ptx_inst.c ptx_parse.c sim_mark.c sim_load.c sim_exec.c sim_launch.c; do
  grep -q "$planted/$f:[0-9]*:#include" "$report" || missing="$missing $f"
done
extra=$(grep ":[0-9]*:#include" "$report" | grep -v -E "/(sim_base|ptx_inst|ptx_parse|sim_mark|sim_load|sim_exec|sim_launch)\.c:")
if [ $bad = 1 ] && [ -z "$missing" ] && [ -z "$extra" ]; then
  echo "ok - the stage rule names each crossing planted in a copy of sim/, and nothing else"
else
  echo "not ok - the stage rule missed planted crossings:${missing:- none}; named besides: ${extra:-none}"
  status=1
fi
exit $status
