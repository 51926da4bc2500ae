/* ptxinfo.h: facts read from NVRTC's output: each kernel's parameter layout from its PTX
 * .entry, and its resource use from the ptxas -v report. Used by bind_kernel.c. */
#ifndef CUDALAB_PTXINFO_H
#define CUDALAB_PTXINFO_H

#include <stddef.h>

#define PTX_MAX_PARAMS 64

typedef struct ptx_param {
  size_t offset, size, align;
  char ptx_type[8]; /* "u64", "f32", "b8" (aggregates) */
} ptx_param;

typedef struct ptx_entry_info {
  int nparams;
  ptx_param params[PTX_MAX_PARAMS];
  size_t param_bytes;
} ptx_entry_info;

typedef struct ptxas_info {
  int registers;        /* -1 when the report does not mention the kernel */
  size_t shared_static; /* bytes */
  size_t stack_bytes;   /* per-thread stack frame (local memory) */
  size_t const_bytes;   /* cmem[0] */
  int barriers;
  size_t spill_bytes;   /* spill stores */
} ptxas_info;

/* 0, or -1 when the .entry is not in the PTX or its parameters cannot be read. */
int ptx_entry_params(const char *ptx, const char *entry, ptx_entry_info *out);
/* Fills what the report says of `entry`; registers = -1 when it says nothing. */
void ptxas_parse(const char *log, const char *entry, ptxas_info *out);

#endif
