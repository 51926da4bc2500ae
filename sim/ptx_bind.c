/* ptx_bind.c: which variable each load, store and atomic indexes, where the PTX says so: the
 * address register holds a variable's address (mov %r, tile) plus integers (an index times the
 * element size, a loop's step). The simulator lays the static __shared__ arrays side by side,
 * as the GPU does, so a[8] of `__shared__ float a[8]` is b[0] of the array after it: checked
 * against all of shared memory it was a silent write into b, on the GPU and here. Bound to a, it
 * is reported as the overrun it is (sim_mem.c checks a bound access against its variable's
 * bytes; a global or constant one only names its variable in the message).
 *
 * Stance: a forward data-flow pass over the module's register rows, on the lattice none (no
 * definition seen yet) < int (no variable's address in it) | variable v < unknown. A row's value
 * is the join over every instruction that writes it, so a register reused for two arrays, or an
 * address chosen between two (`p = f ? a : b`), is unknown, and an access through it is checked
 * as before, against the whole window. An add of a variable's address and integers keeps the
 * variable; a difference of two addresses, a product, a shift or anything else computed from an
 * address is unknown; a loaded value is an int (a pointer kept in memory binds nothing). Rows no
 * instruction writes (special registers, a call's incoming values) are ints. The pass can only
 * lose a binding, never invent one: a write it cannot read (a field that names a predicate, an
 * unusual instruction's destination) joins in as unknown or int, never as a variable. */
#include <stdlib.h>

#include "ptx_bind.h"

enum { P_NONE = -1, P_INT = -2, P_TOP = -3 }; /* >= 0: the variable's index */

static int join(int x, int y) {
  if (x == P_NONE) return y;
  if (y == P_NONE || x == y) return x;
  return P_TOP;
}

/* x + y: an address plus an integer is that address. */
static int add(int x, int y) {
  if (x == P_NONE || y == P_NONE) return P_NONE;
  if (x == P_INT) return y;
  if (y == P_INT) return x;
  return P_TOP;
}

/* Anything else computed from operands: an int from ints, otherwise unknown. */
static int other(int x, int y) {
  if (x == P_NONE || y == P_NONE) return P_NONE;
  return x == P_INT && y == P_INT ? P_INT : P_TOP;
}

typedef struct pass {
  const sim_module *m;
  const int *const_var; /* per constant row: the variable whose address it holds, or -1 */
  int dyn_var;          /* an extern __shared__ variable (the dynamic array), or -1 */
  int *row;             /* per user row: its value */
  int changed;
} pass;

static int value(const pass *s, int r) {
  const sim_module *m = s->m;
  if (r < 0) return P_INT;
  if (r == SIM_SR_DYNSMEM) return s->dyn_var >= 0 ? s->dyn_var : P_INT;
  if (r >= m->const_first && r < m->nrows) {
    int v = s->const_var[r - m->const_first];
    return v >= 0 ? v : P_INT;
  }
  if (r < SIM_SR_COUNT || r >= m->nuser) return P_INT;
  return s->row[r];
}

static void set(pass *s, int r, int x) {
  if (r < SIM_SR_COUNT || r >= s->m->nuser || x == P_NONE) return;
  int j = join(s->row[r], x);
  if (j != s->row[r]) {
    s->row[r] = j;
    s->changed = 1;
  }
}

/* The value an arithmetic instruction gives its destination. */
static int result(const pass *s, const sim_inst *in) {
  int a = value(s, in->a), b = value(s, in->b), c = value(s, in->c), e = value(s, in->e);
  switch (in->op) {
    case SIM_OP_MOV32: case SIM_OP_MOV64: case SIM_OP_CVT_U64_U32: case SIM_OP_CVT_S64_S32:
      return a;
    case SIM_OP_ADD32: case SIM_OP_ADD64: return add(a, b);
    case SIM_OP_SUB32: case SIM_OP_SUB64: /* an address less an int; a difference is unknown */
      return b == P_NONE ? P_NONE : add(a, b == P_INT ? P_INT : P_TOP);
    case SIM_OP_MAD32: case SIM_OP_MAD64: case SIM_OP_MADWIDE_S32: case SIM_OP_MADWIDE_U32:
      return add(other(a, b), c); /* index * size + address */
    case SIM_OP_ALU:
      if (in->sub == SIM_ALU_ADD && !sim_type_float(in->ty) && !(in->mod & SIM_MOD_SAT))
        return add(a, b);
      break;
    default: break;
  }
  int r = other(other(a, b), other(c, e));
  if (in->op == SIM_OP_PACK) /* its sources are the vector's */
    for (int k = 0; k < 4; k++) r = other(r, value(s, in->v[k]));
  return r;
}

