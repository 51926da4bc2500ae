/* test_sfu.c: the simulator's .approx functions (sim/sim_sfu.c) against the H200's results for
 * chosen inputs: tests/sim/sfu_vectors.h, written on a GPU by `make sfu-vectors`.
 *
 * Where the input is a zero, an infinity, a NaN or (with .ftz) a subnormal, or the GPU's result
 * is an infinity or a NaN, the bits must be the GPU's. So must every result of the functions the
 * simulator computes as the hardware does (tolerance 0). For the others (bench/sfu/NOTES.md) a
 * result may differ by as much as `make sfu-check` measured over every input (bench/SFU.md,
 * quoted in the README), and no more: ulps for most functions, an absolute difference for those
 * whose error is absolute near a zero of the result. Each instruction also reports how many of
 * its vectors match exactly. */
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

/* The largest difference allowed for a finite result: in units in the last place, or (abs > 0)
 * absolutely. Figures from bench/SFU.md's exhaustive comparison. */
typedef struct {
  const char *prefix; /* the instruction's name up to its type */
  double ulps, abs;
} tolerance;

static const tolerance tolerances[] = {
    /* within what sfu-check measured */
    {"rsqrt.approx.f64", 1, 0},
    /* bit-exact */
    {"rcp.approx", 0, 0}, /* f32 and f64 */
    {"rsqrt.approx", 0, 0},
    {"sqrt.approx", 0, 0},
    {"ex2.approx", 0, 0},
    {"lg2.approx", 0, 0},
    {"sin.approx", 0, 0},
    {"cos.approx", 0, 0},
    {"tanh.approx", 134, 0},
};

static const tolerance *tolerance_of(const char *ptx) {
  for (size_t i = 0; i < sizeof tolerances / sizeof tolerances[0]; i++)
    if (strncmp(ptx, tolerances[i].prefix, strlen(tolerances[i].prefix)) == 0)
      return &tolerances[i];
  return NULL;
}

/* Field views of a value of either width. */
typedef struct {
  int nan, inf, zero, subnormal;
  long long ordered; /* monotonic in the value: ulps apart is a difference of these */
  double value;
} view;

static view view_of(unsigned long long u, int wide) {
  view v;
  unsigned long long sign = wide ? 1ull << 63 : 1ull << 31;
  unsigned long long mag = u & (sign - 1);
  unsigned long long inf = wide ? 0x7ff0000000000000ull : 0x7f800000ull;
  unsigned long long min_normal = wide ? 0x0010000000000000ull : 0x00800000ull;
  v.nan = mag > inf;
  v.inf = mag == inf;
  v.zero = mag == 0;
  v.subnormal = mag != 0 && mag < min_normal;
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

/* Whether the simulator's result r is acceptable for vector t. */
static int acceptable(const sfu_vector *t, unsigned long long r, char *why, size_t whylen) {
  view in = view_of(t->x, t->wide), gpu = view_of(t->gpu, t->wide), sim = view_of(r, t->wide);
  int special = in.nan || in.inf || in.zero || (t->ftz && in.subnormal) || gpu.nan || gpu.inf;
  if (r == t->gpu) return 1;
  if (special) {
    snprintf(why, whylen, "a special case: the GPU's bits are expected");
    return 0;
  }
  const tolerance *tol = tolerance_of(t->ptx);
  double ulps = fabs((double)(gpu.ordered - sim.ordered));
  double abs_diff = fabs(gpu.value - sim.value);
  if (!tol || sim.nan || sim.inf) {
    snprintf(why, whylen, "no tolerance applies");
    return 0;
  }
  if (ulps <= tol->ulps || (tol->abs > 0 && abs_diff <= tol->abs)) return 1;
  snprintf(why, whylen, "%.0f ulps apart (allowed %.0f), %.3g absolutely", ulps, tol->ulps,
           abs_diff);
  return 0;
}

/* Checks every vector of one instruction; one test line for it, plus how many were exact. */
static void check_instruction(size_t first, size_t end) {
  const char *ptx = sfu_vectors[first].ptx;
  size_t exact = 0, bad = 0;
  char why[160] = "", first_bad[320] = "";
  for (size_t i = first; i < end; i++) {
    const sfu_vector *t = &sfu_vectors[i];
    unsigned long long r = t->wide ? sim_sfu_f64(t->fn, t->x)
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
  /* The check itself must be able to fail: a result one unit past the bound is refused. */
  sfu_vector probe = {"tanh.approx.f32", SIM_SFU_TANH, 0, 0, 0x3f000000ull, 0x3eecc000ull};
  sfu_vector exact = {"rcp.approx.ftz.f32", SIM_SFU_RCP, 1, 0, 0x3fc00000ull, 0x3f2aaaabull};
  char why[160];
  tu_check(!acceptable(&probe, 0x3eecc000ull + 135, why, sizeof why) &&
               acceptable(&probe, 0x3eecc000ull + 134, why, sizeof why) &&
               !acceptable(&exact, 0x3f2aaaacull, why, sizeof why),
           "a result past the bound is refused (135 ulps off tanh's, 1 ulp off rcp's)",
           "the bounds do not bite");
  return tu_failures() != 0;
}
