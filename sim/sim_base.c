/* sim_base.c: the helpers every stage of the simulator uses, the parser, the load-time passes,
 * the executor and the timing model alike: filling an error buffer, what a PTX scalar type is
 * (its size, whether signed, float or half), and finding an address in a sorted table of
 * allocations.
 *
 * Stance: these lived in the parser, which made every stage that reports an error or sizes an
 * operand depend on ptx_parse.c; here they depend on nothing but sim_int.h, so the parser is only
 * a parser and a stage can be read (and linked) without it. The allocation lookups lived in
 * sim_device.c, which frees what the checkers keep per allocation: every checker that looked an
 * address up then depended on the device, and the device on it. */
#include <stdarg.h>
#include <stdio.h>

#include "sim_int.h"

void sim_errf(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

int sim_type_size(int t) {
  static const int sz[SIM_T_COUNT] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 1,
                                      2, 4, 4, 4, 4, 2, 2};
  return t > 0 && t < SIM_T_COUNT ? sz[t] : 0;
}
const char *sim_type_name(int t) {
  static const char *const names[SIM_T_COUNT] = {
      "", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
      "f16", "f32", "f64", "pred", "bf16", "f16x2", "bf16x2", "u16x2", "s16x2", "e4m3x2",
      "e5m2x2"};
  return t > 0 && t < SIM_T_COUNT ? names[t] : "?";
}
int sim_type_signed(int t) { return t >= SIM_T_S8 && t <= SIM_T_S64; }
int sim_type_float(int t) { return t >= SIM_T_F16 && t <= SIM_T_F64; }
int sim_type_half(int t) { return t == SIM_T_F16 || (t >= SIM_T_BF16 && t <= SIM_T_BF16X2); }

/* Index of the allocation holding [a, a+len), or -1. */
int sim_alloc_find(const sim_alloc *t, int n, uint64_t a, uint64_t len) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (a < t[mid].base) hi = mid - 1;
    else if (a - t[mid].base >= t[mid].size) lo = mid + 1;
    else return (t[mid].size - (a - t[mid].base) >= len) ? mid : -1;
  }
  return -1;
}

/* Index of the allocation nearest to a (containing it, or the closer neighbour), -1 if none. */
int sim_alloc_nearest(const sim_alloc *t, int n, uint64_t a) {
  if (n == 0) return -1;
  int lo = 0, hi = n - 1;
  while (lo < hi) { /* first with base > a */
    int mid = (lo + hi) / 2;
    if (t[mid].base > a) hi = mid;
    else lo = mid + 1;
  }
  int after = t[lo].base > a ? lo : -1;
  int before = after < 0 ? n - 1 : after - 1;
  if (before < 0) return after;
  if (after < 0) return before;
  uint64_t db = a - (t[before].base + t[before].size), da = t[after].base - a;
  if (a < t[before].base + t[before].size) return before;
  return db <= da ? before : after;
}
