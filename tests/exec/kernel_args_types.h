// kernel_args_types.h: types a kernel's parameters name, defined in a header as NVIDIA's samples
// define theirs (sortingNetworks_common.h: typedef unsigned int uint;). tests/exec/kernel_args.lua
// includes it through -I, so the launch checks must read it to know what `uint *` points at.
#ifndef KERNEL_ARGS_TYPES_H
#define KERNEL_ARGS_TYPES_H

typedef unsigned int uint;
typedef float real;
typedef struct {
  real lo;
  real hi;
} Range;

#endif
