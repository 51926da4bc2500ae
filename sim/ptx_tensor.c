/* ptx_tensor.c: decodes the warp-wide matrix instructions: wmma.load / wmma.store / wmma.mma,
 * mma.sync, ldmatrix and the cp.async family, into SIM_OP_TENSOR records (run by sim_tensor.c).
 *
 * Stance: these instructions come in a grid of shapes, element types and layouts, and a kernel
 * that uses a combination the simulator does not model must fail at load time with the
 * instruction's name, the PTX line and the part refused (a shape, a type, a modifier), never run
 * with a guessed meaning. So every modifier word is accounted for, and the register lists must
 * have exactly the length the shape and type give. */
#include <stdio.h>
#include <string.h>

#include "ptx_tensor.h"
#include "ptx_mbarrier.h"

/* A new side record for instruction in (zeroed, registers -1). */
static sim_tensor *new_tensor(ictx *c, sim_inst *in, int kind) {
  ptx_parser *p = c->p;
  sim_module *m = p->m;
  m->tensor = ptx_grow(p, m->tensor, &p->cap_tensor, m->ntensor + 1, sizeof *m->tensor);
  sim_tensor *t = &m->tensor[m->ntensor];
  memset(t, 0, sizeof *t);
  for (int i = 0; i < 8; i++) t->d[i] = t->ra[i] = t->rb[i] = t->rc[i] = -1;
  t->kind = (uint8_t)kind;
  in->aux = m->ntensor++;
  return t;
}

static int word_is(const mods *md, int i, const char *w) {
  return (int)strlen(w) == md->wlen[i] && memcmp(md->words[i], w, (size_t)md->wlen[i]) == 0;
}

/* Index of modifier word w, -1 when absent. */
static int word_pos(ictx *c, const char *w) {
  for (int i = 0; i < c->md.nwords; i++)
    if (word_is(&c->md, i, w)) return i;
  return -1;
}

/* Offset of needle in the opcode token, -1 when absent. */
static int op_find(const ictx *c, const char *needle) {
  int n = (int)strlen(needle);
  for (int i = 0; i + n <= c->op->len; i++)
    if (!memcmp(c->op->s + i, needle, (size_t)n)) return i;
  return -1;
}

static int is_shape(const char *w, int len) {
  int m, n, used = 0;
  char buf[24];
  if (len > 23) return 0;
  memcpy(buf, w, (size_t)len);
  buf[len] = 0;
  return sscanf(buf, "m%dn%d%n", &m, &n, &used) == 2 && (used == len || buf[used] == 'k');
}

/* Fails on any modifier word not in allowed (NULL-terminated), naming it. Shapes are left to
 * the caller, which names a refused one as a shape. */
static void only_words(ictx *c, const char *const *allowed) {
  for (int i = 0; i < c->md.nwords; i++) {
    int ok = is_shape(c->md.words[i], c->md.wlen[i]);
    for (int k = 0; allowed[k] && !ok; k++) ok = word_is(&c->md, i, allowed[k]);
    if (!ok) {
      char why[96];
      snprintf(why, sizeof why, "modifier .%.*s is not supported", c->md.wlen[i], c->md.words[i]);
      ptx_unsupported(c, why);
    }
  }
}

/* The mMnNkK word: 1 and the shape, or 0 when there is none. */
static int shape_word(ictx *c, int *m, int *n, int *k) {
  for (int i = 0; i < c->md.nwords; i++) {
    char buf[24];
    int len = c->md.wlen[i] < 23 ? c->md.wlen[i] : 23, used = 0;
    memcpy(buf, c->md.words[i], (size_t)len);
    buf[len] = 0;
    if (sscanf(buf, "m%dn%dk%d%n", m, n, k, &used) == 3 && used == len) return 1;
    if (sscanf(buf, "m%dn%d%n", m, n, &used) == 2 && used == len) {
      *k = 0;
      return 1;
    }
  }
  return 0;
}

static void bad_shape(ictx *c, int m, int n, int k, const char *what) {
  char why[128];
  snprintf(why, sizeof why, "shape m%dn%dk%d is not supported %s", m, n, k, what);
  ptx_unsupported(c, why);
}

/* Input element type from the modifiers: .bf16 and .tf32 are words, .f16 a type. */
/* The input element type. .bf16 is a type word of its own (SIM_T_BF16) since the decoder runs
 * bf16 arithmetic; it is looked for as a word too, for safety. */
