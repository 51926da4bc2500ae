/* ptx_emit.h: one instruction's decoding state (its modifiers and operands) and the helpers that
 * read an operand, turn operands into rows and emit the sim_inst (ptx_emit.c), shared by the
 * decoders: ptx_inst.c, the tensor decoder (ptx_tensor.c) and the texture decoder
 * (ptx_texture.c). */
#ifndef CUDALAB_PTX_EMIT_H
#define CUDALAB_PTX_EMIT_H

#include "ptx_state.h"

/* One instruction's decoding state, shared by ptx_inst.c and the tensor decoder (ptx_tensor.c). */
enum { O_REG, O_PRED, O_IMM, O_VAR, O_SREG, O_ADDR, O_VEC, O_SINK, O_NAME, O_KPARAM, O_FPARAM };

typedef struct opnd {
  int kind;            /* O_* */
  int row;             /* register row / predicate / special row / var / param offset */
  int type;            /* declared type of a register */
  int neg;             /* !%p */
  uint64_t bits;       /* immediate */
  int fkind;           /* immediate: 0 int, 1 0f-hex, 2 0d-hex, 3 decimal float */
  double fval;
  int base;            /* O_ADDR: kind of base (O_REG, O_VAR, O_KPARAM, O_FPARAM, O_IMM) */
  int64_t off;         /* O_ADDR offset */
  int n, vec[8];       /* O_VEC rows (-1 for a sink) */
  const ptx_tok *tok;  /* O_NAME */
} opnd;

/* What an instruction's ordering words say (mods.sem): a C++ atomic's order (.relaxed and
 * stronger), with an acquire side (.acquire, .acq_rel, .sc) or a release side (.release,
 * .acq_rel, .sc). */
enum { MO_SEM = 1, MO_ACQ = 2, MO_REL = 4 };

typedef struct mods {
  char base[24];
  int types[4], ntypes;
  int space, rnd, has_rnd, ftz, sat, approx, full, vec, cmp, has_cmp, cc;
  int vol;             /* .volatile (or a stronger ordering: .relaxed, .acquire, ...) */
  int sem;             /* MO_*: the ordering its words give (.relaxed, .acquire, ..., .sc) */
  const char *words[12]; int wlen[12]; int nwords;
} mods;

typedef struct ictx {
  ptx_parser *p;
  const ptx_tok *op;   /* opcode token, for messages */
  int line;
  mods md;
  opnd o[8];
  int n, second;
  int guard, gneg;
  unsigned words;      /* bit k: the k-th word of the instruction's row is among its modifiers */
} ictx;

/* Emitting an instruction from its operands, for every decoder (ptx_emit.c). All fail the load
 * (longjmp) on a bad operand. */
void ptx_unsupported(ictx *c, const char *why)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
sim_inst *ptx_emit(ictx *c, int op);
/* operand i as a row (immediates become constant rows) */
int ptx_src(ictx *c, int i, int ty);
void ptx_addr(ictx *c, sim_inst *in, int i); /* address operand i into in->a and in->imm */
int ptx_has(const mods *md, const char *w); /* md has the modifier word w */
/* .L2::cache_hint's cache-policy operand, after the `want` operands the instruction has without
 * it: checked (a 64-bit register or a number) and dropped from c->n. The hint is for global
 * memory only, as the PTX ISA has it. Returns 1 when the instruction has the qualifier. */
int ptx_cache_hint(ictx *c, int want);
int ptx_word_eq(const char *s, int n, const char *w); /* s[0..n) is the word w */
/* Why an instruction by which the blocks of a cluster work together cannot run, or "" for any
 * other (the tail of its message). */
const char *ptx_cluster_why(const ptx_tok *t);
/* One operand at the cursor into o (a register, number, vector {..}, name); for decoders that
 * read their own operand lists (MD_OWN). */
void ptx_opnd(ptx_parser *p, opnd *o);
/* The name t as an operand: a register, predicate, variable, parameter, special register. */
void ptx_opnd_name(ptx_parser *p, const ptx_tok *t, opnd *o);

#endif
