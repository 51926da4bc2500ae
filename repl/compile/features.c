/* features.c: naming what cudalab does not run. NVRTC and the simulator refuse dynamic
 * parallelism, texture references, surfaces and host code in their own words ("the required
 * runtime APIs are not declared", "texture is not a template", an unsupported tex or suld
 * instruction), none of which names the feature or the way around it; one table maps those
 * words to a note that does. Texture objects run (cuda.texture); the forms of tex the simulator
 * does not model get a note of their own. */
#include <stddef.h>
#include <string.h>

#include "features.h"

#define NOTE_DP                                                                               \
  "note: a kernel that launches a kernel (dynamic parallelism, k<<<...>>> in device code) is " \
  "not supported: launch the second kernel from Lua once the first has run, "                \
  "k2[{grid, block}](...), or make it a __device__ function the first one calls"
#define NOTE_TEXREF                                                                           \
  "note: texture references (texture<float, 2> t; a global bound with cudaBindTexture) are "   \
  "not supported: take a cudaTextureObject_t parameter instead, read it with tex2D<float>(t, " \
  "x, y), and pass a texture that cuda.texture(array, {width = ..., height = ...}) makes"
#define NOTE_SURF                                                                             \
  "note: surfaces (cudaSurfaceObject_t, surf2Dwrite, surf2Dread) are not supported: pass the " \
  "data as a pointer and write it with plain stores (read it back with plain loads, or with "  \
  "a texture, cuda.texture)"
#define NOTE_TEXFORM                                                                          \
  "note: cudalab runs tex1D, tex2D and tex3D on texture objects (cuda.texture); layered and " \
  "cubemap textures, tex2Dgather, mipmap levels and gradients, and texture queries are not "   \
  "simulated: run this kernel on a GPU"

#define NOTE_HOST                                                                             \
  "note: NVRTC compiles device code only. For a file that holds host code too (main, "         \
  "cudaMalloc, k<<<...>>>, #include <helper_cuda.h>), load its device code and set the host " \
  "code aside: cuda.module(file, {device_only = true}) (m:set_aside() lists what was left "    \
  "out; Lua does the host's part here). To compile unannotated functions as __device__ ones " \
  "instead, give the option: cuda.module(src, {\"-default-device\"})"

static const struct {
  const char *says; /* words of the message */
  const char *note;
} notes[] = {
    {"required runtime APIs are not declared", NOTE_DP},
    {"taking the address of kernel", NOTE_DP},
    {"cudaLaunchDevice", NOTE_DP},
    {"cudaGetParameterBuffer", NOTE_DP},
    {"host functions are not allowed in JIT mode", NOTE_HOST},
    {"__host__ function is not allowed in JIT mode", NOTE_HOST},
    {"texture is not a template", NOTE_TEXREF},
    {"surface is not a template", NOTE_SURF},
    {"unsupported instruction 'tex.", NOTE_TEXFORM},
    {"unsupported instruction 'tld4.", NOTE_TEXFORM},
    {"unsupported instruction 'txq.", NOTE_TEXFORM},
    {"unsupported instruction 'suld.", NOTE_SURF},
    {"unsupported instruction 'sust.", NOTE_SURF},
    {"unsupported instruction 'sured.", NOTE_SURF},
    {"unsupported instruction 'suq.", NOTE_SURF},
};

const char *feature_note(const char *msg) {
  for (size_t i = 0; msg && i < sizeof notes / sizeof *notes; i++)
    if (strstr(msg, notes[i].says)) return notes[i].note;
  return NULL;
}
