/* test_dbgcond.c: the arithmetic of breakpoint conditions compiled for a whole warp
 * (sim/sim_dbgcond.c) against C's own, which this file's compiler computes: unsigned 64-bit / and
 * % past 2^63 (unsigned long long big = 2^64 - 1: big % 10 == 5), signed ones truncated toward
 * zero, and integers converted to float and double rounded once, as C rounds them. Each program
 * is `expression == C's value`, which must hold for every lane. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nvrtc_util.h"
#include "sim_run.h"

static const sim_debug_ty I4 = {'i', 4, 1}, U8 = {'i', 8, 0}, I8 = {'i', 8, 1}, F4 = {'f', 4, 0},
                          F8 = {'f', 8, 0};

static sim_debug_cop konst(sim_debug_ty t, int64_t v) {
  sim_debug_cop o;
  memset(&o, 0, sizeof o);
  o.op = SIM_DC_INT;
  o.t = t;
  o.i = v;
  return o;
}

static sim_debug_cop fconst(sim_debug_ty t, double v) {
  sim_debug_cop o;
  memset(&o, 0, sizeof o);
  o.op = SIM_DC_FLOAT;
  o.t = t;
  o.f = v;
  return o;
}

static sim_debug_cop op(int code, sim_debug_ty t, sim_debug_ty from) {
  sim_debug_cop o;
  memset(&o, 0, sizeof o);
  o.op = code;
  o.t = t;
  o.from = from;
  return o;
}

/* Whether the program holds for every lane (1), for none (0), or cannot say (-1). */
static int holds(const sim_debug_cop *ops, int n) {
  char err[256];
  sim_dbgcond *c = sim_dbgcond_new(ops, n, err, sizeof err);
  if (!c) return -2;
  uint32_t hold = 0;
  int rc = sim_dbgcond_eval(c, NULL, NULL, NULL, NULL, 0, 0xffffffffu, &hold);
  sim_dbgcond_free(c);
  return rc < 0 ? -1 : hold == 0xffffffffu ? 1 : hold == 0 ? 0 : -3;
}

/* a OP b == want, all of type t. */
static int binary_is(int code, sim_debug_ty t, int64_t a, int64_t b, int64_t want) {
  sim_debug_cop p[] = {konst(t, a), konst(t, b), op(code, t, t), konst(t, want),
                       op(SIM_DC_EQ, t, t)};
  return holds(p, 5);
}

/* (float or double) of integer v of type from == want. */
static int converts_to(sim_debug_ty from, int64_t v, sim_debug_ty to, double want) {
  sim_debug_cop p[] = {konst(from, v), op(SIM_DC_CVT, to, from), fconst(to, want),
                       op(SIM_DC_EQ, to, to)};
  return holds(p, 4);
}

int main(void) {
  tu_plan(7);
  uint64_t big = 18446744073709551615ull, half = 9223372036854775808ull;
  int ok = binary_is(SIM_DC_MOD, U8, (int64_t)big, 10, (int64_t)(big % 10)) == 1 &&
           binary_is(SIM_DC_DIV, U8, (int64_t)big, 10, (int64_t)(big / 10)) == 1 &&
           binary_is(SIM_DC_DIV, U8, (int64_t)big, (int64_t)half, (int64_t)(big / half)) == 1 &&
           binary_is(SIM_DC_MOD, U8, (int64_t)(big - 5), (int64_t)half,
                     (int64_t)((big - 5) % half)) == 1;
  tu_check(ok, "unsigned long long / and % are unsigned past 2^63", "big %% 10 and the rest");
  uint64_t a = 0xfedcba9876543210ull, b = 0x123456789ull;
  tu_check(binary_is(SIM_DC_DIV, U8, (int64_t)a, (int64_t)b, (int64_t)(a / b)) == 1 &&
               binary_is(SIM_DC_MOD, U8, (int64_t)a, (int64_t)b, (int64_t)(a % b)) == 1,
           "a large unsigned quotient and remainder are C's", NULL);
  tu_check(binary_is(SIM_DC_DIV, I4, -7, 2, -7 / 2) == 1 &&
               binary_is(SIM_DC_MOD, I4, -7, 2, -7 % 2) == 1 &&
               binary_is(SIM_DC_MOD, I4, 7, -2, 7 % -2) == 1,
           "signed / and % truncate toward zero", NULL);
  int64_t min = INT64_MIN;
  tu_check(binary_is(SIM_DC_DIV, I8, min, -1, min) == 1 &&
               binary_is(SIM_DC_MOD, I8, min, -1, 0) == 1,
           "the most negative long long by -1 wraps, and leaves no remainder", NULL);
  tu_check(binary_is(SIM_DC_MOD, U8, 5, 0, 0) == -1,
           "a division by zero cannot be said here: the front end says why", NULL);
  int64_t v = (1ll << 53) + (1ll << 29) + 1;     /* through a double it would round to 2^53 */
  uint64_t w = big - (1ull << 39) - 1;           /* through a double it would round to 2^64 */
  tu_check(converts_to(I8, v, F4, (double)(float)v) == 1 &&
               converts_to(U8, (int64_t)w, F4, (double)(float)w) == 1 &&
               converts_to(I8, v, F8, (double)v) == 1,
           "a long long becomes a float rounded once, as C rounds it",
           "(float)v is %.1f, (float)w %.1f", (double)(float)v, (double)(float)w);
  tu_check(converts_to(U8, (int64_t)big, F8, (double)big) == 1,
           "an unsigned long long past 2^63 becomes its double", NULL);
  return tu_failures() != 0;
}