static void step(pass *s, const sim_inst *in) {
  int op = in->op;
  if (op == SIM_OP_ST || op == SIM_OP_BRA || op == SIM_OP_EXIT || op == SIM_OP_BAR ||
      op == SIM_OP_BARWARP || op == SIM_OP_NOP || sim_writes_pred(op))
    return;
  if (op == SIM_OP_LD || op == SIM_OP_LDPARAM || op == SIM_OP_ATOM || op == SIM_OP_TEX) {
    /* the value read is data, whatever its address */
    int w[] = {in->d, in->v[0], in->v[1], in->v[2], in->v[3]};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) set(s, w[k], P_INT);
    return;
  }
  if (op == SIM_OP_TENSOR) {
    if (in->aux >= 0 && in->aux < s->m->ntensor)
      for (int k = 0; k < 8; k++) set(s, s->m->tensor[in->aux].d[k], P_TOP);
    set(s, in->d, P_TOP);
    return;
  }
  int r = result(s, in);
  /* an operand no instruction has written yet: wait for a later round */
  if (r == P_NONE) return;
  /* d2 is a predicate where it is used (setp, shfl); any other field a row an unusual
   * instruction writes: unknown unless the instruction is plain arithmetic on ints */
  set(s, in->d, r);
  set(s, in->d2, r == P_INT ? P_INT : P_TOP);
  if (op == SIM_OP_UNPACK || op == SIM_OP_SHFL)
    for (int k = 0; k < 4; k++) set(s, in->v[k], r == P_INT ? P_INT : P_TOP);
}

void ptx_bind_accesses(sim_module *m, const int *const_var) {
  if (m->nuser <= SIM_SR_COUNT || m->ncode == 0) return;
  pass s = {m, const_var, -1, calloc((size_t)m->nuser, sizeof(int)), 0};
  if (!s.row) return; /* binding is a refinement: without memory, every access is unbound */
  for (int i = 0; i < m->nvars; i++)
    if (m->vars[i].space == SIM_SP_SHARED && m->vars[i].is_extern) {
      s.dyn_var = i;
      break;
    }
  for (int r = 0; r < m->nuser; r++) s.row[r] = P_NONE;
  /* rows no instruction writes hold what came in: ints */
  unsigned char *written = calloc((size_t)m->nuser, 1);
  if (!written) {
    free(s.row);
    return;
  }
  for (int i = 0; i < m->ncode; i++) {
    const sim_inst *in = &m->code[i];
    int w[] = {in->d, in->d2, in->v[0], in->v[1], in->v[2], in->v[3]};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++)
      if (w[k] >= SIM_SR_COUNT && w[k] < m->nuser) written[w[k]] = 1;
    if (in->op == SIM_OP_TENSOR && in->aux >= 0 && in->aux < m->ntensor)
      for (int k = 0; k < 8; k++)
        if (m->tensor[in->aux].d[k] >= SIM_SR_COUNT && m->tensor[in->aux].d[k] < m->nuser)
          written[m->tensor[in->aux].d[k]] = 1;
  }
  for (int r = SIM_SR_COUNT; r < m->nuser; r++)
    if (!written[r]) s.row[r] = P_INT;
  free(written);
  /* each round can only raise a row, and the lattice has three steps above none */
  for (int round = 0; round < 4 * m->nuser + 4; round++) {
    s.changed = 0;
    for (int i = 0; i < m->ncode; i++) step(&s, &m->code[i]);
    if (!s.changed) break;
  }
  for (int i = 0; i < m->ncode; i++) {
    sim_inst *in = &m->code[i];
    if (in->op != SIM_OP_LD && in->op != SIM_OP_ST && in->op != SIM_OP_ATOM) continue;
    int v = value(&s, in->a);
    in->aux = v >= 0 ? v + 1 : 0;
  }
  free(s.row);
}
