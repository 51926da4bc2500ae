/* features.c: naming what cudalab does not run. NVRTC and the simulator refuse dynamic
 * parallelism, textures and host code in their own words ("the required runtime APIs are not
 * declared", "texture is not a template", an unsupported tex instruction), none of which names
 * the feature or the way around it; one table maps those words to a note that does. */
#include <stddef.h>
#include <string.h>

#include "features.h"

#define NOTE_DP                                                                               \
  "note: a kernel that launches a kernel (dynamic parallelism, k<<<...>>> in device code) is " \
  "not supported: launch the second kernel from Lua once the first has run, "                \
  "k2[{grid, block}](...), or make it a __device__ function the first one calls"
#define NOTE_TEX                                                                              \
  "note: textures and surfaces (texture<>, cudaTextureObject_t, tex1Dfetch, surf2Dwrite) are " \
  "not supported: pass the data as a pointer and read it with plain global loads, or with "   \
  "__ldg(&p[i]) for the read-only cache; write with plain stores"

#define NOTE_HOST                                                                             \
  "note: NVRTC compiles device code only. To compile the file's unannotated functions as "    \
  "__device__ ones, give the option: cuda.module(src, {\"-default-device\"}); host code that " \
  "calls the CUDA runtime (main, cudaMalloc, k<<<...>>>) must be left out, since Lua does the " \
  "host's part here"

static const struct {
  const char *says; /* words of the message */
  const char *note;
} notes[] = {
    {"required runtime APIs are not declared", NOTE_DP},
    {"taking the address of kernel", NOTE_DP},
    {"cudaLaunchDevice", NOTE_DP},
    {"cudaGetParameterBuffer", NOTE_DP},
    {"host functions are not allowed in JIT mode", NOTE_HOST},
    {"texture is not a template", NOTE_TEX},
    {"surface is not a template", NOTE_TEX},
    {"unsupported instruction 'tex.", NOTE_TEX},
    {"unsupported instruction 'tld4.", NOTE_TEX},
    {"unsupported instruction 'txq.", NOTE_TEX},
    {"unsupported instruction 'suld.", NOTE_TEX},
    {"unsupported instruction 'sust.", NOTE_TEX},
    {"unsupported instruction 'sured.", NOTE_TEX},
    {"unsupported instruction 'suq.", NOTE_TEX},
};

const char *feature_note(const char *msg) {
  for (size_t i = 0; msg && i < sizeof notes / sizeof *notes; i++)
    if (strstr(msg, notes[i].says)) return notes[i].note;
  return NULL;
}
