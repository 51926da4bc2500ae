#!/bin/sh
# tests/layers.sh: checks which folder includes which, as ARCHITECTURE.md draws it. One test
# ("ok - ..." or "not ok - ..." followed by each include that crosses a boundary it should not,
# with its file and line); exits 1 on a crossing. Run from the repository root: sh tests/layers.sh
echo "1..1"
bad=0
report=$(mktemp)
trap 'rm -f "$report"' EXIT
# crossing "what" files... : prints the files' matching include lines, with a reason
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

# sim/ is a plain C library: no Lua, no CUDA, nothing of repl/; from include/ only h200.h.
crossing "sim/ includes Lua or CUDA" '#include <(lua|lauxlib|lualib|cuda|nvrtc)' sim/*.c sim/*.h
crossing "sim/ includes a header of repl/ or include/ other than h200.h" \
  '#include "(backend|device|runtime|bindings|buffer|engine|console|nvrtc|cache)[a-z_]*\.h"' \
  sim/*.c sim/*.h
# include/ is shared by everyone and depends on no one.
crossing "include/ includes a module's header" '#include "[^"]*"' \
  $(ls include/*.h | grep -v 'include/backend.h')
crossing "backend.h includes more than device.h" '#include "[^d][^"]*"' include/backend.h
# Only the cuda backend, NVRTC and its include-path finder talk to the toolkit.
EXCEPT="repl/backend_cuda.c repl/nvrtc.c repl/includes.c repl/nvrtc_headers.c"
crossing "CUDA headers outside the cuda backend and NVRTC" '#include <(cuda|nvrtc|cublas)' \
  $(except repl/*.c repl/*.h)
# The console never holds a Lua state or a backend: it speaks to the engine over a pipe.
crossing "the console reaches past the engine's pipe" \
  '#include (<lua|<lauxlib|"backend|"bind|"runtime|"interp|"sim)' repl/console.c repl/lineedit.c
# Bindings and the engine reach the device through backend.h only: what they need of the
# simulator (cuda.stats, cuda.simopts, the timing model, the Ctrl-C flag) is in cl_backend's
# optional `sim` operations, in cudalab's own types. Only backend_sim.c sees sim/'s structs.
crossing "a binding includes a backend's own header or sim/" \
  '#include "(backend_cuda|backend_sim|sim|sim_[a-z_]*)\.h"' repl/bind_*.c
crossing "the engine includes a backend's own header or sim/" \
  '#include "(backend_cuda|backend_sim|sim|sim_[a-z_]*)\.h"' \
  repl/engine.c repl/interp.c repl/runtime.c
# Backends never call into Lua.
crossing "a backend includes Lua" '#include <(lua|lauxlib|lualib)' repl/backend*.c repl/blas_*.c
if [ $bad = 0 ]; then
  echo "ok - every include stays within the layers ARCHITECTURE.md draws"
else
  echo "not ok - includes cross the layers ARCHITECTURE.md draws"
  cat "$report"
fi
exit $bad