static int input_type(ictx *c) {
  if (ptx_has(&c->md, "bf16")) return SIM_TE_BF16;
  if (ptx_has(&c->md, "tf32")) return SIM_TE_TF32;
  for (int i = 0; i < c->md.ntypes; i++)
    if (c->md.types[i] == SIM_T_BF16) return SIM_TE_BF16;
  for (int i = 0; i < c->md.ntypes; i++)
    if (c->md.types[i] == SIM_T_F16) return SIM_TE_F16;
  return 0;
}

static int acc_type(int ty) {
  return ty == SIM_T_F16 ? SIM_TE_F16 : ty == SIM_T_F32 ? SIM_TE_F32 : 0;
}

/* Register list operand i into rows[], which must hold exactly want registers. */
static void reg_list(ictx *c, int i, int32_t *rows, uint8_t *count, int want, const char *what) {
  opnd *o = &c->o[i];
  char why[96];
  if (o->kind == O_REG && want == 1) {
    rows[0] = o->row;
    *count = 1;
    return;
  }
  if (o->kind != O_VEC || o->n != want) {
    snprintf(why, sizeof why, "%s needs a list of %d registers", what, want);
    ptx_unsupported(c, why);
  }
  for (int k = 0; k < want; k++) {
    if (o->vec[k] <= -2) ptx_unsupported(c, "a register list holds a constant");
    rows[k] = o->vec[k];
  }
  *count = (uint8_t)want;
}

static int regs_for(const sim_tensor *t, int which, int et) {
  int e = sim_frag_elems(t, which);
  return et == SIM_TE_F16 || et == SIM_TE_BF16 ? (e + 1) / 2 : e;
}

static int wmma_shape_ok(int et, int m, int n, int k) {
  if (et == SIM_TE_TF32) return m == 16 && n == 16 && k == 8;
  return k == 16 && ((m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32));
}

/* How many of the modifier words are .row and how many .col. */
static void count_layouts(ictx *c, int *nrow, int *ncol) {
  *nrow = *ncol = 0;
  for (int i = 0; i < c->md.nwords; i++) {
    *nrow += word_is(&c->md, i, "row");
    *ncol += word_is(&c->md, i, "col");
  }
}

static void set_shape(sim_tensor *t, int m, int n, int k) {
  t->m = (uint8_t)m;
  t->n = (uint8_t)n;
  t->k = (uint8_t)k;
}

/* What bad_shape names as the wmma shapes there are. */
static const char wmma_shapes[] =
    "for wmma of this type (m16n16k16, m32n8k16, m8n32k16; tf32: m16n16k8)";

static int layout(ictx *c) {
  int row = ptx_has(&c->md, "row"), col = ptx_has(&c->md, "col");
  if (row == col) ptx_unsupported(c, "needs exactly one of .row and .col");
  return col;
}

/* wmma.load.{a,b,c} d, [p]{, stride} and wmma.store.d [p], d{, stride}. */
static void wmma_ldst(ictx *c, int store) {
  static const char *const words[] = {"load", "store", "a", "b", "c", "d", "row", "col",
                                      "bf16", "tf32", "m16n16k16", "m32n8k16", "m8n32k16",
                                      "m16n16k8", NULL};
  only_words(c, words);
  int which = store                    ? 2
              : ptx_has(&c->md, "a") ? 0
              : ptx_has(&c->md, "b") ? 1
              : ptx_has(&c->md, "c") ? 2
                                     : -1;
  if (which < 0 || (store && !ptx_has(&c->md, "d")))
    ptx_unsupported(c, "needs .a, .b or .c (load) or .d (store)");
  int m, n, k;
  if (!shape_word(c, &m, &n, &k)) ptx_unsupported(c, "no shape");
  int et = which == 2 ? acc_type(c->md.ntypes ? c->md.types[0] : 0) : input_type(c);
  if (!et)
    ptx_unsupported(c, "element type not supported (f16, bf16 and tf32 inputs, f16 and f32 "
                       "accumulators)");
  int shape_et = which == 2 ? (k == 8 ? SIM_TE_TF32 : SIM_TE_F16) : et;
  if (!wmma_shape_ok(shape_et, m, n, k)) bad_shape(c, m, n, k, wmma_shapes);
  if (which == 2 && k == 8 && et != SIM_TE_F32)
    ptx_unsupported(c, "tf32 wmma accumulates in f32 only");
  if (c->n != 2 && c->n != 3) ptx_unsupported(c, "wrong number of operands");
  sim_inst *in = ptx_emit(c, SIM_OP_TENSOR);
  in->space = (uint8_t)(c->md.space ? c->md.space : SIM_SP_GENERIC);
  if (in->space != SIM_SP_GLOBAL && in->space != SIM_SP_SHARED && in->space != SIM_SP_GENERIC)
    ptx_unsupported(c, "only global, shared and generic addresses");
  in->size = (uint8_t)(et == SIM_TE_F32 || et == SIM_TE_TF32 ? 4 : 2);
  ptx_addr(c, in, store ? 0 : 1);
  in->b = c->n == 3 ? ptx_src(c, 2, SIM_T_U32) : -1;
  sim_tensor *t = new_tensor(c, in, store ? SIM_TC_WSTORE : SIM_TC_WLOAD);
  set_shape(t, m, n, k);
  t->which = (uint8_t)which;
  t->et = (uint8_t)et;
  t->col = (uint8_t)layout(c);
  reg_list(c, store ? 1 : 0, t->d, &t->nd, regs_for(t, which, et), "the fragment");
  if (store)
    for (int i = 0; i < t->nd; i++)
      if (t->d[i] < 0) ptx_unsupported(c, "a stored fragment holds a sink");
}

