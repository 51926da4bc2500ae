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

int nvrtc_supplies_header(const char *name) {
  for (int i = 0; i < nvrtc_builtin_count; i++)
    if (strcmp(name, nvrtc_builtin_names[i]) == 0) return 1;
  return 0;
}
