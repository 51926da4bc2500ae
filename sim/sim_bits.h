/* sim_bits.h: the bit casts between a register's 64 bits and the float or double they hold,
 * shared by the executor, the ALU, the conversions, the halves, the tensor cores and the SFU.
 * They go through memcpy, which compilers turn into a register move. */
#ifndef CUDALAB_SIM_BITS_H
#define CUDALAB_SIM_BITS_H

#include <stdint.h>
#include <string.h>

/* The f32 in the low 32 bits of a register. */
static inline float f32(uint64_t x) {
  uint32_t u = (uint32_t)x;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* An f32's bits, a NaN as the GPU's canonical 0x7fffffff. */
static inline uint64_t bf32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (f != f) u = 0x7fffffffu;
  return u;
}

/* The same as 32 bits, for the places that store an f32 result (sim_alu.c, sim_cvt.c, sim_mem.c's
 * atomics, sim_tensor.c). */
static inline uint32_t sim_f32_canon(float f) {
  uint32_t u;
  if (f != f) return 0x7fffffffu;
  memcpy(&u, &f, 4);
  return u;
}

static inline double f64(uint64_t x) {
  double d;
  memcpy(&d, &x, 8);
  return d;
}

static inline uint64_t bf64(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

#endif