/* wmma.mma.sync.aligned.alayout.blayout.shape.dtype{.atype.btype}.ctype d, a, b, c. */
static void wmma_mma(ictx *c) {
  static const char *const words[] = {"mma", "row", "col", "bf16", "tf32", "m16n16k16",
                                      "m32n8k16", "m8n32k16", "m16n16k8", NULL};
  only_words(c, words);
  int m, n, k, nrow, ncol;
  if (!shape_word(c, &m, &n, &k)) ptx_unsupported(c, "no shape");
  count_layouts(c, &nrow, &ncol);
  if (nrow + ncol != 2) ptx_unsupported(c, "needs two layouts (.row/.col for a, then for b)");
  int et = input_type(c);
  if (!et) et = SIM_TE_F16; /* wmma.mma.m16n16k16.f32.f32: f16 inputs are implied */
  if (c->md.ntypes < 2) ptx_unsupported(c, "needs the d and c types");
  int dt = acc_type(c->md.types[0]), ct = acc_type(c->md.types[c->md.ntypes - 1]);
  if (!dt || !ct) ptx_unsupported(c, "d and c must be f32 or f16");
  if ((et == SIM_TE_BF16 || et == SIM_TE_TF32) && (dt != SIM_TE_F32 || ct != SIM_TE_F32))
    ptx_unsupported(c, "bf16 and tf32 accumulate in f32 only");
  if (!wmma_shape_ok(et, m, n, k)) bad_shape(c, m, n, k, wmma_shapes);
  if (c->n != 4) ptx_unsupported(c, "wrong number of operands");
  sim_inst *in = ptx_emit(c, SIM_OP_TENSOR);
  sim_tensor *t = new_tensor(c, in, SIM_TC_WMMA);
  set_shape(t, m, n, k);
  t->et = (uint8_t)et;
  t->ct = (uint8_t)ct;
  t->dt = (uint8_t)dt;
  /* The layouts only say how memory was read; the fragments' register layout is the same. */
  reg_list(c, 0, t->d, &t->nd, regs_for(t, 2, dt), "d");
  reg_list(c, 1, t->ra, &t->na, regs_for(t, 0, et), "a");
  reg_list(c, 2, t->rb, &t->nb, regs_for(t, 1, et), "b");
  reg_list(c, 3, t->rc, &t->nc, regs_for(t, 2, ct), "c");
}

