/* sim_base.c: the helpers every stage of the simulator uses, the parser, the load-time passes,
 * the executor and the timing model alike: filling an error buffer, and what a PTX scalar type
 * is (its size, whether signed, float or half).
 *
 * Stance: these lived in the parser, which made every stage that reports an error or sizes an
 * operand depend on ptx_parse.c; here they depend on nothing but sim_int.h, so the parser is only
 * a parser and a stage can be read (and linked) without it. */
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
  static const int sz[SIM_T_COUNT] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 1, 2, 4, 4};
  return t > 0 && t < SIM_T_COUNT ? sz[t] : 0;
}
int sim_type_signed(int t) { return t >= SIM_T_S8 && t <= SIM_T_S64; }
int sim_type_float(int t) { return t >= SIM_T_F16 && t <= SIM_T_F64; }
int sim_type_half(int t) { return t == SIM_T_F16 || (t >= SIM_T_BF16 && t <= SIM_T_BF16X2); }
