/* test_sfu.c: the simulator's .approx functions (sim/sim_sfu.c) against the H200's results for
 * chosen inputs: tests/sim/sfu_vectors.h, written on a GPU by `make sfu-vectors` (special values,
 * the edges of the range, and pseudo-random inputs over every binade and inside the binades the
 * tables were fitted on). The simulator computes every one of these instructions as the hardware
 * does (`make sfu-check` compares all 2^32 inputs on a GPU: bench/SFU.md), so every result must
 * be the GPU's bits; a difference is reported with how far apart the two are. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nvrtc_util.h"
#include "sim_sfu.h"

typedef struct {
  const char *ptx;
  int fn, ftz, wide;
  unsigned long long x, gpu;
} sfu_vector;

#include "sfu_vectors.h"

#define NVECTORS (sizeof sfu_vectors / sizeof sfu_vectors[0])

/* Field views of a value of either width. */
typedef struct {
  int nan, inf, zero;
  long long ordered; /* monotonic in the value: ulps apart is a difference of these */
  double value;
} view;

static view view_of(unsigned long long u, int wide) {
  view v;
  unsigned long long sign = wide ? 1ull << 63 : 1ull << 31;
  unsigned long long mag = u & (sign - 1);
  unsigned long long inf = wide ? 0x7ff0000000000000ull : 0x7f800000ull;
  v.nan = mag > inf;
  v.inf = mag == inf;
  v.zero = mag == 0;
  v.ordered = (u & sign) ? -(long long)mag : (long long)mag;
  if (wide) {
    memcpy(&v.value, &u, 8);
  } else {
    float f;
    uint32_t b = (uint32_t)u;
    memcpy(&f, &b, 4);
    v.value = f;
  }
  return v;
}

/* Whether the simulator's result r is the GPU's; if not, why says how far apart they are. */
static int acceptable(const sfu_vector *t, unsigned long long r, char *why, size_t whylen) {
  if (r == t->gpu) return 1;
  view gpu = view_of(t->gpu, t->wide), sim = view_of(r, t->wide);
  if (gpu.nan || gpu.inf || sim.nan || sim.inf || gpu.zero || sim.zero)
    snprintf(why, whylen, "a special value: the GPU's bits are expected");
  else
    snprintf(why, whylen, "%.0f ulps apart, %.3g absolutely",
             fabs((double)(gpu.ordered - sim.ordered)), fabs(gpu.value - sim.value));
  return 0;
}

/* Checks every vector of one instruction; one test line for it, plus how many were exact. */
static void check_instruction(size_t first, size_t end) {
  const char *ptx = sfu_vectors[first].ptx;
  size_t exact = 0, bad = 0;
  char why[160] = "", first_bad[320] = "";
  for (size_t i = first; i < end; i++) {
    const sfu_vector *t = &sfu_vectors[i];
    unsigned long long r = t->wide ? sim_sfu_f64(t->fn, t->ftz, t->x)
                                   : sim_sfu_f32(t->fn, t->ftz, (uint32_t)t->x);
    exact += r == t->gpu;
    if (acceptable(t, r, why, sizeof why)) continue;
    if (!bad++)
      snprintf(first_bad, sizeof first_bad, "input 0x%llx: GPU 0x%llx, simulator 0x%llx: %s",
               t->x, t->gpu, r, why);
    else
      printf("# also input 0x%llx: GPU 0x%llx, simulator 0x%llx: %s\n", t->x, t->gpu, r, why);
  }
  printf("# %s: %zu of %zu vectors bit-identical to the GPU\n", ptx, exact, end - first);
  tu_check(bad == 0, ptx, "%zu of %zu vectors out of bounds; first %s", bad, end - first,
           first_bad);
}

static size_t count_instructions(void) {
  size_t n = 0;
  for (size_t i = 0; i < NVECTORS; i++)
    n += i == 0 || strcmp(sfu_vectors[i].ptx, sfu_vectors[i - 1].ptx) != 0;
  return n;
}

int main(void) {
  tu_plan((int)count_instructions() + 1);
  size_t first = 0;
  for (size_t i = 1; i <= NVECTORS; i++) {
    if (i < NVECTORS && strcmp(sfu_vectors[i].ptx, sfu_vectors[first].ptx) == 0) continue;
    check_instruction(first, i);
    first = i;
  }
  /* The check itself must be able to fail: a result one ulp off is refused, and said to be. */
  sfu_vector probe = {"rcp.approx.ftz.f32", SIM_SFU_RCP, 1, 0, 0x3fc00000ull, 0x3f2aaaabull};
  char why[160] = "";
  tu_check(!acceptable(&probe, 0x3f2aaaacull, why, sizeof why) && strstr(why, "1 ulps apart") &&
               acceptable(&probe, 0x3f2aaaabull, why, sizeof why),
           "a result 1 ulp off the GPU's is refused", "the check does not bite: %s", why);
  return tu_failures() != 0;
}