/* mma.sync.aligned.m16n8k{4,8,16}.row.col.dtype.atype.btype.ctype d, a, b, c. */
static void mma_sync(ictx *c) {
  static const char *const words[] = {"row", "col", "bf16", "tf32", "m16n8k16", "m16n8k8",
                                      "m16n8k4", NULL};
  int m, n, k;
  if (!shape_word(c, &m, &n, &k)) ptx_unsupported(c, "no shape");
  int et = input_type(c);
  if (!(m == 16 && n == 8 && (k == 16 || k == 8 || k == 4)))
    bad_shape(c, m, n, k, "for mma (m16n8k16, m16n8k8 and m16n8k4)");
  if (!et || c->md.ntypes < 2)
    ptx_unsupported(c, "element types not supported (f16, bf16 or tf32 with f16 or f32 "
                       "accumulators)");
  if (et == SIM_TE_TF32 ? k == 16 : k == 4)
    bad_shape(c, m, n, k,
              et == SIM_TE_TF32 ? "for tf32 mma (m16n8k8, m16n8k4)"
                                : "for this mma type (f16, bf16: m16n8k16, m16n8k8)");
  only_words(c, words);
  int nrow, ncol;
  count_layouts(c, &nrow, &ncol);
  if (nrow != 1 || ncol != 1 || word_pos(c, "row") > word_pos(c, "col"))
    ptx_unsupported(c, "this shape needs .row.col");
  int dt = acc_type(c->md.types[0]), ct = acc_type(c->md.types[c->md.ntypes - 1]);
  if (!dt || !ct || dt != ct) ptx_unsupported(c, "d and c must both be f32 or both be f16");
  if (et != SIM_TE_F16 && dt != SIM_TE_F32)
    ptx_unsupported(c, "bf16 and tf32 accumulate in f32 only");
  if (c->n != 4) ptx_unsupported(c, "wrong number of operands");
  sim_inst *in = ptx_emit(c, SIM_OP_TENSOR);
  sim_tensor *t = new_tensor(c, in, SIM_TC_MMA);
  set_shape(t, m, n, k);
  t->et = (uint8_t)et;
  t->ct = t->dt = (uint8_t)dt;
  reg_list(c, 0, t->d, &t->nd, regs_for(t, 2, dt), "d");
  reg_list(c, 1, t->ra, &t->na, regs_for(t, 0, et), "a");
  reg_list(c, 2, t->rb, &t->nb, regs_for(t, 1, et), "b");
  reg_list(c, 3, t->rc, &t->nc, regs_for(t, 2, dt), "c");
}

/* ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}{.shared{::cta}}.b16 d, [p]. */
static void ldmatrix(ictx *c) {
  static const char *const words[] = {"m8n8", "x1", "x2", "x4", "trans", "shared::cta", NULL};
  int m, n, k;
  if (shape_word(c, &m, &n, &k) && (m != 8 || n != 8 || k))
    bad_shape(c, m, n, k, "for ldmatrix (m8n8)");
  only_words(c, words);
  int nm = ptx_has(&c->md, "x1") ? 1 : ptx_has(&c->md, "x2") ? 2 : ptx_has(&c->md, "x4") ? 4 : 0;
  if (!nm || !ptx_has(&c->md, "m8n8")) ptx_unsupported(c, "needs .m8n8 and one of .x1, .x2, .x4");
  if (c->md.ntypes != 1 || c->md.types[0] != SIM_T_B16) ptx_unsupported(c, "only .b16");
  int sp = c->md.space                     ? c->md.space
           : ptx_has(&c->md, "shared::cta") ? SIM_SP_SHARED
                                            : SIM_SP_GENERIC;
  if (sp != SIM_SP_SHARED && sp != SIM_SP_GENERIC) ptx_unsupported(c, "only shared memory");
  if (c->n != 2) ptx_unsupported(c, "wrong number of operands");
  sim_inst *in = ptx_emit(c, SIM_OP_TENSOR);
  /* without .shared the address is generic (and must point into shared memory) */
  in->space = (uint8_t)sp;
  in->size = 2;
  ptx_addr(c, in, 1);
  sim_tensor *t = new_tensor(c, in, SIM_TC_LDMATRIX);
  t->m = t->n = 8;
  t->k = (uint8_t)nm;
  t->trans = (uint8_t)ptx_has(&c->md, "trans");
  reg_list(c, 0, t->d, &t->nd, nm, "the destination");
}

/* cp.async.{ca,cg}.shared{::cta}.global{.L2::cache_hint} [dst], [src], cp-size{, src-size}
 * {, cache-policy}; commit_group, wait_group N and wait_all, which are no-ops here: every copy
 * completes when it is issued. The prefetch sizes and the cache policy are hints it ignores. */
