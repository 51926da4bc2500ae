/* nvrtc_headers.c: the host headers cudalab supplies to NVRTC itself. Its own file because two
 * others read it: nvrtc.c, which hands the headers to NVRTC, and includes.c, which keys the cache
 * and must not look them up on disk; in nvrtc.c, includes.c and nvrtc.c would each need the
 * other. */
#include <string.h>

#include "nvrtc_headers.h"

/* Host headers learners include out of habit. NVRTC has no host headers, but it declares printf,
 * assert and the device math functions itself, so an empty header is the right content for
 * each; the fixed-width integers (int8_t, uint16_t) come from the toolkit's own
 * <cuda/std/cstdint>. The one list, read by nvrtc.c (which hands it to NVRTC) and includes.c
 * (which never looks these up on disk). */
#define STDINT "#include <cuda/std/cstdint>\n"
const char *const nvrtc_builtin_names[] = {"stdio.h", "cstdio", "math.h", "cmath", "stdlib.h",
                                            "cstdlib", "cuda_runtime.h", "cuda.h", "assert.h",
                                            "cassert", "stdint.h", "cstdint"};
const char *const nvrtc_builtin_sources[] = {"", "", "", "", "", "", "", "", "", "",
                                              STDINT, STDINT};
const int nvrtc_builtin_count = (int)(sizeof nvrtc_builtin_names / sizeof *nvrtc_builtin_names);
_Static_assert(sizeof nvrtc_builtin_names / sizeof *nvrtc_builtin_names ==
                   sizeof nvrtc_builtin_sources / sizeof *nvrtc_builtin_sources,
               "one source per built-in header");

/* The headers of host code only, supplied empty (stand-ins) when a file's device part is compiled
 * (NVRTC_STAND_INS): the C and C++ libraries' host parts, the CUDA runtime's host API, and the
 * cuda-samples' helper_*.h, whose host utilities (checkCudaErrors, StopWatchInterface) only the
 * host code set aside uses. Empty is the right content: what device code may use of them NVRTC
 * declares itself (memcpy, memset). They are cudalab's own text, never files, so the grader's
 * include check (src_guard.c) has nothing new to vet, and they never hide a header for a
 * compile without the option. The first nvrtc_builtin_count are the built-in ones above. */
static const char *const stand_in_names[] = {
    "string.h", "cstring", "strings.h", "time.h", "ctime", "memory.h", "malloc.h", "unistd.h",
    "iostream", "fstream", "sstream", "iomanip", "vector", "string", "algorithm", "chrono",
    "thread", "memory", "map", "set", "functional", "numeric", "random", "exception",
    "stdexcept", "cuda_runtime_api.h", "cuda_profiler_api.h", "helper_cuda.h",
    "helper_functions.h", "helper_string.h", "helper_timer.h", "helper_image.h",
    "helper_cuda_drvapi.h", "helper_multiprocess.h", "exception.h"};
#define NSTAND (int)(sizeof stand_in_names / sizeof *stand_in_names)
#define NALL (int)(sizeof nvrtc_builtin_names / sizeof *nvrtc_builtin_names) + NSTAND

int nvrtc_headers_with_stand_ins(const char *const **names, const char *const **sources) {
  static const char *all_names[NALL], *all_sources[NALL];
  if (!all_names[0]) { /* filled once, in the process that compiles (one thread) */
    for (int i = 0; i < nvrtc_builtin_count; i++) {
      all_names[i] = nvrtc_builtin_names[i];
      all_sources[i] = nvrtc_builtin_sources[i];
    }
    for (int i = 0; i < NSTAND; i++) {
      all_names[nvrtc_builtin_count + i] = stand_in_names[i];
      all_sources[nvrtc_builtin_count + i] = "";
    }
  }
  *names = all_names;
  *sources = all_sources;
  return NALL;
}

int nvrtc_stand_in_header(const char *name) {
  for (int i = 0; i < NSTAND; i++)
    if (strcmp(name, stand_in_names[i]) == 0) return 1;
  return 0;
}

int nvrtc_supplies_header(const char *name) {
  for (int i = 0; i < nvrtc_builtin_count; i++)
    if (strcmp(name, nvrtc_builtin_names[i]) == 0) return 1;
  return 0;
}
