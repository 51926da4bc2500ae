/* sim_sfu.h: the special-function unit's approximations (PTX .approx), as the simulator computes
 * them. Used by sim_alu.c, and by bench/sfu/exhaustive.cu, which compares them with the GPU on
 * every input. */
#ifndef CUDALAB_SIM_SFU_H
#define CUDALAB_SIM_SFU_H

#include <stdint.h>

enum { SIM_SFU_RCP, SIM_SFU_RSQRT, SIM_SFU_SQRT, SIM_SFU_EX2, SIM_SFU_LG2, SIM_SFU_SIN,
       SIM_SFU_COS, SIM_SFU_TANH, SIM_SFU_COUNT };

/* fn's .approx.f32 result for the input bits x; ftz: the .ftz form (subnormal inputs and results
 * flushed to zero). NaN results are the GPU's canonical 0x7fffffff. */
uint32_t sim_sfu_f32(int fn, int ftz, uint32_t x);

/* rcp.approx.ftz.f64 (fn SIM_SFU_RCP; ftz is implied), and rsqrt.approx.f64 (SIM_SFU_RSQRT) or,
 * with ftz, rsqrt.approx.ftz.f64, which is the unit's 20-bit estimate without refinement. */
uint64_t sim_sfu_f64(int fn, int ftz, uint64_t x);

#endif