static void cp_async(ictx *c) {
  static const char *const words[] = {"async", "shared::cta", "L2::64B", "L2::128B", "L2::256B",
                                      "L2::cache_hint", NULL};
  if (!ptx_has(&c->md, "async")) ptx_unsupported(c, NULL);
  if (ptx_has(&c->md, "mbarrier")) { /* cp.async.mbarrier.arrive.b64: cuda::memcpy_async's */
    ptx_mbarrier_cpasync(c);
    return;
  }
  if (c->md.ntypes) ptx_unsupported(c, NULL); /* a type is the mbarrier's alone */
  if (ptx_has(&c->md, "commit_group") || ptx_has(&c->md, "wait_all")) {
    if (c->md.nwords != 2 || c->n) ptx_unsupported(c, NULL);
    ptx_emit(c, SIM_OP_NOP);
    return;
  }
  if (ptx_has(&c->md, "wait_group")) {
    if (c->md.nwords != 2 || c->n != 1 || c->o[0].kind != O_IMM)
      ptx_unsupported(c, "needs an immediate group count");
    ptx_emit(c, SIM_OP_NOP);
    return;
  }
  only_words(c, words);
  ptx_cache_hint(c, c->n > 3 ? c->n - 1 : c->n);
  int sh = op_find(c, ".shared"), gl = op_find(c, ".global");
  if (sh < 0 || gl < 0 || sh > gl) ptx_unsupported(c, "only shared <- global copies");
  if (c->n != 3 && c->n != 4) ptx_unsupported(c, "wrong number of operands");
  if (c->o[2].kind != O_IMM || (c->o[2].bits != 4 && c->o[2].bits != 8 && c->o[2].bits != 16))
    ptx_unsupported(c, "cp-size must be 4, 8 or 16");
  if (c->n == 4 && c->o[3].kind == O_IMM && c->o[3].bits > c->o[2].bits)
    ptx_unsupported(c, "src-size is larger than cp-size");
  sim_inst *in = ptx_emit(c, SIM_OP_TENSOR);
  in->space = SIM_SP_SHARED;
  in->size = (uint8_t)c->o[2].bits;
  ptx_addr(c, in, 0);
  sim_inst src;
  memset(&src, 0, sizeof src);
  src.space = SIM_SP_GLOBAL;
  ptx_addr(c, &src, 1);
  in->b = src.a;
  in->c = c->n == 4 ? ptx_src(c, 3, SIM_T_U32) : -1;
  sim_tensor *t = new_tensor(c, in, SIM_TC_CPASYNC);
  t->off2 = src.imm;
  t->bytes = (uint8_t)c->o[2].bits;
}

/* cvt.{rna,rn,rz}{.satfinite}.tf32.f32 d, a: an f32 rounded to tf32's 10 fraction bits. */
static void cvt_tf32(ictx *c) {
  static const char *const words[] = {"tf32", "rna", "satfinite", NULL};
  only_words(c, words);
  int rna = ptx_has(&c->md, "rna");
  if (c->md.ntypes != 1 || c->md.types[0] != SIM_T_F32)
    ptx_unsupported(c, "only cvt to tf32 from f32");
  int other_rnd = c->md.has_rnd && c->md.rnd != SIM_RN && c->md.rnd != SIM_RZ;
  if (rna == c->md.has_rnd || other_rnd || c->md.ftz || c->md.sat)
    ptx_unsupported(c, "needs one of .rna, .rn, .rz");
  if (c->n != 2 || c->o[0].kind != O_REG) ptx_unsupported(c, "wrong operands");
  sim_inst *in = ptx_emit(c, SIM_OP_TENSOR);
  in->d = c->o[0].row;
  in->a = ptx_src(c, 1, SIM_T_F32);
  sim_tensor *t = new_tensor(c, in, SIM_TC_CVT_TF32);
  t->trans = (uint8_t)(rna ? 0 : c->md.rnd == SIM_RN ? 1 : 2);
  t->satfinite = (uint8_t)ptx_has(&c->md, "satfinite");
}

void ptx_tensor_inst(ictx *c) {
  static const struct {
    const char *base;
    void (*fn)(ictx *c);
  } bases[] = {{"cvt", cvt_tf32}, {"cp", cp_async}, {"ldmatrix", ldmatrix}, {"mma", mma_sync}};
  for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
    if (!strcmp(c->md.base, bases[i].base)) {
      bases[i].fn(c);
      return;
    }
  if (ptx_has(&c->md, "load")) wmma_ldst(c, 0);
  else if (ptx_has(&c->md, "store")) wmma_ldst(c, 1);
  else if (ptx_has(&c->md, "mma")) wmma_mma(c);
  else ptx_unsupported(c, NULL);
}
