/* ptxinfo.h: facts read from NVRTC's output: each kernel's parameter layout and launch bounds
 * from its PTX .entry, and its resource use from the ptxas -v report. Used by bind_kernel.c. */
#ifndef CUDALAB_PTXINFO_H
#define CUDALAB_PTXINFO_H

#include <stddef.h>

typedef struct ptx_param {
  size_t offset, size, align;
  char ptx_type[8]; /* "u64", "f32", "b8" (aggregates) */
} ptx_param;

/* No limit on the count: the caller reads it first (cap 0), then gives room for all. */
typedef struct ptx_entry_info {
  int nparams;         /* all the entry declares */
  ptx_param *params;   /* the caller's room for cap of them; the first cap are filled */
  int cap;
  size_t param_bytes;  /* the whole parameter buffer */
} ptx_entry_info;

typedef struct ptxas_info {
  int registers;        /* -1 when the report does not mention the kernel */
  size_t shared_static; /* bytes */
  size_t stack_bytes;   /* per-thread stack frame (local memory) */
  size_t const_bytes;   /* cmem[0] */
  int barriers;
  size_t spill_bytes;   /* spill stores */
  size_t spill_load_bytes; /* spill loads */
} ptxas_info;

/* Reads the layout of .entry `entry` into out (whose params and cap the caller sets; nparams
 * and param_bytes always count them all). 0, or -1 when the .entry is not in the PTX or its
 * parameters cannot be read. */
int ptx_entry_params(const char *ptx, const char *entry, ptx_entry_info *out);
struct lb_bounds;
/* Reads the launch bounds .entry `entry` declares (launch_bounds.h) into out, zeros where it
 * declares none. 0, or -1 (out all zeros) when the .entry is not in the PTX. */
int ptx_entry_bounds(const char *ptx, const char *entry, struct lb_bounds *out);
/* The name of the i-th .entry of the PTX (from 0) into name (cap bytes, NUL-terminated).
 * Returns 0; 1 when the name does not fit (name is then ""); -1 when there are not that many
 * entries. */
int ptx_entry_name(const char *ptx, int i, char *name, size_t cap);
/* Does .entry `entry` sync its whole grid (cg::this_grid().sync(), grid.barrier_arrive)? Its
 * body reads the grid workspace's address (%envreg1, %envreg2), which the driver sets only for a
 * cooperative launch, and traps when it is absent: 1 if so, else 0 (a kernel that only asks
 * grid.is_valid() traps nowhere). */
int ptx_entry_grid_sync(const char *ptx, const char *entry);
/* Fills what the report says of `entry`; registers = -1 when it says nothing. */
void ptxas_parse(const char *log, const char *entry, ptxas_info *out);

#endif
