/* ptx_param_addr.c: what the decoder does when a kernel takes the address of one of its
 * parameters. NVRTC does so for a struct parameter whose array is indexed with a value it cannot
 * fold (`mov.b64 %rd, k_param_0;` then `ld.param.f32 %f, [%rd+8];`) and for a
 * __grid_constant__ parameter used through a pointer (then `cvta.param` makes the address
 * generic). The PTX ISA's rule: mov gives a kernel parameter's address in the .param space,
 * which ld.param reads and nothing writes.
 *
 * Stance: the address is the parameter's offset in the launch's parameter buffer, a constant
 * row like a variable's address, and the parameter is marked as taken: a load through a
 * register may read the parameters so marked and nothing else (sim_param_addr.c checks it at
 * run time), so an index that runs past the struct, into the next parameter or past the
 * buffer, is an out-of-bounds access rather than a read of whatever lies there. */
#include <stdlib.h>

#include "ptx_param_addr.h"

/* Index of the parameter of f at offset off, or -1. */
static int param_at(const sim_func *f, int off) {
  for (int k = 0; k < f->nparams; k++)
    if ((int)f->params[k].offset == off) return k;
  return -1;
}

/* A kernel parameter's address: its offset, the parameter marked as taken. */
static int kernel_param_addr(ictx *c, const opnd *o) {
  ptx_parser *p = c->p;
  sim_func *f = p->cur_func >= 0 ? &p->m->funcs[p->cur_func] : NULL;
  int k = f && f->is_entry ? param_at(f, o->row) : -1;
  if (k < 0) ptx_unsupported(c, "not a parameter of this kernel");
  if (!f->param_taken && !(f->param_taken = calloc((size_t)f->nparams, 1)))
    ptx_fail(p, "out of memory while loading PTX");
  f->param_taken[k] = 1;
  return ptx_const_row(p, -1, (uint64_t)o->row);
}

int ptx_param_addr(ictx *c, int i) {
  const opnd *o = &c->o[i];
  if (o->kind == O_KPARAM) return kernel_param_addr(c, o);
  ptx_unsupported(c, "taking the address of a parameter");
}
